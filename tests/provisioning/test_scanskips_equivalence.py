"""karpy/provisioning/scanskips.py's walk over the scan targets against the per-target tests.

``_next_open`` finds the first target that no skip stream skips; the streams of
``_TopologyMisses.skips`` and ``_OptionMisses.skips`` must say, per target, exactly what
``_TopologyMisses.missed`` / ``_OptionMisses.missed`` (the per-target form) say; the per-Solve
memos they read (target -> requirement by value, claim -> option ids, with-room lists) must hold
the targets' current values whenever a scan reads them; and a Solve places every pod where the
plain first-fit scan does. The skips themselves: test_scanskips_topology_misses.py and
test_scanskips_option_misses.py."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings, strategies as st
import pytest

from karpy.api.builders import make_nodepool
from karpy.cloudprovider import fake
from karpy.provisioning import scanskips
from karpy.provisioning.scanskips import (
    _KeyValuesByKey,
    _miss_key,
    _CoversByBad,
    _next_open,
    _OptionIds,
    _OptionMisses,
    _TopologyMisses,
)
from karpy.provisioning.scheduler import Scheduler
from karpy.scheduling.labels import LABEL_ZONE, CORE_WELL_KNOWN_LABELS
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

from tests.provisioning.test_scanskips_option_misses import _solve as _solve_options
from tests.provisioning.test_scanskips_topology_misses import _solve

KEYS = (LABEL_ZONE, "karpenter.sh/capacity-type")
VALUES = ("a", "b", "c")


def _plain_next_open(flags: list[list[bool]], start: int, end: int) -> int:
    for i in range(start, end):
        if not any(f[i - start] for f in flags):
            return i
    return end


@given(st.integers(0, 3).flatmap(lambda k: st.integers(0, 12).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.lists(st.booleans(), min_size=n, max_size=n), min_size=k, max_size=k),
                        st.integers(0, 5)))))
def test_next_open_is_the_first_target_no_stream_skips(case: tuple[int, list[list[bool]], int]) -> None:
    n, flags, start = case
    end = start + n
    assert _next_open([iter(f) for f in flags], start, end) == _plain_next_open(flags, start, end)


_requirement = st.one_of(
    st.none(),
    st.builds(lambda k, vs: Requirement(k, "In", vs), st.sampled_from(KEYS), st.sets(st.sampled_from(VALUES))),
    st.builds(lambda k, vs: Requirement(k, "NotIn", vs), st.sampled_from(KEYS), st.sets(st.sampled_from(VALUES))),
    st.builds(lambda k, vs, m: Requirement(k, "In", vs, min_values=m), st.sampled_from(KEYS),
              st.sets(st.sampled_from(VALUES), min_size=1), st.integers(1, 2)),
    st.builds(lambda k: Requirement(k, "Gt", ("1",)), st.sampled_from(KEYS)),
    st.builds(lambda k: Requirement(k, "Exists"), st.sampled_from(KEYS)),
)


class _Target:
    """A scan target: requirements, a hostname, options (what the streams read)."""

    def __init__(self, reqs: dict[str, Requirement | None], options: list[Any]) -> None:
        self.requirements = Requirements()
        for key, r in reqs.items():
            if r is not None:
                dict.__setitem__(self.requirements, key, Requirement._make(key, r.complement, r.values, r.gte, r.lte,
                                                                            r.min_values))
        self.instance_type_options = options
        self.hostname = str(id(self))

    def options_within(self, ids: frozenset[int]) -> bool:
        return frozenset(map(id, self.instance_type_options)) <= ids


_TYPES = [object() for _ in range(4)]


@settings(max_examples=200)
@given(st.lists(st.tuples(st.fixed_dictionaries({k: _requirement for k in KEYS}),
                          st.lists(st.sampled_from(range(4)), min_size=1, max_size=4, unique=True)),
                min_size=1, max_size=10),
       st.lists(st.tuples(st.sampled_from(range(10)), st.sampled_from(KEYS), st.lists(st.sampled_from(range(4)),
                                                                                     max_size=4, unique=True))))
def test_skip_streams_say_what_the_per_target_tests_say(targets: list[tuple[dict[str, Any], list[int]]],
                                                         notes: list[tuple[int, str, list[int]]]) -> None:
    ts = [_Target(reqs, [_TYPES[i] for i in opts]) for reqs, opts in targets]
    misses = _TopologyMisses.__new__(_TopologyMisses)
    misses.keys = {}
    options = _OptionMisses.__new__(_OptionMisses)
    options.bad = {}
    for i, key, bad in notes:  # what note() writes: values of noted targets' requirements
        t = ts[i % len(ts)]
        mk = _miss_key(dict.get(t.requirements, key))
        misses.keys.setdefault(key, set()).add(mk)
        if bad:
            options.bad.setdefault(key, {})[mk] = frozenset(id(_TYPES[j]) for j in bad)
    values = _KeyValuesByKey()
    ids = _OptionIds()
    for start in range(len(ts)):
        u = ts[start:]
        assert [any(s) for s in zip(*misses.skips(values, u))] == (
            [misses.missed(t.requirements) for t in u] if misses.keys else [])
        assert [any(s) for s in zip(*options.skips(values, ids, u))] == (
            [options.missed(t) for t in u] if options.bad else [])


@settings(max_examples=100)
@given(st.lists(st.lists(st.sampled_from(range(4)), min_size=1, max_size=4, unique=True), min_size=1, max_size=8),
       st.lists(st.lists(st.tuples(st.sampled_from(range(8)), st.lists(st.sampled_from(range(4)), max_size=4,
                                                                       unique=True)), max_size=6), max_size=5))
def test_a_covers_memo_shared_by_scans_says_what_the_subset_test_says(
        options: list[list[int]], scans: list[list[tuple[int, list[int]]]]) -> None:
    """_OptionMisses.skips with one _CoversByBad memo shared by several scans (as in a Solve:
    other pods note other sets against the same claims, and claims' options change between
    scans) says what _OptionMisses.missed says in each scan."""
    ts = [_Target({LABEL_ZONE: Requirement(LABEL_ZONE, "In", (VALUES[i % 3],))}, [_TYPES[j] for j in opts])
          for i, opts in enumerate(options)]
    covers = _CoversByBad()
    for n, notes in enumerate(scans):
        if n % 2:  # an Add replaced some claims' options (fresh ids, as after Scans.forget)
            for t in ts[::2]:
                t.instance_type_options = t.instance_type_options[1:] or t.instance_type_options
        options_misses = _OptionMisses.__new__(_OptionMisses)
        options_misses.bad = {}
        for i, bad in notes:
            t = ts[i % len(ts)]
            options_misses.bad.setdefault(LABEL_ZONE, {})[_miss_key(dict.get(t.requirements, LABEL_ZONE))] = \
                frozenset(id(_TYPES[j]) for j in bad)
        values = _KeyValuesByKey()
        ids = _OptionIds()
        for start in range(len(ts)):
            u = ts[start:]
            assert [any(s) for s in zip(*options_misses.skips(values, ids, u, covers))] == (
                [options_misses.missed(t) for t in u] if options_misses.bad else [])


def test_option_ids_are_interned() -> None:
    """Equal option-id sets of different claims are one object (the covers memo then finds them
    by identity), and each still equals its claim's options."""
    a = _Target({}, [_TYPES[0], _TYPES[1]])
    b = _Target({}, [_TYPES[1], _TYPES[0]])
    c = _Target({}, [_TYPES[2]])
    ids = _OptionIds()
    assert ids[a] is ids[b] and ids[a] == frozenset(map(id, a.instance_type_options))
    assert ids[c] == frozenset([id(_TYPES[2])])


