"""The memos and shortcuts of NodeClaim.can_add and filterInstanceTypesByRequirements (issue 13)
against the plain computation each replaces (CONTRIBUTING: every shortcut is compared with what
it shortcuts). Upstream: pkg/controllers/provisioning/scheduling/nodeclaim.go (CanAdd,
tryVolumeAlternative, filterInstanceTypesByRequirements, compatible, fits,
InstanceTypeFilterError.Error)."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import pytest

from karpy.api.builders import make_nodepool, make_pod, topology_spread
from karpy.cloudprovider import fake
from karpy.provisioning import nodeclaim as nodeclaim_module
from karpy.provisioning.nodeclaim import (
    DaemonOverheadGroup,
    InstanceTypeFilterError,
    InstanceTypeIndex,
    apply_topology_requirements,
    filter_instance_types_by_requirements,
)
from karpy.scheduling.hostports import HostPort, HostPortUsage
from karpy.scheduling.labels import (
    CORE_WELL_KNOWN_LABELS,
    LABEL_CAPACITY_TYPE,
    LABEL_HOSTNAME,
    LABEL_INSTANCE_TYPE,
    LABEL_ZONE,
)
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements
from karpy.scheduling.resources import merge

sys.path.insert(0, str(Path(__file__).parent))
from test_speed_paths import _overridden_types  # noqa: E402

WELL_KNOWN = CORE_WELL_KNOWN_LABELS | fake.FakeCloudProvider().well_known_labels()
ZONES = ["test-zone-1", "test-zone-2", "test-zone-3"]
GI = (1 << 30) * 1_000_000_000


def _types(r: random.Random, n: int) -> list[Any]:
    """Fake types of random sizes offered in random zones, some offerings with a capacity
    override or unavailable (test_speed_paths._overridden_types)."""
    return _overridden_types(r, n)


def _reqs(r: random.Random, its: list[Any]) -> Requirements:
    reqs = Requirements()
    if r.random() < 0.7:
        reqs.add(Requirement(LABEL_ZONE, r.choice(["In", "In", "NotIn"]), r.sample([*ZONES, "nowhere"], r.randint(1, 2))))
    if r.random() < 0.5:
        reqs.add(Requirement(LABEL_CAPACITY_TYPE, "In", [r.choice(["spot", "on-demand", "reserved"])]))
    if r.random() < 0.5:
        reqs.add(Requirement(LABEL_INSTANCE_TYPE, "In", [it.name for it in r.sample(its, r.randint(1, 8))]))
    if r.random() < 0.3:
        reqs.add(Requirement("example.com/team", "In", ["a"]))
    return reqs


def _fresh(reqs: Requirements) -> Requirements:
    """Equal requirements made of new Requirement objects (as Solve's merges and topology make)."""
    out = Requirements()
    for r in reqs.values():
        dict.__setitem__(out, r.key, Requirement._make(r.key, r.complement, frozenset(r.values), r.gte, r.lte,
                                                       r.min_values))
    return out


# --- InstanceTypeIndex.incompatible ---------------------------------------------------------
def test_incompatible_by_identity_equals_compatible_per_type_for_equal_but_distinct_objects() -> None:
    """nodeclaim.go compatible: ``it.Requirements.Intersects(requirements) == nil`` per type."""
    r = random.Random(3)
    its = _types(r, 50)
    index = InstanceTypeIndex(WELL_KNOWN)
    index.register(its)
    multi = 0
    for _ in range(120):
        reqs = _reqs(r, its)
        want = frozenset(id(it) for it in its if it.requirements.intersects(reqs) is not None)
        first = index.incompatible(reqs)
        assert first == want
        assert index.incompatible(reqs) is first  # memoised
        again = index.incompatible(_fresh(reqs))  # a miss by identity, the same answer object
        assert again == want and again is first
        multi += sum(1 for k in reqs if index._bad_for(reqs[k])) > 1
    assert multi > 10  # unions of several keys' answers were exercised


def test_incompatible_ignores_keys_no_type_defines() -> None:
    its = fake.instance_types(10)
    index = InstanceTypeIndex(WELL_KNOWN)
    index.register(its)
    only_unknown = Requirements(Requirement("example.com/team", "In", ["a"]),
                                Requirement(LABEL_HOSTNAME, "In", ["hostname-placeholder-0001"]))
    assert index.incompatible(only_unknown) == frozenset()


# --- memoised set algebra ---------------------------------------------------------------------
def test_set_operations_memoised_by_identity_never_confuse_a_reused_id() -> None:
    """Each entry holds its operands: a temporary set freed after use cannot hand its answer to a
    new set that happens to get the same address."""
    index = InstanceTypeIndex(WELL_KNOWN)
    b = frozenset(range(0, 400, 3))
    for i in range(3000):
        a = frozenset(range(i % 97, i % 97 + 7 + i % 5))
        assert index.meet(a, b) == a & b
        assert index.minus(a, b) == a - b
        assert index.covered(a, b) == (a <= b)
        assert index.covered(b, a) == (b <= a)
    keep = frozenset({1, 2, 3})
    assert index.meet(keep, b) is index.meet(keep, b)
    assert index.minus(keep, b) is index.minus(keep, b)


def test_ids_of_is_memoised_per_sequence_object() -> None:
    its = fake.instance_types(12)
    index = InstanceTypeIndex(WELL_KNOWN)
    first = index.ids_of(its)
    assert first == frozenset(map(id, its)) and index.ids_of(its) is first
    fewer = its[:5]
    assert index.ids_of(fewer) == frozenset(map(id, fewer))


# --- offering_allocs (one is_compatible per offering requirement class) ----------------------
@pytest.mark.parametrize("seed", range(4))
def test_offering_allocs_equals_is_compatible_per_offering(seed: int) -> None:
    """nodeclaim.go fits: per allocatable group, the first offering with
    ``requirements.IsCompatible(of.Requirements, AllowUndefinedWellKnownLabels)``."""
    r = random.Random(seed)
    its = _types(r, 60)
    index = InstanceTypeIndex(WELL_KNOWN)
    index.register(its)
    assert len(index._offer_reqs) <= 2 * len(ZONES)  # zone x capacity type classes, not one per offering
    for _ in range(40):
        reqs = _reqs(r, its)
        got = index.offering_allocs(reqs)
        for it in its:
            want = [g.allocatable for g in it.allocatable_groups()
                    if any(reqs.is_compatible(o.requirements, WELL_KNOWN) for o in g.offerings)]
            assert [alloc for alloc, _ in got[id(it)]] == want


def test_offering_classes_by_identity_equal_the_classes_by_value() -> None:
    """not in upstream: _offering_class looks an offering's set up by identity before by value;
    every offering gets the class of its set's value, shared objects or equal copies alike."""
    r = random.Random(7)
    its = _types(r, 40)
    index = InstanceTypeIndex(WELL_KNOWN)
    index.register(its)
    by_value: dict[Any, int] = {}
    for it in its:
        for o in it.offerings:
            c = index._offering_class(o.requirements)
            assert by_value.setdefault(tuple(sorted(dict.items(o.requirements))), c) == c
            copy = _fresh(o.requirements)  # an equal set, another object: the same class
            assert copy is not o.requirements and index._offering_class(copy) == c
    assert len(by_value) == len(index._offer_reqs)


# --- the error's flags as set algebra ---------------------------------------------------------
def _upstream_flags(options: list[Any], reqs: Requirements, groups: list[DaemonOverheadGroup],
                    total: dict[str, int], pod_key: str, ports: list[HostPort]) -> tuple[bool, ...]:
    """filterInstanceTypesByRequirements' flag loop written as upstream's (nodeclaim.go:541-618)."""
    eligible = {id(it) for it in options}
    met = fits = offering = rf = ro = fo = False
    for g in groups:
        if g.host_port_usage.conflicts(pod_key, ports) is not None:
            continue
        t = merge(total, g.daemon_overhead) if g.daemon_overhead else total
        for it in g.instance_types:
            if id(it) not in eligible:
                continue
            c = it.requirements.intersects(reqs) is None
            f = o = False
            for grp in it.allocatable_groups():
                alloc = grp.allocatable
                fit = all(v >= 0 for v in alloc.values()) and all(v <= alloc.get(k, 0) for k, v in t.items())
                if any(reqs.is_compatible(of.requirements, WELL_KNOWN) for of in grp.offerings):
                    o = True
                    if fit:
                        f = True
                        break
            met, fits, offering = met or c, fits or f, offering or o
            rf = rf or (c and f and not o)
            ro = ro or (c and o and not f)
            fo = fo or (f and o and not c)
    return met, fits, offering, rf, ro, fo


@pytest.mark.parametrize("seed", range(6))
def test_error_flags_equal_upstreams_loop(seed: int) -> None:
    r = random.Random(seed)
    its = _types(r, 70)
    index = InstanceTypeIndex(WELL_KNOWN)
    index.register(its)
    split = r.randint(1, len(its) - 1)
    port = HostPort("0.0.0.0", 8080, "TCP")
    busy = HostPortUsage()
    busy.add("ns/other", [port])
    layouts = [
        [DaemonOverheadGroup(list(its), {})],
        [DaemonOverheadGroup(its[:split], {"cpu": 500_000_000}), DaemonOverheadGroup(its[split:], {"memory": GI})],
        # the first group's host port is taken: its types are not considered
        [DaemonOverheadGroup(its[:split], {}, busy), DaemonOverheadGroup(its[split:], {"cpu": 250_000_000})],
    ]
    seen: set[tuple[bool, ...]] = set()
    for _ in range(60):
        options = sorted(r.sample(its, r.randint(1, len(its))), key=its.index)
        reqs = _reqs(r, its)
        total = {"cpu": r.choice([1, 2, 4, 8, 32, 128]) * 1_000_000_000,
                 "memory": r.choice([1, 2, 8, 64]) * GI, "pods": r.randint(1, 20) * 1_000_000_000}
        for groups in layouts:
            ports = [port] if groups is layouts[2] else []
            remaining, _, err = filter_instance_types_by_requirements(
                index, options, reqs, ports, "ns/p", total, groups, total, False, lambda _i, _r: (0, None, None))
            if remaining:
                continue
            assert isinstance(err, InstanceTypeFilterError)
            got = (err.requirements_met, err.fits, err.has_offering, err.requirements_and_fits,
                   err.requirements_and_offering, err.fits_and_offering)
            assert got == _upstream_flags(options, reqs, groups, total, "ns/p", ports)
            seen.add(got)
    assert len(seen) >= 4  # several different error shapes were compared


# --- the message, its parts memoised ----------------------------------------------------------
def _shapes() -> list[tuple[bool, bool, bool, bool, bool, bool]]:
    out = []
    for bits in range(64):
        out.append(tuple(bool(bits >> i & 1) for i in range(6)))  # type: ignore[arg-type]
    return out  # type: ignore[return-value]


def test_memoised_message_is_byte_identical_in_every_shape() -> None:
    """InstanceTypeFilterError.Error (nodeclaim.go:488-538): every branch (the 64 flag
    combinations, a minValues error, one or several daemon overheads, the 1M cpu hint) renders
    the same text with the message parts memoised (InstanceTypeIndex.strings) as without."""
    names = [f"m5.{s}" for s in ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")]
    memo: dict[Any, str] = {}
    texts = set()
    for with_daemons in (0, 1, 2):
        for mv in (None, 'minValues requirement is not met for label(s) (label="node.kubernetes.io/instance-type")'):
            for cpu in (1_000_000_000, 2_000_000 * 1_000_000_000):
                for shape in _shapes():
                    made = []
                    for strings in (None, memo, memo):  # plain, memo filled, memo hit
                        reqs = Requirements(Requirement(LABEL_INSTANCE_TYPE, "In", list(reversed(names))),
                                            Requirement(LABEL_ZONE, "NotIn", ["test-zone-9"]),
                                            Requirement(LABEL_HOSTNAME, "In", ["hostname-placeholder-0007"]),
                                            Requirement("karpenter.k8s.aws/instance-cpu", "Gt", ["3"], 2))
                        e = InstanceTypeFilterError(reqs, {"cpu": cpu, "memory": GI, "pods": 1_000_000_000}, strings)
                        for d in [{"cpu": 100_000_000}, {"cpu": 300_000_000, "memory": GI}][:with_daemons]:
                            e.track_daemon_overhead(d)
                        (e.requirements_met, e.fits, e.has_offering, e.requirements_and_fits,
                         e.requirements_and_offering, e.fits_and_offering) = shape
                        e.min_values_incompatible_err = mv
                        made.append(str(e))
                    assert made[0] == made[1] == made[2]
                    assert f", requirements={reqs}, resources=" in made[0]  # Requirements.__str__
                    texts.add(made[0])
    assert len(texts) > 30
    assert any("min=" in t and "max=" in t for t in texts)
    assert any(t.endswith("(CPU request >= 1 Million, m vs M typo?)") for t in texts)
    assert any(t.startswith("minValues requirement") for t in texts)


# --- CanAdd without the error: the same placements --------------------------------------------
def test_solve_places_pods_as_when_every_in_flight_try_builds_its_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """addToInflightNode discards CanAdd's errors; NodeClaim.can_add(need_error=False) fails fast
    when no option's requirements intersect (and builds no flags). The same pods land on the same
    claims as when every try takes the full path."""
    from karpy.provisioning.scheduler import Scheduler
    from karpy.state.cluster import ClusterState
    from karpy.provisioning.topology import Topology

    r = random.Random(11)
    its = _types(r, 40)
    pool = make_nodepool("default")
    pods = [make_pod(f"p-{i:03d}", uid=f"p-{i:03d}", labels={"app": r.choice("ab")},
                     requests={"cpu": r.choice(["250m", "500m", "1", "3"]), "memory": "256Mi"},
                     node_selector={LABEL_ZONE: r.choice(ZONES)} if r.random() < 0.3 else None,
                     topology_spread_constraints=[topology_spread(LABEL_ZONE, {"app": "a"}, max_skew=1)]
                     if r.random() < 0.5 else ())
            for i in range(250)]
    fast_fails = 0
    original = nodeclaim_module.NodeClaim.can_add

    def placements() -> tuple[dict[str, int], dict[str, str]]:
        cluster = ClusterState.from_objects(nodes=[], pods=[])
        topology = Topology(cluster, [], [pool], {"default": its}, pods, "Respect", WELL_KNOWN)
        s = Scheduler([pool], cluster, [], topology, {"default": its}, [], well_known=WELL_KNOWN)
        results = s.solve(pods)
        out = {p.key: nc.seq for nc in results.new_nodeclaims for p in nc.pods}
        return out, dict(results.pod_errors)

    def counting(self: Any, pod: Any, data: Any, relax: bool, need_error: bool = True) -> Any:
        nonlocal fast_fails
        out = original(self, pod, data, relax, need_error)
        fast_fails += out[2] is nodeclaim_module.INSTANCE_TYPES_FILTERED_OUT
        return out

    monkeypatch.setattr(nodeclaim_module.NodeClaim, "can_add", counting)
    fast = placements()
    assert fast_fails > 20  # the shortcut was taken
    monkeypatch.setattr(nodeclaim_module.NodeClaim, "can_add",
                        lambda self, pod, data, relax, need_error=True: original(self, pod, data, relax, True))
    assert placements() == fast
    assert len(set(fast[0].values())) > 5


# --- apply_topology_requirements ----------------------------------------------------------------
def _plain_apply(reqs: Requirements, topo: Requirements, allow: frozenset[str]) -> tuple[Requirements, str | None]:
    """``reqs.Compatible(topoReqs)`` on the changed keys, then the topology requirements."""
    changed = Requirements()
    for k, v in topo.items():
        if dict.get(reqs, k) is not v:
            dict.__setitem__(changed, k, v)
    if not changed:
        return reqs, None
    e = reqs.compatible(changed, allow)
    return (reqs, e) if e is not None else (topo, None)


def test_apply_topology_requirements_per_key_check_equals_compatible() -> None:
    r = random.Random(5)
    values = ["a", "b", "c"]
    outcomes = set()
    for _ in range(600):
        reqs = Requirements()
        for key in ("k1", "k2", LABEL_ZONE):
            if r.random() < 0.6:
                dict.__setitem__(reqs, key, Requirement(key, r.choice(["In", "NotIn", "Exists", "DoesNotExist"]),
                                                        r.sample(values, r.randint(1, 2))))
        topo = reqs.copy()
        for key in r.sample(["k1", "k2", "k3", LABEL_ZONE], r.randint(0, 2)):
            op = r.choice(["In", "NotIn", "DoesNotExist", "Exists"])
            dict.__setitem__(topo, key, Requirement(key, op, r.sample(values, r.randint(1, 2))))
        got = apply_topology_requirements(reqs, topo, WELL_KNOWN)
        want = _plain_apply(reqs, topo, WELL_KNOWN)
        assert got[1] == want[1] and got[0] is want[0]
        outcomes.add((want[0] is reqs, want[1] is None))
    assert outcomes == {(True, True), (True, False), (False, True)}
