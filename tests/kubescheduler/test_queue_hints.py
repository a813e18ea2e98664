"""QueueingHints, in-flight event replay, the error-backoff heap and the unschedulable leftover flush.

Ported from kubernetes/kubernetes pkg/scheduler/backend/queue/scheduling_queue_test.go and the plugins'
QueueingHint tests (pkg/scheduler/framework/plugins/*/..._test.go). Hint-level cases call the hint
function a plugin registers for the event (as upstream calls ``pl.isSchedulableAfter...`` directly);
end-to-end cases drive KubeScheduler with a fake clock.
"""

import random

import pytest

from karpy.api.builders import make_node, make_pod, pod_affinity_term
from karpy.api.meta import LabelSelector
from karpy.kubescheduler import KubeScheduler
from karpy.kubescheduler.framework import (ASSIGNED_POD, DELETE, NODE, UNSCHEDULED_POD, UPDATE, UPDATE_NODE_LABEL,
                                           UPDATE_NODE_TAINT, UPDATE_POD_TOLERATION, ADD, UPDATE_NODE_ALLOCATABLE,
                                           ClusterEvent, QueueingHint)
from karpy.kubescheduler.podinfo import new_pod_info
from karpy.kubescheduler.scheduler import BOUND, UNSCHEDULABLE

from .conftest import FakeClock

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
CAP = {"cpu": "1", "memory": "1Gi", "pods": "10"}


def _sched(clock=None):
    return KubeScheduler(clock or FakeClock(), random.Random(0))


def _hint(plugin, event, pod, old, new):
    """The hint ``plugin`` registered for ``event`` (first matching registration)."""
    s = _sched()
    for name, reg, fn in s.framework.all_events():
        if name == plugin and reg.matches(event):
            return fn(new_pod_info(pod), old, new)
    raise AssertionError(f"{plugin} registers no hint for {event}")


def _taint(value):
    return [{"key": "dedicated", "value": value, "effect": "NoSchedule"}]


def _tol(value):
    return [{"key": "dedicated", "operator": "Equal", "value": value, "effect": "NoSchedule"}]


def _where(s, key):
    q = s.queue
    if key in q._active_entries:
        return "active"
    if key in q._backoff_entries:
        return "backoff"
    if key in q._error_entries:
        return "error-backoff"
    if key in q.unschedulable:
        return "unschedulable"
    return "absent"


# ---- TaintToleration ------------------------------------------------------------------------------------------------
# upstream: plugins/tainttoleration/taint_toleration_test.go TestIsSchedulableAfterNodeChange
@pytest.mark.parametrize("name,old_taint,new_taint,want", [
    ("skip-queue-on-untoleratedtaint-node-added", None, ["user1"], SKIP),
    ("queue-on-toleratedtaint-node-added", None, ["user2"], Q),
    ("skip-unrelated-change", ["user1"], ["user1", "user3"], SKIP),
    ("queue-on-taint-change", ["user1"], ["user2"], Q),
])
def test_taint_toleration_hint_after_node_change(name, old_taint, new_taint, want):
    p = make_pod("pod1", tolerations=_tol("user2"))
    mk = lambda vals: make_node("nodeA", taints=[t for v in vals for t in _taint(v)])  # noqa: E731
    old = mk(old_taint) if old_taint is not None else None
    ev = ClusterEvent(NODE, ADD if old is None else UPDATE_NODE_TAINT)
    assert _hint("TaintToleration", ev, p, old, mk(new_taint)) == want


# upstream: taint_toleration_test.go Test_isSchedulableAfterPodChange "queue-on-toleration-added", "skip-updates-other-pod"
def test_taint_toleration_hint_after_pod_toleration_change():
    ev = ClusterEvent(UNSCHEDULED_POD, UPDATE_POD_TOLERATION)
    target = make_pod("pod-1", namespace="ns-1", uid="uid0")
    new_self = make_pod("pod-1", namespace="ns-1", uid="uid0", tolerations=[{"key": "foo", "effect": "NoSchedule"}])
    assert _hint("TaintToleration", ev, target, target, new_self) == Q
    other_old = make_pod("pod-2", namespace="ns-1", uid="uid1")
    other_new = make_pod("pod-2", namespace="ns-1", uid="uid1", tolerations=[{"key": "foo", "effect": "NoSchedule"}])
    assert _hint("TaintToleration", ev, target, other_old, other_new) == SKIP


