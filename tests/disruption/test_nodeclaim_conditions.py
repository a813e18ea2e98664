"""Ports of pkg/controllers/nodeclaim/disruption/{consolidation,drift,suite}_test.go and
nodeclaim/expiration: the Consolidatable and Drifted conditions and expiry."""

from __future__ import annotations

import pytest

from karpy.api.builders import make_nodepool
from karpy.api.meta import Condition
from karpy.api.nodeclaim import NodeClaim
from tests.disruption.harness import ts
from karpy.nodeclaim.disruption import (CONSOLIDATABLE, DRIFTED, NODEPOOL_DRIFTED, REQUIREMENTS_DRIFTED, drift_reason,
                                        update_consolidatable, update_drifted)
from karpy.nodeclaim.expiration import expires_at
from karpy.provisioning.nodeclaimtemplate import NODEPOOL_HASH_VERSION

CT, OS, ARCH = "karpenter.sh/capacity-type", "kubernetes.io/os", "kubernetes.io/arch"


def claim(labels=None, initialized_at: float | None = 0.0, last_pod_event: float | None = None, annotations=None,
          launched: bool | None = None):
    nc = NodeClaim.model_validate({"metadata": {"name": "nc", "labels": dict(labels or {}),
                                                "annotations": dict(annotations or {})}})
    conds = []
    if initialized_at is not None:
        conds.append(Condition(type="Initialized", status="True", last_transition_time=ts(initialized_at)))
    if launched is not None:
        conds.append(Condition(type="Launched", status="True" if launched else "False"))
    nc.status.conditions = conds
    if last_pod_event is not None:
        nc.status.last_pod_event_time = ts(last_pod_event)
    nc.metadata.creation_timestamp = ts(0)
    return nc


def cond(nc, t):
    return next((c for c in nc.status.conditions if c.type == t), None)


def pool(after="30s", requirements=(), **kw):
    np = make_nodepool(requirements=requirements, **kw)
    np.spec.disruption.consolidate_after = after
    return np


# upstream: nodeclaim/disruption/consolidation_test.go "should mark NodeClaims as consolidatable"
def test_marks_consolidatable_after_consolidate_after():
    nc = claim(initialized_at=0)
    assert update_consolidatable(pool("30s"), nc, 31.0) is None
    assert cond(nc, CONSOLIDATABLE).status == "True"


# upstream: nodeclaim/disruption/consolidation_test.go "should mark NodeClaims as consolidatable based on the nodeclaim initialized time"
def test_uses_initialized_time_without_pod_events():
    nc = claim(initialized_at=100)
    assert update_consolidatable(pool("30s"), nc, 100.0) == 130.0  # requeue at the window's end
    assert cond(nc, CONSOLIDATABLE) is None
    assert update_consolidatable(pool("30s"), nc, 160.0) is None  # env.Clock.Step(1 * time.Minute)
    assert cond(nc, CONSOLIDATABLE).status == "True"


# upstream: nodeclaim/disruption/consolidation_test.go "should remove the status condition from the nodeClaim when lastPodEvent is too recent"
def test_recent_pod_event_clears():
    nc = claim(initialized_at=0)
    update_consolidatable(pool("30s"), nc, 100.0)
    assert cond(nc, CONSOLIDATABLE) is not None
    nc.status.last_pod_event_time = ts(95)
    assert update_consolidatable(pool("30s"), nc, 100.0) == 125.0
    assert cond(nc, CONSOLIDATABLE) is None


# upstream: nodeclaim/disruption/consolidation_test.go "should remove the status condition from the nodeClaim when consolidateAfter is never"
def test_never_clears():
    nc = claim(initialized_at=0)
    update_consolidatable(pool("30s"), nc, 100.0)
    update_consolidatable(pool("Never"), nc, 200.0)
    assert cond(nc, CONSOLIDATABLE) is None


# upstream: nodeclaim/disruption/consolidation_test.go "should remove the status condition from the nodeClaim when the nodeClaim initialization condition is unknown"
# upstream: nodeclaim/disruption/consolidation_test.go "should remove the status condition from the nodeClaim when the nodeClaim is not initialized"
def test_uninitialized_clears():
    for status in ("Unknown", "False"):
        nc = claim(initialized_at=0)
        assert update_consolidatable(pool("0s"), nc, 100.0) is None
        assert cond(nc, CONSOLIDATABLE).status == "True"
        nc.status.conditions = [c for c in nc.status.conditions if c.type != "Initialized"] + [
            Condition(type="Initialized", status=status, last_transition_time=ts(100))]
        assert update_consolidatable(pool("0s"), nc, 100.0) is None
        assert cond(nc, CONSOLIDATABLE) is None, status


