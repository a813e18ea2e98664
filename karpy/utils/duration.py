"""Go's ``time.ParseDuration`` and virtual-clock conversions of Kubernetes timestamps.

``parse_go_duration`` mirrors Go ``time.ParseDuration`` (units ns, us/µs, ms, s, m, h; decimal
fractions; an optional sign; ``"0"`` alone is allowed) and returns seconds as a float. Upstream
Karpenter uses it for the pod ``karpenter.sh/do-not-disrupt`` duration form
(pkg/utils/pod/scheduling.go parseDoNotDisrupt).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from karpy._errors import KarpyError
from karpy.api.time import EPOCH

__all__ = ["DurationError", "parse_go_duration", "to_rfc3339", "to_seconds"]

_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")


class DurationError(KarpyError, ValueError):
    """A string Go's time.ParseDuration rejects (message as Go words it)."""


def parse_go_duration(value: str) -> float:
    """Seconds in ``value`` as Go ``time.ParseDuration`` reads it; :class:`DurationError` otherwise."""
    orig = value
    s = value
    neg = False
    if s[:1] in ("-", "+"):
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise DurationError(f'time: invalid duration "{orig}"')
    total = 0.0
    pos = 0
    while pos < len(s):
        m = _PART.match(s, pos)
        if m is None or m.group(1) in ("", "."):
            if m is None and re.match(r"[0-9.]+$", s[pos:]):
                raise DurationError(f'time: missing unit in duration "{orig}"')
            if m is None and re.match(r"[0-9.]+[a-zA-Z]", s[pos:]):
                raise DurationError(f'time: unknown unit "{re.sub(r"^[0-9.]+", "", s[pos:]).rstrip("0123456789.")}" '
                                    f'in duration "{orig}"')
            raise DurationError(f'time: invalid duration "{orig}"')
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    return -total if neg else total


def to_seconds(value: Any) -> float | None:
    """A Kubernetes timestamp (aware datetime, RFC 3339 string, or virtual seconds) as virtual
    seconds since :data:`karpy.api.time.EPOCH`; ``None`` stays ``None``."""
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    since: timedelta = value - EPOCH
    return since.total_seconds()


def to_rfc3339(seconds: float) -> str:
    """Virtual seconds as an RFC 3339 UTC timestamp (Go ``time.RFC3339``, whole seconds)."""
    return (EPOCH + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")
