"""NodePool admission against the shipped CRD — ported from kubernetes-sigs/karpenter 2266468
``pkg/apis/v1/nodepool_validation_cel_test.go`` (Describe "CEL/Validation"). Each case names its It;
``True`` = ``Expect(env.Client.Create(ctx, nodePool)).To(Succeed())``."""

from __future__ import annotations

import pytest

from karpy.admission import admit
from tests.admission.conftest import DELETE, errors_of, patched

# upstream BeforeEach: a NodePool with a test nodeClassRef and one capacity-type requirement
BASE = {
    "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "np"},
    "spec": {"template": {"spec": {
        "nodeClassRef": {"group": "karpenter.test.sh", "kind": "TestNodeClass", "name": "default"},
        "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "Exists"}],
    }}},
}
REQS = "spec.template.spec.requirements"
ZONE = "topology.kubernetes.io/zone"


def req(key: str, operator: str, values: list[str] | None = None, **extra: object) -> dict[str, object]:
    out: dict[str, object] = {"key": key, "operator": operator, **extra}
    if values is not None:
        out["values"] = values
    return out


def budget(nodes: str = "10", schedule: str | None = None, duration: str | None = None,
           reasons: list[str] | None = None) -> dict[str, object]:
    out: dict[str, object] = {"nodes": nodes}
    for k, v in (("schedule", schedule), ("duration", duration), ("reasons", reasons)):
        if v is not None:
            out[k] = v
    return out


