"""Status conditions with a root: awslabs/operatorpkg ``status.ConditionSet`` (status/condition_set.go).

Karpenter's objects (NodePool, EC2NodeClass, ...) carry a list of conditions, some of which are
*dependents* of a root ``Ready`` condition. :class:`ConditionSet` is operatorpkg's logic over a
karpy object (anything with ``.status.conditions`` and ``.metadata``):

* :meth:`ConditionSet.for_object` (``ConditionTypes.For``): every root/dependent condition that is
  missing is set ``Unknown`` (``AwaitingReconciliation``, "object is awaiting reconciliation");
* :meth:`ConditionSet.set` keeps ``lastTransitionTime`` while the status stays the same, and a
  dependent seen for the first time gets the object's ``creationTimestamp``; conditions are kept
  root-last, the others by transition time (a stable sort, as upstream);
* after a dependent changes, the root is recomputed: ``True`` (reason ``Ready``) when every
  dependent is True, else ``False`` ``UnhealthyDependents`` when one is False (``Unknown``
  ``ReconcilingDependents`` otherwise), message ``"A=False, B=Unknown"`` over the unhealthy
  dependents, newest transition first.

Deterministic rules karpy chooses where Go is not: the clock is the virtual clock (``now``:
seconds since :data:`karpy.api.time.EPOCH`); an object without ``creationTimestamp`` counts as
created at ``now``; unhealthy dependents with equal transition times keep the conditions' order
(Go's ``sort.Slice`` is not stable); ``observedGeneration`` is the object's ``metadata.generation``
(None when the object has none).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from karpy.api.meta import Condition
from karpy.api.time import EPOCH

__all__ = [
    "CONDITION_READY",
    "REASON_AWAITING_RECONCILIATION",
    "REASON_RECONCILING_DEPENDENTS",
    "REASON_UNHEALTHY_DEPENDENTS",
    "ConditionSet",
    "condition_document",
]

#: status/types.go ConditionReady
CONDITION_READY = "Ready"
#: condition_set.go SetUnknown
REASON_AWAITING_RECONCILIATION = "AwaitingReconciliation"
MESSAGE_AWAITING_RECONCILIATION = "object is awaiting reconciliation"
#: condition_set.go recomputeRootCondition
REASON_UNHEALTHY_DEPENDENTS = "UnhealthyDependents"
REASON_RECONCILING_DEPENDENTS = "ReconcilingDependents"


class ConditionSet:
    """operatorpkg ``ConditionSet`` over ``obj.status.conditions`` (see the module doc)."""

    def __init__(self, obj: Any, dependents: Sequence[str], now: float, root: str = CONDITION_READY) -> None:
        self.obj = obj
        self.root = root
        self.dependents = tuple(d for d in dict.fromkeys(dependents) if d != root)
        self._now = EPOCH + timedelta(seconds=float(now))

    @classmethod
    def for_object(cls, obj: Any, dependents: Sequence[str], now: float,
                   root: str = CONDITION_READY) -> ConditionSet:
        """``ConditionTypes.For``: the set, with every missing root/dependent condition Unknown."""
        cs = cls(obj, dependents, now, root)
        for t in (cs.root, *cs.dependents):
            if cs.get(t) is None:
                cs.set_unknown(t)
        return cs

    # -- reading --------------------------------------------------------------------------------
    @property
    def conditions(self) -> list[Condition]:
        return list(self.obj.status.conditions or ())

    def get(self, cond_type: str) -> Condition | None:
        return next((c for c in self.obj.status.conditions or () if c.type == cond_type), None)

    def root_condition(self) -> Condition | None:
        return self.get(self.root)

    def is_true(self, *cond_types: str) -> bool:
        return all((c := self.get(t)) is not None and c.status == "True" for t in cond_types)

    # -- writing --------------------------------------------------------------------------------
    def _generation(self) -> int | None:
        meta = getattr(self.obj, "metadata", None)
        return getattr(meta, "generation", None) if meta is not None else None

    def set(self, cond_type: str, status: str, reason: str, message: str) -> bool:
        """condition_set.go Set: True when the conditions changed."""
        generation = self._generation()
        new = Condition(type=cond_type, status=status, reason=reason, message=message,
                        observed_generation=generation)
        kept: list[Condition] = []
        found = False
        for cond in self.obj.status.conditions or ():
            if cond.type != cond_type:
                kept.append(cond)
                continue
            found = True
            new.last_transition_time = cond.last_transition_time if cond.status == status else self._now
            if new == cond:
                return False
        if not found:
            created = getattr(getattr(self.obj, "metadata", None), "creation_timestamp", None)
            new.last_transition_time = (created or self._now) if cond_type in (self.root, *self.dependents) \
                else self._now
        kept.append(new)
        floor = datetime.min.replace(tzinfo=self._now.tzinfo)
        kept.sort(key=lambda c: (c.type == self.root, c.last_transition_time or floor))
        self.obj.status.conditions = kept
        self._recompute_root(cond_type)
        return True

    def set_true(self, cond_type: str, reason: str | None = None, message: str = "") -> bool:
        """SetTrue / SetTrueWithReason (the reason defaults to the condition type)."""
        return self.set(cond_type, "True", reason if reason is not None else cond_type, message)

    def set_false(self, cond_type: str, reason: str, message: str) -> bool:
        return self.set(cond_type, "False", reason, message)

    def set_unknown(self, cond_type: str, reason: str = REASON_AWAITING_RECONCILIATION,
                    message: str = MESSAGE_AWAITING_RECONCILIATION) -> bool:
        """SetUnknown / SetUnknownWithReason."""
        return self.set(cond_type, "Unknown", reason, message)

    def _unhealthy(self) -> list[Condition]:
        generation = self._generation()
        out = [c for c in self.obj.status.conditions or () if c.type in self.dependents
               and (c.status != "True" or c.observed_generation != generation)]
        floor = datetime.min.replace(tzinfo=self._now.tzinfo)
        return sorted(out, key=lambda c: c.last_transition_time or floor, reverse=True)

    def _recompute_root(self, cond_type: str) -> None:
        if cond_type == self.root:
            return
        unhealthy = self._unhealthy()
        if not unhealthy:
            self.set_true(self.root)
            return
        generation = self._generation()
        failed = any(c.status == "False" and c.observed_generation == generation for c in unhealthy)
        self.set(self.root, "False" if failed else "Unknown",
                 REASON_UNHEALTHY_DEPENDENTS if failed else REASON_RECONCILING_DEPENDENTS,
                 ", ".join(f"{c.type}={c.status}" for c in unhealthy))


def condition_document(cond: Condition) -> dict[str, Any]:
    """A condition as karpy's JSON document carries it (``nodeclasses`` / ``nodepools``):
    ``type``, ``status``, ``reason``, ``message`` and ``last_transition_time`` (RFC 3339)."""
    ltt = cond.last_transition_time
    return {"type": cond.type, "status": cond.status, "reason": cond.reason or "", "message": cond.message or "",
            "last_transition_time": ltt.isoformat().replace("+00:00", "Z") if ltt is not None else None}
