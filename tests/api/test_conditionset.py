"""karpy.api.conditionset: operatorpkg's ConditionSet. Ported from awslabs/operatorpkg
status/condition_set_test.go (the version Karpenter v1.14 pins); upstream sleeps a nanosecond between
steps, karpy advances the virtual clock a second. The test object's dependents are Foo and Bar
(test.CustomObject), Baz is not one."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from karpy.api.conditionset import ConditionSet

FOO, BAR, BAZ = "Foo", "Bar", "Baz"


def _object() -> Any:
    return SimpleNamespace(metadata=SimpleNamespace(generation=1, creation_timestamp=None),
                           status=SimpleNamespace(conditions=[]))


def _cs(obj: Any, now: float) -> ConditionSet:
    return ConditionSet.for_object(obj, (FOO, BAR), now)


def test_should_correctly_toggle_conditions() -> None:
    # condition_set_test.go It("should correctly toggle conditions")
    obj = _object()
    cs = _cs(obj, 0)
    assert [cs.get(t).status for t in (FOO, BAR, "Ready")] == ["Unknown"] * 3  # type: ignore[union-attr]
    assert cs.set_unknown(FOO, "reason", "message")
    foo = cs.get(FOO)
    assert foo is not None and (foo.reason, foo.message, foo.observed_generation) == ("reason", "message", 1)
    cs = _cs(obj, 1)
    assert cs.set_true(FOO)
    foo = cs.get(FOO)
    assert foo is not None and (foo.status, foo.reason, foo.message) == ("True", FOO, "")  # reason defaults to type
    assert cs.root_condition().status == "Unknown"  # type: ignore[union-attr]
    cs = _cs(obj, 2)
    assert cs.set_false(BAR, "reason", "message")
    bar_false = cs.get(BAR)
    assert cs.root_condition().status == "False"  # type: ignore[union-attr]
    cs = _cs(obj, 3)
    assert cs.set_true(BAR, "reason", "message")  # SetTrueWithReason
    bar = cs.get(BAR)
    assert bar is not None and bar.last_transition_time > foo.last_transition_time  # type: ignore[operator]
    assert cs.root_condition().status == "True"  # type: ignore[union-attr]
    cs = _cs(obj, 4)
    assert cs.set_false(BAR, "another-reason", "another-message")
    bar = cs.get(BAR)
    assert bar is not None and bar.reason == "another-reason"
    assert bar_false is not None and bar.last_transition_time != bar_false.last_transition_time
    # don't transition if reason and message are the same
    assert not cs.set_true(FOO)
    assert not cs.set_false(BAR, "another-reason", "another-message")
    # a condition set for the first time that is not a dependent
    assert cs.set_true(BAZ)
    baz = cs.get(BAZ)
    assert baz is not None and baz.last_transition_time is not None and baz.observed_generation == 1
    obj.metadata.generation = 2
    cs = _cs(obj, 5)
    assert cs.set_false(BAR, "another-reason", "another-message")
    bar2 = cs.get(BAR)
    assert bar2 is not None and bar2.last_transition_time == bar.last_transition_time and bar2.observed_generation == 2
    root = cs.root_condition()
    assert root is not None and (root.status, root.reason) == ("False", "UnhealthyDependents")
    # root Unknown when nothing is False but an observedGeneration is behind
    assert cs.set_true(BAR)
    root = cs.root_condition()
    assert root is not None and (root.status, root.reason) == ("Unknown", "ReconcilingDependents")
    assert cs.set_true(FOO)
    assert cs.root_condition().status == "True"  # type: ignore[union-attr]


def test_should_sort_status_conditions() -> None:
    # condition_set_test.go It("should sort status conditions"): root last, the others by transition time
    obj = _object()
    assert [c.type for c in _cs(obj, 0).conditions][-1] == "Ready"
    _cs(obj, 1).set_true(FOO)
    assert [c.type for c in obj.status.conditions][-2:] == [FOO, "Ready"]
    _cs(obj, 2).set_true(BAR)
    assert [c.type for c in obj.status.conditions][-3:] == [FOO, BAR, "Ready"]
    _cs(obj, 3).set_true(BAZ)
    assert [c.type for c in obj.status.conditions] == [FOO, BAR, BAZ, "Ready"]


def test_root_message_lists_unhealthy_dependents_newest_first() -> None:
    # condition_set.go recomputeRootCondition: "Type=Status" of each unhealthy dependent, newest first
    obj = _object()
    _cs(obj, 0).set_false(FOO, "r", "m")
    _cs(obj, 10).set_false(BAR, "r", "m")
    root = _cs(obj, 10).root_condition()
    assert root is not None and root.message == "Bar=False, Foo=False"
