"""Ports of the Balanced consolidation policy's suites (core 2266468):
pkg/controllers/disruption/balanced_test.go, balanced_scoring_test.go, balanced_adversarial_test.go and
balanced_integration_test.go, on karpy.disruption.balanced and the hand-built cluster of
tests.disruption.harness."""

from __future__ import annotations

import math

import pytest

from karpy.api.builders import make_nodepool, make_pod
from karpy.api.nodepool import Budget
from karpy.cloudprovider.types import InstanceType, Offering, Offerings
from karpy.disruption.balanced import (BALANCED_K, BalancedEvaluator, NodePoolTotals, compute_nodepool_totals,
                                       evaluate_balanced_move, is_balanced, score_move)
from karpy.disruption.budgets import build_disruption_budget_mapping
from karpy.disruption.helpers import build_nodepool_map, get_candidates_with_totals
from karpy.disruption.multinodeconsolidation import MultiNodeConsolidation
from karpy.disruption.singlenodeconsolidation import SingleNodeConsolidation
from tests.disruption.harness import Env, owner
from karpy.disruption.types import PER_NODE_BASE_DISRUPTION_COST, Candidate, Command, resolve_node_price
from karpy.scheduling.labels import LABEL_CAPACITY_TYPE, LABEL_NODEPOOL, LABEL_ZONE, OP_IN
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements
from karpy.state.cluster import StateNode
from karpy.utils.disruption import eviction_cost

#: balanced_test.go: the RFC example pool (8 m7i.xlarge + 2 m7i.2xlarge, 80 pods)
DEFAULT_TOTALS = NodePoolTotals(total_cost=58.08, total_disruption_cost=90)


def score(savings, disruption, totals=DEFAULT_TOTALS, k=BALANCED_K):
    return score_move(savings, disruption, totals, k)


# --------------------------------------------------------------------------- balanced_test.go ScoreMove

# upstream: balanced_test.go ScoreMove "should approve an oversized node consolidation"
def test_approves_an_oversized_node_consolidation():
    r = score(7.26, 4.0)
    assert r.approved()
    assert r.savings_fraction == pytest.approx(7.26 / 58.08, abs=0.001)
    assert r.disruption_fraction == pytest.approx(4.0 / 90, abs=0.001)
    assert r.score() == pytest.approx((7.26 / 58.08) / (4.0 / 90), abs=0.02)


# upstream: balanced_test.go ScoreMove "should approve a spare capacity delete"
def test_approves_a_spare_capacity_delete():
    r = score(4.84, 5.0)
    assert r.approved() and r.score() == pytest.approx((4.84 / 58.08) / (5.0 / 90), abs=0.02)


# upstream: balanced_test.go ScoreMove "should reject a marginal move"
def test_rejects_a_marginal_move():
    r = score(2.42, 9.0)
    assert not r.approved() and r.score() == pytest.approx((2.42 / 58.08) / (9.0 / 90), abs=0.01)


# upstream: balanced_test.go ScoreMove "should reject a well-packed node with zero savings"
def test_rejects_a_well_packed_node_with_zero_savings():
    r = score(0.0, 11.0)
    assert not r.approved() and r.score() == 0


# upstream: balanced_test.go ScoreMove "should approve a replace in a uniform pool"
def test_approves_a_replace_in_a_uniform_pool():
    totals = NodePoolTotals(48.40, 90)
    r = score(2.42, 9.0, totals)
    assert r.approved() and r.score() == pytest.approx((2.42 / 48.40) / (9.0 / 90), abs=0.01)


# upstream: balanced_test.go ScoreMove "should approve low-disruption nodes and reject high-disruption nodes"
def test_approves_low_disruption_and_rejects_high_disruption_nodes():
    totals = NodePoolTotals(58.08, 117)
    a, b = score(4.84, 5.0, totals), score(4.84, 32.0, totals)
    assert a.approved() and a.score() == pytest.approx((4.84 / 58.08) / (5.0 / 117), abs=0.02)
    assert not b.approved() and b.score() == pytest.approx((4.84 / 58.08) / (32.0 / 117), abs=0.01)


