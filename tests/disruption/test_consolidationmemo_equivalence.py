"""computeConsolidation's remembered no-command answers (karpy.disruption.consolidationmemo) against
the plain path (every candidate simulated at every look): the same document on generated days
with disruption on -- PodDisruptionBudgets, do-not-disrupt durations and consolidateAfter windows
that end while nothing else changes included. Fails when the memo changes a decision or an event."""

from __future__ import annotations

import random
from typing import Any

import pytest

from karpy.disruption.consolidation import Consolidation
from karpy.disruption.consolidationmemo import ConsolidationMemo
from tests.disruption.test_podchecks_equivalence import _run, _with_blockers, assert_same_day_with_switch_off


def _day(seed: int) -> tuple[list[dict[str, Any]], list[str]]:
    docs, events = _with_blockers(seed)
    r = random.Random(seed)
    pool = docs[0]["spec"]
    pool["disruption"] = {"consolidateAfter": r.choice(["0s", "2m", "7m"])}
    if r.random() < 0.5:  # a second pool, so candidates interleave and multi-node batches mix pools
        second = {**docs[0], "metadata": {"name": "second"}, "spec": {**pool, "weight": 5}}
        docs.insert(1, second)
    return docs, events


@pytest.mark.parametrize("seed", [1, 2, 3, 6, 8])
def test_consolidation_memo_changes_no_decision(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same_day_with_switch_off(monkeypatch, ConsolidationMemo, "enabled", *_day(seed))


def test_every_remembered_answer_is_what_the_simulation_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """At every memo hit, the plain computation (on a scratch event list) finds no command either and
    publishes the very events the memo replays."""
    compute = Consolidation.compute_consolidation
    hits: list[bool] = []

    def checked(self: Consolidation, cluster: Any, candidates: Any) -> Any:
        memo = cluster.consolidation_memo
        key = memo.key(cluster, candidates) if memo is not None else None
        remembered = memo.no_command(key, candidates) if key is not None else None
        if remembered is not None:
            scratch = type(cluster)(**{**cluster.__dict__, "events": [], "consolidation_memo": None})
            assert self._compute_consolidation(scratch, candidates) is None
            assert tuple(scratch.events) == remembered
            hits.append(True)
        return compute(self, cluster, candidates)

    monkeypatch.setattr(Consolidation, "compute_consolidation", checked)
    for seed in (1, 4):
        _run(*_day(seed))
    assert hits
