"""NodeOverlay application, ported from kubernetes-sigs/karpenter pkg/controllers/nodeoverlay
(suite_test.go, store.go) and the AWS provider's GetOverlayPrice."""

from __future__ import annotations

from typing import Any

import pytest

from awsprovider.overlay import (
    NodeOverlayStore,
    apply_overlays,
    evaluate_overlays,
    order_by_weight,
    overlay_prices,
    runtime_validate,
)
from karpy.api.nodeoverlay import NodeOverlay
from karpy.api.nodepool import NodePool
from karpy.cloudprovider.types import InstanceType, Offering, UnevaluatedNodePoolError, adjusted_price
from karpy.scheduling.labels import OP_DOES_NOT_EXIST, OP_IN
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

N = 10**9
ZONES = ("zone-a", "zone-b")


def make_it(name: str, od: float, spot: float, labels: dict[str, str] | None = None) -> InstanceType:
    reqs = Requirements(
        Requirement("node.kubernetes.io/instance-type", OP_IN, [name]),
        Requirement("topology.kubernetes.io/zone", OP_IN, ZONES),
        Requirement("karpenter.sh/capacity-type", OP_IN, ["on-demand", "spot"]),
        Requirement("karpenter.k8s.aws/instance-family", OP_IN, [name.split(".")[0]]),
    )
    for k, v in (labels or {}).items():
        reqs.add(Requirement(k, OP_IN, [v]))
    offerings = []
    for z in ZONES:
        for ct, price in (("on-demand", od), ("spot", spot)):
            offerings.append(Offering(Requirements(
                Requirement("karpenter.sh/capacity-type", OP_IN, [ct]),
                Requirement("topology.kubernetes.io/zone", OP_IN, [z]),
                Requirement("karpenter.k8s.aws/capacity-reservation-id", OP_DOES_NOT_EXIST)), price, True))
    return InstanceType(name, reqs, offerings, {"cpu": 2 * N, "memory": 8 * 2**30 * N, "pods": 110 * N})


def nodepool(name: str = "default", labels: dict[str, str] | None = None) -> NodePool:
    return NodePool.model_validate({"metadata": {"name": name}, "spec": {"template": {
        "metadata": {"labels": labels or {}},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}}})


def overlay(name: str, reqs: list[dict[str, Any]] | None = None, weight: int | None = None, **spec: Any) -> NodeOverlay:
    body: dict[str, Any] = {"requirements": reqs or []}
    if weight is not None:
        body["weight"] = weight
    body.update(spec)
    return NodeOverlay.model_validate({"metadata": {"name": name}, "spec": body})


def its() -> list[InstanceType]:
    return [make_it("m5.large", 0.096, 0.04), make_it("c7i.large", 0.08925, 0.03), make_it("c8i.large", 0.09371, 0.0334)]


def prices(it: InstanceType) -> dict[tuple[str, str], float]:
    return {(o.zone, o.capacity_type): o.price for o in it.offerings}


def by_name(xs: list[InstanceType]) -> dict[str, InstanceType]:
    return {x.name: x for x in xs}


FAMILY_C8I = [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["c8i"]}]


def test_order_by_weight() -> None:
    # upstream: nodeoverlay.go OrderByWeight (weight desc, ties by name descending; nil weight = 0)
    ordered = order_by_weight([overlay("a", weight=10), overlay("b", weight=10), overlay("c"), overlay("d", weight=50)])
    assert [o.metadata.name for o in ordered] == ["d", "b", "a", "c"]


def test_zero_overlays_same_instance_types() -> None:
    # upstream: suite_test.go "should return the same instance type when zero overlay are applied"
    types = its()
    out = apply_overlays(nodepool(), types, [])
    assert all(a is b for a, b in zip(out, types))


@pytest.mark.parametrize("change,expected", [
    ({"price": "0.05"}, 0.05), ({"priceAdjustment": "-0.01"}, 0.09371 - 0.01),
    ({"priceAdjustment": "+10%"}, 0.09371 * 1.1), ({"priceAdjustment": "-50%"}, 0.09371 * 0.5),
    ({"priceAdjustment": "-100%"}, 0.0), ({"priceAdjustment": "-1"}, 0.0),
])
def test_price_overlay_math(change: dict[str, str], expected: float) -> None:
    # upstream: cloudprovider/types.go AdjustedPrice; suite_test.go "Price Updates"
    out = by_name(apply_overlays(nodepool(), its(), [overlay("o", FAMILY_C8I, **change)]))
    c8 = out["c8i.large"]
    od = [o for o in c8.offerings if o.capacity_type == "on-demand"]
    assert all(o.price == pytest.approx(expected) and o.price_overlaid for o in od)
    assert c8.is_pricing_overlay_applied()
    assert not out["c7i.large"].is_pricing_overlay_applied()
    assert adjusted_price(0.09371, change.get("price") or change["priceAdjustment"]) == pytest.approx(expected)