# upstream: taint_toleration_test.go Test_isSchedulableAfterPodChange "skip-updates-not-toleration"
def test_taint_toleration_hint_skips_self_update_without_toleration_change():
    ev = ClusterEvent(UNSCHEDULED_POD, UPDATE_POD_TOLERATION)
    old = make_pod("pod-1", namespace="ns-1")
    new = make_pod("pod-1", namespace="ns-1", labels={"foo": "bar"})
    assert _hint("TaintToleration", ev, old, old, new) == SKIP


def test_node_taint_removed_requeues_pod_end_to_end():
    # upstream: scheduling_queue_test.go TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint (Queue ->
    # backoffQ) with the TaintToleration hint; eventhandlers.go nodeSchedulingPropertiesChange -> UpdateNodeTaint
    s = _sched()
    s.add_node(make_node("n", capacity=CAP, taints=_taint("user1")))
    s.add_pod(make_pod("p", requests={"cpu": "100m"}))
    assert s.schedule_one().outcome == UNSCHEDULABLE
    assert _where(s, "default/p") == "unschedulable"
    s.update_node(make_node("n", capacity=CAP, taints=_taint("user1") + _taint("user3")))  # still untolerated
    assert _where(s, "default/p") == "unschedulable" and s.schedule_one() is None
    s.update_node(make_node("n", capacity=CAP))
    assert _where(s, "default/p") == "backoff"  # Queue -> queueAfterBackoff while still backing off
    r = s.schedule_one()  # PopFromBackoffQ: activeQ empty
    assert (r.outcome, r.node_name) == (BOUND, "n")


def test_pod_toleration_update_requeues_end_to_end():
    # upstream: eventhandlers.go updatePodInSchedulingQueue -> UpdatePodToleration; TaintToleration
    # isSchedulableAfterPodChange "queue-on-toleration-added"
    s = _sched()
    s.add_node(make_node("n", capacity=CAP, taints=_taint("user1")))
    s.add_pod(make_pod("p", requests={"cpu": "100m"}))
    assert s.schedule_one().outcome == UNSCHEDULABLE
    s.update_pod(make_pod("p", requests={"cpu": "100m"}, labels={"x": "y"}))  # label-only: nobody queues
    assert _where(s, "default/p") == "unschedulable"
    s.update_pod(make_pod("p", requests={"cpu": "100m"}, labels={"x": "y"}, tolerations=_tol("user1")))
    assert _where(s, "default/p") == "backoff"
    r = s.schedule_one()
    assert (r.outcome, r.node_name) == (BOUND, "n")


# ---- NodeAffinity ---------------------------------------------------------------------------------------------------
# upstream: plugins/nodeaffinity/node_affinity_test.go Test_isSchedulableAfterNodeChange
@pytest.mark.parametrize("name,old_labels,new_labels,want", [
    ("queue-on-add-matched-node", None, {"foo": "bar"}, Q),
    ("skip-queue-on-add-unmatched-node", None, {"foo": "baz"}, SKIP),
    ("skip-unrelated-changes", {"foo": "bar"}, {"foo": "bar", "a": "b"}, SKIP),  # was already matched
    ("queue-on-label-change-to-match", {"foo": "baz"}, {"foo": "bar"}, Q),
    ("skip-queue-on-label-change-still-unmatched", {"foo": "baz"}, {"foo": "qux"}, SKIP),
])
def test_node_affinity_hint_after_node_change(name, old_labels, new_labels, want):
    p = make_pod("p", node_selector={"foo": "bar"})
    old = make_node("n", labels=old_labels) if old_labels is not None else None
    ev = ClusterEvent(NODE, ADD if old is None else UPDATE_NODE_LABEL)
    assert _hint("NodeAffinity", ev, p, old, make_node("n", labels=new_labels)) == want


