"""The plugins' shortcuts (karpy/kubescheduler/plugins/) against the computation each replaces (kept
here as the reference), each with a change that must flip the answer, so a stale index or memo
cannot pass: PodTopologySpread's precomputed Filter test and PreFilter aggregates kept across
cycles, the spread constraints built once per PodInfo, InterPodAffinity's and PodTopologySpread's
per-node shares, the label-group counts and the term match memo."""

from __future__ import annotations

import random
from typing import Any, Optional

import pytest

from karpy.api.builders import make_node, make_pod, pod_affinity_term
from karpy.kubescheduler import KubeScheduler
from karpy.kubescheduler.framework import CycleState
from karpy.kubescheduler.nodeinfo import NodeInfo, Snapshot
from karpy.kubescheduler.plugins import PodTopologySpread
from karpy.kubescheduler.plugins.podtopologyspread import REASON, REASON_MISSING_LABEL
from karpy.kubescheduler.podinfo import new_pod_info
from karpy.kubescheduler.types import Code

from ._helpers import node, pod
from .conftest import FakeClock
from .test_nodeinfo_equivalence import _churned_groups

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


# ---- PodTopologySpread Filter --------------------------------------------------------------------------------------
def _reference_spread_filter(st: Any, pod: Any, ni: NodeInfo) -> tuple[Code, list[str]]:
    """filtering.go Filter as upstream writes it: skew = matchNum + selfMatchNum - minMatchNum."""
    for i, c in enumerate(st.constraints):
        v = ni.labels.get(c.topology_key)
        if v is None:
            return Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_MISSING_LABEL]
        counts = st.counts[i]
        min_match = 0 if len(counts) < c.min_domains else (min(counts.values()) if counts else 0)
        self_match = 1 if c.selector is not None and c.selector.matches(pod.labels) else 0
        if counts.get(v, 0) + self_match - min_match > c.max_skew:
            return Code.UNSCHEDULABLE, [REASON]
    return Code.SUCCESS, []


def _spread_nodes(rng: random.Random) -> list[NodeInfo]:
    out = []
    for i in range(9):
        labels = {HOST: f"n{i}"}
        if i % 4:
            labels[ZONE] = f"z{i % 3}"
        out.append(NodeInfo.from_node(make_node(f"n{i}", labels=labels, capacity={"cpu": "64", "pods": "110"})))
    return out


def _spread_pod(rng: random.Random, i: int, node: Optional[str] = None) -> Any:
    keys = rng.choice([[ZONE], [HOST], [ZONE, HOST]])
    tsc = [{"maxSkew": rng.choice([1, 2]), "topologyKey": k, "whenUnsatisfiable": "DoNotSchedule",
            "minDomains": rng.choice([None, None, 4]),
            "labelSelector": {"matchLabels": {"app": rng.choice("ab")}}} for k in keys]
    for t in tsc:
        if t["minDomains"] is None:
            del t["minDomains"]
    return new_pod_info(make_pod(f"p{i}", uid=f"p{i}", labels={"app": rng.choice("ab")}, node_name=node,
                                 topology_spread_constraints=tsc))


