"""Ports of pkg/utils/pod/suite_test.go (IsDoNotDisruptActive, IsDisruptable) and the other
disruption predicates of pkg/utils/pod/scheduling.go."""

from __future__ import annotations

import pytest

from karpy.api.builders import make_pod
from karpy.api.meta import OwnerReference
from karpy.api.pod import Toleration
from karpy.sim.clock import EPOCH
from karpy.utils import pod as podutil
from karpy.utils.duration import DurationError, parse_go_duration, to_rfc3339

NOW = 3600.0
DND = "karpenter.sh/do-not-disrupt"


def _pod(annotation: str | None = None, started: float | None = NOW - 600, phase: str = "Running", **kw):
    p = make_pod("test-pod", annotations={DND: annotation} if annotation is not None else {}, node_name="n",
                 unschedulable=False, phase=phase, **kw)
    if started is not None:
        from datetime import timedelta

        p.status.start_time = EPOCH + timedelta(seconds=started)
    return p


# upstream: pkg/utils/pod/suite_test.go "should return false when no annotation exists"
def test_no_annotation_not_active():
    assert podutil.is_do_not_disrupt_active(_pod(), NOW) is False


# upstream: pkg/utils/pod/suite_test.go "should return true for 'true' annotation"
def test_true_annotation_active():
    assert podutil.is_do_not_disrupt_active(_pod("true"), NOW) is True


# upstream: pkg/utils/pod/suite_test.go "should return false and emit event for invalid duration format"
def test_invalid_duration_is_absent_with_event():
    events: list = []
    assert podutil.is_do_not_disrupt_active(_pod("invalid-format"), NOW, events) is False
    assert events == [("InvalidDoNotDisruptAnnotation", "default/test-pod",
                       'Invalid karpenter.sh/do-not-disrupt annotation: failed to parse "invalid-format" as a '
                       'duration: time: invalid duration "invalid-format", ignoring annotation')]


# upstream: pkg/utils/pod/suite_test.go "should return false and emit event for zero duration"
# upstream: pkg/utils/pod/suite_test.go "should return false and emit event for negative duration"
@pytest.mark.parametrize("value", ["0s", "-5m"])
def test_non_positive_duration_is_absent_with_event(value):
    events: list = []
    assert podutil.is_do_not_disrupt_active(_pod(value), NOW, events) is False
    assert events[0][2] == (f'Invalid karpenter.sh/do-not-disrupt annotation: duration "{value}" must be positive, '
                            "ignoring annotation")


# upstream: pkg/utils/pod/suite_test.go "should return true and emit disruptable-at event when duration has not expired"
def test_duration_not_expired():
    events: list = []
    assert podutil.is_do_not_disrupt_active(_pod("15m"), NOW, events) is True
    assert events == [("DoNotDisruptUntil", "default/test-pod",
                       "The karpenter.sh/do-not-disrupt grace period will elapse at "
                       + to_rfc3339(NOW - 600 + 900))]


# upstream: pkg/utils/pod/suite_test.go "should return false and emit grace period elapsed event when duration has expired"
def test_duration_expired():
    events: list = []
    assert podutil.is_do_not_disrupt_active(_pod("5m"), NOW, events) is False
    assert [e[0] for e in events] == ["DoNotDisruptGracePeriodElapsed"]


# upstream: pkg/utils/pod/suite_test.go "should fail safe when start time is nil"
def test_nil_start_time_fails_safe():
    assert podutil.is_do_not_disrupt_active(_pod("5m", started=None), NOW) is True


# upstream: pkg/utils/pod/suite_test.go "should not emit disruptable-at event for indefinite protection"
def test_true_emits_nothing():
    events: list = []
    assert podutil.is_do_not_disrupt_active(_pod("true"), NOW, events) is True
    assert events == []