BUDGETS = "spec.disruption.budgets"
# metav1.Duration marshals as Go's time.Duration.String(): 20m -> "20m0s"
CASES: list[tuple[str, dict[str, object], bool]] = [
    # Context("Disruption")
    ("should succeed on a disabled expireAfter", {"spec.template.spec.expireAfter": "Never"}, True),
    *[(f"should succeed on a valid expireAfter [{v}]", {"spec.template.spec.expireAfter": v}, True)
      for v in ("30s", "1h30m5s", "Never")],
    *[(f"should fail on an invalid expireAfter [{v}]", {"spec.template.spec.expireAfter": v}, False)
      for v in ("-1s", "1hr", "FooNever")],
    ("should succeed on a disabled consolidateAfter", {"spec.disruption.consolidateAfter": "Never"}, True),
    *[(f"should succeed on a valid consolidateAfter [{v}]", {"spec.disruption.consolidateAfter": v}, True)
      for v in ("30s", "1h30m5s", "Never")],
    *[(f"should fail on an invalid consolidateAfter [{v}]", {"spec.disruption.consolidateAfter": v}, False)
      for v in ("-1s", "1hr", "FooNever")],
    ("should succeed when setting consolidateAfter with consolidationPolicy=WhenEmpty",
     {"spec.disruption.consolidateAfter": "30s", "spec.disruption.consolidationPolicy": "WhenEmpty"}, True),
    ("should succeed when setting consolidateAfter with consolidationPolicy=WhenUnderutilized",
     {"spec.disruption.consolidateAfter": "30s",
      "spec.disruption.consolidationPolicy": "WhenEmptyOrUnderutilized"}, True),
    ("should succeed when setting consolidateAfter to 'Never' with consolidationPolicy=WhenUnderutilized",
     {"spec.disruption.consolidateAfter": "Never",
      "spec.disruption.consolidationPolicy": "WhenEmptyOrUnderutilized"}, True),
    ("should succeed when setting consolidateAfter to 'Never' with consolidationPolicy=WhenEmpty",
     {"spec.disruption.consolidateAfter": "Never", "spec.disruption.consolidationPolicy": "WhenEmpty"}, True),
    *[(f"should succeed on a valid consolidationPolicy [{v}]", {"spec.disruption.consolidationPolicy": v}, True)
      for v in ("WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced")],
    *[(f"should fail on an invalid consolidationPolicy [{v!r}]", {"spec.disruption.consolidationPolicy": v}, False)
      for v in ("1", "2", "3", "0", "4", "10", "balanced", "whenempty", "", "WhenUnderutilized", "foo")],
    ("should fail when creating a budget with an invalid cron",
     {BUDGETS: [budget(schedule="*", duration="20m0s")]}, False),
    ("should fail when creating a schedule with less than 5 entries",
     {BUDGETS: [budget(schedule="* * * * ", duration="20m0s")]}, False),
    ("should fail when creating a budget with a negative duration",
     {BUDGETS: [budget(schedule="* * * * *", duration="-20m0s")]}, False),
    ("should fail when creating a budget with a seconds duration",
     {BUDGETS: [budget(schedule="* * * * *", duration="30s")]}, False),
    ("should fail when creating a budget with a negative value int", {BUDGETS: [budget("-10")]}, False),
    ("should fail when creating a budget with a negative value percent", {BUDGETS: [budget("-10%")]}, False),
    ("should fail when creating a budget with a value percent with more than 3 digits",
     {BUDGETS: [budget("1000%")]}, False),
    ("should fail when creating a budget with a cron but no duration",
     {BUDGETS: [budget(schedule="* * * * *")]}, False),
    ("should fail when creating a budget with a duration but no cron", {BUDGETS: [budget(duration="20m0s")]}, False),
    ("should succeed when creating a budget with both duration and cron",
     {BUDGETS: [budget(schedule="* * * * *", duration="20m0s")]}, True),
    ("should succeed when creating a budget with hours and minutes in duration",
     {BUDGETS: [budget(schedule="* * * * *", duration="2h20m0s")]}, True),
    ("should succeed when creating a budget with neither duration nor cron", {BUDGETS: [budget()]}, True),
    ("should succeed when creating a budget with special cased crons",
     {BUDGETS: [budget(schedule="@annually", duration="20m0s")]}, True),
    ("should fail when creating two budgets where one has an invalid crontab",
     {BUDGETS: [budget(schedule="@annually", duration="20m0s"), budget(schedule="*", duration="20m0s")]}, False),
    ("should fail when creating multiple budgets where one doesn't have both schedule and duration",
     {BUDGETS: [budget(duration="20m0s"), budget(schedule="* * * * *", duration="20m0s"), budget()]}, False),
    *[(f"should succeed when creating a budget with valid reasons [{r}]",
       {BUDGETS: [budget(schedule="* * * * *", duration="20m0s", reasons=[r])]}, True)
      for r in ("Drifted", "Underutilized", "Empty")],
    *[(f"should fail when creating a budget with invalid reasons [{r!r}]",
       {BUDGETS: [budget(schedule="* * * * *", duration="20m0s", reasons=[r])]}, False)
      for r in ("invalid", "expired", "")],
    ("should allow setting multiple reasons",
     {BUDGETS: [budget(schedule="* * * * *", duration="20m0s", reasons=["Drifted", "Empty"])]}, True),
    # Context("Taints")
    ("should succeed for valid taints", {"spec.template.spec.taints": [
        {"key": "a", "value": "b", "effect": "NoSchedule"}, {"key": "c", "value": "d", "effect": "NoExecute"},
        {"key": "e", "value": "f", "effect": "PreferNoSchedule"},
        {"key": "Test", "value": "f", "effect": "PreferNoSchedule"},
        {"key": "test.com/Test", "value": "f", "effect": "PreferNoSchedule"},
        {"key": "test.com.com/test", "value": "f", "effect": "PreferNoSchedule"},
        {"key": "key-only", "effect": "NoExecute"}]}, True),
    *[(f"should fail for invalid taint keys [{k}]",
       {"spec.template.spec.taints": [{"key": k, "effect": "NoSchedule"}]}, False)
      for k in ("test.com.com}", "Test.com/test", "test/test/test", "test/", "/test")],
    ("should fail for missing taint key", {"spec.template.spec.taints": [{"effect": "NoSchedule"}]}, False),
    ("should fail for invalid taint value",
     {"spec.template.spec.taints": [{"key": "invalid-value", "effect": "NoSchedule", "value": "???"}]}, False),
    ("should fail for invalid taint effect",
     {"spec.template.spec.taints": [{"key": "invalid-effect", "effect": "???"}]}, False),
    ("should not fail for same key with different effects", {"spec.template.spec.taints": [
        {"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoExecute"}]}, True),
    # Context("Requirements")
    ("should succeed for valid requirement keys", {REQS: [
        req("Test", "Exists"), req("test.com/Test", "Exists"), req("test.com.com/test", "Exists"),
        req("key-only", "Exists")]}, True),
    *[(f"should fail for invalid requirement keys [{k}]", {REQS: [req(k, "Exists")]}, False)
      for k in ("test.com.com}", "Test.com/test", "test/test/test", "test/", "/test")],
    ("should fail for the karpenter.sh/nodepool label", {REQS: [req("karpenter.sh/nodepool", "In", ["x"])]}, False),
    ("should allow supported ops", {REQS: [
        req(ZONE, "In", ["test"]), req(ZONE, "Gt", ["1"]), req(ZONE, "Lt", ["1"]), req(ZONE, "NotIn"),
        req(ZONE, "Exists")]}, True),
    ("should fail for unsupported ops", {REQS: [req(ZONE, "unknown", ["test"])]}, False),
    # RestrictedLabelDomains (pkg/apis/v1/labels.go at 2266468) is {karpenter.sh}
    ("should fail for restricted domains [karpenter.sh]", {REQS: [req("karpenter.sh/test", "In", ["test"])]}, False),
    ("should fail for restricted domains [sub.karpenter.sh]", {REQS: [req("a.karpenter.sh/test", "In", ["t"])]}, False),
    # RestrictedLabels: kubernetes.io/hostname (+ "/test" makes it a restricted domain key)
    ("should fail for restricted labels", {REQS: [req("kubernetes.io/hostname/test", "In", ["test"])]}, False),
    # the issue's fuzz class: requirements on well-known restricted keys
    ("should fail for restricted labels [kubernetes.io/hostname]",
     {REQS: [req("kubernetes.io/hostname", "In", ["a"])]}, False),
    # node-restriction.kubernetes.io/* is not restricted by the v1.14 CRD (nor by RuntimeValidate): accepted
    ("node-restriction.kubernetes.io requirements are accepted by the v1.14 CRD",
     {REQS: [req("node-restriction.kubernetes.io/x", "In", ["a"])]}, True),
    *[(f"should allow kubernetes domains [{d}]", {REQS: [req(f"{d}/test", "In", ["test"])]}, True)
      for d in ("kubernetes.io", "k8s.io")],
    *[(f"should allow kubernetes subdomains exceptions [{d}]",
       {REQS: [req(f"subdomain.{d}/test", "In", ["test"])]}, True) for d in ("kubernetes.io", "k8s.io")],
    # WellKnownLabels minus nodepool and capacity-type
    *[(f"should allow well known label exceptions [{k}]", {REQS: [req(k, "In", ["test"])]}, True)
      for k in ("topology.kubernetes.io/zone", "topology.kubernetes.io/region", "node.kubernetes.io/instance-type",
                "kubernetes.io/arch", "kubernetes.io/os", "node.kubernetes.io/windows-build")],
    ("should allow non-empty set after removing overlapped value",
     {REQS: [req(ZONE, "In", ["test", "foo"]), req(ZONE, "NotIn", ["test", "bar"])]}, True),
    ("should allow empty requirements", {REQS: []}, True),
    *[(f"should fail with invalid GT or LT values [{op} {vals}]", {REQS: [req(ZONE, op, vals)]}, False)
      for op in ("Gt", "Lt") for vals in ([], ["1", "2"], ["a"], ["-1"])],
    *[(f"should fail with invalid GTE or LTE values [{op} {vals}]", {REQS: [req(ZONE, op, vals)]}, False)
      for op in ("Gte", "Lte") for vals in ([], ["1", "2"], ["a"], ["-1"])],
    ("should error when minValues is negative",
     {REQS: [req("node.kubernetes.io/instance-type", "In", ["insance-type-1"], minValues=-1)]}, False),
    ("should error when minValues is zero",
     {REQS: [req("node.kubernetes.io/instance-type", "In", ["insance-type-1"], minValues=0)]}, False),
    ("should error when minValues is more than 50",
     {REQS: [req("node.kubernetes.io/instance-type", "Exists", minValues=51)]}, False),
    ("should allow more than 50 values if minValues is not specified.",
     {REQS: [req("node.kubernetes.io/instance-type", "In", [f"instance{i}" for i in range(90)])]}, True),
    ("should error when minValues is greater than the number of unique values specified within In operator",
     {REQS: [req("node.kubernetes.io/instance-type", "In", ["insance-type-1"], minValues=2)]}, False),
    # Context("Labels")
    ("should allow unrecognized labels", {"spec.template.metadata.labels": {"foo": "bar"}}, True),
    ("should fail for the karpenter.sh/nodepool label [labels]",
     {"spec.template.metadata.labels": {"karpenter.sh/nodepool": "x"}}, False),
    # upstream's It says "fail" but expects Succeed: the template label keys are not validated on create
    ("should fail for invalid label keys", {"spec.template.metadata.labels": {"spaces are not allowed": "x"}}, True),
    ("should fail for invalid label values", {"spec.template.metadata.labels": {"silly": "/ is not allowed"}}, False),
    ("should fail for restricted label domains [karpenter.sh]",
     {"spec.template.metadata.labels": {"karpenter.sh/unknown": "x"}}, False),
    ("should allow labels kOps require",
     {"spec.template.metadata.labels": {"kops.k8s.io/instancegroup": "karpenter-nodes", "kops.k8s.io/gpu": "1"}},
     True),
    *[(f"should allow labels in kubernetes domains [{d}]", {"spec.template.metadata.labels": {d: "test-value"}}, True)
      for d in ("kubernetes.io", "k8s.io")],
    *[(f"should allow subdomain labels in restricted domains exceptions list [{d}]",
       {"spec.template.metadata.labels": {f"subdomain.{d}": "test-value"}}, True) for d in ("kubernetes.io", "k8s.io")],
    *[(f"should allow subdomain labels prefixed with the kubernetes domain [{d}]",
       {"spec.template.metadata.labels": {f"subdomain.{d}/key": "test-value"}}, True)
      for d in ("kubernetes.io", "k8s.io")],
    # Context("TerminationGracePeriod")
    *[(f"should succeed on a valid terminationGracePeriod [{v}]", {"spec.template.spec.terminationGracePeriod": v},
       True) for v in ("30s", "1h30m5s")],
    *[(f"should fail on an invalid terminationGracePeriod [{v}]", {"spec.template.spec.terminationGracePeriod": v},
       False) for v in ("-1s", "1hr", "Never", "FooNever")],
    # Context("NodeClassRef")
    ("should fail if group is unset", {"spec.template.spec.nodeClassRef.group": ""}, False),
    ("should fail if kind is unset", {"spec.template.spec.nodeClassRef.kind": ""}, False),
    ("should fail if name is unset", {"spec.template.spec.nodeClassRef.name": ""}, False),
    # Context("Replicas")
    *[(f"should succeed when replicas is set to {w}", {"spec.replicas": n}, True)
      for w, n in (("a positive value", 5), ("zero", 0), ("a large value", 1000))],
    ("should fail when replicas is set to a negative value", {"spec.replicas": -100}, False),
    *[(f"should fail for incompatible fields [limits.{r}]", {"spec.replicas": 10, "spec.limits": {r: q}}, False)
      for r, q in (("cpu", "1000"), ("memory", "2000Gi"), ("pods", "10"), ("ephemeral-storage", "10Gi"))],
    ("should fail for incompatible fields [weight]", {"spec.replicas": 10, "spec.weight": 25}, False),
    ("should succeed for compatible fields [limits.nodes]", {"spec.replicas": 10, "spec.limits": {"nodes": "100"}},
     True),
    ("should succeed for compatible fields [disruption with multiple budgets]", {"spec.replicas": 10, "spec.disruption": {
        "consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "5m0s", "budgets": [
            budget("20%", "0 9 * * mon-fri", "8h0m0s", ["Drifted", "Empty"]),
            budget("30%", "0 22 * * sat,sun", "4h0m0s", ["Underutilized"]), budget("5")]}}, True),
    ("should succeed for compatible fields [template labels]",
     {"spec.replicas": 10, "spec.template.metadata.labels": {"environment": "production"}}, True),
    ("should succeed for compatible fields [taints]", {"spec.replicas": 10, "spec.template.spec.taints": [
        {"key": "gpu-workload", "value": "enabled", "effect": "NoSchedule"}]}, True),
    ("should succeed for compatible fields [requirements]", {"spec.replicas": 10, REQS: [
        req("node.kubernetes.io/instance-type", "In", ["m5.large", "c5.large"]),
        req(ZONE, "In", ["us-west-2a", "us-west-2b"]), req("karpenter.sh/capacity-type", "In", ["on-demand", "spot"]),
        req("kubernetes.io/arch", "In", ["amd64"]), req("karpenter.k8s.aws/instance-memory", "Gt", ["8192"]),
        req("karpenter.k8s.aws/instance-cpu", "Lt", ["64"])]}, True),
    ("should succeed for compatible fields [expireAfter]", {"spec.replicas": 10, "spec.template.spec.expireAfter": "72h"},
     True),
    ("should succeed for compatible fields [terminationGracePeriod]",
     {"spec.replicas": 10, "spec.template.spec.terminationGracePeriod": "5m0s"}, True),
    ("should succeed when consolidateAfter is omitted on a static NodePool",
     {"spec.replicas": 3, "spec.disruption.consolidateAfter": DELETE}, True),
]


