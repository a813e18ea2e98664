"""karpy/kubescheduler/schedule_one.py's shortcuts against the plain cycle: a filter pass that found
no feasible node is repeated for the next pod with the same Filter inputs on the same NodeInfos
(Algorithm._pass_filters_or_repeat, looked up only at recorded journal positions); cycles with no
node; selectHost over the best nodes only, and the cycle's score map.

Each test pits the shortcut against the plain pass (every Filter plugin on every node) and
includes a change that must flip the answer, so a stale entry cannot pass."""

from __future__ import annotations

import random
from typing import Any

from karpy.api.builders import make_node, make_pod, pod_affinity_term
from karpy.kubescheduler import KubeScheduler
from karpy.kubescheduler.framework import CycleState
from karpy.kubescheduler.nodeinfo import NodeInfo
from karpy.kubescheduler.podinfo import new_pod_info
from karpy.kubescheduler.schedule_one import _no_nominations
from karpy.kubescheduler.types import Code

from .conftest import FakeClock
from .test_framework_equivalence import _memo_cluster_ops, _play

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _plain(ks: KubeScheduler) -> KubeScheduler:
    """The scheduler with every filter pass run in full."""
    alg = ks.algorithm

    def full(state: Any, pod: Any, nodes: Any, num_all: int, diag: Any, tree: Any, allowed: Any) -> Any:
        return alg._pass_filters(state, pod, nodes, num_all, diag, _no_nominations)
    alg._pass_filters_or_repeat = full  # type: ignore[method-assign]
    return ks


def _recording(ks: KubeScheduler) -> tuple[KubeScheduler, list[Any], list[int]]:
    """Record every cycle's Diagnosis (node_to_status in order, rejectors) and nextStartNodeIndex,
    and count the full passes."""
    alg = ks.algorithm
    seen: list[Any] = []
    full = [0]
    find, passes = alg.find_nodes_that_fit, alg._pass_filters

    def rec(state: Any, pod: Any, nodes: Any, nominated: Any) -> Any:
        feasible, diag = find(state, pod, nodes, nominated)
        seen.append(([n.name for n in feasible],
                     [(k, st.code, tuple(st.reasons), st.plugin) for k, st in diag.node_to_status.items()],
                     sorted(diag.unschedulable_plugins), alg.next_start_node_index))
        return feasible, diag

    def count(*a: Any) -> Any:
        full[0] += 1
        return passes(*a)
    alg.find_nodes_that_fit = rec  # type: ignore[method-assign]
    alg._pass_filters = count  # type: ignore[method-assign]
    return ks, seen, full


def _with_replicas(ops: list[tuple]) -> list[tuple]:
    """Every pod of ``ops`` with two replicas (same spec and labels) added with it."""
    out: list[tuple] = []
    for op in ops:
        out.append(op)
        if op[0] == "pod":
            out += [(op[0], f"{op[1]}{r}", *op[2:]) for r in "xy"]
    return out


def test_repeated_failed_passes_match_plain_runs():
    """Random clusters (taints, selectors, affinity, spread, anti-affinity, host ports, node and
    pod churn): same placements, messages, diagnoses (statuses in visiting order, rejecting
    plugins) and nextStartNodeIndex as running every pass in full, with passes repeated."""
    repeated = 0
    for seed in range(12):
        ops = _with_replicas(_memo_cluster_ops(seed))
        fast, fast_diags, fast_full = _recording(KubeScheduler(FakeClock(), random.Random(seed)))
        plain, plain_diags, plain_full = _recording(_plain(KubeScheduler(FakeClock(), random.Random(seed))))
        assert _play(fast, ops) == _play(plain, ops), seed
        assert fast_diags == plain_diags, seed
        repeated += plain_full[0] - fast_full[0]
    assert repeated > 1000, repeated


def _cluster(n: int = 4) -> KubeScheduler:
    ks = KubeScheduler(FakeClock(), random.Random(0))
    for i in range(n):
        ks.add_node(make_node(f"n{i}", labels={HOST: f"n{i}", ZONE: f"z{i % 2}"},
                              capacity={"cpu": "2", "memory": "8Gi", "pods": "10"}))
    return ks


def _cycle(ks: KubeScheduler) -> list[tuple]:
    out = []
    while (r := ks.schedule_one()) is not None:
        out.append((r.pod_key, r.outcome, r.node_name, r.condition and r.condition["message"]))
    return out