# upstream: balanced_test.go ScoreMove "should produce the same score regardless of pool size"
def test_score_is_scale_invariant():
    r10, r100 = score(7.26, 4.0), score(7.26, 4.0, NodePoolTotals(580.80, 900))
    assert r10.score() == pytest.approx(r100.score(), abs=0.01)


# upstream: balanced_test.go ScoreMove "should approve with +Inf score when move disruption is zero and savings positive"
# upstream: balanced_test.go ScoreMove "should approve when move disruption is zero (division by zero guard)"
def test_zero_move_disruption_with_savings_is_an_infinite_score():
    r = score(4.84, 0.0)
    assert r.approved() and math.isinf(r.score()) and r.score() > 0


# upstream: balanced_test.go ScoreMove "should reject when both savings and disruption are zero"
def test_rejects_when_savings_and_disruption_are_zero():
    assert not score(0.0, 0.0).approved()


# upstream: balanced_test.go ScoreMove "should reject when nodepool cost is zero"
def test_rejects_when_the_nodepool_cost_is_zero():
    r = score(4.84, 5.0, NodePoolTotals(0, 90))
    assert not r.approved() and r.score() == 0


# upstream: balanced_test.go "should reject at k=2 for a marginal move" / "should approve at k=3 for the same
# move" / "should reject at k=1 for the same move"
@pytest.mark.parametrize("k,approved", [(2, False), (3, True), (1, False)])
def test_threshold_tuning(k, approved):
    r = score(2.42, 9.0, k=k)
    assert r.threshold() == pytest.approx(1 / k) and r.approved() is approved


# upstream: balanced_test.go "should produce identical scores for proportionally equivalent moves"
def test_proportionally_equivalent_moves_score_the_same():
    od, spot = score(4.84, 4.0, NodePoolTotals(48.40, 90)), score(1.45, 4.0, NodePoolTotals(14.50, 90))
    assert od.score() == pytest.approx(spot.score(), abs=0.01) and od.approved() and spot.approved()


# upstream: balanced_test.go ConsolidationPolicy.IsBalanced (all three Its)
@pytest.mark.parametrize("policy,expected", [("Balanced", True), ("WhenEmptyOrUnderutilized", False),
                                             ("WhenEmpty", False)])
def test_is_balanced(policy, expected):
    np = make_nodepool()
    np.spec.disruption.consolidation_policy = policy
    assert is_balanced(np) is expected


# upstream: balanced_scoring_test.go "ScoreMove (SavingsRatio)" DescribeTable (six Entries)
@pytest.mark.parametrize("savings,disruption,expected,approved", [
    (20.0, 5.0, 4.0, True),     # high savings low disruption
    (10.0, 10.0, 1.0, True),    # equal fractions
    (5.0, 50.0, 0.10, False),   # low savings high disruption
    (10.0, 0.0, math.inf, True),  # zero disruption cost
    (0.0, 10.0, 0.0, False),    # zero savings
    (-5.0, 10.0, 0.0, False),   # negative savings
])
def test_score_move_table(savings, disruption, expected, approved):
    r = score_move(savings, disruption, NodePoolTotals(100.0, 100.0))
    assert r.approved() is approved
    assert r.score() == expected if math.isinf(expected) else r.score() == pytest.approx(expected, abs=1e-9)


# ----------------------------------------------------- balanced_scoring_test.go on hand-made candidates

def pool(name, policy="Balanced"):
    np = make_nodepool(name)
    np.spec.disruption.consolidation_policy = policy
    return np


