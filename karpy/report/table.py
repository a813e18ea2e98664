"""Plain-text table view of a simulation document (the ``-o table`` output).

The input is the JSON document of docs/contract.md. Only the keys of the contract are
read; unknown keys are ignored, and missing optional keys degrade to ``-``. Output is plain ASCII
layout (no colour codes), deterministic, and keeps the document's order for NodeClaims and pods.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from karpy.scheduling.requirement import natural_sorted

__all__ = [
    "natural_sorted",
    "render_table",
    "prices_notes",
    "group_pending",
    "summarize_failures",
    "failure_groups",
    "capacity_note",
    "is_launched",
    "instance_family",
    "pods_by_phase",
    "format_price",
    "total_cost",
]

FAMILY_LABEL = "karpenter.k8s.aws/instance-family"
MAX_POD_NAMES = 3
"""How many pod names the table spells out per NodeClaim before "+N more"."""
DASH = "-"


def format_price(price: Any) -> str:
    """Format a $/h amount with 5 decimals; ``-`` when absent."""
    if price is None or isinstance(price, bool):
        return DASH
    try:
        return f"{float(price):.5f}"
    except (TypeError, ValueError):
        return DASH


def is_launched(nodeclaim: Mapping[str, Any]) -> bool:
    """True when the NodeClaim's launch succeeded (it has an instance type, and is not marked failed)."""
    if nodeclaim.get("launched") is False:
        return False
    return nodeclaim.get("instance_type") is not None


def instance_family(nodeclaim: Mapping[str, Any]) -> str | None:
    """The instance family: the AWS family label, else the type name before the first ``.``."""
    labels = nodeclaim.get("labels") or {}
    family = labels.get(FAMILY_LABEL) if isinstance(labels, Mapping) else None
    if family:
        return str(family)
    itype = nodeclaim.get("instance_type")
    if not itype:
        return None
    return str(itype).split(".", 1)[0]


def pods_by_phase(document: Mapping[str, Any], phase: str) -> list[tuple[str, Mapping[str, Any]]]:
    """Pods of one phase as ``(key, status)`` pairs, in document order."""
    pods = document.get("pods") or {}
    return [(key, st) for key, st in pods.items() if isinstance(st, Mapping) and st.get("phase") == phase]


def total_cost(document: Mapping[str, Any]) -> float:
    """The document's ``cost_per_hour``; when absent, the sum of the launched NodeClaims' prices."""
    cost = document.get("cost_per_hour")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        return float(cost)
    return sum(
        float(nc.get("price") or 0.0) for nc in document.get("nodeclaims") or [] if is_launched(nc)
    )


def clean(value: Any) -> str:
    """One-line text for a cell: ``-`` for None; whitespace runs collapsed; control chars escaped.

    Escaping control characters keeps user text (pod messages, names) from smuggling terminal escape
    sequences into the output.
    """
    if value is None:
        return DASH
    text = str(value)
    out: list[str] = []
    for ch in text:
        if ch in "\n\r\t\v\f":
            out.append(" ")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp"):
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return " ".join("".join(out).split()) or DASH


def abbreviate_pods(pods: Sequence[str], limit: int = MAX_POD_NAMES) -> str:
    """``"5: a, b, c, +2 more"``; ``"0"`` when there are none."""
    names = [clean(p) for p in pods]
    if not names:
        return "0"
    shown = ", ".join(names[:limit])
    rest = len(names) - limit
    return f"{len(names)}: {shown}" + (f", +{rest} more" if rest > 0 else "")


