"""End-to-end scenarios: kube-scheduler model + Karpenter's provisioner + the fake cloud provider.

Each scenario is one the issue names; the fake catalogue is Karpenter's default six types
(pkg/cloudprovider/fake), so sizes and prices are the ones upstream's tests use.
"""

from __future__ import annotations

import karpy
from karpy.api.builders import (make_daemonset, make_deployment, make_node, make_nodepool, make_pod,
                                make_priority_class)
from karpy.api.podgroup import PodGroup
from karpy.cloudprovider.fake import FakeCloudProvider


def run(*objects, **kwargs):
    return karpy.simulate(list(objects), cloud_provider=FakeCloudProvider(), region=None, **kwargs)


def pending(name, **kw):
    """A pod as a user writes it: no scheduler condition yet."""
    return make_pod(name, unschedulable=False, **kw)


def existing_node(name="existing", cpu="2500m"):
    return make_node(name, labels={"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": "test-zone-1",
                                   "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"},
                     capacity={"cpu": cpu, "memory": "16Gi", "pods": "110"})


def test_existing_node_takes_two_pods_and_one_nodeclaim_takes_the_third():
    result = run(make_nodepool(), existing_node(),
                 *[pending(f"p{i}", requests={"cpu": "1"}) for i in range(3)])
    doc = result.to_document()
    assert result.exit_code == 0
    assert len(doc["nodeclaims"]) == 1
    claim = doc["nodeclaims"][0]
    assert claim["launched"] and len(claim["pods"]) == 1
    nodes = sorted(p["node"] for p in doc["pods"].values())
    assert nodes.count("existing") == 2 and nodes.count(claim["name"]) == 1
    assert all(p["phase"] == "Running" for p in doc["pods"].values())


def test_high_priority_pod_preempts_instead_of_provisioning():
    # the low-priority pod runs on the only node; the high-priority pod arrives later and preempts it.
    victim = make_pod("low", requests={"cpu": "2"}, priority=0, node_name="existing", unschedulable=False,
                      phase="Running")
    urgent = pending("urgent", requests={"cpu": "2"}, priority=1000)
    urgent.metadata.annotations["karpy.io/arrive-after"] = "30s"
    result = run(make_nodepool(), existing_node(), victim, urgent)
    doc = result.to_document()
    assert doc["pods"]["default/urgent"]["node"] == "existing"
    # a bare pod deleted by preemption has no controller to recreate it
    assert doc["pods"]["default/low"]["phase"] == "Deleted"
    # Karpenter ignored the nominated pod: nothing was launched for it
    assert doc["nodeclaims"] == []
    assert result.exit_code == 0


def test_evicted_replica_of_a_workload_gets_a_new_node():
    deploy = make_deployment("batch", replicas=1, requests={"cpu": "2"}, priority=0)
    urgent = pending("urgent", requests={"cpu": "2"}, priority=1000)
    urgent.metadata.annotations["karpy.io/arrive-after"] = "60s"
    result = run(make_nodepool(requirements=[("node.kubernetes.io/instance-type", "In", ["default-instance-type"])]),
                 existing_node(), deploy, urgent)
    doc = result.to_document()
    assert doc["pods"]["default/urgent"]["node"] == "existing"
    replicas = {k: v for k, v in doc["pods"].items() if k.startswith("default/batch-")}
    assert sorted(v["phase"] for v in replicas.values()) == ["Deleted", "Running"]
    [claim] = doc["nodeclaims"]
    running = [k for k, v in replicas.items() if v["phase"] == "Running"]
    assert claim["pods"] == running
    assert claim["instance_type"] == "default-instance-type"


def test_gang_of_four_binds_only_with_new_capacity():
    group = PodGroup.model_validate({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                                     "metadata": {"name": "train", "namespace": "default"},
                                     "spec": {"minMember": 4}})
    members = [pending(f"w{i}", requests={"cpu": "1500m"}, labels={"scheduling.x-k8s.io/pod-group": "train"})
               for i in range(4)]
    result = run(make_nodepool(), existing_node(cpu="3"), group, *members)
    doc = result.to_document()
    assert result.exit_code == 0
    assert all(doc["pods"][f"default/w{i}"]["phase"] == "Running" for i in range(4))
    assert len(doc["nodeclaims"]) >= 1
    # the existing node alone could hold two members: the gang needed the new capacity
    assert sum(1 for i in range(4) if doc["pods"][f"default/w{i}"]["node"] == "existing") <= 2


def test_gated_pods_are_never_provisioned():
    gated = pending("gated", requests={"cpu": "1"}, scheduling_gates=["example.com/wait"])
    result = run(make_nodepool(), gated)
    doc = result.to_document()
    assert doc["nodeclaims"] == []
    assert doc["pods"]["default/gated"]["phase"] == "Pending"
    assert "example.com/wait" in doc["pods"]["default/gated"]["message"]
    assert result.exit_code == 3


