"""Ports of pkg/controllers/static/provisioning/suite_test.go (core 2266468) on the hand-built cluster
(harness.py). Not ported: "handles concurrent reconciliation without exceeding NodePool limits" and
"should wait for cluster to be synced and not over provision" -- karpy reconciles one at a time and
its cluster state is always synced."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from karpy.api.meta import Condition
from tests.disruption.harness import ts
from karpy.static.provisioning import LIMIT_REQUEUE, REQUEUE, has_nodepool_replica_or_status_changed, reconcile

sys.path.insert(0, str(Path(__file__).parent))
from harness import Harness, not_ready, static_pool  # noqa: E402


def run(h: Harness, pool):
    return reconcile(pool, h.state, h, h.provisioner.well_known)


# upstream: static/provisioning/suite_test.go "should handle CreateNodeClaims errors gracefully"
def test_create_errors_are_returned_without_requeue():
    h = Harness()
    h.fail_create = True
    res = run(h, static_pool(replicas=1))
    assert res.error is not None and "creating nodeclaims" in res.error and res.requeue_after == 0
    assert h.created == [] and h.state.reserved("default") == 0  # the reservation is released


# upstream: static/provisioning/suite_test.go "should return early if nodepool is not managed by cloud provider"
def test_unmanaged_nodepool_is_left_alone():
    h = Harness()
    pool = static_pool(replicas=1, node_class_ref={"group": "test.group", "kind": "UnmanagedNodeClass", "name": "test"})
    res = run(h, pool)
    assert res.requeue_after == 0 and h.created == []


# upstream: static/provisioning/suite_test.go "should return early if nodepool root condition is not true"
def test_not_ready_nodepool_is_left_alone():
    h = Harness()
    res = run(h, not_ready(static_pool(replicas=1)))
    assert res.requeue_after == 0 and h.created == []


# upstream: static/provisioning/suite_test.go "should return early if nodepool is being deleted"
def test_deleting_nodepool_is_left_alone():
    h = Harness()
    pool = static_pool(replicas=1)
    pool.metadata.deletion_timestamp = ts(0)
    res = run(h, pool)
    assert res.requeue_after == 0 and h.created == []


# upstream: static/provisioning/suite_test.go "should return early if nodepool replicas is nil"
def test_dynamic_nodepool_is_left_alone():
    h = Harness()
    res = run(h, static_pool(replicas=None))
    assert res.requeue_after == 0 and h.created == []


# upstream: static/provisioning/suite_test.go "should return early if current node count exceeds desired replicas"
def test_more_nodes_than_replicas_creates_nothing():
    h = Harness()
    h.node("a")
    h.node("b")
    assert h.state.get_node_count("default") == (2, 0, 0)
    res = run(h, static_pool(replicas=1))
    assert res.requeue_after == REQUEUE and h.created == []


# upstream: static/provisioning/suite_test.go "should create nodeclaims when current node count is less than desired replicas"
def test_creates_nodeclaims_up_to_replicas():
    h = Harness()
    pool = static_pool(replicas=2)
    res = run(h, pool)
    assert res.requeue_after == REQUEUE and len(h.created) == 2 and list(res.created) == [c.metadata.name for c in h.created]
    assert h.state.get_node_count("default") == (2, 0, 0)
    for nc in h.created:
        assert nc.spec.node_class_ref == pool.spec.template.spec.node_class_ref
        assert nc.metadata.labels["karpenter.sh/nodepool"] == "default"
        # a static NodeClaim carries no instance-type list: Create resolves it (IsStaticNodeClaim)
        assert not any(r.key == "node.kubernetes.io/instance-type" for r in nc.spec.requirements)


# upstream: static/provisioning/suite_test.go "should create additional nodeclaims to reach desired replicas"
def test_creates_the_missing_nodeclaims():
    h = Harness()
    h.node("a")
    res = run(h, static_pool(replicas=3))
    assert res.requeue_after == REQUEUE and len(h.created) == 2
    assert h.state.get_node_count("default") == (3, 0, 0)


# upstream: static/provisioning/suite_test.go "should not create additional nodeclaims"
def test_nodeclaims_in_every_stage_count_and_reconciles_are_idempotent():
    h = Harness()
    h.unresolved("no-node")
    h.node("unregistered", initialized=False)
    h.node("registered")
    pool = static_pool(replicas=3)
    for _ in range(10):
        run(h, pool)
    assert h.created == [] and h.state.get_node_count("default") == (3, 0, 0)


# upstream: static/provisioning/suite_test.go "should not create additional nodeclaims when node limits are reached"
def test_node_limit_reached_requeues_in_30s():
    h = Harness()
    h.node("a")
    res = run(h, static_pool(replicas=3, limits={"nodes": "1"}))
    assert res.requeue_after == LIMIT_REQUEUE == 30.0 and h.created == []
    assert h.state.get_node_count("default") == (1, 0, 0)


# upstream: static/provisioning/suite_test.go "should reserve nodepool nodecount during provisioning and release after"
def test_reservation_is_released_after_creation_and_limits_hold():
    h = Harness()
    pool = static_pool(replicas=3, limits={"nodes": "10"})
    assert run(h, pool).requeue_after == REQUEUE and len(h.created) == 3
    assert h.state.get_node_count("default") == (3, 0, 0)
    assert h.state.reserve_node_count("default", 10, 10) == 7
    h.state.release_node_count("default", 7)
    pool.spec.replicas = 15
    assert run(h, pool).requeue_after == REQUEUE
    assert len(h.created) == 10
    h.state.release_node_count("default", 10)
    assert h.state.reserve_node_count("default", 10, 100) == 0
    assert h.state.get_node_count("default") == (10, 0, 0)


# upstream: static/provisioning/suite_test.go "should handle zero replicas"
def test_zero_replicas_creates_nothing():
    h = Harness()
    res = run(h, static_pool(replicas=0))
    assert res.requeue_after == REQUEUE and h.created == [] and h.state.get_node_count("default") == (0, 0, 0)


# upstream: static/provisioning/suite_test.go "should respect nodepool template specifications"
def test_nodeclaims_follow_the_template():
    h = Harness()
    reqs = [
        {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "r"], "minValues": 2},
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["c4", "r4"], "minValues": 2},
        {"key": "karpenter.k8s.aws/instance-cpu", "operator": "In", "values": ["32"]},
        {"key": "karpenter.k8s.aws/instance-hypervisor", "operator": "In", "values": ["nitro"]},
        {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]},
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-west-2a", "us-west-2b"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand", "reserved", "spot"]},
    ]
    pool = static_pool(replicas=4, requirements=reqs, labels={"custom-label": "custom-value"},
                       annotations={"custom-annotation": "custom-value"})
    res = run(h, pool)
    assert res.requeue_after == REQUEUE and len(h.created) == 4
    assert h.state.get_node_count("default") == (4, 0, 0)
    nc = h.created[0]
    assert nc.metadata.labels["custom-label"] == "custom-value"
    assert nc.metadata.annotations["custom-annotation"] == "custom-value"
    got = {r.key: (r.operator, sorted(r.values), r.min_values) for r in nc.spec.requirements}
    want = {r["key"]: (r["operator"], sorted(r["values"]), r.get("minValues")) for r in reqs}
    want["karpenter.k8s.aws/instance-generation"] = ("Gte", ["3"], None)  # Gt 2 canonicalised to Gte 3
    for key, value in want.items():
        assert got[key] == value, key


# upstream: static/provisioning/suite_test.go "should handle large replica counts"
def test_large_replica_count():
    h = Harness()
    run(h, static_pool(replicas=1000))
    assert len(h.created) == 1000 and h.state.get_node_count("default") == (1000, 0, 0)
    assert len({c.metadata.name for c in h.created}) == 1000


def _pool(replicas, ready):
    p = static_pool(replicas=replicas)
    p.status.conditions = [Condition(type="Ready", status="True" if ready else "False")]
    return p


# upstream: static/provisioning/suite_test.go "should detect replica or status changes"
@pytest.mark.parametrize("old, new, old_ready, new_ready, expected", [
    (5, 3, False, False, True),   # replica changed
    (5, 5, False, True, True),    # replica same, false -> true
    (5, 5, True, False, False),   # replica same, true -> false
    (5, 5, True, True, False),    # replica same, both true
    (5, 5, False, False, False),  # replica same, both false
])
def test_replica_or_status_change(old, new, old_ready, new_ready, expected):
    assert has_nodepool_replica_or_status_changed(_pool(old, old_ready), _pool(new, new_ready)) is expected
