"""The performance caches and fast paths give the same answers as the plain computations they replace.

Each test pits a cached / precomputed path (snapshot node-tree cache, incremental
pods_with_affinity lists, shared Success status, PreFilter/PreScore request vectors, per-cycle
nominator index) against the straightforward reference computation."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from karpy.api.builders import make_node, make_pod, pod_affinity_term
from karpy.kubescheduler import KubeScheduler
from karpy.kubescheduler.framework import CycleState
from karpy.kubescheduler.nodeinfo import NodeInfo, Snapshot, have_pods_with_affinity, node_tree_order
from karpy.kubescheduler.plugins import BalancedAllocation, NodeResourcesFit, ScoringStrategy
from karpy.kubescheduler.plugins.noderesources import balanced_score, fits_request, score_resources
from karpy.kubescheduler.podinfo import new_pod_info
from karpy.kubescheduler.types import SUCCESS_STATUS, Code, Status

from .conftest import FakeClock
from ._helpers import node, pod


def test_shared_success_status_is_immutable_and_equal_to_status():
    assert SUCCESS_STATUS == Status() and Status() == SUCCESS_STATUS
    assert SUCCESS_STATUS.is_success() and SUCCESS_STATUS.reasons == [] and SUCCESS_STATUS.message() == ""
    with pytest.raises(AttributeError):
        SUCCESS_STATUS.plugin = "x"
    with pytest.raises(AttributeError):
        SUCCESS_STATUS.code = Code.ERROR
    with pytest.raises(TypeError):
        SUCCESS_STATUS.reasons.append("x")
    assert SUCCESS_STATUS.reasons == []
    assert SUCCESS_STATUS.with_plugin("P").plugin == "P" and SUCCESS_STATUS.plugin == ""


def _affinity_pod(i: int, kind: int):
    labels = {"app": f"a{i % 3}"}
    if kind == 0:
        return make_pod(f"p{i}", labels=labels, uid=f"p{i}")
    if kind == 1:
        return make_pod(f"p{i}", labels=labels, uid=f"p{i}", pod_affinity=[pod_affinity_term(labels, "zone")])
    return make_pod(f"p{i}", labels=labels, uid=f"p{i}", pod_anti_affinity=[pod_affinity_term(labels, "zone")])


@settings(max_examples=60, deadline=None)
@given(hst.lists(hst.tuples(hst.booleans(), hst.integers(0, 11), hst.integers(0, 2)), max_size=40))
def test_incremental_affinity_lists_match_filtering(ops):
    ni = NodeInfo.from_node(node("n", {"cpu": "4", "memory": "8Gi", "pods": "110"}))
    infos = {}
    for add, i, kind in ops:
        if add:
            infos[i] = pi = new_pod_info(_affinity_pod(i, kind))
            ni.add_pod(pi)
        elif i in infos:
            ni.remove_pod(infos[i])
        assert ni.pods_with_affinity == [p for p in ni.pods if p.has_affinity()]
        assert ni.pods_with_required_anti_affinity == [p for p in ni.pods if p.required_anti_affinity_terms]
        c = ni.clone()
        assert c.pods_with_affinity == ni.pods_with_affinity
        assert c.pods_with_required_anti_affinity == ni.pods_with_required_anti_affinity
    snap = Snapshot([ni])
    assert snap.have_pods_with_affinity == have_pods_with_affinity([ni]) == ([ni] if ni.pods_with_affinity else [])


def _zonal_node(name: str, zone: str):
    return make_node(name, labels={"topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": name},
                     capacity={"cpu": "4", "memory": "8Gi", "pods": "110"})


def test_cached_snapshot_follows_node_changes():
    ks = KubeScheduler(FakeClock(), random.Random(0))
    rng = random.Random(7)
    names: list[str] = []
    for step in range(80):
        op = rng.randrange(3)
        if op == 0 or not names:
            name = f"n{step}"
            names.append(name)
            ks.add_node(_zonal_node(name, f"z{rng.randrange(3)}"))
        elif op == 1:
            name = rng.choice(names)
            ks.update_node(_zonal_node(name, f"z{rng.randrange(3)}"))
        else:
            name = names.pop(rng.randrange(len(names)))
            ks.delete_node(name)
        want = [ks.node_infos[n.metadata.name] for n in node_tree_order(list(ks.nodes.values()))]
        got = ks._snapshot()
        assert isinstance(got, Snapshot) and all(a is b for a, b in zip(got, want)) and len(got) == len(want)


def test_nominator_index_matches_scan():
    ks = KubeScheduler(FakeClock(), random.Random(0))
    for i in range(4):
        ks.add_node(_zonal_node(f"n{i}", "z"))
    for i in range(6):
        ks.add_pod(make_pod(f"p{i}", uid=f"p{i}", requests={"cpu": "1"}))
    assert ks._nominator()("n0") == () == tuple(ks._nominated_on("n0"))
    for i, n in enumerate(["n1", "n2", "n1", "n3", "n1"]):
        ks.nominated[f"default/p{i}"] = n
    ks.nominated["default/gone"] = "n1"  # a nomination whose pod is unknown is dropped by both
    look = ks._nominator()
    for n in ["n0", "n1", "n2", "n3", "nx"]:
        assert list(look(n)) == ks._nominated_on(n)


RES = ["cpu", "memory", "ephemeral-storage", "example.com/foo", "example.com/bar", "other/x"]


def _rand_pod(r: random.Random, name: str, node_name: str | None = None):
    reqs = {k: str(r.choice([0, 1, 2, 3, 5, 8])) for k in RES if r.random() < 0.5}
    return pod(name, containers=[reqs] if reqs or r.random() < 0.5 else [], node_name=node_name)


@pytest.mark.parametrize("seed", range(40))
def test_fit_filter_and_scores_match_reference(seed):
    r = random.Random(seed)
    cap = {k: str(r.choice([0, 4, 6, 10])) for k in RES if r.random() < 0.7}
    cap["pods"] = str(r.choice([1, 2, 3, 110]))
    n = node("n", cap)
    existing = [new_pod_info(_rand_pod(r, f"e{i}", "n")) for i in range(r.randrange(3))]
    ni = NodeInfo.from_node(n, existing)
    incoming = new_pod_info(_rand_pod(r, "p"))
    ignored = frozenset({"example.com/bar"}) if r.random() < 0.5 else frozenset()
    groups = frozenset({"other"}) if r.random() < 0.5 else frozenset()
    for kind in ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"):
        resources = [("cpu", 1), ("memory", 2), ("example.com/foo", 3), ("ephemeral-storage", 1)]
        pl = NodeResourcesFit(ScoringStrategy(type=kind, resources=resources), ignored, groups)
        for with_state in (True, False):
            state = CycleState()
            if with_state:
                pl.pre_filter(state, incoming, [ni])
                pl.pre_score(state, incoming, [ni], [ni])
            st = pl.filter(state, incoming, ni)
            ins = fits_request(incoming.requests, ni, ignored, groups)
            want_code = Code.SUCCESS if not ins else (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE if any(i.unresolvable for i in ins) else Code.UNSCHEDULABLE)
            assert (st.code, st.reasons) == (want_code, [i.reason for i in ins])
            assert pl.score(state, incoming, ni) == score_resources(pl.strategy, ni, incoming, pl._alloc_req)
    ba = BalancedAllocation([("cpu", 1), ("memory", 1), ("example.com/foo", 1)])
    state = CycleState()
    if ba.pre_score(state, incoming, [ni], [ni]).code != Code.SKIP:
        fractions = []
        for res, _w in ba.resources:
            alloc = ni.allocatable.get(res, 0)
            req = ni.requested.get(res, 0) + incoming.requests.get(res, 0)
            if res not in ("cpu", "memory", "ephemeral-storage") and (alloc == 0 or incoming.requests.get(res, 0) == 0):
                continue
            if alloc == 0:
                continue
            fractions.append(min(req / alloc, 1.0))
        assert ba.score(state, incoming, ni) == balanced_score(fractions)