def test_a_freed_node_is_not_answered_from_the_failed_pass():
    """Replicas that fit nowhere repeat the first one's pass; once a pod leaves a node (its
    generation changes) the next replica is filtered again and binds there."""
    def run(ks: KubeScheduler) -> tuple[list[tuple], int]:
        ks, _diags, full = _recording(ks)
        for i in range(4):
            ks.add_pod(make_pod(f"big{i}", uid=f"big{i}", node_name=f"n{i}", requests={"cpu": "1500m"}))
        for i in range(3):
            ks.add_pod(make_pod(f"r{i}", uid=f"r{i}", labels={"app": "r"}, requests={"cpu": "1"}))
        out = _cycle(ks)
        assert [o[1] for o in out] == ["Unschedulable"] * 3
        assert len({o[3] for o in out}) == 1 and "4 Insufficient cpu" in out[0][3]
        ks.delete_pod("default/big2")
        ks.clock.t += 20
        out += _cycle(ks)
        assert [o[2] for o in out[3:] if o[1] == "Bound"] == ["n2", "n2"]
        return out, full[0]
    (fast, fast_full), (plain, plain_full) = run(_cluster()), run(_plain(_cluster()))
    assert fast == plain
    assert fast_full < plain_full


def test_spread_counts_and_labels_are_part_of_the_repeated_pass():
    """Two pods with the same spec but different labels (PodTopologySpread's self match) or facing
    other domain counts never share a pass: same answers as the plain runs."""
    def run(ks: KubeScheduler) -> list[tuple]:
        tsc = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "s"}}}]
        anti = [pod_affinity_term({"app": "a"}, HOST)]
        for i in range(3):
            ks.add_pod(make_pod(f"s{i}", uid=f"s{i}", labels={"app": "s"}, node_name="n0", requests={"cpu": "100m"}))
        out = []
        for i, labels in enumerate([{"app": "s"}, {"app": "s"}, {"app": "t"}, {"app": "s"}]):
            ks.add_pod(make_pod(f"p{i}", uid=f"p{i}", labels=labels, requests={"cpu": "100m"},
                                topology_spread_constraints=tsc, node_selector={ZONE: "z0"}))
            out += _cycle(ks)
        for i in range(3):
            ks.add_pod(make_pod(f"a{i}", uid=f"a{i}", labels={"app": "a"}, requests={"cpu": "100m"},
                                pod_anti_affinity=anti, node_selector={HOST: "n1"}))
            out += _cycle(ks)
        return out
    fast, plain = run(_cluster()), run(_plain(_cluster()))
    assert fast == plain
    assert {o[1] for o in fast} == {"Bound", "Unschedulable"}


def test_existing_anti_affinity_keys_answer_as_the_label_walk():
    """InterPodAffinity's Filter looks up only the topology keys of the positive existing-anti
    counts: the same answer as upstream's walk over every node label, for counts of any sign,
    and again after AddPod changes the counts."""
    from karpy.kubescheduler.framework import CycleState
    from karpy.kubescheduler.nodeinfo import NodeInfo
    from karpy.kubescheduler.plugins import InterPodAffinity
    from karpy.kubescheduler.plugins.interpodaffinity import REASON_EXISTING_ANTI_AFFINITY, _State
    from karpy.kubescheduler.podinfo import new_pod_info
    from karpy.kubescheduler.types import Code

    rng = random.Random(7)
    plugin = InterPodAffinity()
    pod = new_pod_info(make_pod("in", uid="in", labels={"app": "a"}))
    keys = [HOST, ZONE, "rack", "tier"]
    rejected = passed = 0
    for _ in range(400):
        labels = {k: f"v{rng.randrange(3)}" for k in keys if rng.random() < 0.7}
        ni = NodeInfo.from_node(make_node("n", labels=labels))
        counts = {(rng.choice(keys), f"v{rng.randrange(3)}"): rng.choice([-1, 1, 2]) for _ in range(rng.randrange(4))}
        state = CycleState()
        st = state.data[plugin.name] = _State(dict(counts))
        for _round in range(2):
            want = any(st.existing_anti.get((k, v), 0) > 0 for k, v in ni.labels.items())
            got = plugin.filter(state, pod, ni)
            assert (got.code == Code.UNSCHEDULABLE and got.reasons == [REASON_EXISTING_ANTI_AFFINITY]) == want
            assert want or got.code == Code.SUCCESS
            rejected += want
            passed += not want
            other = new_pod_info(make_pod("o", uid="o", labels={"app": "a"},
                                          pod_anti_affinity=[pod_affinity_term({"app": "a"}, rng.choice(keys))]))
            plugin.add_pod(state, pod, other, ni)
    assert rejected > 100 and passed > 100


