"""The NodeClaim disruption conditions: ``Consolidatable`` and ``Drifted``.

Mirrors pkg/controllers/nodeclaim/disruption/consolidation.go (Consolidatable: consolidateAfter
from the last pod event, else from Initialized; ``Never`` clears it; static pools get none) and
drift.go (isDrifted: NodePoolDrifted by ``karpenter.sh/nodepool-hash`` with equal hash versions,
then RequirementsDrifted, then the cloud provider's ``is_drifted``). InstanceTypeNotFound (an
hour-old NodeClaim whose type disappeared from the catalogue) is not modelled: karpy's catalogue
does not change during a run.
"""

from __future__ import annotations

from typing import Any

from karpy.api.meta import Condition
from karpy.api.nodepool import parse_duration
from karpy.scheduling.labels import NODEPOOL_HASH_ANNOTATION_KEY, NODEPOOL_HASH_VERSION_ANNOTATION_KEY
from karpy.scheduling.requirements import Requirements
from karpy.sim.clock import EPOCH
from karpy.utils.duration import to_seconds

__all__ = ["CONSOLIDATABLE", "DRIFTED", "NODEPOOL_DRIFTED", "REQUIREMENTS_DRIFTED", "drift_reason",
           "set_condition", "update_consolidatable", "update_drifted"]

CONSOLIDATABLE = "Consolidatable"
DRIFTED = "Drifted"
#: drift.go reasons
NODEPOOL_DRIFTED = "NodePoolDrifted"
REQUIREMENTS_DRIFTED = "RequirementsDrifted"


def _get(nodeclaim: Any, cond_type: str) -> Condition | None:
    c: Condition
    for c in nodeclaim.status.conditions or ():
        if c.type == cond_type:
            return c
    return None


def set_condition(nodeclaim: Any, cond_type: str, status: str | None, now: float, reason: str | None = None) -> bool:
    """Set (``status`` "True"/"False") or clear (``None``) a condition; the transition time moves
    only when the status changes. True when something changed."""
    from datetime import timedelta

    conds = list(nodeclaim.status.conditions or ())
    cur = _get(nodeclaim, cond_type)
    if status is None:
        if cur is None:
            return False
        nodeclaim.status.conditions = [c for c in conds if c.type != cond_type]
        return True
    if cur is not None and cur.status == status and cur.reason == reason:
        return False
    when = cur.last_transition_time if cur is not None and cur.status == status else EPOCH + timedelta(seconds=now)
    new = Condition(type=cond_type, status=status, reason=reason, message=reason, last_transition_time=when)
    nodeclaim.status.conditions = [c for c in conds if c.type != cond_type] + [new]
    return True


def update_consolidatable(nodepool: Any, nodeclaim: Any, now: float) -> float | None:
    """consolidation.go Reconcile: sets or clears Consolidatable; returns when to look again (the
    end of the consolidateAfter window) or None."""
    if nodepool.spec.replicas is not None:
        return None
    after_raw = nodepool.spec.disruption.consolidate_after
    init = _get(nodeclaim, "Initialized")
    if after_raw == "Never" or init is None or init.status != "True":
        set_condition(nodeclaim, CONSOLIDATABLE, None, now)
        return None
    after = parse_duration(after_raw) or 0
    last = to_seconds(getattr(nodeclaim.status, "last_pod_event_time", None))
    t = last if last is not None else (to_seconds(init.last_transition_time) or 0.0)
    if after and now - t < after:
        set_condition(nodeclaim, CONSOLIDATABLE, None, now)
        return t + after
    set_condition(nodeclaim, CONSOLIDATABLE, "True", now)
    return None


def drift_reason(nodepool: Any, nodeclaim: Any, cloud_provider: Any = None) -> str | None:
    """drift.go isDrifted: the first reason that applies, or None."""
    np_ann = nodepool.metadata.annotations or {}
    nc_ann = nodeclaim.metadata.annotations or {}
    from karpy.provisioning.nodeclaimtemplate import NODEPOOL_HASH_VERSION

    np_hash = np_ann.get(NODEPOOL_HASH_ANNOTATION_KEY, nodepool.hash())
    np_ver = np_ann.get(NODEPOOL_HASH_VERSION_ANNOTATION_KEY, NODEPOOL_HASH_VERSION)
    nc_hash = nc_ann.get(NODEPOOL_HASH_ANNOTATION_KEY)
    nc_ver = nc_ann.get(NODEPOOL_HASH_VERSION_ANNOTATION_KEY)
    if nc_hash is not None and nc_ver is not None and nc_ver == np_ver and nc_hash != np_hash:
        return NODEPOOL_DRIFTED
    reqs = Requirements.from_node_selector_requirements(nodepool.spec.template.spec.requirements)
    labels = Requirements.from_labels(nodeclaim.metadata.labels or {})
    if labels.compatible(reqs) is not None:
        return REQUIREMENTS_DRIFTED
    is_drifted = getattr(cloud_provider, "is_drifted", None)
    if is_drifted is not None:
        reason = is_drifted(nodeclaim)
        if reason:
            return str(reason)
    return None


def update_drifted(nodepool: Any, nodeclaim: Any, now: float, cloud_provider: Any = None) -> str | None:
    """drift.go Reconcile: not Launched → clear; else set or clear Drifted. Returns the reason."""
    launched = _get(nodeclaim, "Launched")
    if launched is not None and launched.status != "True":
        set_condition(nodeclaim, DRIFTED, None, now)
        return None
    reason = drift_reason(nodepool, nodeclaim, cloud_provider)
    set_condition(nodeclaim, DRIFTED, "True" if reason else None, now, reason)
    return reason
