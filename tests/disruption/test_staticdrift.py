"""Ports of pkg/controllers/disruption/staticdrift_test.go (core 2266468) on the hand-built cluster
(tests.disruption.harness): which commands StaticDrift computes, the budgets it reads and the node
counts it reserves. The queue's part (replacement created, candidate deleted) is played by
:func:`execute`, as the upstream Its drive the queue by hand; the simulation runs the real queue
(tests/static/test_scenarios.py)."""

from __future__ import annotations

import pytest

from karpy.api.builders import make_nodepool
from karpy.api.meta import Condition
from karpy.disruption.budgets import build_disruption_budget_mapping
from karpy.disruption.helpers import build_nodepool_map, get_candidates
from karpy.disruption.staticdrift import StaticDrift
from tests.disruption.harness import Env, ts
from karpy.static.nodepoolstate import NodePoolState

EXPENSIVE = "default-instance-type"


def pool(name="default", replicas=1, budget="100%", reasons=("Drifted",), limits=None):
    budgets = [{"nodes": budget, **({"reasons": list(reasons)} if reasons else {})}]
    return make_nodepool(name, replicas=replicas, disruption={"budgets": budgets}, limits=limits)


class Cluster:
    """Env + the NodePool state the informers keep."""

    def __init__(self, *pools):
        self.env = Env()
        self.env._types()  # the fake catalogue, looked up through the env's default pool
        self.env.nodepools = {p.metadata.name: p for p in pools}
        self.state = NodePoolState()
        self._n = 0

    def nodes(self, n, pool="default", drifted=True, **kw):
        out = []
        for _ in range(n):
            self._n += 1
            name = f"{pool}-{self._n:02d}"
            self.env.node(name, pool=pool, drifted=drifted, **kw)
            self.state.update_nodeclaim(pool, name, False)
            out.append(name)
        return out

    def round(self):
        """One StaticDrift pass: (budget mapping, commands)."""
        cl = self.env.cluster()
        cl.nodepool_state = self.state
        m = StaticDrift()
        cands = get_candidates(cl, lambda c: m.should_disrupt(c, cl), m.disruption_class, build_nodepool_map(cl))
        budgets = build_disruption_budget_mapping(cl.state.nodes, cl.nodepools.values(), cl.now, m.reason)
        return budgets, m.compute_commands(cl, budgets, cands)

    def start(self, cmds):
        """queue.StartCommand: replacements created (reservation released), candidates marked for deletion."""
        for cmd in cmds:
            (c,) = cmd.candidates
            (r,) = cmd.replacements
            self.state.release_node_count(r.nodepool_name, 1)
            self.state.mark_pending_disruption(r.nodepool_name, c.name)
            self.nodes(1, pool=r.nodepool_name, drifted=False)
            self.state.mark_deleting(r.nodepool_name, c.name)
            self.env.marked.add(c.name)

    def finish(self, cmds):
        """The replacements initialized: the candidates are deleted (ExpectNodeClaimsCascadeDeletion)."""
        for cmd in cmds:
            name = cmd.candidates[0].name
            self.env.nodes = [n for n in self.env.nodes if n.metadata.name != name]
            self.env.claims = [c for c in self.env.claims if c.metadata.name != name]
            self.env.marked.discard(name)
            self.state.cleanup(name)


def pools_of(cmds):
    out = {}
    for cmd in cmds:
        out[cmd.candidates[0].nodepool.metadata.name] = out.get(cmd.candidates[0].nodepool.metadata.name, 0) + 1
    return out


# upstream: staticdrift_test.go "should respect disruption budgets (Nodes Count) for static drift"
def test_budget_count():
    cl = Cluster(pool(replicas=5, budget="2"))
    cl.nodes(5)
    budgets, cmds = cl.round()
    assert budgets["default"] == 2 and len(cmds) == 2
    assert all(c.decision() == "replace" and len(c.candidates) == 1 for c in cmds)
    cl.start(cmds)
    assert cl.state.get_node_count("default") == (5, 2, 0) and cl.state.reserved("default") == 0
    cl.finish(cmds)
    assert cl.state.get_node_count("default") == (5, 0, 0) and len(cl.env.claims) == 5


# upstream: staticdrift_test.go "should respect disruption budgets (Nodes Percentage) for static drift"
# upstream: staticdrift_test.go "should drift partially when we can acquire some limits"
@pytest.mark.parametrize("budget, limits, allowed, drifted", [
    ("20%", None, 1, 1),            # 20 % of 5 nodes
    ("100%", {"nodes": "7"}, 5, 2),  # limits.nodes 7 leaves room for two replacements
])
def test_five_drifted_nodes(budget, limits, allowed, drifted):
    cl = Cluster(pool(replicas=5, budget=budget, limits=limits))
    cl.nodes(5)
    budgets, cmds = cl.round()
    assert budgets["default"] == allowed and len(cmds) == drifted
    cl.start(cmds)
    assert cl.state.get_node_count("default") == (5, drifted, 0)


# upstream: staticdrift_test.go "should respect budgets for multiple static nodepools"
def test_budgets_per_nodepool():
    cl = Cluster(pool("static-nodepool-1", replicas=4, budget="1"), pool("static-nodepool-2", replicas=3, budget="2"),
                 pool("static-nodepool-3", replicas=2, budget="100%"))
    for p in ("static-nodepool-1", "static-nodepool-2", "static-nodepool-3"):
        cl.nodes(2, pool=p)
    budgets, cmds = cl.round()
    assert budgets == {"static-nodepool-1": 1, "static-nodepool-2": 2, "static-nodepool-3": 2}
    assert len(cmds) == 5 and pools_of(cmds) == {"static-nodepool-1": 1, "static-nodepool-2": 2, "static-nodepool-3": 2}
    cl.start(cmds)
    assert [cl.state.get_node_count(p) for p in sorted(budgets)] == [(2, 1, 0), (2, 2, 0), (2, 2, 0)]


