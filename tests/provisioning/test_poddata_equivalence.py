"""karpy/provisioning/poddata.py's SpecMemo: PodData's spec-derived values are computed once per
pod spec object in a Solve.

Upstream's NewPodData computes them for every pod; these tests compare the memo's PodData with the
plain computation (no memo) for pods sharing one spec, including pods whose status holds an
in-place resize (their requests depend on the status, so the memo must not serve them)."""

from __future__ import annotations

from typing import Any

import pytest

from karpy.api.pod import Pod
from karpy.provisioning.scheduler import PodData, SpecMemo

SPEC = {
    "containers": [{"name": "c", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}},
                    "ports": [{"containerPort": 80, "hostPort": 8080}]}],
    "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "3"}}}],
    "overhead": {"cpu": "100m"},
    "nodeSelector": {"topology.kubernetes.io/zone": "us-east-1a"},
    "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}]}}]}},
}

STATUSES: dict[str, dict[str, Any]] = {
    "pending": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]},
    # upstream-shaped in-place resize: allocatedResources above the spec's requests
    "resized": {"containerStatuses": [{"name": "c", "allocatedResources": {"cpu": "6", "memory": "2Gi"}}]},
    "resize-pending": {"conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]},
    "none": {},
}

FIELDS = ("key", "requests", "requests_key", "requirements", "strict_requirements", "host_ports", "has_dra", "sort_key",
          "has_volumes")


def _pods(order: list[str]) -> list[Pod]:
    spec = Pod.model_validate({"metadata": {"name": "x"}, "spec": SPEC}).spec
    return [Pod.model_validate({"metadata": {"name": f"p{i}", "namespace": "ns"}, "status": STATUSES[s]})
            .model_copy(update={"spec": spec}) for i, s in enumerate(order)]


def _view(d: PodData) -> dict[str, Any]:
    out = {f: getattr(d, f) for f in FIELDS}
    out["requirements"] = repr(out["requirements"])
    out["strict_requirements"] = repr(out["strict_requirements"])
    return out


@pytest.mark.parametrize("ignore_preferences", [False, True])
@pytest.mark.parametrize("order", [["pending", "resized", "none", "resize-pending", "pending"],
                                   ["resized", "pending", "resize-pending", "none"]])
def test_memo_matches_the_plain_pod_data(order: list[str], ignore_preferences: bool) -> None:
    pods = _pods(order)
    assert len({id(p.spec) for p in pods}) == 1  # one shared spec, as a template's pods have
    memo = SpecMemo()
    for pod in pods:
        assert _view(PodData(pod, ignore_preferences, {}, memo)) == _view(PodData(pod, ignore_preferences, {}))
    by_status = {s: PodData(p, ignore_preferences, None, memo).requests for s, p in zip(order, pods)}
    # the resize raises the requests; the others are the spec's (2 + 0.1 overhead; init 3 > 2)
    assert by_status["resized"]["cpu"] == 6_100_000_000
    assert by_status["pending"]["cpu"] == 3_100_000_000


def test_memo_keeps_its_spec_alive_and_tells_specs_apart() -> None:
    memo = SpecMemo()
    first = _pods(["pending"])[0]
    a = PodData(first, False, None, memo)
    other_spec = first.spec.model_copy(update={"node_selector": {}})
    second = first.model_copy(update={"spec": other_spec})
    b = PodData(second, False, None, memo)
    assert repr(a.requirements) != repr(b.requirements)
    assert _view(b) == _view(PodData(second, False))
    del first, a  # the memo still holds the first spec: its id cannot be reused by a new spec
    third = second.model_copy(update={"spec": other_spec.model_copy(update={"node_selector": {"k": "v"}})})
    assert _view(PodData(third, False, None, memo)) == _view(PodData(third, False))


