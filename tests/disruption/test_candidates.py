"""Ports of pkg/controllers/disruption/suite_test.go "Candidate Filtering" and
"BuildDisruptionBudgetMapping" (NewCandidate, ValidateNodeDisruptable, ValidatePodsDisruptable,
the class x terminationGracePeriod rule)."""

from __future__ import annotations

from karpy.api.meta import LabelSelector, ObjectMeta
from karpy.api.poddisruptionbudget import PodDisruptionBudget, PodDisruptionBudgetSpec
from karpy.disruption.budgets import build_disruption_budget_mapping
from karpy.disruption.helpers import build_nodepool_map, get_candidates
from karpy.disruption.types import EVENTUAL, GRACEFUL, CandidateError, new_candidate
from tests.disruption.harness import Env, owner, ts

DND = {"karpenter.sh/do-not-disrupt": "true"}


def candidates(env, cls=GRACEFUL):
    rejected: dict[str, str] = {}
    cl = env.cluster()
    out = get_candidates(cl, lambda c: True, cls, build_nodepool_map(cl), rejected)
    return out, rejected, cl


def pdb(name="pdb", labels=None, **spec):
    return PodDisruptionBudget(metadata=ObjectMeta(name=name), spec=PodDisruptionBudgetSpec(
        selector=LabelSelector(match_labels=labels or {"app": "test"}), **spec))


# upstream: suite_test.go "should not consider candidates that have do-not-disrupt pods scheduled and no terminationGracePeriod"
def test_do_not_disrupt_pod_blocks():
    env = Env()
    env.node("n1")
    env.pod("p", "n1", annotations=DND)
    out, rejected, cl = candidates(env)
    assert out == []
    assert rejected["n1"] == 'pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/p)'
    assert ("DisruptionBlocked", "node/n1", 'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/p)') \
        in cl.events


# upstream: suite_test.go "should not consider candidates that have do-not-disrupt mirror pods scheduled"
# upstream: suite_test.go "should not consider candidates that have do-not-disrupt daemonset pods scheduled"
def test_do_not_disrupt_mirror_and_daemonset_pods_block():
    for kind, api in (("Node", "v1"), ("DaemonSet", "apps/v1")):
        env = Env()
        env.node("n1")
        env.pod("p", "n1", annotations=DND, owner_references=owner(kind, api))
        out, rejected, _ = candidates(env)
        assert out == [] and "do-not-disrupt" in rejected["n1"]


# upstream: suite_test.go "should consider candidates that have do-not-disrupt pods scheduled with a terminationGracePeriod set for eventual disruption"
# upstream: suite_test.go "should consider candidates that have PDB-blocked pods scheduled with a terminationGracePeriod set for eventual disruption"
def test_eventual_with_tgp_ignores_pod_blocks():
    env = Env()
    env.node("n1", tgp="300s")
    env.pod("p", "n1", annotations=DND)
    assert [c.name for c in candidates(env, EVENTUAL)[0]] == ["n1"]
    env = Env()
    env.node("n1", tgp="300s")
    env.pod("p", "n1", labels={"app": "test"})
    env.pdbs.append(pdb(max_unavailable=0))
    assert [c.name for c in candidates(env, EVENTUAL)[0]] == ["n1"]


# upstream: suite_test.go "should not consider candidates that have do-not-disrupt pods scheduled with a terminationGracePeriod set for graceful disruption"
# upstream: suite_test.go "should not consider candidates that have PDB-blocked pods scheduled with a terminationGracePeriod set for graceful disruption"
def test_graceful_with_tgp_still_blocked():
    env = Env()
    env.node("n1", tgp="300s")
    env.pod("p", "n1", annotations=DND)
    assert candidates(env, GRACEFUL)[0] == []
    env = Env()
    env.node("n1", tgp="300s")
    env.pod("p", "n1", labels={"app": "test"})
    env.pdbs.append(pdb(max_unavailable=0))
    out, rejected, _ = candidates(env, GRACEFUL)
    assert out == [] and rejected["n1"] == "pdb prevents pod evictions (PodDisruptionBudget=[default/pdb])"


