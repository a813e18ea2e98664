"""More ports of pkg/controllers/disruption/consolidation_test.go (core 2266468), on the hand-built
cluster of tests.disruption.harness and Karpenter's fake catalogue. Like upstream's suite (suite_test.go
BeforeEach) the catalogue is ``fake.InstanceTypesAssorted`` and the default NodePool disrupts away
(WhenEmptyOrUnderutilized, consolidateAfter 0s, budget 100%).

Events: upstream publishes each ``Unconsolidatable`` event on the Node *and* the NodeClaim
(disruptionevents.Unconsolidatable returns two); karpy records one per candidate (``node/NAME``), so
upstream's ``recorder.Calls`` counts are twice karpy's.
"""

from __future__ import annotations

from karpy.api.builders import make_nodepool
from karpy.cloudprovider.fake import FakeCloudProvider, instance_types_assorted
from karpy.disruption.budgets import build_disruption_budget_mapping
from karpy.disruption.drift import Drift
from karpy.disruption.emptiness import Emptiness
from karpy.disruption.helpers import build_nodepool_map, get_candidates
from karpy.disruption.multinodeconsolidation import MultiNodeConsolidation
from karpy.disruption.singlenodeconsolidation import SingleNodeConsolidation
from karpy.disruption.staticdrift import StaticDrift
from tests.disruption.harness import Env, owner

_ASSORTED = instance_types_assorted()


def _by_price(capacity_type: str) -> list:
    """suite_test.go BeforeEach: the types with an available offering of ``capacity_type``, cheapest
    first (stable, so ties keep catalogue order)."""
    its = [it for it in _ASSORTED if any(o.capacity_type == capacity_type for o in it.offerings.available())]
    return sorted(its, key=lambda it: it.offerings.cheapest().price)


ON_DEMAND = _by_price("on-demand")
SPOT = _by_price("spot")
MOST_EXPENSIVE, MOST_EXPENSIVE_SPOT = ON_DEMAND[-1], SPOT[-1]


def env_(**pool: object) -> Env:
    env = Env(FakeCloudProvider(instance_types_assorted()))
    env.nodepools["default"] = make_nodepool(disruption={"consolidateAfter": "0s", "budgets": [{"nodes": "100%"}],
                                                         **pool})
    return env


def node(env: Env, name: str, it=None, pool: str = "default", **kw):
    it = it or MOST_EXPENSIVE
    o = it.offerings[0]
    return env.node(name, instance_type=it.name, capacity_type=o.capacity_type, zone=o.zone, pool=pool, **kw)


def rs_pod(env: Env, name: str, node_name: str | None, cpu: str = "1", **kw):
    return env.pod(name, node_name, cpu=cpu, owner_references=owner("ReplicaSet"), labels={"app": "test"}, **kw)


def compute(env: Env, method):
    """BuildDisruptionBudgetMapping + GetCandidates + ComputeCommands, each pool with its own budgets."""
    cl = env.cluster()
    cands = get_candidates(cl, lambda c: method.should_disrupt(c, cl), method.disruption_class,
                           build_nodepool_map(cl))
    budgets = build_disruption_budget_mapping(cl.state.nodes, cl.nodepools.values(), cl.now, method.reason)
    return method.compute_commands(cl, budgets, cands), cl, budgets


def reconcile(env: Env):
    """One disruption-controller round as upstream's suite runs it (NewMethodsWithNopValidator:
    StaticDrift, Drift, Emptiness, multi-node, single-node): the first method with a command ends the
    round. Returns (method, commands, cluster)."""
    cl = env.cluster()
    pool_map = build_nodepool_map(cl)
    for m in (StaticDrift(), Drift(), Emptiness(), MultiNodeConsolidation(), SingleNodeConsolidation()):
        cands = get_candidates(cl, lambda c, m=m: m.should_disrupt(c, cl), m.disruption_class, pool_map)
        if not cands:
            continue
        budgets = build_disruption_budget_mapping(cl.state.nodes, cl.nodepools.values(), cl.now, m.reason)
        cmds = [c for c in m.compute_commands(cl, budgets, cands) if c.decision() != "no-op"]
        if cmds:
            return m, cmds, cl
    return None, [], cl


def unconsolidatable(cl) -> list[tuple[str, str]]:
    return [(o, m) for r, o, m in cl.events if r == "Unconsolidatable"]


# -- Events -----------------------------------------------------------------------------------------
# upstream: consolidation_test.go Events "should not fire an event for ConsolidationDisabled when the NodePool has consolidation set to WhenEmptyOrUnderutilized"
def test_no_consolidation_disabled_event_for_when_empty_or_underutilized():
    env = env_(consolidationPolicy="WhenEmptyOrUnderutilized")
    node(env, "n")
    _, _, cl = reconcile(env)
    assert unconsolidatable(cl) == []


# upstream: consolidation_test.go Events "should fire an event for ConsolidationDisabled when the NodePool has consolidation set to WhenEmpty"
def test_consolidation_disabled_event_for_when_empty():
    env = env_(consolidationPolicy="WhenEmpty", consolidateAfter="1m")
    node(env, "n")
    env.pod("p", "n")
    _, cmds, cl = reconcile(env)
    assert cmds == []
    # upstream: 4 calls = (multi-node, single-node) x (Node, NodeClaim)
    assert unconsolidatable(cl) == [("node/n", 'NodePool "default" has consolidation policy WhenEmpty, but node is '
                                               'not empty')] * 2


# upstream: consolidation_test.go Events "should fire an event for ConsolidationDisabled when the NodePool has consolidateAfter set to 'Never'"
def test_consolidation_disabled_event_for_never():
    env = env_(consolidateAfter="Never")
    node(env, "n")
    env.pod("p", "n")
    _, cmds, cl = reconcile(env)
    assert cmds == []
    # upstream: 6 calls = (Emptiness, multi-node, single-node) x (Node, NodeClaim)
    assert unconsolidatable(cl) == [("node/n", 'NodePool "default" has consolidation disabled')] * 3


# upstream: consolidation_test.go Events "should fire an event when a candidate does not have a resolvable instance type"
# upstream: consolidation_test.go Events "should fire an event when a candidate does not have the capacity type label"
# upstream: consolidation_test.go Events "should fire an event when a candidate does not have the zone label"
def test_unconsolidatable_events_for_missing_price_labels():
    for label, msg in (("node.kubernetes.io/instance-type", 'Instance Type "" not found'),
                       ("karpenter.sh/capacity-type", 'Node does not have label "karpenter.sh/capacity-type"'),
                       ("topology.kubernetes.io/zone", 'Node does not have label "topology.kubernetes.io/zone"')):
        env = env_()
        node(env, "n", labels_drop=(label,))
        env.pod("p", "n")
        _, cmds, cl = reconcile(env)
        assert cmds == []
        # upstream: 4 calls = (multi-node, single-node) x (Node, NodeClaim); none from Emptiness
        assert unconsolidatable(cl) == [("node/n", msg)] * 2, label


