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
    assert list(ks._nominator()("n0")) == [] == ks._nominated_on("n0")
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

def _without_hint_signatures(ks: KubeScheduler) -> KubeScheduler:
    for _plugin, _event, fn in ks.queue._events:
        fn.__dict__.pop("pod_signature", None)
    return ks


def test_queueing_hint_memo_matches_calling_every_hint():
    """One QueueingHint call per event and pod signature (framework.hint_signature) moves the same
    pods as calling every hint for every unschedulable pod: same cycles, same outcomes."""
    retried = 0
    for seed in range(12):
        ops = _memo_cluster_ops(seed)
        fast_ks = KubeScheduler(FakeClock(), random.Random(seed))
        assert sum(1 for *_, fn in fast_ks.queue._events if hasattr(fn, "pod_signature")) >= 10
        fast = _play(fast_ks, ops)
        plain = _play(_without_hint_signatures(KubeScheduler(FakeClock(), random.Random(seed))), ops)
        assert fast == plain, seed
        retried += len(fast) - len({k for k, *_ in fast})  # cycles of pods retried after an event
    assert retried > 0


def _hint_pods() -> list:
    """Pending pods that differ in everything some QueueingHint reads."""
    pods = []
    i = 0
    for ns in ("default", "other"):
        for tol in (None, "dedicated", "exists"):
            for req in ({"cpu": "1"}, {"cpu": "3", "memory": "1Gi"}):
                for aff in range(7):
                    kw: dict = {}
                    if tol == "dedicated":
                        kw["tolerations"] = [{"key": "dedicated", "value": "a", "effect": "NoSchedule"}]
                    elif tol == "exists":
                        kw["tolerations"] = [{"operator": "Exists"}]
                    app = ("web", "db")[i % 2]
                    if aff == 1:
                        kw["node_selector"] = {"tier": "a"}
                    elif aff == 2:
                        kw["node_requirements"] = [("topology.kubernetes.io/zone", "In", ["z1"])]
                    elif aff == 3:
                        kw["topology_spread_constraints"] = [{
                            "maxSkew": 1, "topologyKey": ("topology.kubernetes.io/zone", "kubernetes.io/hostname")[i % 2],
                            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": app}}}]
                    elif aff == 4:
                        kw["pod_anti_affinity"] = [pod_affinity_term({"app": app}, "kubernetes.io/hostname")]
                    elif aff == 5:
                        kw["pod_affinity"] = [pod_affinity_term({"app": app}, "topology.kubernetes.io/zone")]
                    elif aff == 6:
                        kw["host_ports"] = [80 + i % 2]
                    pods.append(new_pod_info(make_pod(f"h{i}", ns, uid=f"h{i}", labels={"app": app}, requests=req, **kw)))
                    i += 1
    return pods


def _hint_objects() -> list[tuple]:
    """(old, new) pairs of Nodes and assigned Pods as events carry them (adds, updates, deletes)."""
    def n(name, zone="z1", tier="a", taints=(), cpu="4", unsched=False):
        return make_node(name, labels={"topology.kubernetes.io/zone": zone, "tier": tier}, taints=list(taints),
                         unschedulable=unsched, capacity={"cpu": cpu, "memory": "8Gi", "pods": "10"})

    ded = [("dedicated", "a", "NoSchedule")]
    nodes = [(None, n("a")), (None, n("b", "z2", "b")), (None, n("c", taints=ded)), (None, n("d", cpu="2")),
             (n("e", taints=ded), n("e")), (n("f"), n("f", taints=ded)), (n("g", "z2", "b"), n("g")),
             (n("h", unsched=True), n("h")), (n("i", cpu="2"), n("i", cpu="8")), (n("j"), None)]

    def p(name, ns, app, node="a", anti=False, port=None):
        return make_pod(name, ns, uid=name, labels={"app": app}, node_name=node, unschedulable=False,
                        host_ports=[port] if port else (),
                        pod_anti_affinity=[pod_affinity_term({"app": "web"}, "kubernetes.io/hostname")] if anti else None)

    pods = [(None, p("x", "default", "web")), (None, p("y", "other", "db")), (p("z", "default", "web"), None),
            (p("w", "default", "db", anti=True), None), (p("v", "default", "web"), p("v", "default", "db")),
            (p("u", "other", "web", port=80), None), (None, p("t", "default", "web", anti=True))]
    return nodes + pods


def test_hint_signatures_capture_what_each_hint_reads():
    """For every hint that declares a pod signature: pods with equal signatures get equal hints for
    every event object, so the per-event memo answers exactly what calling the hint would."""
    from karpy.kubescheduler.framework import NODE
    ks = KubeScheduler(FakeClock(), random.Random(0))
    pods = _hint_pods()
    objects = _hint_objects()
    marked = [(plugin, ev, fn) for plugin, ev, fn in ks.queue._events if hasattr(fn, "pod_signature")]
    assert {plugin for plugin, _, _ in marked} >= {"NodeUnschedulable", "NodeName", "TaintToleration",
                                                    "NodeAffinity", "NodePorts", "NodeResourcesFit",
                                                    "PodTopologySpread", "InterPodAffinity"}
    compared = differing = 0
    for plugin, ev, fn in marked:
        for old, new in objects:
            if ((old or new).KIND == "Node") != (ev.resource == NODE):
                continue
            seen: dict = {}
            answers = set()
            for pi in pods:
                direct = fn(pi, old, new)
                answers.add(direct)
                sig = fn.pod_signature(pi)
                assert seen.setdefault(sig, direct) == direct, (plugin, ev, pi.name, old, new)
                compared += 1
            differing += len(answers) > 1
    assert compared > 1000 and differing > 10  # the pods and events do tell the hints apart


def _big_zonal_infos(n: int) -> list[NodeInfo]:
    return [NodeInfo.from_node(make_node(f"n{i}", labels={"zone": f"z{i % 3}"},
                                         capacity={"cpu": "64", "memory": "64Gi", "pods": "110"}))
            for i in range(n)]


def _churn(rng: random.Random, nodes: list, make, steps: int = 300):
    """Per step: add a pod to (or remove one from) a random node, then yield a new incoming pod
    and fresh copies of the nodes (empty memos) to compute the reference from."""
    for step in range(steps):
        ni = rng.choice(nodes)
        if ni.pods and rng.random() < 0.3:
            ni.remove_pod(rng.choice(ni.pods))
        else:
            ni.add_pod(make(step))
        yield make(1000 + step), [NodeInfo.from_node(n.node, list(n.pods)) for n in nodes]


def test_interpodaffinity_prefilter_node_shares_match_the_walk():
    """InterPodAffinity's PreFilter counts, built from per-node shares kept in the node's memo
    across cycles, equal a fresh walk over every node's pods (fresh NodeInfos, empty memos)."""
    from karpy.kubescheduler.plugins import InterPodAffinity
    rng = random.Random(7)
    plugin = InterPodAffinity()
    nodes = _big_zonal_infos(9)

    def random_pod(i: int):
        app = rng.choice(["a", "b", "c"])
        kind = rng.randrange(6)
        kw: dict = {}
        if kind == 4:
            kw["pod_affinity_preferences"] = [(rng.choice([1, 5]), pod_affinity_term({"app": rng.choice("abc")}, "zone"))]
        elif kind == 5:
            kw["pod_anti_affinity_preferences"] = [(3, pod_affinity_term({"app": app}, "kubernetes.io/hostname"))]
        if kind == 1:
            kw["pod_affinity"] = [pod_affinity_term({"app": rng.choice("abc")}, rng.choice(["zone", "kubernetes.io/hostname"]))]
        elif kind == 2:
            kw["pod_anti_affinity"] = [pod_affinity_term({"app": rng.choice("abc")}, rng.choice(["zone", "kubernetes.io/hostname"]))]
        elif kind == 3:
            kw["pod_affinity"] = [pod_affinity_term({"app": app}, "zone")]
            kw["pod_anti_affinity"] = [pod_affinity_term({"app": app}, "kubernetes.io/hostname"),
                                       pod_affinity_term({"app": rng.choice("abc")}, "zone")]
        return new_pod_info(make_pod(f"p{i}", rng.choice(["default", "ns2"]), uid=f"p{i}", labels={"app": app}, **kw))

    checked = 0
    for incoming, fresh in _churn(rng, nodes, random_pod):
        state = CycleState()
        st, _ = plugin.pre_filter(state, incoming, Snapshot(nodes))
        fresh_state = CycleState()
        st2, _ = InterPodAffinity().pre_filter(fresh_state, incoming, Snapshot(fresh))
        assert st.code == st2.code
        if st.code == Code.SKIP:
            continue
        a, b = state.data[plugin.name], fresh_state.data[plugin.name]
        assert (a.existing_anti, a.affinity, a.anti) == (b.existing_anti, b.affinity, b.anti)
        checked += bool(a.existing_anti or a.affinity or a.anti)
    assert checked > 100


@pytest.mark.parametrize("tree", [False, True])
def test_interpodaffinity_prescore_node_shares_match_the_walk(tree: bool):
    """InterPodAffinity's PreScore topology scores from per-node shares kept across cycles (with
    a scheduler snapshot's tree: only the changed nodes' shares recomputed, their difference
    applied) equal the walk over fresh NodeInfos (same keys and values; Skip alike)."""
    from karpy.kubescheduler.plugins import InterPodAffinity
    rng = random.Random(5)
    plugin = InterPodAffinity()
    nodes = _big_zonal_infos(9)

    def random_pod(i: int):
        app = rng.choice("abc")
        kw: dict = {}
        for _ in range(rng.randrange(3)):
            term = pod_affinity_term({"app": rng.choice("abc")}, rng.choice(["zone", "kubernetes.io/hostname"]))
            kind = rng.randrange(4)
            if kind == 0:
                kw.setdefault("pod_affinity", []).append(term)
            elif kind == 1:
                kw.setdefault("pod_anti_affinity", []).append(term)
            elif kind == 2:
                kw.setdefault("pod_affinity_preferences", []).append((rng.choice([1, 4]), term))
            else:
                kw.setdefault("pod_anti_affinity_preferences", []).append((rng.choice([2, 4]), term))
        return new_pod_info(make_pod(f"p{i}", rng.choice(["default", "ns2"]), uid=f"p{i}", labels={"app": app}, **kw))

    scored = 0
    for incoming, fresh in _churn(rng, nodes, random_pod):
        state, fresh_state = CycleState(), CycleState()
        snap = Snapshot(nodes)
        if tree:
            snap.tree = nodes
        st = plugin.pre_score(state, incoming, nodes[:4], snap)
        st2 = InterPodAffinity().pre_score(fresh_state, incoming, fresh[:4], Snapshot(fresh))
        assert st.code == st2.code
        a = state.data.get(plugin.name + "/score")
        b = fresh_state.data.get(plugin.name + "/score")
        assert a == b
        if not tree:  # every share summed in node order: the walk's order too
            assert [(k, list(m)) for k, m in (a or {}).items()] == [(k, list(m)) for k, m in (b or {}).items()]
        scored += a is not None
    assert scored > 100


def test_podtopologyspread_prefilter_node_shares_match_the_walk():
    """PodTopologySpread's PreFilter domain counts from per-node shares kept in the node's memo
    equal the counting loop over fresh NodeInfos (and keep its zero-count domains)."""
    from karpy.kubescheduler.plugins import PodTopologySpread
    rng = random.Random(11)
    plugin = PodTopologySpread()
    nodes = [NodeInfo.from_node(make_node(f"n{i}", labels={"zone": f"z{i % 4}"} if i % 5 else {},
                                          capacity={"cpu": "64", "memory": "64Gi", "pods": "110"}))
             for i in range(10)]

    def spread_pod(i: int, keys: list[str]):
        app = rng.choice("abc")
        tsc = [{"maxSkew": 1, "topologyKey": k, "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": rng.choice("abc")}}} for k in keys]
        return new_pod_info(make_pod(f"p{i}", rng.choice(["default", "ns2"]), uid=f"p{i}", labels={"app": app},
                                     topology_spread_constraints=tsc))

    checked = 0
    key_sets = [[], ["zone"], ["kubernetes.io/hostname"], ["zone", "kubernetes.io/hostname"]]
    for incoming, fresh in _churn(rng, nodes, lambda i: spread_pod(i, rng.choice(key_sets[1:]) if i >= 1000 else [])):
        state, fresh_state = CycleState(), CycleState()
        plugin.pre_filter(state, incoming, nodes)
        PodTopologySpread().pre_filter(fresh_state, incoming, fresh)
        a, b = state.data[plugin.name].counts, fresh_state.data[plugin.name].counts
        assert a == b and [list(d) for d in a] == [list(d) for d in b]
        checked += any(v for d in a for v in d.values())
    assert checked > 100
