"""What a provisioning pass no longer rebuilds from scratch (issue #13), each shortcut checked
against what it shortcuts, and each cross-pass memo against a change between passes that must
show:

- Topology._count_domains's pod index (topology.py ``_PodIndex``): the same pods in the same
  order as listing every cluster pod per group, so the same domain counts;
- SchedulerCache.label_requirements: ``Requirements.from_labels`` kept by the labels' content;
- ClusterState.adopt_derived: a StateNode's pod sums reused only while its bound pods are the same
  objects.
"""

from __future__ import annotations

import random
from typing import Any

from karpy.api.builders import make_node, make_nodepool, make_pod, topology_spread
from karpy.api.meta import LabelSelector, LabelSelectorRequirement
from karpy.cloudprovider import fake
from karpy.provisioning.existingnode import ExistingNode
from karpy.provisioning.provisioner import Provisioner
from karpy.provisioning.schedulercache import SchedulerCache
from karpy.provisioning.topology import Topology, ignored_for_topology
from karpy.provisioning.topologypodindex import PodIndex as _PodIndex
from karpy.provisioning.topologygroup import compile_selector
from karpy.scheduling.labels import LABEL_HOSTNAME, LABEL_ZONE
from karpy.scheduling.requirements import Requirements
from karpy.scheduling.resources import pod_requests
from karpy.state.cluster import ClusterState

APP = {"app": "web"}


# -- the pod index of _count_domains ------------------------------------------------------------
def _naive(pods: list[Any], namespaces: frozenset[str], selector: Any) -> list[Any]:
    """What _count_domains listed before the index: a comprehension over every pod, stably sorted."""
    out = [p for p in pods if p.metadata.namespace in namespaces and selector.matches(p.metadata.labels)]
    out.sort(key=lambda p: p.spec.node_name or "")
    return out


def test_the_pod_index_lists_the_same_pods_in_the_same_order_as_scanning_every_pod() -> None:
    rng = random.Random(13)
    values = ["a", "b", "c"]
    pods = []
    for i in range(400):
        labels = {k: rng.choice(values) for k in ("app", "tier", "team") if rng.random() < 0.7}
        if rng.random() < 0.3:  # equal content, another insertion order: another bucket, same answers
            labels = dict(reversed(list(labels.items())))
        pods.append(make_pod(f"p{i}", namespace=rng.choice(["default", "other", "third"]), labels=labels,
                             node_name=rng.choice([None, "n1", "n2", "n3", "n10"])))
    index = _PodIndex(pods)
    selectors = [None, LabelSelector(), LabelSelector(match_labels={"app": "a"})]
    for key in ("app", "tier", "team"):
        for op in ("In", "NotIn", "Exists", "DoesNotExist"):
            vals = [] if op in ("Exists", "DoesNotExist") else rng.sample(values, 2)
            selectors.append(LabelSelector(match_expressions=[LabelSelectorRequirement(key=key, operator=op, values=vals)]))
    checked = 0
    for sel in selectors:
        compiled = compile_selector(sel, nil_matches=True)
        for namespaces in (frozenset({"default"}), frozenset({"default", "other"}), frozenset({"none"})):
            got = index.matching(namespaces, compiled)
            assert [p.key for p in got] == [p.key for p in _naive(pods, namespaces, compiled)]
            checked += bool(got)
    assert checked > 20  # the selectors do select something


def test_the_index_notices_a_different_pod_list() -> None:
    pods = [make_pod("a", labels=APP, node_name="n1")]
    index = _PodIndex(pods)
    assert index.indexes(pods)
    assert not index.indexes(list(pods))
    pods.append(make_pod("b", labels=APP, node_name="n1"))
    assert not index.indexes(pods)


