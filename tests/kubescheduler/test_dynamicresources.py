"""kube-scheduler's DynamicResources plugin for a cluster without DRA drivers
(karpy.kubescheduler.plugins.dynamicresources), and karpy's launch-loop guard (karpy.sim.loopguard).

Shapes: the ResourceClaimTemplate and the claim-consuming pod of the Kubernetes docs, concepts/
scheduling-eviction/dynamic-resource-allocation.md (``large-black-cat-claim-template``,
``pod-with-cats``), its pod spec carried by a DaemonSet (a per-node device agent, as GPU operators
ship them); aws/karpenter-provider-aws 1d92708 ``examples/v1/general-purpose.yaml`` and
``examples/workloads/inflate.yaml``. Behaviour: k8s v1.35 dynamicresources.go (Filter:
"cannot allocate all claims", UnschedulableAndUnresolvable, with no ResourceSlices).
"""

from __future__ import annotations

import sys
from pathlib import Path

import karpy
from karpy.cloudprovider.fake import FakeCloudProvider
from karpy.kubescheduler.plugins import DynamicResources, default_plugins
from tests.manifests import DEFAULT_NODEPOOL

sys.path.insert(0, str(Path(__file__).parents[1] / "realworld"))
from realworld_helpers import DATA, PRICES  # noqa: E402

CATS = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: large-black-cat-claim-template
spec:
  spec:
    devices:
      requests:
      - name: req-0
        exactly:
          deviceClassName: resource.example.com
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: cats
spec:
  selector:
    matchLabels: {app: cats}
  template:
    metadata:
      labels: {app: cats}
    spec:
      containers:
      - name: container0
        image: ubuntu:20.04
        command: ["sleep", "9999"]
        resources:
          requests: {cpu: 1500m}
          claims:
          - name: cat-0
      resourceClaims:
      - name: cat-0
        resourceClaimTemplateName: large-black-cat-claim-template
"""
POD_WITH_CATS = """
---
apiVersion: v1
kind: Pod
metadata:
  name: pod-with-cats
spec:
  containers:
  - name: container0
    image: ubuntu:20.04
    command: ["sleep", "9999"]
    resources:
      requests: {cpu: 100m}
      claims:
      - name: cat-0
  resourceClaims:
  - name: cat-0
    resourceClaimTemplateName: large-black-cat-claim-template
"""
WORKLOAD = [str(DATA / "aws/examples/v1/general-purpose.yaml"), str(DATA / "aws/examples/workloads/inflate.yaml")]


def test_dynamicresources_is_in_the_default_profile_after_interpodaffinity() -> None:
    names = [p.name for p in default_plugins()]
    assert names.index("DynamicResources") == names.index("InterPodAffinity") + 1
    assert isinstance(default_plugins()[names.index("DynamicResources")], DynamicResources)


def test_dynamicresources_pod_with_claims_is_unschedulable_with_the_plugins_message() -> None:
    """Karpenter ignores the pod (its DRA error); kube-scheduler's Filter finds no device anywhere."""
    result = karpy.simulate(DEFAULT_NODEPOOL + POD_WITH_CATS, cloud_provider=FakeCloudProvider())
    doc = result.to_document()
    assert doc["nodeclaims"] == [] and doc["pods"]["default/pod-with-cats"]["phase"] == "Pending"
    assert "Dynamic Resource Allocation" in doc["pods"]["default/pod-with-cats"]["message"]


def test_dynamicresources_daemonset_with_claims_launches_one_node() -> None:
    """main: the DaemonSet's pods were bound as ordinary pods, Karpenter (which leaves DRA
    DaemonSet pods out of a node's overhead, as upstream) sized each node without them, and the
    run launched 120 NodeClaims for one 1-cpu pod. Now kube-scheduler rejects the DaemonSet pod."""
    result = karpy.simulate([*WORKLOAD, CATS], prices=PRICES)
    doc = result.to_document()
    try:
        assert len(doc["nodeclaims"]) == 1
        (inflate,) = [v for k, v in doc["pods"].items() if k.startswith("default/inflate-")]
        assert inflate["phase"] == "Running"
        (cats,) = [v for k, v in doc["pods"].items() if k.startswith("default/cats-")]
        assert cats["phase"] == "Pending" and cats["node"] is None
        timeline = result.simulation.timeline
        assert any(e.kind == "pod.created" and e.object.startswith("Pod/default/cats-") for e in timeline.entries)
    finally:
        result.cloud_provider.close()


def test_dynamicresources_cannot_allocate_on_an_existing_node() -> None:
    """A node that exists: the DaemonSet pod is tried against it and refused by DynamicResources."""
    node = """
---
apiVersion: v1
kind: Node
metadata:
  name: existing
  labels: {kubernetes.io/hostname: existing, kubernetes.io/arch: amd64, kubernetes.io/os: linux}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
"""
    result = karpy.simulate(DEFAULT_NODEPOOL + node + "---" + CATS, cloud_provider=FakeCloudProvider())
    doc = result.to_document()
    (cats,) = [v for k, v in doc["pods"].items() if k.startswith("default/cats-")]
    assert cats["phase"] == "Pending"
    assert cats["message"] == ("0/1 nodes are available: 1 cannot allocate all claims. preemption: 0/1 nodes are "
                               "available: 1 Preemption is not helpful for scheduling.")


def test_launch_loop_guard_stops_and_says_so(monkeypatch) -> None:
    """The guard, on the disagreement main had (the DaemonSet's claim-carrying pods bound without
    kube-scheduler while Karpenter leaves them out of the node's overhead): it stops after a few
    NodeClaims and says so in warnings and the pod's pending message."""
    import karpy.provisioning.scheduler  # noqa: F401 - binds its own has_dra_requirements first
    import karpy.sim.simulation
    from karpy.sim.loopguard import LOOP_LIMIT

    monkeypatch.setattr(karpy.sim.simulation.podutils, "has_dra_requirements", lambda pod: False)
    result = karpy.simulate([*WORKLOAD, CATS], prices=PRICES)
    doc = result.to_document()
    try:
        assert LOOP_LIMIT <= len(doc["nodeclaims"]) <= LOOP_LIMIT + 2
        (key,) = [k for k in doc["pods"] if k.startswith("default/inflate-")]
        assert doc["pods"][key]["phase"] == "Pending"
        assert doc["pods"][key]["message"].startswith("karpy stopped launching capacity for this pod: ")
        assert any(w.startswith("stopped a launch loop: ") and key in w for w in doc["warnings"]), doc["warnings"]
    finally:
        result.cloud_provider.close()


def test_dynamicresources_daemonset_applied_during_the_run_goes_through_kube_scheduler() -> None:
    """A Scenario ``apply`` of the claim-carrying DaemonSet at 5m: its pod on the running node is
    refused by DynamicResources, not bound (main: bound as an ordinary pod)."""
    import yaml

    result = karpy.simulate(WORKLOAD, prices=PRICES, until="10m",
                            events=[{"at": "5m", "apply": [d for d in yaml.safe_load_all(
                                CATS.replace("cpu: 1500m", "cpu: 100m")) if d]}])
    doc = result.to_document()
    try:
        (cats,) = [v for k, v in doc["pods"].items() if k.startswith("default/cats-")]
        assert cats["phase"] == "Pending" and "cannot allocate all claims" in cats["message"]
    finally:
        result.cloud_provider.close()