def itype(name, price):
    reqs = Requirements(Requirement(LABEL_ZONE, OP_IN, ("test-zone-1",)),
                        Requirement(LABEL_CAPACITY_TYPE, OP_IN, ("on-demand",)))
    return InstanceType(name=name, requirements=Requirements(), offerings=Offerings([
        Offering(requirements=reqs, price=price, available=True)]), capacity={})


def candidate(name, np, it, pods):
    """balanced_scoring_test.go makeCandidate."""
    from karpy.api.builders import make_node

    node = make_node(name, labels={LABEL_NODEPOOL: np.metadata.name, LABEL_ZONE: "test-zone-1",
                                   LABEL_CAPACITY_TYPE: "on-demand"})
    sn = StateNode(node=node, nodeclaim=None)
    return Candidate(state_node=sn, nodepool=np, instance_type=it, capacity_type="on-demand", zone="test-zone-1",
                     reschedulable_pods=list(pods), disruption_cost=0.0, price=resolve_node_price(sn, it),
                     reschedule_disruption_cost=PER_NODE_BASE_DISRUPTION_COST
                     + sum(max(0.0, eviction_cost(p)) for p in pods))


def totals_of(cands):
    return compute_nodepool_totals(None, cands, [c.state_node for c in cands], cluster_cost=False)


# upstream: balanced_scoring_test.go computeNodePoolTotals "should produce totals from ALL candidates, not just a filtered subset"
def test_totals_come_from_all_candidates():
    np, it = pool("pool-a"), itype("m7i.xlarge", 4.84)
    cands = [candidate(f"node-{i}", np, it, [make_pod("pod")]) for i in range(5)]
    t = totals_of(cands)["pool-a"]
    assert t.total_cost == pytest.approx(5 * 4.84, abs=0.01) and t.total_disruption_cost == pytest.approx(10.0)


# upstream: balanced_scoring_test.go computeNodePoolTotals "should accumulate disruption from zero-priced candidates"
# upstream: balanced_adversarial_test.go "should sum candidate costs correctly with nil instanceType"
def test_zero_priced_candidates_still_add_disruption():
    np, it = pool("pool-b"), itype("m7i.xlarge", 4.84)
    cands = [candidate("good-1", np, it, [make_pod("p")]), candidate("nil", np, None, [make_pod("p")]),
             candidate("good-2", np, it, [make_pod("p")])]
    assert cands[1].price == 0
    t = totals_of(cands)["pool-b"]
    assert t.total_cost == pytest.approx(2 * 4.84, abs=0.01) and t.total_disruption_cost == pytest.approx(6.0)


# upstream: balanced_scoring_test.go EvaluateBalancedMove "should reject when command has zero candidates"
def test_empty_command_is_rejected():
    approved, per_pool = evaluate_balanced_move(Command([]), {"pool-a": NodePoolTotals(100.0, 50.0)})
    assert not approved and not per_pool


# upstream: balanced_scoring_test.go EvaluateBalancedMove "should skip non-Balanced pools and approve unconditionally"
def test_non_balanced_pools_are_not_scored():
    np, it = pool("pool-nobalanced", "WhenEmptyOrUnderutilized"), itype("m7i.xlarge", 4.84)
    cands = [candidate(f"n{i}", np, it, [make_pod("p")]) for i in range(5)]
    approved, per_pool = evaluate_balanced_move(Command(cands[:2]), totals_of(cands))
    assert approved and "pool-nobalanced" not in per_pool


# upstream: balanced_scoring_test.go EvaluateBalancedMove "should reject when candidate NodePool is missing from totals map"
def test_pool_missing_from_totals_is_rejected():
    np, it = pool("pool-missing"), itype("m7i.xlarge", 4.84)
    approved, per_pool = evaluate_balanced_move(Command([candidate("n0", np, it, [make_pod("p")])]), {})
    assert not approved and per_pool["pool-missing"].score() == 0 and not per_pool["pool-missing"].approved()