def test_node_label_change_requeues_end_to_end():
    s = _sched()
    s.add_node(make_node("n", capacity=CAP, labels={"zone": "b"}))
    s.add_pod(make_pod("p", requests={"cpu": "100m"}, node_requirements=[("zone", "In", ["a"])]))
    assert s.schedule_one().outcome == UNSCHEDULABLE
    s.update_node(make_node("n", capacity=CAP, labels={"zone": "b", "other": "x"}))
    assert _where(s, "default/p") == "unschedulable"
    s.update_node(make_node("n", capacity=CAP, labels={"zone": "a"}))
    r = s.schedule_one()
    assert (r.outcome, r.node_name) == (BOUND, "n")


# ---- NodeResourcesFit -----------------------------------------------------------------------------------------------
# upstream: plugins/noderesources/fit_test.go TestIsSchedulableAfterNodeChange
@pytest.mark.parametrize("name,old_cap,new_cap,want", [
    ("queue-on-node-add", None, {"cpu": "2", "pods": "10"}, Q),
    ("skip-queue-on-node-add-insufficient", None, {"cpu": "500m", "pods": "10"}, SKIP),
    ("queue-on-node-allocatable-increased", {"cpu": "500m", "pods": "10"}, {"cpu": "2", "pods": "10"}, Q),
    ("skip-queue-on-unrelated-resource-increased", {"cpu": "2", "memory": "1Gi", "pods": "10"},
     {"cpu": "2", "memory": "2Gi", "pods": "10"}, SKIP),
    ("skip-queue-on-node-still-too-small", {"cpu": "500m", "pods": "10"}, {"cpu": "800m", "pods": "10"}, SKIP),
])
def test_fit_hint_after_node_change(name, old_cap, new_cap, want):
    p = make_pod("p", requests={"cpu": "1"})
    old = make_node("n", capacity=old_cap) if old_cap is not None else None
    ev = ClusterEvent(NODE, ADD if old is None else UPDATE_NODE_ALLOCATABLE)
    assert _hint("NodeResourcesFit", ev, p, old, make_node("n", capacity=new_cap)) == want


def test_node_allocatable_increase_requeues_end_to_end():
    s = _sched()
    s.add_node(make_node("n", capacity={"cpu": "500m", "memory": "1Gi", "pods": "10"}))
    s.add_pod(make_pod("p", requests={"cpu": "1"}))
    assert s.schedule_one().outcome == UNSCHEDULABLE
    s.update_node(make_node("n", capacity={"cpu": "500m", "memory": "4Gi", "pods": "10"}))  # memory only
    assert _where(s, "default/p") == "unschedulable"
    s.update_node(make_node("n", capacity={"cpu": "2", "memory": "4Gi", "pods": "10"}))
    r = s.schedule_one()
    assert (r.outcome, r.node_name) == (BOUND, "n")


# upstream: fit_test.go TestIsSchedulableAfterPodEvent ("skip-queue-on-unscheduled-pod-deleted",
# "queue-on-assigned-pod-deleted")
def test_fit_hint_after_pod_deleted():
    ev = ClusterEvent(ASSIGNED_POD, DELETE)
    p = make_pod("p", requests={"cpu": "1"})
    assert _hint("NodeResourcesFit", ev, p, make_pod("gone"), None) == SKIP
    assert _hint("NodeResourcesFit", ev, p, make_pod("gone", node_name="n"), None) == Q


def test_assigned_pod_deleted_frees_cpu_end_to_end():
    s = _sched()
    s.add_node(make_node("n", capacity=CAP))
    s.add_pod(make_pod("a", requests={"cpu": "800m"}, node_name="n"))
    s.add_pod(make_pod("b", requests={"cpu": "800m"}))
    assert s.schedule_one().outcome == UNSCHEDULABLE
    assert _where(s, "default/b") == "unschedulable"
    s.delete_pod("default/a")
    r = s.schedule_one()
    assert (r.pod_key, r.outcome, r.node_name) == ("default/b", BOUND, "n")