# upstream: nodeclaim/disruption/suite_test.go "should not set consolidatable condition for Static Nodepool"
def test_static_nodepool_gets_no_condition():
    nc = claim(initialized_at=0)
    assert update_consolidatable(pool("0s", replicas=2), nc, 100.0) is None
    assert cond(nc, CONSOLIDATABLE) is None


def test_zero_consolidate_after_is_immediate():
    nc = claim(initialized_at=100)
    update_consolidatable(pool("0s"), nc, 100.0)
    assert cond(nc, CONSOLIDATABLE).status == "True"


REQ_CASES = {
    "should return drifted if the nodePool node requirement is updated": (
        [(CT, "In", ["on-demand"]), (ARCH, "In", ["amd64"]), (OS, "In", ["linux"])], [(CT, "In", ["spot"])],
        {CT: "on-demand", ARCH: "amd64", OS: "linux"}, True),
    "should return drifted if a new node requirement is added": (
        [(CT, "In", ["on-demand"]), (OS, "In", ["linux"])],
        [(CT, "In", ["on-demand"]), (OS, "In", ["linux"]), (ARCH, "In", ["amd64"])],
        {CT: "on-demand", OS: "linux"}, True),
    "should return drifted if a node requirement is reduced": (
        [(CT, "In", ["on-demand"]), (OS, "In", ["linux", "windows"])], [(CT, "In", ["on-demand"]), (OS, "In", ["windows"])],
        {CT: "on-demand", OS: "linux"}, True),
    "should not return drifted if a node requirement is expanded": (
        [(CT, "In", ["on-demand"]), (OS, "In", ["linux"])], [(CT, "In", ["on-demand"]), (OS, "In", ["linux", "windows"])],
        {CT: "on-demand", OS: "linux"}, False),
    "should not return drifted if a node requirement set to Exists": (
        [(CT, "In", ["on-demand"]), (OS, "In", ["linux"])], [(CT, "In", ["on-demand"]), (OS, "Exists", [])],
        {CT: "on-demand", OS: "linux"}, False),
    "should return drifted if a node requirement set to DoesNotExists": (
        [(CT, "In", ["on-demand"]), (OS, "In", ["linux"])], [(CT, "In", ["on-demand"]), (OS, "DoesNotExist", [])],
        {CT: "on-demand", OS: "linux"}, True),
    "should return drifted if a nodeClaim is greater then node requirement": (
        [(CT, "In", ["on-demand"]), ("test-label", "Gt", ["2"])], [(CT, "In", ["on-demand"]), ("test-label", "Gt", ["10"])],
        {CT: "on-demand", "test-label": "5"}, True),
    "should return drifted if a nodeClaim is less then node requirement": (
        [(CT, "In", ["on-demand"]), ("test-label", "Lt", ["5"])], [(CT, "In", ["on-demand"]), ("test-label", "Lt", ["1"])],
        {CT: "on-demand", "test-label": "2"}, True),
}


# upstream: nodeclaim/disruption/drift_test.go DescribeTable "NodeRequirement Drift" (8 entries)
@pytest.mark.parametrize("entry", sorted(REQ_CASES))
def test_node_requirement_drift(entry):
    old, new, labels, drifted = REQ_CASES[entry]
    nc = claim(labels=labels)
    np_old = make_nodepool(requirements=old)
    nc.metadata.annotations = {"karpenter.sh/nodepool-hash": np_old.hash(),
                               "karpenter.sh/nodepool-hash-version": NODEPOOL_HASH_VERSION}
    assert update_drifted(np_old, nc, 10.0) is None and cond(nc, DRIFTED) is None
    np_new = make_nodepool(requirements=new)
    reason = update_drifted(np_new, nc, 20.0)
    if drifted:
        assert reason == REQUIREMENTS_DRIFTED and cond(nc, DRIFTED).status == "True"
    else:
        assert reason is None and cond(nc, DRIFTED) is None


STATIC = {
    "Annotations": dict(annotations={"keyAnnotationTest": "valueAnnotationTest"}),
    "Labels": dict(labels={"keyLabelTest": "valueLabelTest"}),
    "Taints": dict(taints=[{"key": "keytest2taint", "effect": "NoExecute"}]),
    "StartupTaints": dict(startup_taints=[{"key": "keytest2taint", "effect": "NoExecute"}]),
    "NodeClassRef Name": dict(node_class_ref={"group": "karpenter.test.sh", "kind": "TestNodeClass", "name": "testName"}),
    "ExpireAfter": dict(expire_after="100m"),
    "TerminationGracePeriod": dict(termination_grace_period="100m"),
}


