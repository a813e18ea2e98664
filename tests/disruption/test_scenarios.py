"""Disruption scenarios end to end: kube-scheduler model + provisioner + disruption controller on
the fake cloud provider (Karpenter's fake catalogue: the small/default/arm... types and prices
upstream's disruption suites use). Each names the upstream It whose behaviour it reproduces."""

from __future__ import annotations

from karpy.api.builders import make_deployment, make_nodepool, make_pod
from karpy.api.loader import load_manifests
from karpy.api.meta import LabelSelector, ObjectMeta
from karpy.api.poddisruptionbudget import PodDisruptionBudget, PodDisruptionBudgetSpec
from karpy.cloudprovider.fake import FakeCloudProvider
from karpy.sim.simulation import SimulationOptions
from karpy.simulator import new_simulation

OD = [("karpenter.sh/capacity-type", "In", ["on-demand"])]


def build(objects, until=900.0, gates=None, pool=None):
    m = load_manifests([pool or make_nodepool(requirements=OD)] + list(objects))
    return new_simulation(m, FakeCloudProvider(), SimulationOptions(disruption=True, time_limit=until,
                                                                    feature_gates=gates or {}))


def bare(name, cpu="1", **kw):
    return make_pod(name, unschedulable=False, requests={"cpu": cpu}, **kw)


def scale_down(sim, at, keys):
    sim.events.schedule(at, "scale", lambda: [sim.pods.delete(k) for k in keys])


def methods(result):
    return [(d["method"], d["decision"]) for d in result.disruption.decisions if d.get("error") is None]


# upstream: consolidation_test.go "can replace node" (Replace) -- the over-provisioned node after a
# scale-down is replaced by a cheaper one; the replacement launches before the candidate goes
def test_over_provisioned_node_is_replaced_by_a_cheaper_one():
    sim = build([bare(f"p{i}") for i in range(8)])
    scale_down(sim, 300, [f"default/p{i}" for i in range(1, 8)])
    r = sim.run()
    d = r.disruption
    replace = [x for x in d.decisions if x["decision"] == "replace"]
    assert replace and replace[0]["method"] == "single-node-consolidation" and replace[0]["validated"] is True
    [new] = replace[0]["replacements"]
    rec = {x.name: x for x in r.launches}
    old = replace[0]["candidates"][0]
    assert rec[new].price < rec[old].price
    assert replace[0]["savings_per_hour"] > 0
    assert d.deleted_by[old] == "consolidation"
    # taint, replacement launch, then delete and drain (replacement first)
    kinds = [(e["kind"], e["object"]) for e in d.timeline]
    assert kinds.index(("replacement", new)) < kinds.index(("delete", old))


# scenario after emptiness_test.go "should ignore nodes without the consolidatable status condition" and
# nodeclaim/disruption/consolidation_test.go "should mark NodeClaims as consolidatable"
def test_empty_node_goes_after_consolidate_after():
    np = make_nodepool(requirements=OD)
    np.spec.disruption.consolidate_after = "5m"
    sim = build([bare("p0")], pool=np)
    scale_down(sim, 100, ["default/p0"])
    r = sim.run()
    [dec] = [x for x in r.disruption.decisions if x["method"] == "emptiness"]
    # the pod left at t=100 (lastPodEventTime): not consolidatable before t=400, then 15 s validation
    assert dec["t"] >= 400 + 15 and dec["validated"] is True
    assert r.disruption.deleted_by[dec["candidates"][0]] == "emptiness"


# scenario after emptiness_test.go Budgets "should allow no empty nodes to be disrupted" (a cron window)
# (a `nodes: "0"` budget during a cron window blocks; outside the window the node goes)
def test_zero_budget_in_cron_window_blocks_then_allows():
    np = make_nodepool(requirements=OD)
    from karpy.api.nodepool import Budget

    # 00:00 UTC daily for 20 minutes: virtual t=0..1200 is inside the window
    np.spec.disruption.budgets = [Budget(nodes="0", schedule="0 0 * * *", duration="20m"), Budget(nodes="10%")]
    sim = build([bare("p0")], pool=np, until=1800)
    scale_down(sim, 100, ["default/p0"])
    r = sim.run()
    [dec] = [x for x in r.disruption.decisions if x["method"] == "emptiness"]
    assert dec["t"] >= 1200
    events = r.disruption.node_events["nodepool/default"] if "nodepool/default" in r.disruption.node_events else \
        r.disruption.node_events.get("default", {})
    assert any(reason == "DisruptionBlocked" and "due to blocking budget" in msg for reason, msg in events)