def format_rows(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """Left-aligned fixed-width columns (width = widest cell), two spaces apart, no trailing blanks."""
    body = [list(r) for r in rows]
    widths = [len(h) for h in header]
    for row in body:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    lines = []
    for row in [list(header), *body]:
        line = "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row))
        lines.append(line.rstrip())
    return lines


#: what the document's ``prices.spot`` values mean, as every output words them
SPOT_BASIS_TEXT = {
    "modelled": "spot prices modelled (spot-advisor savings + a per-zone offset), not measured",
    "measured": "spot prices measured",
    "on-demand": "spot priced as on-demand",
}


def prices_notes(prices: Any, region: Any = None) -> list[str]:
    """What the table, explain and the HTML report say about the prices beyond date and source:
    the date fallback, a proxy region, how spot is priced, and the OS the table prices."""
    if not isinstance(prices, Mapping):
        return []
    notes: list[str] = []
    if prices.get("requested_date"):
        notes.append(f"no table dated {prices['requested_date']}: using {prices.get('date')}, the newest on or "
                     "before it")
    if prices.get("proxy"):
        notes.append(f"PROXY prices: the {prices.get('region')} table stands in for {region or 'this region'}")
    spot = prices.get("spot")
    if spot in SPOT_BASIS_TEXT:
        notes.append(SPOT_BASIS_TEXT[spot])
    if prices.get("operating_system"):
        notes.append(f"{prices['operating_system']} prices (no Windows licence)")
    return notes


def group_pending(pending: Sequence[tuple[str, Mapping[str, Any]]]) -> list[tuple[str, str, str]]:
    """Pending pods as rows ``(pod, nominated, message)``; pods with the same owner, message and
    nomination collapse into one row ``52 × default/web-… (Deployment web)``, in first-seen order."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    for key, st in pending:
        owner = st.get("owner")
        gkey = (owner, st.get("nominated_node"), st.get("message")) if owner else (key,)
        groups.setdefault(gkey, []).append(key)
    rows: list[tuple[str, str, str]] = []
    for gkey, keys in groups.items():
        st = dict(pending)[keys[0]] if len(gkey) == 1 else {"nominated_node": gkey[1], "message": gkey[2]}
        if len(keys) == 1:
            label = clean(keys[0]) + (f" ({clean(gkey[0])})" if len(gkey) > 1 else "")
        else:
            prefix = _common_prefix(keys)
            label = f"{len(keys)} \u00d7 {clean(prefix)}\u2026 ({clean(gkey[0])})"
        rows.append((label, clean(st.get("nominated_node")), clean(st.get("message"))))
    return rows


def _common_prefix(keys: Sequence[str]) -> str:
    first, last = min(keys), max(keys)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def render_table(document: dict[str, Any], verbose: bool = False) -> str:
    """Render the document as a plain-text report ending in ``total: $X/h``.

    Sections: NodeClaims that launched and are still there (name, pool, type, capacity type, zone,
    $/h, pods), those deleted during the run (when, by what), failed launches grouped by NodePool and
    error (``verbose``: one row per fleet error), pending pods with their message, then the total.
    """
    nodeclaims: list[Mapping[str, Any]] = list(document.get("nodeclaims") or [])
    out = _header(document)
    out.extend(_launched_section([nc for nc in nodeclaims if is_launched(nc) and nc.get("deleted_at") is None]))
    out.extend(_deleted_section([nc for nc in nodeclaims if is_launched(nc) and nc.get("deleted_at") is not None]))
    out.extend(_failed_section([nc for nc in nodeclaims if not is_launched(nc)], verbose))
    out.extend(_pending_section(document))
    out.append("")
    out.append(f"total: ${total_cost(document):.5f}/h")
    out.extend(render_time(document))
    return "\n".join(out) + "\n"


def _header(document: Mapping[str, Any]) -> list[str]:
    """The region and price-table lines, then a blank line."""
    prices = document.get("prices") or {}
    head = f"region: {clean(document.get('region'))}"
    if prices:
        head += f"  prices: {clean(prices.get('date'))}"
        if prices.get("source"):
            head += f" ({clean(prices.get('source'))})"
    out = [head]
    notes = prices_notes(prices, document.get("region"))
    if notes:
        out.append("prices: " + "; ".join(clean(n) for n in notes))
    out.append("")
    return out


def _launched_section(launched: list[Mapping[str, Any]]) -> list[str]:
    """``NODECLAIMS (n)``: one row per launched NodeClaim, or ``(none)``."""
    out = [f"NODECLAIMS ({len(launched)})"]
    if not launched:
        out.append("(none)")
        return out
    out.extend(
        format_rows(
            ("NAME", "NODEPOOL", "INSTANCE TYPE", "CAPACITY", "ZONE", "$/H", "PODS"),
            (
                (
                    clean(nc.get("name")),
                    clean(nc.get("nodepool")),
                    clean(nc.get("instance_type")),
                    clean(nc.get("capacity_type")),
                    clean(nc.get("zone")),
                    format_price(nc.get("price")),
                    abbreviate_pods(nc.get("pods") or []),
                )
                for nc in launched
            ),
        )
    )
    return out


def _deleted_section(deleted: list[Mapping[str, Any]]) -> list[str]:
    """NodeClaims gone during the run: when, and by what (``deleted_at``, ``deleted_by``)."""
    if not deleted:
        return []
    return ["", f"DELETED NODECLAIMS ({len(deleted)})", *format_rows(
        ("NAME", "NODEPOOL", "INSTANCE TYPE", "CAPACITY", "ZONE", "$/H", "DELETED", "BY"),
        ((clean(nc.get("name")), clean(nc.get("nodepool")), clean(nc.get("instance_type")),
          clean(nc.get("capacity_type")), clean(nc.get("zone")), format_price(nc.get("price")),
          clock_time(float(nc["deleted_at"])), clean(nc.get("deleted_by"))) for nc in deleted))]


def _fleet_errors(nc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    fleet = nc.get("fleet") or {}
    errors = (fleet.get("errors") or []) if isinstance(fleet, Mapping) else []
    return [e for e in errors if isinstance(e, Mapping)]


def _capacity_of(nc: Mapping[str, Any]) -> Any:
    fleet = nc.get("fleet")
    return nc.get("capacity_type") or (fleet.get("capacity_type") if isinstance(fleet, Mapping) else None)


def summarize_failures(failed: Sequence[Mapping[str, Any]], names: bool = True) -> list[str]:
    """Failed launches grouped by NodePool, capacity type and error codes, one line per group:
    ``13 launches failed: c8i/m8i/r8i × 5 zones, InsufficientInstanceCapacity (nodepool gen8-only; ...)``."""
    return [line for line, _ in failure_groups(failed, names)]


def failure_groups(failed: Sequence[Mapping[str, Any]],
                   names: bool = True) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """:func:`summarize_failures`' lines with the failed NodeClaims of each, in first-seen order."""
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for nc in failed:
        codes = tuple(sorted({str(e.get("error_code")) for e in _fleet_errors(nc) if e.get("error_code")}))
        groups.setdefault((nc.get("nodepool"), _capacity_of(nc), codes), []).append(nc)
    lines: list[tuple[str, list[Mapping[str, Any]]]] = []
    for (pool, capacity, codes), claims in groups.items():
        errors = [e for nc in claims for e in _fleet_errors(nc)]
        families = natural_sorted({str(e["instance_type"]).split(".", 1)[0] for e in errors if e.get("instance_type")})
        zones = {e.get("zone") for e in errors if e.get("zone")}
        n = len(claims)
        what = "/".join(clean(f) for f in families) or "-"
        if zones:
            what += f" \u00d7 {len(zones)} zone{'s' if len(zones) != 1 else ''}"
        cause = ", ".join(clean(c) for c in codes) or "no fleet error"
        where = f"nodepool {clean(pool)}" + (f" {clean(capacity)}" if capacity else "")
        if names:
            where += "; " + abbreviate_pods([str(nc.get("name")) for nc in claims]).split(": ", 1)[-1]
        lines.append((f"{n} launch{'es' if n != 1 else ''} failed: {what}, {cause} ({where})", claims))
    return lines


def _failed_section(failed: list[Mapping[str, Any]], verbose: bool = False) -> list[str]:
    """``FAILED LAUNCHES (n)``: the launches grouped (:func:`summarize_failures`); ``verbose``: one row
    per fleet error of each failed NodeClaim (none failed: no section)."""
    if not failed:
        return []
    if not verbose:
        return ["", f"FAILED LAUNCHES ({len(failed)})", *summarize_failures(failed)]
    rows: list[tuple[str, ...]] = []
    for nc in failed:
        errors = _fleet_errors(nc)
        base = (clean(nc.get("name")), clean(nc.get("nodepool")), clean(nc.get("capacity_type")))
        if not errors:
            rows.append((*base, DASH, DASH, DASH))
        for err in errors:
            rows.append((*base, clean(err.get("error_code")), clean(err.get("instance_type")),
                         clean(err.get("zone"))))
    return ["", f"FAILED LAUNCHES ({len(failed)})",
            *format_rows(("NAME", "NODEPOOL", "CAPACITY", "ERROR", "INSTANCE TYPE", "ZONE"), rows)]


#: the message Karpenter gives a pod whose candidate list the ICE cache emptied (upstream
#: pkg/controllers/provisioning/scheduling/nodeclaim.go)
EMPTIED_BY_OFFERINGS = "filtered out all available instance types"


def capacity_note(document: Mapping[str, Any], pod: str, message: Any) -> str:
    """What the table adds to a pending pod's message when capacity errors emptied its candidate
    list: the failed launches it went through (the document's ``explain`` block) or, for Karpenter's
    "filtered out all available instance types", every failed launch of the run. ``""`` otherwise."""
    failed = [nc for nc in document.get("nodeclaims") or [] if not is_launched(nc) and _fleet_errors(nc)]
    if not failed:
        return ""
    claims = ((document.get("explain") or {}).get("nodeclaims") or {}) if isinstance(
        document.get("explain"), Mapping) else {}
    if EMPTIED_BY_OFFERINGS in str(message or ""):
        mine = failed
    else:
        mine = [nc for nc in failed if pod in ((claims.get(nc.get("name")) or {}).get("pods") or ())]
    if not mine:
        return ""
    return " (capacity errors: " + "; ".join(summarize_failures(mine, names=False)) + ")"


def _pending_section(document: Mapping[str, Any]) -> list[str]:
    """``PENDING PODS (n)``: identical pending pods grouped by owner (none pending: no section); a
    message gets the capacity errors that emptied the pod's candidate list (:func:`capacity_note`)."""
    pending = pods_by_phase(document, "Pending")
    if not pending:
        return []
    noted = [(key, {**st, "message": f"{st.get('message') or DASH}{capacity_note(document, key, st.get('message'))}"})
             for key, st in pending]
    return ["", f"PENDING PODS ({len(pending)})",
            *format_rows(("POD", "NOMINATED", "MESSAGE"), group_pending(noted))]


#: timeline kinds every run has; a run with anything else (a Scenario, a deletion, a completion)
#: gets the TIMELINE and COST sections
_LAUNCH_KINDS = frozenset({"pod.created", "pod.bound", "pod.evicted", "pod.deleted", "nodeclaim.created",
                           "nodeclaim.launched", "nodeclaim.launch-failed", "nodeclaim.registered",
                           "nodeclaim.initialized"})
_SEGMENT_KINDS = frozenset({"scale", "rollout", "apply", "delete", "capacity.unavailable", "capacity.available",
                            "interruption"})


def has_time_events(document: Mapping[str, Any]) -> bool:
    """Whether the run had time-dependent events (a Scenario, a deletion, a completion, ...): only
    then do the table and the report show the timeline, the cost integral and the charts."""
    return any(e.get("kind") not in _LAUNCH_KINDS for e in document.get("timeline") or [])


def clock_time(t: float) -> str:
    """Virtual seconds as ``H:MM:SS`` (``0:00:00`` is the start of the run)."""
    t = int(round(t))
    return f"{t // 3600}:{t % 3600 // 60:02d}:{t % 60:02d}"


def render_time(document: Mapping[str, Any]) -> list[str]:
    """The compact timeline (one line per scenario event: what followed it until the next one) and
    the cost summary; nothing for a run without time-dependent events. First, whenever a
    BillingProfile was given, the bill's lines (:func:`render_billed`)."""
    billed = render_billed((document.get("cost") or {}).get("billed"))
    if not has_time_events(document):
        return billed
    timeline = document.get("timeline") or []
    segments: list[tuple[float, str, list[Mapping[str, Any]]]] = [(0.0, "start", [])]
    for e in timeline:
        if e["kind"] in _SEGMENT_KINDS and e["kind"] != "scale" or (
                e["kind"] == "scale" and e["object"].split("/", 1)[0] != "ReplicaSet"):
            detail = e.get("detail") or {}
            what = f"{e['kind']} {e['object']}"
            if e["kind"] == "scale":
                what += f" {detail.get('previous')}->{detail.get('replicas')}"
            elif e["kind"].startswith("capacity"):
                what += " " + ",".join(detail.get("specs") or [])
            segments.append((e["t"], what, []))
        else:
            segments[-1][2].append(e)
    out = [*billed, "", "TIMELINE"]
    for start, what, events in segments:
        counts: dict[str, int] = {}
        for e in events:
            counts[e["kind"]] = counts.get(e["kind"], 0) + 1
        last = max((e["t"] for e in events), default=start)
        parts = []
        if counts.get("pod.created"):
            parts.append(f"{counts['pod.created']} pods created")
        if counts.get("pod.evicted"):
            parts.append(f"{counts['pod.evicted']} evicted")
        if counts.get("pod.deleting"):
            parts.append(f"{counts['pod.deleting']} deleted")
        if counts.get("pod.completed"):
            parts.append(f"{counts['pod.completed']} completed")
        if counts.get("pod.bound"):
            parts.append(f"{counts['pod.bound']} bound")
        claims = counts.get("nodeclaim.launched", 0)
        summary = ", ".join(parts) or "no pod changes"
        summary += f" -> {claims} NodeClaim{'s' if claims != 1 else ''}"
        if counts.get("nodeclaim.launch-failed"):
            summary += f" ({counts['nodeclaim.launch-failed']} launches failed)"
        if counts.get("nodeclaim.deleted"):
            summary += f", {counts['nodeclaim.deleted']} deleted"
        out.append(f"{clock_time(start)}-{clock_time(last)}  {clean(what)}: {summary}")
    cost = document.get("cost") or {}
    if cost:
        horizon = cost.get("horizon") or 0.0
        out.append("")
        out.append(f"COST over {clock_time(horizon)}: ${cost.get('total', 0.0):.5f} "
                   f"({(cost.get('node_hours') or {}).get('total', 0.0):.3f} node-hours)")
        for group, label in (("by_nodepool", "nodepool"), ("by_generation", "generation"),
                             ("by_capacity_type", "capacity type"), ("by_family", "family")):
            values = cost.get(group) or {}
            if values:
                out.append(f"  by {label}: " + ", ".join(f"{clean(k)} ${v:.5f}" for k, v in values.items()))
    return out


def render_billed(billed: Mapping[str, Any] | None) -> list[str]:
    """The bill's lines (``cost.billed``, :mod:`karpy.billing`): total and effective $/h, unused
    commitment, and each place where Karpenter's list-price choice is not the cheapest on the bill."""
    if not billed:
        return []
    out = [f"billed (modelled, BillingProfile {clean(billed.get('profile') or '')}): ${billed['total']:.5f} "
           f"= ${billed['effective_per_hour']:.5f}/h effective; unused commitment ${billed['unused_commitment']:.5f}"]
    for m in billed.get("misalignments") or ():
        if m["kind"] == "cheaper-on-bill":
            a, b = m["launched"], m["cheaper_on_bill"]
            out.append(f"  not cheapest on the bill: {clean(m['nodepool'])} launched {len(m['nodeclaims'])} x "
                       f"{a['instance_type']} {a['capacity_type']} (${a['billed_per_hour']:.5f}/h billed); "
                       f"{b['instance_type']} {b['capacity_type']} lists higher but bills "
                       f"${b['billed_per_hour']:.5f}/h via {clean(m['via'])}")
        else:
            out.append(f"  unused commitment: {clean(m['commitment'])} ${m['unused']:.5f} "
                       f"({m['utilization'] * 100:.1f}% used)")
    overlays = billed.get("overlays") or ()
    if overlays:
        out.append("  NodeOverlays that teach Karpenter the bill: "
                   + ", ".join(f"{clean(o['metadata']['name'])} ({o['spec']['priceAdjustment']})" for o in overlays))
    alignment = billed.get("alignment")
    if overlays and isinstance(alignment, Mapping):
        out.append(render_alignment(alignment))
    return out


def _launches(launched: Mapping[str, int]) -> str:
    return ", ".join(f"{n} x {clean(k)}" for k, n in launched.items()) or "nothing"


def render_alignment(alignment: Mapping[str, Any]) -> str:
    """One line: the aligning overlays checked by re-running (:func:`karpy.alignment.align_result`'s
    document): verified or not, what launched, both bills' effective $/h and the saving."""
    note = alignment.get("note")
    if note:
        return f"  NOT verified (not re-run: {clean(note)})"
    before, after = alignment["before"], alignment["after"]
    saving = float(alignment["saving"])
    verdict = "verified" if alignment["verified"] else "NOT verified"
    outcome = (f"saves ${saving:.5f}" if saving > 0 else f"costs ${-saving:.5f} more" if saving < 0
               else "the same bill")
    pending = (f"; {after['pending_pods']} pods pending (was {before['pending_pods']})"
               if after["pending_pods"] != before["pending_pods"] else "")
    return (f"  {verdict} by re-running with them (NodeOverlay gate on): launches {_launches(after['launched'])} "
            f"(was {_launches(before['launched'])}); billed (modelled) ${after['billed_per_hour']:.5f}/h effective "
            f"(was ${before['billed_per_hour']:.5f}/h), list ${after['cost_per_hour']:.5f}/h "
            f"(was ${before['cost_per_hour']:.5f}/h); {outcome} over the run{pending}")
