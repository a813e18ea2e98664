"""The NodeClaim disruption conditions: ``Consolidatable`` and ``Drifted``.

Mirrors pkg/controllers/nodeclaim/disruption/consolidation.go (Consolidatable: consolidateAfter
from the last pod event, else from Initialized; ``Never`` clears it; static pools get none) and
drift.go (isDrifted: NodePoolDrifted by ``karpenter.sh/nodepool-hash`` with equal hash versions,
then RequirementsDrifted, then InstanceTypeNotFound, then the cloud provider's ``is_drifted``).
InstanceTypeNotFound (:func:`instance_type_not_found`) is checked only for a NodeClaim older than an
hour and then at most every 30 minutes after a successful check (:class:`InstanceTypeCheckCache`,
upstream's go-cache keyed by the NodeClaim's UID; karpy keys by name when the UID is empty): the
NodeClaim's instance type must still be among the NodePool's instance types with an offering
compatible with its labels -- a NodeClass whose subnets leave the node's zone, a NodePool whose
NodeClass now filters the type out, or an EC2NodeClass change that drops the family all do it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from karpy.api.meta import Condition
from karpy.api.nodepool import parse_duration
from karpy.api.time import EPOCH
from karpy.scheduling.labels import (CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_RESERVED, LABEL_CAPACITY_TYPE,
                                     LABEL_INSTANCE_TYPE, NODEPOOL_HASH_ANNOTATION_KEY,
                                     NODEPOOL_HASH_VERSION_ANNOTATION_KEY, OP_IN)
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements
from karpy.utils.duration import to_seconds

__all__ = ["CONSOLIDATABLE", "DRIFTED", "INSTANCE_TYPE_NOT_FOUND", "INSTANCE_TYPE_NOT_FOUND_CHECK_AFTER",
           "INSTANCE_TYPE_NOT_FOUND_CHECK_TTL", "InstanceTypeCheckCache", "NODEPOOL_DRIFTED", "PoolMemo", "REQUIREMENTS_DRIFTED",
           "drift_reason", "instance_type_not_found", "set_condition", "update_consolidatable", "update_drifted"]

CONSOLIDATABLE = "Consolidatable"
DRIFTED = "Drifted"
#: drift.go reasons
NODEPOOL_DRIFTED = "NodePoolDrifted"
REQUIREMENTS_DRIFTED = "RequirementsDrifted"
INSTANCE_TYPE_NOT_FOUND = "InstanceTypeNotFound"
#: drift.go: the instance-type check starts an hour after the NodeClaim's creation ...
INSTANCE_TYPE_NOT_FOUND_CHECK_AFTER = 3600.0
#: ... and a successful check is not repeated for 30 minutes (controller.go cache.New(30m, 1m))
INSTANCE_TYPE_NOT_FOUND_CHECK_TTL = 1800.0


class InstanceTypeCheckCache:
    """drift.go instanceTypeNotFoundCheckCache: NodeClaim key -> when its successful check expires."""

    def __init__(self) -> None:
        self._until: dict[str, float] = {}

    def fresh(self, key: str, now: float) -> bool:
        return self._until.get(key, -1.0) > now

    def mark(self, key: str, now: float) -> None:
        self._until[key] = now + INSTANCE_TYPE_NOT_FOUND_CHECK_TTL


def instance_type_not_found(instance_types: Any, nodeclaim: Any, reserved_labels: frozenset[str] = frozenset()
                            ) -> str | None:
    """drift.go instanceTypeNotFound: the type is gone, or none of its offerings is compatible with
    the NodeClaim's labels (a reserved NodeClaim also matches on-demand, without the provider's
    reservation labels, since it may have been demoted)."""
    labels = nodeclaim.metadata.labels or {}
    name = labels.get(LABEL_INSTANCE_TYPE)
    it = next((t for t in instance_types if t.name == name), None) if name is not None else None
    if it is None:
        return INSTANCE_TYPE_NOT_FOUND
    if labels.get(LABEL_CAPACITY_TYPE) == CAPACITY_TYPE_RESERVED:
        labels = {k: v for k, v in labels.items() if k not in reserved_labels and k != LABEL_CAPACITY_TYPE}
        reqs = Requirements.from_labels(labels)
        reqs.add(Requirement(LABEL_CAPACITY_TYPE, OP_IN, (CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_ON_DEMAND)))
    else:
        reqs = Requirements.from_labels(labels)
    return None if it.offerings.has_compatible(reqs) else INSTANCE_TYPE_NOT_FOUND


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


@dataclass
class _PoolFacts:
    """What the drift check reads of a NodePool: its requirements, and its template hash once asked."""

    nodepool: Any
    requirements: Requirements
    hash: str | None = None
    #: labels (as items) -> whether they are incompatible with ``requirements``
    _incompatible: dict[tuple[tuple[str, str], ...], bool] = field(default_factory=dict)

    def template_hash(self) -> str:
        if self.hash is None:
            self.hash = self.nodepool.hash()
        return self.hash

    def incompatible(self, labels: dict[str, str]) -> bool:
        """Whether NodeClaim ``labels`` are not compatible with the requirements (RequirementsDrifted);
        asked once per label set (a look's NodeClaims of one type and zone share theirs)."""
        key = tuple(labels.items())
        hit = self._incompatible.get(key)
        if hit is None:
            hit = self._incompatible[key] = Requirements.from_labels(labels).compatible(self.requirements) is not None
        return hit


#: per NodePool object id: its facts, shared by the NodeClaims of one look
PoolMemo = dict[int, _PoolFacts]


def _pool_facts(nodepool: Any, memo: PoolMemo | None) -> _PoolFacts:
    """``nodepool``'s facts, kept in ``memo`` (one round's: the NodePool objects are not edited
    while it looks) when given."""
    facts = memo.get(id(nodepool)) if memo is not None else None
    if facts is None or facts.nodepool is not nodepool:
        facts = _PoolFacts(nodepool, Requirements.from_node_selector_requirements(
            nodepool.spec.template.spec.requirements))
        if memo is not None:
            memo[id(nodepool)] = facts
    return facts


def drift_reason(nodepool: Any, nodeclaim: Any, cloud_provider: Any = None, now: float | None = None,
                 check_cache: InstanceTypeCheckCache | None = None, pool_memo: PoolMemo | None = None) -> str | None:
    """drift.go isDrifted: the first reason that applies, or None. InstanceTypeNotFound needs
    ``now`` (and is checked only with a ``cloud_provider``). ``pool_memo``: the NodePools' hashes and
    requirements shared by the NodeClaims of one look."""
    facts = _pool_facts(nodepool, pool_memo)
    np_ann = nodepool.metadata.annotations or {}
    nc_ann = nodeclaim.metadata.annotations or {}
    from karpy.provisioning.nodeclaimtemplate import NODEPOOL_HASH_VERSION

    np_ver = np_ann.get(NODEPOOL_HASH_VERSION_ANNOTATION_KEY, NODEPOOL_HASH_VERSION)
    nc_hash = nc_ann.get(NODEPOOL_HASH_ANNOTATION_KEY)
    nc_ver = nc_ann.get(NODEPOOL_HASH_VERSION_ANNOTATION_KEY)
    if nc_hash is not None and nc_ver is not None and nc_ver == np_ver:
        # the template's hash only when the NodePool has no annotation (it is a walk over the template)
        np_hash = np_ann.get(NODEPOOL_HASH_ANNOTATION_KEY)
        if nc_hash != (np_hash if np_hash is not None else facts.template_hash()):
            return NODEPOOL_DRIFTED
    if facts.incompatible(nodeclaim.metadata.labels or {}):
        return REQUIREMENTS_DRIFTED
    if cloud_provider is not None and now is not None:
        key = nodeclaim.metadata.uid or nodeclaim.metadata.name
        created = to_seconds(nodeclaim.metadata.creation_timestamp) or 0.0
        cached = check_cache is not None and check_cache.fresh(key, now)
        if not cached and now - created > INSTANCE_TYPE_NOT_FOUND_CHECK_AFTER:
            its = cloud_provider.get_instance_types(nodepool)
            reason = instance_type_not_found(its, nodeclaim,
                                             frozenset(getattr(cloud_provider, "reserved_capacity_labels", ())))
            if reason is not None:
                return reason
            if check_cache is not None:
                check_cache.mark(key, now)
    is_drifted = getattr(cloud_provider, "is_drifted", None)
    if is_drifted is not None:
        reason = is_drifted(nodeclaim)
        if reason:
            return str(reason)
    return None


def update_drifted(nodepool: Any, nodeclaim: Any, now: float, cloud_provider: Any = None,
                   check_cache: InstanceTypeCheckCache | None = None, pool_memo: PoolMemo | None = None) -> str | None:
    """drift.go Reconcile: not Launched → clear; else set or clear Drifted. Returns the reason."""
    launched = _get(nodeclaim, "Launched")
    if launched is not None and launched.status != "True":
        set_condition(nodeclaim, DRIFTED, None, now)
        return None
    reason = drift_reason(nodepool, nodeclaim, cloud_provider, now, check_cache, pool_memo)
    set_condition(nodeclaim, DRIFTED, "True" if reason else None, now, reason)
    return reason
