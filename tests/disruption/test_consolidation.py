"""Ports of pkg/controllers/disruption/consolidation_test.go, emptiness_test.go and
multi-node/single-node behaviour, on the hand-built cluster of tests.disruption.harness."""

from __future__ import annotations

import pytest

from karpy.api.nodepool import Budget
from karpy.disruption.budgets import build_disruption_budget_mapping
from karpy.disruption.emptiness import Emptiness
from karpy.disruption.helpers import build_nodepool_map, get_candidates
from karpy.disruption.multinodeconsolidation import MultiNodeConsolidation
from karpy.disruption.singlenodeconsolidation import SingleNodeConsolidation
from tests.disruption.harness import Env, owner
from karpy.disruption.validation import (ChurnValidationError, SchedulingValidationError, validate_consolidation,
                                         validate_emptiness)


def compute(env, method, budget="100%"):
    env.nodepools["default"].spec.disruption.budgets = [Budget(nodes=budget)]
    cl = env.cluster()
    cands = get_candidates(cl, lambda c: method.should_disrupt(c, cl), method.disruption_class,
                           build_nodepool_map(cl))
    budgets = build_disruption_budget_mapping(cl.state.nodes, cl.nodepools.values(), cl.now, method.reason)
    return method.compute_commands(cl, budgets, cands), cl


def unconsolidatable(cl, node):
    return [m for r, o, m in cl.events if r == "Unconsolidatable" and o == f"node/{node}"]


# upstream: consolidation_test.go Replace "can replace node" (on-demand -> cheaper, pinned to spot)
def test_can_replace_node_with_a_cheaper_one():
    env = Env()
    env.node("big", instance_type="arm-instance-type")
    env.pod("p", "big")
    [cmd], cl = compute(env, SingleNodeConsolidation())
    assert cmd.decision() == "replace" and [c.name for c in cmd.candidates] == ["big"]
    [claim] = cmd.replacements
    big = env.instance_type("arm-instance-type").offerings
    assert all(it.offerings.available().worst_launch_price(claim.requirements) < big[0].price
               for it in claim.instance_type_options)
    # consolidation.go:240-243: OD -> [OD, spot] priced as spot, so spot is pinned
    assert claim.requirements.get("karpenter.sh/capacity-type").values == frozenset({"spot"})
    assert cmd.estimated_savings() > 0
    assert any(r == "ConsolidationCandidate" for r, _, _ in cl.events)


# upstream: consolidation_test.go Delete "can delete nodes" (pods fit on the other node)
def test_can_delete_node_when_pods_fit_elsewhere():
    env = Env()
    env.node("a")
    env.node("b")
    env.pod("pa", "a")
    env.pod("pb", "b")
    [cmd], _ = compute(env, SingleNodeConsolidation())
    assert cmd.decision() == "delete" and len(cmd.candidates) == 1


# consolidation.go: the cheapest node has no cheaper replacement ("Can't replace with a cheaper node")
def test_cheapest_node_is_not_replaced():
    env = Env()
    env.node("small", instance_type="small-instance-type", capacity_type="spot")
    env.pod("p", "small", cpu="1500m")
    env.gates["SpotToSpotConsolidation"] = True
    cmds, cl = compute(env, SingleNodeConsolidation())
    assert cmds == []
    assert unconsolidatable(cl, "small") == ["Can't replace with a cheaper node"]


# upstream: consolidation_test.go Replace "cannot replace spot with spot if the spotToSpotConsolidation is disabled" (the default gate)
def test_spot_to_spot_disabled_by_default():
    env = Env()
    env.node("big", instance_type="arm-instance-type", capacity_type="spot")
    env.pod("p", "big")
    cmds, cl = compute(env, SingleNodeConsolidation())
    assert cmds == []
    assert unconsolidatable(cl, "big") == ["SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"]


# upstream: consolidation_test.go "cannot replace spot with spot if less than minimum InstanceTypes flexibility"
def test_spot_to_spot_needs_15_cheaper_types():
    env = Env()
    env.gates["SpotToSpotConsolidation"] = True
    env.node("big", instance_type="arm-instance-type", capacity_type="spot")
    env.pod("p", "big")
    cmds, cl = compute(env, SingleNodeConsolidation())
    assert cmds == []
    [msg] = unconsolidatable(cl, "big")
    assert msg.startswith("SpotToSpotConsolidation requires 15 cheaper instance type options than the current "
                          "candidate to consolidate, got ")


