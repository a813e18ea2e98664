"""new_pod_info(pod, prev): a pod update reuses its previous PodInfo's derived values exactly when
they cannot differ, and otherwise builds them afresh (the same values either way)."""

from __future__ import annotations

from typing import Any

from karpy.api.builders import make_node, make_pod, pod_affinity_term
from karpy.api.pod import ContainerStatus, PodCondition
from karpy.kubescheduler import KubeScheduler
from karpy.kubescheduler.podinfo import PodInfo, new_pod_info

from .conftest import FakeClock

_DERIVED = ("key", "uid", "name", "namespace", "labels", "priority", "requests", "non_zero_requests",
            "host_ports", "required_affinity_terms", "required_anti_affinity_terms",
            "preferred_affinity_terms", "preferred_anti_affinity_terms")
_SHARED = ("labels", "requests", "non_zero_requests", "host_ports", "required_affinity_terms",
           "required_anti_affinity_terms", "preferred_affinity_terms", "preferred_anti_affinity_terms")


def _pod(**kw: Any) -> Any:
    return make_pod("p", labels={"app": "a"}, requests={"cpu": "1", "memory": "1Gi"}, host_ports=[8080],
                    pod_affinity=[pod_affinity_term({"app": "a"}, "zone")],
                    pod_anti_affinity_preferences=[(5, pod_affinity_term({"app": "b"}, "zone"))],
                    priority=7, **kw)


def _status_update(pod: Any) -> Any:
    """As Simulation._revised: a new pod sharing metadata and spec, with a copied status."""
    new = pod.model_copy(update={"status": pod.status.model_copy()})
    new.status.conditions = [PodCondition(type="PodScheduled", status="False", reason="Unschedulable",
                                          message="0/1 nodes")]
    return new


def _binding(pod: Any, node: str) -> Any:
    spec = pod.spec.model_copy(update={"node_name": node})
    return pod.model_copy(update={"spec": spec, "status": pod.status.model_copy()})


def _same_values(got: PodInfo, pod: Any) -> None:
    fresh = new_pod_info(pod)
    for f in _DERIVED:
        assert getattr(got, f) == getattr(fresh, f), f
    assert got.pod is pod and got.memo == {} and got.terminating == fresh.terminating


def _shared(got: PodInfo, prev: PodInfo) -> bool:
    return all(getattr(got, f) is getattr(prev, f) for f in _SHARED)


def test_status_only_update_reuses_the_derived_values():
    p = _pod()
    prev = new_pod_info(p)
    prev.memo["x"] = 1
    q = _status_update(p)
    got = new_pod_info(q, prev)
    _same_values(got, q)
    assert _shared(got, prev)
    assert got is not prev and got.memo == {}  # a fresh memo: it may read the pod's status


def test_binding_update_reuses_the_derived_values():
    p = _pod()
    prev = new_pod_info(p)
    q = _binding(p, "n1")
    got = new_pod_info(q, prev)
    _same_values(got, q)
    assert _shared(got, prev) and got.node_name == "n1"


def test_spec_change_other_than_node_name_builds_afresh():
    p = _pod()
    prev = new_pod_info(p)
    q = p.model_copy(update={"spec": p.spec.model_copy(update={"node_name": "n1", "priority": 9})})
    got = new_pod_info(q, prev)
    _same_values(got, q)
    assert got.priority == 9 and not _shared(got, prev)
    other = make_pod("p", labels={"app": "a"}, requests={"cpu": "3"})
    q2 = p.model_copy(update={"spec": p.spec.model_copy(update={"containers": other.spec.containers})})
    got2 = new_pod_info(q2, prev)
    _same_values(got2, q2)
    assert got2.requests["cpu"] == 3 * 10**9 and got2.requests != prev.requests


def test_metadata_change_builds_afresh():
    p = _pod()
    prev = new_pod_info(p)
    meta = p.metadata.model_copy(update={"labels": {"app": "z"}})
    q = p.model_copy(update={"metadata": meta})
    got = new_pod_info(q, prev)
    _same_values(got, q)
    assert got.labels == {"app": "z"} and prev.labels == {"app": "a"}
    # the matchLabelKeys-free affinity term is rebuilt too (not the previous version's object)
    assert got.required_affinity_terms[0] is not prev.required_affinity_terms[0]


