"""The Solve shortcuts of issue 13 against the plain computation they replace (CONTRIBUTING:
every shortcut is compared with what it shortcuts)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from karpy.api.builders import make_nodepool
from karpy.cloudprovider import fake
from karpy.provisioning.nodeclaim import (
    INSTANCE_TYPES_FILTERED_OUT,
    DaemonOverheadGroup,
    InstanceTypeIndex,
    filter_instance_types_by_requirements,
)
from karpy.provisioning.topology import DomainGroupCache, build_domain_groups
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_ZONE
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

WELL_KNOWN = CORE_WELL_KNOWN_LABELS | fake.FakeCloudProvider().well_known_labels()


def _groups(groups: dict[str, Any]) -> dict[str, dict[str, list[Any]]]:
    return {k: {d: g.taint_sets(d) for d in g.domains()} for k, g in groups.items()}


def test_domain_group_cache_answers_what_build_domain_groups_builds() -> None:
    its = fake.instance_types(50)
    pools = [make_nodepool("a", requirements=[(LABEL_ZONE, "In", ["test-zone-1", "test-zone-2"])]),
             make_nodepool("b", taints=[("team", "x", "NoSchedule")])]
    cache = DomainGroupCache()
    first = cache.get(pools, {"a": its, "b": its})
    assert _groups(first) == _groups(build_domain_groups(pools, {"a": its, "b": its}))
    # same pools by value, same instance-type requirement objects: the same answer object
    again = [make_nodepool("a", requirements=[(LABEL_ZONE, "In", ["test-zone-1", "test-zone-2"])]),
             make_nodepool("b", taints=[("team", "x", "NoSchedule")])]
    assert cache.get(again, {"a": its, "b": its}) is first


def test_domain_group_cache_misses_when_a_pool_or_an_instance_type_changes() -> None:
    its = fake.instance_types(20)
    cache = DomainGroupCache()
    pool = make_nodepool("a", requirements=[(LABEL_ZONE, "In", ["test-zone-1"])])
    first = cache.get([pool], {"a": its})
    widened = make_nodepool("a", requirements=[(LABEL_ZONE, "In", ["test-zone-1", "test-zone-3"])])
    second = cache.get([widened], {"a": its})
    assert second is not first
    assert _groups(second) == _groups(build_domain_groups([widened], {"a": its}))
    assert sorted(second[LABEL_ZONE].domains()) == ["test-zone-1", "test-zone-3"]
    fresh = fake.instance_types(20)  # equal values, new requirement objects: rebuilt, same answer
    third = cache.get([pool], {"a": fresh})
    assert third is not first and _groups(third) == _groups(first)


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
    from karpy.provisioning.nodeclaim import _Capacity

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


class _Forgetful(dict):  # type: ignore[type-arg]
    """A memo that never keeps anything."""

    def get(self, key: Any, default: Any = None) -> Any:
        return default

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


@pytest.mark.parametrize("seed", range(3))
def test_existing_node_scan_without_full_nodes_places_as_the_plain_first_fit(seed: int) -> None:
    """Scheduler._add drops nodes without room for a request value from that value's list for the
    rest of the Solve; every pod lands where the plain scan over all nodes puts it."""
    from karpy.api.builders import make_node, make_pod, topology_spread
    from karpy.provisioning.scheduler import Scheduler
    from karpy.state.cluster import ClusterState
    from karpy.provisioning.topology import Topology

    class PlainScan(Scheduler):
        def __setattr__(self, name: str, value: Any) -> None:
            super().__setattr__(name, _Forgetful() if name == "_with_room" else value)

    r = random.Random(seed)
    its = fake.instance_types(20)
    pool = make_nodepool("default")
    nodes = [make_node(f"n-{i:02d}", labels={LABEL_ZONE: f"test-zone-{1 + i % 3}", "karpenter.sh/nodepool": "default"},
                       allocatable={"cpu": str(r.choice([1, 2, 4])), "memory": "8Gi", "pods": "20"})
             for i in range(24)]
    pods = [make_pod(f"p-{i:03d}", uid=f"p-{i:03d}", labels={"app": r.choice("ab")},
                     requests={"cpu": r.choice(["250m", "500m", "1"]), "memory": "128Mi"},
                     topology_spread_constraints=[topology_spread(LABEL_ZONE, {"app": "a"}, max_skew=1)]
                     if r.random() < 0.4 else ())
            for i in range(120)]

    def placements(cls: type[Scheduler]) -> dict[str, str]:
        cluster = ClusterState.from_objects(nodes=nodes, pods=[])
        topology = Topology(cluster, [], [pool], {"default": its}, pods, "Respect", WELL_KNOWN)
        s = cls([pool], cluster, cluster.active_nodes(), topology, {"default": its}, [], well_known=WELL_KNOWN)
        results = s.solve(pods)
        out = {p.key: en.name for en in results.existing_nodes for p in en.pods}
        out.update({p.key: f"new-{nc.seq}" for nc in results.new_nodeclaims for p in nc.pods})
        return out

    plain = placements(PlainScan)
    assert placements(Scheduler) == plain
    on_nodes = sum(1 for v in plain.values() if not v.startswith("new-"))
    assert 20 < on_nodes < len(pods)  # nodes filled up and new claims were needed


def test_a_second_simulation_reuses_the_domain_groups_of_the_first(monkeypatch: Any) -> None:
    """The Provisioner's memo is the process's (SHARED_DOMAIN_GROUPS): the AWS provider hands every
    simulation of a process the same prototype requirement objects, so a warm run builds no group,
    and its document is the one a fresh memo gives."""
    import karpy
    from karpy.cli import bundled_example
    from karpy.provisioning import topology

    builds: list[int] = []
    real = topology.build_domain_groups

    def counting(*args: Any) -> Any:
        builds.append(1)
        return real(*args)

    monkeypatch.setattr(topology, "build_domain_groups", counting)
    topology.SHARED_DOMAIN_GROUPS.clear()
    first = karpy.simulate([bundled_example()], region="us-east-1", prices="2026-07-20").to_json()
    built_by_first = len(builds)
    second = karpy.simulate([bundled_example()], region="us-east-1", prices="2026-07-20").to_json()
    assert built_by_first >= 1 and len(builds) == built_by_first
    assert second == first
