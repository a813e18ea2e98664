"""karpy/provisioning/scanskips.py's first-fit pre-filters against the plain scan they shortcut.

``Topology.hostname_blocked`` (hostnames a pod's hostname topologies rule out) and
``_TopologyMisses`` (targets sharing a topology domain on which AddRequirements already failed in the
same scan) only skip targets whose CanAdd would fail. With both switched off the scan is upstream's
addToExistingNode / addToInflightNode (scheduler.go: the lowest index whose CanAdd succeeds); every
test here compares against that plain scan."""

from __future__ import annotations

import random
from typing import Any

import pytest

from karpy.api.builders import make_node, make_nodepool, make_pod, pod_affinity_term, topology_spread
from karpy.cloudprovider import fake
from karpy.provisioning import scanskips
from karpy.provisioning.existingnode import ExistingNode
from karpy.provisioning.scheduler import Scheduler
from karpy.provisioning.topology import Topology, TopologyError
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS, LABEL_HOSTNAME, LABEL_NODEPOOL, LABEL_ZONE
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements
from karpy.state.cluster import ClusterState

WELL_KNOWN = CORE_WELL_KNOWN_LABELS | fake.FakeCloudProvider().well_known_labels()
ZONES = ("test-zone-1", "test-zone-2", "test-zone-3")


