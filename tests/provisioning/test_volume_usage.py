"""CSI volume limits on existing nodes and multi-volume topology alternatives.

Ports of pkg/controllers/provisioning/scheduling/suite_test.go Describe("VolumeUsage")
(S:2891-3897). BeforeEach: one fake type "instance-type" with 1024 cpu / 1024 pods; the CSI
driver is ``fake.csi.provider``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from karpy.api.builders import make_nodepool, make_pod, pod_affinity_term
from karpy.api.storage import CSINode
from karpy.cloudprovider import fake
from tests.provisioning.harness import Harness
from karpy.provisioning.volumetopology import VolumeTopology

sys.path.insert(0, str(Path(__file__).parent))
from volume_helpers import pv, pvc, storage_class, with_volumes  # noqa: E402

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
CSI = "fake.csi.provider"


def big_harness(*objects, instance_types=None):
    its = instance_types or [fake.new_instance_type("instance-type", resources={"cpu": "1024", "pods": "1024"})]
    h = Harness([make_nodepool()], its)
    h.volumes = VolumeTopology.from_objects(
        [o for o in objects if o.kind == "PersistentVolumeClaim"], [o for o in objects if o.kind == "PersistentVolume"],
        [o for o in objects if o.kind == "StorageClass"])
    return h


def csi_node(name, **counts):
    return CSINode.model_validate({"metadata": {"name": name}, "spec": {"drivers": [
        {"name": drv.replace("_", "."), "nodeID": "fake-node-id", "allocatable": {"count": n}} for drv, n in counts.items()]}})


def initial_node(h):
    first = make_pod("initial")
    h.provision(first)
    node = h.node_of(first)
    return node


def test_launches_multiple_nodes_when_volume_limits_require():
    # upstream: S:2903 "should launch multiple nodes if required due to volume limits"
    sc = storage_class("my-storage-class", zones=["test-zone-1"], provisioner=CSI)
    claims = [pvc(f"my-claim-{ab}-{i}", storage_class_name="my-storage-class") for i in range(6) for ab in "ab"]
    h = big_harness(sc, *claims)
    node = initial_node(h)
    c = csi_node(node.metadata.name, fake_csi_provider=10)
    h.volumes.csi_nodes[c.metadata.name] = c
    pods = [with_volumes(make_pod(f"p{i}"), [f"my-claim-a-{i}", f"my-claim-b-{i}"]) for i in range(6)]
    h.provision(*pods)
    assert len(h.nodes) == 2
    assert sum(h.node_of(p).metadata.name == node.metadata.name for p in pods) == 5


def test_same_pvc_needs_one_node():
    # upstream: S:2955 "should launch a single node if all pods use the same PVC"
    sc = storage_class("my-storage-class", zones=["test-zone-1"], provisioner=CSI)
    h = big_harness(sc, pv(zones=["test-zone-1"]), pvc(volume_name="my-volume", storage_class_name="my-storage-class"))
    node = initial_node(h)
    h.volumes.csi_nodes[node.metadata.name] = csi_node(node.metadata.name, fake_csi_provider=10)
    pods = [with_volumes(make_pod(f"p{i}"), ["my-claim"]) for i in range(100)]
    h.provision(*pods)
    assert len(h.nodes) == 1


def test_nfs_volumes_do_not_fail():
    # upstream: S:3009 "should not fail for NFS volumes"
    nfs = pv(zones=["test-zone-1"], storage_class_name="nfs", source="hostpath")
    nfs.spec.host_path = None  # an NFS source: neither CSI nor in-tree EBS, so no driver and no limit
    h = big_harness(nfs, pvc(volume_name="my-volume", storage_class_name=""))
    initial_node(h)
    pods = [with_volumes(make_pod(f"p{i}"), ["my-claim", "my-claim"]) for i in range(5)]
    h.provision(*pods)
    assert len(h.nodes) == 1


def test_pv_with_multiple_zone_terms_spreads_anti_affine_pods():
    # upstream: S:3047 "should schedule pods using a PV with multiple zones"
    terms = [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": [z]}]} for z in ("test-zone-1", "test-zone-2")]
    objs = [pv(f"multi-zone-pv-{i}", terms=terms) for i in range(2)] + \
        [pvc(f"multi-zone-pvc-{i}", volume_name=f"multi-zone-pv-{i}") for i in range(2)]
    h = big_harness(*objs)
    pods = [with_volumes(make_pod(f"pod-{i}", labels={"app": "multi-zone-app"},
                                  pod_anti_affinity=[pod_affinity_term({"app": "multi-zone-app"}, ZONE)]),
                         [f"multi-zone-pvc-{i}"]) for i in range(2)]
    h.provision(*pods)
    zones = [h.labels_of(p)[ZONE] for p in pods]
    assert set(zones) <= {"test-zone-1", "test-zone-2"} and zones[0] != zones[1]


@pytest.mark.parametrize("source", ["local", "hostpath"])
def test_unconstrained_alternative_survives_hostname_removal(source):
    # upstream: S:3093 DescribeTable "should preserve unconstrained PV alternatives after ignoring hostname affinity"
    terms = [{"matchExpressions": [{"key": HOST, "operator": "In", "values": ["existing-host"]}]},
             {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["invalid-zone"]}]}]
    h = big_harness(pv("hostname-or-zone-pv", terms=terms, source=source),
                    pvc("hostname-or-zone-pvc", volume_name="hostname-or-zone-pv"))
    pod = with_volumes(make_pod("hostname-or-zone-pod"), ["hostname-or-zone-pvc"])
    h.provision(pod)
    assert h.node_of(pod) is not None


def test_storage_class_with_multiple_zone_terms_spreads_anti_affine_pods():
    # upstream: S:3118 "should schedule pods using a StorageClass with multiple zones in AllowedTopologies"
    sc = storage_class("multi-zone-sc", zones=None)
    sc = sc.model_validate({"metadata": {"name": "multi-zone-sc"}, "volumeBindingMode": "WaitForFirstConsumer",
                            "allowedTopologies": [{"matchLabelExpressions": [{"key": ZONE, "values": [z]}]}
                                                  for z in ("test-zone-1", "test-zone-2")]})
    h = big_harness(sc, *[pvc(f"multi-zone-pvc-{i}", storage_class_name="multi-zone-sc") for i in range(2)])
    pods = [with_volumes(make_pod(f"sc-pod-{i}", labels={"app": "multi-zone-sc-app"},
                                  pod_anti_affinity=[pod_affinity_term({"app": "multi-zone-sc-app"}, ZONE)]),
                         [f"multi-zone-pvc-{i}"]) for i in range(2)]
    h.provision(*pods)
    zones = [h.labels_of(p)[ZONE] for p in pods]
    assert set(zones) <= {"test-zone-1", "test-zone-2"} and zones[0] != zones[1]


def test_multi_volume_alternative_survives_pruning_disjoint_branches():
    # upstream: S:3165 "should schedule pods when a valid multi-volume topology alternative remains after pruning disjoint branches"
    ex = fake.EXOTIC_INSTANCE_LABEL_KEY
    sc_a = storage_class("pruned-overlap-a").model_validate({
        "metadata": {"name": "pruned-overlap-a"}, "volumeBindingMode": "WaitForFirstConsumer",
        "allowedTopologies": [{"matchLabelExpressions": [{"key": ex, "values": [v]}]} for v in ("required", "optional")]})
    sc_b = storage_class("pruned-overlap-b").model_validate({
        "metadata": {"name": "pruned-overlap-b"}, "volumeBindingMode": "WaitForFirstConsumer",
        "allowedTopologies": [
            {"matchLabelExpressions": [{"key": ZONE, "values": ["test-zone-1"]}, {"key": ex, "values": ["optional"]}]},
            {"matchLabelExpressions": [{"key": ZONE, "values": ["test-zone-2"]}, {"key": ex, "values": ["required"]}]}]})
    h = big_harness(sc_a, sc_b, pvc("pruned-overlap-pvc-a", storage_class_name="pruned-overlap-a"),
                    pvc("pruned-overlap-pvc-b", storage_class_name="pruned-overlap-b"),
                    instance_types=fake.instance_types(5))
    pod = with_volumes(make_pod("pruned-overlap-pod"), ["pruned-overlap-pvc-a", "pruned-overlap-pvc-b"])
    h.provision(pod)
    labels = h.labels_of(pod)
    assert labels[ZONE] == "test-zone-1" and labels[ex] == "optional"


def _ephemeral_limit_case(h, sc_name):
    first = with_volumes(make_pod("initial"), ephemeral_class=sc_name)
    h.provision(first)
    node = h.node_of(first)
    h.volumes.csi_nodes[node.metadata.name] = csi_node(node.metadata.name, fake_csi_provider=1, other_provider=10)
    second = with_volumes(make_pod("second"), ephemeral_class=sc_name)
    h.provision(second)
    return node, h.node_of(second)


def test_ephemeral_volume_with_its_storage_class_counts_against_that_driver():
    # upstream: S:3204 "should launch nodes for pods with ephemeral volume using the specified storage class name"
    sc = storage_class("my-storage-class", zones=["test-zone-1"], provisioner=CSI)
    other = storage_class("default-storage-class", zones=["test-zone-1"], provisioner="other-provider")
    other.metadata.annotations["storageclass.kubernetes.io/is-default-class"] = "true"
    node, node2 = _ephemeral_limit_case(big_harness(sc, other), "my-storage-class")
    assert node2 is not None and node.metadata.name != node2.metadata.name


def test_ephemeral_volume_without_class_uses_the_default_class():
    # upstream: S:3318 "should launch nodes for pods with ephemeral volume using a default storage class"
    sc = storage_class("default-storage-class", zones=["test-zone-1"], provisioner=CSI)
    sc.metadata.annotations["storageclass.kubernetes.io/is-default-class"] = "true"
    h = big_harness(sc)
    first = with_volumes(make_pod("initial"), ephemeral_class=None)
    first.spec.volumes[0].ephemeral.volume_claim_template["spec"].pop("storageClassName")
    h.provision(first)
    node = h.node_of(first)
    h.volumes.csi_nodes[node.metadata.name] = csi_node(node.metadata.name, fake_csi_provider=1)
    second = with_volumes(make_pod("second"), ephemeral_class=None)
    second.spec.volumes[0].ephemeral.volume_claim_template["spec"].pop("storageClassName")
    h.provision(second)
    assert h.node_of(second) is not None and h.node_of(second).metadata.name != node.metadata.name


def test_newest_default_storage_class_wins():
    # upstream: S:3414 "should launch nodes for pods with ephemeral volume using the newest storage class"
    from datetime import datetime, timezone

    old = storage_class("old", zones=["test-zone-1"], provisioner="other-provider")
    new = storage_class("new", zones=["test-zone-1"], provisioner=CSI)
    for sc, ts in ((old, datetime(2024, 1, 1, tzinfo=timezone.utc)), (new, datetime(2025, 1, 1, tzinfo=timezone.utc))):
        sc.metadata.annotations["storageclass.kubernetes.io/is-default-class"] = "true"
        sc.metadata.creation_timestamp = ts
    h = big_harness(new, old)
    assert h.volumes.default_class.metadata.name == "new"


def test_unbound_immediate_claim_launches_nothing():
    # upstream: S:3662 "should not launch nodes for pod with unbound volume for volumeBindingMode immediate"
    h = big_harness(storage_class("imm", zones=["test-zone-1"], mode="Immediate", provisioner=CSI),
                    pvc(storage_class_name="imm"))
    pod = with_volumes(make_pod("p"), ["my-claim"])
    res = h.provision(pod)
    assert not res.created and h.node_of(pod) is None


def test_deleting_claim_launches_nothing():
    # upstream: S:3684 "should not launch nodes for pod with deleting persistentVolumeClaim"
    claim = pvc(storage_class_name="my-storage-class")
    claim.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    h = big_harness(storage_class("my-storage-class", provisioner=CSI), claim)
    pod = with_volumes(make_pod("p"), ["my-claim"])
    res = h.provision(pod)
    assert not res.created and "persistentvolumeclaim is being deleted" in res.errors[pod.key]


def test_deleting_volume_launches_nothing():
    # upstream: S:3707 "should not launch nodes for pod with bound persistentVolume that is marked for deletion"
    vol = pv(zones=["test-zone-1"])
    vol.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    h = big_harness(vol, pvc(volume_name="my-volume", storage_class_name=""))
    pod = with_volumes(make_pod("p"), ["my-claim"])
    res = h.provision(pod)
    assert not res.created and "persistentvolume is being deleted" in res.errors[pod.key]


def test_lost_claim_launches_nothing():
    # upstream: S:3749 "should not launch nodes for pod with Lost persistentVolumeClaim"
    claim = pvc(volume_name="my-volume", storage_class_name="")
    claim.status.phase = "Lost"
    h = big_harness(pv(zones=["test-zone-1"]), claim)
    pod = with_volumes(make_pod("p"), ["my-claim"])
    res = h.provision(pod)
    assert not res.created and "persistentvolumeclaim bound to non-existent persistentvolume" in res.errors[pod.key]


def test_in_tree_ebs_volume_counts_against_the_ebs_csi_limit():
    # upstream: Context("CSIMigration") (S:3898): an in-tree awsElasticBlockStore PV / kubernetes.io/aws-ebs
    # class resolves to ebs.csi.aws.com (csi-translation-lib)
    vol_a = pv("a", zones=["test-zone-1"], source="hostpath")
    vol_a.spec.host_path = None
    vol_a.spec.aws_elastic_block_store = {"volumeID": "vol-1"}
    h = big_harness(vol_a, pvc("a", volume_name="a", storage_class_name=""),
                    storage_class("gp2", zones=["test-zone-1"], provisioner="kubernetes.io/aws-ebs"),
                    pvc("b", storage_class_name="gp2"))
    node = initial_node(h)
    h.volumes.csi_nodes[node.metadata.name] = csi_node(node.metadata.name, ebs_csi_aws_com=1)
    first = with_volumes(make_pod("p1"), ["a"])
    second = with_volumes(make_pod("p2"), ["b"])
    h.provision(first, second)
    assert len(h.nodes) == 2
