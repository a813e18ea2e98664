"""v1.37 gangs on real prices (the bundled 2026-07-20 AWS table), the three mismatches of Karpenter
v1.14 (no gang awareness) that reference kube-scheduler-1.37.md §11 lists and karpy says: nodes
launched outside a gang's topology domain, a preempting gang ignored (IsPreempting), and
consolidation evicting gang members one at a time."""

from __future__ import annotations

from typing import Any

import pytest

import karpy
from karpy.explain import explain_pod, render_explain

from .test_podgroup_v137_scenarios import _GROUP, _POD, _POOL

_TOPOLOGY = "  schedulingConstraints: {topology: [{key: topology.kubernetes.io/zone}]}\n"
_PRIORITY_CLASSES = """---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""


def _zone_pool(name: str, zone: str, weight: int, limits: str = "") -> str:
    pool = _POOL.split("---\n")[0]
    return (pool.replace("metadata: {name: default}", f"metadata: {{name: {name}}}")
            .replace("  LIMITS", f"  weight: {weight}\n  {limits}")
            .replace("values: [m5]}", f"values: [m5]}}\n      - {{key: topology.kubernetes.io/zone, operator: In, "
                                      f"values: [{zone}]}}"))


def _group(name: str, pods: int, min_count: int, extra: str = "", pod_extra: str = "",
           annotations: str = "") -> str:
    group = _GROUP.replace("MIN", str(min_count)).replace("name: train", f"name: {name}") + extra
    pod = _POD.replace("podGroupName: train", f"podGroupName: {name}")
    if pod_extra:
        pod = pod.replace("spec:\n", f"spec:\n{pod_extra}")
    if annotations:
        pod = pod.replace("namespace: default}", f"namespace: default, annotations: {{{annotations}}}}}")
    return group + "".join(pod.replace("worker-I", f"{name}-{i}") for i in range(pods))


def _doc(result: Any) -> dict[str, Any]:
    doc: dict[str, Any] = result.to_document()
    return doc


# -- (a) a gang with a zone topology constraint: Karpenter spreads it over two zones --------------

_TOPOLOGY_TEXT = (_zone_pool("zone-a", "us-east-1a", 10, 'limits: {cpu: "32"}') + "---\n"
                  + _zone_pool("zone-b", "us-east-1b", 1) + "---\n" + _POOL.split("---\n")[1]
                  + _group("train", 16, 16, _TOPOLOGY))


@pytest.fixture(scope="module")
def topology_run() -> Any:
    return karpy.simulate(_TOPOLOGY_TEXT, prices="2026-07-20",
                          feature_gates={"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True})


def test_topology_gang_capacity_outside_its_domain(topology_run: Any) -> None:
    """16 x 3 vCPU, minCount 16, one zone (TAS on); NodePool zone-a (weight 10, 32 vCPU) and zone-b.
    Karpenter packs the members one by one: an m5.8xlarge in us-east-1a for 10 and one in
    us-east-1b for 6. No zone holds 16, so PlacementGenerate's two placements both fail and
    kube-scheduler binds none: $3.072/h of nodes the gang cannot use, and karpy says why."""
    doc = _doc(topology_run)
    assert sorted((n["instance_type"], n["zone"]) for n in doc["nodeclaims"]) == [
        ("m5.8xlarge", "us-east-1a"), ("m5.8xlarge", "us-east-1b")]
    assert all(n["pods"] == [] for n in doc["nodeclaims"])
    assert not any(p["node"] for p in doc["pods"].values())
    assert doc["cost_per_hour"] == pytest.approx(3.072)
    assert doc["pods"]["default/train-0"]["message"] == (
        "pod group is unschedulable, 0/2 placements are available, first placement status: minCount (16) cannot "
        "be satisfied: 10 scheduled, 5 remaining, pod group preemption: not supported with topology constraints")
    warning = next(w for w in doc["warnings"] if w.startswith("PodGroup default/train"))
    assert warning == (
        "PodGroup default/train (gang, minCount 16, topology topology.kubernetes.io/zone): not scheduled; "
        "kube-scheduler found no single topology.kubernetes.io/zone domain with room for minCount pods (its last "
        "cycle fit 10 of 16 in one domain), so it binds none; Karpenter v1.14 ignores "
        "schedulingConstraints.topology and spread the nodes over 2 domains (us-east-1a: 1 node, us-east-1b: "
        "1 node); that capacity stays unused by the gang")


def test_topology_gang_explain_line(topology_run: Any) -> None:
    trace = explain_pod(topology_run, "default/train-7")
    assert trace["gang"].startswith("PodGroup default/train (gang, minCount 16, topology topology.kubernetes.io/zone)")
    assert "ignores schedulingConstraints.topology" in render_explain(trace)


def test_topology_gang_in_one_zone_binds() -> None:
    """Control: one NodePool; Karpenter happens to launch the m5.16xlarge in one zone and the gang
    binds there, with no warning."""
    doc = _doc(karpy.simulate(_POOL.replace("LIMITS", "") + _group("train", 16, 16, _TOPOLOGY),
                              prices="2026-07-20",
                              feature_gates={"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}))
    assert [(n["instance_type"], n["zone"]) for n in doc["nodeclaims"]] == [("m5.16xlarge", "us-east-1a")]
    assert all(p["node"] for p in doc["pods"].values())
    assert not any(w.startswith("PodGroup") for w in doc["warnings"])


# -- (b) a high-priority gang preempting a low-priority one ----------------------------------------

def test_high_priority_gang_preempts_and_karpenter_ignores_it() -> None:
    """A low-priority gang (16 x 3 vCPU) runs on an m5.16xlarge; at 300 s a high-priority gang of 16
    arrives. PodGroupPostFilter evicts 11 low members (disruptionMode single: pods are the victims,
    the lowest-ranked ones), the high gang's pods are nominated, so Karpenter (IsPreempting) launches
    nothing although the NodePool has no limit; the victims' 30 s grace ends and the gang binds whole."""
    late = "karpy.io/arrive-after: 300s"
    text = (_POOL.replace("LIMITS", "") + _PRIORITY_CLASSES
            + _group("batch", 16, 16, "  priorityClassName: low\n", "  priorityClassName: low\n")
            + _group("train", 16, 16, "  priorityClassName: high\n", "  priorityClassName: high\n", late))
    doc = _doc(karpy.simulate(text, prices="2026-07-20", feature_gates={"GenericWorkload": True}))
    assert [n["instance_type"] for n in doc["nodeclaims"]] == ["m5.16xlarge"]
    assert [e["t"] for e in doc["timeline"] if e["kind"] == "nodeclaim.created"] == [1.0]
    evicted = [(e["t"], e["object"], e["detail"]["reason"]) for e in doc["timeline"] if e["kind"] == "pod.evicted"]
    assert evicted == [(300.0, f"Pod/default/batch-{i}", "preemption") for i in range(5, 16)]
    bound = {e["object"]: e["t"] for e in doc["timeline"] if e["kind"] == "pod.bound"}
    assert {bound[f"Pod/default/train-{i}"] for i in range(16)} == {330.0}
    assert sum(1 for k, p in doc["pods"].items() if k.startswith("default/batch") and p["phase"] == "Running") == 5
    assert doc["cost_per_hour"] == pytest.approx(3.072)
    assert ("PodGroup default/train (gang, minCount 16): placed by workload-aware preemption (11 victims "
            "evicted); while its pods carried status.nominatedNodeName, Karpenter v1.14 ignored the gang "
            "(IsPreempting) and launched no capacity for it") in doc["warnings"]


