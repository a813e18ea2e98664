"""CanEvictPods' no-PDB shortcut against the plain per-pod check (pdb.go isEvictable for every
pod): the same answer and the same recorded events on generated pods (do-not-disrupt "true",
durations elapsed or not, invalid values; disrupted-taint tolerations; mirror and terminal pods)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from karpy.api.builders import make_pod
from karpy.scheduling.labels import DO_NOT_DISRUPT_ANNOTATION_KEY
from karpy.utils.pdb import Limits
from karpy.utils.pod import DISRUPTED_TAINT_KEY

ANNOTATIONS = [None, "true", "false", "5m", "2h", "-1m", "bogus", "0s"]


def _pods(r: random.Random, n: int) -> list[Any]:
    out = []
    for i in range(n):
        value = r.choice(ANNOTATIONS)
        ann = {DO_NOT_DISRUPT_ANNOTATION_KEY: value} if value is not None else {}
        tolerations = [{"key": DISRUPTED_TAINT_KEY, "operator": "Exists"}] if r.random() < 0.15 else []
        owners = ([{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u"}] if r.random() < 0.1 else [])
        p = make_pod(f"p{i}", annotations=ann, tolerations=tolerations, owner_references=owners,
                     node_name="node", unschedulable=False, phase=r.choice(["Running", "Running", "Succeeded"]))
        if r.random() < 0.7:
            p.status.start_time = "2026-01-01T00:00:00Z"
        out.append(p)
    return out


def _plain(limits: Limits, pods: list[Any], now: float, events: Any) -> tuple[list[str], bool]:
    for pod in pods:
        keys, ok = limits._is_evictable(pod, now, events, 0)  # noqa: SLF001 - the plain path
        if not ok:
            return keys, False
    return [], True


def _case(seed: int, least: int) -> tuple[list[Any], float, Limits, list[tuple[str, str, str]],
                                          list[tuple[str, str, str]]]:
    """Generated pods, an instant, PDB-less limits and the two event lists of one seed."""
    r = random.Random(seed)
    pods = _pods(r, r.randint(least, 40))
    return pods, 1767225600.0 + r.choice([0.0, 120.0, 3600.0, 86400.0]), Limits([]), [], []


@pytest.mark.parametrize("seed", range(20))
def test_no_pdb_shortcut_matches_the_plain_check(seed: int) -> None:
    pods, now, limits, fast_events, plain_events = _case(seed, 0)
    assert limits.can_evict_pods(pods, now, fast_events) == _plain(limits, pods, now, plain_events)
    assert fast_events == plain_events
    assert limits.can_evict_pods(pods, now, None) == _plain(limits, pods, now, None)


@pytest.mark.parametrize("seed", range(20))
def test_no_pdb_fully_blocked_shortcut_matches_the_plain_check(seed: int) -> None:
    """isFullyBlocked (IsCurrentlyReschedulable's PDB part) without PDBs: the same answer and events."""
    pods, now, limits, fast_events, plain_events = _case(seed, 1)
    for pod in pods:
        keys, ok = limits._is_evictable(pod, now, plain_events, 1)  # noqa: SLF001 - the plain path
        assert limits.is_fully_blocked(pod, now, fast_events) == ((keys, True) if not ok else ([], False))
    assert fast_events == plain_events
