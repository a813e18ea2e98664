"""Helpers Karpenter keeps in pkg/utils: pod predicates (:mod:`.pod`), disruption costs
(:mod:`.disruption`), PDB limits (:mod:`.pdb`), Go durations and timestamps on the virtual clock
(:mod:`.duration`); and karpy's own rule for output files, written through a temporary file renamed
over the target (:mod:`.atomicwrite`). Names resolve lazily."""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    **dict.fromkeys(("atomic_path", "write_atomic"), "atomicwrite"),
    **dict.fromkeys(("DurationError", "parse_go_duration", "to_seconds"), "duration"),
    **dict.fromkeys(("Limits", "PdbItem", "disruptions_allowed", "is_fully_blocking"), "pdb"),
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from karpy.utils.atomicwrite import atomic_path, write_atomic
    from karpy.utils.duration import DurationError, parse_go_duration, to_seconds
    from karpy.utils.pdb import Limits, PdbItem, disruptions_allowed, is_fully_blocking

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