def test_a_retried_pod_keeps_the_data_a_fresh_build_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scheduler.solve keeps a failed pod's PodData for its retry (upstream's updateCachedPodData
    rebuilds it): on every try, the data handed to _try_schedule equals a fresh _pod_data of the
    pod, also after a failed try relaxed preferences on a copy of it."""
    import random

    from karpy.api.builders import make_nodepool, make_pod, pod_affinity_term, topology_spread
    from karpy.cloudprovider import fake
    from karpy.provisioning.scheduler import Scheduler
    from karpy.state.cluster import ClusterState
    from karpy.provisioning.topology import Topology
    from karpy.scheduling.labels import LABEL_HOSTNAME, LABEL_ZONE

    from tests.provisioning.test_scanskips_topology_misses import WELL_KNOWN

    r = random.Random(7)
    pods = []
    for i in range(60):
        app = r.choice("xyz")
        kw: dict[str, Any] = {}
        if r.random() < 0.5:  # waits for a pod of role ``app`` (smaller: placed later in the queue's order)
            kw["pod_affinity"] = [pod_affinity_term({"role": app}, LABEL_ZONE)]
            kw["pod_anti_affinity_preferences"] = [(1, pod_affinity_term({"app": app}, LABEL_HOSTNAME))]
            kw["topology_spread_constraints"] = [topology_spread(LABEL_HOSTNAME, {"app": app},
                                                                 when_unsatisfiable="ScheduleAnyway")]
            labels = {"app": app}
            cpu = "2"
        else:
            labels = {"role": app}
            cpu = r.choice(["100m", "500m"])
        pods.append(make_pod(f"p-{i:02d}", uid=f"p-{i:02d}", labels=labels, requests={"cpu": cpu}, **kw))
    pool = make_nodepool("default")
    its = fake.instance_types(10)
    cluster = ClusterState.from_objects(nodes=[], pods=[])
    topology = Topology(cluster, [], [pool], {"default": its}, pods, "Respect", WELL_KNOWN)
    s = Scheduler([pool], cluster, [], topology, {"default": its}, [], well_known=WELL_KNOWN)
    seen: dict[str, int] = {}
    relaxed_before: set[str] = set()
    counts = {"retries": 0, "after_relaxing": 0}
    orig = Scheduler._try_schedule

    def try_schedule(self: Scheduler, pod: Any, data: PodData) -> Any:
        fresh = self._pod_data(pod)
        assert data.pod is pod and _view(data) == _view(fresh)
        assert (data.volume_requirements, data.volumes) == (fresh.volume_requirements, fresh.volumes)
        if pod.key in seen:
            counts["retries"] += 1
            counts["after_relaxing"] += pod.key in relaxed_before
        seen[pod.key] = seen.get(pod.key, 0) + 1
        out = orig(self, pod, data)
        if self.attempts and self._attempt_log[self.attempts[pod.key] + 2] > 1:
            relaxed_before.add(pod.key)
        return out

    monkeypatch.setattr(Scheduler, "_try_schedule", try_schedule)
    s.solve(pods)
    assert counts["retries"] > 0 and counts["after_relaxing"] > 0


def test_requests_read_status_finds_a_resize_pending_condition_among_others() -> None:
    """requests_read_status (conditions compared in C) against the per-condition test."""
    from karpy.scheduling.resources import requests_read_status

    more = dict(STATUSES)
    more["pending-then-resize"] = {"conditions": [{"type": "PodScheduled", "status": "False"},
                                                  {"type": "PodResizePending", "status": "True"}]}
    more["two-others"] = {"conditions": [{"type": "PodScheduled", "status": "False"}, {"type": "Ready", "status": "False"}]}
    got = {}
    for name, status in more.items():
        pod = Pod.model_validate({"metadata": {"name": name}, "spec": SPEC, "status": status})
        s = pod.status
        plain = bool(s.container_statuses or s.init_container_statuses
                     or any(c.type == "PodResizePending" for c in s.conditions or ()))
        got[name] = requests_read_status(pod)
        assert got[name] == plain
    assert got == {"pending": False, "resized": True, "resize-pending": True, "none": False,
                   "pending-then-resize": True, "two-others": False}


def test_a_memo_kept_across_solves_serves_what_a_fresh_one_computes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Provisioner's SchedulerCache keeps one SpecMemo for every Scheduler it serves: a pod
    solved again in a later pass (or consolidation simulation) gets the data a fresh build gives,
    also once its spec was replaced by a changed copy, and when the memo is full and starts over."""
    from karpy.api.builders import make_nodepool, make_pod
    from karpy.cloudprovider import fake
    from karpy.provisioning.scheduler import Scheduler
    from karpy.provisioning.schedulercache import SchedulerCache
    from karpy.provisioning.topology import Topology
    from karpy.state.cluster import ClusterState

    from tests.provisioning.test_scanskips_topology_misses import WELL_KNOWN

    monkeypatch.setattr(SpecMemo, "LIMIT", 5)
    cache = SchedulerCache()
    pool = make_nodepool("default")
    its = {"default": fake.instance_types(6)}
    pods = [make_pod(f"p-{i}", uid=f"p-{i}", requests={"cpu": f"{100 * (i % 3 + 1)}m"}) for i in range(8)]
    served: list[int] = []
    for rnd in range(3):
        if rnd == 2:  # a pod's spec replaced by a changed copy (an update, never an in-place change)
            pods[0] = pods[0].model_copy(update={"spec": pods[0].spec.model_copy(update={"node_selector": {"k": "v"}})})
        cluster = ClusterState.from_objects()
        topology = Topology(cluster, [], [pool], its, pods, "Respect", WELL_KNOWN)
        s = Scheduler([pool], cluster, [], topology, its, [], well_known=WELL_KNOWN, cache=cache)
        assert s._specs is cache.specs
        for p in pods:
            assert _view(s._pod_data(p)) == _view(PodData(p, False))
        served.append(len(cache.specs._by_spec))
    assert served[0] == 3 and max(served) <= 5  # (8 specs seen: the memo started over)