# scenario after suite_test.go "should not consider candidates that have do-not-disrupt pods scheduled and no terminationGracePeriod"
def test_do_not_disrupt_pod_keeps_its_node():
    keep = bare("keep", cpu="1", annotations={"karpenter.sh/do-not-disrupt": "true"})
    sim = build([keep] + [bare(f"p{i}") for i in range(7)])
    scale_down(sim, 300, [f"default/p{i}" for i in range(7)])
    r = sim.run()
    node = r.pods["default/keep"].spec.node_name
    assert node not in r.disruption.deleted_by
    assert any("do-not-disrupt" in msg for _, msg in r.disruption.node_events[node])


# scenario after suite_test.go "should not consider candidates that have fully blocking PDBs"
def test_blocking_pdb_keeps_its_node():
    pods = [bare(f"p{i}", labels={"app": "x"} if i == 0 else {}) for i in range(8)]
    pdb = PodDisruptionBudget(metadata=ObjectMeta(name="pdb"), spec=PodDisruptionBudgetSpec(
        selector=LabelSelector(match_labels={"app": "x"}), max_unavailable=0))
    sim = build(pods + [pdb])
    scale_down(sim, 300, [f"default/p{i}" for i in range(1, 8)])
    r = sim.run()
    node = r.pods["default/p0"].spec.node_name
    assert node not in r.disruption.deleted_by
    assert any("Pdb prevents pod evictions (PodDisruptionBudget=[default/pdb])" in msg
               for _, msg in r.disruption.node_events[node])


# scenario after consolidation_test.go Replace "cannot replace spot with spot if the spotToSpotConsolidation is disabled"
def test_spot_node_is_not_replaced_while_the_gate_is_off():
    sim = build([bare(f"p{i}") for i in range(8)], pool=make_nodepool())
    scale_down(sim, 300, [f"default/p{i}" for i in range(1, 8)])
    r = sim.run()
    node = r.pods["default/p0"].spec.node_name
    assert node not in r.disruption.deleted_by
    assert ("Unconsolidatable", "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node") \
        in r.disruption.node_events[node]


# scenario after drift_test.go "should replace drifted nodes" / "should drift one non-empty node at a time, starting with the earliest drift"
# -- a NodePool template change (the nodepool-hash) drifts every node; Drift replaces them one per round
def test_nodepool_change_drifts_and_replaces_nodes_one_at_a_time():
    pods = [bare(f"p{i}", cpu="3") for i in range(3)]
    np = make_nodepool(requirements=OD)
    np.spec.disruption.budgets = []  # unbounded: one node per round is Drift's own cadence
    sim = build(pods, pool=np, until=1500)

    def apply():
        old = sim.store.get("NodePool", "default")
        new = old.model_copy(deep=True)
        new.spec.template.metadata.labels = {"team": "b"}
        sim.store.update("NodePool", new, old=old)

    sim.events.schedule(200, "apply", apply)
    r = sim.run()
    drifts = [x for x in r.disruption.decisions if x["method"] == "drift"]
    originals = {x.name for x in r.launches if x.created_at < 200}
    assert {c for x in drifts for c in x["candidates"]} == originals
    assert all(len(x["candidates"]) == 1 for x in drifts)
    assert len({x["t"] for x in drifts}) == len(drifts)  # one per round
    assert all(r.disruption.deleted_by[n] == "drift" for n in originals)
    assert all(p.spec.node_name and p.spec.node_name not in originals for p in r.pods.values())


# upstream: nodeclaim/expiration/suite_test.go "should delete a NodeClaim after expireAfter"
def test_expiration_deletes_without_budget_and_pods_come_back():
    np = make_nodepool(requirements=OD)
    np.spec.template.spec.expire_after = "10m"
    np.spec.disruption.budgets = [__import__("karpy.api.nodepool", fromlist=["Budget"]).Budget(nodes="0")]
    app = make_deployment("app", replicas=2, requests={"cpu": "1"})
    sim = build([app], pool=np, until=900)
    r = sim.run()
    first = [x.name for x in r.launches if x.created_at == 0 or x.created_at < 60]
    assert first and all(r.disruption.deleted_by.get(n) == "expiration" for n in first)
    assert all(p.spec.node_name for p in r.pods.values())


