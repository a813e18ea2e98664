"""Injected capacity errors for the mocked EC2 fleet (the ICE model).

A rule is written ``TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE`` (e.g. ``"c8i.*:*:on-demand"``) and may carry
extra ``key=value`` fields after a further colon::

    c8i.large:us-east-1a:on-demand:after=3          # 3 launches succeed, then ICE
    c7i.*:*:spot:fail=2                             # the first 2 attempts ICE, then it launches
    m8i.*:us-east-1b:*:from=60:until=240            # ICE only while 60 <= now < 240 (virtual s)
    *:*:*:code=InsufficientFreeAddressesInSubnet    # a different error code

Semantics (documented choices; AWS publishes no model of capacity):

- Globs are :func:`fnmatch.fnmatchcase` patterns (case-sensitive, ``*`` / ``?`` / ``[..]``).
  The capacity type is ``on-demand``, ``spot``, ``reserved`` or ``*``.
- Counts are kept **per pool** (instance type, zone, capacity type) that the rule matches, so
  ``c8i.*:*:on-demand:after=3`` gives every c8i on-demand pool three launches.
- ``after=N``: a pool succeeds for its first N launches, then fails. ``fail=N``: a pool fails its
  first N *attempts* (an attempt is the fleet trying that pool), then succeeds. Without either the
  rule always fails while it is active.
- ``from``/``until``: a half-open virtual-time window ``[from, until)`` in seconds of the caller's
  clock; ``now`` is always passed in, the wall clock is never read.
- The first active rule (in the order given) that fails a pool decides its error code.

This mirrors the pool key of Karpenter's fake (``pkg/fake/ec2api.go`` ``InsufficientCapacityPools``:
instance type, zone, capacity type) and of its unavailable-offerings cache.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from karpy.cloudprovider.types import UnavailableSpecError

__all__ = [
    "CAPACITY_TYPES",
    "ICE_ERROR_CODE",
    "CapacityModel",
    "CapacityRule",
    "CapacitySpecError",
    "ice_message",
    "parse_capacity_spec",
]

ICE_ERROR_CODE = "InsufficientInstanceCapacity"
CAPACITY_TYPES = frozenset({"on-demand", "spot", "reserved"})
_KNOWN_KEYS = frozenset({"after", "fail", "from", "until", "code"})

Pool = tuple[str, str, str]


class CapacitySpecError(UnavailableSpecError):
    """A malformed ``TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE`` spec (``spec``, ``reason``)."""


@dataclass(frozen=True)
class CapacityRule:
    """One injected-capacity rule (see the module docstring for the semantics)."""

    type_glob: str
    zone_glob: str
    capacity_type: str = "*"
    after: int | None = None
    fail: int | None = None
    start: float = -math.inf
    end: float = math.inf
    error_code: str = ICE_ERROR_CODE
    spec: str = ""

    def matches(self, instance_type: str, zone: str, capacity_type: str) -> bool:
        """Whether the rule covers the pool (type, zone, capacity type)."""
        return (
            (self.capacity_type == "*" or self.capacity_type == capacity_type)
            and fnmatchcase(instance_type, self.type_glob)
            and fnmatchcase(zone, self.zone_glob)
        )

    def active(self, now: float) -> bool:
        """Whether ``now`` is inside the rule's window ``[start, end)``."""
        return self.start <= now < self.end

    def __str__(self) -> str:
        return self.spec or f"{self.type_glob}:{self.zone_glob}:{self.capacity_type}"


