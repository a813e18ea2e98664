"""karpy/kubescheduler/filtercolumns.py (Algorithm._pass_by_columns): the filter pass answered from
per-node statuses kept across cycles, with PodTopologySpread's and InterPodAffinity's Filters as
label checks (Plugin.label_checks).

The tests pit it against the per-node loop it replaces (``Algorithm.by_columns = False``) on
random clusters large enough (over 100 nodes) that a pass stops at numFeasibleNodesToFind, and
check the label checks against each plugin's own per-node Filter."""

from __future__ import annotations

import random
from typing import Any

from karpy.api.builders import make_node, make_pod, pod_affinity_term
from karpy.kubescheduler import KubeScheduler
from karpy.kubescheduler.framework import CycleState, _filter_failure

from .conftest import FakeClock

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
_TAINTS = [[], [("dedicated", "a", "NoSchedule")]]


def _ops(seed: int, nodes: int = 130, steps: int = 220) -> list[tuple]:
    """Node adds (three zones, a few tainted, unschedulable or unlabelled), then churn: Deployment-like
    replica groups with zonal spread, hostname anti-affinity, zonal pod affinity, a node selector
    or nothing; pod deletions; node updates and deletions; a scheduling round after each step."""
    rng = random.Random(seed)
    ops: list[tuple] = []
    names = [f"n{i}" for i in range(nodes)]
    for name in names:
        ops.append(("node", name, rng.randrange(3), rng.random() < 0.05, rng.random() < 0.03,
                    rng.choice(["2", "4"]), rng.random() < 0.02))
    ops.append(("cycle",))
    pods = 0
    for step in range(steps):
        r = rng.random()
        if r < 0.04:
            ops.append(("node", rng.choice(names), rng.randrange(3), False, False, "4", False))
        elif r < 0.06 and len(names) > 100:
            ops.append(("delnode", names.pop(rng.randrange(len(names)))))
        elif r < 0.15 and pods:
            ops.append(("delpod", f"p{rng.randrange(pods)}"))
        else:
            kind = rng.randrange(6)
            group = f"g{rng.randrange(4)}"
            for _ in range(rng.randrange(1, 8)):
                ops.append(("pod", f"p{pods}", rng.choice(["500m", "1", "1500m"]), kind, group, rng.random() < 0.1))
                pods += 1
        ops.append(("cycle",))
    return ops


