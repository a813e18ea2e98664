"""karpy/kubescheduler/nodeinfo.py's kept and incremental views against the plain rebuild: the
snapshot's node-tree cache, the incremental pods_with_affinity lists, PerNode values kept across
cycles, pods grouped by labels and the image states."""

from __future__ import annotations

import random
from typing import Any, Optional

from hypothesis import given, settings, strategies as hst

from karpy.api.builders import make_node, make_pod, pod_affinity_term
from karpy.kubescheduler import KubeScheduler
from karpy.kubescheduler.nodeinfo import NodeInfo, Snapshot, have_pods_with_affinity, node_tree_order
from karpy.kubescheduler.podinfo import new_pod_info

from ._helpers import node, pod
from .conftest import FakeClock


def _affinity_pod(i: int, kind: int):
    labels = {"app": f"a{i % 3}"}
    if kind == 0:
        return make_pod(f"p{i}", labels=labels, uid=f"p{i}")
    if kind == 1:
        return make_pod(f"p{i}", labels=labels, uid=f"p{i}", pod_affinity=[pod_affinity_term(labels, "zone")])
    return make_pod(f"p{i}", labels=labels, uid=f"p{i}", pod_anti_affinity=[pod_affinity_term(labels, "zone")])


@settings(max_examples=60, deadline=None)
@given(hst.lists(hst.tuples(hst.booleans(), hst.integers(0, 11), hst.integers(0, 2)), max_size=40))
def test_incremental_affinity_lists_match_filtering(ops):
    ni = NodeInfo.from_node(node("n", {"cpu": "4", "memory": "8Gi", "pods": "110"}))
    infos = {}
    for add, i, kind in ops:
        if add:
            infos[i] = pi = new_pod_info(_affinity_pod(i, kind))
            ni.add_pod(pi)
        elif i in infos:
            ni.remove_pod(infos[i])
        assert ni.pods_with_affinity == [p for p in ni.pods if p.has_affinity()]
        assert ni.pods_with_required_anti_affinity == [p for p in ni.pods if p.required_anti_affinity_terms]
        c = ni.clone()
        assert c.pods_with_affinity == ni.pods_with_affinity
        assert c.pods_with_required_anti_affinity == ni.pods_with_required_anti_affinity
    snap = Snapshot([ni])
    assert snap.have_pods_with_affinity == have_pods_with_affinity([ni]) == ([ni] if ni.pods_with_affinity else [])


def _zonal_node(name: str, zone: str):
    return make_node(name, labels={"topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": name},
                     capacity={"cpu": "4", "memory": "8Gi", "pods": "110"})


def _random_node_change(ks: KubeScheduler, rng: random.Random, names: list[str], step: int,
                        bind: bool = False) -> None:
    """One random change of the scheduler's nodes: add, update or delete one (or, ``bind``, bind a pod)."""
    op = rng.randrange(4 if bind else 3)
    if op == 0 or not names:
        name = f"n{step}"
        names.append(name)
        ks.add_node(_zonal_node(name, f"z{rng.randrange(3)}"))
    elif op == 1:
        ks.update_node(_zonal_node(rng.choice(names), f"z{rng.randrange(3)}"))
    elif op == 2:
        ks.delete_node(names.pop(rng.randrange(len(names))))
    else:
        p = make_pod(f"p{step}", requests={"cpu": "10m"})
        p.spec.node_name = rng.choice(names)
        ks.add_pod(p)  # bound: the node's pods change, the journal notes it


def test_cached_snapshot_follows_node_changes():
    ks = KubeScheduler(FakeClock(), random.Random(0))
    rng = random.Random(7)
    names: list[str] = []
    for step in range(80):
        _random_node_change(ks, rng, names, step)
        want = [ks.node_infos[n.metadata.name] for n in node_tree_order(list(ks.nodes.values()))]
        got = ks._snapshot()
        assert isinstance(got, Snapshot) and all(a is b for a, b in zip(got, want)) and len(got) == len(want)


def _imaged_node(name: str, images: list[tuple[str, int]], cpu: str = "4") -> Any:
    """A Node whose status lists ``images`` (name, size): karpy's NodeStatus has no images field,
    the scheduler reads status.images wherever it is present."""
    from types import SimpleNamespace
    n = make_node(name, labels={"topology.kubernetes.io/zone": f"z{len(name) % 2}"},
                  capacity={"cpu": cpu, "memory": "8Gi", "pods": "10"})
    st = n.status
    imgs = [SimpleNamespace(names=[img], size_bytes=size) for img, size in images]
    n.__dict__["status"] = SimpleNamespace(allocatable=st.allocatable, capacity=st.capacity,
                                           conditions=st.conditions, images=imgs)
    return n