def test_scan_memos_hold_the_targets_current_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """After every Add of a Solve (where targets' requirements and options are replaced), what the
    memos hold equals a fresh computation from the targets."""
    orig_add = Scheduler._add
    checked = {"values": 0, "ids": 0, "domains": 0}

    def add(self: Scheduler, pod: Any, data: Any) -> Any:
        out = orig_add(self, pod, data)
        for key, by_target in self._scans.key_values.items():
            for target, v in by_target.items():
                assert v == _miss_key(dict.get(target.requirements, key))
                checked["values"] += 1
        for rk, doms in self._scans.domains.items():
            for key, d in doms.items():
                if d.nodes is not self._scans.with_room.get(rk):
                    continue  # (replaced: rebuilt before use)
                assert sorted(p for ps in d.by_value.values() for p in ps) == [self._scans.position[en] for en in d.nodes]
                for v, ps in d.by_value.items():
                    for p in ps:
                        assert _miss_key(dict.get(self.existing_nodes[p].requirements, key)) == v
                        checked["domains"] += 1
        for nc, ids in self._scans.option_ids.items():
            assert ids == frozenset(map(id, nc.instance_type_options))
            checked["ids"] += 1
        return out

    monkeypatch.setattr(Scheduler, "_add", add)
    for seed in range(3):
        _solve(seed)
        _solve_options(seed)
    assert checked["values"] > 0 and checked["ids"] > 0 and checked["domains"] > 0


