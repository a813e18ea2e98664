"""karpy/kubescheduler/framework.py's shortcuts against the plain computations they replace: the
shared Success status, the PreFilter/PreScore request vectors and the fit filter and scores, the
node-local Filter and Score memos, NormalizeScore and the score totals."""

from __future__ import annotations

import random

import pytest

from karpy.api.builders import make_node, make_pod, pod_affinity_term
from karpy.kubescheduler import KubeScheduler
from karpy.kubescheduler.framework import CycleState
from karpy.kubescheduler.nodeinfo import NodeInfo
from karpy.kubescheduler.plugins import BalancedAllocation, NodeResourcesFit, ScoringStrategy
from karpy.kubescheduler.plugins.noderesources import balanced_score, fits_request, score_resources
from karpy.kubescheduler.podinfo import new_pod_info
from karpy.kubescheduler.types import SUCCESS_STATUS, Code, Status

from ._helpers import node, pod
from .conftest import FakeClock


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


def _unmemoized(ks: KubeScheduler) -> KubeScheduler:
    """``ks`` with every plugin's filter/score signature withdrawn: each Filter and Score runs."""
    from karpy.kubescheduler.framework import NOT_NODE_LOCAL
    for p in ks.framework.plugins:
        p.filter_signature = lambda state, pod: NOT_NODE_LOCAL  # type: ignore[method-assign]
        p.score_signature = lambda state, pod: NOT_NODE_LOCAL  # type: ignore[method-assign]
    return ks


def _memo_cluster_ops(seed: int) -> list[tuple]:
    """A random sequence of node adds/updates/deletes and pod adds/deletes: pods with requests,
    tolerations, a nodeSelector, required and preferred node affinity, zonal topology spread,
    hostname anti-affinity, host ports; nodes with
    taints (NoSchedule / PreferNoSchedule), spec.unschedulable, zones, different sizes."""
    rng = random.Random(seed)
    ops: list[tuple] = []
    nodes: list[str] = []
    pods = 0
    for step in range(70):
        r = rng.random()
        if r < 0.25 or not nodes:
            name = f"n{step}"
            nodes.append(name)
            ops.append(("node", name, rng.randrange(3), rng.randrange(4), rng.random() < 0.1, rng.choice(["2", "4"])))
        elif r < 0.32:
            ops.append(("node", rng.choice(nodes), rng.randrange(3), rng.randrange(4), rng.random() < 0.1, "4"))
        elif r < 0.35:
            ops.append(("delnode", nodes.pop(rng.randrange(len(nodes)))))
        elif r < 0.42 and pods:
            ops.append(("delpod", f"p{rng.randrange(pods)}"))
        else:
            ops.append(("pod", f"p{pods}", rng.choice(["100m", "500m", "1", "1500m"]), rng.randrange(3),
                        rng.randrange(6), rng.random() < 0.15))
            pods += 1
        ops.append(("cycle",))
    return ops


_TAINTS = [[], [("dedicated", "a", "NoSchedule")], [("soft", "x", "PreferNoSchedule")],
           [("dedicated", "a", "NoSchedule"), ("soft", "x", "PreferNoSchedule")]]