# -- Budgets ----------------------------------------------------------------------------------------
def _ten_pools(env: Env, nodes: str, pods: bool = False) -> None:
    """test.NodePools(10, ...) with 3 NodeClaims of the most expensive type each (Budgets context)."""
    for i in range(10):
        name = f"np-{i}"
        env.nodepools[name] = make_nodepool(name, disruption={"consolidateAfter": "0s", "budgets": [{"nodes": nodes}]})
        for j in range(3):
            node(env, f"{name}-n{j}", pool=name)
            if pods:
                rs_pod(env, f"{name}-p{j}", f"{name}-n{j}")


# upstream: consolidation_test.go Budgets "should allow 2 nodes from each nodePool to be deleted"
# upstream: consolidation_test.go Budgets "should allow all nodes from each nodePool to be deleted"
# upstream: consolidation_test.go Budgets "should allow no nodes from each nodePool to be deleted"
def test_empty_nodes_deleted_per_pool_budget():
    for nodes, allowed, deleted in (("50%", 2, 20), ("100%", 3, 30), ("0%", 0, 0)):
        env = env_()
        _ten_pools(env, nodes)
        m, cmds, cl = reconcile(env)
        budgets = build_disruption_budget_mapping(cl.state.nodes, cl.nodepools.values(), cl.now, "Empty")
        # karpenter_nodepools_allowed_disruptions: 50% of 3 rounds up to 2
        assert all(budgets[f"np-{i}"] == allowed for i in range(10)), nodes
        if deleted == 0:
            assert cmds == []
            continue
        [cmd] = cmds
        assert m.name == "emptiness" and cmd.decision() == "delete"
        assert len(cmd.candidates) == deleted  # 30 - deleted NodeClaims remain
        per_pool = {}
        for c in cmd.candidates:
            per_pool[c.nodepool.metadata.name] = per_pool.get(c.nodepool.metadata.name, 0) + 1
        assert set(per_pool.values()) == {allowed}


# upstream: consolidation_test.go Budgets "should not mark empty node consolidated if the candidates can't be disrupted due to budgets with one nodepool"
# upstream: consolidation_test.go Budgets "should not mark empty node consolidated if all candidates can't be disrupted due to budgets with many nodepools"
def test_emptiness_not_marked_consolidated_when_budget_blocked():
    one = env_(budgets=[{"nodes": "0%"}])
    for i in range(10):
        node(one, f"n{i}")
    many = env_()
    _ten_pools(many, "0%")
    for env in (one, many):
        m = Emptiness()
        cmds, _, _ = compute(env, m)
        assert cmds == []
        assert not m.is_consolidated(env.cluster())


# upstream: consolidation_test.go Budgets "should not mark multi node consolidated if the candidates can't be disrupted due to budgets with one nodepool"
# upstream: consolidation_test.go Budgets "should not mark multi node consolidated if all candidates can't be disrupted due to budgets with many nodepools"
# upstream: consolidation_test.go Budgets "should not mark single node consolidated if the candidates can't be disrupted due to budgets with one nodepool"
# upstream: consolidation_test.go Budgets "should not mark single node consolidated if all candidates can't be disrupted due to budgets with many nodepools"
def test_consolidation_not_marked_consolidated_when_budget_blocked():
    for method in (MultiNodeConsolidation, SingleNodeConsolidation):
        one = env_(budgets=[{"nodes": "0%"}])
        for i in range(10):
            node(one, f"n{i}")
            rs_pod(one, f"p{i}", f"n{i}")
        many = env_()
        _ten_pools(many, "0%", pods=True)
        for env in (one, many):
            m = method()
            cmds, _, _ = compute(env, m)
            assert cmds == []
            assert not m.is_consolidated(env.cluster()), method.__name__
    # the contrast: with budget left and nothing to do, the method is marked consolidated
    env = env_()
    node(env, "n", it=ON_DEMAND[0])
    rs_pod(env, "p", "n", cpu="100m")
    m = SingleNodeConsolidation()
    assert compute(env, m)[0] == [] and m.is_consolidated(env.cluster())


# -- Replace ----------------------------------------------------------------------------------------
def offering(ct: str, zone: str, price: float, available: bool = True):
    from karpy.cloudprovider.fake import _offering

    o = _offering(ct, zone, price)
    o.available = available
    return o


def spot_env(its, **pool) -> Env:
    env = Env(FakeCloudProvider(its))
    env.gates["SpotToSpotConsolidation"] = True  # consolidation_test.go BeforeEach turns the gate on
    env.nodepools["default"] = make_nodepool(disruption={"consolidateAfter": "0s", "budgets": [{"nodes": "100%"}]},
                                             **pool)
    return env


def eighteen_spot():
    """Replace Its: the first 18 spot types of the assorted catalogue priced 1.0, 1.1, ... 2.7, then
    the 17th forced to 0.001 (outside the 15 by position, cheapest by price)."""
    spot = [it for it in instance_types_assorted() if any(o.capacity_type == "spot" for o in it.offerings)][:18]
    for i, it in enumerate(spot):
        it.offerings[0].price = 1.0 + i * 0.1
    spot[16].offerings[0].price = 0.001
    return spot


def _single_spot_replacement(env: Env, it):
    node(env, "spot", it=it)
    rs_pod(env, "p", "spot", cpu="100m")
    m, cmds, _ = reconcile(env)
    return m, cmds


# upstream: consolidation_test.go Replace "cannot replace spot with spot if it is part of the 15 cheapest instance types."
def test_spot_to_spot_refused_within_the_15_cheapest():
    its = instance_types_assorted()[:20]
    its[0].offerings[0].price = 0.001
    its.sort(key=lambda it: it.offerings.cheapest().price)
    spot = [it for it in its if any(o.capacity_type == "spot" for o in it.offerings)]
    env = spot_env(its)
    m, cmds = _single_spot_replacement(env, spot[1])
    assert cmds == []  # no new NodeClaim, the candidate stays


# upstream: consolidation_test.go Replace "spot to spot consolidation should order the instance types by price before enforcing minimum flexibility."
# upstream: consolidation_test.go Replace "spot to spot consolidation should consider the default for truncation if minimum number of instanceTypeOptions from minValues in requirement is less than 15."
# upstream: consolidation_test.go Replace "spot to spot consolidation should consider the max of default and minimum number of instanceTypeOptions from minValues in requirement for truncation if minimum number of instanceTypeOptions from minValues in requirement is greater than 15."
def test_spot_to_spot_orders_by_price_then_truncates_to_max_of_15_and_min_values():
    for min_values, expected in ((None, 15), (10, 15), (16, 16)):
        spot = eighteen_spot()
        reqs = [] if min_values is None else [
            {"key": "node.kubernetes.io/instance-type", "operator": "Exists", "minValues": min_values}]
        env = spot_env(spot, requirements=reqs)
        m, [cmd] = _single_spot_replacement(env, spot[17])
        assert m.name == "multi-node-consolidation" or m.name == "single-node-consolidation"
        [claim] = cmd.replacements
        names = [it.name for it in claim.instance_type_options]
        cheapest = [it.name for it in sorted(spot, key=lambda it: it.offerings[0].price)[:expected]]
        assert len(names) == expected, min_values
        assert set(names) == set(cheapest)
        assert spot[16].name in names and spot[17].name not in names
        assert claim.requirements.get("karpenter.sh/capacity-type").values == frozenset({"spot"})