# upstream: balanced_scoring_test.go EvaluateBalancedMove "should approve a delete command for a single Balanced NodePool"
def test_delete_in_a_ten_node_pool_scores_one():
    np, it = pool("pool-single"), itype("m7i.xlarge", 4.84)
    cands = [candidate(f"n{i}", np, it, [make_pod("p")]) for i in range(10)]
    approved, per_pool = evaluate_balanced_move(Command([cands[0]]), totals_of(cands))
    assert approved and per_pool["pool-single"].score() == pytest.approx(1.0, abs=0.05)


# upstream: balanced_scoring_test.go EvaluateBalancedMove "should attribute savings proportionally in cross-NodePool scenarios"
def test_cross_pool_savings_are_split_by_source_cost():
    bal, other, it = pool("pool-balanced"), pool("pool-empty", "WhenEmptyOrUnderutilized"), itype("m7i.xlarge", 4.84)
    b = [candidate(f"b{i}", bal, it, [make_pod("p")]) for i in range(5)]
    e = [candidate(f"e{i}", other, it, [make_pod("p")]) for i in range(5)]
    approved, per_pool = evaluate_balanced_move(Command([b[0], e[0]]), totals_of(b + e))
    # savings 9.68 split 50/50 -> 4.84 of 24.2 (0.2); disruption 2 of 10 (0.2): score 1.0
    assert approved and per_pool["pool-balanced"].score() == pytest.approx(1.0, abs=0.05)
    assert set(per_pool) == {"pool-balanced"}


# upstream: balanced_scoring_test.go "AllPoolsMustApprove" "should reject when any Balanced pool rejects"
# (upstream's It stops at borderline values; this asserts the property it names with a pool that does reject)
def test_every_balanced_pool_must_approve():
    a, b = pool("pool-a"), pool("pool-b")
    ita, itb = itype("m7i.xlarge", 4.84), itype("tiny", 1.0)
    ca = [candidate(f"a{i}", a, ita, [make_pod(f"a-pod-{i}")]) for i in range(10)]
    heavy = candidate("b0", b, itb, [make_pod(f"h{i}", annotations={
        "controller.kubernetes.io/pod-deletion-cost": str(2**27 * 9)}) for i in range(40)])
    cb = [heavy] + [candidate(f"b{i}", b, itb, [make_pod("light")]) for i in range(1, 4)]
    approved, per_pool = evaluate_balanced_move(Command([ca[0], heavy]), totals_of(ca + cb))
    assert per_pool["pool-a"].approved() and not per_pool["pool-b"].approved() and not approved


# upstream: balanced_adversarial_test.go "should not allow NaN price to poison NodePool totals"
def test_nan_price_is_zero_not_nan():
    np, it = pool("pool-nan"), itype("nan-type", float("nan"))
    good = candidate("good", np, itype("m7i.xlarge", 4.84), [make_pod("p")])
    bad = candidate("bad", np, it, [make_pod("p")])
    assert bad.price == 0
    t = totals_of([good, bad])["pool-nan"]
    assert t.total_cost == pytest.approx(4.84) and not math.isnan(t.total_cost)


# upstream: balanced_adversarial_test.go "should approve single-node pool DELETE with expected scoring"
def test_single_node_pool_delete_scores_one():
    np, it = pool("pool-one"), itype("m7i.xlarge", 4.84)
    c = candidate("only", np, it, [make_pod("p")])
    approved, per_pool = evaluate_balanced_move(Command([c]), totals_of([c]))
    assert approved and per_pool["pool-one"].score() == pytest.approx(1.0)


