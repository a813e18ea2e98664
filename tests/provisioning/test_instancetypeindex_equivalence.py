"""karpy/provisioning/instancetypeindex.py and NodeClaim.can_add's shortcuts against the plain
computation each replaces: upstream's per-type loop of filterInstanceTypesByRequirements
(compatible, fits, hasOffering) and its error flags and message, incompatible /
incompatible_with, the offering classes, _Capacity and the set algebra memoised by identity, and
CanAdd without its error. Upstream: pkg/controllers/provisioning/scheduling/nodeclaim.go."""

from __future__ import annotations

import random
from typing import Any

import pytest

from karpy.api.builders import make_nodepool, make_pod, topology_spread
from karpy.cloudprovider import fake
from karpy.cloudprovider.types import Offering, OfferingCompatibility
from karpy.provisioning import nodeclaim as nodeclaim_module
from karpy.provisioning.nodeclaim import (
    DaemonOverheadGroup,
    InstanceTypeFilterError,
    InstanceTypeIndex,
    filter_instance_types_by_requirements,
    INSTANCE_TYPES_FILTERED_OUT,
)
from karpy.state.cluster import ClusterState
from karpy.provisioning.topology import Topology
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

WELL_KNOWN = CORE_WELL_KNOWN_LABELS | fake.FakeCloudProvider().well_known_labels()
ZONES = ["test-zone-1", "test-zone-2", "test-zone-3"]
GI = (1 << 30) * 1_000_000_000


def _types(r: random.Random, n: int) -> list[Any]:
    """Fake types of random sizes offered in random zones, some offerings with a capacity
    override or unavailable (_overridden_types below)."""
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


def _random_requirements(r: random.Random, its: list[Any]) -> Requirements:
    reqs = Requirements()
    if r.random() < 0.7:
        reqs.add(Requirement(LABEL_ZONE, "In", r.sample(["test-zone-1", "test-zone-2", "test-zone-3", "nowhere"],
                                                       r.randint(1, 2))))
    if r.random() < 0.5:
        reqs.add(Requirement(LABEL_CAPACITY_TYPE, "In", [r.choice(["spot", "on-demand", "reserved"])]))
    if r.random() < 0.5:
        reqs.add(Requirement(LABEL_INSTANCE_TYPE, "In", [it.name for it in r.sample(its, r.randint(1, 8))]))
    return reqs


@pytest.mark.parametrize("seed", range(6))
def test_filter_without_the_error_pass_keeps_the_same_survivors(seed: int) -> None:
    """``option_ids`` (CanAdd(need_error=False)) changes only the error a failure returns."""
    r = random.Random(seed)
    its = fake.instance_types(60)
    index = InstanceTypeIndex(WELL_KNOWN)
    index.register(its)
    groups = [DaemonOverheadGroup(list(its), {})]
    outcomes = set()
    for _ in range(60):
        options = r.sample(its, r.randint(1, len(its)))
        reqs = _random_requirements(r, its)
        cpu = r.choice([1, 4, 16, 64, 1000]) * 1_000_000_000
        requests = {"cpu": cpu, "pods": 1_000_000_000}
        args = (index, options, reqs, (), "ns/p", requests, groups, requests, False,
                lambda _its, _reqs: (0, None, None))
        plain = filter_instance_types_by_requirements(*args)
        fast = filter_instance_types_by_requirements(*args, False, frozenset(id(it) for it in options))
        assert [it.name for it in fast[0]] == [it.name for it in plain[0]]
        assert (fast[2] is None) == (plain[2] is None)
        outcomes.add(plain[2] is None)
        if plain[2] is not None:
            assert fast[2] == INSTANCE_TYPES_FILTERED_OUT
            assert str(plain[2]).startswith("no instance type")
    assert outcomes == {True, False}  # both paths were exercised


def test_incompatible_memo_equals_the_uncached_answer() -> None:
    r = random.Random(7)
    its = fake.instance_types(40)
    index = InstanceTypeIndex(WELL_KNOWN)
    index.register(its)
    for _ in range(50):
        reqs = _random_requirements(r, its)
        memo = index.incompatible(reqs)
        assert index.incompatible(reqs) is memo
        assert memo == frozenset(id(it) for it in its if it.requirements.intersects(reqs) is not None)


def _overridden_types(r: random.Random, n: int) -> list[Any]:
    """Fake types of random sizes; some offerings carry a capacity override (their own
    allocatable group, as a NodeOverlay makes), some are unavailable."""
    from karpy.cloudprovider.types import Offering

    out = []
    for i in range(n):
        offerings = []
        for zone in r.sample(["test-zone-1", "test-zone-2", "test-zone-3"], r.randint(1, 3)):
            ct = r.choice(["spot", "on-demand"])
            override = {"memory": (r.choice([1, 8, 64]) << 30) * 1_000_000_000} if r.random() < 0.3 else None
            offerings.append(Offering(Requirements(Requirement(LABEL_ZONE, "In", [zone]),
                                                   Requirement(LABEL_CAPACITY_TYPE, "In", [ct])),
                                      1.0, available=r.random() < 0.9, capacity_override=override))
        cpu = r.choice([1, 2, 4, 8, 16, 64])
        out.append(fake.new_instance_type(f"t-{i}", offerings=offerings, resources={
            "cpu": str(cpu), "memory": f"{r.choice([1, 4, 16, 128])}Gi", "pods": str(r.choice([1, 10, 110]))}))
    return out


