"""SpecMemo: PodData's spec-derived values are computed once per pod spec object in a Solve.

not in upstream (NewPodData computes them for every pod); these tests compare the memo's PodData
with the plain computation (no memo) for pods sharing one spec, including pods whose status holds an
in-place resize (their requests depend on the status, so the memo must not serve them).
"""

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

FIELDS = ("requests", "requests_key", "requirements", "strict_requirements", "host_ports", "has_dra")


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
