"""NodePool runtime validation and readiness (karpy.provisioning.nodepoolvalidation).

Ports of pkg/controllers/nodepool/validation/suite_test.go (V:<line>) and the provisioner's
"no dynamic nodepools found" for a lone pool that validation marks NotReady
(pkg/controllers/provisioning/provisioner.go Schedule, ErrNodePoolsNotFound)."""

from __future__ import annotations

from karpy.api.builders import make_nodepool, make_pod
from karpy.cloudprovider import fake
from karpy.provisioning.nodepoolvalidation import nodepool_is_ready, runtime_validate
from tests.provisioning.harness import expect_provisioned
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS

CT = "karpenter.sh/capacity-type"
WK = CORE_WELL_KNOWN_LABELS | frozenset(fake.FakeCloudProvider().well_known_labels())


def test_only_invalid_capacity_types_fail_validation():
    # upstream: V:70 "should fail validation with only invalid capacity types"
    np = make_nodepool(requirements=[(CT, "In", ["xspot"])])
    err = runtime_validate(np, WK)
    assert err is not None and "no valid values found in [xspot] for karpenter.sh/capacity-type" in err
    assert not nodepool_is_ready(np, WK)


def test_valid_capacity_types_pass_validation():
    # upstream: V:83 "should pass validation with valid capacity types"
    np = make_nodepool(requirements=[(CT, "In", ["on-demand"])])
    assert runtime_validate(np, WK) is None and nodepool_is_ready(np, WK)


def test_invalid_and_valid_capacity_types_fail_open():
    # upstream: V:97 "should fail open if invalid and valid capacity types are present"
    np = make_nodepool(requirements=[(CT, "In", ["on-demand", "xspot"])])
    assert runtime_validate(np, WK) is None and nodepool_is_ready(np, WK)


def test_healthy_nodepool_validates():
    # upstream: V:123 "should set the NodePoolValidationSucceeded status condition to true if nodePool healthy checks succeed"
    assert runtime_validate(make_nodepool(), WK) is None


def test_overlong_taint_key_fails_validation():
    # upstream: V:131 "should set the NodePoolValidationSucceeded status condition to false if nodePool validation failed"
    np = make_nodepool(taints=[{"key": "test.com.test." + "a" * 250 + "/test", "effect": "NoSchedule"}])
    err = runtime_validate(np, WK)
    assert err is not None and err.startswith("invalid value: ") and err.endswith(" in taints")
    assert not nodepool_is_ready(np, WK)


def test_duplicate_taint_across_taints_and_startup_taints():
    # upstream: nodeclaim_validation.go validateTaintsField (existing map spans both fields)
    np = make_nodepool(taints=[("a", "", "NoSchedule")], startup_taints=[("a", "", "NoSchedule")])
    assert runtime_validate(np, WK) == "duplicate taint Key/Effect pair a=NoSchedule"


def test_restricted_template_label_fails_validation():
    # upstream: nodepool_validation.go validateLabels (karpenter.sh/nodepool is restricted)
    np = make_nodepool(labels={"karpenter.sh/nodepool": "x"})
    assert 'invalid key name "karpenter.sh/nodepool" in labels, restricted' in runtime_validate(np, WK)


def test_lone_invalid_nodepool_reports_no_dynamic_nodepools():
    # upstream: provisioner.go Schedule: the only pool is NotReady -> ErrNodePoolsNotFound ->
    # every pod is marked "no dynamic nodepools found"
    p = make_pod("p")
    h, res = expect_provisioned([p], [make_nodepool(requirements=[(CT, "In", ["xspot"])])])
    assert not res.created and res.errors[p.key] == "no dynamic nodepools found"
    assert list(h.provisioner.not_ready) == ["default"]
    assert "is not ready and was ignored (NodePoolValidationFailed: " in h.provisioner.warnings()[0]


def test_invalid_pool_is_skipped_and_valid_pool_provisions():
    # upstream: provisioner.go NewScheduler filters NotReady pools, the others still schedule
    p = make_pod("p")
    bad = make_nodepool("bad", weight=100, requirements=[(CT, "In", ["xspot"])])
    h, res = expect_provisioned([p], [bad, make_nodepool("good")])
    assert h.labels_of(p)["karpenter.sh/nodepool"] == "good"
