"""The fit floor of an in-flight NodeClaim's instance-type filter (NodeClaim.fit_floor): after an
Add, every option of the claim fits the total it was filtered with, so the next filter's fits test
(_Capacity.too_small_among) walks per resource only the types ranked between that total and the
new one; and the offerings compatible with a claim's requirement set and the types incompatible
with it, looked up by the set's identity (InstanceTypeIndex.reqs_by_identity). Upstream (pkg/controllers/provisioning/scheduling/nodeclaim.go filterInstanceTypesByRequirements)
tests fits for every option on every CanAdd; these tests compare with that plain walk."""

from __future__ import annotations

import random
from typing import Any

import pytest

from karpy.api.builders import make_nodepool, make_pod, requirement, topology_spread
from karpy.cloudprovider import fake
from karpy.provisioning.instancetypeindex import InstanceTypeIndex, _Capacity
from karpy.provisioning.nodeclaim import NodeClaim
from karpy.provisioning.scheduler import Scheduler
from karpy.provisioning.topology import Topology
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS, LABEL_INSTANCE_TYPE_STABLE, LABEL_ZONE
from karpy.state.cluster import ClusterState

WELL_KNOWN = CORE_WELL_KNOWN_LABELS | fake.FakeCloudProvider().well_known_labels()
ZONES = ("test-zone-1", "test-zone-2", "test-zone-3")
NAMES = ("cpu", "memory", "pods", "example.com/gpu")


def _offers(r: random.Random) -> dict[int, tuple[tuple[dict[str, int], bool], ...]]:
    offers: dict[int, tuple[tuple[dict[str, int], bool], ...]] = {}
    for iid in range(1000, 1000 + r.randint(1, 60)):
        groups = []
        for _ in range(r.choice([1, 1, 1, 2, 3])):
            alloc = {n: r.randint(-1, 8) for n in NAMES if r.random() < 0.8}
            groups.append((alloc, any(v < 0 for v in alloc.values())))
        offers[iid] = tuple(groups)
    return offers


@pytest.mark.parametrize("seed", range(12))
def test_too_small_among_from_a_floor_the_ids_fit_is_too_small_restricted_to_the_ids(seed: int) -> None:
    """For ids that all fit ``floor`` (as a claim's options after an Add), too_small_among(ids,
    total, floor) is too_small(total) & ids -- whether the new total is above, below or beside the
    floor, with resources missing from either, for single-group, several-group and negative types."""
    r = random.Random(seed)
    cap = _Capacity(_offers(r))
    every = sorted(cap.candidates)
    checked = set()
    for _ in range(200):
        floor = {n: r.randint(0, 6) for n in r.sample(NAMES, r.randint(0, len(NAMES)))}
        fitting = [i for i in every if i not in cap.too_small(floor)]
        ids = frozenset(r.sample(fitting, r.randint(0, len(fitting))))
        total = {n: max(0, floor.get(n, 0) + r.randint(-2, 4)) for n in r.sample(NAMES, r.randint(0, len(NAMES)))}
        got = cap.too_small_among(ids, total, floor)
        assert got == cap.too_small(total) & ids
        checked.add(bool(got))
    assert checked == {True, False}


def test_a_floor_the_ids_do_not_fit_would_change_the_answer() -> None:
    """The floor is what makes the walk short: given a floor the ids do not fit, the answer misses
    types (so the equivalence above depends on the claim's options really fitting it)."""
    cap = _Capacity({i: (({"cpu": i}, False),) for i in range(1, 9)})
    ids = frozenset(range(1, 9))
    assert cap.too_small_among(ids, {"cpu": 5}) == {1, 2, 3, 4}
    assert cap.too_small_among(ids, {"cpu": 5}, {"cpu": 3}) == {3, 4}  # (1 and 2 do not fit 3)


def _types() -> dict[str, list[Any]]:
    """Sizes from 1 to 12 cpu, each size offered in some of the zones (zone 3: by few)."""
    def pool(prefix: str, price: float) -> list[Any]:
        out = []
        for i in range(12):
            zones = ZONES if i % 4 == 0 else ZONES[:2] if i % 2 else ZONES[1:2]
            out.append(fake.new_instance_type(
                f"{prefix}-{i}", resources={"cpu": str(i + 1), "memory": f"{(i % 5 + 1) * 2}Gi", "pods": str(4 + i)},
                offerings=[fake._offering(ct, z, price + i) for z in zones for ct in ("on-demand", "spot")]))
        return out
    return {"a": pool("a", 1.0), "b": pool("b", 1.5)}


