"""A disruption simulation's Solve ended once its failure is certain (karpy.disruption.certainfailure):
every non-pending pod placed, one of them on a node still initializing. Checked against the plain
path (every pod solved) on plans that drift every node -- with consolidateAfter 0s and 2m, and with
minValues on the replacements' NodePool -- at every cut simulation against the whole Solve, and
the rule itself on hand-made placements. Fails when a cut changes a decision, an event or an error."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import karpy
import karpy.disruption.consolidation as consolidation_module
import karpy.disruption.drift as drift_module
from karpy.disruption.certainfailure import CertainFailure
from karpy.disruption.helpers import SimulationResults, SimulationShare, simulate_scheduling
from karpy.disruption.types import Cluster

from tests.disruption.test_failed_simulation_reuse import GEN8, PRICES, SIZES
from tests.disruption.test_failed_simulation_reuse import _dump as _reuse_dump

sys.path.insert(0, str(Path(__file__).parents[1] / "plan"))
from dumps import deployment, nodepool  # noqa: E402


def _dump(tmp: Path, consolidate_after: str) -> Path:
    """test_failed_simulation_reuse's cluster, and pods without anti-affinity (runs of alike pods)."""
    return _reuse_dump(tmp, consolidate_after, (deployment("batch", 30, "500m", "1Gi", spread=False),))


def _change(consolidate_after: str, min_values: bool) -> dict[str, Any]:
    change = nodepool(sizes=SIZES, families=GEN8, budgets=[{"nodes": "25%"}], consolidate_after=consolidate_after)
    if min_values:
        change["spec"]["template"]["spec"]["requirements"][0]["minValues"] = 2
    return change


def _plan(dump: Path, change: dict[str, Any]) -> tuple[str, str]:
    p = karpy.plan(dump, apply=[change], prices=PRICES, until="2h")
    assert p.result is not None
    return p.to_json(), p.result.to_json()


def _counting_cuts(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    cuts: list[bool] = []
    call = CertainFailure.__call__

    def counted(self: CertainFailure, key: str) -> bool:
        stop = call(self, key)
        if stop:
            cuts.append(True)
        return stop

    monkeypatch.setattr(CertainFailure, "__call__", counted)
    return cuts


@pytest.mark.parametrize("consolidate_after,min_values", [("0s", False), ("2m", False), ("0s", True)])
def test_ending_certain_failures_early_changes_no_decision(consolidate_after: str, min_values: bool, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    dump = _dump(tmp_path, consolidate_after)
    change = _change(consolidate_after, min_values)
    cuts = _counting_cuts(monkeypatch)
    cut = _plan(dump, change)
    assert cuts  # some simulation was ended early
    monkeypatch.setattr(CertainFailure, "enabled", False)
    assert '"method": "drift"' in cut[0]
    assert cut == _plan(dump, change)


def _failure(r: SimulationResults | str) -> Any:
    if isinstance(r, str):
        return r
    return (r.all_non_pending_pods_scheduled(), r.non_pending_pod_scheduling_errors(),
            sorted(r._non_pending_errors().items()))


@pytest.mark.parametrize("consolidate_after", ["0s", "2m"])
def test_every_cut_simulation_fails_as_the_whole_solve(consolidate_after: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    cuts = _counting_cuts(monkeypatch)
    compared: list[bool] = []

    def checked(cluster: Cluster, candidates: Any, consolidation: bool) -> SimulationResults | str:
        before = len(cuts)
        got = simulate_scheduling(cluster, candidates, consolidation)
        if len(cuts) > before:
            with monkeypatch.context() as m:
                m.setattr(CertainFailure, "enabled", False)
                m.setattr(SimulationShare, "reuse_failed", False)
                whole = simulate_scheduling(cluster, candidates, consolidation)
            assert not isinstance(got, str) and not got.all_non_pending_pods_scheduled()
            assert _failure(got) == _failure(whole)
            compared.append(True)
        return got

    monkeypatch.setattr(consolidation_module, "simulate_scheduling", checked)
    monkeypatch.setattr(drift_module, "simulate_scheduling", checked)
    _plan(_dump(tmp_path, consolidate_after), _change(consolidate_after, False))
    assert len(compared) > 5


def _pod(key: str) -> SimpleNamespace:
    return SimpleNamespace(key=key)


def _node(initialized: bool, *keys: str) -> SimpleNamespace:
    return SimpleNamespace(initialized=lambda: initialized, pods=[_pod(k) for k in keys])


def _claim(min_values: bool, *keys: str) -> SimpleNamespace:
    return SimpleNamespace(requirements=SimpleNamespace(has_min_values=lambda: min_values),
                           pods=[_pod(k) for k in keys])


def _answers(nodes: list[Any], claims: list[Any], order: list[str], deleting: frozenset[str] = frozenset()
             ) -> list[bool]:
    scheduler: Any = SimpleNamespace(existing_nodes=nodes, new_nodeclaims=claims)
    watch = CertainFailure(["a", "b", "d"], deleting, scheduler)
    return [watch(k) for k in order]


def test_the_rule_waits_for_every_non_pending_pod() -> None:
    nodes = [_node(True, "b"), _node(False, "a", "p")]
    assert _answers(nodes, [], ["p", "a", "b", "d"]) == [False, False, False, True]
    assert _answers(nodes, [], ["a", "x", "d", "b"]) == [False, False, False, True]


def test_the_rule_needs_a_non_pending_pod_of_no_deleting_node_on_an_uninitialized_node() -> None:
    assert _answers([_node(True, "a", "b", "d"), _node(False, "p")], [], ["a", "b", "d"]) == [False] * 3
    assert _answers([_node(True, "b", "d"), _node(False, "a")], [], ["a", "b", "d"],
                    deleting=frozenset({"a"})) == [False] * 3


def test_the_rule_does_not_cut_while_a_claim_with_min_values_holds_a_non_pending_pod() -> None:
    nodes = [_node(False, "a")]
    assert _answers(nodes, [_claim(True, "b", "d")], ["a", "b", "d"]) == [False] * 3
    assert _answers(nodes, [_claim(False, "b", "d")], ["a", "b", "d"]) == [False, False, True]
    assert _answers(nodes, [_claim(True, "p"), _claim(False, "b", "d")], ["a", "b", "d"]) == [False, False, True]