# upstream: consolidation_test.go Replace "should handle failing filterOutSameInstanceType correctly (without a panic) when minValues isn't satisfied"
def test_failing_filter_out_same_instance_type_with_min_values():
    from karpy.cloudprovider.fake import new_instance_type

    current = new_instance_type("current-on-demand", resources={"cpu": "5"},
                                offerings=[offering("on-demand", "test-zone-1a", 0.5)])
    other = new_instance_type("other-on-demand", resources={"cpu": "5"},
                              offerings=[offering("on-demand", "test-zone-1a", 0.4)])
    env = Env(FakeCloudProvider([current, other]))
    env.nodepools["default"] = make_nodepool(
        requirements=[{"key": "node.kubernetes.io/instance-type", "operator": "Exists", "minValues": 2},
                      ("karpenter.sh/capacity-type", "In", ["on-demand"])],
        disruption={"consolidateAfter": "0s", "budgets": [{"nodes": "100%"}]})
    for i in range(3):
        node(env, f"n{i}", it=current)
    for i, n in enumerate(("n0", "n1", "n2", "n2")):
        env.pod(f"p{i}", n, cpu="2")
    m, cmds, _ = reconcile(env)
    # multi-node's [n0, n1] -> {other} fails minValues after filterOutSameInstanceType; single-node
    # then deletes one node: 2 NodeClaims remain
    [cmd] = cmds
    assert cmd.decision() == "delete" and len(cmd.candidates) == 1


# upstream: consolidation_test.go Replace "won't replace node if any spot replacement is more expensive"
# upstream: consolidation_test.go Replace "won't replace on-demand node if on-demand replacement is more expensive"
def test_no_replacement_when_the_worst_launch_price_is_higher():
    from karpy.cloudprovider.fake import new_instance_type

    cases = [
        ([offering("spot", "test-zone-1a", 1.0), offering("spot", "test-zone-1b", 0.2),
          offering("spot", "test-zone-1c", 0.4)], ()),
        ([offering("on-demand", "test-zone-1a", 0.6), offering("on-demand", "test-zone-1b", 0.6),
          offering("spot", "test-zone-1b", 0.2), offering("spot", "test-zone-1c", 0.3)],
         (("karpenter.sh/capacity-type", "In", ["on-demand"]),)),
    ]
    for offs, reqs in cases:
        current = new_instance_type("current-on-demand",
                                    offerings=[offering("on-demand", "test-zone-1a", 0.5, available=False)])
        replacement = new_instance_type("replacement", offerings=offs)
        env = spot_env([current, replacement], requirements=list(reqs))
        node(env, "n", it=current)
        rs_pod(env, "p", "n", cpu="100m")
        _, cmds, cl = reconcile(env)
        assert cmds == []
        assert ("node/n", "Can't replace with a cheaper node") in unconsolidatable(cl)


# -- Delete -----------------------------------------------------------------------------------------
BIG = {"cpu": "32", "pods": "100"}
DND = "karpenter.sh/do-not-disrupt"


def delete_env(pod_annotations=(None, None, None), owned: bool = True, tgp: str | None = None,
               node1_annotations: dict | None = None, **pool) -> Env:
    """The Delete context: two NodeClaims of the cheapest on-demand type with 32 cpu / 100 pods
    allocatable; pods[0], pods[1] on nodes[0] and pods[2] on nodes[1]."""
    env = env_(**pool)
    node(env, "node-0", it=ON_DEMAND[0], allocatable=BIG, tgp=tgp)
    node(env, "node-1", it=ON_DEMAND[0], allocatable=BIG, tgp=tgp, node_annotations=node1_annotations)
    for i, (n, ann) in enumerate(zip(("node-0", "node-0", "node-1"), pod_annotations)):
        kw = {"annotations": ann} if ann else {}
        if owned:
            rs_pod(env, f"pod-{i}", n, cpu="100m", **kw)
        else:
            env.pod(f"pod-{i}", n, labels={"app": "test"}, **kw)
    return env


def deleted(env: Env) -> list[str]:
    """The NodeClaims the round's command deletes (empty when there is no command)."""
    _, cmds, _ = reconcile(env)
    return sorted(c.name for cmd in cmds for c in cmd.candidates if cmd.decision() == "delete")


# upstream: consolidation_test.go Delete "can delete nodes, when non-Karpenter capacity can fit pods"
def test_delete_onto_non_karpenter_capacity():
    env = env_()
    node(env, "node-0", it=ON_DEMAND[0], allocatable=BIG)
    env.node("unmanaged", pool=None, with_claim=False, allocatable=BIG, labels_drop=(
        "node.kubernetes.io/instance-type", "karpenter.sh/capacity-type", "karpenter.sh/registered",
        "karpenter.sh/initialized"))
    for i in range(3):
        rs_pod(env, f"pod-{i}", "node-0", cpu="100m")
    assert deleted(env) == ["node-0"]  # 0 NodeClaims, 1 Node (the unmanaged one) remain


# upstream: consolidation_test.go Delete "can delete nodes, considers karpenter.sh/do-not-disrupt set to true on nodes"
def test_delete_considers_do_not_disrupt_on_nodes():
    env = delete_env(node1_annotations={DND: "true"})
    assert deleted(env) == ["node-0"]  # node-1 cannot go; node-0's pods move onto it


# upstream: consolidation_test.go Delete "can delete nodes, considers karpenter.sh/do-not-disrupt set to true on pods"
def test_delete_considers_do_not_disrupt_on_pods():
    env = delete_env(pod_annotations=(None, None, {DND: "true"}))
    assert deleted(env) == ["node-0"]


# upstream: consolidation_test.go Delete "does not consolidate nodes with karpenter.sh/do-not-disrupt set to true on pods when the NodePool's TerminationGracePeriod is not nil"
# upstream: consolidation_test.go Delete "does not consolidate nodes with pods with blocking PDBs when the NodePool's TerminationGracePeriod is not nil"
def test_tgp_does_not_lift_pod_blocks_for_consolidation():
    from karpy.api.meta import LabelSelector, ObjectMeta
    from karpy.api.poddisruptionbudget import PodDisruptionBudget, PodDisruptionBudgetSpec

    env = delete_env(pod_annotations=({DND: "true"},) * 3, tgp="300s")
    assert deleted(env) == [] and reconcile(env)[1] == []
    env = delete_env(tgp="300s")
    env.pdbs.append(PodDisruptionBudget(metadata=ObjectMeta(name="pdb"), spec=PodDisruptionBudgetSpec(
        selector=LabelSelector(match_labels={"app": "test"}), max_unavailable=0)))
    assert reconcile(env)[1] == []  # 2 NodeClaims, 2 Nodes remain


# upstream: consolidation_test.go Delete "does not consolidate nodes with pods that have a duration-based do-not-disrupt annotation that is still active"
def test_active_duration_do_not_disrupt_protects_its_node():
    env = delete_env(pod_annotations=(None, None, {DND: "2m"}))
    from tests.disruption.harness import ts

    env.pods[2].status.start_time = ts(env.now)
    assert deleted(env) == ["node-0"]