def test_spread_filter_checks_match_upstreams_skew_formula():
    """The per-constraint bound (maxSkew - selfMatch + minMatch) decides every node as the skew
    formula does, also after AddPod / RemovePod changed the counts (preemption's dry runs, nominated
    pods), which must drop the precomputed bounds."""
    rng = random.Random(3)
    nodes = _spread_nodes(rng)
    for i in range(40):
        ni = rng.choice(nodes)
        ni.add_pod(_spread_pod(rng, i, ni.name))
    plugin = PodTopologySpread()
    decided = {Code.SUCCESS: 0, Code.UNSCHEDULABLE: 0, Code.UNSCHEDULABLE_AND_UNRESOLVABLE: 0}
    flipped = 0
    for step in range(200):
        incoming = _spread_pod(rng, 1000 + step)
        state = CycleState()
        plugin.pre_filter(state, incoming, nodes)
        st = state.data[plugin.name]
        for _ in range(4):
            before = [plugin.filter(state, incoming, ni).code for ni in nodes]
            for ni, code in zip(nodes, before):
                assert code == _reference_spread_filter(st, incoming, ni)[0]
                got = plugin.filter(state, incoming, ni)
                assert (got.code, got.reasons) == _reference_spread_filter(st, incoming, ni)
                decided[got.code] += 1
            ni = rng.choice(nodes)
            other = _spread_pod(rng, 5000 + step, ni.name)
            if ni.pods and rng.random() < 0.4:
                plugin.remove_pod(state, incoming, rng.choice(ni.pods), ni)
            else:
                plugin.add_pod(state, incoming, other, ni)
            flipped += before != [plugin.filter(state, incoming, n).code for n in nodes]
    assert all(n > 50 for n in decided.values()), decided
    assert flipped > 20


def test_spread_filter_add_pod_flips_a_node_from_fit_to_reject():
    """After upstream podtopologyspread/filtering_test.go TestPreFilterStateAddPod (adapted: its
    cases check the state's counts and minimum after AddPod; here Filter's answer): a matching pod
    added to the emptiest zone raises the minimum; one more makes that zone reject. The
    precomputed bound must follow both, and a cloned state decides on its own counts."""
    nodes = [NodeInfo.from_node(make_node(n, labels={ZONE: z, HOST: n}, capacity={"pods": "110"}))
             for n, z in (("a", "z1"), ("b", "z2"))]
    tsc = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"foo": "x"}}}]
    incoming = new_pod_info(make_pod("p", labels={"foo": "x"}, topology_spread_constraints=tsc))
    nodes[0].add_pod(new_pod_info(make_pod("e1", uid="e1", labels={"foo": "x"}, node_name="a")))
    plugin = PodTopologySpread()
    state = CycleState()
    plugin.pre_filter(state, incoming, nodes)
    assert [plugin.filter(state, incoming, ni).code for ni in nodes] == [Code.UNSCHEDULABLE, Code.SUCCESS]
    plugin.add_pod(state, incoming, new_pod_info(make_pod("e2", uid="e2", labels={"foo": "x"}, node_name="b")),
                   nodes[1])
    assert [plugin.filter(state, incoming, ni).code for ni in nodes] == [Code.SUCCESS, Code.SUCCESS]
    e3 = new_pod_info(make_pod("e3", uid="e3", labels={"foo": "x"}, node_name="b"))
    plugin.add_pod(state, incoming, e3, nodes[1])
    assert [plugin.filter(state, incoming, ni).code for ni in nodes] == [Code.SUCCESS, Code.UNSCHEDULABLE]
    clone = state.clone()  # a dry run's copy decides on its own counts
    plugin.remove_pod(clone, incoming, e3, nodes[1])
    assert [plugin.filter(clone, incoming, ni).code for ni in nodes] == [Code.SUCCESS, Code.SUCCESS]
    assert [plugin.filter(state, incoming, ni).code for ni in nodes] == [Code.SUCCESS, Code.UNSCHEDULABLE]


def test_spread_filter_rejections_share_one_unchanged_status():
    nodes = [NodeInfo.from_node(make_node(n, labels={ZONE: n, HOST: n}, capacity={"pods": "110"})) for n in "abc"]
    for n in nodes[:2]:
        n.add_pod(new_pod_info(make_pod(f"e{n.name}", uid=f"e{n.name}", labels={"foo": "x"}, node_name=n.name)))
    tsc = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"foo": "x"}}}]
    incoming = new_pod_info(make_pod("p", labels={"foo": "x"}, topology_spread_constraints=tsc))
    plugin = PodTopologySpread()
    state = CycleState()
    plugin.pre_filter(state, incoming, nodes)
    a, b, c = (plugin.filter(state, incoming, ni) for ni in nodes)
    assert a is b and (a.code, a.reasons) == (Code.UNSCHEDULABLE, [REASON]) and c.code == Code.SUCCESS