def _image_states(ks: KubeScheduler) -> dict[str, Any]:
    return {n: {img: (s.size, s.num_nodes) for img, s in ni.image_states.items()} for n, ni in ks.node_infos.items()}


def test_image_states_match_the_full_rebuild():
    """Node adds, updates and deletes with nodes without images (the refresh is skipped) and with
    images appearing and disappearing: every NodeInfo's image states, and the placements of pods
    using the images, equal rebuilding every node's states at each node event."""
    from karpy.api.pod import Container
    rng = random.Random(4)
    catalogue = [("reg/a:1", 300 << 20), ("reg/b:1", 900 << 20), ("reg/c:1", 40 << 20)]
    skipped = 0
    for seed in range(6):
        fast = KubeScheduler(FakeClock(), random.Random(seed))
        plain = KubeScheduler(FakeClock(), random.Random(seed))
        inner = plain._refresh_images
        plain._refresh_images = lambda changed=None, _inner=inner: _inner(None)  # type: ignore[method-assign]
        fast_inner = fast._refresh_images

        def counting(changed: Any = None, _inner: Any = fast_inner, _ks: Any = fast) -> None:
            nonlocal skipped
            before = {n: ni.image_states for n, ni in _ks.node_infos.items()}
            _inner(changed)
            skipped += all(ni.image_states is before.get(n, ni.image_states) for n, ni in _ks.node_infos.items())
        fast._refresh_images = counting  # type: ignore[method-assign]
        names: list[str] = []
        placed: list[Any] = []
        for step in range(40):
            r = rng.random()
            imaged = seed % 2 == 1 and 10 < step < 30
            if r < 0.45 or not names:
                name = f"n{step}"
                names.append(name)
                images = rng.sample(catalogue, rng.randrange(len(catalogue) + 1)) if imaged else []
                for ks in (fast, plain):
                    ks.add_node(_imaged_node(name, images))
            elif r < 0.75:
                name = rng.choice(names)
                images = rng.sample(catalogue, rng.randrange(len(catalogue) + 1)) if imaged else []
                for ks in (fast, plain):
                    ks.update_node(_imaged_node(name, images))
            elif r < 0.85:
                name = names.pop(rng.randrange(len(names)))
                for ks in (fast, plain):
                    ks.delete_node(name)
            else:
                pod = make_pod(f"p{step}", uid=f"p{step}", requests={"cpu": "500m"})
                pod.spec.containers = [Container(name="c", image=rng.choice(catalogue)[0],
                                                 resources=pod.spec.containers[0].resources)]
                for ks in (fast, plain):
                    ks.add_pod(pod)
                    placed.append([(r.pod_key, r.outcome, r.node_name) for r in iter(ks.schedule_one, None)])
            assert _image_states(fast) == _image_states(plain), (seed, step)
        assert placed[0::2] == placed[1::2], seed
    assert skipped > 50, skipped


# ---- PerNode: cluster-wide PreFilter aggregates kept across cycles -------------------------------------------------
def _tree_snapshot(nodes: list[NodeInfo], tree: Optional[list[NodeInfo]] = None) -> Any:
    """A snapshot as KubeScheduler._snapshot makes one: its NodeInfos journal their pod changes
    into one ChangeJournal (the first one a node already has; attached here to those without)."""
    from karpy.kubescheduler.nodeinfo import ChangeJournal, Snapshot
    journal = next((ni.journal for ni in nodes if ni.journal is not None), None) or ChangeJournal()
    for ni in nodes:
        if ni.journal is None:
            ni.journal = journal
    snap = Snapshot(nodes)
    snap.tree = nodes if tree is None else tree
    snap.journal = journal
    return snap


