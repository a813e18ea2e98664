"""``karpy.align_billing``: verify the NodeOverlays that teach Karpenter the bill, by re-running.

:mod:`karpy.billing` names where Karpenter's list-price choice is not the cheapest on the bill and
the NodeOverlay ``priceAdjustment``s that would align its ranking (``cost.billed.overlays``). An
overlay is a claim about what Karpenter would then do; this runs the design again with them (the
``NodeOverlay`` feature gate on) and reports what changed on the bill -- verified, never estimated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from karpy._errors import KarpyError
from karpy.result import Result

__all__ = ["BillingAlignment", "BillingAlignmentError", "align_billing"]


class BillingAlignmentError(KarpyError, ValueError):
    """``align_billing`` without a BillingProfile."""


def _launched(result: Result) -> dict[str, int]:
    out: dict[str, int] = {}
    for nc in result.launched:
        if nc.instance_type:
            key = f"{nc.instance_type} {nc.capacity_type}"
            out[key] = out.get(key, 0) + 1
    return out


def _side(result: Result) -> dict[str, Any]:
    cost = result.cost
    assert cost.billed is not None, "align_billing runs every side with the same BillingProfile"
    return {"launched": _launched(result), "list_total": cost.total, "billed_total": cost.billed.total,
            "unused_commitment": cost.billed.unused_commitment,
            "cheaper_on_bill": sum(1 for m in cost.billed.misalignments if m["kind"] == "cheaper-on-bill"),
            "pending_pods": len(result.pending_pods)}


@dataclass(frozen=True)
class BillingAlignment:
    """The design as given (``before``) and re-run with the aligning overlays (``after``)."""

    before: Result
    after: Result
    overlays: tuple[dict[str, Any], ...]

    @property
    def saving(self) -> float:
        """Billed dollars the overlays saved over the horizon (negative: they cost more)."""
        b, a = self.before.cost.billed, self.after.cost.billed
        assert b is not None and a is not None
        return round(b.total - a.total, 6)

    @property
    def verified(self) -> bool:
        """The overlays lowered the bill without leaving more pods pending."""
        return bool(self.overlays) and self.saving > 0 and len(self.after.pending_pods) <= len(self.before.pending_pods)

    def to_document(self) -> dict[str, Any]:
        """``{"overlays", "before", "after", "saving", "verified"}`` (each side: what launched, the
        list and billed totals, unused commitment, cheaper-on-bill entries left, pods pending)."""
        return {"overlays": [dict(o) for o in self.overlays], "before": _side(self.before),
                "after": _side(self.after), "saving": self.saving, "verified": self.verified}


def _as_list(manifests: Any) -> list[Any]:
    return list(manifests) if isinstance(manifests, (list, tuple)) else [manifests]


def align_billing(manifests: Any, *, billing: Any = None, **options: Any) -> BillingAlignment:
    """Simulate ``manifests`` under ``billing`` (or the BillingProfile among them), then again with
    ``cost.billed.overlays`` added and the NodeOverlay gate on; ``options`` are
    :func:`karpy.simulate`'s. With no overlay to try, ``after`` is ``before``. Overlays of the
    user's own with the same weights may conflict with these (Karpenter then reports the conflict)."""
    from karpy.simulator import simulate

    before = simulate(manifests, billing=billing, **options)
    billed = before.cost.billed
    if billed is None:
        raise BillingAlignmentError("align_billing needs a karpy.io/v1alpha1 BillingProfile (billing= or among "
                                    "the manifests)")
    overlays = tuple(billed.overlays)
    if not overlays:
        return BillingAlignment(before, before, overlays)
    gates: Mapping[str, bool] = {**dict(options.pop("feature_gates", None) or {}), "NodeOverlay": True}
    extra: Sequence[Any] = [dict(o) for o in overlays]
    after = simulate([*_as_list(manifests), *extra], billing=billing, feature_gates=gates, **options)
    return BillingAlignment(before, after, overlays)
