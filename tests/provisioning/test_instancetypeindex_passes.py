"""The SchedulerCache's InstanceTypeIndex outlives every Scheduler that takes it; its memos keyed by
the identity of one Solve's objects (claims' requirement sets and option lists, their id sets) are
forgotten when the next Scheduler takes it (InstanceTypeIndex.begin_scheduler), so a long run holds
one Solve's worth of them, not up to their limit of every Solve's (issue #32: a year with the
disruption controller on). The same decisions either way: checked against keeping them."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import pytest

import karpy
from karpy.api.builders import make_nodepool, make_pod
from karpy.cloudprovider import fake
from karpy.provisioning.instancetypeindex import InstanceTypeIndex
from karpy.provisioning.provisioner import Provisioner
from karpy.state.cluster import ClusterState
from tests.disruption.test_podchecks_equivalence import _with_blockers

IDENTITY_MEMOS = ("_bad_by_id", "_with", "_ids_of", "_meets", "_minus", "_covered")


class KeyedProvider(fake.FakeCloudProvider):
    """The fake provider with a key for its types, so the provisioner's SchedulerCache keeps the index."""

    def instance_types_key(self, nodepool: Any) -> Hashable | None:
        return ("catalogue", 1)


def _solve(prov: Provisioner, pool: Any, n: int, tag: str) -> Any:
    pods = [make_pod(f"{tag}-{i}", requests={"cpu": f"{1 + i % 3}", "memory": f"{1 + i % 5}Gi"})
            for i in range(n)]
    s = prov.new_scheduler(pods, [pool], ClusterState(), [])
    assert s is not None
    return s, s.solve(pods)


def _memo_sizes(index: InstanceTypeIndex) -> dict[str, int]:
    return {name: len(getattr(index, name)) for name in IDENTITY_MEMOS}


def test_a_new_scheduler_forgets_the_last_solves_identity_memos() -> None:
    prov = Provisioner(KeyedProvider(instance_types=fake.instance_types(60)))
    pool = make_nodepool("default")
    first, _ = _solve(prov, pool, 40, "a")
    index = first.index
    assert sum(_memo_sizes(index).values()) > 0  # the Solve did use them
    pods = [make_pod("b-0", requests={"cpu": "1"})]
    second = prov.new_scheduler(pods, [pool], ClusterState(), [])
    assert second is not None and second.index is index  # the cache's, kept while the provider's key holds
    # nothing of the first Solve is held any more (before: all of it, until a memo reached its limit)
    assert _memo_sizes(index) == dict.fromkeys(IDENTITY_MEMOS, 0)
    second.solve(pods)
    assert sum(_memo_sizes(index).values()) > 0


def test_the_memos_do_not_grow_with_the_number_of_solves() -> None:
    prov = Provisioner(KeyedProvider(instance_types=fake.instance_types(60)))
    pool = make_nodepool("default")
    sizes = []
    for k in range(6):
        s, _ = _solve(prov, pool, 30, f"r{k}")
        sizes.append(sum(_memo_sizes(s.index).values()))
    assert max(sizes) <= 2 * sizes[0]  # before: 6 Solves' entries by the last


def test_keeping_them_plain_path_grows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The switch the equivalence test below uses is the plain path: with it off, entries pile up."""
    monkeypatch.setattr(InstanceTypeIndex, "forget_between_schedulers", False)
    prov = Provisioner(KeyedProvider(instance_types=fake.instance_types(60)))
    pool = make_nodepool("default")
    sizes = [sum(_memo_sizes(_solve(prov, pool, 30, f"r{k}")[0].index).values()) for k in range(4)]
    assert sizes[-1] > 2 * sizes[0]


def _run(seed: int) -> str:
    """A generated day (tests/disruption's) with the disruption controller on: provisioning passes
    and consolidation simulations all take the one index."""
    docs, events = _with_blockers(seed)
    return karpy.simulate(docs, prices="2026-07-20", until="3h", events=events, disruption=True).to_json()


@pytest.mark.parametrize("seed", [1, 2, 6])
def test_forgetting_between_schedulers_changes_no_decision(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    forgetting = _run(seed)
    monkeypatch.setattr(InstanceTypeIndex, "forget_between_schedulers", False)
    kept = _run(seed)
    assert '"disruptions": []' not in forgetting  # the days do disrupt
    assert forgetting == kept