def _churned_cluster(seed: int) -> tuple[KubeScheduler, random.Random]:
    rng = random.Random(seed)
    ks = KubeScheduler(FakeClock(), random.Random(seed))
    for i in range(8):
        labels = {HOST: f"n{i}"}
        if i % 5:
            labels[ZONE] = f"z{i % 3}"
        ks.add_node(make_node(f"n{i}", labels=labels, capacity={"cpu": "64", "memory": "64Gi", "pods": "110"}))
    return ks, rng


def _churn_pod(rng: random.Random, i: int, node: Optional[str]) -> Any:
    app = rng.choice("abc")
    kw: dict = {}
    kind = rng.randrange(5)
    if kind == 1:
        kw["pod_anti_affinity"] = [pod_affinity_term({"app": rng.choice("abc")}, rng.choice([ZONE, HOST]))]
    elif kind == 2:
        kw["pod_affinity"] = [pod_affinity_term({"app": rng.choice("abc")}, rng.choice([ZONE, HOST]))]
    elif kind == 3:
        kw["topology_spread_constraints"] = [
            {"maxSkew": 1, "topologyKey": k, "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": rng.choice("abc")}}} for k in rng.choice([[ZONE], [HOST], [ZONE, HOST]])]
    return make_pod(f"p{i}", rng.choice(["default", "ns2"]), uid=f"p{i}", labels={"app": app}, node_name=node, **kw)


@pytest.mark.parametrize("seed", range(4))
def test_prefilter_aggregates_kept_across_cycles_match_a_fresh_walk(seed):
    """PodTopologySpread's domain counts and InterPodAffinity's three count maps, kept across
    cycles and updated from the nodes whose pods changed, equal a fresh plugin's walk over fresh
    NodeInfos after every pod add / delete / update and node add / delete of the scheduler."""
    from karpy.kubescheduler.plugins import InterPodAffinity
    ks, rng = _churned_cluster(seed)
    pts = next(p for p in ks.framework.plugins if p.name == "PodTopologySpread")
    ipa = next(p for p in ks.framework.plugins if p.name == "InterPodAffinity")
    bound: list[str] = []
    checked = nonzero = rejected = 0
    for step in range(250):
        r = rng.random()
        if r < 0.55 or not bound:
            node = rng.choice(list(ks.nodes))
            ks.add_pod(_churn_pod(rng, step, node))
            bound.append(f"{'default'}/p{step}")
            p = ks.pods.get(bound[-1])
            if p is None:  # made in ns2
                bound[-1] = f"ns2/p{step}"
        elif r < 0.75:
            ks.delete_pod(bound.pop(rng.randrange(len(bound))))
        elif r < 0.85:
            key = rng.choice(bound)
            old = ks.pods[key]
            ks.update_pod(make_pod(old.metadata.name, old.metadata.namespace, uid=old.metadata.uid,
                                   labels={"app": rng.choice("abc")}, node_name=old.spec.node_name))
        elif r < 0.9:
            name = f"x{step}"
            ks.add_node(make_node(name, labels={HOST: name, ZONE: "z9"}, capacity={"cpu": "64", "pods": "110"}))
        elif len(ks.nodes) > 4:
            gone = rng.choice([n for n in ks.nodes if n.startswith("x")] or [None])
            if gone is not None:
                ks.delete_node(gone)
        snap = ks._snapshot()
        fresh = [NodeInfo.from_node(ni.node, list(ni.pods)) for ni in snap]
        for _ in range(2):  # a second cycle with nothing changed reuses the kept counts
            incoming = new_pod_info(_churn_pod(rng, 10_000 + step, None))
            state, fresh_state = CycleState(), CycleState()
            a = pts.pre_filter(state, incoming, snap)[0].code
            b = PodTopologySpread().pre_filter(fresh_state, incoming, fresh)[0].code
            assert a == b
            if a != Code.SKIP:
                assert state.data[pts.name].counts == fresh_state.data[pts.name].counts
                nonzero += any(v for d in state.data[pts.name].counts for v in d.values())
            a = ipa.pre_filter(state, incoming, snap)[0].code
            b = InterPodAffinity().pre_filter(fresh_state, incoming, fresh)[0].code
            assert a == b
            if a != Code.SKIP:
                x, y = state.data[ipa.name], fresh_state.data[ipa.name]
                assert (x.existing_anti, x.affinity, x.anti) == (y.existing_anti, y.affinity, y.anti)
                assert 0 not in x.existing_anti.values() and 0 not in x.affinity.values() and 0 not in x.anti.values()
                nonzero += bool(x.existing_anti or x.affinity or x.anti)
            # Plugin.node_filter (bound once per filter pass) gives Filter's status on every node
            for plugin in (pts, ipa):
                bound_filter = plugin.node_filter(state, incoming)
                for ni in snap:
                    got, want = bound_filter(ni), plugin.filter(state, incoming, ni)
                    assert (got.code, got.reasons) == (want.code, want.reasons)
                    rejected += bool(got.code)
            checked += 1
    assert checked == 500 and nonzero > 200 and rejected > 200