# upstream: suite_test.go "should not consider candidates that have do-not-disrupt pods scheduled without a terminationGracePeriod set for eventual disruption"
# upstream: suite_test.go "should not consider candidates that have PDB-blocked pods scheduled without a terminationGracePeriod set for eventual disruption"
def test_eventual_without_tgp_blocked():
    env = Env()
    env.node("n1")
    env.pod("p", "n1", annotations=DND)
    assert candidates(env, EVENTUAL)[0] == []
    env = Env()
    env.node("n1")
    env.pod("p", "n1", labels={"app": "test"})
    env.pdbs.append(pdb(max_unavailable=0))
    assert candidates(env, EVENTUAL)[0] == []


# upstream: suite_test.go "should consider candidates that have do-not-disrupt terminating pods"
# upstream: suite_test.go "should consider candidates that have do-not-disrupt terminal pods"
def test_terminating_and_terminal_pods_do_not_block():
    env = Env()
    env.node("n1")
    p = env.pod("p", "n1", annotations=DND)
    p.metadata.deletion_timestamp = ts(env.now - 1)
    assert [c.name for c in candidates(env)[0]] == ["n1"]
    env = Env()
    env.node("n1")
    p = env.pod("p", "n1", annotations=DND)
    p.status.phase = "Succeeded"
    assert [c.name for c in candidates(env)[0]] == ["n1"]


# upstream: suite_test.go "should not consider candidates that have do-not-disrupt on nodes"
def test_node_do_not_disrupt_blocks_only_true():
    env = Env()
    env.node("n1", node_annotations=DND)
    env.node("n2", node_annotations={"karpenter.sh/do-not-disrupt": "false"})
    env.node("n3", node_annotations={"karpenter.sh/do-not-disrupt": "5m"})  # no duration form on nodes
    out, rejected, _ = candidates(env)
    assert [c.name for c in out] == ["n2", "n3"]
    assert rejected["n1"] == 'disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation'


# upstream: suite_test.go "should not consider candidates that have multiple PDBs on the same pod"
def test_multiple_pdbs_block():
    env = Env()
    env.node("n1")
    env.pod("p", "n1", labels={"app": "test"})
    env.pdbs += [pdb("pdb-1", max_unavailable=5), pdb("pdb-2", max_unavailable=5)]
    out, rejected, _ = candidates(env)
    assert out == []
    assert rejected["n1"] == ("eviction does not support multiple PDBs "
                              "(PodDisruptionBudget(s)=[default/pdb-1 default/pdb-2])")


# upstream: suite_test.go "should not consider candidates that have fully blocking PDBs"
# upstream: suite_test.go "should not consider candidates that have fully blocking PDBs on daemonset pods"
def test_fully_blocking_pdbs_block_incl_daemonset_pods():
    for refs in ([], owner("DaemonSet")):
        env = Env()
        env.node("n1")
        env.pod("p", "n1", labels={"app": "test"}, owner_references=refs)
        env.pdbs.append(pdb(max_unavailable=0))
        assert candidates(env)[0] == []


# upstream: suite_test.go "should consider candidates that have fully blocking PDBs on mirror pods"
# upstream: suite_test.go "should consider candidates that have fully blocking PDBs on terminal pods"
# upstream: suite_test.go "should consider candidates that have fully blocking PDBs on terminating pods"
def test_fully_blocking_pdbs_ignore_mirror_terminal_terminating_pods():
    for variant in ("mirror", "terminal", "terminating"):
        env = Env()
        env.node("n1")
        p = env.pod("p", "n1", labels={"app": "test"},
                    owner_references=owner("Node", "v1") if variant == "mirror" else [])
        if variant == "terminal":
            p.status.phase = "Failed"
        if variant == "terminating":
            p.metadata.deletion_timestamp = ts(env.now - 1)
        env.pdbs.append(pdb(max_unavailable=0))
        assert [c.name for c in candidates(env)[0]] == ["n1"], variant


# upstream: suite_test.go "should not consider candidates that have do-not-disrupt pods without a terminationGracePeriod set for graceful disruption"
# upstream: suite_test.go "should not consider candidates that have fully blocking PDBs without a terminationGracePeriod set for graceful disruption"
def test_graceful_without_tgp_blocked():
    env = Env()
    env.node("n1")
    env.pod("p", "n1", annotations=DND)
    env.node("n2")
    env.pod("q", "n2", labels={"app": "test"})
    env.pdbs.append(pdb(min_available="100%"))
    assert candidates(env)[0] == []


