"""Issue #12 paths on real data: us-east-1, the 2026-07-20 price table, the AWS provider on moto.

* volume topology: a StatefulSet whose default gp3 class (WaitForFirstConsumer) allows only
  us-east-1b launches there, and a pod whose bound EBS PV lives in us-east-1c launches in 1c;
* pod-level resources: a pod asking 4 cpu at pod level (containers 1 cpu) gets an instance with
  at least 4 vCPU;
* default topology spread (``--scheduler-config``): three replicas land in three zones.
"""

from __future__ import annotations

import pytest

import karpy
from karpy.sim.simulation import SimulationOptions
from tests.manifests import nodepool_yaml

POOL = nodepool_yaml("{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}",
                     "{key: karpenter.k8s.aws/instance-family, operator: In, values: [m7i, c7i, r7i]}")

VOLUMES = POOL + """
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: gp3
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [us-east-1b]}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: pg, image: postgres, resources: {requests: {cpu: "2", memory: 4Gi}}}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 50Gi}}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: legacy-data}
spec:
  capacity: {storage: 100Gi}
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-0abc}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1c]}]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: legacy-data, annotations: {pv.kubernetes.io/bind-completed: "yes"}}
spec: {accessModes: [ReadWriteOnce], volumeName: legacy-data, storageClassName: ""}
---
apiVersion: v1
kind: Pod
metadata: {name: legacy}
spec:
  containers: [{name: app, image: busybox, resources: {requests: {cpu: "1", memory: 1Gi}}}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: legacy-data}}]
"""

OPTS = SimulationOptions(time_limit=600)


@pytest.fixture(scope="module")
def volume_run():
    return karpy.simulate(VOLUMES, prices="2026-07-20", options=OPTS)


def test_statefulset_claims_pin_to_the_storage_class_zone_on_real_prices(volume_run):
    doc = volume_run.to_document()
    assert volume_run.exit_code == 0
    for key in ("default/db-0", "default/db-1"):
        node = doc["pods"][key]["node"]
        [claim] = [c for c in doc["nodeclaims"] if c["name"] == node]
        assert claim["zone"] == "us-east-1b" and claim["instance_type"].split(".")[0] in ("m7i", "c7i", "r7i")
        assert claim["price"] > 0


def test_bound_pv_pins_its_pod_to_the_volume_zone_on_real_prices(volume_run):
    doc = volume_run.to_document()
    node = doc["pods"]["default/legacy"]["node"]
    [claim] = [c for c in doc["nodeclaims"] if c["name"] == node]
    assert claim["zone"] == "us-east-1c"
    zone_req = next(r for r in claim["requirements"] if r["key"] == "topology.kubernetes.io/zone")
    assert zone_req["values"] == ["us-east-1c"]


def test_pod_level_resources_size_the_instance_on_real_prices():
    text = POOL + """
---
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  resources: {requests: {cpu: "4", memory: 8Gi}}
  containers: [{name: a, image: nginx, resources: {requests: {cpu: "1", memory: 1Gi}}}]
"""
    result = karpy.simulate(text, prices="2026-07-20", options=OPTS)
    doc = result.to_document()
    assert result.exit_code == 0
    [claim] = doc["nodeclaims"]
    assert int(claim["labels"]["karpenter.k8s.aws/instance-cpu"]) > 4  # 4 cpu + kube-reserved


def test_default_spread_from_scheduler_config_on_real_prices():
    text = POOL + """
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx, resources: {requests: {cpu: "1", memory: 2Gi}}}]}
"""
    cfg = ("podTopologySpread:\n  defaultConstraints:\n"
           "  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}\n")
    spread = karpy.simulate(text, prices="2026-07-20", options=OPTS, scheduler_config=cfg).to_document()
    assert len({c["zone"] for c in spread["nodeclaims"]}) == 3
    packed = karpy.simulate(text, prices="2026-07-20", options=OPTS).to_document()
    assert len(packed["nodeclaims"]) == 1 and spread["cost_per_hour"] > packed["cost_per_hour"]


#: the EC2NodeClass of the reserved-capacity scenarios: selects the reservations tagged team=web
RESERVED_NODECLASS = """
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole-prod
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}]
  capacityReservationSelectorTerms: [{tags: {team: web}}]
"""

