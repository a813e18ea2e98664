"""Ports of pkg/controllers/disruption/{drift,emptiness,singlenodeconsolidation}_test.go on the
hand-built cluster (tests.disruption.harness)."""

from __future__ import annotations

from karpy.api.builders import make_nodepool
from karpy.api.meta import Condition, LabelSelector, ObjectMeta
from karpy.api.nodepool import Budget
from karpy.api.poddisruptionbudget import PodDisruptionBudget, PodDisruptionBudgetSpec
from karpy.disruption.budgets import build_disruption_budget_mapping
from karpy.disruption.drift import Drift
from karpy.disruption.emptiness import Emptiness
from karpy.disruption.helpers import build_nodepool_map, get_candidates
from karpy.disruption.singlenodeconsolidation import SingleNodeConsolidation, shuffle_candidates
from tests.disruption.harness import Env, owner, ts


def run(env, method, budget="100%", pools=("default",)):
    for p in pools:
        env.nodepools[p].spec.disruption.budgets = [Budget(nodes=budget)]
    cl = env.cluster()
    cands = get_candidates(cl, lambda c: method.should_disrupt(c, cl), method.disruption_class, build_nodepool_map(cl))
    budgets = build_disruption_budget_mapping(cl.state.nodes, cl.nodepools.values(), cl.now, method.reason)
    return cands, method.compute_commands(cl, budgets, cands), cl


# -- Drift ----------------------------------------------------------------------------------------
# upstream: drift_test.go "should correctly report eligible drifted nodes"
# upstream: drift_test.go "should ignore nodes without the drifted status condition"
def test_drift_eligibility():
    env = Env()
    env.node("d", drifted=True)
    env.node("n")
    cands, _, _ = run(env, Drift())
    assert [c.name for c in cands] == ["d"]


# upstream: drift_test.go "should ignore nodes with the drifted status condition set to false"
def test_drift_false_ignored():
    env = Env()
    _, nc = env.node("d")
    nc.status.conditions.append(Condition(type="Drifted", status="False"))
    assert run(env, Drift())[0] == []


# upstream: drift_test.go "should ignore nodes with the karpenter.sh/do-not-disrupt annotation set to true"
# upstream: drift_test.go "should delete drifted nodes with the karpenter.sh/do-not-disrupt annotation set to false"
def test_drift_node_do_not_disrupt():
    env = Env()
    env.node("t", drifted=True, node_annotations={"karpenter.sh/do-not-disrupt": "true"})
    env.node("f", drifted=True, node_annotations={"karpenter.sh/do-not-disrupt": "false"})
    cands, cmds, _ = run(env, Drift())
    assert [c.name for c in cands] == ["f"] and [c.name for c in cmds[0].candidates] == ["f"]


# upstream: drift_test.go "should not create replacements for drifted nodes that have pods with the karpenter.sh/do-not-disrupt annotation set to true"
def test_drift_pod_do_not_disrupt_blocks():
    env = Env()
    env.node("d", drifted=True)
    env.pod("p", "d", annotations={"karpenter.sh/do-not-disrupt": "true"})
    assert run(env, Drift())[1] == []


# upstream: drift_test.go "should not create replacements for drifted nodes that have pods with the karpenter.sh/do-not-disrupt annotation set to true when the NodePool's TerminationGracePeriod is not nil"
# upstream: drift_test.go "should not create replacements for drifted nodes that have pods with the blocking PDBs when the NodePool's TerminationGracePeriod is not nil"
def test_drift_with_tgp_deletes_without_sizing_blocked_pods():
    env = Env()
    env.node("d", drifted=True, tgp="5m")
    env.pod("p", "d", annotations={"karpenter.sh/do-not-disrupt": "true"})
    [cmd] = run(env, Drift())[1]
    assert cmd.decision() == "delete"  # the blocked pod is not currently reschedulable: no replacement
    env = Env()
    env.node("d", drifted=True, tgp="5m")
    env.pod("p", "d", labels={"app": "x"})
    env.pdbs.append(PodDisruptionBudget(metadata=ObjectMeta(name="pdb"), spec=PodDisruptionBudgetSpec(
        selector=LabelSelector(match_labels={"app": "x"}), max_unavailable=0)))
    [cmd] = run(env, Drift())[1]
    assert cmd.decision() == "delete"


# upstream: drift_test.go "should not drift nodes with pods that have a duration-based do-not-disrupt annotation that is still active"
# upstream: drift_test.go "should drift nodes with pods that have an invalid do-not-disrupt annotation format"
# upstream: drift_test.go "should not drift nodes until the longest duration-based do-not-disrupt grace period expires across multiple pods"
def test_drift_do_not_disrupt_durations():
    env = Env()
    env.node("d", drifted=True)
    env.pod("p", "d", annotations={"karpenter.sh/do-not-disrupt": "2h"})  # started at 0, now is 1 h
    assert run(env, Drift())[1] == []
    env = Env()
    env.node("d", drifted=True)
    env.pod("p", "d", annotations={"karpenter.sh/do-not-disrupt": "not-a-duration"})
    assert len(run(env, Drift())[1]) == 1
    env = Env()
    env.node("d", drifted=True)
    env.pod("a", "d", annotations={"karpenter.sh/do-not-disrupt": "30m"})
    env.pod("b", "d", annotations={"karpenter.sh/do-not-disrupt": "90m"})
    assert run(env, Drift())[1] == []
    env.now = 90 * 60 + 1
    assert len(run(env, Drift())[1]) == 1