def _solve(seed: int) -> tuple[Any, ...]:
    """(placements, pod errors, claims with their options, every pod's try records) of one Solve."""
    r = random.Random(seed)
    zones = requirement((LABEL_ZONE, "In", list(ZONES)))
    pools = [make_nodepool("a", weight=10, requirements=[zones], limits={"cpu": "60"} if seed % 2 else None),
             make_nodepool("b", requirements=[zones])]
    pods = []
    for i in range(120):
        app = r.choice("xyz")
        kw: dict[str, Any] = {}
        if r.random() < 0.3:
            kw["topology_spread_constraints"] = [topology_spread(LABEL_ZONE, {"app": app}, max_skew=r.choice([1, 2]))]
        if r.random() < 0.15:
            kw["node_selector"] = {LABEL_ZONE: r.choice(ZONES)}
        if r.random() < 0.2:  # types by name: the incompatible sets differ from claim to claim
            names = [f"{pool}-{i}" for pool in "ab" for i in r.sample(range(12), 6)]
            kw["node_requirements"] = [requirement((LABEL_INSTANCE_TYPE_STABLE, r.choice(["In", "NotIn"]), names))]
        requests = {"cpu": r.choice(["100m", "250m", "500m", "1", "2", "3"]), "memory": r.choice(["128Mi", "1Gi", "3Gi"])}
        pods.append(make_pod(f"p-{i:03d}", uid=f"p-{i:03d}", labels={"app": app}, requests=requests, **kw))
    daemons = [make_pod("ds-0", uid="ds-0", requests={"cpu": "200m", "memory": "256Mi"})] if seed % 3 else []
    types = _types()
    cluster = ClusterState.from_objects()
    topology = Topology(cluster, cluster.active_nodes(), pools, types, pods, "Respect", WELL_KNOWN)
    s = Scheduler(pools, cluster, cluster.active_nodes(), topology, types, daemons, well_known=WELL_KNOWN)
    results = s.solve(pods)
    out = {p.key: nc.hostname for nc in results.new_nodeclaims for p in nc.pods}
    claims = [(nc.hostname, nc.nodepool_name, len(nc.pods), tuple(it.name for it in nc.instance_type_options),
               str(nc.requirements), sorted(nc.requests.items())) for nc in results.new_nodeclaims]
    attempts = {p.key: s.attempt_record(p.key) for p in pods}
    return out, dict(results.pod_errors), claims, attempts


@pytest.mark.parametrize("seed", range(6))
def test_the_fit_floor_solves_as_the_plain_filter(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    floors: list[bool] = []
    among = _Capacity.too_small_among

    def counting(self: _Capacity, ids: frozenset[int], total: dict[str, int],
                 floor: dict[str, int] | None = None) -> set[int]:
        floors.append(floor is not None)
        return among(self, ids, total, floor)

    monkeypatch.setattr(_Capacity, "too_small_among", counting)
    fast = _solve(seed)
    assert any(floors), "the scenario must filter claims from a floor"
    monkeypatch.setattr(NodeClaim, "fit_floor", False)
    floors.clear()
    plain = _solve(seed)
    assert not any(floors)
    assert fast == plain


@pytest.mark.parametrize("seed", range(6))
def test_requirement_sets_by_identity_solve_as_by_value(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    hits: list[bool] = []
    allocs = InstanceTypeIndex.offering_allocs

    def counting(self: InstanceTypeIndex, reqs: Any) -> Any:
        hits.append(self._last_offer is not None and self._last_offer[0] is reqs)
        return allocs(self, reqs)

    monkeypatch.setattr(InstanceTypeIndex, "offering_allocs", counting)
    fast = _solve(seed)
    assert any(hits), "the scenario must ask for a requirement set twice"
    monkeypatch.setattr(InstanceTypeIndex, "reqs_by_identity", False)
    assert fast == _solve(seed)