def test_the_walk_matches_the_per_target_scan_end_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Solve with the streams replaced by the per-target tests (the scan before the walk)
    places every pod in the same place."""
    fast = [(_solve(seed), _solve_options(seed)) for seed in range(4)]

    def topo_skips(self: _TopologyMisses, values: Any, targets: list[Any]) -> list[Any]:
        return [iter([self.missed(t.requirements) for t in targets])] if self.keys else []

    def option_skips(self: _OptionMisses, values: Any, option_ids: Any, claims: list[Any],
                     covers: Any = None) -> list[Any]:
        return [iter([self.missed(nc) for nc in claims])] if self.bad else []

    monkeypatch.setattr(scanskips._TopologyMisses, "skips", topo_skips)
    monkeypatch.setattr(scanskips._OptionMisses, "skips", option_skips)
    assert [(_solve(seed), _solve_options(seed)) for seed in range(4)] == fast


def test_a_node_whose_value_changes_on_add_moves_to_its_new_domain() -> None:
    """Scans.forget keeps every _Domains equal to its list when an Add replaces a node's
    requirement for the key by one of another value (min_values here; real Adds only narrow)."""
    from karpy.api.builders import make_nodepool
    from karpy.cloudprovider import fake
    from karpy.state.cluster import ClusterState
    from karpy.provisioning.topology import Topology

    from tests.provisioning.test_scanskips_topology_misses import WELL_KNOWN, ZONES, _zone_nodes

    pool = make_nodepool("default")
    its = fake.instance_types(4)
    cluster = ClusterState.from_objects(nodes=[], pods=[])
    topology = Topology(cluster, [], [pool], {"default": its}, [], "Respect", WELL_KNOWN)
    s = Scheduler([pool], cluster, [], topology, {"default": its}, [], well_known=WELL_KNOWN)
    s.existing_nodes = _zone_nodes(topology, [("a", ZONES[0]), ("b", ZONES[1]), ("c", ZONES[0])])
    s._reset_scans()
    rk = (("cpu", 1),)
    nodes = s._scans.with_room[rk] = list(s.existing_nodes)
    d = s._scans.domains_of(rk, LABEL_ZONE, nodes)
    assert d.by_value == {frozenset({ZONES[0]}): [0, 2], frozenset({ZONES[1]}): [1]}
    c = s.existing_nodes[2]
    reqs = c.requirements.copy()
    dict.__setitem__(reqs, LABEL_ZONE, Requirement(LABEL_ZONE, "In", (ZONES[0],), min_values=1))
    c.requirements = reqs
    s._scans.forget(c)
    assert d.by_value == {frozenset({ZONES[0]}): [0], frozenset({ZONES[1]}): [1], reqs[LABEL_ZONE]: [2]}
    assert s._scans.key_values[LABEL_ZONE][c] == reqs[LABEL_ZONE]
    s._scans.drop(rk, nodes, 0)
    assert [en.name for en in nodes] == ["b", "c"] and d.by_value[frozenset({ZONES[0]})] == []


WELL_KNOWN = CORE_WELL_KNOWN_LABELS | fake.FakeCloudProvider().well_known_labels()


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
        def _reset_scans(self) -> None:
            super()._reset_scans()
            self._scans.with_room = _Forgetful()  # type: ignore[assignment]

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