# upstream: balanced.go CanPassThreshold (exercised by singlenodeconsolidation.go before computeConsolidation)
def test_can_pass_threshold_is_the_delete_upper_bound():
    np, it = pool("p"), itype("m7i.xlarge", 4.84)
    light = [candidate(f"n{i}", np, it, [make_pod("p")]) for i in range(9)]
    heavy = candidate("heavy", np, it, [make_pod(f"h{i}") for i in range(60)])
    ev = BalancedEvaluator(totals_of(light + [heavy]))
    assert ev.can_pass_threshold(light[0]) and not ev.can_pass_threshold(heavy)
    assert BalancedEvaluator({}).can_pass_threshold(heavy)  # no totals: pass
    heavy.nodepool = pool("p", "WhenEmptyOrUnderutilized")
    assert ev.can_pass_threshold(heavy)  # non-Balanced pools always pass


# ---------------------------------------------- balanced_integration_test.go on tests.disruption.harness

def run_method(env, method):
    cl = env.cluster()
    cands, totals = get_candidates_with_totals(cl, lambda c: method.should_disrupt(c, cl), method.disruption_class,
                                               build_nodepool_map(cl))
    method.set_nodepool_totals(totals)
    budgets = build_disruption_budget_mapping(cl.state.nodes, cl.nodepools.values(), cl.now, method.reason)
    return method.compute_commands(cl, budgets, cands), cl


def balanced_env(budget="100%"):
    env = Env()
    np = env.nodepools["default"]
    np.spec.disruption.consolidation_policy = "Balanced"
    np.spec.disruption.consolidate_after = "0s"
    np.spec.disruption.budgets = [Budget(nodes=budget)]
    return env


# upstream: balanced_integration_test.go Single-Node "should approve replacing an oversized node"
def test_single_node_approves_replacing_an_oversized_node():
    env = balanced_env()
    env.node("big", instance_type="arm-instance-type", capacity_type="on-demand")
    env.pod("p", "big", cpu="500m", owner_references=owner("ReplicaSet"))
    [cmd], cl = run_method(env, SingleNodeConsolidation())
    assert cmd.decision() == "replace"
    assert all(it.name != "arm-instance-type" for it in cmd.replacements[0].instance_type_options)
    approved = [m for r, o, m in cl.events if r == "ConsolidationApproved" and o == "node/big"]
    assert approved and "k: 2" in approved[0] and ">= threshold 0.50" in approved[0]


# upstream: balanced_integration_test.go Single-Node "should reject replacing a well-packed node"
def test_single_node_rejects_replacing_a_well_packed_node():
    env = balanced_env()
    env.node("small", instance_type="small-instance-type", capacity_type="on-demand")
    for i in range(2):
        env.pod(f"p{i}", "small", cpu="700m", owner_references=owner("ReplicaSet"))
    cmds, cl = run_method(env, SingleNodeConsolidation())
    assert cmds == [] and not [e for e in cl.events if e[0] == "ConsolidationApproved"]


# upstream: balanced_integration_test.go Multi-Node "should approve consolidating multiple underutilized nodes"
def test_multi_node_approves_consolidating_underutilized_nodes():
    env = balanced_env()
    for i in range(3):
        env.node(f"n{i}", instance_type="arm-instance-type", capacity_type="on-demand")
        env.pod(f"p{i}", f"n{i}", cpu="1", owner_references=owner("ReplicaSet"))
    [cmd], cl = run_method(env, MultiNodeConsolidation())
    assert len(cmd.candidates) >= 2
    assert any(r == "ConsolidationApproved" and o == "nodepool/default" for r, o, _ in cl.events)


# upstream: balanced_integration_test.go Budgets "should block disruption when budget is 0%"
def test_zero_percent_budget_blocks_balanced_consolidation():
    env = balanced_env("0%")
    env.node("big", instance_type="arm-instance-type", capacity_type="on-demand")
    env.pod("p", "big", cpu="500m", owner_references=owner("ReplicaSet"))
    cmds, _ = run_method(env, SingleNodeConsolidation())
    assert cmds == []