# upstream: drift_test.go "should replace drifted nodes"
# upstream: drift_test.go "should delete drifted nodes"
def test_drift_replace_and_delete():
    env = Env()
    env.node("d", drifted=True)
    env.pod("p", "d")
    [cmd] = run(env, Drift())[1]
    assert cmd.decision() == "replace" and len(cmd.replacements) == 1
    env = Env()
    env.node("d", drifted=True)
    env.node("other")
    env.pod("p", "d")
    [cmd] = run(env, Drift())[1]
    assert cmd.decision() == "delete"  # the pod fits on the other node


# upstream: drift_test.go "should delete drifted nodes when they are empty and consolidation is disabled"
def test_drift_empty_with_consolidation_disabled():
    env = Env()
    env.nodepools["default"].spec.disruption.consolidate_after = "Never"
    env.node("d", drifted=True, consolidatable=False)
    [cmd] = run(env, Drift())[1]
    assert cmd.decision() == "delete"


# upstream: drift_test.go "should drift empty nodes before non-empty nodes"
# upstream: drift_test.go "should drift one non-empty node at a time, starting with the earliest drift"
def test_drift_order():
    env = Env()
    _, a = env.node("a", drifted=True)
    _, b = env.node("b", drifted=True)
    env.node("c", drifted=True)
    env.pod("pa", "a")
    env.pod("pb", "b")
    for nc, t in ((a, 50), (b, 10)):
        nc.status.conditions = [c if c.type != "Drifted" else c.model_copy(update={"last_transition_time": ts(t)})
                                for c in nc.status.conditions]
    [cmd] = run(env, Drift())[1]
    assert [c.name for c in cmd.candidates] == ["c"]  # empty first
    env.claims = [x for x in env.claims if x.metadata.name != "c"]
    env.nodes = [x for x in env.nodes if x.metadata.name != "c"]
    [cmd] = run(env, Drift())[1]
    assert [c.name for c in cmd.candidates] == ["b"]  # then the earliest drift, one node


# upstream: drift_test.go "should continue to the next drifted node if the first cannot reschedule all pods"
def test_drift_skips_unschedulable():
    env = Env()
    env.nodepools["default"] = make_nodepool(requirements=[("node.kubernetes.io/instance-type", "In",
                                                            ["small-instance-type"])])
    _, a = env.node("a", drifted=True, instance_type="arm-instance-type")
    env.pod("huge", "a", cpu="10")  # no allowed type can hold it
    _, b = env.node("b", drifted=True)
    env.pod("p", "b")
    a.status.conditions = [c if c.type != "Drifted" else c.model_copy(update={"last_transition_time": ts(0)})
                           for c in a.status.conditions]
    b.status.conditions = [c if c.type != "Drifted" else c.model_copy(update={"last_transition_time": ts(5)})
                           for c in b.status.conditions]
    _, [cmd], cl = run(env, Drift())
    assert [c.name for c in cmd.candidates] == ["b"]
    assert any(r == "DisruptionBlocked" and o == "node/a" and m.startswith("Not all pods would schedule, default/huge => ")
               for r, o, m in cl.events)


# upstream: drift_test.go Budgets "should only consider 3 nodes allowed to be disrupted because of budgets"
# upstream: drift_test.go Budgets "should disrupt 3 nodes, taking into account commands in progress"
def test_drift_budget():
    env = Env()
    for i in range(10):
        env.node(f"n{i}", drifted=True)
    env.marked.update({"n0", "n1"})  # two commands already in progress
    _, cmds, cl = run(env, Drift(), budget="3")
    assert len(cmds) == 1  # one command per round
    mapping = build_disruption_budget_mapping(cl.state.nodes, cl.nodepools.values(), cl.now, "Drifted")
    assert mapping == {"default": 1}


# upstream: drift_test.go "should respect budgets for multiple nodepools"
def test_drift_budget_zero_in_one_pool():
    env = Env()
    env.nodepools["other"] = make_nodepool("other")
    env.node("a", drifted=True)
    env.node("b", drifted=True, pool="other")
    env.nodepools["default"].spec.disruption.budgets = [Budget(nodes="0")]
    env.nodepools["other"].spec.disruption.budgets = [Budget(nodes="1")]
    cl = env.cluster()
    m = Drift()
    cands = get_candidates(cl, lambda c: m.should_disrupt(c, cl), m.disruption_class, build_nodepool_map(cl))
    budgets = build_disruption_budget_mapping(cl.state.nodes, cl.nodepools.values(), cl.now, m.reason)
    [cmd] = m.compute_commands(cl, budgets, cands)
    assert [c.name for c in cmd.candidates] == ["b"]