def test_prefilter_counts_handed_to_a_cycle_are_copies():
    """AddPod / RemovePod on one cycle's state (nominated pods, preemption dry runs) never reach
    the kept counts nor the next cycle."""
    ks, rng = _churned_cluster(0)
    for i in range(6):
        ks.add_pod(make_pod(f"e{i}", uid=f"e{i}", labels={"app": "a"}, node_name=f"n{i % 3 + 1}"))
    tsc = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "a"}}}]
    incoming = new_pod_info(make_pod("p", uid="p", labels={"app": "a"}, topology_spread_constraints=tsc,
                                     pod_anti_affinity=[pod_affinity_term({"app": "a"}, ZONE)]))
    pts = next(p for p in ks.framework.plugins if p.name == "PodTopologySpread")
    ipa = next(p for p in ks.framework.plugins if p.name == "InterPodAffinity")
    s1 = CycleState()
    pts.pre_filter(s1, incoming, ks._snapshot())
    ipa.pre_filter(s1, incoming, ks._snapshot())
    before = ([dict(d) for d in s1.data[pts.name].counts], dict(s1.data[ipa.name].anti))
    ni = ks.node_infos["n1"]
    extra = new_pod_info(make_pod("x", uid="x", labels={"app": "a"}, node_name="n1"))
    pts.add_pod(s1, incoming, extra, ni)
    ipa.add_pod(s1, incoming, extra, ni)
    assert s1.data[pts.name].counts != before[0] and s1.data[ipa.name].anti != before[1]
    s2 = CycleState()
    pts.pre_filter(s2, incoming, ks._snapshot())
    ipa.pre_filter(s2, incoming, ks._snapshot())
    assert (s2.data[pts.name].counts, s2.data[ipa.name].anti) == before


def test_spread_constraints_built_once_per_pod_info_and_again_for_an_updated_pod():
    """build_constraints keeps a PodInfo's constraints (pod.memo); the updated pod's new PodInfo
    gets its own, so a changed maxSkew decides the next cycle."""
    from karpy.kubescheduler.plugins.podtopologyspread import build_constraints

    def spread(skew: int) -> Any:
        return make_pod("p", uid="p", labels={"app": "a"}, requests={"cpu": "1"}, topology_spread_constraints=[
            {"maxSkew": skew, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "a"}}}])
    pi = new_pod_info(spread(1))
    assert build_constraints(pi, "DoNotSchedule") is build_constraints(pi, "DoNotSchedule")
    assert build_constraints(pi, "ScheduleAnyway") == []
    ks = KubeScheduler(FakeClock(), random.Random(0))
    ks.add_node(make_node("a", labels={ZONE: "z1"}, capacity={"cpu": "8", "memory": "8Gi", "pods": "10"}))
    ks.add_node(make_node("c", labels={ZONE: "z2"}, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}],
                          capacity={"cpu": "8", "memory": "8Gi", "pods": "10"}))
    for i in range(2):
        ks.add_pod(make_pod(f"e{i}", uid=f"e{i}", labels={"app": "a"}, node_name="a"))
    ks.add_pod(spread(1))
    r = ks.schedule_one()
    assert r.outcome == "Unschedulable" and "didn't match pod topology spread constraints" in r.condition["message"]
    ks.update_pod(spread(3))
    ks.activate(["default/p"])
    r = ks.schedule_one()
    assert (r.outcome, r.node_name) == ("Bound", "a")