# upstream: consolidation_test.go Delete "can consolidate nodes after duration-based do-not-disrupt annotation expires"
def test_consolidates_after_duration_do_not_disrupt_expires():
    from tests.disruption.harness import ts

    env = delete_env(pod_annotations=({DND: "2m"},) * 3)
    for p in env.pods:
        p.status.start_time = ts(env.now)
    assert reconcile(env)[1] == []
    env.now += 180  # env.Clock.Step(3 * time.Minute)
    [cmd] = reconcile(env)[1]
    assert cmd.decision() == "delete"


# upstream: consolidation_test.go Delete "can delete nodes, considers invalid do-not-disrupt annotation format as not blocking"
def test_invalid_do_not_disrupt_format_does_not_block():
    env = delete_env(pod_annotations=(None, None, {DND: "invalid-format"}))
    assert deleted(env) == ["node-1"]


# upstream: consolidation_test.go Delete "can delete nodes, evicts pods without an ownerRef"
def test_delete_evicts_pods_without_an_owner():
    env = delete_env(owned=False)
    assert deleted(env) == ["node-1"]


# upstream: consolidation_test.go Delete "won't delete node if it would require pods to schedule on an uninitialized node"
def test_no_delete_onto_an_uninitialized_node():
    env = env_()
    node(env, "node-0", it=ON_DEMAND[0], allocatable=BIG)
    node(env, "node-1", it=ON_DEMAND[0], allocatable=BIG, initialized=False)
    for i, n in enumerate(("node-0", "node-0", "node-1")):
        rs_pod(env, f"pod-{i}", n, cpu="100m")
    _, cmds, cl = reconcile(env)
    assert cmds == []
    msgs = [m for o, m in unconsolidatable(cl) if o == "node/node-0"]
    assert any("Not all pods would schedule" in m for m in msgs)
    assert any("would schedule against uninitialized nodeclaim/node-1, node/node-1" in m for m in msgs)


def _initialized_now(env: Env) -> None:
    from karpy.api.meta import Condition
    from tests.disruption.harness import ts

    for nc in env.claims:
        nc.status.conditions = [c for c in nc.status.conditions if c.type != "Initialized"] + [
            Condition(type="Initialized", status="True", last_transition_time=ts(env.now))]


# upstream: consolidation_test.go Delete "should not consolidate pods onto a destination node that is under its consolidateAfter window"
def test_destination_under_consolidate_after_window():
    env = delete_env(consolidateAfter="1m")
    _initialized_now(env)
    assert reconcile(env)[1] == []
    env.now += 120  # env.Clock.Step(2 * time.Minute)
    assert deleted(env) == ["node-1"]


# upstream: consolidation_test.go Delete "should consolidate pods onto a destination node with consolidateAfter set to Never"
def test_destination_with_consolidate_after_never_accepts_pods():
    env = env_()
    env.nodepools["destination"] = make_nodepool("destination", disruption={
        "consolidateAfter": "Never", "budgets": [{"nodes": "100%"}]})
    node(env, "node-0", it=ON_DEMAND[0], allocatable=BIG)
    node(env, "destination", it=ON_DEMAND[0], allocatable=BIG, pool="destination")
    rs_pod(env, "pod", "node-0", cpu="100m")
    _initialized_now(env)
    assert deleted(env) == ["node-0"]


# upstream: consolidation_test.go Delete "should replace a node with a cheaper one even when consolidateAfter has not expired"
def test_replace_even_when_consolidate_after_has_not_expired_for_the_new_node():
    env = env_(consolidateAfter="1m")
    node(env, "n", allocatable={"cpu": "32"})
    rs_pod(env, "p", "n")
    env.now += 120
    [cmd] = reconcile(env)[1]
    assert cmd.decision() == "replace" and [c.name for c in cmd.candidates] == ["n"]


# upstream: consolidation_test.go Delete "won't delete nodes if it would make a non-pending pod go pending"
def test_no_delete_that_would_strand_a_bound_pod():
    env = env_()
    node(env, "node-0", it=ON_DEMAND[0], allocatable=BIG, extra_labels={"foo": "1"})
    node(env, "node-1", it=ON_DEMAND[0], allocatable=BIG, extra_labels={"foo": "2"})
    for i, (n, v) in enumerate((("node-0", "1"), ("node-0", "1"), ("node-1", "2"))):
        rs_pod(env, f"pod-{i}", n, cpu="100m", node_selector={"foo": v})
    assert reconcile(env)[1] == []  # 2 NodeClaims, 2 Nodes remain


# upstream: consolidation_test.go Delete "can delete nodes while an invalid node pool exists"
def test_delete_while_an_invalid_nodepool_exists():
    env = delete_env()
    env.nodepools["bad-nodepool"] = make_nodepool("bad-nodepool", node_class_ref={"group": "karpenter.test.sh",
                                                                                  "kind": "TestNodeClass",
                                                                                  "name": "non-existent"})
    env.provider.errors_for_nodepool["bad-nodepool"] = RuntimeError("unable to fetch instance types")
    assert deleted(env) == ["node-1"]


# -- TTL (the 15 s validation) ------------------------------------------------------------------------
def validate(m, env: Env, cmd):
    """The validator the method runs after commandValidationDelay (NewMethodsWithRealValidator)."""
    from karpy.disruption.consolidation import COMMAND_VALIDATION_DELAY
    from karpy.disruption.validation import validate_consolidation, validate_emptiness

    env.now += COMMAND_VALIDATION_DELAY
    fn = validate_emptiness if m.name == "emptiness" else validate_consolidation
    return fn(m, env.cluster(), cmd)


def blocking_pdb():
    from karpy.api.meta import LabelSelector, ObjectMeta
    from karpy.api.poddisruptionbudget import PodDisruptionBudget, PodDisruptionBudgetSpec

    return PodDisruptionBudget(metadata=ObjectMeta(name="pdb"), spec=PodDisruptionBudgetSpec(
        selector=LabelSelector(match_labels={"app": "test"}), max_unavailable=0))


# upstream: consolidation_test.go TTL "should not consolidate if the action becomes invalid during the node TTL wait"
def test_empty_node_gains_a_do_not_disrupt_pod_during_the_wait():
    import pytest

    from karpy.disruption.validation import ChurnValidationError

    env = env_()
    node(env, "node-0", allocatable=BIG)
    m, [cmd], _ = reconcile(env)
    assert m.name == "emptiness" and [c.name for c in cmd.candidates] == ["node-0"]
    env.pod("dnd", "node-0", annotations={DND: "true"})
    with pytest.raises(ChurnValidationError, match="1 candidates are no longer valid"):
        validate(m, env, cmd)