def test_requests_reading_status_are_rebuilt():
    p = _pod()
    prev = new_pod_info(p)
    q = _status_update(p)
    q.status.container_statuses = [ContainerStatus.model_validate(
        {"name": p.spec.containers[0].name, "allocatedResources": {"cpu": "4", "memory": "1Gi"}})]
    got = new_pod_info(q, prev)
    _same_values(got, q)
    assert got.requests["cpu"] == 4 * 10**9 and prev.requests["cpu"] == 10**9
    # and back: the previous version read its status, the new one does not
    r = _status_update(q)
    r.status.container_statuses = []
    back = new_pod_info(r, got)
    _same_values(back, r)
    assert back.requests["cpu"] == 10**9


def test_resize_pending_condition_reads_status():
    p = _pod()
    prev = new_pod_info(p)
    q = _status_update(p)
    q.status.container_statuses = [ContainerStatus.model_validate(
        {"name": p.spec.containers[0].name, "allocatedResources": {"cpu": "2"},
         "resources": {"requests": {"cpu": "2"}}})]
    q.status.conditions = [PodCondition(type="PodResizePending", status="True", reason="Infeasible")]
    got = new_pod_info(q, prev)
    _same_values(got, q)
    assert got.requests["cpu"] == 2 * 10**9


def test_scheduler_updates_keep_the_cache_exact():
    """KubeScheduler.update_pod hands the previous PodInfo: a status update, a binding and a label
    change leave the cached PodInfo and NodeInfo as a from-scratch build gives."""
    ks = KubeScheduler(FakeClock(), __import__("random").Random(0))
    ks.add_node(make_node("n1", capacity={"cpu": "8", "memory": "8Gi", "pods": "10"}))
    p = _pod()
    ks.add_pod(p)
    first = ks.pod_infos[p.key]
    q = _status_update(p)
    ks.update_pod(q)
    assert ks.pod_infos[p.key].pod is q and _shared(ks.pod_infos[p.key], first)
    b = _binding(q, "n1")
    ks.update_pod(b)
    pi = ks.pod_infos[p.key]
    _same_values(pi, b)
    ni = ks.node_infos["n1"]
    assert [x.pod for x in ni.pods] == [b] and ni.requested["cpu"] == 10**9
    meta = b.metadata.model_copy(update={"labels": {"app": "z"}})
    c = b.model_copy(update={"metadata": meta, "status": b.status.model_copy()})
    ks.update_pod(c)
    pi2 = ks.pod_infos[p.key]
    _same_values(pi2, c)
    assert ni.pods == [pi2] and pi2.labels == {"app": "z"} and ni.pods_with_affinity == [pi2]



def test_requests_read_once_for_both_aggregations_equal_the_plain_aggregations():
    """new_pod_info reads each container's requests once for PodRequests and its non-zero variant
    (``parsed``): the same requests and non-zero requests as compute_pod_requests without it, for
    containers with requests, limits only, nothing, init containers and sidecars, overhead and
    pod-level resources."""
    import random

    from karpy.kubescheduler.podinfo import compute_pod_requests
    rng = random.Random(3)

    def amounts() -> dict:
        out = {}
        if rng.random() < 0.6:
            out["cpu"] = rng.choice(["0", "100m", "1", "2500m"])
        if rng.random() < 0.6:
            out["memory"] = rng.choice(["0", "64Mi", "1Gi"])
        if rng.random() < 0.2:
            out["nvidia.com/gpu"] = "1"
        return out

    checked = 0
    for i in range(300):
        inits = []
        for j in range(rng.randrange(3)):
            c: dict = {"limits": amounts()} if rng.random() < 0.3 else {"requests": amounts()}
            if rng.random() < 0.4:
                c["restart_policy"] = "Always"
            inits.append(c)
        kw: dict = {"limits": amounts()} if rng.random() < 0.3 else {"requests": amounts()}
        if rng.random() < 0.2:
            kw["overhead"] = {"cpu": "50m"}
        p = make_pod(f"p{i}", init_containers=inits, **kw)
        if rng.random() < 0.15:
            from karpy.api.pod import ResourceRequirements
            p.spec.resources = ResourceRequirements(requests={"cpu": "3"})
        pi = new_pod_info(p)
        assert pi.requests == compute_pod_requests(p), i
        assert pi.non_zero_requests == compute_pod_requests(p, non_zero=True), i
        assert list(pi.requests) == list(compute_pod_requests(p)), i
        assert list(pi.non_zero_requests) == list(compute_pod_requests(p, non_zero=True)), i
        checked += pi.requests != pi.non_zero_requests
    assert checked > 50


