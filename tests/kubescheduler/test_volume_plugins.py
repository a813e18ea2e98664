"""kube-scheduler's volume filters (karpy.kubescheduler.plugins.volumes) in a simulation.

Behaviour from k8s pkg/scheduler/framework/plugins/volumebinding (volume_binding_test.go
"unbound claim w/ immediate mode", "bound and unbound unsatisfied", "PVC does not exist",
"bound claim, pv does not exist"), volumezone (volume_zone_test.go "label zone failure domain
matched" / "label zone failure domain not matched") and nodevolumelimits/csi.go, checked through
karpy's kube-scheduler + Karpenter loop on the fake provider."""

from __future__ import annotations

import karpy
from karpy.cloudprovider.fake import FakeCloudProvider
from tests.manifests import DEFAULT_NODEPOOL

BASE = DEFAULT_NODEPOOL + """---
apiVersion: v1
kind: Node
metadata:
  name: existing
  labels: {kubernetes.io/hostname: existing, topology.kubernetes.io/zone: test-zone-1, kubernetes.io/arch: amd64,
           kubernetes.io/os: linux}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
"""


def pod(name, *claims):
    vols = "".join(f"\n  - {{name: v{i}, persistentVolumeClaim: {{claimName: {c}}}}}" for i, c in enumerate(claims))
    return f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: 100m}}}}}}]
  volumes:{vols}
"""


def pv(name, zone, labels=""):
    return f"""
---
apiVersion: v1
kind: PersistentVolume
metadata: {{name: {name}{labels}}}
spec:
  capacity: {{storage: 10Gi}}
  csi: {{driver: ebs.csi.aws.com, volumeHandle: vol-{name}}}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{{matchExpressions: [{{key: topology.kubernetes.io/zone, operator: In, values: [{zone}]}}]}}]
"""


def pvc(name, volume=None, sc=None):
    spec = []
    if volume:
        spec.append(f"volumeName: {volume}")
    if sc:
        spec.append(f"storageClassName: {sc}")
    ann = "{pv.kubernetes.io/bind-completed: \"yes\"}" if volume else "{}"
    return f"""
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}, namespace: default, annotations: {ann}}}
spec: {{accessModes: [ReadWriteOnce], {', '.join(spec)}}}
"""


def run(text):
    result = karpy.simulate(text, cloud_provider=FakeCloudProvider(), region=None)
    return result, result.to_document()


def test_bound_pv_in_another_zone_keeps_the_pod_off_the_existing_node():
    # volumebinding checkBoundClaims: ErrReasonNodeConflict on test-zone-1; Karpenter launches in zone 2
    result, doc = run(BASE + pv("data", "test-zone-2") + pvc("data", volume="data") + pod("db", "data"))
    assert result.exit_code == 0
    [claim] = doc["nodeclaims"]
    assert claim["zone"] == "test-zone-2" and doc["pods"]["default/db"]["node"] == claim["name"]


def test_bound_pv_in_the_node_zone_binds_to_the_existing_node():
    # volumebinding: node affinity matches -> bound to the existing node, nothing launched
    result, doc = run(BASE + pv("data", "test-zone-1") + pvc("data", volume="data") + pod("db", "data"))
    assert doc["pods"]["default/db"]["node"] == "existing" and doc["nodeclaims"] == []


def test_unbound_immediate_claim_is_unresolvable():
    # volume_binding.go PreFilter: "pod has unbound immediate PersistentVolumeClaims"; Karpenter ignores it
    sc = """
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: imm}
provisioner: ebs.csi.aws.com
"""
    result, doc = run(BASE + sc + pvc("data", sc="imm") + pod("db", "data"))
    assert result.exit_code == 3 and doc["nodeclaims"] == []
    # Karpenter's "ignoring pod" is the document's message; kube-scheduler's condition says why it failed
    assert "pvc with immediate volume binding mode must be bound" in doc["pods"]["default/db"]["message"]
    cond = next(c for c in result.simulation.pods["default/db"].status.conditions if c.type == "PodScheduled")
    assert "pod has unbound immediate PersistentVolumeClaims" in cond.message


def test_wait_for_first_consumer_class_topology_is_respected_by_kube_scheduler():
    # checkVolumeProvisions: allowedTopologies must match the node (ErrReasonBindConflict on zone 1)
    sc = """
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: wffc}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [test-zone-3]}]}]
"""
    result, doc = run(BASE + sc + pvc("data", sc="wffc") + pod("db", "data"))
    assert result.exit_code == 0
    [claim] = doc["nodeclaims"]
    assert claim["zone"] == "test-zone-3" and doc["pods"]["default/db"]["node"] == claim["name"]


def test_missing_claim_is_unresolvable():
    # volume_binding.go PreFilter: persistentvolumeclaim "x" not found
    result, doc = run(BASE + pod("db", "nope"))
    assert result.exit_code == 3 and doc["nodeclaims"] == []
    assert 'persistentvolumeclaims "nope" not found' in doc["pods"]["default/db"]["message"]
    cond = next(c for c in result.simulation.pods["default/db"].status.conditions if c.type == "PodScheduled")
    assert 'persistentvolumeclaim "nope" not found' in cond.message


def test_volume_zone_label_on_the_pv():
    # volumezone: a PV labelled topology.kubernetes.io/zone=test-zone-2 (no node affinity) conflicts with zone 1
    labelled = """
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: legacy, labels: {topology.kubernetes.io/zone: test-zone-2}}
spec: {capacity: {storage: 10Gi}, awsElasticBlockStore: {volumeID: vol-1}}
"""
    result, doc = run(BASE + labelled + pvc("data", volume="legacy") + pod("db", "data"))
    assert doc["pods"]["default/db"]["node"] != "existing"


def test_csi_node_volume_limit_sends_the_second_pod_elsewhere():
    # nodevolumelimits: the existing node may attach one EBS volume; the second claim does not fit
    csinode = """
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: existing}
spec: {drivers: [{name: ebs.csi.aws.com, nodeID: i-1, allocatable: {count: 1}}]}
"""
    text = BASE + csinode + pv("a", "test-zone-1") + pv("b", "test-zone-1") + pvc("a", volume="a") + \
        pvc("b", volume="b") + pod("p1", "a") + pod("p2", "b")
    result, doc = run(text)
    nodes = sorted(doc["pods"][k]["node"] for k in ("default/p1", "default/p2"))
    assert nodes.count("existing") == 1 and result.exit_code == 0
