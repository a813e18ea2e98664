"""The shortcuts of one in-flight NodeClaim try (issue 13, round 6) against the plain computation
each replaces: the topology-spread domain memo of TopologyGroup.next_domain, Topology.narrow
(AddRequirements as the keys it changes), topology_changes_error (Compatible on the changed
keys) and InstanceTypeIndex.incompatible_with. Upstream:
pkg/controllers/provisioning/scheduling/{topology,topologygroup,nodeclaim}.go."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

from karpy.api.builders import make_nodepool, make_pod, pod_affinity_term, topology_spread
from karpy.cloudprovider.fake import default_instance_types
from karpy.cloudprovider.types import Offering, OfferingCompatibility
from karpy.provisioning.nodeclaim import InstanceTypeIndex, topology_changes_error
from karpy.provisioning.topology import Topology
from karpy.provisioning.topologygroup import TopologyGroup, TopologyType
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS, LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_ZONE
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements, strict_pod_requirements
from karpy.state.cluster import ClusterState

sys.path.insert(0, str(Path(__file__).parent))
from test_speed_paths import _overridden_types  # noqa: E402

ZONES = ["test-zone-1", "test-zone-2", "test-zone-3", "test-zone-4"]
APP = {"app": "web"}
WELL_KNOWN = CORE_WELL_KNOWN_LABELS


def _random_requirement(r: random.Random, key: str, values: list[str]) -> Requirement:
    op = r.choice(["In", "In", "NotIn", "Exists", "DoesNotExist"])
    return Requirement(key, op, r.sample(values, r.randint(1, min(3, len(values)))))


# --- TopologyGroup.next_domain: the spread memo -------------------------------------------------
def _spread_group(pod: Any, max_skew: int, min_domains: int | None) -> TopologyGroup:
    selector = topology_spread(LABEL_ZONE, APP).label_selector
    return TopologyGroup(TopologyType.SPREAD, LABEL_ZONE, pod, ["default"], selector, max_skew, min_domains,
                         None, None, None)


def test_spread_memo_equals_the_plain_scan_through_records_registers_and_unregisters() -> None:
    """next_domain (memoised per group version) answers what nextDomainTopologySpread computes
    afresh, whatever happened to the counts in between; with shared Requirement objects reused
    across calls (the memo's hits) and fresh equal ones (its misses)."""
    r = random.Random(11)
    pod = make_pod("p", labels=APP)
    other = make_pod("q", labels={"app": "db"})
    asked = hits = 0
    for trial in range(40):
        min_domains = r.choice([None, None, 2, 5])
        tg = _spread_group(pod, r.randint(1, 3), min_domains)
        shared = [tg.exists, *(_random_requirement(r, LABEL_ZONE, ZONES) for _ in range(4))]
        for step in range(120):
            roll = r.random()
            if roll < 0.15:
                tg.record(r.choice(ZONES))
            elif roll < 0.2:
                tg.register(r.choice(ZONES))
            elif roll < 0.22:
                tg.unregister(r.choice(ZONES))
            for _ in range(6):
                pd = r.choice(shared) if r.random() < 0.8 else _random_requirement(r, LABEL_ZONE, ZONES)
                nd = r.choice(shared) if r.random() < 0.8 else _random_requirement(r, LABEL_ZONE, ZONES)
                p = pod if r.random() < 0.7 else other
                version = tg._spread_memo_version
                size = len(tg._spread_memo)
                got = tg.next_domain(p, pd, nd)
                want = tg.next_domain_topology_spread(p, pd, nd)[0]
                assert got == want, (trial, step)
                asked += 1
                hits += version == tg._spread_memo_version and size == len(tg._spread_memo)
    assert hits > asked // 10  # the memo was exercised, and so were its misses
    assert hits < asked


def test_spread_domain_requirements_are_shared_objects() -> None:
    pod = make_pod("p", labels=APP)
    tg = _spread_group(pod, 1, None)
    tg.register(*ZONES)
    first = tg.next_domain(pod, tg.exists, tg.exists)
    assert first == Requirement(LABEL_ZONE, "In", ["test-zone-1"])
    tg.record("test-zone-2")  # a new version: recomputed, the same object for the same domain
    assert tg.next_domain(pod, tg.exists, tg.exists) is first
    tg.record("test-zone-1")
    assert tg.next_domain(pod, tg.exists, tg.exists) == Requirement(LABEL_ZONE, "In", ["test-zone-3"])


# --- Topology.narrow / add_requirements -----------------------------------------------------
def _plain_add_requirements(topo: Topology, pod: Any, pod_reqs: Requirements,
                            node_reqs: Requirements) -> tuple[Requirements | None, str | None]:
    """topology.go AddRequirements as written: copy, then Add every group's next domain."""
    out = node_reqs.copy()
    for tg in topo._matching_topologies(pod, (), node_reqs, WELL_KNOWN):
        pd = pod_reqs.get(tg.key)
        nd = node_reqs.get(tg.key)
        # the plain computations of topologygroup.go Get
        if tg.type == TopologyType.SPREAD:
            domains = tg.next_domain_topology_spread(pod, pd, nd)[0]
        elif tg.type == TopologyType.POD_AFFINITY:
            domains = tg.next_domain_affinity(pod, pd, nd)
        else:
            domains = tg.next_domain_anti_affinity(pd, nd)
        if not domains.complement and not domains.values:
            return None, "error"
        out.add(domains)
    return out, None


def test_narrow_and_add_requirements_equal_the_plain_add_in_value_and_key_order() -> None:
    r = random.Random(7)
    spread = [topology_spread(LABEL_ZONE, APP), topology_spread(LABEL_HOSTNAME, APP, max_skew=2)]
    pods = [make_pod(f"p{i}", labels=APP, topology_spread_constraints=spread,
                     pod_affinity=[pod_affinity_term(APP, LABEL_CAPACITY_TYPE)] if i % 3 == 0 else None)
            for i in range(30)]
    topo = Topology(ClusterState(), [], [make_nodepool("default")], {"default": default_instance_types()}, pods)
    outcomes = set()
    for i, pod in enumerate(pods):
        strict = strict_pod_requirements(pod)
        for c in range(12):
            node = Requirements(Requirement(LABEL_HOSTNAME, "In", [f"host-{c}"]))
            if r.random() < 0.5:
                node.add(_random_requirement(r, LABEL_ZONE, ZONES[:3]))
            if r.random() < 0.4:
                node.add(_random_requirement(r, LABEL_CAPACITY_TYPE, ["spot", "on-demand"]))
            want, werr = _plain_add_requirements(topo, pod, strict, node)
            got, err = topo.add_requirements(pod, (), strict, node, WELL_KNOWN)
            changes, nerr = topo.narrow(pod, (), strict, node, WELL_KNOWN)
            assert (err is None) == (werr is None) == (nerr is None)
            if want is None:
                outcomes.add("error")
                continue
            assert got is not None and got is not node
            assert list(got.items()) == list(want.items())  # values and key order
            assert changes is not None or dict(want) == dict(node)
            for k, v in (changes or {}).items():
                assert dict.get(node, k) != v  # only real changes
            for k, v in node.items():
                if k not in (changes or {}):
                    assert got[k] is v  # an unchanged key keeps the node's object
            outcomes.add("changed" if changes else "same")
        if i % 2 == 0:  # schedule the pod somewhere so the counts move
            node = Requirements(Requirement(LABEL_HOSTNAME, "In", [f"host-{i % 5}"]))
            placed, err = topo.add_requirements(pod, (), strict, node, WELL_KNOWN)
            if placed is not None:
                topo.register(LABEL_HOSTNAME, f"host-{i % 5}")
                topo.record(pod, (), placed, WELL_KNOWN)
    assert outcomes == {"error", "changed", "same"}


# --- topology_changes_error -------------------------------------------------------------------
def test_topology_changes_error_equals_compatible_of_the_topology_requirements() -> None:
    """nodeclaim.go:199-202 ``nodeClaimRequirements.Compatible(topologyRequirements)``."""
    r = random.Random(5)
    values = ["a", "b", "c"]
    outcomes = set()
    for _ in range(800):
        reqs = Requirements()
        for key in ("k1", "k2", LABEL_ZONE):
            if r.random() < 0.6:
                dict.__setitem__(reqs, key, _random_requirement(r, key, values))
        changes: dict[str, Requirement] = {}
        for key in r.sample(["k1", "k2", "k3", LABEL_ZONE], r.randint(1, 3)):
            changes[key] = _random_requirement(r, key, values)
        topo = reqs.copy()
        dict.update(topo, changes)
        want = reqs.compatible(topo, WELL_KNOWN)
        assert topology_changes_error(reqs, changes, WELL_KNOWN) == want
        outcomes.add(want is None)
    assert outcomes == {True, False}


# --- InstanceTypeIndex.incompatible_with ------------------------------------------------------
def test_incompatible_with_equals_compatible_per_type_of_the_built_requirements() -> None:
    """nodeclaim.go compatible on ``reqs`` with the topology's changes applied, asked with shared
    and with fresh objects (memo hits and misses), never confusing two different change sets."""
    r = random.Random(9)
    its = _overridden_types(r, 40)
    index = InstanceTypeIndex(WELL_KNOWN)
    index.register(its)
    zone_reqs = [Requirement(LABEL_ZONE, "In", [z]) for z in ZONES[:3]]
    bases = []
    for _ in range(6):
        base = Requirements(Requirement(LABEL_HOSTNAME, "In", ["h"]))
        if r.random() < 0.6:
            base.add(_random_requirement(r, LABEL_CAPACITY_TYPE, ["spot", "on-demand", "reserved"]))
        if r.random() < 0.5:
            base.add(_random_requirement(r, LABEL_ZONE, ZONES[:3]))
        bases.append(base)
    for _ in range(400):
        base = r.choice(bases)
        changes: dict[str, Requirement] | None = None
        if r.random() < 0.7:
            z = r.choice(zone_reqs) if r.random() < 0.8 else Requirement(LABEL_ZONE, "In", [r.choice(ZONES)])
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
        offerings.append(Offering(Requirements(_random_requirement(r, LABEL_ZONE, ZONES),
                                               _random_requirement(r, LABEL_CAPACITY_TYPE, ["spot", "on-demand"])),
                                  price=1.0, available=True))
    seen = set()
    for _ in range(60):
        reqs = Requirements()
        for key, values in ((LABEL_ZONE, ZONES), (LABEL_CAPACITY_TYPE, ["spot", "on-demand", "reserved"]),
                            ("example.com/team", ["a", "b"])):
            if r.random() < 0.6:
                reqs.add(_random_requirement(r, key, values))
        for wk in (WELL_KNOWN, frozenset()):
            memo = OfferingCompatibility(reqs)
            for o in r.sample(offerings, len(offerings)) * 2:  # every form asked twice: memo hits
                want = o.is_compatible(reqs, wk)
                assert memo(o, wk) == want
                seen.add(want)
            for it in its:
                assert it.min_compatible_price(reqs, wk, memo) == it.min_compatible_price(reqs, wk)
    assert seen == {True, False}
