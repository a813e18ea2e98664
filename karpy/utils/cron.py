"""Standard 5-field cron schedules as github.com/robfig/cron/v3 ``ParseStandard`` reads them.

Karpenter's budget ``schedule`` (pkg/apis/v1/nodepool.go Budget.IsActive) is parsed with
``cron.ParseStandard("TZ=UTC " + schedule)``: minute, hour, day of month, month, day of week;
``*``, ``?``, lists, ranges, ``/step``, month and weekday names, and the descriptors
``@yearly @annually @monthly @weekly @daily @midnight @hourly``. As robfig does, when either
day field is ``*`` both must match, otherwise either may (the classic cron OR rule).
:meth:`CronSchedule.next` is robfig's ``Next``: the first matching minute strictly after ``t``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

__all__ = ["CronError", "CronSchedule", "parse_standard"]

_DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
                "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
_MONTHS = {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_DOW = {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}
#: how far :meth:`CronSchedule.next` looks ahead (robfig gives up after five years too)
_MAX_YEARS = 5


class CronError(ValueError):
    """A schedule robfig/cron rejects."""


def _field(text: str, lo: int, hi: int, names: dict[str, int] | None) -> tuple[frozenset[int], bool]:
    values: set[int] = set()
    star = False
    for part in text.split(","):
        step = 1
        if "/" in part:
            part, step_s = part.split("/", 1)
            if not step_s.isdigit() or int(step_s) == 0:
                raise CronError(f"bad step in {text!r}")
            step = int(step_s)
        if part in ("*", "?"):
            start, end = lo, hi
            star = step == 1
        else:
            if "-" in part:
                a, b = part.split("-", 1)
            else:
                a, b = part, None
            start = _value(a, names)
            end = _value(b, names) if b is not None else (hi if step > 1 else start)
        if start > end:
            raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {part}")
        if start < lo or end > hi:
            raise CronError(f"value out of range ({lo}-{hi}) in {text!r}")
        values.update(range(start, end + 1, step))
    return frozenset(values), star


def _value(text: str, names: dict[str, int] | None) -> int:
    if names is not None and text.lower() in names:
        return names[text.lower()]
    if not text.isdigit():
        raise CronError(f"failed to parse int from {text}")
    return int(text)


@dataclass(frozen=True)
class CronSchedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    dom: frozenset[int]
    months: frozenset[int]
    dow: frozenset[int]
    dom_star: bool
    dow_star: bool

    def _day_matches(self, d: datetime) -> bool:
        if d.month not in self.months:
            return False
        dom_ok = d.day in self.dom
        dow_ok = (d.isoweekday() % 7) in self.dow
        if self.dom_star or self.dow_star:
            return dom_ok and dow_ok
        return dom_ok or dow_ok

    def next(self, t: datetime) -> datetime | None:
        """The first activation strictly after ``t`` (UTC), None if none within five years."""
        t = t.astimezone(timezone.utc)
        start = t.replace(second=0, microsecond=0) + timedelta(minutes=1)
        day = start.replace(hour=0, minute=0)
        hours = sorted(self.hours)
        minutes = sorted(self.minutes)
        for _ in range(366 * _MAX_YEARS):
            if self._day_matches(day):
                for h in hours:
                    for m in minutes:
                        cand = day.replace(hour=h, minute=m)
                        if cand >= start:
                            return cand
            day += timedelta(days=1)
        return None


def parse_standard(spec: str) -> CronSchedule:
    """robfig/cron ParseStandard (UTC)."""
    spec = spec.strip()
    spec = _DESCRIPTORS.get(spec, spec)
    if spec.startswith("@"):
        raise CronError(f"unrecognized descriptor: {spec}")
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{spec}]")
    minutes, _ = _field(fields[0], 0, 59, None)
    hours, _ = _field(fields[1], 0, 23, None)
    dom, dom_star = _field(fields[2], 1, 31, None)
    months, _ = _field(fields[3], 1, 12, _MONTHS)
    dow, dow_star = _field(fields[4].replace("7", "0") if fields[4] == "7" else fields[4], 0, 6, _DOW)
    return CronSchedule(minutes, hours, dom, months, dow, dom_star, dow_star)