def test_per_node_values_recompute_only_changed_nodes_and_rebuild_on_a_new_tree():
    from karpy.kubescheduler.nodeinfo import PerNode
    nodes = [NodeInfo.from_node(make_node(f"n{i}", capacity={"pods": "110"})) for i in range(4)]
    seen: list[str] = []

    def count(ni: NodeInfo) -> int:
        seen.append(ni.name)
        return len(ni.pods)
    per: PerNode[int] = PerNode()
    assert per.refresh(_tree_snapshot(nodes), count) is None and seen == ["n0", "n1", "n2", "n3"]
    seen.clear()
    assert per.refresh(_tree_snapshot(nodes), count) == [] and seen == []  # nothing changed: nothing walked
    nodes[2].add_pod(new_pod_info(make_pod("a", uid="a", node_name="n2")))
    assert per.refresh(_tree_snapshot(nodes), count) == [(2, 0, 1)] and seen == ["n2"]
    seen.clear()
    grown = nodes + [NodeInfo.from_node(make_node("n4", capacity={"pods": "110"}))]  # a node added: a new tree
    # the same NodeInfo objects with unchanged generations keep their values: only n4 is computed
    assert per.refresh(_tree_snapshot(grown), count) is None and seen == ["n4"] and per.values == [0, 0, 1, 0, 0]
    seen.clear()
    grown[1].add_pod(new_pod_info(make_pod("b", uid="b", node_name="n1")))
    rebuilt = [grown[0], NodeInfo.from_node(grown[1].node, grown[1].pods)] + grown[2:]  # n1 updated: a new object
    assert per.refresh(_tree_snapshot(rebuilt), count) is None and seen == ["n1"] and per.values == [0, 1, 1, 0, 0]
    seen.clear()
    grown[3].add_pod(new_pod_info(make_pod("c", uid="c", node_name="n3")))
    clone = rebuilt[0].clone()
    clone.add_pod(new_pod_info(make_pod("d", uid="d", node_name="n0")))  # a clone's changes are not journaled
    assert per.refresh(_tree_snapshot(rebuilt), count) == [(3, 0, 1)] and seen == ["n3"]
    seen.clear()
    grown = rebuilt
    seen.clear()
    assert per.refresh(list(grown), count) is None and len(seen) == 5  # not a scheduler snapshot: nothing kept
    seen.clear()
    assert per.refresh(list(grown), count) is None and len(seen) == 5


# ---- pods grouped by labels (nodeinfo.pods_by_labels) --------------------------------------------------------------
def _grouped_pod(rng: random.Random, i: int) -> Any:
    """A pod of a few shared label sets (replicas), namespaces, and sometimes terminating."""
    labels = {"app": rng.choice("abc")}
    if rng.random() < 0.4:
        labels["tier"] = rng.choice("xy")
    p = make_pod(f"p{i}", rng.choice(["default", "ns2"]), uid=f"p{i}", labels=labels)
    if rng.random() < 0.2:
        p.metadata.deletion_timestamp = "2024-01-01T00:00:00Z"
    return new_pod_info(p)


def _churned_groups(seed: int, steps: int = 300) -> Any:
    """Nodes whose pods are added and removed at random; yields the nodes after each change."""
    rng = random.Random(seed)
    nodes = [NodeInfo.from_node(make_node(f"n{i}", capacity={"pods": "110"})) for i in range(4)]
    for step in range(steps):
        ni = rng.choice(nodes)
        if ni.pods and rng.random() < 0.3:
            ni.remove_pod(rng.choice(ni.pods))
        else:
            ni.add_pod(_grouped_pod(rng, step))
        yield rng, nodes


def test_pods_by_labels_groups_every_pod_and_follows_pod_changes():
    """pods_by_labels (kept per node generation) equals grouping the node's current pods by
    labels_key: first-seen order, sizes, non-terminating sizes, the first pod of each group."""
    from karpy.kubescheduler.nodeinfo import pods_by_labels
    multi = 0
    for _rng, nodes in _churned_groups(1):
        for ni in nodes:
            want: dict = {}
            for p in ni.pods:
                g = want.setdefault(p.labels_key, [0, 0, p])
                g[0] += 1
                g[1] += not p.terminating
            got = pods_by_labels(ni)
            assert [(lk, n, live, first) for lk, n, live, first in got] == \
                [(lk, n, live, first) for lk, (n, live, first) in want.items()]
            assert pods_by_labels(ni) is got  # kept while the node's pods are unchanged
            multi += any(n > live > 0 for _lk, n, live, _p in got)
    assert multi > 100


# ---- remove_pod by pod_uids, the change journal by newest change ---------------------------------------------------
def _plain_remove(pods: list, p: Any) -> Optional[Any]:
    """types.go RemovePod's search as a plain scan: the first pod with p's uid (removed)."""
    for i, q in enumerate(pods):
        if q.uid == p.uid:
            return pods.pop(i)
    return None