# upstream: suite_test.go "should not consider candidates that has just a Node representation"
# upstream: suite_test.go "should not consider candidate that has just a NodeClaim representation"
def test_node_or_nodeclaim_alone():
    env = Env()
    env.node("n1", with_claim=False)
    env.node("n2", with_node=False)
    out, rejected, _ = candidates(env)
    assert out == []
    assert rejected == {"n1": "node isn't managed by karpenter", "n2": "nodeclaim does not have an associated node"}


# upstream: suite_test.go "should not consider candidates that are nominated"
def test_nominated():
    env = Env()
    env.node("n1")
    env.nominated["n1"] = env.now + 20
    out, rejected, cl = candidates(env)
    assert out == [] and rejected["n1"] == "node is nominated for a pending pod"
    assert ("DisruptionBlocked", "node/n1", "Node is nominated for a pending pod") in cl.events
    env.nominated["n1"] = env.now  # the window has closed
    assert [c.name for c in candidates(env)[0]] == ["n1"]


# upstream: suite_test.go "should not consider candidates that are deleting"
# upstream: suite_test.go "should not consider candidates that are MarkedForDeletion"
def test_deleting_and_marked():
    env = Env()
    env.node("n1", deleting=True)
    env.node("n2")
    env.marked.add("n2")
    out, rejected, _ = candidates(env)
    assert out == []
    assert rejected == {"n1": "node is deleting or marked for deletion", "n2": "node is deleting or marked for deletion"}


# upstream: suite_test.go "should not consider candidates that aren't yet initialized"
def test_uninitialized():
    env = Env()
    env.node("n1", initialized=False)
    assert candidates(env)[1]["n1"] == "node isn't initialized"


# upstream: suite_test.go "should not consider candidates that are not owned by a NodePool (no karpenter.sh/nodepool label)"
# upstream: suite_test.go "should not consider candidates that are have a non-existent NodePool"
def test_nodepool_label_and_existence():
    env = Env()
    env.node("n1", pool=None)
    env.node("n2", pool="gone")
    out, rejected, cl = candidates(env)
    assert out == []
    assert rejected["n1"] == "node doesn't have required label (label=karpenter.sh/nodepool)"
    assert rejected["n2"] == "nodepool not found (NodePool=gone)"
    assert ("DisruptionBlocked", "node/n2", "NodePool not found (NodePool=gone)") in cl.events


# upstream: suite_test.go "should consider candidates that do not have the karpenter.sh/capacity-type label"
# upstream: suite_test.go "should consider candidates that do not have the topology.kubernetes.io/zone label"
# upstream: suite_test.go "should consider candidates that do not have the node.kubernetes.io/instance-type label"
# upstream: suite_test.go "should consider candidates that have an instance type that cannot be resolved"
def test_missing_price_labels_still_candidates():
    env = Env()
    env.node("n1", labels_drop=("karpenter.sh/capacity-type",))
    env.node("n2", labels_drop=("topology.kubernetes.io/zone",))
    env.node("n3", labels_drop=("node.kubernetes.io/instance-type",))
    env.node("n4", instance_type="made-up-type")
    out, _, _ = candidates(env)
    assert [c.name for c in out] == ["n1", "n2", "n3", "n4"]
    by = {c.name: c for c in out}
    assert by["n3"].instance_type is None and by["n4"].instance_type is None
    assert by["n1"].price == 0.0  # no offering matches an absent capacity type


# upstream: suite_test.go "should not consider candidates that are actively being processed in the queue"
def test_in_queue():
    env = Env()
    env.node("n1")
    env.in_queue.add("n1")
    assert candidates(env)[1]["n1"] == "candidate is already being disrupted"