class _NeverEmpty(dict):  # type: ignore[type-arg]
    """A node cache that never looks empty: KubeScheduler._schedule_pod's no-node shortcut is not
    taken, the cycle builds its state and snapshot and Algorithm.schedule_pod raises."""

    def __bool__(self) -> bool:
        return True


def _queue_state(ks: KubeScheduler) -> Any:
    q = ks.queue
    return (list(q._active), list(q._backoff), list(q._error_backoff), sorted(q.unschedulable),
            sorted((k, i.attempts, i.unschedulable_count, i.consecutive_errors_count, i.timestamp, i.seq,
                    sorted(i.unschedulable_plugins)) for k, i in q.infos.items()),
            dict(ks.conditions), dict(ks.nominated))


def _no_node_run(ks: KubeScheduler) -> list[Any]:
    """Pods waiting for the first node (error backoff 1, 2, 4, 8, 10 s), then one small node
    (some bind, the rest fail on it), then none again."""
    out: list[Any] = []

    def cycles() -> None:
        while (r := ks.schedule_one()) is not None:
            out.append((r.pod_key, r.outcome, r.node_name, r.condition, r.condition_changed, r.nominated_node_name))
        out.append(_queue_state(ks))
    for i in range(6):
        ks.add_pod(make_pod(f"p{i}", uid=f"p{i}", requests={"cpu": "1"}, priority=i % 2))
    for _ in range(12):
        cycles()
        ks.clock.t += 3
    ks.add_node(make_node("n0", capacity={"cpu": "2", "pods": "10"}))
    for _ in range(4):
        cycles()
        ks.clock.t += 5
    ks.delete_node("n0")
    for i in range(6, 9):
        ks.add_pod(make_pod(f"p{i}", uid=f"p{i}", requests={"cpu": "1"}))
    for _ in range(6):
        cycles()
        ks.clock.t += 4
    return out


def test_no_node_cycles_match_the_full_cycle():
    """With no node cached, a cycle fails with "no nodes available" exactly as the full cycle
    (state, snapshot, Algorithm.schedule_pod raising NoNodesAvailable) does: same results,
    conditions, queue placement, backoff and counters, before, between and after nodes exist."""
    fast = KubeScheduler(FakeClock(), random.Random(1))
    plain = KubeScheduler(FakeClock(), random.Random(1))
    plain.node_infos = _NeverEmpty()
    got = _no_node_run(fast)
    assert got == _no_node_run(plain)
    outcomes = [o[1] for o in got if isinstance(o, tuple) and len(o) == 6 and isinstance(o[1], str)]
    assert {"Bound", "Unschedulable"} <= set(outcomes) and len(outcomes) > 30


class _EveryPosition(set):  # type: ignore[type-arg]
    """Algorithm._failed_at that holds every journal position: every pass looks its signature up
    first, as before the journal precheck."""

    def __contains__(self, pos: object) -> bool:
        return True


def test_failed_pass_lookup_only_at_recorded_positions_loses_no_repeat():
    """A pass over every node looks for a repeatable failed pass only when the change journal is
    where one was recorded (else no NodeInfo generation is what it was): the same placements,
    diagnoses and nextStartNodeIndex as looking up every pass, and not one more full pass."""
    repeats = 0
    signatures = {"fast": 0, "eager": 0}

    def counting(ks: KubeScheduler, name: str) -> KubeScheduler:
        sig = ks.framework.filter_cycle_signature

        def counted(*a: Any) -> Any:
            signatures[name] += 1
            return sig(*a)
        ks.framework.filter_cycle_signature = counted  # type: ignore[method-assign]
        return ks
    for seed in range(12):
        ops = _with_replicas(_memo_cluster_ops(seed))
        fast, fast_diags, fast_full = _recording(counting(KubeScheduler(FakeClock(), random.Random(seed)), "fast"))
        eager, eager_diags, eager_full = _recording(counting(KubeScheduler(FakeClock(), random.Random(seed)), "eager"))
        eager.algorithm._failed_at = _EveryPosition()
        assert _play(fast, ops) == _play(eager, ops), seed
        assert fast_diags == eager_diags, seed
        assert fast_full[0] == eager_full[0], seed
        repeats += len(fast_diags) - fast_full[0]
    assert repeats > 1000, repeats
    assert signatures["fast"] < signatures["eager"], signatures