# upstream: suite_test.go "should add and remove taints from NodeClaims that fail to disrupt" +
# queue_test.go "should untaint nodes when a command times out" (the replacement never comes up:
# an ICE on the replacement's launch) -- the candidate is untainted, unmarked and keeps running
def test_replacement_launch_failure_rolls_back():
    from karpy.cloudprovider.types import InsufficientCapacityError

    sim = build([bare(f"p{i}") for i in range(8)])
    scale_down(sim, 300, [f"default/p{i}" for i in range(1, 8)])
    provider = sim.cloud_provider
    original = provider.create

    def create(nodeclaim):
        if sim.clock.now() > 300:
            raise InsufficientCapacityError("insufficient capacity (replacement)")
        return original(nodeclaim)

    provider.create = create
    r = sim.run()
    d = r.disruption
    failed = [x for x in d.decisions if x["decision"] == "replace"]
    assert failed and all(x.get("error") == "replacement was deleted" for x in failed)
    node = r.pods["default/p0"].spec.node_name
    assert node not in d.deleted_by
    assert not any(t.key == "karpenter.sh/disrupted" for t in r.nodes[node].spec.taints)
    kinds = [e["kind"] for e in d.timeline if e["object"] == node]
    assert kinds[:2] == ["taint", "untaint"] or "rollback" in [e["kind"] for e in d.timeline]
    assert node not in d.marked


# upstream: queue_test.go "should keep nodes tainted when replacements haven't finished initialization"
# upstream: queue_test.go "should fully handle a command when replacements are initialized"
def test_candidate_stays_tainted_until_the_replacement_initializes():
    sim = build([bare(f"p{i}") for i in range(8)])
    scale_down(sim, 300, [f"default/p{i}" for i in range(1, 8)])
    r = sim.run()
    d = r.disruption
    [rep] = [x for x in d.decisions if x["decision"] == "replace"]
    old, new = rep["candidates"][0], rep["replacements"][0]
    t_taint = next(e["t"] for e in d.timeline if e["kind"] == "taint" and e["object"] == old)
    t_delete = next(e["t"] for e in d.timeline if e["kind"] == "delete" and e["object"] == old)
    new_rec = next(x for x in r.launches if x.name == new)
    init = next(c for c in new_rec.launched.status.conditions if c.type == "Initialized")
    from karpy.utils.duration import to_seconds

    # registration (30 s) + initialization (5 s) after launch, and only then the delete
    assert t_taint == rep["t"] and t_delete == to_seconds(init.last_transition_time) >= t_taint + 35


# scenario after consolidation_test.go Delete "can consolidate nodes after duration-based do-not-disrupt annotation expires"
def test_do_not_disrupt_duration_expires_then_consolidates():
    keep = bare("keep", annotations={"karpenter.sh/do-not-disrupt": "20m"})
    sim = build([keep] + [bare(f"p{i}") for i in range(7)], until=3000)
    scale_down(sim, 300, [f"default/p{i}" for i in range(7)])
    r = sim.run()
    moves = [x for x in r.disruption.decisions if x.get("error") is None and x["method"] != "emptiness"]
    assert moves and moves[0]["t"] >= 1200  # the pod started at ~36 s; protected for 20 minutes


def test_balanced_policy_runs_its_own_scoring_without_a_warning():
    """Balanced is modelled (karpy.disruption.balanced): no "runs as" warning, and the run consolidates."""
    import karpy

    np = make_nodepool(requirements=OD)
    np.spec.disruption.consolidation_policy = "Balanced"
    r = karpy.simulate([np, bare("p0")], cloud_provider=FakeCloudProvider(), region=None, disruption=True,
                       until="1m")
    assert not any("Balanced" in w for w in r.to_document()["warnings"])