def test_original_offerings_untouched() -> None:
    types = its()
    before = prices(types[2])
    apply_overlays(nodepool(), types, [overlay("o", FAMILY_C8I, price="0.01")])
    assert prices(types[2]) == before and not types[2].is_pricing_overlay_applied()


def test_overlay_targets_capacity_type_and_zone() -> None:
    # upstream: suite_test.go "Offering Requirements": overlays may target one capacity type / zone
    o = overlay("o", FAMILY_C8I + [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
                                   {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-b"]}],
                priceAdjustment="+1")
    c8 = by_name(apply_overlays(nodepool(), its(), [o]))["c8i.large"]
    overlaid = {(x.zone, x.capacity_type) for x in c8.offerings if x.price_overlaid}
    assert overlaid == {("zone-b", "spot")}
    assert prices(c8)[("zone-b", "spot")] == pytest.approx(1.0334)


def test_higher_weight_wins_and_does_not_stack() -> None:
    # upstream: suite_test.go "should apply higher weight overlay when multiple overlays match the same instance type"
    hi = overlay("hi", FAMILY_C8I, weight=20, price="0.07")
    lo = overlay("lo", [], weight=10, priceAdjustment="-50%")
    store = evaluate_overlays([lo, hi], [(nodepool(), its())])
    assert store.statuses["hi"].succeeded and store.statuses["lo"].succeeded
    out = by_name(store.apply_all("default", its()))
    assert prices(out["c8i.large"])[("zone-a", "on-demand")] == pytest.approx(0.07)
    assert prices(out["c7i.large"])[("zone-a", "on-demand")] == pytest.approx(0.08925 / 2)


def test_equal_weight_conflict_rejects_overlay() -> None:
    # upstream: suite_test.go "should fail when requirements overlays overlap"; name desc order => "b" first
    a = overlay("a", FAMILY_C8I, weight=10, price="0.01")
    b = overlay("b", [], weight=10, price="0.02")
    store = evaluate_overlays([a, b], [(nodepool(), its())])
    assert store.statuses["b"].succeeded
    assert not store.statuses["a"].succeeded
    assert store.statuses["a"].reason == "Conflict" and store.statuses["a"].message == "conflict with another overlay"
    out = by_name(store.apply_all("default", its()))
    assert prices(out["c8i.large"])[("zone-a", "spot")] == pytest.approx(0.02)


def test_equal_weight_disjoint_requirements_pass() -> None:
    # upstream: suite_test.go "should succeed with requirements overlays don't overlap"
    a = overlay("a", FAMILY_C8I, weight=10, price="0.01")
    b = overlay("b", [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["c7i"]}], weight=10, price="0.02")
    store = evaluate_overlays([a, b], [(nodepool(), its())])
    assert store.statuses["a"].succeeded and store.statuses["b"].succeeded


def test_equal_weight_conflict_on_zone_only() -> None:
    # upstream: suite_test.go "should fail with requirements overlays overlap on zone"
    z = [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]
    a = overlay("a", FAMILY_C8I + z, weight=5, price="0.01")
    b = overlay("b", z, weight=5, price="0.02")
    store = evaluate_overlays([a, b], [(nodepool(), its())])
    assert store.statuses["b"].succeeded and not store.statuses["a"].succeeded


def test_nodepool_label_matching() -> None:
    # upstream: suite_test.go "should only apply override for nodepool that defined in the overlay requirements"
    o = overlay("o", [{"key": "team", "operator": "In", "values": ["ml"]}], price="0.001")
    store = evaluate_overlays([o], [(nodepool("ml", {"team": "ml"}), its()), (nodepool("web", {"team": "web"}), its())])
    assert all(it.is_pricing_overlay_applied() for it in store.apply_all("ml", its()))
    assert not any(it.is_pricing_overlay_applied() for it in store.apply_all("web", its()))
    p = overlay("p", [{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["web"]}], weight=3, price="0.5")
    store = evaluate_overlays([p], [(nodepool("ml"), its()), (nodepool("web"), its())])
    assert not any(it.is_pricing_overlay_applied() for it in store.apply_all("ml", its()))
    assert all(it.is_pricing_overlay_applied() for it in store.apply_all("web", its()))


def test_undefined_custom_label_does_not_match() -> None:
    # the match uses IsCompatible without AllowUndefined: a custom label absent from the NodePool never matches
    o = overlay("o", [{"key": "team", "operator": "In", "values": ["ml"]}], price="0.001")
    assert not any(it.is_pricing_overlay_applied() for it in apply_overlays(nodepool(), its(), [o]))


def test_capacity_overlay() -> None:
    # upstream: suite_test.go "should apply capacity adjustments for instances types"
    o = overlay("o", FAMILY_C8I, capacity={"example.com/fpga": "2"})
    out = by_name(apply_overlays(nodepool(), its(), [o]))
    assert out["c8i.large"].capacity["example.com/fpga"] == 2 * N
    assert out["c8i.large"].is_capacity_overlay_applied()
    assert out["c8i.large"].allocatable()["example.com/fpga"] == 2 * N
    assert "example.com/fpga" not in out["c7i.large"].capacity


def test_capacity_from_multiple_overlays() -> None:
    # upstream: suite_test.go "should update capacity for instance types from multiple overlays"
    hi = overlay("hi", FAMILY_C8I, weight=10, capacity={"example.com/a": "1"})
    lo = overlay("lo", [], weight=5, capacity={"example.com/a": "9", "example.com/b": "3"})
    store = evaluate_overlays([hi, lo], [(nodepool(), its())])
    c8 = by_name(store.apply_all("default", its()))["c8i.large"]
    assert c8.capacity["example.com/a"] == 1 * N and c8.capacity["example.com/b"] == 3 * N


def test_capacity_conflict_equal_weight() -> None:
    # upstream: suite_test.go "should fail with conflicting capacity overlays with overlapping requirements"
    a = overlay("a", FAMILY_C8I, weight=1, capacity={"example.com/a": "1"})
    b = overlay("b", [], weight=1, capacity={"example.com/a": "2"})
    store = evaluate_overlays([a, b], [(nodepool(), its())])
    assert store.statuses["b"].succeeded and not store.statuses["a"].succeeded


def test_no_partial_application_across_nodepools() -> None:
    # upstream: suite_test.go "should that there is not a partial application for nodepools"
    first = overlay("first", [{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["np-b"]}], weight=7, price="1")
    second = overlay("second", [], weight=7, price="2")
    store = evaluate_overlays([first, second], [(nodepool("np-a"), its()), (nodepool("np-b"), its())])
    # "second" is ordered first (name desc) and touches both; "first" conflicts on np-b, so nothing of it applies
    assert store.statuses["second"].succeeded and not store.statuses["first"].succeeded
    assert prices(by_name(store.apply_all("np-b", its()))["m5.large"])[("zone-a", "on-demand")] == 2.0


def test_runtime_validation() -> None:
    # upstream: suite_test.go "should fail validation for invalid capacity values" / requirements values
    bad_cap = overlay("cap", [], capacity={"vpc.amazonaws.com/pod-eni": "1"})
    assert runtime_validate(bad_cap) == "invalid capacity: vpc.amazonaws.com/pod-eni in resource, restricted"
    bad_req = overlay("req", [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["cheap"]}], price="1")
    store = evaluate_overlays([bad_cap, bad_req], [(nodepool(), its())])
    assert store.statuses["cap"].reason == "RuntimeValidation"
    assert store.statuses["req"].reason == "RuntimeValidation"
    assert store.statuses["req"].message.startswith("invalid value: ")
    assert not any(it.is_pricing_overlay_applied() or it.is_capacity_overlay_applied()
                   for it in store.apply_all("default", its()))


def test_unevaluated_nodepool() -> None:
    # upstream: store.go ApplyAll -> UnevaluatedNodePoolError
    store = evaluate_overlays([], [(nodepool(), its())])
    assert store.apply_all("default", its())
    with pytest.raises(UnevaluatedNodePoolError, match='nodepool "other" is awaiting evaluation'):
        NodeOverlayStore().apply_all("other", its())


def test_overlay_prices_for_unpriced_types() -> None:
    # upstream: offering.go GetOverlayPrice (price + exactly one instance-type In requirement)
    ok = overlay("ok", [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5e.48xlarge"]}], price="98.32")
    adj = overlay("adj", [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["x.large"]}], priceAdjustment="+1")
    two = overlay("two", [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["y.large"]},
                          {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}], price="1")
    assert overlay_prices([ok, adj, two]) == {"p5e.48xlarge": 98.32}
    store = evaluate_overlays([ok], [(nodepool(), its())])
    assert overlay_prices([ok], store.statuses) == {"p5e.48xlarge": 98.32}