def test_count_matching_on_node_with_kept_selector_answers_equals_the_plain_count():
    """count_matching_on_node (selector answers kept per selector signature and pod labels across
    nodes and cycles) equals count_pods_match_selector over the node's pods."""
    from karpy.api.meta import LabelSelector, LabelSelectorRequirement
    from karpy.kubescheduler.plugins.podtopologyspread import (Constraint, count_matching_on_node,
                                                               count_pods_match_selector)
    rng = random.Random(3)
    selectors = [LabelSelector(match_labels={"app": a}) for a in "abc"] + [
        LabelSelector(match_labels={}, match_expressions=[LabelSelectorRequirement(key="app", operator="In", values=["a", "b"])]),
        LabelSelector(match_labels={"app": "a"}, match_expressions=[LabelSelectorRequirement(key="tier", operator="Exists", values=[])])]
    nodes = [NodeInfo.from_node(make_node(f"n{i}", capacity={"pods": "110"})) for i in range(5)]
    checked = 0
    answers: dict = {}  # one table across nodes and steps, as a PodTopologySpread instance keeps it
    for step in range(300):
        ni = rng.choice(nodes)
        if ni.pods and rng.random() < 0.3:
            ni.remove_pod(rng.choice(ni.pods))
        else:
            labels = {"app": rng.choice("abcd")}
            if rng.random() < 0.5:
                labels["tier"] = "x"
            ni.add_pod(new_pod_info(make_pod(f"p{step}", rng.choice(["default", "ns2"]), uid=f"p{step}", labels=labels)))
        for sel in selectors:
            c = Constraint(1, HOST, sel)
            for ns in ("default", "ns2"):
                for n in nodes:
                    got = count_matching_on_node(n, c, ns, answers)
                    assert got == count_pods_match_selector(n.pods, sel, ns)
                    checked += got > 0
    assert checked > 1000


# ---- pods grouped by labels (nodeinfo.pods_by_labels) --------------------------------------------------------------
def test_count_matching_on_node_by_label_groups_counts_each_live_pod():
    """count_matching_on_node over label groups (several replicas per group, terminating pods,
    two namespaces) equals count_pods_match_selector over the node's pods one by one."""
    from karpy.api.meta import LabelSelector, LabelSelectorRequirement
    from karpy.kubescheduler.plugins.podtopologyspread import (Constraint, count_matching_on_node,
                                                               count_pods_match_selector)
    selectors = [LabelSelector(match_labels={"app": a}) for a in "ab"] + [
        LabelSelector(match_labels={}, match_expressions=[LabelSelectorRequirement(key="tier", operator="Exists", values=[])])]
    answers: dict = {}
    checked = 0
    for _rng, nodes in _churned_groups(2):
        for sel in selectors:
            c = Constraint(1, HOST, sel)
            for ns in ("default", "ns2"):
                for ni in nodes:
                    got = count_matching_on_node(ni, c, ns, answers)
                    assert got == count_pods_match_selector(ni.pods, sel, ns)
                    checked += got > 1
    assert checked > 1000


