"""NewCandidate answered once per node and disruption class per look (karpy.disruption.types
look_candidate: the methods of a round that find no command share the look) against asking it for
every method: the same documents on generated days with PodDisruptionBudgets and do-not-disrupt
durations (candidates blocked, their DisruptionBlocked events published again), and every answer
taken from the look equal to a fresh one. Fails when a shared answer changes a decision or an event."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from karpy.disruption import types
from karpy.disruption.types import Cluster, look_candidate, new_candidate
from tests.disruption.test_helpers_equivalence import _day
from tests.disruption.test_podchecks_equivalence import _run, _with_blockers, assert_same_day_with_switch_off


@pytest.mark.parametrize("seed", [1, 2, 6])
def test_shared_candidates_change_no_decision(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same_day_with_switch_off(monkeypatch, Cluster, "share_candidates", *_with_blockers(seed))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, types.CandidateError) or isinstance(b, types.CandidateError):
        return type(a) is type(b) and str(a) == str(b)
    return (a.state_node is b.state_node and a.nodepool is b.nodepool and a.instance_type is b.instance_type
            and (a.capacity_type, a.zone, a.reschedulable_pods, a.disruption_cost, a.price,
                 a.reschedule_disruption_cost) == (b.capacity_type, b.zone, b.reschedulable_pods, b.disruption_cost,
                                                   b.price, b.reschedule_disruption_cost))


def test_each_answer_from_the_look_is_a_fresh_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[str] = []

    def checked(sn: Any, cluster: Cluster, disruption_class: str, maps: Any) -> Any:
        hit = (id(sn), disruption_class) in cluster.candidate_answers
        before = len(cluster.events)
        got = look_candidate(sn, cluster, disruption_class, maps)
        replayed = cluster.events[before:]
        scratch = Cluster(**{**{f.name: getattr(cluster, f.name) for f in dataclasses.fields(cluster)}, "events": []})
        fresh = new_candidate(sn, scratch, disruption_class, maps)
        assert _same(got, fresh), (sn, disruption_class)
        assert replayed == scratch.events
        if hit:
            taken.append(disruption_class)
        return got

    from karpy.disruption import helpers
    monkeypatch.setattr(helpers, "look_candidate", checked)
    docs, events = _with_blockers(2)
    _run(docs, events)
    docs, events = _day(7)
    _run(docs, events)
    assert taken.count("graceful") > 50 and taken.count("eventual") > 50


def test_a_node_drift_may_take_and_consolidation_may_not_is_answered_per_class(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a terminationGracePeriod, drift (eventual) takes a node whose pods are do-not-disrupt and
    emptiness/consolidation (graceful, asked first in the same look) do not: one answer per class."""
    import copy
    import sys
    from pathlib import Path

    import karpy

    sys.path.insert(0, str(Path(__file__).parents[1] / "plan"))
    from dumps import EC2NODECLASS, cluster_dump, deployment, dump_text, nodepool

    pool = nodepool(sizes=["xlarge", "2xlarge"], budgets=[{"nodes": "50%"}])
    pool["spec"]["template"]["spec"]["terminationGracePeriod"] = "30m"
    design = [EC2NODECLASS, pool, deployment("web", 4, "3", "4Gi"),
              deployment("pinned", 2, "3", "4Gi", annotations={"karpenter.sh/do-not-disrupt": "true"})]
    path = tmp_path / "cluster.yaml"
    path.write_text(dump_text(cluster_dump(design, prices="2026-07-20")))
    change = copy.deepcopy(pool)
    change["spec"]["template"]["spec"]["requirements"][0]["values"] = ["c8i", "m8i", "r8i"]
    shared = karpy.plan(path, apply=[change], prices="2026-07-20")
    evicted = {p for w in shared.to_document()["waves"] for p in w["evicted"]}
    assert any(p.startswith("default/pinned-") for p in evicted)  # drift took the do-not-disrupt nodes
    monkeypatch.setattr(Cluster, "share_candidates", False)
    assert shared.to_json() == karpy.plan(path, apply=[change], prices="2026-07-20").to_json()