def test_pod_that_fits_no_nodepool_stays_pending_with_the_reason():
    huge = pending("huge", requests={"cpu": "512"})
    result = run(make_nodepool(), huge)
    doc = result.to_document()
    assert doc["nodeclaims"] == []
    message = doc["pods"]["default/huge"]["message"]
    assert "no instance type has enough resources" in message
    assert result.exit_code == 3


def test_daemonset_pods_land_on_every_new_node():
    ds = make_daemonset("agent", requests={"cpu": "100m"})
    result = run(make_nodepool(), ds, *[pending(f"p{i}", requests={"cpu": "1"}) for i in range(2)])
    doc = result.to_document()
    [claim] = doc["nodeclaims"]
    assert any(k.startswith("default/agent-") for k in claim["pods"])
    assert result.exit_code == 0


def test_same_input_gives_byte_identical_json():
    def once():
        return run(make_nodepool(), existing_node(), *[pending(f"p{i}", requests={"cpu": "1"}) for i in range(7)],
                   make_priority_class("high", 100)).to_json()
    assert once() == once()


def _guestbook_rc(replicas: int) -> dict:
    """kubernetes/examples web/guestbook-go/guestbook-controller.yaml (279e8e4, in tests/realworld/data),
    as loaded, with ``replicas`` and a 2-CPU request so each replica needs a node of its own here."""
    import yaml
    from pathlib import Path

    path = Path(__file__).parents[1] / "realworld/data/k8s-examples/web/guestbook-go/guestbook-controller.yaml"
    [rc] = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
    rc["spec"]["replicas"] = replicas
    rc["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2"}}
    return rc


def test_preempted_replicationcontroller_replica_is_recreated_on_a_new_node():
    # as test_evicted_replica_of_a_workload_gets_a_new_node, with the RC from kubernetes/examples
    urgent = pending("urgent", requests={"cpu": "2"}, priority=1000)
    urgent.metadata.annotations["karpy.io/arrive-after"] = "60s"
    result = run(make_nodepool(requirements=[("node.kubernetes.io/instance-type", "In", ["default-instance-type"])]),
                 existing_node(), _guestbook_rc(1), urgent)
    doc = result.to_document()
    assert doc["pods"]["default/urgent"]["node"] == "existing"
    replicas = {k: v for k, v in doc["pods"].items() if k.startswith("default/guestbook-")}
    assert sorted(v["phase"] for v in replicas.values()) == ["Deleted", "Running"]
    assert {v["owner"] for v in replicas.values()} == {"ReplicationController guestbook"}
    [claim] = doc["nodeclaims"]
    assert claim["pods"] == [k for k, v in replicas.items() if v["phase"] == "Running"]


def test_replicationcontroller_applied_scaled_and_deleted_by_events():
    # apply creates the RC's pods, scale (kubectl scale rc/guestbook) adds one, delete removes them all
    # for good: an RC deleted is no longer a controller, so nothing replaces its pods
    result = run(make_nodepool(), events=[{"at": 60, "apply": [_guestbook_rc(2)]},
                                          "120s scale replicationcontroller/guestbook 3",
                                          "300s delete replicationcontroller/guestbook"], until="10m")
    doc = result.to_document()
    pods = {k: v for k, v in doc["pods"].items() if k.startswith("default/guestbook-")}
    assert len(pods) == 3 and {v["phase"] for v in pods.values()} == {"Deleted"}
    created = sorted(e["t"] for e in doc["timeline"] if e["kind"] == "pod.created")
    assert created == [60.0, 60.0, 120.0]
    deleted = [e for e in doc["timeline"] if e["kind"] == "pod.deleted"]
    assert len(deleted) == 3 and all(e["t"] >= 300 for e in deleted)


def test_an_eviction_leaves_the_pod_object_it_replaced_untouched(monkeypatch):
    """_evict copies the metadata and status it changes (no deep copy of the pod); the object it
    replaces in the store -- still held by watchers and earlier snapshots -- keeps its own."""
    from karpy.sim.store import ObjectStore

    replaced = []
    update = ObjectStore.update

    def recording(self, kind, obj, old=None):
        if kind == "Pod" and obj.metadata.deletion_timestamp is not None and old is not None \
                and old.metadata.deletion_timestamp is None:
            replaced.append((old, obj, old.status.phase))
        return update(self, kind, obj, old)

    monkeypatch.setattr(ObjectStore, "update", recording)
    deploy = make_deployment("batch", replicas=1, requests={"cpu": "2"}, priority=0)
    urgent = pending("urgent", requests={"cpu": "2"}, priority=1000)
    urgent.metadata.annotations["karpy.io/arrive-after"] = "60s"
    doc = run(make_nodepool(requirements=[("node.kubernetes.io/instance-type", "In", ["default-instance-type"])]),
              existing_node(), deploy, urgent).to_document()
    [(old, terminating, phase)] = replaced
    assert doc["pods"][terminating.key]["phase"] == "Deleted" and terminating.status.phase == "Deleted"
    assert old.metadata.deletion_timestamp is None and old.status.phase == phase == "Running"
    assert old.spec == terminating.spec and old.metadata.labels == terminating.metadata.labels