def test_remove_pod_by_uid_index_removes_what_the_plain_scan_removes():
    """NodeInfo.remove_pod (list.index over pod_uids) against the first-uid scan, with repeated
    uids (two PodInfos of one pod), pods never added, and ``pods`` replaced wholesale with
    pod_uids (as podgrouppreemption's EndMutations does)."""
    for seed in range(20):
        rng = random.Random(seed)
        ni = NodeInfo.from_node(node("n", {"cpu": "64", "memory": "256Gi", "pods": "500"}))
        plain: list = []
        for step in range(300):
            r = rng.random()
            if r < 0.5:
                pi = new_pod_info(_affinity_pod(rng.randrange(40), rng.randrange(3)))
                ni.add_pod(pi)
                plain.append(pi)
            elif r < 0.95:
                pi = new_pod_info(_affinity_pod(rng.randrange(40), rng.randrange(3)))  # same uid, other object
                gone = _plain_remove(plain, pi)
                assert ni.remove_pod(pi) == (gone is not None), (seed, step)
            else:
                rng.shuffle(plain)
                ni.pods[:] = plain
                ni.pod_uids[:] = [p.uid for p in plain]
                ni.pods_with_affinity[:] = [p for p in plain if p.has_affinity()]
                ni.pods_with_required_anti_affinity[:] = [p for p in plain if p.required_anti_affinity_terms]
            assert [p is q for p, q in zip(ni.pods, plain)] == [True] * len(plain) and len(ni.pods) == len(plain)
            assert ni.pods_with_affinity == [p for p in plain if p.has_affinity()]
            assert ni.pods_with_required_anti_affinity == [p for p in plain if p.required_anti_affinity_terms]
            want = NodeInfo.from_node(ni.node, list(plain))
            for got, exp in ((ni.requested, want.requested), (ni.non_zero_requested, want.non_zero_requested)):
                assert {k: v for k, v in got.items() if v} == {k: v for k, v in exp.items() if v}


def test_change_journal_reports_the_nodes_changed_since_any_position():
    """ChangeJournal.changed_since(seen) (one entry per node, by newest change) is the set of the
    nodes of every change after ``seen`` in a plain list of all changes; positions count every
    change; a full journal is emptied and readers from before fall back (seen < base)."""
    from karpy.kubescheduler.nodeinfo import ChangeJournal

    class SmallJournal(ChangeJournal):
        __slots__ = ()
        LIMIT = 5

    for seed in range(10):
        rng = random.Random(seed)
        journal = SmallJournal()
        nodes = [NodeInfo.from_node(node(f"n{i}", {"cpu": "4", "memory": "8Gi", "pods": "110"})) for i in range(8)]
        for ni in nodes:
            ni.journal = journal
        changes: list = []  # (absolute position, node)
        positions = [0]
        for step in range(400):
            ni = rng.choice(nodes)
            if ni.pods and rng.random() < 0.4:
                ni.remove_pod(rng.choice(ni.pods))
            else:
                ni.add_pod(new_pod_info(_affinity_pod(step, 0)))
            changes.append((len(changes) + 1, ni))
            pos = journal.position()
            assert pos == len(changes)
            positions.append(pos)
            for seen in rng.sample(positions, min(5, len(positions))):
                if seen < journal.base:
                    continue
                want = {id(n) for p, n in changes if p > seen}
                got = journal.changed_since(seen)
                assert len(got) == len(want) and {id(n) for n in got} == want, (seed, step, seen)
        assert journal.base > 0  # emptied at least once


def test_change_journal_holds_only_the_cached_nodes():
    """A NodeInfo that leaves the cache (node deleted, or replaced by an update) leaves the journal:
    before, the journal kept every NodeInfo the run ever had (a year-long run's deleted nodes, with
    their Node objects), bounded only by ChangeJournal.LIMIT."""
    ks = KubeScheduler(FakeClock(), random.Random(0))
    rng = random.Random(11)
    names: list[str] = []
    for step in range(120):
        _random_node_change(ks, rng, names, step, bind=True)
        ks._snapshot()
        held = [ni for _, ni in ks._journal.latest.values()]
        live = {id(ni) for ni in ks.node_infos.values()}
        assert all(id(ni) in live for ni in held), step
    assert ks._journal.count > 0 and ks._journal.latest  # (the journal was used)
