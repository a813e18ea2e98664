"""karpy/kubescheduler/preemption.py's shortcuts against the plain walk: a PostFilter after a failed
filter pass that repeated an earlier one (Diagnosis.repeats) reuses the earlier pass's potential
nodes, and the cluster-wide "nothing of lower priority" exit and lowest priority kept across cycles.

Each test pits the shortcut against the plain walk (every node's status read again) on clusters
where consecutive failing pods see different statuses on the same node tree, so an answer taken
from the wrong Diagnosis changes the outcome."""

from __future__ import annotations

import random
from typing import Any

import pytest

from karpy.api.builders import make_node, make_pod
from karpy.kubescheduler import KubeScheduler
from karpy.kubescheduler.nodeinfo import NodeInfo
from karpy.kubescheduler.types import Diagnosis
from karpy.kubescheduler.types import Code

from .conftest import FakeClock

ZONE = "topology.kubernetes.io/zone"


def _plain_potential(all_nodes: list[NodeInfo], diag: Diagnosis) -> tuple[list[NodeInfo], list[str]]:
    """nodesWherePreemptionMightHelp as upstream walks it."""
    potential = []
    for ni in all_nodes:
        st = diag.node_to_status.get(ni.name, diag.absent_status)
        if st is not None and st.code == Code.UNSCHEDULABLE:
            potential.append(ni)
    return potential, [ni.name for ni in potential]


def _plain(ks: KubeScheduler) -> KubeScheduler:
    ks.preemption._potential_nodes = _plain_potential  # type: ignore[method-assign]
    return ks


def _counting(ks: KubeScheduler) -> tuple[KubeScheduler, list[int]]:
    """Count the PostFilters answered from the memo (the walk not run)."""
    hits = [0]
    pre = ks.preemption
    inner = pre._potential_nodes

    def count(all_nodes: Any, diag: Any) -> Any:
        before = pre._potential
        out = inner(all_nodes, diag)
        if before is not None and pre._potential is before and before[3] is out[0]:
            hits[0] += 1
        return out
    pre._potential_nodes = count  # type: ignore[method-assign]
    return ks, hits


def _ops(seed: int) -> list[tuple]:
    """Nodes of two sizes in three zones (some tainted), pods of three priorities with a
    nodeSelector or none, each added with two replicas, pod deletions, node updates."""
    rng = random.Random(seed)
    ops: list[tuple] = []
    nodes: list[str] = []
    pods = 0
    for step in range(60):
        r = rng.random()
        if r < 0.2 or not nodes:
            name = f"n{step}"
            nodes.append(name)
            ops.append(("node", name, rng.randrange(3), rng.random() < 0.2, rng.choice(["2", "4"])))
        elif r < 0.25:
            ops.append(("node", rng.choice(nodes), rng.randrange(3), rng.random() < 0.2, "4"))
        elif r < 0.32 and pods:
            ops.append(("delpod", f"p{rng.randrange(pods)}"))
        else:
            spec = (rng.choice(["500m", "1", "1500m", "3"]), rng.choice([0, 5, 50]), rng.randrange(3))
            for rep in "abc":
                ops.append(("pod", f"p{pods}", *spec))
                pods += 1
        ops.append(("cycle",))
    return ops


def _play(ks: KubeScheduler, ops: list[tuple]) -> list[tuple]:
    out: list[tuple] = []
    for op in ops:
        if op[0] == "node":
            _, name, zone, tainted, cpu = op
            n = make_node(name, labels={ZONE: f"z{zone}"}, taints=[("dedicated", "a", "NoSchedule")] if tainted else [],
                          capacity={"cpu": cpu, "memory": "8Gi", "pods": "6"})
            (ks.update_node if name in ks.nodes else ks.add_node)(n)
        elif op[0] == "delpod":
            ks.delete_pod(f"default/{op[1]}")
        elif op[0] == "pod":
            _, name, cpu, prio, sel = op
            kw: dict[str, Any] = {}
            if sel:
                kw["node_selector"] = {ZONE: f"z{sel}"}
            ks.add_pod(make_pod(name, uid=name, requests={"cpu": cpu}, priority=prio, **kw))
        else:
            ks.clock.t += 11
            while (r := ks.schedule_one()) is not None:
                out.append((r.pod_key, r.outcome, r.node_name, r.condition and r.condition["message"],
                            r.nominated_node_name, [(v.key, v.node) for v in r.victims], r.cleared_nominations))
                for v in r.victims:  # the victims go (their deletion is the API server's)
                    ks.delete_pod(v.key)
    return out