# -- domain counts across passes ----------------------------------------------------------------
class Cluster:
    """Nodes in zones and pods bound to them; every ``state()`` is a fresh snapshot, as the
    simulation builds one per pass."""

    def __init__(self) -> None:
        self.nodes = [make_node(f"node-{z}-{i}", labels={LABEL_ZONE: f"test-zone-{z}", LABEL_HOSTNAME: f"node-{z}-{i}"})
                      for z in (1, 2, 3) for i in (1, 2)]
        self.pods: list[Any] = []
        self.previous: ClusterState | None = None

    def bind(self, name: str, node: str, labels: dict[str, str] = APP) -> None:
        self.pods.append(make_pod(name, labels=labels, node_name=node, unschedulable=False, phase="Running",
                                  requests={"cpu": "100m"}))

    def delete(self, name: str) -> None:
        self.pods = [p for p in self.pods if p.metadata.name != name]

    def state(self) -> ClusterState:
        self.previous = ClusterState.from_objects(self.nodes, (), self.pods, previous=self.previous)
        return self.previous


def _zone_counts(prov: Provisioner, cluster: ClusterState) -> list[tuple[str, int]]:
    pending = make_pod("pending", labels=APP, requests={"cpu": "100m"},
                       topology_spread_constraints=[topology_spread(LABEL_ZONE, APP)])
    s = prov.new_scheduler([pending], [make_nodepool("default")], cluster, cluster.active_nodes())
    assert s is not None
    (group,) = [tg for tg in s.topology.groups() if tg.key == LABEL_ZONE]
    return list(group.domains.items())  # insertion order too: it is part of what the index keeps


def _fresh_counts(cluster: ClusterState) -> list[tuple[str, int]]:
    """The same counts from a Provisioner that has seen nothing before."""
    return _zone_counts(Provisioner(fake.FakeCloudProvider()), cluster)


def test_domain_counts_follow_every_bind_delete_and_node_change_between_passes() -> None:
    c = Cluster()
    c.bind("w1", "node-1-1")
    c.bind("w2", "node-2-1")
    c.bind("other", "node-3-1", labels={"app": "db"})
    prov = Provisioner(fake.FakeCloudProvider())  # one Provisioner across passes, as the simulation keeps
    first = _zone_counts(prov, c.state())
    assert dict(first) == {"test-zone-1": 1, "test-zone-2": 1, "test-zone-3": 0}

    c.bind("w3", "node-3-2")  # a bind
    state = c.state()
    assert dict(_zone_counts(prov, state)) == {"test-zone-1": 1, "test-zone-2": 1, "test-zone-3": 1}
    assert _zone_counts(prov, state) == _fresh_counts(state)

    c.delete("w1")  # a delete
    state = c.state()
    assert dict(_zone_counts(prov, state)) == {"test-zone-1": 0, "test-zone-2": 1, "test-zone-3": 1}
    assert _zone_counts(prov, state) == _fresh_counts(state)

    # a node change: node-2-1 relabelled into zone 3 (a new Node object, as the store replaces it)
    c.nodes = [make_node(n.metadata.name, labels={**n.metadata.labels, LABEL_ZONE: "test-zone-3"})
               if n.metadata.name == "node-2-1" else n for n in c.nodes]
    state = c.state()
    assert dict(_zone_counts(prov, state)) == {"test-zone-1": 0, "test-zone-2": 0, "test-zone-3": 2}
    assert _zone_counts(prov, state) == _fresh_counts(state)

    # a node gone: its pod no longer counts, its domain is still offered by the other zone-1 node
    c.nodes = [n for n in c.nodes if n.metadata.name != "node-3-2"]
    state = c.state()
    assert dict(_zone_counts(prov, state)) == {"test-zone-1": 0, "test-zone-2": 0, "test-zone-3": 1}
    assert _zone_counts(prov, state) == _fresh_counts(state)