# upstream: nodeclaim/disruption/drift_test.go DescribeTable "should detect drift on changes to the static fields" (7 entries)
@pytest.mark.parametrize("field", sorted(STATIC))
def test_static_field_drift(field):
    base = make_nodepool()
    nc = claim(annotations={"karpenter.sh/nodepool-hash": base.hash(),
                            "karpenter.sh/nodepool-hash-version": NODEPOOL_HASH_VERSION})
    assert drift_reason(base, nc) is None
    changed = make_nodepool(**STATIC[field])
    assert drift_reason(changed, nc) == NODEPOOL_DRIFTED


# upstream: nodeclaim/disruption/drift_test.go "should not return drifted if karpenter.sh/nodepool-hash annotation is not present on the NodeClaim"
# upstream: nodeclaim/disruption/drift_test.go "should not return drifted if karpenter.sh/nodepool-hash-version annotation is not present on the NodeClaim"
# upstream: nodeclaim/disruption/drift_test.go "should not return drifted if the NodeClaim's karpenter.sh/nodepool-hash-version annotation does not match the NodePool's"
def test_hash_annotation_rules():
    np = make_nodepool(labels={"a": "b"})
    assert drift_reason(np, claim(annotations={"karpenter.sh/nodepool-hash-version": NODEPOOL_HASH_VERSION})) is None
    assert drift_reason(np, claim(annotations={"karpenter.sh/nodepool-hash": "test-hash-111111111"})) is None
    np.metadata.annotations = {"karpenter.sh/nodepool-hash": "test-hash-1", "karpenter.sh/nodepool-hash-version": "test-version-1"}
    assert drift_reason(np, claim(annotations={"karpenter.sh/nodepool-hash": "test-hash-2",
                                               "karpenter.sh/nodepool-hash-version": "test-version-2"})) is None
    assert drift_reason(np, claim(annotations={"karpenter.sh/nodepool-hash": "test-hash-2",
                                               "karpenter.sh/nodepool-hash-version": "test-version-1"})) == NODEPOOL_DRIFTED


# upstream: nodeclaim/disruption/drift_test.go "should remove the status condition from the nodeClaim if the nodeClaim is no longer drifted"
# (and a NodeClaim whose Launched condition is False is never marked)
def test_launched_gating_and_undrift():
    np_old = make_nodepool()
    nc = claim(annotations={"karpenter.sh/nodepool-hash": np_old.hash(),
                            "karpenter.sh/nodepool-hash-version": NODEPOOL_HASH_VERSION}, launched=False)
    changed = make_nodepool(labels={"x": "y"})
    assert update_drifted(changed, nc, 1.0) is None and cond(nc, DRIFTED) is None
    nc.status.conditions = [c for c in nc.status.conditions if c.type != "Launched"]
    assert update_drifted(changed, nc, 2.0) == NODEPOOL_DRIFTED
    assert cond(nc, DRIFTED).reason == NODEPOOL_DRIFTED
    assert update_drifted(np_old, nc, 3.0) is None and cond(nc, DRIFTED) is None


# upstream: nodeclaim/disruption/drift_test.go "should detect drift from the cloud provider"
def test_cloud_provider_drift():
    class Provider:
        def is_drifted(self, nc):
            return "CloudProviderDrifted"

    np = make_nodepool()
    nc = claim(annotations={"karpenter.sh/nodepool-hash": np.hash(),
                            "karpenter.sh/nodepool-hash-version": NODEPOOL_HASH_VERSION})
    assert drift_reason(np, nc, Provider()) == "CloudProviderDrifted"


# upstream: nodeclaim/expiration/suite_test.go "should delete a NodeClaim after expireAfter" / "should not expire when Never"
def test_expires_at():
    nc = claim()
    nc.spec.expire_after = "10m"
    assert expires_at(nc) == 600.0
    nc.spec.expire_after = "Never"
    assert expires_at(nc) is None


class _DriftedProvider:
    """fake.CloudProvider with ``cp.Drifted = "drifted"``."""

    def is_drifted(self, nc):
        return "drifted"


def _hashed(np, **kw):
    return claim(annotations={"karpenter.sh/nodepool-hash": np.hash(),
                              "karpenter.sh/nodepool-hash-version": NODEPOOL_HASH_VERSION}, **kw)


