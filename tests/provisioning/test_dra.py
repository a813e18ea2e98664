"""Dynamic Resource Allocation under ``--ignore-dra-requests`` (upstream's default, true).

Ports of pkg/controllers/provisioning/scheduling/suite_test.go Describe("Dynamic Resource
Allocation (DRA)") (S:5328-5521): pods referencing ResourceClaims get upstream's DRA error and no
NodeClaim; DaemonSet pods with claims are not counted as overhead. Also the Pod model keeps
``spec.resourceClaims`` and container ``resources.claims`` from real YAML."""

from __future__ import annotations

import pytest

import karpy
from karpy.api.builders import make_daemonset, make_nodepool, make_pod
from karpy.api.pod import Pod, ResourceClaim
from karpy.cloudprovider.fake import FakeCloudProvider
from karpy.provisioning.scheduler import ERR_DRA, DRAError
from tests.provisioning.harness import expect_provisioned
from karpy.utils import pod as podutils
from tests.manifests import DEFAULT_NODEPOOL


def _with_claims(pod: Pod, container: list[str] = (), init: list[str] = (), pod_level: list[str] = ()) -> Pod:
    data = pod.model_dump(by_alias=True, exclude_none=True)
    if container:
        data["spec"]["containers"][0]["resources"]["claims"] = [{"name": n} for n in container]
    if init:
        data["spec"]["initContainers"] = [{"name": "init", "image": "nvidia/cuda:latest",
                                           "resources": {"requests": {"cpu": "500m", "memory": "512Mi"},
                                                         "claims": [{"name": n} for n in init]}}]
    if pod_level:
        data["spec"]["resourceClaims"] = [{"name": n, "resourceClaimTemplateName": n} for n in pod_level]
    return Pod.model_validate(data)


CASES = [
    # upstream: S:5361 Entry "container with resource claims"
    ("container-dra", dict(container=["gpu-claim"]), False, True),
    # upstream: S:5382 Entry "init container with resource claims"
    ("init-container-dra", dict(init=["gpu-init-claim"]), False, True),
    # upstream: S:5413 Entry "pod with both container and init container resource claims"
    ("both-dra", dict(container=["gpu-claim"], init=["storage-init-claim"]), False, True),
    # upstream: S:5448 Entry "non-DRA pod without resource claims"
    ("non-dra", dict(), True, False),
    # upstream: pkg/utils/pod/scheduling.go HasDRARequirements (pod-level spec.resourceClaims)
    ("pod-level-dra", dict(pod_level=["gpu"]), False, True),
]


@pytest.mark.parametrize("name,claims,expect_nodeclaims,expect_dra_error", CASES, ids=[c[0] for c in CASES])
def test_should_handle_dra_pods_correctly(name, claims, expect_nodeclaims, expect_dra_error):
    # upstream: S:5329 DescribeTable "should handle DRA pods correctly"
    pod = _with_claims(make_pod(name, requests={"cpu": "1", "memory": "1Gi"}), **claims)
    _, res = expect_provisioned([pod], [make_nodepool()])
    results = res.results
    if expect_nodeclaims:
        assert len(results.new_nodeclaims) == 1 and results.pod_errors == {}
    else:
        assert results.new_nodeclaims == []
    if expect_dra_error:
        assert list(results.dra_errors()) == [pod.key]
        assert isinstance(results.pod_errors[pod.key], DRAError) and results.pod_errors[pod.key] == ERR_DRA
    else:
        assert results.dra_errors() == {}


def test_dra_daemonset_pods_are_not_overhead():
    # upstream: S:5469 "should handle DaemonSet pods with DRA requirements based on IgnoreDRARequests flag value"
    # IgnoreDRARequests=true (the only setting karpy models): the 3-CPU DRA daemon is skipped, so the
    # claim's cheapest option is smaller than with the same daemon lacking claims (which counts).
    app = make_pod("app", requests={"cpu": "1"})
    plain_ds = make_daemonset("dra-daemon", requests={"cpu": "3"})
    dra_ds = make_daemonset("dra-daemon", requests={"cpu": "3"})
    dra_ds.spec.template.spec.containers[0].resources.claims = [ResourceClaim(name="gpu-claim")]
    _, ignored = expect_provisioned([app], [make_nodepool()], daemonsets=[dra_ds])
    _, counted = expect_provisioned([make_pod("app", requests={"cpu": "1"})], [make_nodepool()], daemonsets=[plain_ds])
    cpu_ignored = ignored.results.new_nodeclaims[0].instance_type_options[0].capacity["cpu"]
    cpu_counted = counted.results.new_nodeclaims[0].instance_type_options[0].capacity["cpu"]
    assert cpu_ignored < cpu_counted


POD_YAML = """
apiVersion: v1
kind: Pod
metadata: {name: gpu-job, namespace: ml}
spec:
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: single-gpu}
  containers:
  - name: train
    image: nvidia/cuda:latest
    resources:
      requests: {cpu: "1"}
      claims: [{name: gpu}]
---
""" + DEFAULT_NODEPOOL


def test_real_yaml_keeps_claims_and_the_pod_stays_pending_with_the_dra_error():
    # upstream: scheduler.go add -> NewDRAError(...) is a permanent pod error (never relaxed)
    result = karpy.simulate(POD_YAML, cloud_provider=FakeCloudProvider(), region=None)
    doc = result.to_document()
    assert result.exit_code == 3 and doc["nodeclaims"] == []
    assert doc["pods"]["ml/gpu-job"]["phase"] == "Pending"
    assert ERR_DRA in (doc["pods"]["ml/gpu-job"]["message"] or "")


def test_has_dra_requirements():
    # upstream: pkg/utils/pod/scheduling.go HasDRARequirements
    assert not podutils.has_dra_requirements(make_pod("p"))
    assert podutils.has_dra_requirements(_with_claims(make_pod("p"), pod_level=["x"]))
    assert podutils.has_dra_requirements(_with_claims(make_pod("p"), init=["x"]))