def _of_template(name: str, spec: Any) -> Any:
    """A pod of a template, as karpy.api.workloads makes one: its own metadata, the template's spec object."""
    return make_pod(name, labels={"app": "a"}).model_copy(update={"spec": spec})


def test_pods_of_one_spec_share_its_requests_equal_to_a_fresh_build():
    """SpecRequests: the pods of one template (one spec object) get its requests and host ports
    once computed, equal to a fresh PodInfo's; another spec, a resizing pod (its requests read its
    status) and a full memo compute their own."""
    from karpy.kubescheduler.podinfo import SpecRequests

    specs = SpecRequests()
    spec = _pod().spec
    pods = [_of_template(f"p{i}", spec) for i in range(4)]
    got = [new_pod_info(p, specs=specs) for p in pods]
    for p, pi in zip(pods, got):
        _same_values(pi, p)
    assert all(pi.requests is got[0].requests and pi.non_zero_requests is got[0].non_zero_requests
               and pi.host_ports is got[0].host_ports for pi in got)
    other = _of_template("q", make_pod("x", requests={"cpu": "3"}).spec)
    o = new_pod_info(other, specs=specs)
    _same_values(o, other)
    assert o.requests["cpu"] == 3 * 10**9 and o.requests is not got[0].requests
    resized = _of_template("r", spec)
    resized.status.container_statuses = [ContainerStatus.model_validate(
        {"name": spec.containers[0].name, "allocatedResources": {"cpu": "4", "memory": "1Gi"}})]
    r = new_pod_info(resized, specs=specs)
    _same_values(r, resized)
    assert r.requests["cpu"] == 4 * 10**9 and r.requests is not got[0].requests
    again = new_pod_info(_of_template("p9", spec), specs=specs)
    assert again.requests is got[0].requests  # (the resized pod left the spec's entry as it was)


def test_a_full_spec_memo_starts_over_and_a_switched_off_one_keeps_nothing(monkeypatch: Any):
    from karpy.kubescheduler.podinfo import SpecRequests

    monkeypatch.setattr(SpecRequests, "LIMIT", 2)
    specs = SpecRequests()
    pods = [_of_template(f"p{i}", make_pod("x", requests={"cpu": f"{i + 1}"}).spec) for i in range(3)]
    for p in pods:
        _same_values(new_pod_info(p, specs=specs), p)
    assert len(specs._by_spec) == 1  # (two held, then the third started it over)
    monkeypatch.setattr(SpecRequests, "enabled", False)
    off = SpecRequests()
    a, b = (new_pod_info(_of_template(n, pods[0].spec), specs=off) for n in ("a", "b"))
    assert a.requests == b.requests and a.requests is not b.requests and not off._by_spec


def test_spec_requests_change_no_decision_of_a_day(monkeypatch: Any):
    """A generated day with PDBs and do-not-disrupt pods, disruption on: the same document with
    SpecRequests switched off."""
    from karpy.kubescheduler.podinfo import SpecRequests
    from tests.disruption.test_podchecks_equivalence import _with_blockers, assert_same_day_with_switch_off

    assert_same_day_with_switch_off(monkeypatch, SpecRequests, "enabled", *_with_blockers(2))
