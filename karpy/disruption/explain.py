"""Why a NodeClaim was or was not disrupted: ``karpy explain --nodeclaim NAME`` with
``--disruption``.

Collects, from what the controller recorded: the NodeClaim's disruption conditions
(Consolidatable, Drifted, DisruptionReason), the decisions that named it (method, reason,
savings, budget, validation), the last time each blocker was seen — the upstream event texts of
``DisruptionBlocked`` (do-not-disrupt, PDB, nomination, budget ...), ``Unconsolidatable``
(consolidation disabled, WhenEmpty, the simulation's result, "Can't replace with a cheaper node",
the spot-to-spot gate ...) and ``ConsolidationRejected`` — and how it ended (deleted_by/at).
"""

from __future__ import annotations

from typing import Any

__all__ = ["explain_disruption", "render_disruption"]


def explain_disruption(controller: Any, record: Any) -> dict[str, Any]:
    name = record.name
    claim = record.launched
    conditions = {}
    if claim is not None:
        for c in claim.status.conditions or ():
            if c.type in ("Initialized", "Consolidatable", "Drifted", "DisruptionReason"):
                conditions[c.type] = {"status": c.status, "reason": c.reason}
    blockers = [{"t": t, "event": reason, "message": msg}
                for (reason, msg), t in sorted(controller.node_events.get(name, {}).items(), key=lambda kv: kv[1])]
    decisions = [d for d in controller.decisions if name in d["candidates"] or name in d["replacements"]]
    return {"conditions": conditions, "decisions": decisions, "events": blockers,
            "deleted_by": controller.deleted_by.get(name), "deleted_at": controller.deleted_at.get(name)}


def render_disruption(d: dict[str, Any], lines: list[str]) -> None:
    lines.append("  disruption:")
    if d.get("deleted_by"):
        lines.append(f"    deleted by {d['deleted_by']} at t={d.get('deleted_at')}s")
    for k, v in d.get("conditions", {}).items():
        lines.append(f"    condition {k}={v['status']}" + (f" ({v['reason']})" if v.get("reason") else ""))
    for dec in d.get("decisions", []):
        lines.append(f"    t={dec['t']:g}s {dec['method']}: {dec['decision']} {dec['candidates']} -> "
                     f"{dec['replacements']} savings ${dec['savings_per_hour']:.4f}/h budget {dec['budget']} "
                     f"validated={dec['validated']}" + (f" error: {dec['error']}" if dec.get("error") else ""))
    for ev in d.get("events", []):
        lines.append(f"    last at t={ev['t']:g}s {ev['event']}: {ev['message']}")