def test_candidate_costs_and_emptiness():
    # types.go NewCandidate: RescheduleDisruptionCost = 1 + Σ max(0, EvictionCost) of reschedulable pods;
    # IsEmpty when no reschedulable pod has a positive cost (DaemonSet pods never count)
    env = Env()
    env.node("n1")
    env.pod("ds", "n1", owner_references=owner("DaemonSet"))
    env.node("n2")
    env.pod("cheap", "n2", annotations={"controller.kubernetes.io/pod-deletion-cost": "-2147483647"})
    env.node("n3")
    env.pod("a", "n3")
    env.pod("b", "n3")
    by = {c.name: c for c in candidates(env)[0]}
    assert by["n1"].is_empty() and by["n2"].is_empty() and not by["n3"].is_empty()
    assert by["n3"].reschedule_disruption_cost == 3.0
    assert by["n3"].price == env.instance_type("default-instance-type").offerings.compatible(
        __import__("karpy.scheduling.requirements", fromlist=["Requirements"]).Requirements.from_labels(
            {"karpenter.sh/capacity-type": "on-demand", "topology.kubernetes.io/zone": "test-zone-1"})).cheapest().price
    assert by["n3"].savings_ratio() == by["n3"].price / 3.0


# -- BuildDisruptionBudgetMapping ------------------------------------------------------------------
def _mapping(env, pool_budget="100%"):
    from karpy.api.nodepool import Budget

    env.nodepools["default"].spec.disruption.budgets = [Budget(nodes=pool_budget)]
    cl = env.cluster()
    return build_disruption_budget_mapping(cl.state.nodes, cl.nodepools.values(), cl.now, "Underutilized", cl.events)


# upstream: suite_test.go "should not consider nodes that are not managed as part of disruption count"
# upstream: suite_test.go "should not consider nodes that are not initialized as part of disruption count"
def test_unmanaged_and_uninitialized_not_counted():
    env = Env()
    for i in range(10):
        env.node(f"n{i}")
    env.node("unmanaged", with_claim=False, ready=False)
    env.node("uninit", initialized=False, ready=False)
    assert _mapping(env, "100%") == {"default": 10}


# upstream: suite_test.go "should not consider nodes that have the terminating status condition as part of disruption count"
def test_instance_terminating_not_counted():
    from karpy.api.meta import Condition

    env = Env()
    for i in range(10):
        env.node(f"n{i}")
    _, claim = env.node("term", ready=False)
    claim.status.conditions.append(Condition(type="InstanceTerminating", status="True"))
    assert _mapping(env, "100%") == {"default": 10}


# upstream: suite_test.go "should not return a negative disruption value"
def test_never_negative():
    env = Env()
    for i in range(10):
        env.node(f"n{i}", deleting=True)
    assert _mapping(env, "10%") == {"default": 0}


# upstream: suite_test.go "should consider nodes with a deletion timestamp set and MarkedForDeletion to the disruption count"
def test_deleting_and_marked_counted():
    env = Env()
    for i in range(10):
        env.node(f"n{i}")
    env.node("del", deleting=True)
    env.node("marked")
    env.marked.add("marked")
    assert _mapping(env, "100%") == {"default": 12 - 2}


# upstream: suite_test.go "should consider not ready nodes to the disruption count"
def test_not_ready_counted():
    env = Env()
    for i in range(10):
        env.node(f"n{i}", ready=i != 0)
    assert _mapping(env, "100%") == {"default": 9}


def test_blocking_budget_event():
    # events.go NodePoolBlockedForDisruptionReason when the raw budget is 0 and the pool has nodes
    env = Env()
    env.node("n1")
    env.nodepools["default"].spec.disruption.budgets = [__import__("karpy.api.nodepool", fromlist=["Budget"]).Budget(
        nodes="0")]
    cl = env.cluster()
    build_disruption_budget_mapping(cl.state.nodes, cl.nodepools.values(), cl.now, "Empty", cl.events)
    assert ("DisruptionBlocked", "nodepool/default",
            "No allowed disruptions for disruption reason Empty due to blocking budget") in cl.events


def test_new_candidate_returns_error_values():
    env = Env()
    env.node("n1", initialized=False)
    cl = env.cluster()
    out = new_candidate(cl.state.nodes[0], cl, GRACEFUL, build_nodepool_map(cl))
    assert isinstance(out, CandidateError) and out == "node isn't initialized"
