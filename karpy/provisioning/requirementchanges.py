"""``Requirements.Compatible`` of a topology-narrowed requirement set, tested on the changed keys only
(nodeclaim.go / existingnode.go CanAdd after AddRequirements) -- the same answer and message as
``reqs.compatible(topo_reqs)``, pinned by tests/provisioning/test_requirementchanges_equivalence.py."""

from __future__ import annotations

from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

__all__ = ["apply_topology_requirements", "nin_or_dne", "topology_changes_error"]


def nin_or_dne(r: Requirement) -> bool:
    """Whether ``r`` is NotIn or DoesNotExist (requirements.go: such keys are compatible undefined)."""
    return bool(r.values) if r.complement else not r.values


def apply_topology_requirements(
    reqs: Requirements, topo_reqs: Requirements, allow_undefined: frozenset[str]
) -> tuple[Requirements, str | None]:
    """``reqs.Compatible(topoReqs)`` then ``reqs.Add(topoReqs...)`` (nodeclaim.go:199-206,
    existingnode.go:140-155), exploiting that Topology.add_requirements returns a copy of ``reqs``
    narrowed by intersection: unchanged keys are trivially compatible, so only changed keys are
    checked (:func:`topology_changes_error`), and the result of the Add is the topology
    requirements themselves."""
    changes = {k: r for k, r in dict.items(topo_reqs) if dict.get(reqs, k) is not r}
    if not changes:
        return reqs, None
    e = topology_changes_error(reqs, changes, allow_undefined)
    if e is not None:
        return reqs, e
    return topo_reqs, None


def topology_changes_error(
    reqs: Requirements, changes: dict[str, Requirement], allow_undefined: frozenset[str]
) -> str | None:
    """``reqs.Compatible(topoReqs)`` (nodeclaim.go:199-202) where ``topoReqs`` is ``reqs`` with
    the keys of ``changes`` set: unchanged keys are trivially compatible, and only a failure builds
    ``Requirements.compatible``'s message."""
    for k, r in changes.items():
        old = dict.get(reqs, k)
        if old is None:
            if k in allow_undefined or nin_or_dne(r):
                continue
        elif old.has_intersection(r) or (nin_or_dne(r) and nin_or_dne(old)):
            continue
        break
    else:
        return None
    changed = Requirements()
    dict.update(changed, changes)
    return reqs.compatible(changed, allow_undefined)
