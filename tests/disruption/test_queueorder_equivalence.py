"""The queue order of a look's simulations merged, not sorted (karpy.disruption.queueorder), against
the queue's own stable sort: the same order in every simulation of generated days (DaemonSets, PDBs,
do-not-disrupt, consolidateAfter, hostname spreads) and of a drift plan, the same documents with the
merge switched off, and ties kept in the order pending, candidates', deleting nodes' pods."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest

import karpy
from karpy.disruption.queueorder import LookOrder
from karpy.provisioning.scheduler import Scheduler
from tests.disruption.test_roomless_nodes_equivalence import _hostname_day
from tests.disruption.test_simulationshare_equivalence import _day, _run

sys.path.insert(0, str(Path(__file__).parents[1] / "plan"))
from dumps import EC2NODECLASS, cluster_dump, deployment, dump_text, nodepool  # noqa: E402


def _checking(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Scheduler.solve checks a given order against sorting the pods by their prepared sort keys;
    every simulation merges (not only those whose candidates have fewer pods than the look's part)."""
    monkeypatch.setattr(LookOrder, "look_pods_per_candidate_pod", 0)
    checked: list[int] = []
    solve = Scheduler.solve

    def checked_solve(self: Scheduler, pods: Any, placed: Any = None, order: Any = None) -> Any:
        if order is not None:
            keys = {id(p): self._prepared[id(p)][1].sort_key for p in pods}
            assert [id(p) for p in order] == [id(p) for p in sorted(pods, key=lambda p: keys[id(p)])]
            checked.append(len(order))
        return solve(self, pods, placed, order)

    monkeypatch.setattr(Scheduler, "solve", checked_solve)
    return checked


@pytest.mark.parametrize("seed,hostnames", [(1, False), (2, False), (3, True)])
def test_every_simulation_queues_as_the_sort_does(seed: int, hostnames: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    docs, events = _hostname_day(seed) if hostnames else _day(seed)
    checked = _checking(monkeypatch)
    merged = _run(docs, events)
    assert len(checked) > 10 and max(checked) > 1
    monkeypatch.setattr(LookOrder, "enabled", False)
    checked.clear()
    assert merged == _run(docs, events) and not checked
    monkeypatch.setattr(LookOrder, "enabled", True)
    monkeypatch.setattr(LookOrder, "look_pods_per_candidate_pod", 1)  # as shipped: merged or sorted, alike
    assert merged == _run(docs, events)


def test_a_drift_plan_queues_as_the_sort_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pending pods (evicted by earlier waves) and deleting nodes' pods in most simulations."""
    dump = tmp_path / "cluster.yaml"
    design = [EC2NODECLASS, nodepool(sizes=["xlarge", "2xlarge"], budgets=[{"nodes": "20%"}]),
              deployment("web", 30, "1500m", "2Gi", spread=False), deployment("api", 12, "700m", "5Gi")]
    dump.write_text(dump_text(cluster_dump(design, prices="2026-07-20")))
    change = nodepool(sizes=["xlarge", "2xlarge"], families=["c8i", "m8i", "r8i"], budgets=[{"nodes": "20%"}])
    checked = _checking(monkeypatch)
    merged = karpy.plan(dump, apply=[change], prices="2026-07-20", until="2h").to_json()
    assert checked
    monkeypatch.setattr(LookOrder, "enabled", False)
    assert merged == karpy.plan(dump, apply=[change], prices="2026-07-20", until="2h").to_json()


class _Prepared(NamedTuple):
    sort_key: Any


def test_ties_keep_pending_then_candidates_then_deleting_in_their_order() -> None:
    """A stable sort of pending + candidates' + deleting pods: equal keys keep that order."""
    same, big = (-1, -1, "t", ""), (-2, -1, "t", "")
    pending, deleting = ["p0", "p1", "pb"], ["d0", "db"]
    order = LookOrder(pending, [_Prepared(same), _Prepared(same), _Prepared(big)],  # type: ignore[arg-type]
                      deleting, [_Prepared(same), _Prepared(big)])  # type: ignore[arg-type]
    leaving = ["c0", "cb", "c1"]
    got = order.merged(leaving, [_Prepared(same), _Prepared(big), _Prepared(same)])  # type: ignore[arg-type]
    keys = {"p0": same, "p1": same, "pb": big, "d0": same, "db": big, "c0": same, "cb": big, "c1": same}
    assert got == sorted(pending + leaving + deleting, key=keys.__getitem__)
    assert got == ["pb", "cb", "db", "p0", "p1", "c0", "c1", "d0"]
    assert order.merged([], []) == ["pb", "db", "p0", "p1", "d0"]  # the look's order is not edited
    assert order.merged(leaving * 2, [_Prepared(same)] * 6) is None  # more candidates' pods: the Solve sorts
    assert LookOrder.look_pods_per_candidate_pod == 1
