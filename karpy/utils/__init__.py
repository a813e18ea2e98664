"""Helpers Karpenter keeps in pkg/utils: pod predicates (:mod:`.pod`), PDB limits (:mod:`.pdb`),
Go durations and timestamps on the virtual clock (:mod:`.duration`)."""

from karpy.utils.duration import DurationError, parse_go_duration, to_seconds
from karpy.utils.pdb import Limits, PdbItem, disruptions_allowed, is_fully_blocking

__all__ = ["DurationError", "Limits", "PdbItem", "disruptions_allowed", "is_fully_blocking", "parse_go_duration",
           "to_seconds"]