def test_a_status_seen_plain_is_not_asked_again_and_a_new_status_is() -> None:
    """SpecMemo asks requests_read_status once per status object: a pod revised into a new status
    holding a resize (as karpy.sim.pods._revised makes every update) gets the resized requests,
    though the same spec and the pod's earlier status were served from the memo."""
    from karpy.api.pod import PodStatus

    memo = SpecMemo()
    first = _pods(["pending"])[0]
    assert PodData(first, False, None, memo).requests["cpu"] == 3_100_000_000
    assert memo._plain.get(id(first.status)) is first.status
    resized = first.model_copy(update={"status": PodStatus.model_validate(STATUSES["resized"])})
    assert PodData(resized, False, None, memo).requests["cpu"] == 6_100_000_000
    assert id(resized.status) not in memo._plain
    again = PodData(first, False, None, memo)
    assert _view(again) == _view(PodData(first, False))


def test_the_status_memo_matches_asking_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same PodData with SpecMemo.trust_status on and off, each pod seen twice, with a memo
    small enough to start over (LIMIT 2)."""
    monkeypatch.setattr(SpecMemo, "LIMIT", 2)
    pods = _pods(["pending", "resized", "none", "resize-pending", "pending", "resized"]) * 2
    trusted, asked = SpecMemo(), SpecMemo()
    for pod in pods:
        a = _view(PodData(pod, False, {}, trusted))
        monkeypatch.setattr(SpecMemo, "trust_status", False)
        b = _view(PodData(pod, False, {}, asked))
        monkeypatch.setattr(SpecMemo, "trust_status", True)
        assert a == b == _view(PodData(pod, False, {}))
    assert 1 <= len(trusted._plain) <= 2 and not asked._plain


def test_a_pod_kept_by_the_memo_is_asked_again_when_a_part_is_replaced_and_goes_when_it_does() -> None:
    """SpecMemo.of_pod keeps a pod's key, spec-derived values and queue sort key while the pod
    lives and its metadata, spec and status are the very objects seen: a part replaced on the same
    pod object (a new status with a resize, a new creation time) gets a fresh answer, and the
    entries go when their pods do (memory bounded by the live pods)."""
    import gc
    from datetime import datetime, timezone

    from karpy.api.pod import PodStatus

    memo = SpecMemo()
    pods = _pods(["pending", "none"])
    for p in pods:
        assert _view(PodData(p, False, None, memo)) == _view(PodData(p, False))
    assert len(memo._by_pod) == 2
    pod = pods[0]
    pod.status = PodStatus.model_validate(STATUSES["resized"])
    resized = PodData(pod, False, None, memo)
    assert resized.requests["cpu"] == 6_100_000_000 and _view(resized) == _view(PodData(pod, False))
    pod.metadata = pod.metadata.model_copy(update={"creation_timestamp": datetime(2026, 1, 1, tzinfo=timezone.utc)})
    assert PodData(pod, False, None, memo).sort_key == PodData(pod, False).sort_key
    assert PodData(pod, False, None, memo).sort_key[2].year == 2026
    del pods, pod, resized, p
    gc.collect()
    assert memo._by_pod == {}


def test_likeness_is_equal_for_alike_pods_and_never_given_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """SpecMemo.likeness (what podruns.alike compares): pods of one template, bound (each with its
    own spec copy), are alike; a toleration, a request or a requirement more is not; a number is
    never given to a second value, also after the full table starts over."""
    memo = SpecMemo()
    pods = _pods(["pending", "none"])
    bound = [p.model_copy(update={"spec": p.spec.model_copy(update={"node_name": f"n{i}"})})
             for i, p in enumerate(pods)]
    like = [PodData(p, False, None, memo).likeness for p in pods + bound]
    assert len(set(like)) == 1 and like[0] is not None
    variants = [{"tolerations": [{"key": "k", "operator": "Exists"}]}, {"nodeSelector": {"k": "v"}},
                {"overhead": {"cpu": "200m"}}]
    others = [PodData(Pod.model_validate({"metadata": {"name": "o", "namespace": "ns"}, "spec": {**SPEC, **v}}),
                      False, None, memo).likeness for v in variants]
    assert len({like[0], *others}) == 4
    monkeypatch.setattr(SpecMemo, "LIMIT", 2)
    given = [memo.likeness((i,)) for i in range(6)]
    assert len(set(given)) == 6 and memo.likeness((5,)) == given[5]


def test_the_scheduler_reads_what_new_scheduler_prepared_for_the_very_pod_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Provisioner.new_scheduler reads each pod once (SpecMemo.prepare) for the volume lookup, the
    Topology and the Scheduler's PodData: Solve asks the memo nothing again, and builds the data a
    fresh PodData gives; an answer kept under another pod's id is not taken."""
    from karpy.api.builders import make_nodepool, make_pod
    from karpy.cloudprovider import fake
    from karpy.provisioning.provisioner import Provisioner
    from karpy.state.cluster import ClusterState

    prov = Provisioner(fake.FakeCloudProvider(fake.instance_types(6)))
    pods = [make_pod(f"p-{i}", uid=f"p-{i}", requests={"cpu": f"{100 * (i % 3 + 1)}m"}) for i in range(6)]
    s = prov.new_scheduler(pods, [make_nodepool("default")], ClusterState.from_objects(), [])
    assert s is not None and s._specs is prov.scheduler_cache.specs
    asked: list[Any] = []
    of_pod = SpecMemo.of_pod
    monkeypatch.setattr(SpecMemo, "of_pod", lambda self, pod, ignore: asked.append(pod) or of_pod(self, pod, ignore))
    for p in pods:
        assert _view(s._pod_data(p)) == _view(PodData(p, False))
    assert asked == []
    other = make_pod("other", uid="other", requests={"cpu": "3"})
    s._prepared = {id(other): (pods[0], s._prepared[id(pods[0])][1])}  # another pod's answer under its id
    assert _view(s._pod_data(other)) == _view(PodData(other, False)) and asked == [other]