def test_the_counts_skip_what_upstream_ignores() -> None:
    """IgnoredForTopology and the pods being scheduled now are left out, index or not."""
    c = Cluster()
    c.bind("w1", "node-1-1")
    c.bind("w2", "node-2-1")
    done = c.pods[-1].model_copy(deep=True)
    done.status.phase = "Succeeded"
    c.pods[-1] = done
    assert ignored_for_topology(done)
    state = c.state()
    pending = make_pod("pending", labels=APP, topology_spread_constraints=[topology_spread(LABEL_ZONE, APP)])
    topo = Topology(state, state.nodes, [make_nodepool("default")], {"default": fake.default_instance_types()},
                    [pending, c.pods[0]])  # w1 is being scheduled again: excluded
    (group,) = topo.groups()
    assert dict(group.domains) == {"test-zone-1": 0, "test-zone-2": 0, "test-zone-3": 0}


# -- node label requirements --------------------------------------------------------------------
def test_label_requirements_are_kept_by_content_and_follow_a_changed_label() -> None:
    cache = SchedulerCache()
    labels = {LABEL_ZONE: "test-zone-1", "team": "a"}
    first = cache.label_requirements(labels)
    assert first == Requirements.from_labels(labels)
    assert cache.label_requirements(dict(labels)) is first  # equal content, another dict: the same answer
    labels["team"] = "b"  # edited in place (the simulation relabels NodeClaims so)
    changed = cache.label_requirements(labels)
    assert changed is not first and changed.get("team").values == frozenset({"b"})
    assert first.get("team").values == frozenset({"a"})


def test_an_existing_node_narrows_its_own_copy_of_the_memo() -> None:
    cache = SchedulerCache()
    node = make_node("n1", labels={LABEL_ZONE: "test-zone-1"})
    del node.metadata.labels[LABEL_HOSTNAME]  # ExistingNode adds the hostname (HostName(): the name)
    sn = ClusterState.from_objects([node]).nodes[0]
    shared = cache.label_requirements(sn.labels())
    topo = Topology(ClusterState(), [], [make_nodepool("default")], {"default": fake.default_instance_types()}, [])
    en = ExistingNode(sn, topo, [], {}, shared)
    plain = ExistingNode(sn, topo, [], {})
    assert en.requirements == plain.requirements
    assert LABEL_HOSTNAME in en.requirements and LABEL_HOSTNAME not in shared
    assert cache.label_requirements(sn.labels()) == Requirements.from_labels(sn.labels())


# -- StateNode sums across snapshots ------------------------------------------------------------
def _sums(state: ClusterState) -> dict[str, tuple[Any, ...]]:
    return {sn.name: (sn.pod_requests(), sn.daemonset_requests(), sorted(sn.host_port_usage()._reserved.items()))
            for sn in state.nodes}


def _fresh(c: Cluster) -> dict[str, tuple[Any, ...]]:
    return _sums(ClusterState.from_objects(c.nodes, (), c.pods))


def test_state_node_sums_are_reused_only_for_the_same_bound_pods() -> None:
    c = Cluster()
    c.bind("w1", "node-1-1")
    c.bind("w2", "node-1-1")
    c.pods.append(make_pod("ports", node_name="node-2-1", unschedulable=False, phase="Running", host_ports=[8080],
                           requests={"cpu": "1"}))
    first = c.state()
    before = _sums(first)
    second = c.state()
    by_name = {sn.name: sn for sn in second.nodes}
    # nothing changed: every node took the sums over (the same objects, not recomputed)
    old = {sn.name: sn for sn in first.nodes}
    assert by_name["node-1-1"]._pod_requests is old["node-1-1"]._pod_requests
    assert _sums(second) == before == _fresh(c)

    # a pod rebound to another node (a new object), one deleted, one bound
    moved = c.pods[0].model_copy(update={"spec": c.pods[0].spec.model_copy(update={"node_name": "node-3-1"})})
    c.pods[0] = moved
    c.delete("ports")
    c.bind("w3", "node-2-2")
    third = ClusterState.from_objects(c.nodes, (), c.pods)
    # only the nodes still bound to the same pods (here: none) take the sums over: 1-2, 2-1, 3-2
    assert third.adopt_derived(second) == 3
    assert _sums(third) == _fresh(c)
    got = {sn.name: sn.pod_requests() for sn in third.nodes}
    assert got["node-1-1"] == pod_requests(c.pods[1])
    assert got["node-3-1"] == pod_requests(moved)
    assert got["node-2-1"] == {}


