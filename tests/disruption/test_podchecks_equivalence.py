"""NewCandidate's pod checks shared by the methods of a round (karpy.disruption.podchecks) against
the plain path (computed for every method): the same document on generated days with disruption
on, PodDisruptionBudgets and do-not-disrupt durations included. Fails when the memo changes a
decision or an event."""

from __future__ import annotations

import random
from typing import Any

import pytest

import karpy
from karpy.disruption.podchecks import PodChecksMemo
from tests.disruption.test_helpers_equivalence import _day


def _with_blockers(seed: int) -> tuple[list[dict[str, Any]], list[str]]:
    docs, events = _day(seed)
    r = random.Random(seed)
    for d in docs:
        if d["kind"] == "Deployment" and r.random() < 0.5:
            # a do-not-disrupt duration that ends mid-day, so the checks change with time alone
            d["spec"]["template"]["metadata"]["annotations"] = {"karpenter.sh/do-not-disrupt": r.choice(["20m", "45m"])}
    app = next(d for d in docs if d["kind"] == "Deployment")["metadata"]["name"]
    docs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
                 "spec": {"maxUnavailable": r.choice([0, 1]), "selector": {"matchLabels": {"app": app}}}})
    return docs, events


def _run(docs: list[dict[str, Any]], events: list[str]) -> str:
    return karpy.simulate(docs, prices="2026-07-20", until="3h", events=events, disruption=True).to_json()


def assert_same_day_with_switch_off(monkeypatch: pytest.MonkeyPatch, owner: Any, switch: str,
                                    docs: list[dict[str, Any]], events: list[str]) -> None:
    """The day's document with a shortcut on, then with ``owner.switch`` False (the plain path):
    byte-identical, and the day does disrupt."""
    shortcut = _run(docs, events)
    monkeypatch.setattr(owner, switch, False)
    assert '"disruptions": []' not in shortcut
    assert shortcut == _run(docs, events)