def _int_field(spec: str, key: str, value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise CapacitySpecError(spec, f"{key}={value!r} is not an integer") from None
    if n < 0:
        raise CapacitySpecError(spec, f"{key}={value!r} must be >= 0")
    return n


def _float_field(spec: str, key: str, value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise CapacitySpecError(spec, f"{key}={value!r} is not a number") from None
    if math.isnan(x):
        raise CapacitySpecError(spec, f"{key}={value!r} is not a number")
    return x


def parse_capacity_spec(spec: str) -> CapacityRule:
    """Parse ``TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE[:key=value...]`` into a :class:`CapacityRule`."""
    if not isinstance(spec, str):
        raise CapacitySpecError(spec, f"must be a string, got {type(spec).__name__}")
    parts = spec.strip().split(":")
    if len(parts) < 3:
        raise CapacitySpecError(spec, f"expected TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE (e.g. 'c8i.*:*:on-demand')"
        )
    type_glob, zone_glob, capacity_type = (p.strip() for p in parts[:3])
    if not type_glob or not zone_glob:
        raise CapacitySpecError(spec, "instance-type and zone globs must not be empty")
    if capacity_type != "*" and capacity_type not in CAPACITY_TYPES:
        raise CapacitySpecError(spec, f"capacity type {capacity_type!r} is not one of "
            f"on-demand, spot, reserved, *"
        )
    opts: dict[str, str] = {}
    for extra in parts[3:]:
        key, sep, value = extra.partition("=")
        key = key.strip()
        if not sep or key not in _KNOWN_KEYS:
            raise CapacitySpecError(spec, f"unknown field {extra!r} (expected one of "
                f"{', '.join(sorted(_KNOWN_KEYS))} as key=value)"
            )
        if key in opts:
            raise CapacitySpecError(spec, f"field {key!r} given twice")
        opts[key] = value.strip()
    after = _int_field(spec, "after", opts["after"]) if "after" in opts else None
    fail = _int_field(spec, "fail", opts["fail"]) if "fail" in opts else None
    if after is not None and fail is not None:
        raise CapacitySpecError(spec, "'after' and 'fail' are mutually exclusive")
    start = _float_field(spec, "from", opts["from"]) if "from" in opts else -math.inf
    end = _float_field(spec, "until", opts["until"]) if "until" in opts else math.inf
    if end <= start:
        raise CapacitySpecError(spec, "'until' must be greater than 'from'")
    code = opts.get("code", ICE_ERROR_CODE)
    if not code:
        raise CapacitySpecError(spec, "'code' must not be empty")
    return CapacityRule(type_glob, zone_glob, capacity_type, after, fail, start, end, code, spec.strip())


def ice_message(instance_type: str, zone: str, capacity_type: str) -> str:
    """The EC2 error text for an exhausted pool (on-demand wording from RunInstances/CreateFleet)."""
    if capacity_type == "spot":
        return "There is no Spot capacity available that matches your request."
    return (
        f"We currently do not have sufficient {instance_type} capacity in the Availability Zone you "
        f"requested ({zone}). Our system will be working on provisioning additional capacity."
    )


@dataclass
class CapacityModel:
    """Stateful capacity: the rules plus per-pool launch/attempt counters.

    Owned by one backend (never global). :meth:`try_launch` is the single entry point the fleet
    allocator uses: it counts the attempt and, when the pool has capacity, the launch.
    """

    rules: list[CapacityRule] = field(default_factory=list)
    launches: dict[Pool, int] = field(default_factory=dict)
    attempts: dict[Pool, int] = field(default_factory=dict)

    @classmethod
    def from_specs(cls, specs: list[str] | tuple[str, ...] = ()) -> CapacityModel:
        """Build a model from spec strings (see :func:`parse_capacity_spec`)."""
        return cls(rules=[parse_capacity_spec(s) for s in specs])

    def add(self, spec: str | CapacityRule) -> CapacityRule:
        """Add a rule (a spec string or a :class:`CapacityRule`) and return it."""
        rule = parse_capacity_spec(spec) if isinstance(spec, str) else spec
        self.rules.append(rule)
        return rule

    def clear(self) -> None:
        """Remove every rule and reset the counters."""
        self.rules.clear()
        self.launches.clear()
        self.attempts.clear()

    def check(self, instance_type: str, zone: str, capacity_type: str, now: float) -> str | None:
        """The error code a launch into the pool would get now (``None`` = capacity), no side effects."""
        pool = (instance_type, zone, capacity_type)
        for rule in self.rules:
            if not rule.active(now) or not rule.matches(instance_type, zone, capacity_type):
                continue
            if rule.after is not None:
                if self.launches.get(pool, 0) >= rule.after:
                    return rule.error_code
            elif rule.fail is not None:
                if self.attempts.get(pool, 0) < rule.fail:
                    return rule.error_code
            else:
                return rule.error_code
        return None

    def fails_for_good(self, instance_type: str, zone: str, capacity_type: str, now: float) -> bool:
        """Whether a launch into the pool fails now whatever is retried: the rule that fails it is
        not a ``fail=N`` one (whose count each attempt advances toward success). No side effects."""
        pool = (instance_type, zone, capacity_type)
        for rule in self.rules:
            if not rule.active(now) or not rule.matches(instance_type, zone, capacity_type):
                continue
            if rule.after is not None:
                if self.launches.get(pool, 0) >= rule.after:
                    return True
            elif rule.fail is not None:
                if self.attempts.get(pool, 0) < rule.fail:
                    return False  # transient: a retry is what makes it succeed
            else:
                return True
        return False

    def try_launch(self, instance_type: str, zone: str, capacity_type: str, now: float) -> str | None:
        """Attempt one launch in the pool: count the attempt (and the launch on success).

        Returns ``None`` when the unit launched, else the error code.
        """
        pool = (instance_type, zone, capacity_type)
        code = self.check(instance_type, zone, capacity_type, now)
        self.attempts[pool] = self.attempts.get(pool, 0) + 1
        if code is None:
            self.launches[pool] = self.launches.get(pool, 0) + 1
        return code