def test_interpodaffinity_incoming_counts_by_label_groups_equal_upstreams_walk():
    """InterPodAffinity's PreFilter affinity / anti-affinity counts (node shares taken by label
    group) equal getIncomingAffinityAntiAffinityCounts' walk over every pod of every node
    (terminating pods included), written out here."""
    from karpy.kubescheduler.nodeinfo import Snapshot
    from karpy.kubescheduler.plugins import InterPodAffinity
    plugin = InterPodAffinity()

    def walk(pod: Any, nodes: list[NodeInfo]) -> tuple[dict, dict]:
        aff: dict = {}
        anti: dict = {}
        for ni in nodes:
            for other in ni.pods:
                if pod.required_affinity_terms and all(t.matches(other) for t in pod.required_affinity_terms):
                    for t in pod.required_affinity_terms:
                        if t.topology_key in ni.labels:
                            k = (t.topology_key, ni.labels[t.topology_key])
                            aff[k] = aff.get(k, 0) + 1
                for t in pod.required_anti_affinity_terms:
                    if t.matches(other) and t.topology_key in ni.labels:
                        k = (t.topology_key, ni.labels[t.topology_key])
                        anti[k] = anti.get(k, 0) + 1
        return aff, anti
    checked = 0
    for rng, nodes in _churned_groups(3):
        kw: dict = {}
        if rng.random() < 0.6:
            kw["pod_affinity"] = [pod_affinity_term({"app": rng.choice("ab")}, HOST)]
        if rng.random() < 0.6:
            kw["pod_anti_affinity"] = [pod_affinity_term({"app": rng.choice("abc")}, HOST),
                                       pod_affinity_term({"tier": "x"}, HOST)]
        if not kw:
            continue
        incoming = new_pod_info(make_pod("in", rng.choice(["default", "ns2"]), uid="in", **kw))
        state = CycleState()
        st, _ = plugin.pre_filter(state, incoming, Snapshot(nodes))
        assert st.code == Code.SUCCESS
        got = state.data[plugin.name]
        assert (got.affinity, got.anti) == walk(incoming, nodes)
        checked += any(n > 1 for n in list(got.affinity.values()) + list(got.anti.values()))
    assert checked > 50


def test_match_memo_answers_equal_term_matches_for_fresh_terms_and_reused_ids():
    """InterPodAffinity's _MatchMemo (rows found by term id, kept with the term itself) answers
    what AffinityTerm.matches answers, for terms made and dropped one after another (CPython
    hands a new term the id of a dropped one), against the incoming pod and other pods, with the
    other-pod table shared by successive memos as the plugin shares it."""
    from karpy.kubescheduler.plugins.interpodaffinity import _MatchMemo
    rng = random.Random(6)
    others = [new_pod_info(make_pod(f"o{i}", rng.choice(["default", "ns2"]), uid=f"o{i}",
                                    labels={"app": rng.choice("abc"), "tier": rng.choice("xy")})) for i in range(12)]
    shared: dict = {}
    checked = 0
    for cycle in range(40):
        incoming = rng.choice(others)
        memo = _MatchMemo(incoming, shared)
        for _ in range(30):
            sel = {"app": rng.choice("abc")}
            if rng.random() < 0.5:
                sel["tier"] = rng.choice("xy")
            holder = new_pod_info(make_pod("h", rng.choice(["default", "ns2"]), uid="h",
                                           pod_anti_affinity=[pod_affinity_term(sel, HOST)]))
            t = holder.required_anti_affinity_terms[0]
            assert memo.term_matches_incoming(t) == t.matches(incoming)
            for o in others:
                assert memo.term_matches(t, o) == t.matches(o)
                checked += t.matches(o)
            del holder, t
    assert checked > 500


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