def _play(ks: KubeScheduler, ops: list[tuple]) -> list[tuple]:
    out = []
    for op in ops:
        if op[0] == "node":
            _, name, zone, tainted, unsched, cpu, unlabelled = op
            labels = {"tier": "a" if zone else "b"}
            if not unlabelled:
                labels[ZONE] = f"z{zone}"
            n = make_node(name, labels=labels, taints=_TAINTS[tainted], unschedulable=unsched,
                          capacity={"cpu": cpu, "memory": "16Gi", "pods": "8"})
            (ks.update_node if name in ks.nodes else ks.add_node)(n)
        elif op[0] == "delnode":
            ks.delete_node(op[1])
        elif op[0] == "delpod":
            ks.delete_pod(f"default/{op[1]}")
        elif op[0] == "pod":
            _, name, cpu, kind, group, tolerates = op
            kw: dict[str, Any] = {"labels": {"app": group}}
            if kind == 1:
                kw["topology_spread_constraints"] = [{
                    "maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": group}}}]
            elif kind == 2:
                kw["pod_anti_affinity"] = [pod_affinity_term({"app": group}, HOST)]
            elif kind == 3:
                kw["pod_affinity"] = [pod_affinity_term({"app": group}, ZONE)]
            elif kind == 4:
                kw["node_selector"] = {"tier": "a"}
                kw["topology_spread_constraints"] = [{
                    "maxSkew": 2, "topologyKey": HOST, "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": group}}}]
            if tolerates:
                kw["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "a", "effect": "NoSchedule"}]
            ks.add_pod(make_pod(name, uid=name, requests={"cpu": cpu, "memory": "1Gi"}, **kw))
        else:
            ks.clock.t += 11
            while (r := ks.schedule_one()) is not None:
                out.append((r.pod_key, r.outcome, r.node_name, r.condition and r.condition["message"]))
    return out


def _recording(ks: KubeScheduler) -> tuple[KubeScheduler, list[Any], list[int]]:
    """Every filter pass's feasible nodes, Diagnosis (statuses in visiting order with code, reasons
    and plugin; rejecting plugins) and nextStartNodeIndex, and how many passes went by columns."""
    alg = ks.algorithm
    seen: list[Any] = []
    by_columns = [0]
    find, columns = alg.find_nodes_that_fit, alg._pass_by_columns

    def rec(state: Any, pod: Any, nodes: Any, nominated: Any) -> Any:
        feasible, diag = find(state, pod, nodes, nominated)
        seen.append(([n.name for n in feasible],
                     [(k, st.code, tuple(st.reasons), st.plugin) for k, st in diag.node_to_status.items()],
                     sorted(diag.unschedulable_plugins), alg.next_start_node_index, len(nodes)))
        return feasible, diag

    def counted(*a: Any) -> Any:
        found = columns(*a)
        by_columns[0] += found is not None
        return found
    alg.find_nodes_that_fit = rec  # type: ignore[method-assign]
    alg._pass_by_columns = counted  # type: ignore[method-assign]
    return ks, seen, by_columns


def _loop(ks: KubeScheduler) -> KubeScheduler:
    ks.algorithm.by_columns = False
    return ks


def test_column_passes_match_the_per_node_loop():
    """Same placements, messages, feasible lists, diagnoses and nextStartNodeIndex as the loop,
    over clusters of 100-130 nodes (so passes stop at numFeasibleNodesToFind and start all around
    the tree), with node adds, updates and deletes between cycles."""
    columns = 0
    early = 0
    for seed in range(4):
        ops = _ops(seed)
        fast, fast_seen, fast_columns = _recording(KubeScheduler(FakeClock(), random.Random(seed)))
        plain, plain_seen, plain_columns = _recording(_loop(KubeScheduler(FakeClock(), random.Random(seed))))
        assert _play(fast, ops) == _play(plain, ops), seed
        assert fast_seen == plain_seen, seed
        assert plain_columns[0] == 0
        columns += fast_columns[0]
        early += sum(1 for feasible, statuses, _r, _s, n in fast_seen if len(feasible) + len(statuses) < n)
    assert columns > 1000, columns
    assert early > 100, early  # passes that stopped before visiting every node


def _checked_cycles(seed: int) -> list[tuple[Any, Any, Any, Any]]:
    """(plugin, cycle state after PreFilter, pod, nodes) of the non-node-local Filters, for pods of
    every kind probing a churned cluster."""
    ks = KubeScheduler(FakeClock(), random.Random(seed))
    _play(ks, _ops(seed, nodes=40, steps=60))
    rng = random.Random(seed)
    out = []
    fwk = ks.framework
    for i in range(30):
        kind, group = rng.randrange(6), f"g{rng.randrange(4)}"
        _play(ks, [("pod", f"probe{i}", "1", kind, group, False)])  # queued only: no scheduling round
        pod = ks.pod_infos[f"default/probe{i}"]
        nodes = ks._snapshot()
        state = CycleState()
        st, _allowed, _rejectors = fwk.run_pre_filter(state, pod, nodes)
        if not st.is_success():
            continue
        for p in fwk._filter_plan(state, pod).rest:
            out.append((p, state, pod, nodes))
    return out


def test_label_checks_give_each_node_its_filter_status():
    """Per node: the first failing label check's status, or Success, is what the plugin's own
    Filter returns once RunFilterPlugins has set its plugin (code, reasons, plugin)."""
    compared = 0
    failed = 0
    plugins = set()
    for seed in range(6):
        for p, state, pod, nodes in _checked_cycles(seed):
            checks = p.label_checks(state, pod)
            if checks is None:
                continue
            plugins.add(p.name)
            filt = p.node_filter(state, pod)
            for ni in nodes:
                want = filt(ni)
                if want.code:
                    want = _filter_failure(want, p.name)
                got = None
                for c in checks:
                    got = c.statuses.get(ni.labels.get(c.key), c.default)
                    if got is not None:
                        break
                if got is None:
                    assert not want.code, (p.name, ni.name, want)
                else:
                    assert (got.code, got.reasons, got.plugin) == (want.code, want.reasons, want.plugin), (p.name, ni.name)
                    failed += 1
                compared += 1
    assert {"PodTopologySpread", "InterPodAffinity"} <= plugins
    assert compared > 2000 and failed > 200, (compared, failed)


def test_a_filter_without_label_checks_goes_back_to_the_loop():
    """A rest plugin answering None (two required affinity terms) sends the pass to the loop."""
    ks = KubeScheduler(FakeClock(), random.Random(0))
    for i in range(110):
        ks.add_node(make_node(f"n{i}", labels={ZONE: f"z{i % 3}", "rack": f"r{i % 5}"},
                              capacity={"cpu": "4", "memory": "16Gi", "pods": "8"}))
    ks.add_pod(make_pod("seed", uid="seed", labels={"app": "db"}, node_name="n7",
                        requests={"cpu": "1", "memory": "1Gi"}))
    ks.add_pod(make_pod("web", uid="web", labels={"app": "web"}, requests={"cpu": "1", "memory": "1Gi"},
                        pod_affinity=[pod_affinity_term({"app": "db"}, ZONE), pod_affinity_term({"app": "db"}, "rack")]))
    _, seen, by_columns = _recording(ks)
    ks.clock.t += 11
    r = ks.schedule_one()
    assert r is not None and r.outcome == "Bound"
    assert by_columns[0] == 0
    # zone z1 (n7) and rack r2 (n7): the nodes with i % 15 == 7
    assert ks.node_infos[r.node_name].labels[ZONE] == "z1" and ks.node_infos[r.node_name].labels["rack"] == "r2"
    assert seen