# upstream: drift_test.go "should not consider static nodepool for drift"
def test_drift_static_pool_ignored():
    env = Env()
    env.nodepools["default"] = make_nodepool(replicas=1)
    env.node("d", drifted=True)
    assert run(env, Drift())[0] == []


# -- Emptiness ----------------------------------------------------------------------------------
# upstream: emptiness_test.go "should allow all empty nodes to be disrupted"
# upstream: emptiness_test.go "should allow no empty nodes to be disrupted"
# upstream: emptiness_test.go "can delete multiple empty nodes"
def test_emptiness_budgets_all_and_none():
    env = Env()
    for i in range(5):
        env.node(f"n{i}")
    [cmd] = run(env, Emptiness(), budget="100%")[1]
    assert len(cmd.candidates) == 5
    assert run(env, Emptiness(), budget="0%")[1] == []


# upstream: emptiness_test.go "should allow 2 nodes from each nodePool to be deleted"
def test_emptiness_two_per_pool():
    env = Env()
    env.nodepools["other"] = make_nodepool("other")
    for i in range(5):
        env.node(f"a{i}")
        env.node(f"b{i}", pool="other")
    [cmd] = run(env, Emptiness(), budget="2", pools=("default", "other"))[1]
    names = sorted(c.name for c in cmd.candidates)
    assert len([n for n in names if n.startswith("a")]) == 2 and len([n for n in names if n.startswith("b")]) == 2


# upstream: emptiness_test.go "should ignore nodes without the consolidatable status condition"
# upstream: emptiness_test.go "should ignore nodes that have pods"
# upstream: emptiness_test.go "should ignore nodes with the karpenter.sh/do-not-disrupt annotation"
# upstream: emptiness_test.go "should delete nodes with the karpenter.sh/do-not-disrupt annotation set to false"
def test_emptiness_filters():
    env = Env()
    env.node("nocond", consolidatable=False)
    env.node("pods")
    env.pod("p", "pods")
    env.node("dnd", node_annotations={"karpenter.sh/do-not-disrupt": "true"})
    env.node("dndfalse", node_annotations={"karpenter.sh/do-not-disrupt": "false"})
    [cmd] = run(env, Emptiness())[1]
    assert [c.name for c in cmd.candidates] == ["dndfalse"]


# upstream: emptiness_test.go "will consider a node with a DaemonSet pod as empty"
def test_emptiness_daemonset_pod_is_empty():
    env = Env()
    env.node("n")
    env.pod("ds", "n", owner_references=owner("DaemonSet"))
    assert len(run(env, Emptiness())[1]) == 1


# upstream: emptiness_test.go "should not consolidate static NodePool nodes"
def test_emptiness_static_pool():
    env = Env()
    env.nodepools["default"] = make_nodepool(replicas=1)
    env.node("n")
    assert run(env, Emptiness())[0] == []


# upstream: emptiness_test.go "can delete empty and drifted nodes"
def test_emptiness_takes_drifted_empty_nodes_too():
    env = Env()
    env.node("n", drifted=True)
    assert [c.name for c in run(env, Emptiness())[1][0].candidates] == ["n"]


# -- Single-node candidate order --------------------------------------------------------------------
# upstream: singlenodeconsolidation_test.go "should sort candidates by savings ratio descending"
# upstream: singlenodeconsolidation_test.go "should sort candidates by savings ratio with different disruption costs"
def test_single_node_sort():
    env = Env()
    env.node("small", instance_type="small-instance-type")
    env.node("big", instance_type="arm-instance-type")
    env.node("busy-big", instance_type="arm-instance-type")
    for n in ("small", "big"):
        env.pod(f"p-{n}", n)
    for i in range(5):
        env.pod(f"q{i}", "busy-big")
    cl = env.cluster()
    m = SingleNodeConsolidation()
    cands = get_candidates(cl, lambda c: m.should_disrupt(c, cl), m.disruption_class, build_nodepool_map(cl))
    ordered = [c.name for c in m.sort_candidates(cands)]
    assert ordered == ["big", "busy-big", "small"]  # price / (1 + pods): 15.3/2 > 15.3/6 > 0.4/2


# upstream: singlenodeconsolidation_test.go "should prioritize nodepools that timed out in previous runs" (pools interleave; karpy: name order)
def test_single_node_pool_interleave():
    env = Env()
    env.nodepools["other"] = make_nodepool("other")
    for i in range(2):
        env.node(f"a{i}", instance_type="arm-instance-type")
        env.pod(f"pa{i}", f"a{i}")
        env.node(f"b{i}", pool="other")
        env.pod(f"pb{i}", f"b{i}")
    cl = env.cluster()
    m = SingleNodeConsolidation()
    cands = get_candidates(cl, lambda c: m.should_disrupt(c, cl), m.disruption_class, build_nodepool_map(cl))
    ordered = [c.name for c in shuffle_candidates(m.sort_candidates(cands))]
    assert ordered == ["a0", "b0", "a1", "b1"]