# ---- NodePorts ------------------------------------------------------------------------------------------------------
# upstream: plugins/nodeports/node_ports_test.go Test_isSchedulableAfterPodDeleted
@pytest.mark.parametrize("name,deleted,want", [
    ("skip-queue-on-unscheduled", dict(), SKIP),
    ("skip-queue-on-non-hostport", dict(node_name="fake-node"), SKIP),
    ("skip-queue-on-unrelated-hostport", dict(node_name="fake-node", host_ports=[8081]), SKIP),
    ("queue-on-released-hostport", dict(node_name="fake-node", host_ports=[8080]), Q),
])
def test_node_ports_hint_after_pod_deleted(name, deleted, want):
    p = make_pod("p", host_ports=[8080])
    assert _hint("NodePorts", ClusterEvent(ASSIGNED_POD, DELETE), p, make_pod("gone", **deleted), None) == want


# upstream: nodeports/node_ports.go isSchedulableAfterPodDeleted: only `NodeName == "" && NominatedNodeName == ""`
# is skipped, so a deleted nominated (not yet bound) pod holding the port queues the target pod
def test_node_ports_hint_after_nominated_pod_deleted():
    p = make_pod("p", host_ports=[8080])
    gone = make_pod("gone", host_ports=[8080], nominated_node_name="fake-node")
    assert _hint("NodePorts", ClusterEvent(ASSIGNED_POD, DELETE), p, gone, None) == Q


def test_host_port_released_end_to_end():
    s = _sched()
    s.add_node(make_node("n", capacity=CAP))
    s.add_pod(make_pod("holder", node_name="n", host_ports=[8080]))
    s.add_pod(make_pod("other", node_name="n", host_ports=[9090]))
    s.add_pod(make_pod("p", host_ports=[8080]))
    r = s.schedule_one()
    assert r.outcome == UNSCHEDULABLE and "free ports" in r.condition["message"]
    s.delete_pod("default/other")  # unrelated port: NodePorts -> QueueSkip
    assert _where(s, "default/p") == "unschedulable"
    s.delete_pod("default/holder")
    r = s.schedule_one()
    assert (r.pod_key, r.outcome) == ("default/p", BOUND)


# ---- InterPodAffinity -----------------------------------------------------------------------------------------------
SEC = LabelSelector.model_validate({"matchExpressions": [
    {"key": "service", "operator": "In", "values": ["securityscan", "value2"]}]})


# upstream: plugins/interpodaffinity/plugin_test.go Test_isSchedulableAfterPodChange (delete cases)
@pytest.mark.parametrize("name,pod_kw,old_kw,want", [
    ("delete a pod which doesn't match pod's anti-affinity",
     dict(pod_anti_affinity=[pod_affinity_term(SEC, "region")]), dict(labels={"aaa": "a"}), SKIP),
    ("delete a pod which matches pod's anti-affinity",
     dict(pod_anti_affinity=[pod_affinity_term(SEC, "region")]), dict(labels={"service": "securityscan"}), Q),
    ("delete a pod with anti-affinity that matches pending pod",
     dict(labels={"service": "securityscan"}), dict(pod_anti_affinity=[pod_affinity_term(SEC, "region")]), Q),
    ("delete a pod with anti-affinity that doesn't match pending pod",
     dict(labels={"service": "foo"}), dict(pod_anti_affinity=[pod_affinity_term(SEC, "region")]), SKIP),
    ("delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't match pending pod",
     dict(labels={"service": "foo"}, pod_anti_affinity=[pod_affinity_term(SEC, "region")]),
     dict(labels={"service": "foo"}, pod_anti_affinity=[pod_affinity_term(SEC, "region")]), SKIP),
])
def test_inter_pod_affinity_hint_after_pod_deleted(name, pod_kw, old_kw, want):
    p = make_pod("p", uid="p", **pod_kw)
    old = make_pod("other", uid="other", node_name="fake-node", **old_kw)
    assert _hint("InterPodAffinity", ClusterEvent(ASSIGNED_POD, DELETE), p, old, None) == want


