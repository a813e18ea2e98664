"""Shortcuts of a provisioning pass's build before Solve (issue #13), each checked against what it
shortcuts:

- Provisioner.pending_pods answers Validate once per pod spec object (pods without volumes) and
  reads IsScheduled before calling IsProvisionable;
- ClusterState.from_objects binds pods inline and pods_with_anti_affinity reads a pod's affinity
  before asking HasRequiredPodAntiAffinity.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from karpy.api.builders import make_node, make_pod
from karpy.api.pod import Pod
from karpy.cloudprovider import fake
from karpy.provisioning.provisioner import Provisioner
from karpy.provisioning.volumetopology import VolumeTopology
from karpy.scheduling.labels import LABEL_HOSTNAME, LABEL_NODEPOOL
from karpy.state.cluster import ClusterState
from karpy.utils import pod as podutils

sys.path.insert(0, str(Path(__file__).parent))
from volume_helpers import pvc, storage_class, with_volumes  # noqa: E402

APP = {"app": "web"}


def _with_spec(name: str, spec: Any, namespace: str = "default", **kwargs: Any) -> Pod:
    """A pod of its own (metadata, status) holding ``spec`` itself, as the pods of one template do."""
    pod = make_pod(name, namespace=namespace, **kwargs)
    return pod.model_copy(update={"spec": spec})


def _one_by_one(prov: Provisioner, pods: list[Any], volumes: Any = None) -> tuple[list[str], dict[str, str]]:
    """GetPendingPods as upstream runs it: IsProvisionable, then Validate, for every pod."""
    out: list[str] = []
    ignored: dict[str, str] = {}
    for p in pods:
        if not podutils.is_provisionable(p):
            continue
        err = prov.validate(p, volumes)
        if err is not None:
            ignored[p.key] = f"ignoring pod, {err}"
        else:
            out.append(p.key)
    return out, ignored


def _pending(prov: Provisioner, pods: list[Any], volumes: Any = None) -> tuple[list[str], dict[str, str]]:
    out, ignored = prov.pending_pods(pods, volumes)
    return [p.key for p in out], ignored


def test_pods_sharing_a_spec_get_the_answer_validate_gives_each_of_them() -> None:
    prov = Provisioner(fake.FakeCloudProvider())
    valid = make_pod("t1", node_selector={"team": "a"}).spec
    managed = make_pod("t2", node_requirements=[(LABEL_NODEPOOL, "DoesNotExist")]).spec
    restricted = make_pod("t3", node_selector={"kubernetes.io/hostname-bogus": "x", "karpenter.sh/x": "y"}).spec
    specs = [valid, managed, restricted]
    pods = []
    for i in range(30):  # interleaved: every spec comes back after the others
        pods.append(_with_spec(f"p{i}", specs[i % 3]))
    pods.append(make_pod("bound", node_selector={"karpenter.sh/x": "y"}, node_name="n1", unschedulable=False))
    pods.append(make_pod("not-failed", unschedulable=False))
    want = _one_by_one(prov, pods)
    assert want[0] and len(want[1]) == 20  # both kinds are there
    assert len({msg for msg in want[1].values()}) == 2
    assert _pending(prov, pods) == want
    # a second call answers again (nothing is kept between calls)
    assert _pending(prov, pods) == want


def test_a_spec_whose_object_is_edited_between_calls_is_validated_again() -> None:
    prov = Provisioner(fake.FakeCloudProvider())
    spec = make_pod("t").spec
    pods = [_with_spec(f"p{i}", spec) for i in range(3)]
    assert _pending(prov, pods) == (["default/p0", "default/p1", "default/p2"], {})
    spec.node_selector = {"karpenter.sh/x": "y"}
    assert _pending(prov, pods) == _one_by_one(prov, pods)
    assert len(_pending(prov, pods)[1]) == 3


def test_pods_with_volumes_are_validated_one_by_one() -> None:
    # the claims are looked up in the pod's namespace: two pods of one spec, two answers
    claim = pvc("my-claim", storage_class_name="sc")
    other = claim.model_copy(deep=True)
    other.metadata.namespace = "other"
    other.spec.storage_class_name = "missing"
    volumes = VolumeTopology.from_objects([claim, other], [], [storage_class("sc")])
    spec = with_volumes(make_pod("t"), ["my-claim"]).spec
    pods = [_with_spec("a", spec), _with_spec("b", spec, namespace="other"), _with_spec("c", spec)]
    prov = Provisioner(fake.FakeCloudProvider())
    want = _one_by_one(prov, pods, volumes)
    assert want[0] == ["default/a", "default/c"] and list(want[1]) == ["other/b"]
    assert _pending(prov, pods, volumes) == want


# -- ClusterState ------------------------------------------------------------------------------
def test_from_objects_binds_every_pod_to_its_node_in_order() -> None:
    nodes = [make_node(f"n{i}", labels={LABEL_HOSTNAME: f"n{i}"}) for i in range(3)]
    pods = []
    for i in range(12):
        node = None if i % 4 == 3 else f"n{i % 5}"  # n3, n4: no such node
        pods.append(make_pod(f"p{i}", node_name=node, unschedulable=False, phase="Running",
                             requests={"cpu": "100m"}))
    cs = ClusterState.from_objects(nodes, (), pods)
    for sn in cs.nodes:
        assert [p.key for p in sn.pods] == [p.key for p in pods if p.spec.node_name == sn.name]
        expect = {"cpu": 100_000_000 * len(sn.pods), "pods": 1_000_000_000 * len(sn.pods)} if sn.pods else {}
        assert sn.pod_requests() == expect
    assert sum(len(sn.pods) for sn in cs.nodes) == 6


def test_pods_with_anti_affinity_lists_the_bound_pods_with_required_terms() -> None:
    term = {"topologyKey": LABEL_HOSTNAME, "labelSelector": {"matchLabels": APP}}
    node = make_node("n1", labels={LABEL_HOSTNAME: "n1"})
    pods = [
        make_pod("b-required", labels=APP, pod_anti_affinity=[term], node_name="n1", unschedulable=False),
        make_pod("a-preferred", labels=APP, pod_anti_affinity_preferences=[(1, term)], node_name="n1", unschedulable=False),
        make_pod("c-affinity-only", labels=APP, pod_affinity=[term], node_name="n1", unschedulable=False),
        make_pod("d-none", labels=APP, node_name="n1", unschedulable=False),
        make_pod("a-required", labels=APP, pod_anti_affinity=[term], node_name="n1", unschedulable=False),
        make_pod("e-unbound", labels=APP, pod_anti_affinity=[term]),
        make_pod("f-gone", labels=APP, pod_anti_affinity=[term], node_name="n9", unschedulable=False),
    ]
    cs = ClusterState.from_objects([node], (), pods)
    got = [(p.key, n.metadata.name) for p, n in cs.pods_with_anti_affinity()]
    assert got == [("default/a-required", "n1"), ("default/b-required", "n1")]
    assert all(podutils.has_required_pod_anti_affinity(p) for p, _ in cs.pods_with_anti_affinity())


def _mixed_cluster() -> tuple[list[Any], list[Any]]:
    term = {"topologyKey": LABEL_HOSTNAME, "labelSelector": {"matchLabels": APP}}
    nodes = [make_node(f"n{i}", labels={LABEL_HOSTNAME: f"n{i}"}) for i in range(3)]
    pods = []
    for i in range(24):
        node = (None, "n0", "n1", "n2", "gone")[i % 5]
        kind = i % 4
        kwargs: dict[str, Any] = {}
        if kind == 1:
            kwargs["pod_anti_affinity"] = [term]
        elif kind == 2:
            kwargs["pod_anti_affinity_preferences"] = [(1, term)]
        elif kind == 3:
            kwargs["pod_affinity"] = [term]
        pods.append(make_pod(f"p{i:02d}", labels=APP, node_name=node, unschedulable=node is None, **kwargs))
    return nodes, pods


def test_a_scanned_snapshot_answers_what_walking_every_pod_answers() -> None:
    nodes, pods = _mixed_cluster()
    plain = ClusterState.from_objects(nodes, (), pods)
    scanned = ClusterState.from_objects(nodes, (), pods, scan_pods=True)
    assert [p.key for sn in scanned.nodes for p in sn.pods] == [p.key for sn in plain.nodes for p in sn.pods]
    want = [(p.key, n.metadata.name) for p, n in plain.pods_with_anti_affinity()]
    assert len(want) == 4
    assert [(p.key, n.metadata.name) for p, n in scanned.pods_with_anti_affinity()] == want
    unbound = scanned.unbound_pods(pods)
    assert unbound is not None
    assert [p.key for p in unbound] == [p.key for p in pods if not p.spec.node_name]
    assert plain.unbound_pods(pods) is None  # not scanned: nothing noted


def test_the_notes_are_used_only_for_the_very_pods_they_were_taken_from() -> None:
    nodes, pods = _mixed_cluster()
    cs = ClusterState.from_objects(nodes, (), pods, scan_pods=True)
    assert cs.unbound_pods(list(pods)) is not None  # another list, the same objects
    assert cs.unbound_pods(pods[:-1]) is None
    assert cs.unbound_pods(list(reversed(pods))) is None
    copy = list(pods)
    copy[0] = make_pod("p00", labels=APP)  # an equal pod, but another object
    assert cs.unbound_pods(copy) is None
    # the snapshot's own list changed: the notes no longer stand for it
    term = {"topologyKey": LABEL_HOSTNAME, "labelSelector": {"matchLabels": APP}}
    cs.pods.append(make_pod("late", labels=APP, pod_anti_affinity=[term], node_name="n0", unschedulable=False))
    assert cs.unbound_pods(cs.pods) is None
    assert "default/late" in [p.key for p, _ in cs.pods_with_anti_affinity()]
    cs.pods = list(pods)
    assert cs.unbound_pods(pods) is None


def test_schedule_over_a_scanned_snapshot_gives_the_same_results() -> None:
    from karpy.api.builders import make_nodepool

    nodes, pods = _mixed_cluster()
    pods.append(make_pod("invalid", node_selector={"karpenter.sh/x": "y"}))

    def outcome(scan: bool) -> tuple[Any, ...]:
        prov = Provisioner(fake.FakeCloudProvider())
        cs = ClusterState.from_objects(nodes, (), pods, scan_pods=scan)
        r = prov.schedule(pods, [make_nodepool("default")], cs)
        return (sorted((nc.nodepool_name, sorted(p.key for p in nc.pods)) for nc in r.new_nodeclaims),
                sorted(r.pod_errors.items()), sorted(r.ignored.items()))  # type: ignore[attr-defined]

    got = outcome(True)
    assert got == outcome(False)
    assert got[0] and got[2]


# -- the pod index carried from one snapshot to the next ---------------------------------------
def _naive(pods: list[Any], namespaces: frozenset[str], selector: Any) -> list[Any]:
    """What _count_domains listed before the index: a comprehension over every pod, stably sorted."""
    out = [p for p in pods if p.metadata.namespace in namespaces and selector.matches(p.metadata.labels)]
    out.sort(key=lambda p: p.spec.node_name or "")
    return out


def _selectors() -> list[Any]:
    from karpy.api.meta import LabelSelector, LabelSelectorRequirement
    from karpy.provisioning.topologygroup import compile_selector

    out = [compile_selector(None, nil_matches=True), compile_selector(LabelSelector(), nil_matches=True)]
    for key in ("app", "tier"):
        for op, vals in (("In", ["a"]), ("In", ["b", "c"]), ("NotIn", ["a"]), ("Exists", []), ("DoesNotExist", [])):
            out.append(compile_selector(LabelSelector(match_expressions=[
                LabelSelectorRequirement(key=key, operator=op, values=vals)]), nil_matches=True))
    return out


def test_an_index_built_from_an_earlier_one_files_every_pod_as_a_fresh_index_does() -> None:
    import random

    from karpy.provisioning.topologypodindex import PodIndex as _PodIndex

    rng = random.Random(11)

    def pod(i: int) -> Pod:
        labels = {k: rng.choice("abc") for k in ("app", "tier") if rng.random() < 0.8}
        return make_pod(f"p{i}", namespace=rng.choice(["default", "other"]), labels=labels,
                        node_name=rng.choice([None, "n1", "n2", "n3"]), unschedulable=False)

    pods = [pod(i) for i in range(120)]
    index = _PodIndex(pods)
    for _ in range(6):  # passes: pods replaced (new objects, new labels), added, deleted, moved
        nxt = []
        for p in pods:
            r = rng.random()
            if r < 0.15:
                continue  # deleted
            if r < 0.35:
                p = pod(int(p.metadata.name[1:]))  # a new version: another object, maybe other labels
            nxt.append(p)
        nxt += [pod(1000 + rng.randrange(10_000)) for _ in range(15)]
        rng.shuffle(nxt)
        seeded = _PodIndex(nxt, index)
        fresh = _PodIndex(nxt)
        for sel in _selectors():
            for namespaces in (frozenset({"default"}), frozenset({"default", "other"})):
                want = [p.key for p in _naive(nxt, namespaces, sel)]
                assert [p.key for p in seeded.matching(namespaces, sel)] == want
                assert [p.key for p in fresh.matching(namespaces, sel)] == want
        pods, index = nxt, seeded


def test_a_pass_over_a_scanned_snapshot_counts_as_a_fresh_provisioner_over_a_plain_one() -> None:
    from karpy.api.builders import make_nodepool, topology_spread
    from karpy.scheduling.labels import LABEL_ZONE

    nodes = [make_node(f"node-{z}", labels={LABEL_ZONE: f"test-zone-{z}", LABEL_HOSTNAME: f"node-{z}"})
             for z in (1, 2, 3)]

    def bound(name: str, node: str, labels: dict[str, str]) -> Pod:
        return make_pod(name, labels=labels, node_name=node, unschedulable=False, phase="Running",
                        requests={"cpu": "100m"})

    def counts(prov: Provisioner, cs: ClusterState) -> list[tuple[str, int]]:
        pending = make_pod("pending", labels=APP, requests={"cpu": "100m"},
                           topology_spread_constraints=[topology_spread(LABEL_ZONE, APP)])
        s = prov.new_scheduler([pending], [make_nodepool("default")], cs, cs.active_nodes())
        assert s is not None
        (group,) = [tg for tg in s.topology.groups() if tg.key == LABEL_ZONE]
        return list(group.domains.items())

    pods = [bound("w1", "node-1", APP), bound("w2", "node-2", APP), bound("db", "node-3", {"app": "db"})]
    prov = Provisioner(fake.FakeCloudProvider())
    previous = None
    history = []
    for step in range(5):
        if step == 1:
            pods.append(bound("w3", "node-3", APP))  # a bind
        elif step == 2:
            pods = [p for p in pods if p.metadata.name != "w1"]  # a delete
        elif step == 3:  # relabelled: a new object, as the store replaces a pod to change it
            pods = [bound("db", "node-3", APP) if p.metadata.name == "db" else p for p in pods]
        elif step == 4:
            pods = [bound("w2", "node-2", {"app": "db"}) if p.metadata.name == "w2" else p for p in pods]
        cs = ClusterState.from_objects(nodes, (), pods, previous=previous, scan_pods=True)
        got = counts(prov, cs)
        assert got == counts(Provisioner(fake.FakeCloudProvider()), ClusterState.from_objects(nodes, (), pods))
        assert cs.pod_index is not None and cs.pod_index_seed is None
        first = cs.pod_index
        assert counts(prov, cs) == got and cs.pod_index is first  # a second Topology shares it
        history.append(dict(got))
        previous = cs
    assert history == [
        {"test-zone-1": 1, "test-zone-2": 1, "test-zone-3": 0},
        {"test-zone-1": 1, "test-zone-2": 1, "test-zone-3": 1},
        {"test-zone-1": 0, "test-zone-2": 1, "test-zone-3": 1},
        {"test-zone-1": 0, "test-zone-2": 1, "test-zone-3": 2},
        {"test-zone-1": 0, "test-zone-2": 0, "test-zone-3": 2},
    ]
    # the snapshot's list grows (a caller's edit): the shared index no longer stands for it
    late = bound("w4", "node-1", APP)
    assert previous is not None
    previous.pods.append(late)
    assert dict(counts(prov, previous)) == {"test-zone-1": 1, "test-zone-2": 0, "test-zone-3": 2}
    assert previous.pod_index.indexes(previous.pods)
    plain = ClusterState.from_objects(nodes, (), pods, previous=previous)
    counts(prov, plain)
    assert plain.pod_index is None and not plain.shares_pod_index  # nothing kept without scan_pods


def test_partition_nodes_is_active_nodes_and_deleting_nodes() -> None:
    from karpy.api.nodeclaim import NodeClaim

    claim = NodeClaim.model_validate({"metadata": {"name": "claim"}, "spec": {"nodeClassRef": {
        "group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}, "requirements": []}})
    nodes = [make_node(f"n{i}", labels={LABEL_HOSTNAME: f"n{i}"}) for i in range(5)]
    gone = make_node("n5", labels={LABEL_HOSTNAME: "n5"})
    gone.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    cs = ClusterState.from_objects([*nodes, gone], [claim], (), marked_for_deletion=["n1", "n3"])
    active, deleting = cs.partition_nodes()
    assert [sn.name for sn in active] == [sn.name for sn in cs.active_nodes()] == ["claim", "n0", "n2", "n4"]
    assert [sn.name for sn in deleting] == [sn.name for sn in cs.deleting_nodes()] == ["n1", "n3", "n5"]
    assert ClusterState.from_objects(nodes).deleting_nodes() == []
