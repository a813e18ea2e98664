"""Algorithm._pass_filters_or_repeat (issue #13, round 6): a filter pass that found no feasible
node is repeated for the next pod with the same Filter inputs on the same NodeInfos.

Each test pits the shortcut against the plain pass (every Filter plugin on every node) and
includes a change that must flip the answer, so a stale entry cannot pass."""

from __future__ import annotations

import random
from typing import Any

from karpy.api.builders import make_node, make_pod, pod_affinity_term
from karpy.kubescheduler import KubeScheduler
from karpy.kubescheduler.schedule_one import _no_nominations

from .conftest import FakeClock
from .test_fastpaths import _memo_cluster_ops, _play

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