# spot-to-spot truncation to the 15 cheapest without minValues (karpy; upstream's price-order and
# minValues cases are in test_consolidation_its.py)
def test_spot_to_spot_truncates_to_15():
    from karpy.cloudprovider.fake import FakeCloudProvider, instance_types

    env = Env(FakeCloudProvider(instance_types(40)))
    env.gates["SpotToSpotConsolidation"] = True
    env.node("big", instance_type="fake-it-39", capacity_type="spot")
    env.pod("p", "big")
    [cmd], _ = compute(env, SingleNodeConsolidation())
    [claim] = cmd.replacements
    assert len(claim.instance_type_options) == 15
    assert [it.name for it in claim.instance_type_options] == [f"fake-it-{i}" for i in range(15)]


# consolidation.go ShouldDisrupt's two texts (Never; WhenEmpty with pods); upstream's Events Its
# that count them are in test_consolidation_its.py
@pytest.mark.parametrize("field,value,message", [
    ("consolidate_after", "Never", 'NodePool "default" has consolidation disabled'),
    ("consolidation_policy", "WhenEmpty", 'NodePool "default" has consolidation policy WhenEmpty, but node is not empty'),
])
def test_should_disrupt_rejections(field, value, message):
    env = Env()
    setattr(env.nodepools["default"].spec.disruption, field, value)
    env.node("n1")
    env.pod("p", "n1")
    cmds, cl = compute(env, SingleNodeConsolidation())
    assert cmds == [] and message in unconsolidatable(cl, "n1")


# consolidation.go ShouldDisrupt: no Consolidatable condition, no candidate
def test_not_consolidatable_is_skipped():
    env = Env()
    env.node("n1", consolidatable=False, instance_type="arm-instance-type")
    env.pod("p", "n1")
    assert compute(env, SingleNodeConsolidation())[0] == []


# upstream: consolidation_test.go "can delete nodes with a permanently pending pod"
def test_permanently_pending_pod_does_not_block_delete():
    env = Env()
    env.node("a")
    env.node("b")
    env.pod("pa", "a")
    env.pod("pb", "b")
    env.pod("huge", None, cpu="1000")  # fits nowhere, ever
    [cmd], _ = compute(env, SingleNodeConsolidation())
    assert cmd.decision() == "delete"


# the replace variant of Delete "should not consolidate pods onto a destination node that is under its
# consolidateAfter window" (ported in test_consolidation_its.py)
def test_destination_under_consolidate_after_is_not_used():
    from karpy.api.meta import Condition
    from tests.disruption.harness import ts

    env = Env()
    env.nodepools["default"].spec.disruption.consolidate_after = "10m"
    env.node("a", instance_type="arm-instance-type")
    _, dest = env.node("b", consolidatable=False)
    dest.status.conditions = [Condition(type="Initialized", status="True", last_transition_time=ts(env.now - 60))]
    env.pod("pa", "a")
    [cmd], _ = compute(env, SingleNodeConsolidation())
    # the pod cannot land on b (its consolidateAfter window is open), so a replacement is needed
    assert cmd.decision() == "replace"


# upstream: consolidation_test.go Multi-NodeClaim "can merge 3 nodes into 1"
def test_multi_node_merges_three_into_one():
    env = Env()
    for n in ("a", "b", "c"):
        env.node(n, instance_type="arm-instance-type")
        env.pod(f"p{n}", n, cpu="1")
    [cmd], _ = compute(env, MultiNodeConsolidation())
    assert sorted(c.name for c in cmd.candidates) == ["a", "b", "c"]
    assert cmd.decision() == "replace" and len(cmd.replacements) == 1


# upstream: consolidation_test.go Multi-NodeClaim "won't merge 2 nodes into 1 of the same type"
def test_multi_node_does_not_merge_into_the_same_type():
    # [A, A] -> 1 x {A, ...} is really "delete one": filterOutSameInstanceType drops every option
    # not cheaper than A, and small-instance-type (2 cpu) cannot hold 3 cpu of pods
    env = Env()
    for n in ("a", "b"):
        env.node(n)
        env.pod(f"p{n}", n, cpu="1500m")
    cmds, _ = compute(env, MultiNodeConsolidation())
    assert cmds == []


# upstream: consolidation_test.go Budgets "should only allow 3 empty nodes to be disrupted" (30% of 10)
def test_emptiness_budget_30_percent_of_10():
    env = Env()
    for i in range(10):
        env.node(f"n{i}")
        env.pod(f"ds{i}", f"n{i}", owner_references=owner("DaemonSet"))
    [cmd], _ = compute(env, Emptiness(), budget="30%")
    assert len(cmd.candidates) == 3 and cmd.decision() == "delete"


