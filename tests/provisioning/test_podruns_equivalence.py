"""karpy/provisioning/podruns.py: a run of alike pods added in one step to the existing node or
in-flight NodeClaim that took the pod before them (Scheduler.take_runs) against the plain Solve,
which tries every pod on the existing nodes, then the in-flight claims in order (scheduler.go
Solve / addToInflightNode), one pod at a time.

The generated Solves mix what makes a run stop or never start: replicas that differ in a
toleration or a node selector, topology spread and anti-affinity (owned and inverse groups), host
ports, preferred affinity (relaxation), NodePool limits and weights, minValues, DaemonSets (several
overhead groups), tainted existing nodes with room, several in-flight claims whose order by pod
count changes. Every Solve must come out the same: where each pod went and in what order, each
claim's options, requirements and requests (names in order), the errors, each pod's try records."""

from __future__ import annotations

import random
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import karpy
from karpy.api.builders import (make_daemonset, make_node, make_nodepool, make_pod, pod_affinity_term,
                                requirement, topology_spread)
from karpy.cloudprovider import fake
from karpy.provisioning import podruns
from karpy.provisioning.poddata import PodData
from karpy.provisioning.queue import Queue, sort_key
from karpy.provisioning.scheduler import Scheduler
from karpy.provisioning.topology import Topology
from karpy.scheduling.labels import (CORE_WELL_KNOWN_LABELS, LABEL_HOSTNAME, LABEL_INSTANCE_TYPE_STABLE,
                                     LABEL_NODEPOOL, LABEL_ZONE)
from karpy.state.cluster import ClusterState

WELL_KNOWN = CORE_WELL_KNOWN_LABELS | fake.FakeCloudProvider().well_known_labels()
ZONES = ("test-zone-1", "test-zone-2", "test-zone-3")
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _types(r: random.Random) -> dict[str, list[Any]]:
    def pool(prefix: str, price: float) -> list[Any]:
        out = []
        for i in range(r.randint(6, 14)):
            zones = ZONES if i % 3 == 0 else ZONES[:2]
            out.append(fake.new_instance_type(
                f"{prefix}-{i}", resources={"cpu": str(i + 1), "memory": f"{(i % 6 + 1) * 2}Gi",
                                            "pods": str(r.choice([6, 30, 110]))},
                offerings=[fake._offering(ct, z, price + i * 0.1) for z in zones for ct in ("on-demand", "spot")]))
        return out
    return {"a": pool("a", 1.0), "b": pool("b", 1.2)}