RESERVED_NETWORK = """
apiVersion: karpy.io/v1alpha1
kind: Network
metadata: {name: prod}
spec:
  subnets:
  - {zone: us-east-1a, tags: {karpenter.sh/discovery: prod}}
  - {zone: us-east-1b, tags: {karpenter.sh/discovery: prod}}
  securityGroups:
  - {tags: {karpenter.sh/discovery: prod}}
  capacityReservations:
  - {id: cr-0a1b2c3d4e5f60001, instanceType: m7i.xlarge, zone: us-east-1a, instanceCount: 4, availableCount: 3,
     instanceMatchCriteria: targeted, tags: {team: web}}
---""" + RESERVED_NODECLASS + "---\n" + nodepool_yaml("{key: karpenter.sh/capacity-type, operator: In, values: [reserved, on-demand]}",
                    "{key: karpenter.k8s.aws/instance-family, operator: In, values: [m7i]}") + """---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx, resources: {requests: {cpu: "3", memory: 8Gi}}}]}
"""


def test_a_reservation_absorbs_the_first_pods_on_real_prices():
    # Reserved capacity (issue #12): the 3 available instances of the ODCR take the first 3 pods
    # (reserved is ordered first; strict reserved mode holds the other pods back while the
    # reservation is held), the other 2 pods go on-demand in the next provisioning pass.
    result = karpy.simulate(RESERVED_NETWORK, prices="2026-07-20", options=OPTS)
    doc = result.to_document()
    assert result.exit_code == 0
    created = [(t["t"], t["detail"]["pods"]) for t in doc["timeline"] if t["kind"] == "nodeclaim.created"]
    assert created == [(1.0, 1), (1.0, 1), (1.0, 1), (11.0, 2)]
    reserved = [c for c in doc["nodeclaims"] if c["capacity_type"] == "reserved"]
    others = [c for c in doc["nodeclaims"] if c["capacity_type"] != "reserved"]
    assert len(reserved) == 3 and sum(len(c["pods"]) for c in reserved) == 3
    for c in reserved:
        assert (c["instance_type"], c["zone"]) == ("m7i.xlarge", "us-east-1a")
        assert c["labels"]["karpenter.k8s.aws/capacity-reservation-id"] == "cr-0a1b2c3d4e5f60001"
        assert c["labels"]["karpenter.k8s.aws/capacity-reservation-type"] == "default"
        crv = c["fleet"]["capacity_reservation"]
        # Karpenter's reserved offering price: on-demand / 10^7 (the reservation is paid for anyway)
        assert crv["on_demand_price"] == pytest.approx(0.2016)
        assert crv["offering_price"] == pytest.approx(0.2016 / 10_000_000)
        assert c["price"] == pytest.approx(0.0, abs=1e-6)
    assert others and {c["capacity_type"] for c in others} == {"on-demand"}
    assert sum(len(c["pods"]) for c in others) == 2
    assert all(c["price"] > 0 for c in others)
    assert all("capacity_reservation" not in c["fleet"] for c in others)
    assert doc["cost_per_hour"] == pytest.approx(sum(c["price"] for c in others), abs=1e-5)


def test_reserved_capacity_gate_off_ignores_the_reservation_on_real_prices():

    doc = karpy.simulate(RESERVED_NETWORK, prices="2026-07-20", options=OPTS,
                         feature_gates={"ReservedCapacity": False}).to_document()
    assert doc["nodeclaims"] and all(c["capacity_type"] != "reserved" for c in doc["nodeclaims"])


def test_a_capacity_block_launches_into_its_block_on_real_prices():
    text = RESERVED_NETWORK.replace(
        "instanceCount: 4, availableCount: 3,\n     instanceMatchCriteria: targeted,",
        "instanceCount: 1, reservationType: capacity-block, endTime: '2026-01-03T00:00:00Z',\n"
        "     instanceMatchCriteria: targeted,").replace("replicas: 5", "replicas: 1")
    doc = karpy.simulate(text, prices="2026-07-20", options=OPTS).to_document()
    [claim] = doc["nodeclaims"]
    assert claim["capacity_type"] == "reserved"
    assert claim["labels"]["karpenter.k8s.aws/capacity-reservation-type"] == "capacity-block"
    assert claim["fleet"]["capacity_reservation"]["type"] == "capacity-block"
    assert claim["fleet"]["allocation_strategy"] == ""  # types.go Build: no OnDemandOptions for a capacity block