# upstream: consolidation_test.go TTL "should not replace node if a pod schedules with a blocking PDB during the TTL wait"
# upstream: consolidation_test.go TTL "should not delete node if pods schedule with karpenter.sh/do-not-disrupt set to true during the TTL wait"
# upstream: consolidation_test.go TTL "should not delete node if pods schedule with a blocking PDB during the TTL wait"
def test_pods_that_block_arriving_during_the_wait_invalidate_the_command():
    import pytest

    from karpy.disruption.validation import ChurnValidationError

    # replace: one expensive node, a PDB-blocked pod binds during the wait
    env = env_()
    node(env, "n", allocatable={"cpu": "32"})
    env.pod("p", "n")
    m, [cmd], _ = reconcile(env)
    assert cmd.decision() == "replace"
    env.pod("blocked", "n", labels={"app": "test"})
    env.pdbs.append(blocking_pdb())
    with pytest.raises(ChurnValidationError):
        validate(m, env, cmd)
    # delete/merge of two nodes: do-not-disrupt pods, or PDB-blocked pods, bind to both during the wait
    for late in ("dnd", "pdb"):
        env = env_()
        for i in range(2):
            node(env, f"node-{i}", allocatable=BIG)
            env.pod(f"p{i}", f"node-{i}")
        m, [cmd], _ = reconcile(env)
        for i in range(2):
            if late == "dnd":
                env.pod(f"late{i}", f"node-{i}", annotations={DND: "true"})
            else:
                env.pod(f"late{i}", f"node-{i}", labels={"app": "test"})
        if late == "pdb":
            env.pdbs.append(blocking_pdb())
        with pytest.raises(ChurnValidationError):
            validate(m, env, cmd)


# -- Multi-NodeClaim, Node Lifetime, Topology -----------------------------------------------------------
# upstream: consolidation_test.go Multi-NodeClaim "can merge 3 nodes into 1 if the candidates have both spot and on-demand"
def test_merge_three_mixed_capacity_nodes_into_one():
    env = env_()
    node(env, "node-0", allocatable=BIG)
    node(env, "node-1", allocatable=BIG)
    node(env, "node-2", it=MOST_EXPENSIVE_SPOT, allocatable=BIG)
    for i in range(3):
        rs_pod(env, f"pod-{i}", f"node-{i}", cpu="100m")
    m, [cmd], _ = reconcile(env)
    assert m.name == "multi-node-consolidation"
    assert sorted(c.name for c in cmd.candidates) == ["node-0", "node-1", "node-2"]
    assert cmd.decision() == "replace" and len(cmd.replacements) == 1  # 1 NodeClaim remains


# upstream: consolidation_test.go Node Lifetime Consideration "should consolidate the node with best savings ratio first"
def test_best_savings_ratio_consolidates_first():
    from tests.disruption.harness import ts

    env = env_()
    env.nodepools["default"].spec.template.spec.expire_after = "3s"
    _, old = node(env, "node-0", it=ON_DEMAND[0], allocatable=BIG)
    _, new = node(env, "node-1", it=ON_DEMAND[0], allocatable=BIG)
    for nc, created in ((old, env.now - 2), (new, env.now)):  # node-0 is the oldest
        nc.spec.expire_after = "3s"
        nc.metadata.creation_timestamp = ts(created)
    for i, n in enumerate(("node-0", "node-0", "node-1")):
        rs_pod(env, f"pod-{i}", n, cpu="100m")
    assert deleted(env) == ["node-1"]  # one pod to move: the better price / disruption-cost ratio


def zonal_env() -> Env:
    """Topology Consideration BeforeEach: three 1-cpu NodeClaims, the cheapest in zones 1 and 3 and
    the most expensive in zone 2."""
    def in_zone(zone: str, cheapest: bool):
        its = [it for it in ON_DEMAND if any(o.zone == zone for o in it.offerings)]
        return its[0] if cheapest else its[-1]

    env = env_()
    for i, (zone, cheap) in enumerate((("test-zone-1", True), ("test-zone-2", False), ("test-zone-3", True))):
        node(env, f"node-{i}", it=in_zone(zone, cheap), allocatable={"cpu": "1"})
    return env


# upstream: consolidation_test.go Topology Consideration "can replace node maintaining zonal topology spread"
def test_replace_keeps_zonal_spread():
    from karpy.api.builders import topology_spread

    env = zonal_env()
    tsc = topology_spread("topology.kubernetes.io/zone", {"app": "test-zonal-spread"})
    for i in range(3):
        env.pod(f"pod-{i}", f"node-{i}", cpu="1", labels={"app": "test-zonal-spread"},
                owner_references=owner("ReplicaSet"), topology_spread_constraints=[tsc])
    m, [cmd], _ = reconcile(env)
    assert cmd.decision() == "replace" and [c.name for c in cmd.candidates] == ["node-1"]
    [claim] = cmd.replacements
    # the replacement stays in zone 2, so the spread stays (1, 1, 1)
    assert claim.requirements.get("topology.kubernetes.io/zone").values == frozenset({"test-zone-2"})


# upstream: consolidation_test.go Topology Consideration "won't delete node if it would violate pod anti-affinity"
def test_no_delete_that_would_violate_pod_anti_affinity():
    from karpy.api.builders import pod_affinity_term

    env = env_()
    zone2 = next(it for it in ON_DEMAND if any(o.zone == "test-zone-2" for o in it.offerings))
    # upstream gives each node 1 cpu, so nothing could move even without the anti-affinity; with 2 cpu
    # a delete would be possible, and only the anti-affinity prevents it
    node(env, "node-0", it=ON_DEMAND[0], allocatable={"cpu": "2", "pods": "100"})
    node(env, "node-1", it=zone2, allocatable={"cpu": "2", "pods": "100"})
    node(env, "node-2", it=ON_DEMAND[0], allocatable={"cpu": "2", "pods": "100"})
    for i in range(3):
        env.pod(f"pod-{i}", f"node-{i}", cpu="1", labels={"app": "test"}, owner_references=owner("ReplicaSet"),
                pod_anti_affinity=[pod_affinity_term({"app": "test"})])
    assert reconcile(env)[1] == []  # all three NodeClaims remain


# -- Preferences, MinValuesPolicy, Static NodePool ------------------------------------------------------
# upstream: consolidation_test.go Preferences "should consolidate a node through deletion when ignoring preferences"
def test_delete_when_ignoring_preferences():
    from karpy.api.builders import pod_affinity_term
    from karpy.api.pod import WeightedPodAffinityTerm

    env = env_()
    env.provisioner_options["preference_policy"] = "Ignore"
    for i in range(2):
        node(env, f"node-{i}", it=ON_DEMAND[0], allocatable={"cpu": "5", "pods": "100"})
    anti = [WeightedPodAffinityTerm(weight=1, pod_affinity_term=pod_affinity_term({"app": "foo"}))]
    for i, n in enumerate(("node-0", "node-0", "node-1")):
        env.pod(f"pod-{i}", n, labels={"app": "foo"}, pod_anti_affinity_preferences=anti)
    assert deleted(env) == ["node-1"]


# upstream: consolidation_test.go Preferences "should consolidate a node through replacement when ignoring preferences"
def test_replace_when_ignoring_preferences():
    env = env_()
    env.provisioner_options["preference_policy"] = "Ignore"
    node(env, "n", allocatable={"cpu": "32"})
    env.pod("p", "n", labels={"app": "foo"},
            node_preferences=[("node.kubernetes.io/instance-type", "In", [MOST_EXPENSIVE.name])])
    [cmd] = reconcile(env)[1]
    [claim] = cmd.replacements
    assert cmd.decision() == "replace"
    assert MOST_EXPENSIVE.name not in {it.name for it in claim.instance_type_options}