def test_repeated_postfilters_match_the_plain_walk():
    """Random clusters with preemption (victims found, none found, not helpful): the same
    outcomes, messages, nominations and victims as walking every node's status each PostFilter,
    with many PostFilters answered from the memo."""
    hits = 0
    outcomes: set[str] = set()
    for seed in range(10):
        ops = _ops(seed)
        fast, h = _counting(KubeScheduler(FakeClock(), random.Random(seed)))
        got = _play(fast, ops)
        assert got == _play(_plain(KubeScheduler(FakeClock(), random.Random(seed))), ops), seed
        hits += h[0]
        outcomes |= {o[1] for o in got}
    assert {"Bound", "Unschedulable", "Nominated"} <= outcomes
    assert hits > 100, hits


def test_only_a_repeat_of_the_same_diagnosis_is_answered_from_the_memo():
    """Two failed passes on the same node tree with different statuses: the second gets its own
    potential nodes; a Diagnosis that repeats the first gets the first's."""
    ks = KubeScheduler(FakeClock(), random.Random(0))
    for i in range(4):
        ks.add_node(make_node(f"n{i}", labels={ZONE: f"z{i % 2}"}, capacity={"cpu": "2", "pods": "5"}))
    nodes = ks._snapshot()
    ni0 = nodes[0]
    from karpy.kubescheduler.types import Status, unresolvable
    cpu = Status(Code.UNSCHEDULABLE, ["Insufficient cpu"], "NodeResourcesFit")
    first = Diagnosis(node_to_status={ni.name: cpu for ni in nodes})
    other = Diagnosis(node_to_status={ni.name: (cpu if ni is ni0 else unresolvable("x")) for ni in nodes})
    repeat = Diagnosis(node_to_status=dict(reversed(list(first.node_to_status.items()))), repeats=first)
    pre = ks.preemption
    for diag in (first, other, repeat, other, first):
        got = pre._potential_nodes(ks._snapshot(), diag)
        assert got == _plain_potential(nodes, diag)
        assert got[1] == ([ni0.name] if diag is other else [ni.name for ni in nodes])
    # on another node tree (a node added) the statuses are walked again
    ks.add_node(make_node("n9", labels={ZONE: "z0"}, capacity={"cpu": "2", "pods": "5"}))
    bigger = ks._snapshot()
    again = Diagnosis(node_to_status={ni.name: cpu for ni in bigger}, repeats=first)
    got = pre._potential_nodes(bigger, again)
    assert got == _plain_potential(bigger, again) and len(got[0]) == 5


def test_lowest_priority_kept_between_postfilters_is_the_minimum():
    """The lowest pod priority over the nodes, kept between PostFilters while no node's pods
    change, equals the minimum over every node's pods at each PostFilter (random clusters with
    preemption: victims deleted, pods added and deleted, nodes updated)."""
    checked = 0
    for seed in range(8):
        ks = KubeScheduler(FakeClock(), random.Random(seed))
        pre = ks.preemption
        inner = pre._lowest_priority

        def check(all_nodes: Any, _inner: Any = inner) -> float:
            nonlocal checked
            got = _inner(all_nodes)
            assert got == min((p.priority for ni in all_nodes for p in ni.pods), default=float("inf"))
            checked += 1
            return got  # type: ignore[no-any-return]
        pre._lowest_priority = check  # type: ignore[method-assign]
        _play(ks, _ops(seed))
    assert checked > 100, checked