# A Balanced rejection in a real pool: nine light nodes and one heavy node of the same type; deleting the heavy one
# (its pods fit on the others) saves 10 % of the cost but causes most of the pool's disruption. Under
# WhenEmptyOrUnderutilized the same cluster consolidates the heavy node.
# upstream: balanced_integration_test.go Mixed-Policy "should apply scoring to Balanced pools while non-Balanced
# pools consolidate normally" (the same cluster under both policies)
@pytest.mark.parametrize("policy,consolidates_heavy", [("Balanced", False), ("WhenEmptyOrUnderutilized", True)])
def test_balanced_rejects_a_high_disruption_move_the_other_policy_takes(policy, consolidates_heavy):
    env = balanced_env()
    env.nodepools["default"].spec.disruption.consolidation_policy = policy
    for i in range(9):
        env.node(f"light{i}", instance_type="arm-instance-type", capacity_type="on-demand")
        env.pod(f"l{i}", f"light{i}", cpu="100m", owner_references=owner("ReplicaSet"))
    env.node("heavy", instance_type="arm-instance-type", capacity_type="on-demand")
    for i in range(40):
        env.pod(f"h{i}", "heavy", cpu="10m", owner_references=owner("ReplicaSet"))
    method = SingleNodeConsolidation()
    cmds, cl = run_method(env, method)
    names = [c.name for cmd in cmds for c in cmd.candidates]
    # light nodes go first either way (higher savings ratio); only the heavy node's fate differs
    assert names and names[0].startswith("light")
    heavy = Command([c for c in get_candidates_with_totals(cl, lambda c: c.name == "heavy", "graceful",
                                                           build_nodepool_map(cl))[0]])
    approved, per_pool = method.evaluator.approve_command(cl, heavy)
    assert approved is consolidates_heavy
    if policy == "Balanced":
        assert not per_pool["default"].approved()
        assert any(r == "ConsolidationScore" and o == "node/heavy" and "< threshold 0.50" in m
                   for r, o, m in cl.events)


# -------------------------------------------------- a Balanced pool on real prices (AWS provider, moto)

def _cookbook_run(policy):
    from pathlib import Path

    import yaml

    import karpy

    cookbook = Path(__file__).resolve().parents[2] / "examples" / "generation-preference"
    np = yaml.safe_load((cookbook / "01-one-nodepool" / "nodepool.yaml").read_text())
    np["spec"].setdefault("disruption", {}).update(consolidationPolicy=policy, consolidateAfter="0s")
    return karpy.simulate([np, cookbook / "common"], prices="2026-07-20", disruption=True, until="1h",
                          events=["5m scale deployment/web 40", "20m scale deployment/web 30"])


def test_balanced_declines_a_replace_that_saves_too_little_for_its_disruption_on_real_prices():
    """The cookbook's one-NodePool design, 40 web replicas scaled to 30: WhenEmptyOrUnderutilized replaces the big
    node with a cheaper one; under Balanced the same move saves 25 % of the pool's cost for 100 % of its disruption
    (score 0.25 < 1/k) and is declined, while the earlier delete (score 0.86) goes ahead in both."""
    default, balanced = _cookbook_run("WhenEmptyOrUnderutilized"), _cookbook_run("Balanced")
    moves = {name: [(d["method"], d["decision"]) for d in r.to_document()["disruptions"] if d["t"] >= 1200]
             for name, r in (("default", default), ("balanced", balanced))}
    assert ("single-node-consolidation", "replace") in moves["default"]
    assert moves["balanced"] == []
    first = [(d["decision"], d["t"]) for d in balanced.to_document()["disruptions"]]
    assert first and first[0] == next((d["decision"], d["t"]) for d in default.to_document()["disruptions"])
    events = [m for v in balanced.simulation.disruption.node_events.values() for (r, m) in v
              if r in ("ConsolidationApproved", "ConsolidationScore")]
    assert any(m.startswith("score ") and "< threshold 0.50 (k: 2" in m for m in events)
    assert any(">= threshold 0.50 (k: 2" in m for m in events)
    assert not any("Balanced" in w for w in balanced.to_document()["warnings"])