def test_state_node_sums_follow_the_pods_bound_and_gone(monkeypatch: Any) -> None:
    """A node bound to other pods than in the snapshot before takes that snapshot's sums changed by
    the pods bound and gone (StateNode.sums_from): the same sums as summing every pod, over many
    random steps (DaemonSet pods, pods of one resource only, nodes emptied and filled)."""
    from karpy.api.meta import OwnerReference

    rng = random.Random(5)
    nodes = [make_node(f"n{i}") for i in range(3)]
    pods: list[Any] = []
    taken: list[int] = []
    seq = ports_taken = 0
    previous = None
    monkeypatch.setattr(ClusterState, "incremental_sums", True)
    orig = ClusterState.adopt_derived

    def counted(self: ClusterState, prev: ClusterState) -> int:
        before = {sn.name for sn in self.nodes if sn._pod_requests is None}
        n = orig(self, prev)
        taken.append(sum(1 for sn in self.nodes if sn.name in before and sn._pod_requests is not None
                         and tuple(map(id, sn.pods)) != next((tuple(map(id, o.pods)) for o in prev.nodes
                                                              if o.name == sn.name), None)))
        return n

    monkeypatch.setattr(ClusterState, "adopt_derived", counted)
    for step in range(120):
        for _ in range(rng.randint(1, 6)):
            if pods and rng.random() < 0.45:
                pods.pop(rng.randrange(len(pods)))
            else:
                seq += 1
                req = rng.choice([{"cpu": "250m", "memory": "1Gi"}, {"cpu": "1"}, {"memory": "512Mi"},
                                  {"cpu": "100m", "nvidia.com/gpu": "1"}])
                ports = [rng.choice([8080, 9090])] if rng.random() < 0.1 else None
                p = make_pod(f"p{seq}", node_name=rng.choice(nodes).metadata.name, unschedulable=False,
                             phase="Running", requests=req, **({"host_ports": ports} if ports else {}))
                if rng.random() < 0.2:
                    p.metadata.owner_references = [OwnerReference(api_version="apps/v1", kind="DaemonSet",
                                                                  name="ds", uid="ds")]
                pods.append(p)
        state = ClusterState.from_objects(nodes, (), list(pods), previous=previous)
        fresh = ClusterState.from_objects(nodes, (), list(pods))
        for sn, f in zip(state.nodes, fresh.nodes):
            kept_ports = sn._host_port_usage is not None
            ports_taken += kept_ports
            assert (sn.pod_requests(), sn.daemonset_requests()) == (f.pod_requests(), f.daemonset_requests()), step
            assert list(sn.host_port_usage()._reserved.items()) == list(f.host_port_usage()._reserved.items()), step
        previous = state
    assert sum(taken) > 50  # most steps changed a node by a few pods and took the sums forward
    assert ports_taken > 20  # and the host-port usage, when no pod bound or gone had a host port


def test_days_with_sums_taken_forward_write_the_same_document(monkeypatch: Any) -> None:
    """Generated days with the disruption controller: the same JSON with every node's sums summed
    again whenever its pods changed."""
    import karpy
    from tests.disruption.test_helpers_equivalence import _day

    for seed in (2, 6):
        docs, events = _day(seed)
        run = lambda: karpy.simulate(docs, prices="2026-07-20", until="3h", events=events,  # noqa: E731
                                     disruption=True).to_json()
        monkeypatch.setattr(ClusterState, "incremental_sums", True)
        forward = run()
        monkeypatch.setattr(ClusterState, "incremental_sums", False)
        assert '"disruptions": []' not in forward and forward == run()