# upstream: consolidation_test.go MinValuesPolicy "should not consolidate a node by relaxing min values when policy is set to BestEffort"
def test_best_effort_min_values_is_not_relaxed_for_consolidation():
    env = Env(FakeCloudProvider([ON_DEMAND[0], MOST_EXPENSIVE]))
    env.provisioner_options["min_values_policy"] = "BestEffort"
    node(env, "n", pool="min-values", allocatable={"cpu": "5", "pods": "100"})
    # the only NodePool (upstream applies just this one)
    env.nodepools = {"min-values": make_nodepool("min-values", weight=100, requirements=[
        {"key": "node.kubernetes.io/instance-type", "operator": "In",
         "values": [it.name for it in _ASSORTED], "minValues": 3}],  # the catalogue before it shrinks to 2
        disruption={"consolidateAfter": "0s", "budgets": [{"nodes": "100%"}]})}
    env.pod("p", "n")
    _, cmds, cl = reconcile(env)
    assert cmds == []  # the NodeClaim and Node stay
    # upstream: 2 events (Node, NodeClaim) from single-node consolidation
    msgs = [m for o, m in unconsolidatable(cl) if o == "node/n"]
    [msg] = msgs
    assert "minValues requirement is not met for label(s) (label(s)=[node.kubernetes.io/instance-type])" in msg


# upstream: consolidation_test.go Static NodePool "should not consolidate static NodePool nodes"
def test_static_nodepool_nodes_are_not_consolidated():
    env = env_()
    env.nodepools["static"] = make_nodepool("static", replicas=2)
    for i in range(2):
        env.node(f"static-{i}", pool="static", allocatable={"cpu": "10", "memory": "1000Mi", "pods": "2"})
    m, cmds, cl = reconcile(env)
    assert cmds == []  # both NodeClaims remain
    budgets = build_disruption_budget_mapping(cl.state.nodes, cl.nodepools.values(), cl.now, "Underutilized")
    assert budgets["static"] > 0  # not held back by a budget: the method filter rejects them


# -- Budgets (one NodePool of ten nodes) ----------------------------------------------------------------
# upstream: consolidation_test.go Budgets "should allow all empty nodes to be disrupted"
# upstream: consolidation_test.go Budgets "should allow no empty nodes to be disrupted"
# upstream: emptiness_test.go Budgets "should only allow 3 empty nodes to be disrupted"
def test_empty_nodes_of_one_pool_per_budget():
    for nodes, allowed in (("100%", 10), ("0%", 0), ("30%", 3)):
        env = env_(budgets=[{"nodes": nodes}])
        for i in range(10):
            node(env, f"n{i}", it=ON_DEMAND[0] if nodes == "30%" else MOST_EXPENSIVE, allocatable=BIG)
        m, cmds, cl = reconcile(env)
        assert build_disruption_budget_mapping(cl.state.nodes, cl.nodepools.values(), cl.now, "Empty")["default"] \
            == allowed
        if allowed == 0:
            assert cmds == []  # all 10 NodeClaims remain
        else:
            [cmd] = cmds
            assert m.name == "emptiness" and len(cmd.candidates) == allowed  # 10 - allowed remain


# upstream: consolidation_test.go Budgets "should only allow 3 nodes to be deleted in single node consolidation delete"
def test_single_node_deletes_stop_at_the_budget_with_commands_in_flight():
    env = env_(budgets=[{"nodes": "30%"}])
    for i in range(10):
        node(env, f"n{i}", allocatable=BIG)
        rs_pod(env, f"p{i}", f"n{i}", cpu="15")
    started = []
    for _ in range(5):  # five disruption rounds; started commands stay in the queue
        m, cmds, _ = reconcile(env)
        for cmd in cmds:
            # multi-node consolidation acts first here (all three within the budget at once), as upstream's
            # NopValidator order does; the It only counts what remains
            assert cmd.decision() == "delete"
            for c in cmd.candidates:
                env.in_queue.add(c.name)
                env.marked.add(c.name)  # queue.StartCommand marks the candidates for deletion
                started.append(c.name)
    assert len(started) == 3  # 7 NodeClaims remain


# upstream: emptiness_test.go Emptiness "can delete empty nodes"
# upstream: emptiness_test.go Emptiness "should ignore nodes with the consolidatable status condition set to false"
def test_emptiness_deletes_an_empty_node_unless_consolidatable_is_false():
    from karpy.api.meta import Condition

    env = env_()
    node(env, "n", allocatable=BIG)
    m, [cmd], _ = reconcile(env)
    assert m.name == "emptiness" and [c.name for c in cmd.candidates] == ["n"]
    env = env_()
    _, nc = node(env, "n", allocatable=BIG)
    nc.status.conditions = [c for c in nc.status.conditions if c.type != "Consolidatable"] + [
        Condition(type="Consolidatable", status="False", reason="NotEmpty")]
    assert reconcile(env)[1] == []


# upstream: emptiness_test.go "considers pending pods when consolidating"
def test_pending_pods_count_in_the_consolidation_simulation():
    # the cheapest 64-cpu type (on-demand: upstream's unstable sort may pick either capacity type at equal
    # price, and a spot one could not be replaced at all with SpotToSpotConsolidation off)
    large = next(it for it in ON_DEMAND if it.capacity["cpu"] >= 64 * 10**9)
    env = env_()
    node(env, "n", it=large, allocatable={"cpu": "64", "pods": "110"})
    env.pod("p", "n", cpu="1")
    env.pod("unsched", None, cpu="62")
    assert reconcile(env)[1] == []  # the NodeClaim stays: a replacement must also hold the 62-cpu pod
    env.pods.pop()  # without the pending pod the node would be replaced by a smaller one
    [cmd] = reconcile(env)[1]
    assert cmd.decision() == "replace"


# -- Replace tables (each Entry: "if the candidate is on-demand node" / "if the candidate is spot node") --
def replace_env(spot_to_spot: bool):
    """consolidation_test.go BeforeEach: ``nodeClaim`` (the most expensive on-demand type) or
    ``spotNodeClaim`` (the most expensive spot type), 32 cpu allocatable, gate on."""
    env = env_()
    env.gates["SpotToSpotConsolidation"] = True
    it = MOST_EXPENSIVE_SPOT if spot_to_spot else MOST_EXPENSIVE
    node(env, "candidate", it=it, allocatable={"cpu": "32"})
    return env, it


def pdb(namespace: str = "default", **spec):
    from karpy.api.meta import LabelSelector, ObjectMeta
    from karpy.api.poddisruptionbudget import PodDisruptionBudget, PodDisruptionBudgetSpec

    return PodDisruptionBudget(metadata=ObjectMeta(name="pdb", namespace=namespace), spec=PodDisruptionBudgetSpec(
        selector=LabelSelector(match_labels={"app": "test"}), max_unavailable=0, **spec))


def _replaced(env: Env, it) -> bool:
    """One replace command for the candidate whose options exclude the candidate's own type."""
    _, cmds, _ = reconcile(env)
    if len(cmds) != 1 or cmds[0].decision() != "replace":
        return False
    [cmd] = cmds
    [claim] = cmd.replacements
    return [c.name for c in cmd.candidates] == ["candidate"] and it.name not in {
        o.name for o in claim.instance_type_options}