# ---- selectHost and the cycle's score map --------------------------------------------------------------------------
def _plain_select_host(rng: random.Random, feasible: list[NodeInfo], scores: list[int]) -> str:
    """schedule_one.go selectHost: reservoir sampling over the max-score nodes, in node order."""
    best = max(scores)
    selected = ""
    cnt = 0
    for ni, s in zip(feasible, scores):
        if s != best:
            continue
        cnt += 1
        if cnt == 1 or rng.randrange(cnt) == 0:
            selected = ni.name
    return selected


def test_select_host_over_the_best_nodes_only_makes_the_same_choice_and_draws():
    """Algorithm.select_host (the best nodes found by list.index scans) picks the node the plain
    reservoir loop picks and leaves the random generator where the loop leaves it."""
    from karpy.kubescheduler.schedule_one import Algorithm
    nodes = [NodeInfo.from_node(make_node(f"n{i}")) for i in range(12)]
    rng = random.Random(4)
    ties = 0
    for case in range(500):
        n = rng.randrange(1, 13)
        scores = [rng.choice([0, 50, 99, 100, 100, 300]) for _ in range(n)]
        algo = Algorithm(None, random.Random(case), 0)  # type: ignore[arg-type]
        plain = random.Random(case)
        assert algo.select_host(nodes[:n], scores) == _plain_select_host(plain, nodes[:n], scores), (case, scores)
        assert algo.rng.random() == plain.random(), case
        ties += scores.count(max(scores)) > 2
    assert ties > 100


def test_schedule_result_scores_map_each_feasible_node_to_its_total():
    """ScheduleResult.scores: each feasible node's name with its own total (the names prioritize
    recorded for the cycle, in the feasible nodes' order)."""
    from karpy.kubescheduler.framework import CycleState
    ks = KubeScheduler(FakeClock(), random.Random(2))
    for i in range(6):
        ks.add_node(make_node(f"n{i}", labels={ZONE: f"z{i % 2}"}, capacity={"cpu": str(2 + i), "memory": "8Gi", "pods": "20"}))
    for j in range(5):
        ks.add_pod(make_pod(f"e{j}", uid=f"e{j}", node_name=f"n{j}", requests={"cpu": "1", "memory": "1Gi"}))
    p = ks._pod_info(make_pod("q", uid="q", requests={"cpu": "500m", "memory": "1Gi"}))
    nodes = ks._snapshot()
    state = CycleState()
    ks.framework.run_pre_filter(state, p, nodes)
    res = ks.algorithm.schedule_pod(state, p, nodes, lambda _n: [])
    feasible = [ni for ni in nodes if ni.name in res.scores]
    assert len(feasible) == 6 and list(res.scores) == [ni.name for ni in feasible]
    state2 = CycleState()
    ks.framework.run_pre_filter(state2, p, nodes)
    totals = ks.algorithm.prioritize(state2, p, feasible, nodes)
    assert list(res.scores.values()) == totals and len(set(totals)) > 2


def test_failed_pass_recorded_at_the_same_position_repeats_as_comparing_generations():
    """A failed pass over every node recorded at the current journal position is repeated without
    comparing the nodes' generations (Algorithm.trust_position): the same placements, diagnoses
    and nextStartNodeIndex, and the same full passes, as comparing them every time."""
    trusted = 0
    for seed in range(12):
        ops = _with_replicas(_memo_cluster_ops(seed))
        fast, fast_diags, fast_full = _recording(KubeScheduler(FakeClock(), random.Random(seed)))
        slow, slow_diags, slow_full = _recording(KubeScheduler(FakeClock(), random.Random(seed)))
        slow.algorithm.trust_position = False
        assert _play(fast, ops) == _play(slow, ops), seed
        assert fast_diags == slow_diags, seed
        assert fast_full[0] == slow_full[0], seed
        trusted += len(fast_diags) - fast_full[0]
    assert trusted > 1000, trusted
