"""Pod-level ``spec.resources`` and the in-place-resize request ceiling.

Ports of pkg/utils/resources/suite_test.go Context("Pod Level Resources") and
Context("UseStatusResources") (R:<line>) -- Karpenter's resources.Ceiling is component-helpers
PodRequests with UseStatusResources -- plus the API server's defaultPodRequests
(pkg/apis/core/v1/defaults.go) and the Infeasible-resize rule of AggregateContainerRequests."""

from __future__ import annotations

import karpy
from karpy.api.builders import make_nodepool, make_pod
from karpy.api.pod import Pod
from karpy.cloudprovider.fake import FakeCloudProvider
from karpy.kubescheduler.podinfo import compute_pod_requests
from tests.provisioning.harness import expect_provisioned
from karpy.scheduling.resources import from_quantities, pod_requests
from tests.manifests import DEFAULT_NODEPOOL

GI = 1 << 30
NANO = 10**9


def pod(pod_resources=None, requests=None, limits=None, init=(), statuses=(), conditions=()):
    data = make_pod("p", requests=requests or {}, limits=limits or {}).model_dump(by_alias=True, exclude_none=True)
    if pod_resources is not None:
        data["spec"]["resources"] = pod_resources
    if init:
        data["spec"]["initContainers"] = [dict(i) for i in init]
    if statuses:
        data["status"]["containerStatuses"] = [dict(s, name=data["spec"]["containers"][0]["name"]) for s in statuses]
    if conditions:
        data["status"]["conditions"] = list(conditions)
    return Pod.model_validate(data)


def cpu_mem(p):
    r = pod_requests(p)
    return r.get("cpu", 0) / NANO, r.get("memory", 0) / NANO / GI


SIDECAR = {"name": "sidecar", "restartPolicy": "Always",
           "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}}


def test_pod_level_resources_replace_the_container_sum():
    # upstream: R:569 "should calculate resource requests when the pod level resources is specified"
    p = pod({"limits": {"cpu": "4", "memory": "4Gi"}, "requests": {"cpu": "2", "memory": "2Gi"}},
            requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "3", "memory": "3Gi"})
    assert cpu_mem(p) == (2, 2)


def test_only_pod_level_requests():
    # upstream: R:590 "should calculate resource requests when only the pod level resources request is specified"
    p = pod({"requests": {"cpu": "2", "memory": "2Gi"}}, requests={"cpu": "1", "memory": "1Gi"},
            limits={"cpu": "1", "memory": "1Gi"}, init=[SIDECAR])
    assert cpu_mem(p) == (2, 2)


def test_pod_level_requests_defaulted_from_limits_by_the_test():
    # upstream: R:619 "should calculate resource requests when the pod level resources requests is defaulted from limits"
    p = pod({"requests": {"cpu": "10", "memory": "10Gi"}, "limits": {"cpu": "10", "memory": "10Gi"}},
            requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "1", "memory": "1Gi"}, init=[SIDECAR])
    assert cpu_mem(p) == (10, 10)


def test_api_server_defaults_pod_requests_from_the_container_aggregate():
    # upstream: k8s pkg/apis/core/v1/defaults.go defaultPodRequests case 1: containers set requests ->
    # pod-level requests default to their aggregate (1 app + 1 sidecar), not to the pod-level limit
    p = pod({"limits": {"cpu": "10", "memory": "10Gi"}}, requests={"cpu": "1", "memory": "1Gi"}, init=[SIDECAR])
    assert cpu_mem(p) == (2, 2)


def test_api_server_defaults_pod_requests_from_pod_limits_without_container_requests():
    # upstream: defaults.go defaultPodRequests case 2: no container requests -> pod-level limits
    p = pod({"limits": {"cpu": "3", "memory": "5Gi"}})
    assert cpu_mem(p) == (3, 5)


def test_unsupported_pod_level_resources_are_ignored():
    # upstream: component-helpers IsSupportedPodLevelResource (cpu, memory, hugepages-*)
    p = pod({"requests": {"ephemeral-storage": "50Gi"}}, requests={"cpu": "1", "ephemeral-storage": "1Gi"})
    assert pod_requests(p)["ephemeral-storage"] == 1 * GI * NANO


def test_allocated_resources_above_spec_raise_the_ceiling():
    # upstream: R:716 "should use allocatedResources when higher than spec requests (resize-down in progress)"
    p = pod(requests={"cpu": "2", "memory": "512Mi"},
            statuses=[{"allocatedResources": {"cpu": "6", "memory": "2Gi"},
                       "resources": {"requests": {"cpu": "2", "memory": "512Mi"}}}])
    assert cpu_mem(p) == (6, 2)


def test_spec_above_allocated_wins():
    # upstream: R:735 "should use spec requests when higher than allocatedResources (resize-up in progress)"
    p = pod(requests={"cpu": "8", "memory": "4Gi"},
            statuses=[{"allocatedResources": {"cpu": "2", "memory": "1Gi"},
                       "resources": {"requests": {"cpu": "8", "memory": "4Gi"}}}])
    assert cpu_mem(p) == (8, 4)


def test_no_allocated_resources_uses_spec():
    # upstream: R:754 "should use spec requests when allocatedResources is not set (no resize)"
    p = pod(requests={"cpu": "4", "memory": "2Gi"})
    assert cpu_mem(p) == (4, 2)


def test_infeasible_resize_drops_the_spec_from_the_ceiling():
    # upstream: component-helpers AggregateContainerRequests: PodResizePending=Infeasible -> max(actuated, allocated)
    p = pod(requests={"cpu": "16"}, statuses=[{"allocatedResources": {"cpu": "2"}, "resources": {"requests": {"cpu": "2"}}}],
            conditions=[{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}])
    assert pod_requests(p)["cpu"] == 2 * NANO


def test_kube_scheduler_fit_uses_the_same_requests():
    # kube-scheduler NodeResourcesFit: PodRequests with PodLevelResources + InPlacePodVerticalScaling
    p = pod({"requests": {"cpu": "3", "memory": "2Gi"}}, requests={"cpu": "1", "memory": "1Gi"})
    assert compute_pod_requests(p)["cpu"] == 3 * NANO
    assert compute_pod_requests(p, non_zero=True)["cpu"] == 3 * NANO


def test_provisioning_sizes_the_node_for_pod_level_requests():
    # provisioner: a pod asking 3 cpu at pod level (containers 1 cpu) needs more than the 2-cpu type
    p = pod({"requests": {"cpu": "3"}}, requests={"cpu": "1"})
    h, res = expect_provisioned([p], [make_nodepool()])
    assert from_quantities(h.node_of(p).status.capacity)["cpu"] >= 3 * NANO


def test_simulation_with_pod_level_resources_from_yaml():
    text = """
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  resources: {requests: {cpu: "3", memory: 1Gi}}
  containers: [{name: a, image: nginx, resources: {requests: {cpu: 500m}}}, {name: b, image: nginx}]
---
""" + DEFAULT_NODEPOOL
    result = karpy.simulate(text, cloud_provider=FakeCloudProvider(), region=None)
    doc = result.to_document()
    assert result.exit_code == 0
    [claim] = doc["nodeclaims"]
    assert claim["instance_type"] != "small-instance-type"