ENTRIES = [False, True]  # Entry("if the candidate is on-demand node", false), Entry("if the candidate is spot node", true)


# upstream: consolidation_test.go Replace DescribeTable "can replace nodes if another nodePool returns no instance types"
def test_replace_when_another_nodepool_returns_no_instance_types():
    for spot in ENTRIES:
        env, it = replace_env(spot)
        rs_pod(env, "p", "candidate", cpu="100m")
        env.nodepools["nodepool-2"] = make_nodepool("nodepool-2")
        env.provider.instance_types_for_nodepool["nodepool-2"] = []
        assert _replaced(env, it), spot


# upstream: consolidation_test.go Replace DescribeTable "can replace nodes, considers PDB policy"
def test_replace_evicts_unhealthy_pods_under_an_always_allow_pdb():
    from karpy.api.pod import PodCondition

    for spot in ENTRIES:
        env, it = replace_env(spot)
        for i in range(3):
            p = rs_pod(env, f"pod-{i}", "candidate", cpu="100m")
            p.status.conditions = [PodCondition(type="Ready", status="False")]
        env.pdbs.append(pdb(unhealthy_pod_eviction_policy="AlwaysAllow"))
        assert _replaced(env, it), spot
        env.pdbs[0].spec.unhealthy_pod_eviction_policy = None  # the contrast: the PDB blocks again
        assert reconcile(env)[1] == []


# upstream: consolidation_test.go Replace DescribeTable "can replace nodes, PDB namespace must match"
def test_replace_ignores_a_pdb_in_another_namespace():
    for spot in ENTRIES:
        env, it = replace_env(spot)
        rs_pod(env, "p", "candidate", cpu="100m")
        env.pdbs.append(pdb(namespace="other-namespace"))
        assert _replaced(env, it), spot


# upstream: consolidation_test.go Replace DescribeTable "can replace nodes, considers karpenter.sh/do-not-disrupt set to true on nodes"
# upstream: consolidation_test.go Replace DescribeTable "can replace nodes, considers karpenter.sh/do-not-disrupt set to true on pods"
def test_replace_skips_the_node_or_pod_that_does_not_disrupt():
    for where in ("node", "pod"):
        for spot in ENTRIES:
            env, it = replace_env(spot)
            other = MOST_EXPENSIVE_SPOT if spot else MOST_EXPENSIVE
            node(env, "other", it=other, allocatable={"cpu": "5", "pods": "100"},
                 node_annotations={DND: "true"} if where == "node" else None)
            rs_pod(env, "pod-0", "candidate", cpu="2")
            rs_pod(env, "pod-1", "candidate", cpu="2")
            rs_pod(env, "pod-2", "other", cpu="2", annotations={DND: "true"} if where == "pod" else None)
            # the candidate is replaced; the protected NodeClaim stays (2 NodeClaims remain)
            assert _replaced(env, it), (where, spot)


# upstream: consolidation_test.go Replace DescribeTable "Consolidation should fail if filterByPrice breaks the minimum requirement from the NodePools."
def test_no_replacement_when_the_price_filter_breaks_min_values():
    # upstream applies and binds spotNode/spotNodeClaim in both Entries (the on-demand Entry only appends
    # on-demand types to the catalogue), so both Entries consolidate the spot candidate
    env = env_(budgets=[{"nodes": "100%"}])
    env.gates["SpotToSpotConsolidation"] = True
    env.nodepools["default"].spec.template.spec.requirements = make_nodepool(requirements=[
        {"key": "node.kubernetes.io/instance-type", "operator": "Exists", "minValues": 16}]
    ).spec.template.spec.requirements
    # the 16th of the first 18 spot types: only 15 are cheaper
    node(env, "candidate", it=SPOT[:18][15], allocatable={"cpu": "32"})
    rs_pod(env, "p", "candidate", cpu="100m")
    _, cmds, cl = reconcile(env)
    assert cmds == []  # the NodeClaim and Node stay
    assert ("node/candidate", "Filtering by price: minValues requirement is not met for label(s) "
                              "(label(s)=[node.kubernetes.io/instance-type])") in unconsolidatable(cl)


# -- Metrics: invalidated commands (validation_test.go's validators change the cluster mid-wait) ----------
def _invalidate(env: Env, how: str) -> None:
    """validation_test.go blockingBudget / churn / nominated."""
    if how == "budget":
        env.nodepools["default"].spec.disruption.budgets = make_nodepool(
            disruption={"budgets": [{"nodes": "0%"}]}).spec.disruption.budgets
    elif how == "churn":
        first = sorted(n.metadata.name for n in env.nodes)[0]
        rs_pod(env, "churn", first, cpu="100m")
        env.nominated[first] = env.now + 100
    else:
        for n in env.nodes:
            env.nominated[n.metadata.name] = env.now + 100


INVALIDATIONS = {  # Entry -> the ValidationError kind karpy reports (upstream: the failed-validations metric)
    "budget": "budget",  # Entry("when a candidate is blocked by budgets", ...)
    "churn": "churn",  # Entry("when candidates are filtered out due to pod churn", ...)
    "nominated": "churn",  # Entry("when candidates are filtered out due to candidate being nominated", ...)
}


# upstream: consolidation_test.go Metrics DescribeTable "should correctly report invalidated commands for emptiness disruption"
# upstream: consolidation_test.go Metrics DescribeTable "should correctly report invalidated commands for multi node disruption"
# upstream: consolidation_test.go Metrics DescribeTable "should correctly report invalidated commands for single node disruption"
def test_invalidated_commands_are_reported_and_not_marked_consolidated():
    import pytest

    from karpy.disruption.validation import ValidationError

    def emptiness():
        env = env_()
        node(env, "node-0", allocatable={"cpu": "32"})
        return env, Emptiness()

    def multi():
        env = env_()
        node(env, "node-0", allocatable={"cpu": "32"})
        node(env, "node-1", allocatable={"cpu": "1"})
        rs_pod(env, "pod-0", "node-0", cpu="100m")
        rs_pod(env, "pod-1", "node-1", cpu="100m")
        return env, MultiNodeConsolidation()

    def single():
        env = env_()
        node(env, "node-0", allocatable={"cpu": "32"})
        rs_pod(env, "pod", "node-0", cpu="100m")
        return env, SingleNodeConsolidation()

    for setup in (emptiness, multi, single):
        for how, kind in INVALIDATIONS.items():
            env, m = setup()
            [cmd], _, _ = compute(env, m)
            _invalidate(env, how)
            with pytest.raises(ValidationError) as err:
                validate(m, env, cmd)
            assert err.value.kind == kind, (setup.__name__, how)
            assert not m.is_consolidated(env.cluster())


# -- Multi-NodeClaim tables with the real validator ------------------------------------------------------
# upstream: consolidation_test.go Multi-NodeClaim DescribeTable "should consolidate multiple empty nodes via multi-nodeclaim consolidation"
def test_three_empty_nodes_go_in_one_command():
    for it in (MOST_EXPENSIVE, MOST_EXPENSIVE_SPOT):  # the two Entries
        env = env_()
        for i in range(3):
            node(env, f"node-{i}", it=it, allocatable=BIG)
            rs_pod(env, f"pod-{i}", None, cpu="100m")  # applied, never bound: the nodes are empty
        m, [cmd], _ = reconcile(env)
        assert cmd.decision() == "delete" and len(cmd.candidates) == 3
        assert [c.name for c in validate(m, env, cmd).candidates] == ["node-0", "node-1", "node-2"]  # 0 remain