# upstream: nodeclaim/disruption/drift_test.go "should detect static drift before cloud provider drift"
def test_static_drift_before_cloud_provider_drift():
    np = make_nodepool(annotations=None)
    np.metadata.annotations = {"karpenter.sh/nodepool-hash": "test-123456789",
                               "karpenter.sh/nodepool-hash-version": NODEPOOL_HASH_VERSION}
    nc = claim(annotations={"karpenter.sh/nodepool-hash": "test-123",
                            "karpenter.sh/nodepool-hash-version": NODEPOOL_HASH_VERSION}, launched=True)
    assert update_drifted(np, nc, 1.0, _DriftedProvider()) == NODEPOOL_DRIFTED
    assert cond(nc, DRIFTED).status == "True" and cond(nc, DRIFTED).reason == NODEPOOL_DRIFTED


# upstream: nodeclaim/disruption/drift_test.go "should detect node requirement drift before cloud provider drift"
def test_requirement_drift_before_cloud_provider_drift():
    np = make_nodepool(requirements=[("node.kubernetes.io/instance-type", "DoesNotExist")])
    nc = _hashed(np, labels={"node.kubernetes.io/instance-type": "default-instance-type"}, launched=True)
    assert update_drifted(np, nc, 1.0, _DriftedProvider()) == REQUIREMENTS_DRIFTED
    assert cond(nc, DRIFTED).reason == REQUIREMENTS_DRIFTED


# upstream: nodeclaim/disruption/drift_test.go "should remove the status condition from the nodeClaim when the nodeClaim launch condition is unknown"
# upstream: nodeclaim/disruption/drift_test.go "should remove the status condition from the nodeClaim when the nodeClaim launch condition is false"
def test_launch_condition_not_true_clears_drifted():
    for status in ("Unknown", "False"):
        np = make_nodepool()
        nc = _hashed(np, launched=True)
        assert update_drifted(np, nc, 1.0, _DriftedProvider()) == "drifted"
        nc.status.conditions = [c for c in nc.status.conditions if c.type != "Launched"] + [
            Condition(type="Launched", status=status)]
        assert update_drifted(np, nc, 2.0, _DriftedProvider()) is None
        assert cond(nc, DRIFTED) is None, status


# upstream: nodeclaim/disruption/drift_test.go NodeRequirement Drift "should return drifted only on NodeClaims that are drifted from an updated nodePool"
def test_requirement_drift_only_on_the_claims_it_excludes():
    both = [(CT, "In", ["on-demand"]), (OS, "In", ["linux", "windows"])]
    np = make_nodepool(requirements=both)
    linux = _hashed(np, labels={CT: "on-demand", OS: "linux"}, launched=True)
    windows = _hashed(np, labels={CT: "on-demand", OS: "windows"}, launched=True)
    assert update_drifted(np, linux, 1.0) is None and update_drifted(np, windows, 1.0) is None
    np.spec.template.spec.requirements = make_nodepool(requirements=[(CT, "In", ["on-demand"]),
                                                                     (OS, "In", ["linux"])]).spec.template.spec.requirements
    np.metadata.annotations = {"karpenter.sh/nodepool-hash": linux.metadata.annotations["karpenter.sh/nodepool-hash"],
                               "karpenter.sh/nodepool-hash-version": NODEPOOL_HASH_VERSION}  # requirements are not hashed
    assert update_drifted(np, linux, 2.0) is None and cond(linux, DRIFTED) is None
    assert update_drifted(np, windows, 2.0) == REQUIREMENTS_DRIFTED and cond(windows, DRIFTED).status == "True"


# upstream: nodeclaim/disruption/suite_test.go "should set multiple disruption conditions simultaneously"
def test_sets_drifted_and_consolidatable_together():
    np = pool("30s", disruption={"consolidationPolicy": "WhenEmpty"})
    np.spec.disruption.consolidate_after = "30s"
    nc = _hashed(np, initialized_at=0, launched=True)
    now = 60.0  # env.Clock.Step(60 * time.Second)
    update_drifted(np, nc, now, _DriftedProvider())
    update_consolidatable(np, nc, now)
    assert cond(nc, DRIFTED).status == "True" and cond(nc, CONSOLIDATABLE).status == "True"


# upstream: nodeclaim/disruption/suite_test.go "should remove multiple disruption conditions simultaneously"
def test_removes_drifted_and_consolidatable_together():
    np = pool("Never")
    nc = _hashed(np, initialized_at=0, launched=True)
    nc.status.conditions += [Condition(type=DRIFTED, status="True", last_transition_time=ts(0)),
                             Condition(type=CONSOLIDATABLE, status="True", last_transition_time=ts(0))]
    update_drifted(np, nc, 10.0)
    update_consolidatable(np, nc, 10.0)
    assert cond(nc, DRIFTED) is None and cond(nc, CONSOLIDATABLE) is None