@pytest.mark.parametrize("seed", [1, 2, 6, 7])
def test_pod_checks_memo_changes_no_decision(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same_day_with_switch_off(monkeypatch, PodChecksMemo, "enabled", *_with_blockers(seed))


def test_memo_answers_what_a_fresh_check_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every memo hit equals a fresh computation at the same look (pods, error, costs, events)."""
    from karpy.disruption import podchecks

    hits: list[bool] = []
    get = PodChecksMemo.get

    def checked(self: PodChecksMemo, sn: Any, cluster: Any, validate: Any) -> Any:
        before = len(cluster.events)
        got = get(self, sn, cluster, validate)
        replayed = tuple(cluster.events[before:])
        scratch = type(cluster)(**{**cluster.__dict__, "events": []})
        fresh = podchecks.pod_checks(sn, scratch, validate)
        assert (got.pods, got.error, got.block_eviction, got.reschedulable, got.rescheduling_cost,
                got.eviction_costs, got.events) == (fresh.pods, fresh.error, fresh.block_eviction,
                                                    fresh.reschedulable, fresh.rescheduling_cost,
                                                    fresh.eviction_costs, fresh.events)
        assert replayed == fresh.events
        hits.append(True)
        return got

    monkeypatch.setattr(PodChecksMemo, "get", checked)
    docs, events = _with_blockers(3)
    _run(docs, events)
    assert hits


def _without_pdb(seed: int) -> tuple[list[dict[str, Any]], list[str]]:
    """A generated day without PodDisruptionBudgets (the checks of nodes without do-not-disrupt pods
    are then kept across versions); small nodes, so many nodes keep their pods from look to look."""
    docs, events = _with_blockers(seed)
    docs = [d for d in docs if d["kind"] != "PodDisruptionBudget"]
    docs[0]["spec"]["template"]["spec"]["requirements"].append(
        {"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["large", "xlarge"]})
    return docs, events


@pytest.mark.parametrize("seed", [1, 2, 6])
def test_checks_kept_across_versions_change_no_decision(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    docs, events = _without_pdb(seed)
    memoised = _run(docs, events)
    monkeypatch.setattr(PodChecksMemo, "across_versions", False)
    per_version = _run(docs, events)
    monkeypatch.setattr(PodChecksMemo, "enabled", False)
    plain = _run(docs, events)
    assert '"disruptions": []' not in memoised  # the days do disrupt
    assert memoised == per_version == plain


def test_checks_kept_across_versions_are_what_a_fresh_check_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without PDBs, every answer (kept across versions or not) equals a fresh computation at the
    same look."""
    from karpy.disruption import podchecks

    across: list[bool] = []
    get = PodChecksMemo.get

    def checked(self: PodChecksMemo, sn: Any, cluster: Any, validate: Any) -> Any:
        before = len(cluster.events)
        kept = (self._key, self._pods_only.get(sn.name) or self._pods_only_before.get(sn.name))
        got = get(self, sn, cluster, validate)
        replayed = tuple(cluster.events[before:])
        scratch = type(cluster)(**{**cluster.__dict__, "events": []})
        fresh = podchecks.pod_checks(sn, scratch, validate)
        assert (got.pods, got.error, got.block_eviction, got.reschedulable, got.rescheduling_cost,
                got.eviction_costs, got.events) == (fresh.pods, fresh.error, fresh.block_eviction,
                                                    fresh.reschedulable, fresh.rescheduling_cost,
                                                    fresh.eviction_costs, fresh.events)
        assert replayed == fresh.events
        if kept[1] is not None and kept[1][1] is got and kept[0] != (cluster.version, cluster.now):
            across.append(True)  # an answer from an earlier version or instant
        return got

    monkeypatch.setattr(PodChecksMemo, "get", checked)
    _run(*_without_pdb(2))
    assert across


@pytest.mark.parametrize("seed", [1, 2, 6])
def test_checks_from_pod_facts_change_no_decision(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A node whose pods changed, checked from its pods' facts, against pod_checks for it."""
    from karpy.disruption import podchecks

    reused: list[int] = []
    build = podchecks.checks_from_facts

    def counted(bound: Any, known: Any) -> Any:
        got = build(bound, known)
        if got is not None:
            reused.append(sum(1 for p in bound if known.get(id(p)) is not None))
        return got

    monkeypatch.setattr(podchecks, "checks_from_facts", counted)
    docs, events = _day(seed)  # no PDB, no do-not-disrupt pods
    docs[0]["spec"]["template"]["spec"]["requirements"].append(
        {"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["large", "xlarge"]})
    from_facts = _run(docs, events)
    assert any(reused)  # facts kept from a node's earlier checks were used
    monkeypatch.setattr(PodChecksMemo, "from_facts", False)
    assert from_facts == _run(docs, events)


def test_facts_are_not_used_for_do_not_disrupt_pods() -> None:
    """A pod with the annotation (any value) has no facts: its checks read the instant."""
    from karpy.api.pod import Pod
    from karpy.disruption.podchecks import PodFacts, checks_from_facts

    plain = Pod.model_validate({"metadata": {"name": "a", "namespace": "ns"}, "spec": {"containers": []}})
    blocked = Pod.model_validate({"metadata": {"name": "b", "namespace": "ns",
                                               "annotations": {"karpenter.sh/do-not-disrupt": "false"}},
                                  "spec": {"containers": []}})
    assert PodFacts.of(blocked) is None
    assert checks_from_facts((plain, blocked), {}) is None
    got = checks_from_facts((plain,), {})
    assert got is not None and got[0].pods == [plain] and got[0].error is None


def test_movable_pods_kept_with_checks_from_facts_are_what_a_fresh_look_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks built from pod facts carry Cluster.movable_keyed's answer (every reschedulable pod:
    without PDBs and do-not-disrupt pods IsCurrentlyReschedulable is IsReschedulable); each time a
    look takes it, it equals the pods the look itself finds movable."""
    from karpy.disruption.types import Cluster

    taken: list[int] = []
    movable_keyed = Cluster.movable_keyed

    def checked(self: Cluster, c: Any) -> Any:
        kept = c.pod_checks.kept.get("movable_keyed") if c.pod_checks is not None else None
        got = movable_keyed(self, c)
        if kept is not None and got is kept:
            assert got == [(p.key, p) for p in c.reschedulable_pods
                           if self.pdb_limits().is_currently_reschedulable(p, self.now)]
            taken.append(len(got))
        return got

    monkeypatch.setattr(Cluster, "movable_keyed", checked)
    docs, events = _day(2)
    _run(docs, events)
    assert len(taken) > 10 and any(taken)


def test_prepared_pods_kept_on_the_checks_are_what_the_provisioner_prepares(monkeypatch: pytest.MonkeyPatch) -> None:
    """A candidate's pods prepared for SimulateScheduling (Provisioner.prepare) are kept on its
    node's checks with movable_keyed: each time they are taken, they equal what the provisioner
    prepares for the pods then; and the days decide the same asking the provisioner every time."""
    from karpy.disruption.types import Cluster

    taken: list[int] = []
    movable_prepared = Cluster.movable_prepared

    def checked(self: Cluster, c: Any, keyed: Any) -> Any:
        before = c.pod_checks.kept.get("movable_prepared") if c.pod_checks is not None else None
        got = movable_prepared(self, c, keyed)
        assert got == self.provisioner.prepare([p for _, p in keyed])
        if before is not None and got is before[2]:
            taken.append(len(got))
        return got

    monkeypatch.setattr(Cluster, "movable_prepared", checked)
    docs, events = _day(2)  # no PDB, no do-not-disrupt pods; small nodes, so many candidates
    docs[0]["spec"]["template"]["spec"]["requirements"].append(
        {"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["large", "xlarge"]})
    kept = _run(docs, events)
    assert len(taken) > 10 and any(taken)
    monkeypatch.setattr(Cluster, "keep_prepared", False)
    assert kept == _run(docs, events)