# upstream: interpodaffinity/plugin_test.go Test_isSchedulableAfterPodChange "update a pod from match to non-match
# the pod affinity" (QueueSkip: only a pod newly matching the affinity can help)
def test_inter_pod_affinity_hint_update_match_to_non_match():
    p = make_pod("p", uid="p", pod_affinity=[pod_affinity_term(SEC, "region")])
    old = make_pod("other", uid="other", node_name="fake-node", labels={"service": "securityscan"})
    new = make_pod("other", uid="other", node_name="fake-node", labels={"aaa": "a"})
    assert _hint("InterPodAffinity", ClusterEvent(ASSIGNED_POD, UPDATE), p, old, new) == SKIP


def test_anti_affinity_pod_deleted_end_to_end():
    s = _sched()
    s.add_node(make_node("n", capacity=CAP))
    s.add_pod(make_pod("blocker", node_name="n", labels={"service": "securityscan"}))
    s.add_pod(make_pod("bystander", node_name="n", labels={"service": "other"}))
    s.add_pod(make_pod("p", pod_anti_affinity=[pod_affinity_term(SEC, "kubernetes.io/hostname")]))
    assert s.schedule_one().outcome == UNSCHEDULABLE
    s.delete_pod("default/bystander")  # InterPodAffinity: QueueSkip (and NodeResourcesFit did not reject)
    assert _where(s, "default/p") == "unschedulable"
    s.delete_pod("default/blocker")
    r = s.schedule_one()
    assert (r.pod_key, r.outcome) == ("default/p", BOUND)


# ---- in-flight events -----------------------------------------------------------------------------------------------
def _pop_and_fail_with(s, plugins, during):
    """Pop the pod, deliver ``during`` while it is in flight, then fail it with ``plugins`` as rejectors."""
    q = s.queue.pop()
    assert q is not None and q.key in s.queue.in_flight
    during()
    q.unschedulable_plugins = set(plugins)
    s.queue.add_unschedulable_if_not_present(q)
    return q


# upstream: scheduling_queue_test.go Test_InFlightPods "when SchedulingQueueHint is enabled, the pod is enqueued to
# backoffQ when an event that the rejecting plugin's hint says Queue for arrives during the cycle"
def test_in_flight_relevant_event_moves_pod_to_backoff():
    s = _sched()
    s.add_node(make_node("n", capacity=CAP, taints=_taint("user1")))
    s.add_pod(make_pod("p"))
    _pop_and_fail_with(s, {"TaintToleration"}, lambda: s.update_node(make_node("n", capacity=CAP)))
    assert _where(s, "default/p") == "backoff"
    assert s.queue.in_flight == {} and s.queue.in_flight_events == []  # Done() pruned everything


# upstream: Test_InFlightPods "the event is ignored by the rejecting plugin's hint -> unschedulablePods"
def test_in_flight_irrelevant_event_leaves_pod_unschedulable():
    s = _sched()
    s.add_node(make_node("n", capacity=CAP, taints=_taint("user1")))
    s.add_pod(make_pod("p"))
    _pop_and_fail_with(s, {"TaintToleration"},
                       lambda: s.update_node(make_node("n", capacity=CAP, taints=_taint("user1"), labels={"a": "b"})))
    assert _where(s, "default/p") == "unschedulable"


def test_in_flight_event_before_pop_is_not_replayed():
    # upstream: Test_InFlightPods — only events recorded after the pod's own entry in inFlightEvents count
    s = _sched()
    s.add_node(make_node("n", capacity=CAP, taints=_taint("user1")))
    s.add_pod(make_pod("p"))
    s.add_pod(make_pod("other", priority=-1))
    first = s.queue.pop()  # "p" (priority 0) in flight
    assert first.key == "default/p"
    s.update_node(make_node("n", capacity=CAP))  # recorded while p is in flight, before "other" is popped
    second = s.queue.pop()
    assert second.key == "default/other"
    second.unschedulable_plugins = {"TaintToleration"}
    s.queue.add_unschedulable_if_not_present(second)
    assert _where(s, "default/other") == "unschedulable"
    first.unschedulable_plugins = {"TaintToleration"}
    s.queue.add_unschedulable_if_not_present(first)
    assert _where(s, "default/p") == "backoff"