def _app_kwargs(r: random.Random, app: str) -> dict[str, Any]:
    kind = r.choice(("plain", "plain", "plain", "plain", "zone-spread", "host-spread", "anti", "ports",
                     "selector", "preferred", "tolerates"))
    kw: dict[str, Any] = {}
    if kind == "zone-spread":
        kw["topology_spread_constraints"] = [topology_spread(LABEL_ZONE, {"app": app}, max_skew=1)]
    elif kind == "host-spread":
        kw["topology_spread_constraints"] = [topology_spread(LABEL_HOSTNAME, {"app": app}, max_skew=3)]
    elif kind == "anti":  # an inverse group: the pods of the app it names are not inert
        kw["pod_anti_affinity"] = [pod_affinity_term({"app": r.choice("abcdef".replace(app, ""))}, LABEL_HOSTNAME)]
    elif kind == "ports":
        kw["host_ports"] = [8080]
    elif kind == "selector":
        kw["node_selector"] = {LABEL_ZONE: r.choice(ZONES)}
    elif kind == "preferred":
        kw["node_preferences"] = [(LABEL_ZONE, "In", [r.choice(["test-zone-3", "test-zone-9"])])]  # (9: relaxed)
    elif kind == "tolerates":
        kw["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    return kw


def _pods(r: random.Random) -> list[Any]:
    """Deployment-shaped runs: each app's replicas alike, some replicas differing in one field."""
    pods = []
    n = 0
    for app in "abcdef":
        kw = _app_kwargs(r, app)
        requests = {"cpu": r.choice(["100m", "250m", "500m", "1", "1", "64"]),
                    "memory": r.choice(["128Mi", "512Mi", "2Gi"])}
        created = T0 + timedelta(seconds=r.randint(0, 3))
        for _ in range(r.randint(5, 60)):
            extra = dict(kw)
            if r.random() < 0.06:  # one replica differs: the run must stop there
                extra["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
            if r.random() < 0.04:
                extra["node_selector"] = {LABEL_ZONE: ZONES[0]}
            pods.append(make_pod(f"{app}-{n:03d}", uid=f"{app}-{n:03d}", labels={"app": app}, requests=requests,
                                 creation_timestamp=created, **extra))
            n += 1
    return pods


def _cluster(r: random.Random) -> ClusterState:
    nodes = [make_node(f"n-{i:02d}", labels={LABEL_ZONE: ZONES[i % 3], LABEL_NODEPOOL: "a"},
                       allocatable={"cpu": str(r.choice([1, 2, 4, 8])), "memory": "8Gi", "pods": "20"},
                       taints=[("dedicated", "true", "NoSchedule")] if i % 2 else ())
             for i in range(r.randint(0, 8))]
    running = [make_pod(f"run-{i:02d}", uid=f"run-{i:02d}", labels={"app": r.choice("abcdef")},
                        requests={"cpu": "100m"}, node_name=r.choice(nodes).metadata.name, phase="Running",
                        unschedulable=False)
               for i in range(4 if nodes else 0)]
    return ClusterState.from_objects(nodes=nodes, pods=running)


def _solve(seed: int) -> tuple[Any, ...]:
    r = random.Random(seed)
    zones = requirement((LABEL_ZONE, "In", list(ZONES)))
    a_reqs: list[Any] = [zones]
    if seed % 4 == 1:
        a_reqs.append((LABEL_INSTANCE_TYPE_STABLE, "Exists", [], 3))  # minValues
    pools = [make_nodepool("a", weight=10, requirements=a_reqs,
                           limits={"cpu": str(r.choice([8, 30, 200]))} if seed % 3 == 0 or seed % 4 == 3 else None),
             make_nodepool("b", requirements=[zones],  # (PreferNoSchedule: pods placed once relaxed)
                           taints=[("dedicated", "true", "PreferNoSchedule")] if seed % 4 == 3 else ())]
    pods = _pods(r)
    daemons = []
    if seed % 2:
        daemons.append(make_pod("ds-0", uid="ds-0", requests={"cpu": "100m", "memory": "128Mi"}))
    if seed % 5 == 2:  # a second overhead group: a DaemonSet on some types only
        daemons.append(make_pod("ds-1", uid="ds-1", requests={"cpu": "300m"},
                                node_requirements=[(LABEL_INSTANCE_TYPE_STABLE, "In", ["a-1", "a-2", "a-3", "b-2"])]))
    types = _types(r)
    cluster = _cluster(r)
    topology = Topology(cluster, cluster.active_nodes(), pools, types, pods, "Respect", WELL_KNOWN)
    s = Scheduler(pools, cluster, cluster.active_nodes(), topology, types, daemons, well_known=WELL_KNOWN)
    results = s.solve(pods)
    claims = [(nc.hostname, nc.nodepool_name, [p.key for p in nc.pods],
               tuple(it.name for it in nc.instance_type_options), str(nc.requirements), list(nc.requests.items()))
              for nc in results.new_nodeclaims]
    existing = [(en.name, [p.key for p in en.pods]) for en in results.existing_nodes]
    attempts = {p.key: s.attempt_record(p.key) for p in pods}
    return claims, existing, dict(results.pod_errors), attempts, [nc.hostname for nc in s.new_nodeclaims]


def _count_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """Per run, as it ends: (``claim`` or ``node``, the pods placed, the alike pods read)."""
    runs: list[tuple[str, int, int]] = []
    taken_by, onto = podruns.Run.taken_by, podruns.Run.onto

    def counting(self: podruns.Run, claim: Any, reqs: Any) -> Any:
        out = taken_by(self, claim, reqs)
        runs.append(("claim", out[0], len(self.pods)))
        return out

    def counting_nodes(self: podruns.Run, node: Any, reqs: Any) -> Any:
        out = onto(self, node, reqs)
        runs.append(("node", len(out), len(self.pods)))
        return out

    monkeypatch.setattr(podruns.Run, "taken_by", counting)
    monkeypatch.setattr(podruns.Run, "onto", counting_nodes)
    return runs


@pytest.mark.parametrize("seed", range(20))
def test_runs_solve_as_the_plain_one_pod_at_a_time_solve(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = _count_runs(monkeypatch)
    fast = _solve(seed)
    monkeypatch.setattr(Scheduler, "take_runs", False)
    taken.clear()
    assert fast == _solve(seed)
    assert not taken


def test_the_generated_solves_cover_what_ends_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Across the seeds runs are taken whole, cut by a claim or node filling up, and refused
    outright, onto in-flight claims (in most Solves) and existing nodes; pods are placed on
    existing nodes, on several claims, and fail."""
    runs = _count_runs(monkeypatch)
    outcomes: set[str] = set()
    solves_with_runs = 0
    for seed in range(20):
        before = len(runs)
        claims, existing, errors, _, _ = _solve(seed)
        solves_with_runs += any(target == "claim" and k for target, k, _ in runs[before:])
        outcomes.update(["existing"] if any(p for _, p in existing) else [])
        outcomes.update(["several claims"] if len(claims) > 1 else [])
        outcomes.update(["errors"] if errors else [])
    ends = {(target, "none" if not k else "whole" if k == known else "cut") for target, k, known in runs}
    assert ends == {(t, e) for t in ("claim", "node") for e in ("none", "whole", "cut")}
    assert solves_with_runs >= 12
    assert outcomes == {"existing", "several claims", "errors"}


def test_a_run_stops_where_the_claim_would_move_in_the_inflight_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Claims are tried fewest pods first: a claim that would pass the next one's pod count takes
    no more of the run than keeps it in place (the next pod tries the other claim first). A 15-cpu
    pod opens claim A; three 5.5-cpu pods fill claim B (the last as a run of one); the first
    small pod goes to A (2 pods), whose run may add one more before A would pass B (3 pods)."""
    its = fake.instance_types(20)
    pool = make_nodepool("default")

    def pods(app: str, cpu: str, count: int) -> list[Any]:
        return [make_pod(f"{app}-{i:02d}", uid=f"{app}-{i:02d}", labels={"app": app}, requests={"cpu": cpu},
                         creation_timestamp=T0) for i in range(count)]

    workload = pods("y", "15", 1) + pods("w", "5500m", 3) + pods("z", "100m", 30)
    runs = _count_runs(monkeypatch)
    results = {}
    for take in (True, False):
        cluster = ClusterState.from_objects()
        topology = Topology(cluster, [], [pool], {"default": its}, workload, "Respect", WELL_KNOWN)
        s = Scheduler([pool], cluster, [], topology, {"default": its}, [], well_known=WELL_KNOWN)
        s.take_runs = take
        res = s.solve(workload)
        results[take] = [(nc.hostname, [p.key for p in nc.pods]) for nc in res.new_nodeclaims]
    assert results[True] == results[False]
    # w-02 (the run ended), z-01 (cut to keep A in place)
    assert [r for r in runs if r[0] == "claim"][:2] == [("claim", 1, 1), ("claim", 1, 1)]
    a, b = (pods for _, pods in results[True])
    assert a[:4] == ["default/y-00", "default/z-00", "default/z-01", "default/z-02"]
    assert b[:4] == ["default/w-00", "default/w-01", "default/w-02", "default/z-03"]


class _Inert:
    def inert(self, pod: Any) -> bool:
        return True


@pytest.mark.parametrize("length", [0, 1, 2, 3, 5, 8, 13, 40])
def test_a_claim_takes_the_longest_prefix_whose_total_keeps_an_option(length: int) -> None:
    """Run.taken_by against every room a claim may have (0 to more than the run): the count is
    the largest whose total keeps an option, the total and options are that count's, and the
    filter is asked O(log n) times, never for more pods than the run has."""
    pods = [make_pod(f"p-{i}", uid=f"p-{i}", requests={"cpu": "1"}) for i in range(length)]
    data = {id(p): PodData(p, False) for p in pods}
    first = PodData(make_pod("p", uid="p", requests={"cpu": "1"}), False)

    def expected(n: int) -> dict[str, int]:  # (names in order: the claim's, then the pod's)
        return {"cpu": 500 + first.requests["cpu"] * n, "memory": 7, "pods": first.requests["pods"] * n}

    for room in range(length + 3):
        asked: list[int] = []

        class Claim:
            requests = {"cpu": 500, "memory": 7}

            def options_at(self, reqs: Any, d: PodData, total: dict[str, int]) -> Any:
                n = (total["cpu"] - 500) // first.requests["cpu"]
                assert d is first and total == expected(n) and 1 <= n <= length
                asked.append(n)
                return ([n], frozenset(), n) if n <= room else None

        count, total, options = podruns.Run(iter(pods), data, first, _Inert(), None).taken_by(Claim(), None)
        assert count == min(room, length)
        if count:
            assert list(total.items()) == list(expected(count).items())
            assert total == expected(count) and options == ([count], frozenset(), count)
        else:
            assert options is None
        assert len(asked) <= 2 * max(1, length).bit_length() + 1


def test_a_run_ends_at_the_first_pod_not_alike() -> None:
    base = {"requests": {"cpu": "1"}, "labels": {"app": "a"}}
    pods = [make_pod("p-0", uid="p-0", **base), make_pod("p-1", uid="p-1", **base),
            make_pod("p-2", uid="p-2", requests={"cpu": "1"}, tolerations=[{"key": "k", "operator": "Exists"}]),
            make_pod("p-3", uid="p-3", **base)]
    data = {id(p): PodData(p, False) for p in pods}
    first = PodData(make_pod("p", uid="p", **base), False)
    run = podruns.Run(iter(pods), data, first, _Inert(), None)

    class Claim:
        requests: dict[str, int] = {}

        def options_at(self, reqs: Any, d: PodData, total: dict[str, int]) -> Any:
            return ([], frozenset(), None)

    assert run.taken_by(Claim(), None)[0] == 2 and [p.metadata.name for p in run.pods] == ["p-0", "p-1"]


def test_upcoming_is_what_pop_returns_until_a_cycle_without_progress() -> None:
    pods = [make_pod(f"p-{i}", uid=f"p-{i}", requests={"cpu": "1"}, creation_timestamp=T0 + timedelta(seconds=i))
            for i in range(4)]
    q = Queue(pods, {id(p): sort_key(p, {"cpu": 1000}) for p in pods})
    assert list(q.upcoming()) == pods
    first = q.pop()
    q.push(first)  # pushed when 4 were queued: pop stops when it is at the head of 4 again
    assert [p.metadata.name for p in q.upcoming()] == ["p-1", "p-2", "p-3", "p-0"]
    for _ in range(3):
        q.pop()
    assert list(q.upcoming()) == [first]
    q.push(q.pop())
    assert list(q.upcoming()) == [] and q.pop() is None


def test_a_day_with_disruption_writes_the_same_document_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """The consolidation simulations take the runs too: a few hours of a scaled workload with the
    disruption controller on write the same document with runs and without."""
    docs = [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
             "spec": {"template": {"spec": {
                 "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                 "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                                   "values": ["c7i", "m7i", "c8i", "m8i"]}]}}}}]
    for i in range(3):
        docs.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"app{i}"},
                     "spec": {"replicas": 40, "selector": {"matchLabels": {"app": f"app{i}"}},
                              "template": {"metadata": {"labels": {"app": f"app{i}"}},
                                           "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                                               "requests": {"cpu": f"{250 + 250 * i}m", "memory": "512Mi"}}}]}}}})
    events = [f"{k * 20}m scale deployment/app{k % 3} {10 if k % 2 else 60}" for k in range(1, 12)]
    run = dict(prices="2026-07-20", until="4h", events=events, disruption=True)
    taken = _count_runs(monkeypatch)
    fast = karpy.simulate(docs, **run).to_json()
    assert sum(k for _, k, _ in taken) > 100
    monkeypatch.setattr(Scheduler, "take_runs", False)
    assert fast == karpy.simulate(docs, **run).to_json()


def test_a_plan_draining_every_node_onto_the_others_is_the_same_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """karpy plan's drift moves each node's replicas onto the other nodes' room: runs onto
    existing nodes (and the replacements) give the same plan document."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plan"))
    from dumps import EC2NODECLASS, cluster_dump, deployment, dump_text, nodepool

    design = [EC2NODECLASS, nodepool(sizes=["4xlarge"], budgets=[{"nodes": "20%"}]),
              deployment("web", 200, "700m", "1Gi", spread=False)]
    change = nodepool(sizes=["4xlarge"], families=["c8i", "m8i", "r8i"], budgets=[{"nodes": "20%"}])
    taken = _count_runs(monkeypatch)
    with tempfile.TemporaryDirectory(prefix="podruns-") as tmp:
        path = Path(tmp) / "cluster.yaml"
        path.write_text(dump_text(cluster_dump(design, prices="2026-07-20")))
        fast = karpy.plan(path, apply=[change], prices="2026-07-20", until="2h").to_json()
        assert sum(k for target, k, _ in taken if target == "node") > 50
        monkeypatch.setattr(Scheduler, "take_runs", False)
        assert fast == karpy.plan(path, apply=[change], prices="2026-07-20", until="2h").to_json()