def _upstream_filter(its: list[Any], reqs: Requirements, groups: list[DaemonOverheadGroup],
                     total: dict[str, int]) -> list[str]:
    """filterInstanceTypesByRequirements written as upstream's loop (compatible, fits, hasOffering
    per type), in the options' order."""
    from karpy.scheduling.resources import merge

    by_type = {id(it): merge(total, g.daemon_overhead) for g in groups for it in g.instance_types}
    out = []
    for it in its:
        if it.requirements.intersects(reqs) is not None:
            continue
        need = by_type[id(it)]
        for g in it.allocatable_groups():
            if any(reqs.is_compatible(o.requirements, WELL_KNOWN) for o in g.offerings):
                alloc = g.allocatable
                if all(v >= 0 for v in alloc.values()) and all(v <= alloc.get(k, 0) for k, v in need.items()):
                    out.append(it.name)
                    break
    return out


@pytest.mark.parametrize("seed", range(8))
def test_set_algebra_filter_equals_upstreams_loop(seed: int) -> None:
    """The survivors computed as id sets (_Capacity.too_small: bisect over types sorted per
    resource; several allocatable groups checked one by one) are exactly upstream's
    compatible && fits && hasOffering, in the options' order, with one or several daemon groups."""
    r = random.Random(seed)
    its = _overridden_types(r, 80)
    index = InstanceTypeIndex(WELL_KNOWN)
    index.register(its)
    split = r.randint(1, len(its) - 1)
    one = [DaemonOverheadGroup(list(its), {})]
    two = [DaemonOverheadGroup(its[:split], {"cpu": 500_000_000}),
           DaemonOverheadGroup(its[split:], {"memory": (1 << 30) * 1_000_000_000})]
    kept = set()
    for _ in range(80):
        options = sorted(r.sample(its, r.randint(1, len(its))), key=its.index)
        reqs = _random_requirements(r, its)
        total = {"cpu": r.choice([1, 2, 4, 8, 32]) * 1_000_000_000,
                 "memory": (r.choice([1, 2, 8, 64]) << 30) * 1_000_000_000, "pods": r.randint(1, 20) * 1_000_000_000}
        if r.random() < 0.2:
            total["example.com/gpu"] = 1_000_000_000  # no type has it: nothing fits
        for groups in (one, two):
            want = _upstream_filter(options, reqs, groups, total)
            for memo in (False, True):
                got = filter_instance_types_by_requirements(
                    index, options, reqs, (), "ns/p", total, groups, total, False,
                    lambda _its, _reqs: (0, None, None), memo)
                assert [it.name for it in got[0]] == want
                assert (got[2] is None) == bool(want)
            kept.add(len(want) == len(options) and len(options) > 0)
            kept.add(not want)
    assert kept == {True, False}  # the all-kept and the nothing-kept answers were both met


@pytest.mark.parametrize("seed", range(12))
def test_too_small_among_is_too_small_restricted_to_the_ids(seed: int) -> None:
    """_Capacity.too_small_among(ids, total) (per resource the prefix filtered by ids, or a column
    test of the given types, whichever is shorter) is exactly too_small(total) & ids, for single-group types (some missing a resource), types with
    several usable groups and types whose only group has a negative allocatable."""
    from karpy.provisioning.instancetypeindex import _Capacity

    r = random.Random(seed)
    names = ("cpu", "memory", "pods", "example.com/gpu")
    offers: dict[int, tuple[tuple[dict[str, int], bool], ...]] = {}
    for iid in range(1000, 1000 + r.randint(1, 60)):
        groups = []
        for _ in range(r.choice([1, 1, 1, 2, 3])):
            alloc = {n: r.randint(-1, 8) for n in names if r.random() < 0.8}
            groups.append((alloc, any(v < 0 for v in alloc.values())))
        offers[iid] = tuple(groups)
    cap = _Capacity(offers)
    every = list(offers)
    checked = set()
    for _ in range(150):
        ids = frozenset(r.sample(every, r.randint(0, len(every))) + [r.randint(0, 5)])  # + ids of no type
        total = {n: r.randint(0, 9) for n in r.sample(names, r.randint(0, len(names)))}
        got = cap.too_small_among(ids, total)
        assert got == cap.too_small(total) & ids
        checked.add(bool(got))
        checked.add(len(got) < len(ids & cap.candidates))
    assert checked == {True, False}