# upstream: consolidation_test.go Multi-NodeClaim DescribeTable "should continue to single nodeclaim consolidation when multi-nodeclaim consolidation fails validation after the node ttl"
def test_single_node_runs_after_multi_node_fails_validation():
    import pytest

    from karpy.disruption.validation import ValidationError

    for it in (MOST_EXPENSIVE, MOST_EXPENSIVE_SPOT):
        env = env_()
        env.gates["SpotToSpotConsolidation"] = True
        for i in range(3):
            node(env, f"node-{i}", it=it, allocatable=BIG)
            rs_pod(env, f"pod-{i}", f"node-{i}", cpu="100m")
        multi = MultiNodeConsolidation()
        [cmd], _, _ = compute(env, multi)
        assert len(cmd.candidates) == 3
        env.pod("extra-0", "node-0", cpu="1")  # two pods bind during the wait
        env.pod("extra-1", "node-1", cpu="1")
        with pytest.raises(ValidationError):
            validate(multi, env, cmd)
        single = SingleNodeConsolidation()
        [cmd], _, _ = compute(env, single)
        assert [c.name for c in cmd.candidates] == ["node-2"]
        assert validate(single, env, cmd) is cmd  # 2 NodeClaims remain


# -- eligible nodes (karpenter_voluntary_disruption_eligible_nodes = the method's candidates) --------------
def eligible(env: Env, method) -> list[str]:
    cl = env.cluster()
    return [c.name for c in get_candidates(cl, lambda c: method.should_disrupt(c, cl), method.disruption_class,
                                           build_nodepool_map(cl))]


# upstream: consolidation_test.go Metrics "should correctly report eligible nodes"
def test_eligible_nodes_for_underutilized():
    env = env_()
    node(env, "n", allocatable={"cpu": "32"})
    p = env.pod("p", "n", annotations={DND: "true"})
    assert eligible(env, SingleNodeConsolidation()) == []  # {reason="underutilized"} == 0
    p.metadata.annotations = {}
    assert eligible(env, SingleNodeConsolidation()) == ["n"]  # == 1


# upstream: emptiness_test.go Metrics "should correctly report eligible nodes"
def test_eligible_nodes_for_empty():
    env = env_()
    node(env, "n", it=SPOT[0], allocatable=BIG)
    env.pod("p", "n")
    assert eligible(env, Emptiness()) == []  # {reason="empty"} == 0
    env.pods.clear()  # ExpectDeleted(pod)
    assert eligible(env, Emptiness()) == ["n"]  # == 1


# upstream: consolidation_test.go Delete "does not delete nodes with pod churn, deletes nodes without pod churn"
def test_emptiness_validation_keeps_the_nodes_without_churn():
    env = env_()
    node(env, "node-0", it=ON_DEMAND[0], allocatable=BIG)
    node(env, "node-1", it=ON_DEMAND[0], allocatable=BIG)
    m = Emptiness()
    [cmd], _, _ = compute(env, m)
    assert len(cmd.candidates) == 2
    _invalidate(env, "churn")  # a pod binds to node-0, which is nominated
    kept = validate(m, env, cmd)
    assert [c.name for c in kept.candidates] == ["node-1"] and kept.decision() == "delete"
    assert not m.is_consolidated(env.cluster())


# upstream: consolidation_test.go Delete "should consider initialized nodes before uninitialized nodes"
def test_initialized_destinations_are_used_before_uninitialized_ones():
    from karpy.cloudprovider.fake import new_instance_type

    default = new_instance_type("default-instance-type", resources={"cpu": "3", "memory": "3Gi", "pods": "110"})
    small = new_instance_type("small-instance-type", resources={"cpu": "1", "memory": "1Gi", "pods": "10"})
    env = Env(FakeCloudProvider([default, small]))
    env.nodepools["default"] = make_nodepool(disruption={"consolidateAfter": "0s", "budgets": [{"nodes": "100%"}]})
    alloc = {"cpu": "3", "memory": "3Gi", "pods": "100"}
    for i in range(100):
        # one of them (upstream: a random one; here the first by name, so order alone cannot hide it) is never
        # initialized
        env.node(f"node-{i:03d}", instance_type=default.name, allocatable=alloc, initialized=i != 0,
                 consolidatable=i != 0)
        rs_pod(env, f"pod-{i:03d}", f"node-{i:03d}", requests={"cpu": "2", "memory": "2Gi"})
    env.node("consolidatable", instance_type=small.name, allocatable={"cpu": "1", "memory": "1Gi", "pods": "100"})
    rs_pod(env, "consolidatable-pod", "consolidatable", requests={"cpu": "1", "memory": "1Gi"})
    m, cmds, cl = reconcile(env)
    [cmd] = cmds
    assert [c.name for c in cmd.candidates] == ["consolidatable"] and cmd.decision() == "delete"
    assert not any("would schedule against uninitialized nodeclaim" in msg for _, msg in unconsolidatable(cl))


# upstream: consolidation_test.go Replace DescribeTable "can replace nodes, considers PDB"
def test_no_replacement_when_a_pdb_blocks_the_candidates_pods():
    for spot in ENTRIES:
        env, _ = replace_env(spot)
        for i in range(3):
            rs_pod(env, f"pod-{i}", "candidate", cpu="100m")
        env.pdbs.append(pdb())
        _, cmds, _ = reconcile(env)
        assert cmds == [], spot  # the NodeClaim and Node stay


# upstream: consolidation_test.go Delete "can delete nodes, considers PDB"
def test_delete_the_node_whose_pods_no_pdb_blocks():
    env = env_()
    node(env, "node-0", it=ON_DEMAND[0], allocatable=BIG)
    node(env, "node-1", it=ON_DEMAND[0], allocatable=BIG)
    env.pod("pod-0", "node-0", owner_references=owner("ReplicaSet"))
    env.pod("pod-1", "node-0", owner_references=owner("ReplicaSet"))
    rs_pod(env, "pod-2", "node-1", cpu="100m")  # labelled app=test: the PDB covers only this one
    env.pdbs.append(pdb())
    assert deleted(env) == ["node-0"]  # without the PDB node-1 would go (see "can delete nodes")


# upstream: emptiness_test.go Budgets "should allow all nodes from each nodePool to be deleted"
def test_emptiness_deletes_every_empty_node_of_ten_when_empty_pools():
    env = env_()
    for i in range(10):
        name = f"np-{i}"
        env.nodepools[name] = make_nodepool(name, disruption={
            "consolidateAfter": "30s", "consolidationPolicy": "WhenEmpty", "budgets": [{"nodes": "100%"}]})
        for j in range(3):
            node(env, f"{name}-n{j}", it=ON_DEMAND[0], pool=name, allocatable=BIG)  # Consolidatable=True
    m, [cmd], _ = reconcile(env)
    assert m.name == "emptiness" and len(cmd.candidates) == 30  # 0 NodeClaims remain