@pytest.mark.parametrize(("it", "patch", "ok"), CASES, ids=[c[0] for c in CASES])
def test_upstream_cel_validation(it: str, patch: dict[str, object], ok: bool) -> None:
    errors = errors_of(patched(BASE, patch))
    assert (errors == []) is ok, errors


def test_should_default_consolidate_after_when_omitted_on_a_dynamic_nodepool() -> None:
    # upstream: It("should default consolidateAfter to '0s' when omitted on a dynamic NodePool")
    admitted = admit(patched(BASE, {"spec.disruption": {}}))
    assert admitted.data["spec"]["disruption"]["consolidateAfter"] == "0s"
    # and the rest of the CRD defaults, as the API server applies them
    assert admitted.data["spec"]["disruption"]["budgets"] == [{"nodes": "10%"}]
    assert admitted.data["spec"]["disruption"]["consolidationPolicy"] == "WhenEmptyOrUnderutilized"
    assert admitted.data["spec"]["template"]["spec"]["expireAfter"] == "720h"


def test_transition_rules_are_not_evaluated_on_create() -> None:
    # upstream: It("should fail to mutate group") / It("should fail when changing the NodePool from static
    # to dynamic") are updates (oldSelf); a create never evaluates them, so both forms are accepted
    assert errors_of(patched(BASE, {"spec.replicas": 3})) == []
    assert errors_of(BASE) == []