# ---- preemption: nothing of lower priority anywhere ----------------------------------------------------------------
def _preemption_cluster(priorities: list[int]) -> KubeScheduler:
    ks = KubeScheduler(FakeClock(), random.Random(5))
    for i, prio in enumerate(priorities):
        ks.add_node(make_node(f"n{i}", capacity={"cpu": "1", "memory": "4Gi", "pods": "10"}))
        ks.add_pod(make_pod(f"e{i}", uid=f"e{i}", requests={"cpu": "1"}, node_name=f"n{i}", priority=prio))
    ks.add_node(make_node("tainted", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}],
                          capacity={"cpu": "4", "memory": "4Gi", "pods": "10"}))
    return ks


def _loop_only(ks: KubeScheduler) -> KubeScheduler:
    """``ks`` whose preemption never sees a cluster-wide lowest priority (the dry runs decide)."""
    from karpy.kubescheduler.nodeinfo import PerNode

    class NoMin(list):  # type: ignore[type-arg]
        def __iter__(self):  # min() of the kept lowest priorities sees -inf
            return iter([float("-inf")])

    class LoopOnly(PerNode):  # type: ignore[type-arg]
        def refresh(self, nodes: Any, compute: Any) -> Any:
            out = super().refresh(nodes, compute)
            self.values = NoMin(self.values)
            return out
    ks.preemption._lowest = LoopOnly()
    return ks


@pytest.mark.parametrize("priorities,preemptor,found", [
    ([0, 0, 0], 0, False), ([5, 7, 9], 5, False), ([5, 7, 9], 6, True), ([10, 10], 3, False), ([0, 10], 10, True)])
def test_no_lower_priority_pod_anywhere_gives_the_dry_runs_message(priorities, preemptor, found):
    """upstream default_preemption.go SelectVictimsOnNode: a node without a pod of lower priority
    answers "No preemption victims found for incoming pod" (UnschedulableAndUnresolvable); the
    shortcut gives each potential node that answer without the dry runs, with the same message,
    nomination and RNG draws (the candidate offset) as running them; a lower-priority pod
    anywhere takes the dry runs again."""
    outs = []
    for ks in (_preemption_cluster(priorities), _loop_only(_preemption_cluster(priorities))):
        ks.add_pod(make_pod("p", uid="p", requests={"cpu": "1"}, priority=preemptor))
        r = ks.schedule_one()
        outs.append((r.outcome, r.condition["message"], r.nominated_node_name, [v.key for v in r.victims],
                     ks.rng.random()))
    assert outs[0] == outs[1]
    if not found:
        n = len(priorities)
        assert outs[0][1] == (f"0/{n + 1} nodes are available: 1 node(s) had untolerated taint(s), "
                              f"{n} Insufficient cpu. preemption: 0/{n + 1} nodes are available: "
                              f"1 Preemption is not helpful for scheduling, {n} No preemption victims found for "
                              f"incoming pod.")
    else:
        assert outs[0][0] == "Nominated" and outs[0][3]


def test_lowest_priority_follows_a_bound_pod():
    """The kept lowest priorities follow the nodes' pods: a low-priority pod bound later makes the
    next preemptor find its victim."""
    ks = _preemption_cluster([10, 10])
    ks.add_pod(make_pod("p", uid="p", requests={"cpu": "1"}, priority=5))
    assert "No preemption victims" in ks.schedule_one().condition["message"]
    ks.add_node(make_node("n9", capacity={"cpu": "1", "memory": "4Gi", "pods": "10"}))
    ks.add_pod(make_pod("low", uid="low", requests={"cpu": "1"}, node_name="n9", priority=1))
    ks.delete_pod("default/p")
    ks.add_pod(make_pod("q", uid="q", requests={"cpu": "1"}, priority=5))
    r = ks.schedule_one()
    assert r.outcome == "Nominated" and r.nominated_node_name == "n9" and [v.key for v in r.victims] == ["default/low"]
