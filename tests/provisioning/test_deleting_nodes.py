"""Pods on deleting nodes that must stay put: PDB-fully-blocked and do-not-disrupt pods.

Ports of pkg/controllers/provisioning/scheduling/suite_test.go Describe("Deleting Nodes")
DescribeTable "should not reschedule pods from a deleting node when pods are blocked due to fully
blocking PDBs" (S:4244-4315), plus the do-not-disrupt half of pkg/utils/pdb IsCurrentlyReschedulable
(pod IsDisruptable) and the provisioning NodeController (controller.go:107-125): a node carrying
the disrupted taint starts a provisioning pass by itself.
(The other Its of the Describe are in test_scheduler_suite.py.)"""

from __future__ import annotations

import pytest

from karpy.api.builders import make_nodepool, make_pod
from karpy.api.poddisruptionbudget import PodDisruptionBudget
from karpy.cloudprovider.fake import FakeCloudProvider
from tests.provisioning.harness import Harness
from karpy.sim.simulation import Simulation, SimulationOptions
from karpy.api.loader import load_manifests
from tests.manifests import DEFAULT_NODEPOOL

IT = "node.kubernetes.io/instance-type"
CT_REQ = ("karpenter.sh/capacity-type", "In", ["spot", "on-demand", "reserved"])
POD_LABELS = {"app": "pdb-test"}


def pdb(name="pdb", **spec):
    return PodDisruptionBudget.model_validate({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": POD_LABELS}, **spec}})


def _provisioned_and_marked(h, **pod_kw):
    p = make_pod("p", labels=POD_LABELS, requests={"memory": "100M"}, **pod_kw)
    h.provision(p)
    node = h.node_of(p)
    assert node.metadata.labels[IT] == "small-instance-type"
    h.marked_for_deletion.add(node.metadata.name)
    return p, node


@pytest.mark.parametrize("pdbs", [
    # upstream: S:4292 Entry "0 max unavailable"
    [pdb(maxUnavailable=0)],
    # upstream: S:4296 Entry "0% max unavailable"
    [pdb(maxUnavailable="0%")],
    # upstream: S:4300 Entry "100% min available"
    [pdb(minAvailable="100%")],
    # upstream: S:4304 Entry "multiple PDBs on the same pod"
    [pdb("pdb-1", minAvailable="100%"), pdb("pdb-2", minAvailable="100%")],
], ids=["0-max-unavailable", "0pct-max-unavailable", "100pct-min-available", "multiple-pdbs"])
def test_fully_blocking_pdbs_keep_deleting_node_pods(pdbs):
    # upstream: S:4244 "should not reschedule pods from a deleting node when pods are blocked due to fully blocking PDBs"
    h = Harness([make_nodepool(requirements=[CT_REQ])])
    p = make_pod("p", labels=POD_LABELS, requests={"memory": "100M"})
    h.provision(p)
    h.pdbs.extend(pdbs)
    node = h.node_of(p)
    assert node.metadata.labels[IT] == "small-instance-type"
    h.marked_for_deletion.add(node.metadata.name)
    h.provision()
    assert len(h.nodes) == 1


def test_partially_blocking_pdb_still_reschedules():
    # upstream: pdb.go isFullyBlocking -- minAvailable as an integer is not fully blocking
    # (IsCurrentlyReschedulable uses the fully-blocked check, not disruptionsAllowed)
    h = Harness([make_nodepool(requirements=[CT_REQ])])
    _provisioned_and_marked(h)
    h.pdbs.append(pdb(minAvailable=1))
    h.provision()
    assert len(h.nodes) == 2


@pytest.mark.parametrize("value,start,now,rescheduled", [
    ("true", None, 0.0, False),        # IsDoNotDisruptActive: "true" always protects
    ("10m", "start", 60.0, False),     # duration not yet elapsed since status.startTime
    ("10m", "start", 601.0, True),     # grace period elapsed: disruptable again
    ("not-a-duration", None, 0.0, True),  # invalid annotation is ignored
])
def test_do_not_disrupt_pods_on_deleting_nodes(value, start, now, rescheduled):
    # upstream: pkg/utils/pdb IsCurrentlyReschedulable -> pod.IsDisruptable (do-not-disrupt, duration form)
    from karpy.sim.clock import EPOCH

    h = Harness([make_nodepool(requirements=[CT_REQ])])
    p, _ = _provisioned_and_marked(h, annotations={"karpenter.sh/do-not-disrupt": value})
    p.status.phase = "Running"
    if start:
        p.status.start_time = EPOCH
    h.now = now
    h.provision()
    assert len(h.nodes) == (2 if rescheduled else 1)


DISRUPTED = DEFAULT_NODEPOOL + """---
apiVersion: v1
kind: Node
metadata:
  name: old
  labels: {kubernetes.io/hostname: old, topology.kubernetes.io/zone: test-zone-1, kubernetes.io/arch: amd64,
           kubernetes.io/os: linux}
spec:
  taints: [{key: karpenter.sh/disrupted, effect: NoSchedule}]
status:
  capacity: {cpu: "4", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
"""


def test_disrupted_taint_on_a_node_starts_a_provisioning_pass():
    # upstream: pkg/controllers/provisioning/controller.go NodeController.Reconcile: a node with
    # karpenter.sh/disrupted:NoSchedule triggers the provisioner (no pod needs to be pending)
    sim = Simulation(load_manifests(DISRUPTED), FakeCloudProvider(), SimulationOptions(time_limit=60))
    out = sim.run()
    assert out.provisioning_passes >= 1
    plain = Simulation(load_manifests(DISRUPTED.replace("taints: [{key: karpenter.sh/disrupted, effect: NoSchedule}]",
                                                        "taints: []")), FakeCloudProvider(),
                       SimulationOptions(time_limit=60))
    assert plain.run().provisioning_passes == 0