def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch both pre-filters off: the scan calls CanAdd on every target (upstream's scan)."""
    monkeypatch.setattr(Topology, "hostname_blocked", lambda self, pod: [])
    monkeypatch.setattr(scanskips._TopologyMisses, "note", lambda self, err, reqs: None)


def _pod(r: random.Random, i: int) -> Any:
    app = r.choice("abcd")
    kind = r.choice(("generic", "zone-spread", "host-spread", "host-spread-2", "anti", "zone-affinity"))
    kw: dict[str, Any] = {}
    if kind == "zone-spread":
        kw["topology_spread_constraints"] = [topology_spread(LABEL_ZONE, {"app": app}, max_skew=1)]
    elif kind.startswith("host-spread"):
        kw["topology_spread_constraints"] = [topology_spread(LABEL_HOSTNAME, {"app": app},
                                                             max_skew=2 if kind.endswith("2") else 1)]
    elif kind == "anti":
        kw["pod_anti_affinity"] = [pod_affinity_term({"app": app}, LABEL_HOSTNAME)]
    elif kind == "zone-affinity":
        kw["pod_affinity"] = [pod_affinity_term({"app": app}, LABEL_ZONE)]
    return make_pod(f"p-{i:03d}", uid=f"p-{i:03d}", labels={"app": app},
                    requests={"cpu": r.choice(["100m", "250m", "500m"]), "memory": "64Mi"}, **kw)


def _solve(seed: int) -> tuple[dict[str, str], dict[str, str]]:
    """(placements, pod errors) of one Solve over existing nodes with running pods, in-flight
    claims growing as the Solve goes (the pods' order is the Queue's)."""
    r = random.Random(seed)
    its = fake.instance_types(10)
    pool = make_nodepool("default")
    nodes = [make_node(f"n-{i:02d}", labels={LABEL_ZONE: ZONES[i % 3] if i % 7 else ZONES[0], LABEL_NODEPOOL: "default"},
                       allocatable={"cpu": str(r.choice([1, 2, 4])), "memory": "8Gi", "pods": "30"})
             for i in range(18)]
    running = []
    for i in range(12):
        node = r.choice(nodes)
        running.append(make_pod(f"run-{i:02d}", uid=f"run-{i:02d}", labels={"app": r.choice("abcd")},
                                requests={"cpu": "100m"}, node_name=node.metadata.name, phase="Running",
                                unschedulable=False))
    pods = [_pod(r, i) for i in range(140)]
    cluster = ClusterState.from_objects(nodes=nodes, pods=running)
    topology = Topology(cluster, cluster.active_nodes(), [pool], {"default": its}, pods, "Respect", WELL_KNOWN)
    s = Scheduler([pool], cluster, cluster.active_nodes(), topology, {"default": its}, [], well_known=WELL_KNOWN)
    results = s.solve(pods)
    out = {p.key: en.name for en in results.existing_nodes for p in en.pods}
    out.update({p.key: nc.hostname for nc in results.new_nodeclaims for p in nc.pods})
    return out, dict(results.pod_errors)


@pytest.mark.parametrize("seed", range(4))
def test_prefiltered_scan_places_every_pod_where_the_plain_scan_does(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    skipped = {"blocked": 0, "noted": 0}
    orig_blocked, orig_note = Topology.hostname_blocked, scanskips._TopologyMisses.note
    calls = {"fast": 0, "plain": 0}
    run = ["fast"]
    orig_can_add = ExistingNode.can_add

    def can_add(self: ExistingNode, pod: Any, data: Any) -> Any:
        calls[run[0]] += 1
        return orig_can_add(self, pod, data)

    def blocked(self: Topology, pod: Any) -> list[set[str]]:
        out = orig_blocked(self, pod)
        skipped["blocked"] += bool(out)
        return out

    def note(self: Any, err: Any, reqs: Requirements) -> None:
        before = sum(map(len, self.keys.values()))
        orig_note(self, err, reqs)
        skipped["noted"] += sum(map(len, self.keys.values())) > before

    monkeypatch.setattr(ExistingNode, "can_add", can_add)
    with monkeypatch.context() as m:
        m.setattr(Topology, "hostname_blocked", blocked)
        m.setattr(scanskips._TopologyMisses, "note", note)
        fast = _solve(seed)
    assert skipped["blocked"] > 0 and skipped["noted"] > 0  # both pre-filters had something to skip
    _plain(monkeypatch)
    run[0] = "plain"
    plain = _solve(seed)
    assert fast == plain
    assert calls["fast"] < calls["plain"]  # ... and skipped CanAdd calls
    placed = fast[0].values()
    assert any(v.startswith("n-") for v in placed) and any(v.startswith("hostname-placeholder") for v in placed)


def _zone_nodes(topology: Topology, names_zones: list[tuple[str, str]]) -> list[Any]:
    from karpy.provisioning.existingnode import ExistingNode
    from karpy.state.cluster import StateNode

    out = []
    for name, zone in names_zones:
        node = make_node(name, labels={LABEL_ZONE: zone, LABEL_NODEPOOL: "default"},
                         allocatable={"cpu": "4", "memory": "8Gi", "pods": "30"})
        out.append(ExistingNode(StateNode(node=node), topology, [], {}))
    return out


def test_a_missed_zone_is_forgotten_once_a_pod_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The misses of one scan are not carried to the next: after a pod is recorded the zone that
    failed may fit. zone-1 holds one more 'a' pod than zone-2 (maxSkew 1 allows 1 - 0), so a third
    pod cannot go to zone-1 until zone-2 has caught up (upstream: nextDomainTopologySpread)."""
    pods = [make_pod(f"s-{i}", uid=f"s-{i}", labels={"app": "a"}, requests={"cpu": "100m"},
                     topology_spread_constraints=[topology_spread(LABEL_ZONE, {"app": "a"}, max_skew=1)])
            for i in range(4)]
    pool = make_nodepool("default", requirements=[(LABEL_ZONE, "In", list(ZONES[:2]))])
    its = fake.instance_types(4)
    cluster = ClusterState.from_objects(nodes=[], pods=[])
    topology = Topology(cluster, [], [pool], {"default": its}, pods, "Respect", WELL_KNOWN)
    s = Scheduler([pool], cluster, [], topology, {"default": its}, [], well_known=WELL_KNOWN)
    s.existing_nodes = _zone_nodes(topology, [("z1-a", ZONES[0]), ("z1-b", ZONES[0]), ("z2-a", ZONES[1])])
    s._reset_scans()
    seen: list[dict[str, set[Any]]] = []
    orig_note = scanskips._TopologyMisses.note

    def note(self: Any, err: Any, reqs: Requirements) -> None:
        orig_note(self, err, reqs)
        seen.append({k: set(v) for k, v in self.keys.items()})

    monkeypatch.setattr(scanskips._TopologyMisses, "note", note)
    where = []
    for p in pods:
        assert s._add(p, s._pod_data(p)) is None
        where.append(s._placed_target)
    # s-0 -> z1-a; s-1: zone-1 would be 2 - 0 > 1, z1-a fails and z1-b is skipped as a miss -> z2-a;
    # s-2: both zones at 1, the miss of s-1's scan is gone -> z1-a; s-3 -> z2-a again
    assert where == ["z1-a", "z2-a", "z1-a", "z2-a"]
    # the misses noted: zone-1 only (a node's zone label, by its value set), in s-1's scan and s-3's
    assert seen == [{LABEL_ZONE: {frozenset({ZONES[0]})}}] * 2


def _hostname_node_requirements(host: str) -> Requirements:
    reqs = Requirements()
    reqs.add(Requirement(LABEL_HOSTNAME, "In", (host,)))
    return reqs


@pytest.mark.parametrize("max_skew", [1, 2, 3])
def test_hostname_blocked_is_exactly_where_add_requirements_fails_on_a_hostname_spread(max_skew: int) -> None:
    """For a pod whose only topology is a hostname spread, a hostname is blocked iff
    AddRequirements fails on a node ``In [hostname]`` (topologygroup.go nextDomainTopologySpread,
    hostname case: count + selfSelecting <= maxSkew)."""
    r = random.Random(max_skew)
    pods = [make_pod(f"h-{i}", uid=f"h-{i}", labels={"app": "a"},
                     topology_spread_constraints=[topology_spread(LABEL_HOSTNAME, {"app": "a"}, max_skew=max_skew)])
            for i in range(40)]
    cluster = ClusterState.from_objects(nodes=[], pods=[])
    topology = Topology(cluster, [], [], {}, pods, "Respect", WELL_KNOWN)
    hosts = [f"host-{i}" for i in range(8)]
    checked = blocked_any = 0
    for p in pods:
        blocked = set().union(*topology.hostname_blocked(p))
        strict = Requirements()
        for h in hosts:
            _, err = topology.add_requirements(p, (), strict, _hostname_node_requirements(h))
            assert (h in blocked) == (err is not None), (h, blocked, err)
            checked += 1
        blocked_any += bool(blocked)
        topology.record(p, (), _hostname_node_requirements(r.choice(hosts)))
    assert checked == 40 * 8 and blocked_any > 0


def test_hostname_blocked_includes_inverse_anti_affinity_of_other_pods() -> None:
    """A pod selected by another pod's required hostname anti-affinity may not land beside it
    (topology.go updateInverseAntiAffinity); the blocked set says so without CanAdd."""
    guard = make_pod("guard", uid="guard", labels={"role": "guard"},
                     pod_anti_affinity=[pod_affinity_term({"app": "a"}, LABEL_HOSTNAME)])
    plain = make_pod("plain", uid="plain", labels={"app": "a"})
    cluster = ClusterState.from_objects(nodes=[], pods=[])
    topology = Topology(cluster, [], [], {}, [guard, plain], "Respect", WELL_KNOWN)
    assert topology.hostname_blocked(plain) == []
    topology.record(guard, (), _hostname_node_requirements("host-1"))
    blocked = set().union(*topology.hostname_blocked(plain))
    assert blocked == {"host-1"}
    _, err = topology.add_requirements(plain, (), Requirements(), _hostname_node_requirements("host-1"))
    assert isinstance(err, TopologyError)
    assert topology.add_requirements(plain, (), Requirements(), _hostname_node_requirements("host-2"))[1] is None


def test_groups_selecting_a_pod_are_shared_by_labels_and_renewed_when_a_group_is_created() -> None:
    """Topology._selecting_groups shares its answer between pods of one namespace and label set;
    the answer equals walking every group's ``selects`` (topology.go Record / getMatchingTopologies),
    also after a new group appears between two calls."""
    def spread(name: str, app: str, uid: str, ns: str = "default") -> Any:
        return make_pod(name, ns, uid=uid, labels={"app": app},
                        topology_spread_constraints=[topology_spread(LABEL_ZONE, {"app": app}, max_skew=1)])

    first = [spread("a-0", "a", "a-0"), spread("b-0", "b", "b-0")]
    cluster = ClusterState.from_objects(nodes=[], pods=[])
    topology = Topology(cluster, [], [], {}, first, "Respect", WELL_KNOWN)

    def plain(pod: Any) -> list[Any]:
        return [tg for tg in topology.topology_groups.values() if tg.selects(pod)]

    twin = make_pod("a-1", uid="a-1", labels={"app": "a"})
    other_ns = make_pod("a-2", "elsewhere", uid="a-2", labels={"app": "a"})
    c0 = make_pod("c-0", uid="c-0", labels={"app": "c"})
    for p in first + [twin, other_ns, c0]:
        assert topology._selecting_groups(p)[0] == plain(p)
    assert topology._selecting_groups(twin)[0] is topology._selecting_groups(first[0])[0]  # shared
    assert topology._selecting_groups(c0)[0] == []
    # a new group selecting app=c: the cached answers are renewed
    late = spread("c-1", "c", "c-1")
    assert topology.update(late) is None
    assert len(topology._selecting_groups(c0)[0]) == 1 and topology._selecting_groups(c0)[0] == plain(c0)
    assert topology._selecting_groups(twin)[0] == plain(twin)