def _play(ks: KubeScheduler, ops: list[tuple]) -> list[tuple]:
    out = []
    for op in ops:
        if op[0] == "node":
            _, name, zone, taints, unsched, cpu = op
            n = make_node(name, labels={"topology.kubernetes.io/zone": f"z{zone}", "tier": "a" if zone else "b"},
                          taints=_TAINTS[taints], unschedulable=unsched,
                          capacity={"cpu": cpu, "memory": "8Gi", "pods": "5"})
            (ks.update_node if name in ks.nodes else ks.add_node)(n)
        elif op[0] == "delnode":
            ks.delete_node(op[1])
        elif op[0] == "delpod":
            ks.delete_pod(f"default/{op[1]}")
        elif op[0] == "pod":
            _, name, cpu, tol, aff, port = op
            kw: dict = {}
            if tol == 1:
                kw["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "a", "effect": "NoSchedule"}]
            elif tol == 2:
                kw["tolerations"] = [{"operator": "Exists"}]
            if aff == 1:
                kw["node_selector"] = {"tier": "a"}
            elif aff == 2:
                kw["node_requirements"] = [("topology.kubernetes.io/zone", "In", ["z1", "z2"])]
            elif aff == 3:
                kw["node_preferences"] = [("topology.kubernetes.io/zone", "In", ["z0"])]
            elif aff == 4:
                kw["labels"] = {"app": "spread"}
                kw["topology_spread_constraints"] = [{
                    "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "spread"}}}]
            elif aff == 5:
                kw["labels"] = {"app": "anti"}
                kw["pod_anti_affinity"] = [pod_affinity_term({"app": "anti"}, "kubernetes.io/hostname")]
            if port:
                kw["host_ports"] = [8080]
            ks.add_pod(make_pod(name, uid=name, requests={"cpu": cpu, "memory": "1Gi"}, **kw))
        else:
            ks.clock.t += 11
            while (r := ks.schedule_one()) is not None:
                out.append((r.pod_key, r.outcome, r.node_name, r.condition and r.condition["message"]))
    return out


def test_node_local_filter_and_score_memos_match_plain_runs():
    """FilterPlan's node-local prefix memo and the raw-score memo (NodeInfo.memo, keyed by the
    plugins' signatures and the node's generation) give the placements and FitError messages of
    running every Filter and Score plugin on every node."""
    outcomes: set[str] = set()
    for seed in range(12):
        ops = _memo_cluster_ops(seed)
        fast = _play(KubeScheduler(FakeClock(), random.Random(seed)), ops)
        plain = _play(_unmemoized(KubeScheduler(FakeClock(), random.Random(seed))), ops)
        assert fast == plain, seed
        outcomes |= {o for _, o, _, _ in fast}
    assert {"Bound", "Unschedulable"} <= outcomes


def _plain_default_normalize(max_priority: int, reverse: bool, scores: list[int]) -> None:
    """helper.DefaultNormalizeScore as upstream writes it (index by index)."""
    m = max(scores) if scores else 0
    if m == 0:
        if reverse:
            for i in range(len(scores)):
                scores[i] = max_priority
        return
    for i, s in enumerate(scores):
        s = max_priority * s // m
        scores[i] = max_priority - s if reverse else s


def _plain_ipa_normalize(scores: list[int]) -> None:
    if not scores:
        return
    mn, mx = min(scores), max(scores)
    diff = mx - mn
    for i, s in enumerate(scores):
        scores[i] = int(100 * ((s - mn) / diff)) if diff > 0 else 0


def test_normalize_scores_match_the_index_loops():
    """DefaultNormalizeScore and InterPodAffinity's NormalizeScore, rewritten as one list
    comprehension each, give the index loops' ints, in place (the same list object)."""
    from karpy.kubescheduler.framework import CycleState, default_normalize_score
    from karpy.kubescheduler.plugins import InterPodAffinity
    rng = random.Random(3)
    ipa = InterPodAffinity()
    for _ in range(400):
        n = rng.randrange(0, 9)
        raw = [rng.choice([0, 0, 1, 7, 50, 100, 313, -40]) for _ in range(n)]
        for reverse in (False, True):
            got, want = list(raw), list(raw)
            same = got
            default_normalize_score(100, reverse, got)
            _plain_default_normalize(100, reverse, want)
            assert got == want and got is same, (raw, reverse)
        got, want = list(raw), list(raw)
        ipa.normalize_score(CycleState(), None, got)  # type: ignore[arg-type]
        _plain_ipa_normalize(want)
        assert got == want, raw


def test_score_totals_match_adding_plugin_by_plugin():
    """RunScorePlugins' totals (weighted columns summed at the end) and per-plugin scores equal
    adding each plugin's weighted scores in turn, on clusters with taints, preferred node
    affinity, spread and (anti-)affinity preferences."""
    from karpy.api.builders import pod_affinity_term
    from karpy.kubescheduler.framework import CycleState
    rng = random.Random(5)
    checked = 0
    for seed in range(6):
        ks = KubeScheduler(FakeClock(), random.Random(seed))
        for i in range(12):
            ks.add_node(make_node(f"n{i}", labels={"topology.kubernetes.io/zone": f"z{i % 3}"},
                                  taints=[("soft", "x", "PreferNoSchedule")] if rng.random() < 0.4 else [],
                                  capacity={"cpu": rng.choice(["2", "4", "8"]), "memory": "16Gi", "pods": "20"}))
        for j in range(20):
            ks.add_pod(make_pod(f"e{j}", uid=f"e{j}", labels={"app": rng.choice("ab")}, node_name=f"n{rng.randrange(12)}",
                                requests={"cpu": rng.choice(["100m", "500m", "1"]), "memory": "1Gi"}))
        fwk = ks.framework
        for k in range(8):
            p = ks._pod_info(make_pod(
                f"q{k}", uid=f"q{k}", labels={"app": "a"}, requests={"cpu": "250m", "memory": "512Mi"},
                node_preferences=[("topology.kubernetes.io/zone", "In", ["z1"])] if k % 2 else None,
                pod_affinity_preferences=[(5, pod_affinity_term({"app": "b"}, "topology.kubernetes.io/zone"))] if k % 3 else None,
                pod_anti_affinity_preferences=[(3, pod_affinity_term({"app": "a"}, "kubernetes.io/hostname"))] if k % 4 else None))
            nodes = ks._snapshot()
            state = CycleState()
            fwk.run_pre_filter(state, p, nodes)
            assert fwk.run_pre_score(state, p, nodes, nodes).is_success()
            totals, per_plugin = fwk.run_score(state, p, nodes)
            want = [0] * len(nodes)
            for name, scores in per_plugin.items():
                w = fwk.weights.get(name, 1)
                want = [t + s * w for t, s in zip(want, scores)]
            assert totals == want
            active = [pl for pl in fwk.score_plugins if pl.name not in state.skip_score]
            assert list(per_plugin) == [pl.name for pl in active]
            for pl in active:
                raw = pl.score_nodes(state, p, nodes)
                if pl.has_normalize:
                    pl.normalize_score(state, p, raw)
                assert per_plugin[pl.name] == raw, pl.name
            checked += len(per_plugin) > 4 and max(totals) != min(totals)
    assert checked > 10, checked