def test_filter_hands_back_the_same_list_when_every_option_survives() -> None:
    its = fake.instance_types(30)
    index = InstanceTypeIndex(WELL_KNOWN)
    index.register(its)
    groups = [DaemonOverheadGroup(list(its), {})]
    small = {"cpu": 100_000_000, "pods": 1_000_000_000}
    options = list(its)
    same = filter_instance_types_by_requirements(index, options, Requirements(), (), "ns/p", small, groups, small,
                                                 False, lambda _its, _reqs: (0, None, None))[0]
    assert same is options
    big = {"cpu": 10 * 1_000_000_000, "pods": 1_000_000_000}
    fewer = filter_instance_types_by_requirements(index, options, Requirements(), (), "ns/p", big, groups, big,
                                                  False, lambda _its, _reqs: (0, None, None))[0]
    # fake-it-<i> has i+1 cpu less 100m kube-reserved: 10 cpu fit from fake-it-10 on
    assert fewer is not options and [it.name for it in fewer] == [it.name for it in its[10:]]


ZONES_CHANGES = ["test-zone-1", "test-zone-2", "test-zone-3", "test-zone-4"]


WELL_KNOWN_CHANGES = CORE_WELL_KNOWN_LABELS


def _random_requirement(r: random.Random, key: str, values: list[str]) -> Requirement:
    op = r.choice(["In", "In", "NotIn", "Exists", "DoesNotExist"])
    return Requirement(key, op, r.sample(values, r.randint(1, min(3, len(values)))))


# --- InstanceTypeIndex.incompatible_with ------------------------------------------------------
def test_incompatible_with_equals_compatible_per_type_of_the_built_requirements() -> None:
    """nodeclaim.go compatible on ``reqs`` with the topology's changes applied, asked with shared
    and with fresh objects (memo hits and misses), never confusing two different change sets."""
    r = random.Random(9)
    its = _overridden_types(r, 40)
    index = InstanceTypeIndex(WELL_KNOWN_CHANGES)
    index.register(its)
    zone_reqs = [Requirement(LABEL_ZONE, "In", [z]) for z in ZONES_CHANGES[:3]]
    bases = []
    for _ in range(6):
        base = Requirements(Requirement(LABEL_HOSTNAME, "In", ["h"]))
        if r.random() < 0.6:
            base.add(_random_requirement(r, LABEL_CAPACITY_TYPE, ["spot", "on-demand", "reserved"]))
        if r.random() < 0.5:
            base.add(_random_requirement(r, LABEL_ZONE, ZONES_CHANGES[:3]))
        bases.append(base)
    for _ in range(400):
        base = r.choice(bases)
        changes: dict[str, Requirement] | None = None
        if r.random() < 0.7:
            z = r.choice(zone_reqs) if r.random() < 0.8 else Requirement(LABEL_ZONE, "In", [r.choice(ZONES_CHANGES)])
            changes = {LABEL_ZONE: z}
            if r.random() < 0.3:
                changes[LABEL_CAPACITY_TYPE] = Requirement(LABEL_CAPACITY_TYPE, "In", [r.choice(["spot", "on-demand"])])
        built = base.copy()
        if changes:
            dict.update(built, changes)
        want = frozenset(id(it) for it in its if it.requirements.intersects(built) is not None)
        assert index.incompatible_with(base, changes) == want
        assert index.incompatible(built) == want


# --- OfferingCompatibility --------------------------------------------------------------------
def test_offering_compatibility_memo_equals_is_compatible_per_offering() -> None:
    """types.go Offering compatibility (``reqs.IsCompatible(o.Requirements, ...)``) asked through
    the memo of to_nodeclaim / OrderByPrice, with simple and non-simple offering forms."""
    r = random.Random(13)
    its = _overridden_types(r, 30)
    offerings = [o for it in its for o in it.offerings]
    for _ in range(20):  # some offerings of a form the memo does not key (complements, several values)
        offerings.append(Offering(Requirements(_random_requirement(r, LABEL_ZONE, ZONES_CHANGES),
                                               _random_requirement(r, LABEL_CAPACITY_TYPE, ["spot", "on-demand"])),
                                  price=1.0, available=True))
    seen = set()
    for _ in range(60):
        reqs = Requirements()
        for key, values in ((LABEL_ZONE, ZONES_CHANGES), (LABEL_CAPACITY_TYPE, ["spot", "on-demand", "reserved"]),
                            ("example.com/team", ["a", "b"])):
            if r.random() < 0.6:
                reqs.add(_random_requirement(r, key, values))
        for wk in (WELL_KNOWN_CHANGES, frozenset()):
            memo = OfferingCompatibility(reqs)
            for o in r.sample(offerings, len(offerings)) * 2:  # every form asked twice: memo hits
                want = o.is_compatible(reqs, wk)
                assert memo(o, wk) == want
                seen.add(want)
            for it in its:
                assert it.min_compatible_price(reqs, wk, memo) == it.min_compatible_price(reqs, wk)
    assert seen == {True, False}