# upstream: suite_test.go Disruption Taints "should remove taints from NodeClaims that were left tainted from a previous disruption action"
def test_stale_disrupted_taint_is_removed_by_the_next_round():
    from karpy.api.pod import Taint
    from karpy.nodeclaim.disruption import set_condition

    np = make_nodepool(requirements=OD)
    np.spec.disruption.consolidate_after = "Never"
    sim = build([bare("p0", cpu="100m")], until=400, pool=np)
    seen = {}

    def leave_tainted():
        [n] = sim.store.list("Node")
        updated = n.model_copy(deep=True)
        updated.spec.taints = list(updated.spec.taints or ()) + [Taint(key="karpenter.sh/disrupted",
                                                                       effect="NoSchedule")]
        sim.store.update("Node", updated, old=n)
        rec = sim.nodeclaim_of_node(n.metadata.name)
        set_condition(rec.launched, "DisruptionReason", "True", sim.clock.now(), "Drifted")
        seen["node"], seen["claim"] = n.metadata.name, rec.launched

    sim.events.schedule(200, "a previous action left its taint", leave_tainted)
    r = sim.run()
    name = seen["node"]
    assert not any(t.key == "karpenter.sh/disrupted" for t in r.nodes[name].spec.taints)
    assert not any(c.type == "DisruptionReason" for c in seen["claim"].status.conditions)
    untaints = [e["t"] for e in r.disruption.timeline if e["kind"] == "untaint" and e["object"] == name]
    assert untaints and 200 <= untaints[0] <= 200 + 10  # the next 10 s round cleans it up


# upstream: emptiness_test.go "should wait for the node TTL for empty nodes before consolidating"
# upstream: consolidation_test.go TTL "should wait for the node TTL for non-empty nodes before consolidating"
def test_commands_wait_the_15_second_validation_before_acting():
    from karpy.disruption.consolidation import COMMAND_VALIDATION_DELAY

    # emptiness: the 300 s round finds the empty nodes, they go at 315; single-node: the emptiness command
    # goes first, the 320 s round finds the replace, it starts at 335 (without the wait: 300 and 320)
    for keep, method, started in ((0, "emptiness", 315.0), (1, "single-node-consolidation", 335.0)):
        sim = build([bare(f"p{i}") for i in range(8)])
        scale_down(sim, 300, [f"default/p{i}" for i in range(keep, 8)])
        r = sim.run()
        [dec] = [x for x in r.disruption.decisions if x["method"] == method and x.get("error") is None][:1]
        assert dec["validated"] is True
        # the pods left at t=300; the round that found the command ran at or after that, and the command
        # started only after the 15 s wait: nothing was tainted or deleted before
        assert dec["t"] == started and (started - COMMAND_VALIDATION_DELAY) % 10 == 0
        old = dec["candidates"][0]
        first = min(e["t"] for e in r.disruption.timeline if e["object"] == old and e["kind"] in ("taint", "delete"))
        assert first == dec["t"]


# upstream: drift_test.go Drift "should untaint nodes when drift replacement fails"
def test_drifted_node_is_untainted_when_its_replacement_fails():
    from karpy.cloudprovider.types import InsufficientCapacityError

    np = make_nodepool(requirements=OD)
    sim = build([bare("p0", cpu="100m")], pool=np, until=900)
    provider = sim.cloud_provider
    original = provider.create

    def create(nodeclaim):
        if sim.clock.now() >= 200:
            raise InsufficientCapacityError("insufficient capacity (drift replacement)")
        return original(nodeclaim)

    def apply():
        old = sim.store.get("NodePool", "default")
        new = old.model_copy(deep=True)
        new.spec.template.metadata.labels = {"team": "b"}
        sim.store.update("NodePool", new, old=old)

    provider.create = create
    sim.events.schedule(200, "apply", apply)
    r = sim.run()
    drifts = [x for x in r.disruption.decisions if x["method"] == "drift"]
    assert drifts and all(x["decision"] == "replace" for x in drifts)
    # every command but one still in flight at the end fails; Drift tries again on the next 10 s poll
    # (not in a zero-time loop: the queue sees the failed launch at its first requeue)
    assert all(x.get("error") == "replacement was deleted" for x in drifts[:-1]) and len(drifts) > 2
    assert {b["t"] - a["t"] for a, b in zip(drifts, drifts[1:])} == {10.0}
    node = r.pods["default/p0"].spec.node_name
    assert node not in r.disruption.deleted_by  # the drifted node keeps running, untainted
    # each failed command untaints the node (queueBaseDelay after it started); the last one is in flight
    steps = [(e["kind"], e["t"]) for e in r.disruption.timeline if e["object"] == node and
             e["kind"] in ("taint", "untaint")]
    assert [k for k, _ in steps] == ["taint", "untaint"] * (len(drifts) - 1) + ["taint"]
    assert all(u - t == 1.0 for (_, t), (_, u) in zip(steps[::2], steps[1::2]))
