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

__all__ = ["BillingAlignment", "BillingAlignmentError", "align_billing", "align_result"]


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
            "cost_per_hour": result.cost_per_hour, "billed_per_hour": cost.billed.effective_per_hour,
            "unused_commitment": cost.billed.unused_commitment,
            "cheaper_on_bill": sum(1 for m in cost.billed.misalignments if m["kind"] == "cheaper-on-bill"),
            "pending_pods": len(result.pending_pods)}


@dataclass(frozen=True)
class BillingAlignment:
    """The design as given (``before``) and re-run with the aligning overlays (``after``)."""

    before: Result
    after: Result
    overlays: tuple[dict[str, Any], ...]
    #: why the design was not re-run (``after`` is then ``before``; never verified)
    note: str | None = None

    @property
    def saving(self) -> float:
        """Billed dollars the overlays saved over the horizon (negative: they cost more)."""
        b, a = self.before.cost.billed, self.after.cost.billed
        assert b is not None and a is not None
        return round(b.total - a.total, 6)

    @property
    def verified(self) -> bool:
        """The overlays lowered the bill without leaving more pods pending."""
        return (bool(self.overlays) and self.note is None and self.saving > 0
                and len(self.after.pending_pods) <= len(self.before.pending_pods))

    def to_document(self) -> dict[str, Any]:
        """``{"overlays", "before", "after", "saving", "verified"}`` and ``note`` when not re-run (each
        side: what launched, the list and billed totals, $/h at the end on list and effective on the
        bill, unused commitment, cheaper-on-bill entries left, pods pending)."""
        out = {"overlays": [dict(o) for o in self.overlays], "before": _side(self.before),
               "after": _side(self.after), "saving": self.saving, "verified": self.verified}
        if self.note is not None:
            out["note"] = self.note
        return out


def _as_list(manifests: Any) -> list[Any]:
    return list(manifests) if isinstance(manifests, (list, tuple)) else [manifests]


def align_billing(manifests: Any, *, billing: Any = None, **options: Any) -> BillingAlignment:
    """Simulate ``manifests`` under ``billing`` (or the BillingProfile among them), then again with
    ``cost.billed.overlays`` added and the NodeOverlay gate on; ``options`` are
    :func:`karpy.simulate`'s. With no overlay to try, ``after`` is ``before``. Overlays of the
    user's own with the same weights may conflict with these (Karpenter then reports the conflict)."""
    from karpy.simulator import simulate

    return align_result(simulate(manifests, billing=billing, **options))


def align_result(before: Result, overlays: Sequence[Mapping[str, Any]] | None = None) -> BillingAlignment:
    """:func:`align_billing` for a run already made: re-run it as it was called (``Result.inputs``)
    with ``overlays`` (default: every ``cost.billed.overlays``) added and the NodeOverlay gate on.
    A run that cannot be re-run (a provider object, manifests from standard input) is not verified
    and ``note`` says why."""
    billed = before.cost.billed
    if billed is None:
        raise BillingAlignmentError("align_billing needs a karpy.io/v1alpha1 BillingProfile (billing= or among "
                                    "the manifests)")
    chosen = tuple(dict(o) for o in (billed.overlays if overlays is None else overlays))
    if not chosen:
        return BillingAlignment(before, before, chosen)
    inputs = before.inputs
    if inputs is None:
        return BillingAlignment(before, before, chosen, "the run was not built by karpy.simulate from manifests")
    sources = _as_list(inputs.manifests)
    if any(isinstance(x, str) and x == "-" for x in sources):
        return BillingAlignment(before, before, chosen, "the manifests came from standard input and cannot be "
                                                        "re-read")
    options = dict(inputs.options)
    gates: Mapping[str, bool] = {**dict(options.pop("feature_gates", None) or {}), "NodeOverlay": True}
    after = inputs.rerun([*sources, *[dict(o) for o in chosen]], feature_gates=gates, **options)
    return BillingAlignment(before, after, chosen)


def aligned_document(result: Result, document: Mapping[str, Any]) -> dict[str, Any]:
    """``document`` as the text and HTML views show it: where the bill names aligning overlays,
    ``cost.billed.alignment`` (:func:`align_result`'s document, the overlays checked by re-running).
    The JSON document stays as :func:`karpy.simulate` made it."""
    cost = document.get("cost")
    billed = cost.get("billed") if isinstance(cost, Mapping) else None
    if not isinstance(cost, Mapping) or not isinstance(billed, Mapping) or not billed.get("overlays"):
        return dict(document)
    alignment = align_result(result).to_document()
    return {**document, "cost": {**cost, "billed": {**billed, "alignment": alignment}}}


def bill_of(result: Result, nodeclaim: str | None = None) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """``karpy explain``'s bill: ``cost.billed`` (for ``nodeclaim``, only the misalignments naming it
    and their overlays) and, when it names overlays, :func:`align_result`'s document for them
    (checked by re-running); None without a BillingProfile."""
    billed = result.cost.billed
    if billed is None:
        return None
    data = billed.to_dict()
    if nodeclaim is not None:
        mine = [m for m in data["misalignments"] if nodeclaim in m.get("nodeclaims", ())]
        names = {n for m in mine for n in m["overlays"]}
        data = {**data, "misalignments": mine,
                "overlays": [o for o in data["overlays"] if o["metadata"]["name"] in names]}
    alignment = align_result(result, data["overlays"]).to_document() if data["overlays"] else None
    return data, alignment