# upstream: consolidation_test.go Budgets "should only allow 3 nodes to be deleted in multi node consolidation delete"
def test_multi_node_budget_prefilter():
    env = Env()
    env.node("big", instance_type="arm-instance-type")
    for i in range(10):
        env.node(f"n{i}")
        env.pod(f"p{i}", f"n{i}", cpu="100m")
    [cmd], _ = compute(env, MultiNodeConsolidation(), budget="3")
    assert len(cmd.candidates) <= 3


# emptiness: non-empty nodes are not candidates; empty ones go most expensive first (ratio = price)
def test_emptiness_ignores_non_empty_and_uses_ratio_order():
    env = Env()
    env.node("small", instance_type="small-instance-type")
    env.node("big", instance_type="arm-instance-type")
    env.node("busy")
    env.pod("p", "busy")
    [cmd], _ = compute(env, Emptiness(), budget="1")
    # ratio = price for empty nodes: the most expensive goes first
    assert [c.name for c in cmd.candidates] == ["big"]


# upstream: emptiness_test.go "will consider a node with terminating Deployment pods as empty"
# upstream: emptiness_test.go "will not consider a node with a terminating StatefulSet pod as empty"
def test_terminating_deployment_vs_statefulset_pod():
    from tests.disruption.harness import ts

    env = Env()
    env.node("dep")
    p = env.pod("d", "dep", owner_references=owner("ReplicaSet"))
    p.metadata.deletion_timestamp = ts(env.now - 1)
    env.node("sts")
    q = env.pod("s", "sts", owner_references=owner("StatefulSet"))
    q.metadata.deletion_timestamp = ts(env.now - 1)
    [cmd], _ = compute(env, Emptiness())
    assert [c.name for c in cmd.candidates] == ["dep"]


def _replace_command():
    """One over-sized node with one small pod: single-node consolidation's replace command."""
    env = Env()
    env.node("big", instance_type="arm-instance-type")
    env.pod("p", "big")
    m = SingleNodeConsolidation()
    [cmd], _ = compute(env, m)
    return env, m, cmd


# upstream: consolidation_test.go TTL "should not replace node if a pod schedules with karpenter.sh/do-not-disrupt set to true during the TTL wait"
def test_validation_churn_when_do_not_disrupt_pod_arrives():
    env, m, cmd = _replace_command()
    env.pod("late", "big", annotations={"karpenter.sh/do-not-disrupt": "true"})
    env.now += 15
    with pytest.raises(ChurnValidationError, match="1 candidates are no longer valid"):
        validate_consolidation(m, env.cluster(), cmd)


# upstream: consolidation_test.go TTL "should not consolidate if the action picks different instance types after the node TTL wait"
def test_validation_fails_when_the_simulation_changes():
    env, m, cmd = _replace_command()
    env.pod("more", "big", cpu="3")  # the replacement must now be bigger
    env.now += 15
    with pytest.raises(SchedulingValidationError, match="scheduling simulation produced new results"):
        validate_consolidation(m, env.cluster(), cmd)


# validation.go: an unchanged cluster passes the 15 s re-check
def test_validation_passes_when_nothing_changed():
    env, m, cmd = _replace_command()
    env.now += 15
    assert validate_consolidation(m, env.cluster(), cmd) is cmd


# validation.go EmptinessValidator: a candidate nominated during the wait is dropped, the rest go
def test_emptiness_validation_drops_nominated():
    env = Env()
    env.node("a")
    env.node("b")
    m = Emptiness()
    [cmd], _ = compute(env, m)
    env.nominated["a"] = env.now + 100
    env.now += 15
    kept = validate_emptiness(m, env.cluster(), cmd)
    assert [c.name for c in kept.candidates] == ["b"]


def test_consolidated_cache_skips_unchanged_cluster():
    # consolidation.go markConsolidated / IsConsolidated: nothing to do -> not re-evaluated until
    # the cluster's consolidation state changes
    env = Env()
    env.node("small", instance_type="small-instance-type")
    env.pod("p", "small", cpu="1500m")
    m = SingleNodeConsolidation()
    assert compute(env, m)[0] == []
    cl = env.cluster()
    assert m.is_consolidated(cl)
    cl.consolidation_state = 1.0
    assert not m.is_consolidated(cl)
