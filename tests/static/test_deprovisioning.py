"""Ports of pkg/controllers/static/deprovisioning/suite_test.go (core 2266468) on the hand-built
cluster (harness.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.disruption.harness import owner, ts
from karpy.static.deprovisioning import has_nodepool_replica_count_changed, reconcile
from karpy.static.provisioning import REQUEUE

sys.path.insert(0, str(Path(__file__).parent))
from harness import Harness, static_pool  # noqa: E402


def nodes(h: Harness, n: int, prefix: str = "nc") -> list[str]:
    names = [f"{prefix}-{i}" for i in range(n)]
    for name in names:
        h.node(name)
    return names


# upstream: static/deprovisioning/suite_test.go "should return early if nodepool is not managed by cloud provider"
def test_unmanaged_nodepool_is_left_alone():
    h = Harness()
    nodes(h, 1)
    pool = static_pool(replicas=1, node_class_ref={"group": "test.group", "kind": "UnmanagedNodeClass", "name": "test"})
    assert reconcile(pool, h.state, h).requeue_after == 0 and h.deleted == []


# upstream: static/deprovisioning/suite_test.go "should return early if nodepool replicas is nil"
def test_dynamic_nodepool_is_left_alone():
    h = Harness()
    nodes(h, 2)
    assert reconcile(static_pool(replicas=None), h.state, h).requeue_after == 0 and h.deleted == []


# upstream: static/deprovisioning/suite_test.go "should return early if nodepool is being deleted"
def test_deleting_nodepool_is_left_alone():
    h = Harness()
    nodes(h, 2)
    pool = static_pool(replicas=1)
    pool.metadata.deletion_timestamp = ts(0)
    assert h.state.get_node_count("default") == (2, 0, 0)
    assert reconcile(pool, h.state, h).requeue_after == 0 and h.deleted == []


# upstream: static/deprovisioning/suite_test.go "should return early if current node count is less than or equal to desired replicas"
def test_at_or_below_replicas_deletes_nothing():
    h = Harness()
    nodes(h, 2)
    assert reconcile(static_pool(replicas=3), h.state, h).requeue_after == REQUEUE and h.deleted == []
    assert reconcile(static_pool(replicas=2), h.state, h).requeue_after == REQUEUE and h.deleted == []


# upstream: static/deprovisioning/suite_test.go "should only consider running nodeclaims and not deleting nodeclaims"
def test_deleting_nodeclaims_do_not_count():
    h = Harness()
    names = nodes(h, 4)
    for name in names[:3]:
        h.mark_for_deletion(name)
    assert h.state.get_node_count("default") == (1, 3, 0)
    assert reconcile(static_pool(replicas=1), h.state, h).requeue_after == REQUEUE
    assert h.deleted == [] and h.state.get_node_count("default") == (1, 3, 0)


# upstream: static/deprovisioning/suite_test.go "should terminate excess nodeclaims when current count exceeds desired replicas"
def test_excess_nodeclaims_are_deleted():
    h = Harness()
    nodes(h, 4)
    res = reconcile(static_pool(replicas=2), h.state, h)
    assert res.requeue_after == REQUEUE and len(h.deleted) == 2 and list(res.created) == h.deleted
    assert len(h.names()) == 2 and h.state.get_node_count("default") == (2, 2, 0)


# upstream: static/deprovisioning/suite_test.go "should handle zero replicas by terminating all nodeclaims"
def test_zero_replicas_deletes_everything():
    h = Harness()
    nodes(h, 3)
    assert reconcile(static_pool(replicas=0), h.state, h).requeue_after == REQUEUE
    assert h.names() == [] and h.state.get_node_count("default") == (0, 3, 0)
    h.informer_cleanup()
    assert h.state.get_node_count("default") == (0, 0, 0)


# upstream: static/deprovisioning/suite_test.go "should handle no active nodeclaims gracefully"
def test_no_nodeclaims():
    h = Harness()
    assert reconcile(static_pool(replicas=0), h.state, h).requeue_after == REQUEUE and h.deleted == []


# upstream: static/deprovisioning/suite_test.go "should return error when nodeclaim deletion fails"
def test_delete_errors_are_returned():
    h = Harness()
    nodes(h, 3)
    h.fail_delete = True
    res = reconcile(static_pool(replicas=1), h.state, h)
    assert res.error is not None and res.error.startswith("failed to deprovision nodeclaims") and res.requeue_after == 0
    assert len(h.names()) == 3 and h.state.get_node_count("default") == (3, 0, 0)


# upstream: static/deprovisioning/suite_test.go "should prioritize nodeclaims that have unresolved providerID"
def test_unresolved_nodeclaims_go_first():
    h = Harness()
    nodes(h, 2)
    h.unresolved("un-1")
    h.unresolved("un-2")
    assert h.state.get_node_count("default") == (4, 0, 0)
    assert reconcile(static_pool(replicas=2), h.state, h).requeue_after == REQUEUE
    assert sorted(h.deleted) == ["un-1", "un-2"] and h.names() == ["nc-0", "nc-1"]
    assert h.state.get_node_count("default") == (2, 2, 0)


# upstream: static/deprovisioning/suite_test.go "should prioritize empty nodes (with only daemonset pods) for termination"
def test_daemonset_only_nodes_go_first():
    h = Harness()
    names = nodes(h, 4)
    for i, name in enumerate(names):
        if i in (0, 2):
            h.env.pod(f"p{i}", name, namespace="kube-system", owner_references=owner("DaemonSet"))
        else:
            h.env.pod(f"p{i}", name)
    assert reconcile(static_pool(replicas=2), h.state, h).requeue_after == REQUEUE
    assert sorted(h.deleted) == ["nc-0", "nc-2"] and h.names() == ["nc-1", "nc-3"]
    assert h.state.get_node_count("default") == (2, 2, 0)


# upstream: static/deprovisioning/suite_test.go "should terminate non-empty nodes when empty nodes are insufficient"
def test_non_empty_nodes_go_when_empty_ones_do_not_suffice():
    h = Harness()
    names = nodes(h, 4)
    h.env.pod("p1", names[0])
    h.env.pod("p2", names[2])
    assert reconcile(static_pool(replicas=1), h.state, h).requeue_after == REQUEUE
    assert len(h.names()) == 1 and h.state.get_node_count("default") == (1, 3, 0)
    # the empty ones first (name order), then the cheapest to disrupt
    assert h.deleted[:2] == ["nc-1", "nc-3"]


def cost_cluster() -> tuple[Harness, list[str]]:
    """The "disruption cost ordering" BeforeEach: two each of low / high / dnd / ds nodes, index order."""
    h = Harness()
    names = []
    for i in range(2):
        for kind in ("low", "high", "dnd", "ds"):
            name = f"n{len(names)}"
            h.node(name)
            names.append(name)
            if kind == "low":
                h.env.pod(f"system-pod-low-{i}", name, namespace="kube-system")
            elif kind == "high":
                h.env.pod(f"system-pod-high-{i}", name, namespace="kube-system")
                h.env.pod(f"app-pod-high-{i}", name)
            elif kind == "dnd":
                h.env.pod(f"app-pod-dnd-{i}", name, annotations={"karpenter.sh/do-not-disrupt": "true"})
            else:
                h.env.pod(f"dmn-pod-{i}", name, namespace="kube-system", owner_references=owner("DaemonSet"))
    return h, names


# upstream: static/deprovisioning/suite_test.go "scales down in disruption cost order"
@pytest.mark.parametrize("replicas, keep", [
    (6, [0, 1, 2, 4, 5, 6]),  # to 6 (drops DS-only first)
    (4, [1, 2, 5, 6]),        # to 4 (drops low next)
    (2, [2, 6]),              # to 2 (drops high next)
    (0, []),                  # to 0 (drops do-not-disrupt last)
])
def test_scale_down_in_disruption_cost_order(replicas, keep):
    h, names = cost_cluster()
    assert h.state.get_node_count("default") == (8, 0, 0)
    assert reconcile(static_pool(replicas=replicas), h.state, h).requeue_after == REQUEUE
    assert h.state.get_node_count("default") == (replicas, 8 - replicas, 0)
    assert h.names() == sorted(names[i] for i in keep)


def test_scale_down_order_is_the_full_ranking():
    """The order of deletion itself: DS-only (name order), then low, high, do-not-disrupt."""
    h, _ = cost_cluster()
    reconcile(static_pool(replicas=0), h.state, h)
    assert h.deleted == ["n3", "n7", "n0", "n4", "n1", "n5", "n2", "n6"]


# upstream: static/deprovisioning/suite_test.go "should detect replica changes"
# upstream: static/deprovisioning/suite_test.go "should return false for identical replicas"
def test_replica_count_change():
    assert has_nodepool_replica_count_changed(static_pool(replicas=5), static_pool(replicas=10))
    pool = static_pool(replicas=5)
    assert not has_nodepool_replica_count_changed(pool, pool)
