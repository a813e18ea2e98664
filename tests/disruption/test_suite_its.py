"""More ports of pkg/controllers/disruption/suite_test.go and drift_test.go (core 2266468) on the
hand-built cluster of tests.disruption.harness (helpers shared with test_consolidation_its)."""

from __future__ import annotations

from karpy.api.builders import make_nodepool
from karpy.disruption.budgets import build_disruption_budget_mapping
from karpy.disruption.drift import Drift
from karpy.disruption.helpers import build_nodepool_map, get_candidates, simulate_scheduling
from karpy.disruption.types import GRACEFUL

from tests.disruption.test_consolidation_its import MOST_EXPENSIVE, env_, node, reconcile, rs_pod


def _start(env, cmd) -> None:
    """queue.StartCommand's effect on the cluster: candidates queued and marked for deletion."""
    for c in cmd.candidates:
        env.in_queue.add(c.name)
        env.marked.add(c.name)


# upstream: suite_test.go Simulate Scheduling "should allow pods on deleting nodes to reschedule to uninitialized nodes"
def test_candidate_pods_schedule_while_every_other_node_is_deleting():
    env = env_(consolidateAfter="Never")
    for i in range(10):
        node(env, f"node-{i}", allocatable={"cpu": "3", "pods": "100"})
    env.pod("pod", "node-0", cpu="2")
    env.marked.update(f"node-{i}" for i in range(1, 10))
    cl = env.cluster()
    [candidate] = [c for c in get_candidates(cl, lambda c: True, GRACEFUL, build_nodepool_map(cl)) if c.name == "node-0"]
    results = simulate_scheduling(cl, [candidate], consolidation=True)
    assert not isinstance(results, str)
    assert "default/pod" not in results.pod_errors
    assert len(results.new_nodeclaims) == 1  # every other node is deleting: a new NodeClaim takes it


# upstream: suite_test.go Simulate Scheduling "should allow multiple replace operations to happen successively"
def test_successive_drift_replacements_until_the_budget_is_used():
    env = env_(consolidateAfter="Never", budgets=[{"nodes": "3"}])
    env.nodepools["default"].spec.template.spec.requirements += make_nodepool(
        requirements=[("test-partition", "Exists")]).spec.template.spec.requirements
    for i in range(10):
        _, nc = node(env, f"node-{i}", allocatable={"cpu": "3", "pods": "100"}, drifted=True,
                     extra_labels={"test-partition": str(i)})
        nc.spec.expire_after = "5m"
        rs_pod(env, f"pod-{i}", f"node-{i}", cpu="100m", node_selector={"test-partition": str(i)})
    claims = 10
    for round_ in range(4):
        m, cmds, _ = reconcile(env)
        if round_ == 3:
            assert cmds == []  # three replacements in flight use the budget of 3: still 13 NodeClaims
            break
        [cmd] = cmds
        assert m.name == "drift" and cmd.decision() == "replace" and len(cmd.replacements) == 1
        [claim] = cmd.replacements
        part = claim.requirements.get("test-partition").values
        _start(env, cmd)
        claims += 1
        # ExpectNodeClaimDeployedAndStateUpdated: the replacement exists, not yet initialized
        node(env, f"replacement-{round_}", it=MOST_EXPENSIVE, initialized=False, consolidatable=False,
             allocatable={"cpu": "3", "pods": "100"}, extra_labels={"test-partition": sorted(part)[0]})
    assert claims == 13
    budgets = build_disruption_budget_mapping(env.cluster().state.nodes, env.nodepools.values(), env.now, "Drifted")
    assert budgets["default"] == 0


# upstream: drift_test.go Drift "should delete drifted nodes when they are empty and consolidatable"
def test_empty_consolidatable_drifted_node_is_deleted_by_drift():
    env = env_()
    node(env, "n", drifted=True)
    m, [cmd], cl = reconcile(env)
    assert m.name == "drift" and cmd.decision() == "delete" and [c.name for c in cmd.candidates] == ["n"]
    # karpenter_voluntary_disruption_eligible_nodes{reason="drifted"} == 1
    eligible = get_candidates(cl, lambda c: Drift().should_disrupt(c, cl), "eventual", build_nodepool_map(cl))
    assert [c.name for c in eligible] == ["n"]


# upstream: drift_test.go Drift "can replace drifted nodes with multiple nodes"
def test_drift_replaces_one_node_with_several():
    from karpy.cloudprovider.fake import FakeCloudProvider, new_instance_type
    from tests.disruption.harness import Env
    from tests.disruption.test_consolidation_its import offering

    current = new_instance_type("current-on-demand",
                                offerings=[offering("on-demand", "test-zone-1a", 0.5, available=False)])
    replacement = new_instance_type("replacement-on-demand", resources={"cpu": "3"},
                                    offerings=[offering("on-demand", "test-zone-1a", 0.3)])
    env = Env(FakeCloudProvider([current, replacement]))
    env.nodepools["default"].spec.disruption.budgets[0].nodes = "100%"
    env.node("n", instance_type="current-on-demand", zone="test-zone-1a", drifted=True, consolidatable=False,
             allocatable={"cpu": "8"})
    for i in range(3):
        rs_pod(env, f"pod-{i}", "n", cpu="2")
    m, [cmd], _ = reconcile(env)
    assert m.name == "drift" and cmd.decision() == "replace"
    # one 2-cpu pod per 3-cpu replacement: three NodeClaims replace the one
    assert len(cmd.replacements) == 3
    assert all({it.name for it in r.instance_type_options} == {"replacement-on-demand"} for r in cmd.replacements)