# upstream: staticdrift_test.go "should not drift nodes when we cannot acquire limits"
def test_no_drift_without_node_limit_headroom():
    cl = Cluster(pool(replicas=5, limits={"nodes": "5"}))
    cl.nodes(5)
    assert cl.round()[1] == [] and cl.state.get_node_count("default") == (5, 0, 0)


# upstream: staticdrift_test.go "should drift nodes when we can acquire limits"
def test_drift_within_node_limit():
    cl = Cluster(pool(replicas=5, limits={"nodes": "5"}))
    cl.nodes(2)
    budgets, cmds = cl.round()
    assert budgets["default"] == 2 and len(cmds) == 2 and cl.state.reserved("default") == 2
    cl.start(cmds)
    assert cl.state.get_node_count("default") == (2, 2, 0) and cl.state.reserved("default") == 0


# upstream: staticdrift_test.go "should keep drifting partially when we can acquire some limits for each reconcile"
def test_drift_one_at_a_time_under_node_limit():
    cl = Cluster(pool(replicas=5, limits={"nodes": "6"}))
    originals = set(cl.nodes(5))
    for _ in range(5):
        _, cmds = cl.round()
        assert len(cmds) == 1
        cl.start(cmds)
        assert cl.state.get_node_count("default") == (5, 1, 0) and len(cl.env.claims) == 6  # never over the limit
        cl.finish(cmds)
        assert cl.state.get_node_count("default") == (5, 0, 0)
    assert not originals & {c.metadata.name for c in cl.env.claims}
    assert cl.round()[1] == []


# upstream: staticdrift_test.go "should wait until nodes are deprovisioned when we are overscaled"
def test_no_drift_while_over_replicas():
    cl = Cluster(pool(replicas=1))
    a, b = cl.nodes(2)
    cl.env.pod("p", a, cpu="1")
    assert cl.round()[1] == []
    cl.env.nodes = [n for n in cl.env.nodes if n.metadata.name != b]
    cl.env.claims = [c for c in cl.env.claims if c.metadata.name != b]
    cl.state.cleanup(b)
    _, cmds = cl.round()
    assert [c.candidates[0].name for c in cmds] == [a]


# upstream: staticdrift_test.go "should handle drift for multiple static NodePools independently"
def test_nodepools_drift_independently():
    cl = Cluster(pool("nodepool-1", replicas=3, reasons=()), pool("nodepool-2", replicas=2, reasons=(), limits={"nodes": "2"}),
                 pool("nodepool-3", replicas=2, reasons=()))
    for p in ("nodepool-1", "nodepool-2", "nodepool-3"):
        cl.nodes(2, pool=p)
    budgets, cmds = cl.round()
    assert budgets == {"nodepool-1": 2, "nodepool-2": 2, "nodepool-3": 2}
    assert len(cmds) == 4 and pools_of(cmds) == {"nodepool-1": 2, "nodepool-3": 2}


# upstream: staticdrift_test.go "should handle zero replicas"
def test_zero_replicas_no_drift():
    cl = Cluster(pool(replicas=0))
    cl.nodes(1)
    assert cl.round()[1] == []


# upstream: staticdrift_test.go "should handle missing node limits gracefully"
def test_no_node_limit():
    cl = Cluster(pool(replicas=5))
    cl.nodes(5)
    _, cmds = cl.round()
    assert len(cmds) == 5
    cl.start(cmds)
    assert cl.state.get_node_count("default") == (5, 5, 0)


# upstream: staticdrift_test.go "should ignore nodes without the drifted status condition"
def test_not_drifted_ignored():
    cl = Cluster(pool(replicas=1))
    cl.nodes(1, drifted=False)
    assert cl.round()[1] == [] and cl.state.get_node_count("default") == (1, 0, 0)


# upstream: staticdrift_test.go "should ignore nodes with the drifted status condition set to false"
def test_drifted_false_ignored():
    cl = Cluster(pool(replicas=1))
    (name,) = cl.nodes(1, drifted=False)
    claim = next(c for c in cl.env.claims if c.metadata.name == name)
    claim.status.conditions.append(Condition(type="Drifted", status="False", reason="NotDrifted",
                                             last_transition_time=ts(0)))
    assert cl.round()[1] == []


# upstream: staticdrift_test.go "should ignore nodes with the karpenter.sh/do-not-disrupt annotation"
def test_do_not_disrupt_node_ignored():
    cl = Cluster(pool(replicas=1))
    cl.nodes(1, node_annotations={"karpenter.sh/do-not-disrupt": "true"})
    assert cl.round()[1] == [] and cl.state.get_node_count("default") == (1, 0, 0)


def test_dynamic_nodepools_are_not_static_drift_candidates():
    """ShouldDisrupt: only static pools (Drift takes the rest, drift_test.go Static)."""
    cl = Cluster(make_nodepool("default"))
    cl.nodes(1)
    assert cl.round()[1] == []


def test_replacement_is_the_nodepool_template():
    """staticdrift.go: the replacement is NewNodeClaimTemplate(np) -- no pods, no instance-type options."""
    cl = Cluster(pool(replicas=1))
    cl.nodes(1)
    (cmd,) = cl.round()[1]
    (r,) = cmd.replacements
    assert r.template.is_static and r.pods == [] and r.instance_type_options == []
    assert r.labels["karpenter.sh/nodepool"] == "default"
