"""What a run keeps of its history (issue #32): memory bounded by the live cluster, not the run's length.

A run lists in full its first ``timeline_limit`` timeline entries and its first ``deleted_pods_limit``
pods gone from the store (:class:`karpy.sim.options.SimulationOptions`); past them it counts (per
timeline kind, per pod phase) and the document's ``warnings`` say what was counted, not listed. Totals
that come from the NodeClaims (``cost``, ``nodeclaims``) are always whole. Ordinary runs stay far below
both limits (a 50,000-pod run records about 110,000 entries), so their documents are unchanged.

Every NodeClaim is listed, but only the first ``launch_detail_limit`` NodeClaims gone from the cluster
(deleted, or their launch failed) keep their launch detail -- the CreateFleet request and response
(``nodeclaims[].fleet``) and what explain reads; a later one lets it go when it is gone (its ``fleet``
is null, its explain entry says so), so a year of churn holds the live cluster's detail, not the
history's. Every live NodeClaim keeps its own.
"""

from __future__ import annotations

from collections.abc import Mapping

from karpy.sim.options import DELETED_PODS_LIMIT, LAUNCH_DETAIL_LIMIT, TIMELINE_LIMIT

__all__ = ["DELETED_PODS_LIMIT", "LAUNCH_DETAIL_LIMIT", "TIMELINE_LIMIT", "retention_warnings"]


def retention_warnings(timeline_limit: int, listed_until: float | None, dropped: Mapping[str, int],
                       pods_limit: int, pods_dropped: Mapping[str, int],
                       detail_limit: int = LAUNCH_DETAIL_LIMIT, detail_released: int = 0) -> list[str]:
    """The document's notes for what a run counted instead of listing (none for an ordinary run)."""
    out = []
    if dropped:
        total = sum(dropped.values())
        kinds = ", ".join(f"{k} {n:,}" for k, n in sorted(dropped.items(), key=lambda kv: (-kv[1], kv[0])))
        out.append(f"timeline: the first {timeline_limit:,} entries are listed (to t={listed_until:g}s); "
                   f"{total:,} later entries are counted, not listed ({kinds}); cost and nodeclaims cover the "
                   "whole run")
    if pods_dropped:
        total = sum(pods_dropped.values())
        phases = ", ".join(f"{k} {n:,}" for k, n in sorted(pods_dropped.items()))
        out.append(f"pods: the first {pods_limit:,} pods gone from the cluster are listed; {total:,} later ones "
                   f"are counted, not listed ({phases})")
    if detail_released:
        out.append(f"nodeclaims: the launch detail of the first {detail_limit:,} NodeClaims gone from the cluster "
                   f"and of every live one is kept; {detail_released:,} later ones gone have fleet null and no "
                   "explain detail (launch_detail_limit)")
    return out
