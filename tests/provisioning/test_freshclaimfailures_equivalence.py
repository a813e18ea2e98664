"""karpy/provisioning/freshclaimfailures.py: Scheduler.addToNewNodeClaim's instance-type filter
failures of fresh NodeClaims, memoised per Solve by template, options, pod requirement set,
requests and the keys Topology.narrow changed. Every test compares a Solve with the memo against
the same Solve with it off (upstream: a NodeClaim per template, filtered and formatted on every
try), including the explain records of every pod's tries. Upstream:
pkg/controllers/provisioning/scheduling/{scheduler,nodeclaim}.go."""

from __future__ import annotations

import random
from typing import Any

import pytest

from karpy.api.builders import make_nodepool, make_pod, requirement, topology_spread
from karpy.cloudprovider import fake
from karpy.provisioning import freshclaimfailures, nodeclaim as nodeclaim_module
from karpy.provisioning.scheduler import Scheduler
from karpy.state.cluster import ClusterState
from karpy.provisioning.topology import Topology
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS, LABEL_HOSTNAME, LABEL_ZONE

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
    get = freshclaimfailures.FreshClaimFailures.get

    def counting(self: Any, key: Any, claim: Any) -> Any:
        hit = get(self, key, claim)
        hits.append(hit is not None)
        return hit

    answered: list[bool] = []
    answer = freshclaimfailures.FreshClaimFailures.answer

    def counting_answers(self: Any, *args: Any) -> Any:
        hit = answer(self, *args)
        answered.append(hit is not None)
        return hit

    monkeypatch.setattr(freshclaimfailures.FreshClaimFailures, "get", counting)
    monkeypatch.setattr(freshclaimfailures.FreshClaimFailures, "answer", counting_answers)
    fast = _solve(seed)
    assert any(hits) or any(answered), "the scenario must exercise the memo"
    assert any(answered), "and the answer without a claim"
    assert not all(hits)
    monkeypatch.setattr(freshclaimfailures.FreshClaimFailures, "answer", lambda self, *a: None)
    without_answers = _solve(seed)
    assert fast == without_answers
    monkeypatch.setattr(freshclaimfailures.FreshClaimFailures, "key", staticmethod(lambda *a: None))
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
    key = freshclaimfailures.FreshClaimFailures.key
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