# -- (c) consolidation evicting gang members -------------------------------------------------------

_JOB = """---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: default}
spec:
  parallelism: 8
  completions: 8
  template:
    spec:
      restartPolicy: Never
      schedulingGroup: {podGroupName: train}
      containers: [{name: c, image: trainer, resources: {requests: {cpu: "3", memory: 8Gi}}}]
"""


def test_consolidation_evicts_gang_members_one_by_one() -> None:
    """A Job of 8 gang members (minCount 8) and 8 fillers that leave after 10 min, on m5 nodes of at
    most 16 vCPU: four nodes at 1 s. When the fillers go, emptiness deletes the m5.xlarge (620 s) and
    single-node consolidation deletes an m5.4xlarge holding 2 members, evicting them at 635 s while
    the other 6 keep running; the Job re-creates them at 665 s and they bind at once as members of
    the placed gang. karpy says it."""
    pool = _POOL.replace("LIMITS", "").replace(
        "values: [m5]}", 'values: [m5]}\n      - {key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ["17"]}')
    filler = _POD.replace("  schedulingGroup: {podGroupName: train}\n", "").replace(
        "namespace: default}", "namespace: default, annotations: {karpy.io/depart-after: 10m}}")
    text = pool + _GROUP.replace("MIN", "8") + _JOB + "".join(filler.replace("worker-I", f"filler-{i}")
                                                              for i in range(8))
    doc = _doc(karpy.simulate(text, prices="2026-07-20", feature_gates={"GenericWorkload": True},
                              disruption=True, until="1h"))
    claims = sorted((n["instance_type"], n["deleted_at"] or 0.0, n["deleted_by"] or "") for n in doc["nodeclaims"])
    assert claims == [("m5.4xlarge", 0.0, ""), ("m5.4xlarge", 0.0, ""),
                      ("m5.4xlarge", 670.0, "consolidation"), ("m5.xlarge", 620.0, "emptiness")]
    evictions = [(e["t"], e["object"]) for e in doc["timeline"]
                 if e["kind"] == "pod.evicted" and e["object"].startswith("Pod/default/train-")]
    assert len(evictions) == 2 and {t for t, _ in evictions} == {635.0}
    gone = {o.removeprefix("Pod/") for _, o in evictions}
    running = [k for k, p in doc["pods"].items() if k.startswith("default/train-") and p["phase"] == "Running"]
    assert len(running) == 8 and not gone & set(running)
    rebinds = [e["t"] for e in doc["timeline"] if e["kind"] == "pod.bound" and e["t"] > 600]
    assert rebinds == [665.0, 665.0]
    assert doc["cost_per_hour"] == pytest.approx(1.536)
    assert doc["cost"]["total"] == pytest.approx(1.711307)
    warning = next(w for w in doc["warnings"] if w.startswith("PodGroup default/train"))
    assert warning.startswith("PodGroup default/train (gang, minCount 8, disruptionMode single): 2 running members "
                              "were evicted one by one (from default-")
    assert "it ignores disruptionMode" in warning and "PodGroupInitiallyScheduled stays True" in warning
