"""NodeClaim admission against the shipped CRD — ported from kubernetes-sigs/karpenter 2266468
``pkg/apis/v1/nodeclaim_validation_cel_test.go`` (Describe "Validation"); ``True`` = ``To(Succeed())``."""

from __future__ import annotations

import pytest

from tests.admission.conftest import errors_of, patched

BASE = {
    "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "nc"},
    "spec": {"nodeClassRef": {"group": "karpenter.test.sh", "kind": "TestNodeClaim", "name": "default"},
             "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "Exists"}]},
}
ZONE = "topology.kubernetes.io/zone"


def req(key: str, op: str, values: list[str] | None = None) -> dict[str, object]:
    return {"key": key, "operator": op, **({"values": values} if values is not None else {})}


CASES: list[tuple[str, dict[str, object], bool]] = [
    ("should succeed for valid taints", {"spec.taints": [
        {"key": "a", "value": "b", "effect": "NoSchedule"}, {"key": "c", "value": "d", "effect": "NoExecute"},
        {"key": "e", "value": "f", "effect": "PreferNoSchedule"}, {"key": "key-only", "effect": "NoExecute"}]}, True),
    ("should fail for invalid taint keys", {"spec.taints": [{"key": "???"}]}, False),
    ("should fail for missing taint key", {"spec.taints": [{"effect": "NoSchedule"}]}, False),
    ("should fail for invalid taint value",
     {"spec.taints": [{"key": "invalid-value", "effect": "NoSchedule", "value": "???"}]}, False),
    ("should fail for invalid taint effect", {"spec.taints": [{"key": "invalid-effect", "effect": "???"}]}, False),
    ("should not fail for same key with different effects",
     {"spec.taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoExecute"}]}, True),
    ("should succeed for valid group",
     {"spec.nodeClassRef": {"kind": "TestNodeClass", "name": "nodeclass-test", "group": "karpenter.test.sh"}}, True),
    ("should fail for invalid group",
     {"spec.nodeClassRef": {"kind": "TestNodeClass", "name": "nodeclass-test", "group": "karpenter.test.sh/v1"}}, False),
    ("should allow supported ops", {"spec.requirements": [
        req(ZONE, "In", ["test"]), req(ZONE, "Gt", ["1"]), req(ZONE, "Lt", ["1"]), req(ZONE, "NotIn"),
        req(ZONE, "Exists")]}, True),
    ("should fail for unsupported ops", {"spec.requirements": [req(ZONE, "unknown", ["test"])]}, False),
    ("should fail for restricted domains", {"spec.requirements": [req("karpenter.sh/test", "In", ["test"])]}, False),
    ("should fail for restricted labels", {"spec.requirements": [req("kubernetes.io/hostname", "In", ["test"])]}, False),
    *[(f"should allow kubernetes domains [{d}]", {"spec.requirements": [req(f"{d}/test", "In", ["test"])]}, True)
      for d in ("kubernetes.io", "k8s.io")],
    *[(f"should allow kubernetes subdomains [{d}]",
       {"spec.requirements": [req(f"subdomain.{d}/test", "In", ["test"])]}, True) for d in ("kubernetes.io", "k8s.io")],
    *[(f"should allow well known label exceptions [{k}]", {"spec.requirements": [req(k, "In", ["test"])]}, True)
      for k in (ZONE, "topology.kubernetes.io/region", "node.kubernetes.io/instance-type", "kubernetes.io/arch",
                "kubernetes.io/os", "karpenter.sh/capacity-type")],
    ("should allow non-empty set after removing overlapped value",
     {"spec.requirements": [req(ZONE, "In", ["test", "foo"]), req(ZONE, "NotIn", ["test", "bar"])]}, True),
    *[(f"should fail with invalid GT or LT values [{op} {vals}]", {"spec.requirements": [req(ZONE, op, vals)]}, False)
      for op in ("Gt", "Lt") for vals in ([], ["1", "2"], ["a"], ["-1"])],
]


@pytest.mark.parametrize(("it", "patch", "ok"), CASES, ids=[c[0] for c in CASES])
def test_upstream_nodeclaim_validation(it: str, patch: dict[str, object], ok: bool) -> None:
    errors = errors_of(patched(BASE, patch))
    assert (errors == []) is ok, errors
