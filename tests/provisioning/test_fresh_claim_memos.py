"""Two per-pass shortcuts (issue 13, round 7) against the plain computation each replaces.

* ``FreshClaimFailures``: Scheduler.addToNewNodeClaim's instance-type filter failures of fresh
  NodeClaims, memoised per Solve by template, options, pod requirement set, requests and the keys
  Topology.narrow changed. Every test compares a Solve with the memo against the same Solve with
  it off (upstream: a NodeClaim per template, filtered and formatted on every try), including the
  explain records of every pod's tries.
* ``Topology._count_domains``'s walk of the existing nodes, done once per (topology key,
  node-filter hash) and replayed for later groups: compared with the walk per group.

Upstream: pkg/controllers/provisioning/scheduling/{scheduler,nodeclaim,topology}.go.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from karpy.api.builders import make_node, make_nodepool, make_pod, requirement, topology_spread
from karpy.cloudprovider import fake
from karpy.provisioning import nodeclaim as nodeclaim_module
from karpy.provisioning.scheduler import Scheduler
from karpy.provisioning.topology import Topology
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS, LABEL_HOSTNAME, LABEL_ZONE
from karpy.state.cluster import ClusterState

WELL_KNOWN = CORE_WELL_KNOWN_LABELS | fake.FakeCloudProvider().well_known_labels()
ZONES = ("test-zone-1", "test-zone-2", "test-zone-3")


def _types() -> dict[str, list[Any]]:
    """Both pools' types are offered in zones 1 and 2 only; the pools allow zone 3 too, so zone 3
    is a spread domain no type offers (as us-east-1e for the AWS workloads)."""
    def pool(prefix: str, price: float) -> list[Any]:
        return [fake.new_instance_type(
            f"{prefix}-{i}", resources={"cpu": str(2 * (i + 1)), "memory": f"{4 * (i + 1)}Gi", "pods": "20"},
            offerings=[fake._offering(ct, z, price + i) for z in ZONES[:2] for ct in ("on-demand", "spot")])
            for i in range(4)]
    return {"a": pool("a", 1.0), "b": pool("b", 1.5)}


def _pod(r: random.Random, i: int) -> Any:
    app = r.choice("xyz")
    kind = r.choice(("zone-spread", "zone-spread", "zone-spread", "generic", "host-ports", "huge", "zone-pinned",
                     "host-pinned", "host-spread"))
    kw: dict[str, Any] = {}
    cpu = r.choice(["100m", "250m", "1"])
    if kind in ("zone-spread", "host-ports"):
        kw["topology_spread_constraints"] = [topology_spread(LABEL_ZONE, {"app": app}, max_skew=r.choice([1, 2]))]
    if kind == "host-spread":
        kw["topology_spread_constraints"] = [topology_spread(LABEL_ZONE, {"app": app}),
                                             topology_spread(LABEL_HOSTNAME, {"app": app})]
    if kind == "host-ports":
        kw["host_ports"] = [8080 + r.randint(0, 1)]
    elif kind == "huge":
        cpu = "64"  # fits no type: the filter fails on resources
    elif kind == "zone-pinned":
        kw["node_selector"] = {LABEL_ZONE: "test-zone-3"}  # no type offered there
    elif kind == "host-pinned":
        kw["node_selector"] = {LABEL_HOSTNAME: "some-node"}
    return make_pod(f"p-{i:03d}", uid=f"p-{i:03d}", labels={"app": app},
                    requests={"cpu": cpu, "memory": "128Mi"}, **kw)


def _solve(seed: int) -> tuple[Any, ...]:
    """(placements, pod errors, claims, every pod's try records) of one Solve."""
    r = random.Random(seed)
    zones = requirement((LABEL_ZONE, "In", list(ZONES)))
    pools = [make_nodepool("a", weight=10, requirements=[zones]),
             make_nodepool("b", requirements=[zones], limits={"cpu": "40"} if seed % 2 else None)]
    pods = [_pod(r, i) for i in range(150)]
    types = _types()
    cluster = ClusterState.from_objects()
    topology = Topology(cluster, cluster.active_nodes(), pools, types, pods, "Respect", WELL_KNOWN)
    s = Scheduler(pools, cluster, cluster.active_nodes(), topology, types, [], well_known=WELL_KNOWN)
    results = s.solve(pods)
    out = {p.key: nc.hostname for nc in results.new_nodeclaims for p in nc.pods}
    claims = [(nc.hostname, nc.nodepool_name, len(nc.pods), tuple(it.name for it in nc.instance_type_options),
               str(nc.requirements)) for nc in results.new_nodeclaims]
    attempts = {p.key: s.attempt_record(p.key) for p in pods}
    return out, dict(results.pod_errors), claims, attempts


@pytest.mark.parametrize("seed", range(6))
def test_fresh_claim_failures_match_the_plain_solve(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    hits: list[bool] = []
    get = nodeclaim_module.FreshClaimFailures.get

    def counting(self: Any, key: Any, claim: Any) -> Any:
        hit = get(self, key, claim)
        hits.append(hit is not None)
        return hit

    answered: list[bool] = []
    answer = nodeclaim_module.FreshClaimFailures.answer

    def counting_answers(self: Any, *args: Any) -> Any:
        hit = answer(self, *args)
        answered.append(hit is not None)
        return hit

    monkeypatch.setattr(nodeclaim_module.FreshClaimFailures, "get", counting)
    monkeypatch.setattr(nodeclaim_module.FreshClaimFailures, "answer", counting_answers)
    fast = _solve(seed)
    assert any(hits) or any(answered), "the scenario must exercise the memo"
    assert any(answered), "and the answer without a claim"
    assert not all(hits)
    monkeypatch.setattr(nodeclaim_module.FreshClaimFailures, "answer", lambda self, *a: None)
    without_answers = _solve(seed)
    assert fast == without_answers
    monkeypatch.setattr(nodeclaim_module.FreshClaimFailures, "key", staticmethod(lambda *a: None))
    plain = _solve(seed)
    assert fast == plain


def test_fresh_claim_failures_skip_what_the_key_does_not_hold() -> None:
    """Host ports, volume alternatives, a hostname the pod, template or topology constrain, a
    claim with pods or a reservation manager: no key (the try runs in full)."""
    types = _types()
    pools = [make_nodepool("a")]
    plain = make_pod("plain", uid="plain", requests={"cpu": "100m"})
    ported = make_pod("ported", uid="ported", host_ports=[80])
    pinned = make_pod("pinned", uid="pinned", node_selector={LABEL_HOSTNAME: "n"})
    pods = [plain, ported, pinned]
    cluster = ClusterState.from_objects()
    topology = Topology(cluster, [], pools, types, pods, "Respect", WELL_KNOWN)
    s = Scheduler(pools, cluster, [], topology, types, [], well_known=WELL_KNOWN)
    t = s.templates[0]
    nc = nodeclaim_module.NodeClaim(t, topology, s.daemon_groups[id(t)], t.instance_type_options, "h-1", s.index,
                                    None)
    key = nodeclaim_module.FreshClaimFailures.key
    data = {p.key: s._pod_data(p) for p in pods}
    assert key(nc, data[plain.key], None, False) is not None
    assert key(nc, data[ported.key], None, False) is None
    assert key(nc, data[pinned.key], None, False) is None
    host = {LABEL_HOSTNAME: nc.requirements[LABEL_HOSTNAME]}
    assert key(nc, data[plain.key], host, False) is None
    data[plain.key].volume_requirements = [None]
    assert key(nc, data[plain.key], None, False) is None
    data[plain.key].volume_requirements = None
    nc.reservation_manager = object()
    assert key(nc, data[plain.key], None, False) is None
    nc.reservation_manager = None
    nc.pods.append(plain)
    assert key(nc, data[plain.key], None, False) is None


# --- Topology._count_domains: the existing nodes' walk ---------------------------------------
def _plain_node_domains(topo: Topology, tg: Any) -> list[str]:
    """The walk of topology.go countDomains over the existing nodes, for one group."""
    out = []
    for sn in topo.state_nodes:
        node = sn.node
        if node is None:
            continue
        if not tg.node_filter.matches(node.spec.taints or (), topo._node_requirements(node)):
            continue
        domain = sn.labels().get(tg.key)
        if domain is not None:
            out.append(domain)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_node_domain_walk_matches_the_walk_per_group(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    r = random.Random(seed)
    nodes = []
    for i in range(12):
        labels = {LABEL_ZONE: r.choice(ZONES), "tier": r.choice(("web", "db"))}
        taints = [("dedicated", "x", "NoSchedule")] if r.random() < 0.3 else []
        nodes.append(make_node(f"n-{i:02d}", labels=labels, taints=taints))
    pods = []
    for i in range(30):
        tsc = topology_spread(r.choice((LABEL_ZONE, LABEL_HOSTNAME, "tier")), {"app": r.choice("ab")},
                              node_taints_policy=r.choice((None, "Honor", "Ignore")),
                              node_affinity_policy=r.choice((None, "Honor", "Ignore")))
        sel = r.choice(({}, {"tier": "web"}, {"tier": "db"}))
        tol = [{"key": "dedicated", "operator": "Exists"}] if r.random() < 0.3 else []
        pods.append(make_pod(f"q-{i}", uid=f"q-{i}", labels={"app": r.choice("ab")}, node_selector=sel,
                             tolerations=tol, topology_spread_constraints=[tsc]))
    cluster = ClusterState.from_objects(nodes=nodes)
    registered: list[tuple[int, str]] = []
    from karpy.provisioning import topologygroup

    register = topologygroup.TopologyGroup.register

    def recording(self: Any, domain: str) -> None:
        registered.append((id(self), domain))
        register(self, domain)

    monkeypatch.setattr(topologygroup.TopologyGroup, "register", recording)
    topo = Topology(cluster, cluster.active_nodes(), [make_nodepool("a")], _types(), pods, "Respect", WELL_KNOWN)
    assert len(topo._node_domains) < len(topo.topology_groups)  # replays happened
    for tg in topo.topology_groups.values():
        got = [d for g, d in registered if g == id(tg)]
        assert got == _plain_node_domains(topo, tg)


# --- Topology._spread_node_filter: MakeTopologyNodeFilter memoised per Topology --------------
def test_spread_node_filter_memo_equals_make_topology_node_filter() -> None:
    """The shared filter of equal inputs has the hash and the answers of the one built afresh,
    on every node, whatever the pod's nodeSelector, tolerations, policies and node affinity."""
    from karpy.provisioning.topologygroup import TopologyType, group_node_filter
    from karpy.scheduling.requirements import Requirements

    r = random.Random(5)
    nodes = [make_node(f"n-{i}", labels={LABEL_ZONE: r.choice(ZONES), "tier": r.choice(("web", "db"))},
                       taints=[("dedicated", r.choice(("x", "y")), "NoSchedule")] if r.random() < 0.5 else [])
             for i in range(10)]
    topo = Topology(ClusterState.from_objects(), [], [make_nodepool("a")], _types(), [], "Respect", WELL_KNOWN)
    shared = 0
    for i in range(300):
        kw: dict[str, Any] = {}
        if r.random() < 0.5:
            kw["node_selector"] = r.choice(({"tier": "web"}, {"tier": "db"}, {"tier": "web", LABEL_ZONE: ZONES[0]},
                                            {LABEL_ZONE: ZONES[0], "tier": "web"}))
        if r.random() < 0.5:
            kw["tolerations"] = [{"key": "dedicated", "operator": r.choice(("Exists", "Equal")),
                                  "value": r.choice(("x", "")), "effect": r.choice(("", "NoSchedule"))}]
        if r.random() < 0.2:
            kw["node_requirements"] = [("tier", "In", [r.choice(("web", "db"))])]
        tsc = topology_spread(LABEL_ZONE, {"app": "a"}, node_taints_policy=r.choice((None, "Honor", "Ignore")),
                              node_affinity_policy=r.choice((None, "Honor", "Ignore")))
        pod = make_pod(f"s-{i}", uid=f"s-{i}", labels={"app": "a"}, topology_spread_constraints=[tsc], **kw)
        size = len(topo._node_filters)
        got = topo._spread_node_filter(pod, tsc)
        shared += size == len(topo._node_filters)
        want = group_node_filter(TopologyType.SPREAD, pod, tsc.node_taints_policy, tsc.node_affinity_policy)
        assert got.hash_key == want.hash_key
        for n in nodes:
            reqs = Requirements.from_labels(n.metadata.labels)
            assert got.matches(n.spec.taints, reqs) == want.matches(n.spec.taints, reqs)
    assert shared > 100