# ---- error backoff heap ---------------------------------------------------------------------------------------------
def test_error_backoff_heap_not_popped_early_and_doubles():
    # upstream: scheduling_queue.go requeue (no rejector plugin -> podErrorBackoffQ), backoff_queue.go: the error heap
    # is never popped before expiry (PopFromBackoffQ only takes podBackoffQ); ConsecutiveErrorsCount drives backoff
    clock = FakeClock()
    s = _sched(clock)
    s.add_pod(make_pod("p", requests={"cpu": "1"}))
    assert s.schedule_one().outcome == UNSCHEDULABLE  # no nodes: error path
    assert _where(s, "default/p") == "error-backoff"
    assert not s.queue.has_poppable() and s.schedule_one() is None
    assert s.next_event_time() == 2.0  # expiry trunc(0+1)=1 -> leaves at the 2 s flush
    clock.t = 1.9
    assert s.schedule_one() is None
    clock.t = 2.0
    assert s.schedule_one().outcome == UNSCHEDULABLE
    info = s.queue.infos["default/p"]
    assert (info.consecutive_errors_count, info.unschedulable_count) == (2, 0)
    assert _where(s, "default/p") == "error-backoff"
    assert s.next_event_time() == 5.0  # 2 s backoff: expiry 4 -> leaves at 5


def test_unschedulable_after_error_resets_consecutive_errors():
    # upstream: AddUnschedulablePodIfNotPresent: a plugin rejection counts UnschedulableCount and resets
    # ConsecutiveErrorsCount (1.34+)
    clock = FakeClock()
    s = _sched(clock)
    s.add_pod(make_pod("p", requests={"cpu": "1"}))
    s.schedule_one()
    s.add_node(make_node("small", capacity={"cpu": "500m", "pods": "10"}))
    clock.t = 2.0
    assert s.schedule_one().outcome == UNSCHEDULABLE
    info = s.queue.infos["default/p"]
    assert (info.consecutive_errors_count, info.unschedulable_count) == (0, 1)
    assert _where(s, "default/p") == "unschedulable"


# ---- unschedulable leftover flush -----------------------------------------------------------------------------------
# upstream: scheduling_queue_test.go TestHighPriorityFlushUnschedulablePodsLeftover /
# TestPriorityQueue_initPodMaxInUnschedulablePodsDuration: pods older than podMaxInUnschedulablePodsDuration (5 min,
# strictly greater) move at the next 30 s flush, not before
@pytest.mark.parametrize("fail_at,moves_at", [(0.0, 330.0), (10.0, 330.0), (30.0, 360.0), (45.0, 360.0)])
def test_leftover_flush_timing(fail_at, moves_at):
    clock = FakeClock()
    s = _sched(clock)
    s.add_node(make_node("n", capacity=CAP, taints=_taint("user1")))
    clock.t = fail_at
    s.add_pod(make_pod("p"))
    assert s.schedule_one().outcome == UNSCHEDULABLE
    assert s.next_event_time() == moves_at
    clock.t = moves_at - 0.5
    assert s.schedule_one() is None and _where(s, "default/p") == "unschedulable"
    clock.t = moves_at
    r = s.schedule_one()
    assert r is not None and r.pod_key == "default/p" and r.outcome == UNSCHEDULABLE


def test_leftover_flush_orders_by_priority():
    # upstream: TestHighPriorityFlushUnschedulablePodsLeftover — after the flush the high-priority pod pops first
    clock = FakeClock()
    s = _sched(clock)
    s.add_node(make_node("n", capacity=CAP, taints=_taint("user1")))
    s.add_pod(make_pod("mid", priority=100))
    s.add_pod(make_pod("high", priority=1000))
    assert s.schedule_one().pod_key == "default/high"
    assert s.schedule_one().pod_key == "default/mid"
    clock.t = 330.0
    s.queue.run_flushes()
    assert (_where(s, "default/high"), _where(s, "default/mid")) == ("active", "active")
    assert s.schedule_one().pod_key == "default/high"
