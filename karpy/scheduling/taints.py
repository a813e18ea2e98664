"""Taints and tolerations as Karpenter evaluates them.

Mirrors ``pkg/scheduling/taints.go`` (Tolerates, Merge, KnownEphemeralTaints) and
``k8s.io/api/core/v1`` ``Toleration.ToleratesTaint`` (with the v1.35 ``Gt``/``Lt``
comparison operators enabled, as Karpenter calls it). Karpenter checks *every* taint
effect, PreferNoSchedule included — unlike kube-scheduler's TaintToleration filter.
Taints and tolerations are duck-typed: anything with ``key``/``value``/``effect``
(and ``operator`` for tolerations) works, including the pydantic API models.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

__all__ = [
    "KNOWN_EPHEMERAL_TAINTS",
    "KNOWN_EPHEMERAL_TAINT_KEY_PREFIXES",
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "PREFER_NO_SCHEDULE",
    "TaintSpec",
    "format_taint",
    "is_known_ephemeral_taint",
    "match_taint",
    "merge_taints",
    "toleration_tolerates_taint",
    "tolerates",
]

#: a taint type kept through merge_taints
TaintT = TypeVar("TaintT", bound="TaintLike")

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"


class TaintLike(Protocol):
    """A taint: the API model (:class:`karpy.api.pod.Taint`), a :class:`TaintSpec`, a provider's own."""

    @property
    def key(self) -> str: ...
    @property
    def value(self) -> str | None: ...
    @property
    def effect(self) -> str: ...


class TolerationLike(Protocol):
    """A toleration: the API model (:class:`karpy.api.pod.Toleration`) or any with its four fields."""

    @property
    def key(self) -> str | None: ...
    @property
    def operator(self) -> str | None: ...
    @property
    def value(self) -> str | None: ...
    @property
    def effect(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class TaintSpec:
    """A plain taint value (used for built-in taints; API models work the same way)."""

    key: str
    value: str | None = None
    effect: str = NO_SCHEDULE


#: pkg/scheduling/taints.go KnownEphemeralTaints
KNOWN_EPHEMERAL_TAINTS: tuple[TaintSpec, ...] = (
    TaintSpec("node.kubernetes.io/not-ready", None, NO_SCHEDULE),
    TaintSpec("node.kubernetes.io/not-ready", None, NO_EXECUTE),
    TaintSpec("node.kubernetes.io/unreachable", None, NO_SCHEDULE),
    TaintSpec("node.cloudprovider.kubernetes.io/uninitialized", "true", NO_SCHEDULE),
    TaintSpec("karpenter.sh/unregistered", None, NO_EXECUTE),
)
#: pkg/scheduling/taints.go KnownEphemeralTaintKeyPrefixes
KNOWN_EPHEMERAL_TAINT_KEY_PREFIXES: tuple[str, ...] = ("readiness.k8s.io/",)


def _value(t: TaintLike | TolerationLike) -> str:
    return getattr(t, "value", None) or ""


def match_taint(a: TaintLike, b: TaintLike) -> bool:
    """``Taint.MatchTaint``: same key and effect (the value is not compared)."""
    return bool(a.key == b.key and a.effect == b.effect)


def _match_exact(a: TaintLike, b: TaintLike) -> bool:
    return a.key == b.key and a.effect == b.effect and _value(a) == _value(b)


def is_known_ephemeral_taint(taint: TaintLike) -> bool:
    """``IsKnownEphemeralTaint``: exact key/value/effect match, or an ephemeral key prefix."""
    if any(_match_exact(taint, k) for k in KNOWN_EPHEMERAL_TAINTS):
        return True
    return any(taint.key.startswith(p) for p in KNOWN_EPHEMERAL_TAINT_KEY_PREFIXES)


def _parse_int(s: str) -> int | None:
    try:
        return int(s)
    except ValueError:
        return None


def toleration_tolerates_taint(toleration: TolerationLike, taint: TaintLike) -> bool:
    """``Toleration.ToleratesTaint`` (k8s.io/api/core/v1/toleration.go).

    An empty effect matches every effect; an empty key (only valid with ``Exists``) matches
    every key; the operator defaults to ``Equal``. ``Gt``/``Lt`` (KEP-5471) compare the taint's
    value to the toleration's as integers: ``Gt`` tolerates a taint whose value is greater.
    """
    effect = getattr(toleration, "effect", None) or ""
    if effect and effect != taint.effect:
        return False
    key = getattr(toleration, "key", None) or ""
    if key and key != taint.key:
        return False
    op = getattr(toleration, "operator", None) or "Equal"
    if op == "Equal":
        return _value(toleration) == _value(taint)
    if op == "Exists":
        return True
    if op in ("Gt", "Lt"):
        tv, xv = _parse_int(_value(taint)), _parse_int(_value(toleration))
        if tv is None or xv is None:
            return False
        return tv > xv if op == "Gt" else tv < xv
    return False


def format_taint(taint: TaintLike) -> str:
    """``pretty.Taint``: ``key=value:Effect`` or ``key:Effect`` when the value is empty."""
    value = _value(taint)
    return f"{taint.key}={value}:{taint.effect}" if value else f"{taint.key}:{taint.effect}"


def tolerates(taints: Iterable[TaintLike], tolerations: Sequence[TolerationLike]) -> str | None:
    """``Taints.Tolerates``: None when every taint is tolerated, else one message per taint.

    Messages are ``did not tolerate taint (taint=<taint>)`` joined with ``"; "`` as multierr does.
    """
    errors: list[str] | None = None
    for taint in taints:
        for tol in tolerations:
            if toleration_tolerates_taint(tol, taint):
                break
        else:
            if errors is None:
                errors = []
            errors.append(f"did not tolerate taint (taint={format_taint(taint)})")
    return "; ".join(errors) if errors else None


def merge_taints(base: Iterable[TaintT], extra: Iterable[TaintT]) -> list[TaintT]:
    """``Taints.Merge``: ``base`` plus each taint of ``extra`` not matching (key, effect) one of them."""
    result = list(base)
    for taint in extra:
        if not any(match_taint(taint, t) for t in result):
            result.append(taint)
    return result