def test_match_memo_by_signature_id_answers_equal_term_matches_across_id_drops_and_copies(monkeypatch):
    """_MatchMemo looks terms up by signature id (kept on the term): with the id table dropped
    every few terms (a signature then gets a second id) and terms copied (pickled: the copy is
    given an id again), every answer equals AffinityTerm.matches, with the other-pod table shared
    across cycles as the plugin shares it."""
    import pickle

    from karpy.kubescheduler.plugins import interpodaffinity as ipa
    monkeypatch.setattr(ipa, "_SIGNATURE_ID_LIMIT", 3)
    rng = random.Random(7)
    others = [new_pod_info(make_pod(f"o{i}", rng.choice(["default", "ns2"]), uid=f"o{i}",
                                    labels={"app": rng.choice("abc"), "tier": rng.choice("xy")})) for i in range(12)]
    terms = []
    for i in range(40):
        sel = {"app": rng.choice("abc")}
        if rng.random() < 0.5:
            sel["tier"] = rng.choice("xy")
        holder = new_pod_info(make_pod(f"h{i}", rng.choice(["default", "ns2"]), uid=f"h{i}",
                                       pod_affinity=[pod_affinity_term(sel, HOST)]))
        terms.append(holder.required_affinity_terms[0])
    shared: dict = {}
    checked = 0
    for cycle in range(30):
        incoming = rng.choice(others)
        memo = ipa._MatchMemo(incoming, shared)
        for t in rng.sample(terms, 10):
            if rng.random() < 0.3:
                ipa._signature_id(t)
                t = pickle.loads(pickle.dumps(t))
            assert memo.term_matches_incoming(t) == t.matches(incoming)
            for o in others:
                assert memo.term_matches(t, o) == t.matches(o)
                checked += t.matches(o)
    assert checked > 300


@pytest.mark.parametrize("hard, ignore", [(1, False), (0, False), (3, False), (1, True)])
def test_interpodaffinity_prescore_without_own_preferred_terms_matches_process_existing(hard: int, ignore: bool):
    """PreScore of a pod with no preferred terms of its own (its node shares built by the inlined
    loop over the existing pods' terms) equals the plain walk: processExistingPod
    (_process_existing) over every pod with affinity of every node, for hard weights 0 and 1+ and
    with the existing pods' preferred terms counted or ignored (Skip alike)."""
    from karpy.kubescheduler.plugins import InterPodAffinity
    rng = random.Random(11 + hard)
    plugin = InterPodAffinity(hard, ignore)
    nodes = _big_zonal_infos(9)

    def random_pod(i: int, own: bool = False):
        kw: dict = {}
        for _ in range(rng.randrange(4)):
            term = pod_affinity_term({"app": rng.choice("abc")}, rng.choice(["zone", "kubernetes.io/hostname"]))
            kind = rng.randrange(2 if own else 4)
            if kind == 0:
                kw.setdefault("pod_affinity", []).append(term)
            elif kind == 1:
                kw.setdefault("pod_anti_affinity", []).append(term)
            elif kind == 2:
                kw.setdefault("pod_affinity_preferences", []).append((rng.choice([1, 4]), term))
            else:
                kw.setdefault("pod_anti_affinity_preferences", []).append((rng.choice([2, 4]), term))
        return new_pod_info(make_pod(f"p{i}", rng.choice(["default", "ns2"]), uid=f"p{i}",
                                     labels={"app": rng.choice("abc")}, **kw))

    scored = 0
    for incoming, fresh in _churn(rng, nodes, random_pod):
        incoming = random_pod(5000 + scored, own=True)  # required terms only: no preferred terms
        state = CycleState()
        snap = Snapshot(nodes)
        snap.tree = nodes
        st = plugin.pre_score(state, incoming, nodes[:4], snap)
        want: dict = {}
        for ni in fresh:
            for other in ni.pods_with_affinity:
                plugin._process_existing(incoming, other, ni.labels, want)
        if ignore:
            assert st.code == Code.SKIP
            continue
        assert (st.code == Code.SKIP) == (not want)
        got = state.data.get(plugin.name + "/score")
        assert (got or {}) == want
        scored += bool(want)
    assert scored > 50 or ignore
