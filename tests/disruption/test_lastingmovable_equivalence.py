"""IsCurrentlyReschedulable kept across looks (karpy/disruption/types.py Cluster.lasting_movable) for the
pods no PodDisruptionBudget or do-not-disrupt makes time-dependent, against asking it every look: every
kept answer equals a fresh one, and generated days (with and without PDBs, with do-not-disrupt
durations) decide alike with the memo off. Fails when an answer that time or a PDB can change is kept."""

from __future__ import annotations

from typing import Any

import pytest

from karpy.disruption.controller import DisruptionController
from karpy.disruption.types import Cluster
from tests.disruption.test_podchecks_equivalence import _run, _with_blockers, _without_pdb


@pytest.mark.parametrize("day", ["with-pdb-1", "with-pdb-6", "without-pdb-2", "without-pdb-6"])
def test_kept_answers_change_no_decision(day: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seed = int(day.rsplit("-", 1)[1])
    docs, events = (_with_blockers if day.startswith("with-") else _without_pdb)(seed)
    kept: list[bool] = []
    original = Cluster.currently_reschedulable

    def checked(self: Cluster, pod: Any) -> bool:
        lasting = self.lasting_movable
        hit = lasting.get(id(pod)) if lasting is not None else None
        got = original(self, pod)
        assert got == self.pdb_limits().is_currently_reschedulable(pod, self.now)
        kept.append(hit is not None and hit[0] is pod)
        return got

    kept_keyed: list[bool] = []
    original_keyed = Cluster.movable_keyed

    def checked_keyed(self: Cluster, c: Any) -> list[tuple[str, Any]]:
        held = c.pod_checks.kept.get("movable_keyed") if c.pod_checks is not None else None
        got = original_keyed(self, c)
        fresh = [(p.key, p) for p in c.reschedulable_pods if self.pdb_limits().is_currently_reschedulable(p, self.now)]
        assert [k for k, _ in got] == [k for k, _ in fresh] and all(a[1] is b[1] for a, b in zip(got, fresh))
        kept_keyed.append(held is not None and held is got)
        return got

    with monkeypatch.context() as m:
        m.setattr(Cluster, "currently_reschedulable", checked)
        m.setattr(Cluster, "movable_keyed", checked_keyed)
        memoised = _run(docs, events)
    assert any(kept) == day.startswith("without-")  # a PDB in the cluster: nothing is kept
    assert any(kept_keyed) == day.startswith("without-")  # (a candidate's movable pods: kept on its PodChecks)
    with monkeypatch.context() as m:
        m.setattr(DisruptionController, "keep_movable", False)
        plain = _run(docs, events)
    assert '"disruptions": []' not in memoised
    assert memoised == plain


def _look(now: float, pods: list[Any], lasting: dict[int, Any]) -> Cluster:
    from karpy.state.cluster import ClusterState

    return Cluster(now=now, state=ClusterState(), nodepools={}, pods=pods, pdbs=[], daemonsets=[], provisioner=None,
                   instance_types=lambda pool: [], lasting_movable=lasting)


def test_a_do_not_disrupt_duration_is_asked_again_at_every_look() -> None:
    """A pod whose do-not-disrupt duration elapses between two looks is not reschedulable at the
    first and is at the second; a pod without one is kept from the first look."""
    from karpy.api.builders import make_pod

    from karpy.utils.duration import to_seconds

    timed = make_pod("timed", annotations={"karpenter.sh/do-not-disrupt": "20m"}, node_name="n", unschedulable=False,
                     phase="Running")
    timed.status.start_time = "2026-01-01T00:00:00Z"
    plain = make_pod("plain", node_name="n", unschedulable=False, phase="Running")
    start = to_seconds(timed.status.start_time)
    assert start is not None
    lasting: dict[int, Any] = {}
    first = _look(start + 60, [timed, plain], lasting)
    assert (first.currently_reschedulable(timed), first.currently_reschedulable(plain)) == (False, True)
    assert set(lasting) == {id(plain)}
    second = _look(start + 1500, [timed, plain], lasting)
    assert (second.currently_reschedulable(timed), second.currently_reschedulable(plain)) == (True, True)
