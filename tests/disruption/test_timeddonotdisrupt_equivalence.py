"""TimedDoNotDisrupt (karpy/disruption/timeddonotdisrupt.py), the pods whose do-not-disrupt can end on
its own that the controller's wake-up reads each round, against the plain walk over every pod: each
answer compared as a set on generated days with do-not-disrupt durations (and "true", and invalid
values), and the documents compared with the index off. Fails when a pod's annotation, binding or
deletion is missed."""

from __future__ import annotations

import random
from typing import Any

import pytest

import karpy
from karpy.disruption.timeddonotdisrupt import TimedDoNotDisrupt, _timed
from tests.disruption.test_helpers_equivalence import _day


def _with_durations(seed: int) -> tuple[list[dict[str, Any]], list[str]]:
    docs, events = _day(seed)
    r = random.Random(seed)
    for d in docs:
        if d["kind"] == "Deployment" and r.random() < 0.7:
            d["spec"]["template"]["metadata"]["annotations"] = {
                "karpenter.sh/do-not-disrupt": r.choice(["20m", "45m", "true", "bogus"])}
    return docs, events


def _run(docs: list[dict[str, Any]], events: list[str]) -> str:
    return karpy.simulate(docs, prices="2026-07-20", until="3h", events=events, disruption=True).to_json()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_wake_up_reads_the_pods_the_store_walk_finds(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    docs, events = _with_durations(seed)
    asked = [0]
    original = TimedDoNotDisrupt.pods

    def both(self: TimedDoNotDisrupt) -> list[Any]:
        fast = original(self)
        plain = [p for p in self._store.iter("Pod") if _timed(p)]
        assert sorted(p.key for p in fast) == sorted(p.key for p in plain)
        assert {id(p) for p in fast} == {id(p) for p in plain}
        asked[0] += bool(plain)
        return fast

    with monkeypatch.context() as m:
        m.setattr(TimedDoNotDisrupt, "pods", both)
        fast_doc = _run(docs, events)
    assert asked[0] > 0
    with monkeypatch.context() as m:
        m.setattr(TimedDoNotDisrupt, "enabled", False)
        plain_doc = _run(docs, events)
    assert fast_doc == plain_doc
