"""The instance provider's cache of DescribeInstances entries by instance id.

Mirrors aws:pkg/providers/instance/instance.go Get (``instanceCache``: a found instance is kept and
returned without another DescribeInstances; Delete reads with SkipCache). karpy keeps an entry
until the instance is deleted (no TTL): what IsDrifted reads of it -- the subnet and the
security groups -- never change for a launched instance (nothing in karpy modifies them), so every
lookup answers what a fresh DescribeInstances would. Checked against the uncached lookup by
tests/awsprovider/test_instancecache_equivalence.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["InstanceCache"]


class InstanceCache:
    """``describe(instance_id)`` is the DescribeInstances call (it raises for an unknown id, and
    returns the instance entries found); only a found entry is kept."""

    #: False: every lookup reads through (the plain path the equivalence test compares against)
    enabled = True

    def __init__(self, describe: Callable[[str], list[Mapping[str, Any]]]) -> None:
        self._describe = describe
        self._entries: dict[str, Mapping[str, Any]] = {}

    def get(self, instance_id: str) -> Mapping[str, Any] | None:
        """The instance's DescribeInstances entry (read-only: callers copy before changing it),
        None when the call finds none; the call's error propagates."""
        if self.enabled:
            hit = self._entries.get(instance_id)
            if hit is not None:
                return hit
        found = self._describe(instance_id)
        if not found:
            return None
        if self.enabled:
            self._entries[instance_id] = found[0]
        return found[0]

    def delete(self, instance_id: str) -> None:
        """instance.go: the entry goes with the instance."""
        self._entries.pop(instance_id, None)

    def __len__(self) -> int:
        return len(self._entries)