# upstream: pkg/utils/pod/suite_test.go "should be disruptable for active pod without annotation"
# upstream: pkg/utils/pod/suite_test.go "should not be disruptable for active pod with 'true' annotation ..."
# upstream: pkg/utils/pod/suite_test.go "should be disruptable for active pod with expired duration ..."
# upstream: pkg/utils/pod/suite_test.go "should not be disruptable for active pod with non-expired duration"
@pytest.mark.parametrize("annotation,expected", [(None, True), ("true", False), ("5m", True), ("15m", False)])
def test_is_disruptable_active_pod(annotation, expected):
    events: list = []
    assert podutil.is_disruptable(_pod(annotation), NOW, events) is expected
    assert not any(e[0] == "InvalidDoNotDisruptAnnotation" for e in events)


# upstream: pkg/utils/pod/suite_test.go "should be disruptable for terminal pod even with annotation"
def test_terminal_pod_is_disruptable():
    assert podutil.is_disruptable(_pod("true", phase="Succeeded"), NOW) is True


def test_reschedulable_rules():
    # scheduling.go IsReschedulable: active, or a terminating StatefulSet pod; not DS, not mirror
    active = _pod()
    assert podutil.is_reschedulable(active)
    terminating = _pod()
    terminating.metadata.deletion_timestamp = EPOCH
    assert not podutil.is_reschedulable(terminating)
    sts = _pod(owner_references=[OwnerReference(api_version="apps/v1", kind="StatefulSet", name="s", uid="u",
                                                controller=True)])
    sts.metadata.deletion_timestamp = EPOCH
    assert podutil.is_reschedulable(sts)
    ds = _pod(owner_references=[OwnerReference(api_version="apps/v1", kind="DaemonSet", name="d", uid="u")])
    assert not podutil.is_reschedulable(ds)
    mirror = _pod(owner_references=[OwnerReference(api_version="v1", kind="Node", name="n", uid="u")])
    assert not podutil.is_reschedulable(mirror)
    assert not podutil.is_reschedulable(_pod(phase="Failed"))


def test_evictable_and_drainable():
    tolerating = _pod(tolerations=[Toleration(key="karpenter.sh/disrupted", operator="Exists")])
    assert podutil.tolerates_disrupted_no_schedule_taint(tolerating)
    assert not podutil.is_evictable(tolerating, NOW)
    assert not podutil.is_drainable(tolerating, NOW)
    assert podutil.is_evictable(_pod(), NOW)
    # do-not-disrupt pods are drainable (the drain waits) but not evictable
    assert not podutil.is_evictable(_pod("true"), NOW)
    assert podutil.is_drainable(_pod("true"), NOW)
    stuck = _pod()
    stuck.metadata.deletion_timestamp = EPOCH  # t=0, now is an hour later
    assert podutil.is_stuck_terminating(stuck, NOW)
    assert not podutil.is_waiting_eviction(stuck, NOW)
    assert not podutil.is_stuck_terminating(stuck, 60.0)


def test_forced_eviction_eligibility():
    p = _pod()
    from datetime import timedelta

    p.metadata.deletion_timestamp = EPOCH + timedelta(seconds=100)
    assert podutil.is_pod_eligible_for_forced_eviction(p, 50.0)
    assert not podutil.is_pod_eligible_for_forced_eviction(p, 150.0)
    assert not podutil.is_pod_eligible_for_forced_eviction(p, None)


@pytest.mark.parametrize("value,seconds", [("5m", 300), ("1h30m", 5400), ("1.5h", 5400), ("300ms", 0.3),
                                           ("-5m", -300), ("0", 0), ("2h45m30s", 9930)])
def test_parse_go_duration(value, seconds):
    assert parse_go_duration(value) == pytest.approx(seconds)


@pytest.mark.parametrize("value,message", [("invalid-format", 'time: invalid duration "invalid-format"'),
                                           ("5", 'time: missing unit in duration "5"'),
                                           ("", 'time: invalid duration ""')])
def test_parse_go_duration_errors(value, message):
    with pytest.raises(DurationError, match=message.replace('"', '.')):
        parse_go_duration(value)
