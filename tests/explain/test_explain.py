"""Decision traces (karpy.explain) on Karpenter's fake catalogue, and the scheduler's recording hooks."""

from __future__ import annotations

import json
from typing import Any

import pytest

import karpy
import karpy.explain as explain_mod
from karpy.api.builders import make_node, make_nodepool, make_pod
from karpy.cloudprovider.fake import FakeCloudProvider, default_instance_types, instance_types
from karpy.cloudprovider.types import InsufficientCapacityError
from karpy.explain import (
    NO_LAUNCH_DETAIL,
    REASON_OFFERINGS,
    REASON_RESOURCES,
    ExplainLookupError,
    explain_document,
    explain_nodeclaim,
    explain_pod,
    explain_run,
    render_explain,
)
from karpy.api.pod import NodeSelectorRequirement, NodeSelectorTerm
from karpy.provisioning.preferences import Preferences, describe_relaxations, relaxable_copy
from karpy.provisioning.provisioner import Provisioner
from karpy.provisioning.scheduler import OUTCOME_FAILED, OUTCOME_NEW_NODECLAIM, PodAttempt
from karpy.scheduling.labels import LABEL_INSTANCE_TYPE

ARCH = "kubernetes.io/arch"
ZONE = "topology.kubernetes.io/zone"


def run(*objects: Any, provider: Any = None, **kwargs: Any) -> Any:
    return karpy.simulate(list(objects), cloud_provider=provider or FakeCloudProvider(), region=None, **kwargs)


def pending(name: str, **kw: Any) -> Any:
    return make_pod(name, unschedulable=False, **kw)


def pools() -> list[Any]:
    """A heavy arm64-only pool (weight 100) and a light unrestricted one (weight 10)."""
    return [make_nodepool("heavy", weight=100, requirements=[(ARCH, "In", ["arm64"])]),
            make_nodepool("light", weight=10)]


def the_claim(result: Any, **match: Any) -> Any:
    found = [r for r in result.launches if all(getattr(r, k) == v for k, v in match.items())]
    assert len(found) == 1, found
    return found[0]


def in_nodeclaim(record: Any) -> list[str]:
    for r in record.requested.spec.requirements:
        if r.key == LABEL_INSTANCE_TYPE:
            return list(r.values)
    raise AssertionError("no instance-type requirement")


# -- the heavier pool is rejected ----------------------------------------------------------------
def test_heavier_pool_rejected_with_its_upstream_reason() -> None:
    result = run(*pools(), pending("p1", requests={"cpu": "1"}, node_selector={ARCH: "amd64"}))
    rec = the_claim(result)
    assert rec.nodepool == "light"
    d = explain_pod(result, "default/p1")
    assert d["placement"]["outcome"] == OUTCOME_NEW_NODECLAIM
    assert d["placement"]["nodeclaim"] == rec.name
    assert [(n["nodepool"], n["weight"], n["result"]) for n in d["nodepools"]] == [
        ("heavy", 100, "rejected"), ("light", 10, "chosen")]
    assert d["nodepools"][0]["reason"] == (
        "incompatible requirements, key kubernetes.io/arch, kubernetes.io/arch In [amd64] not in "
        "kubernetes.io/arch In [arm64]")
    text = render_explain(d)
    assert "nodepool heavy (weight 100): rejected: incompatible requirements, key kubernetes.io/arch" in text
    assert "nodepool light (weight 10): chosen" in text
    nc = explain_nodeclaim(result, rec.name)
    assert (nc["nodepool"], nc["weight"]) == ("light", 10)
    assert nc["pods"] == ["default/p1"]


def test_pending_pod_lists_every_pool_in_weight_order_with_reasons() -> None:
    result = run(*pools(), pending("huge", requests={"cpu": "1000"}))
    d = explain_pod(result, "default/huge")
    assert d["phase"] == "Pending" and d["node"] is None
    assert d["placement"]["outcome"] == OUTCOME_FAILED
    assert [n["nodepool"] for n in d["nodepools"]] == ["heavy", "light"]
    assert all(n["result"] == "rejected" for n in d["nodepools"])
    assert all(n["reason"].startswith("no instance type has enough resources") for n in d["nodepools"])
    assert d["placement"]["error"] == "; ".join(n["reason"] for n in d["nodepools"])
    assert d["condition"] is not None  # kube-scheduler's Unschedulable message
    assert d["nodeclaims"] == []
    run_d = explain_run(result)
    assert list(run_d["pods"]) == ["default/huge"] and run_d["nodeclaims"] == {}
    assert "PENDING PODS (1)" in render_explain(run_d)


def test_pool_filtered_out_up_front_is_reported() -> None:
    # no fake type has 64 GPUs of vendor A: the template pre-filter drops the pool for every pod
    gpu_pool = make_nodepool("gpu", weight=50, requirements=[("karpenter.k8s.aws/never", "In", ["x"]),
                                                             (ARCH, "In", ["s390x"])])
    result = run(gpu_pool, make_nodepool("light", weight=10), pending("p", requests={"cpu": "1"}))
    d = explain_pod(result, "default/p")
    first = d["nodepools"][0]
    assert (first["nodepool"], first["result"]) == ("gpu", "filtered out")
    assert first["reason"].startswith("no instance type")


# -- relaxation ----------------------------------------------------------------------------------
def test_relaxed_preferred_node_affinity_step_appears() -> None:
    pod = pending("pref", requests={"cpu": "1"}, node_preferences=[(ZONE, "In", ["test-zone-9"])])
    pod.spec.affinity.node_affinity.preferred_during_scheduling_ignored_during_execution[0].weight = 100
    result = run(make_nodepool("light"), pod)
    d = explain_pod(result, "default/pref")
    assert d["relaxations"] == [
        "removed preferred node affinity term (weight 100): topology.kubernetes.io/zone In [test-zone-9]"]
    assert len(d["rounds"]) == 2
    assert d["rounds"][0]["relaxed"] is None and d["rounds"][0]["error"]
    assert d["rounds"][1]["relaxed"] == d["relaxations"][0] and d["rounds"][1]["error"] is None
    assert d["rounds"][1]["nodepools"] == [{"nodepool": "light", "weight": 0, "result": "chosen", "reason": None}]
    assert "relaxed: removed preferred node affinity term (weight 100)" in render_explain(d)


def test_describe_relaxations_replays_the_steps_on_a_copy() -> None:
    pod = make_pod("p", node_requirements=[(ZONE, "In", ["a"])], node_preferences=[(ZONE, "In", ["c"])])
    req = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    req.node_selector_terms = [*req.node_selector_terms,
                               NodeSelectorTerm(match_expressions=[NodeSelectorRequirement(
                                   key=ZONE, operator="In", values=["b"])])]
    prefs = Preferences(tolerate_prefer_no_schedule=True)
    copy = relaxable_copy(pod)
    reasons = []
    while (r := prefs.relax(copy)) is not None:
        reasons.append(r)
    assert describe_relaxations(pod, reasons) == [
        "removed required node affinity term 0: topology.kubernetes.io/zone In [a]",
        "removed preferred node affinity term (weight 1): topology.kubernetes.io/zone In [c]",
        "added toleration for PreferNoSchedule taints",
    ]
    # the original pod is untouched; an unknown reason is passed through
    assert len(req.node_selector_terms) == 2
    assert describe_relaxations(pod, ["something else"]) == ["something else"]


def test_scheduler_records_templates_tried_before_the_winner() -> None:
    prov = Provisioner(FakeCloudProvider())
    pod = make_pod("p", requests={"cpu": "1"}, node_selector={ARCH: "amd64"})
    results = prov.schedule([pod], pools())
    assert len(results.new_nodeclaims) == 1
    record = prov.last_scheduler.attempt_record("default/p")
    assert all(x is None or type(x) in (str, int) for x in record)  # nothing the GC tracks
    att = prov.last_scheduler.attempt("default/p")
    assert isinstance(att, PodAttempt) and att.rounds == PodAttempt.from_record(record).rounds
    assert att.outcome == OUTCOME_NEW_NODECLAIM
    assert att.target == results.new_nodeclaims[0].hostname
    (relaxed, errs, err), = att.rounds
    assert relaxed is None and err is None
    assert len(errs) == 1 and errs[0].startswith("incompatible requirements")
    tries = PodAttempt.templates_tried(prov.last_scheduler.template_names, errs, True)
    assert tries == [("heavy", errs[0]), ("light", None)]
    assert prov.last_scheduler.nodepool_weights == [("heavy", 100), ("light", 10)]


# -- the funnel ------------------------------------------------------------------------------------
def test_funnel_remaining_equals_the_nodeclaim_candidates() -> None:
    its = default_instance_types()
    for o in its[2].offerings:  # gpu-vendor-instance-type: no available offering left
        o.available = False
    its[2].refresh_availability()
    result = run(make_nodepool("light"), pending("p", requests={"cpu": "3"}, node_selector={ARCH: "amd64"}),
                 provider=FakeCloudProvider(its))
    rec = the_claim(result)
    nc = explain_nodeclaim(result, rec.name)
    f = nc["funnel"]
    assert f["start"] == 6
    stages = [(s["stage"], s["removed"], s["examples"]) for s in f["steps"]]
    assert stages == [
        ("requirement", 1, ["arm-instance-type"]),
        ("resources", 1, ["small-instance-type"]),
        ("offerings", 1, ["gpu-vendor-instance-type"]),
    ]
    assert f["steps"][0]["requirement"] == "kubernetes.io/arch In [amd64]" and f["steps"][0]["source"] == "pods"
    assert f["steps"][1]["reason"] == REASON_RESOURCES and f["steps"][2]["reason"] == REASON_OFFERINGS
    remaining = len(rec.scheduling.instance_type_options)
    assert f["remaining"] == f["candidates"] == remaining == len(in_nodeclaim(rec)) == nc["in_nodeclaim"] == 3
    assert f["steps"][-1]["remaining"] == f["remaining"]
    assert "unexplained_candidates" not in f
    prices = [e["price"] for e in nc["price_order"]["first"]]
    assert prices == sorted(prices)
    assert sorted(e["instance_type"] for e in nc["price_order"]["first"]) == sorted(in_nodeclaim(rec))
    assert nc["max_instance_types_cut"] == {"max_instance_types": 600, "kept": 3, "dropped": 0}
    assert nc["launch"] is None and nc["launch_note"] == NO_LAUNCH_DETAIL
    text = render_explain(nc)
    assert "1 had no available offering compatible with the requirements" in text
    assert "= 3 candidates (NodeClaim candidate list: 3)" in text


def test_nodepool_requirement_step_names_its_source() -> None:
    pool = make_nodepool("amd", requirements=[(ARCH, "In", ["amd64"])])
    result = run(pool, pending("p", requests={"cpu": "1"}))
    nc = explain_nodeclaim(result, the_claim(result).name)
    step = nc["funnel"]["steps"][0]
    assert (step["stage"], step["source"], step["removed"]) == ("requirement", "nodepool", 1)
    assert step["upstream"] == "no instance type met all requirements"


def test_600_cut_on_700_fake_types() -> None:
    provider = FakeCloudProvider(instance_types(700))
    result = run(make_nodepool("big"), pending("p", requests={"cpu": "100m"}), provider=provider)
    rec = the_claim(result)
    nc = explain_nodeclaim(result, rec.name)
    assert nc["funnel"]["start"] == 700 and nc["funnel"]["steps"] == []
    assert nc["funnel"]["remaining"] == nc["funnel"]["candidates"] == 700
    cut = nc["max_instance_types_cut"]
    assert (cut["max_instance_types"], cut["kept"], cut["dropped"]) == (600, 600, 100)
    assert len(in_nodeclaim(rec)) == 600 == nc["in_nodeclaim"]
    assert cut["cheapest_dropped"] == "fake-it-600"
    dropped = next(it for it in provider.instance_types if it.name == "fake-it-600")
    assert cut["cheapest_dropped_price"] == round(min(o.price for o in dropped.offerings), 6)
    assert cut["cheapest_dropped_price"] > cut["most_expensive_kept_price"]
    assert "fake-it-600" not in in_nodeclaim(rec) and "fake-it-599" in in_nodeclaim(rec)
    assert len(nc["price_order"]["first"]) == explain_mod.PRICE_ORDER_SHOWN
    assert "MaxInstanceTypes cut at 600: kept 600, dropped 100 (cheapest dropped fake-it-600" in render_explain(nc)


def test_min_values_outcome() -> None:
    pool = make_nodepool("mv", requirements=[{"key": LABEL_INSTANCE_TYPE, "operator": "Exists", "minValues": 3}])
    result = run(pool, pending("p", requests={"cpu": "1"}))
    nc = explain_nodeclaim(result, the_claim(result).name)
    mv = nc["min_values"]
    assert mv["policy"] == "Strict" and mv["relaxed"] is False
    (entry,) = mv["requirements"]
    assert entry["key"] == LABEL_INSTANCE_TYPE and entry["min_values"] == 3
    assert entry["satisfied"] and entry["distinct_values"] == nc["funnel"]["candidates"]


# -- capacity errors and fallback --------------------------------------------------------------------
def test_failed_launch_and_the_fallback_claim() -> None:
    provider = FakeCloudProvider()
    provider.next_create_err = InsufficientCapacityError("no capacity for this test")
    result = run(make_nodepool("light"), pending("a", requests={"cpu": "1"}), pending("b", requests={"cpu": "1"}),
                 provider=provider)
    failed, ok = result.launches
    assert failed.launched is None and ok.launched is not None
    d = explain_nodeclaim(result, failed.name)
    assert d["launched"] is False and "no capacity for this test" in d["error"]
    fb = d["fallback"]
    assert fb["nodeclaims"] == [{"nodeclaim": ok.name, "nodepool": "light", "launched": True,
                                 "instance_type": ok.instance_type, "pods": ["default/a", "default/b"]}]
    assert fb["pods_not_relaunched"] == []
    assert explain_nodeclaim(result, ok.name)["fallback_for"] == [failed.name]
    text = render_explain(d)
    assert f"fallback -> {ok.name} (nodepool light, launched {ok.instance_type}) took default/a, default/b" in text
    pod = explain_pod(result, "default/a")
    assert [c["name"] for c in pod["nodeclaims"]] == [failed.name, ok.name]
    assert pod["node"] == ok.name and pod["placement"]["nodeclaim"] == ok.name


# -- the provider's launch detail ----------------------------------------------------------------
class DetailProvider(FakeCloudProvider):
    """A stand-in for a provider with ``explain_launch`` (the AWS provider's planned method)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def explain_launch(self, name: str) -> dict[str, Any] | None:
        self.asked.append(name)
        return {"filters": [{"name": "exotic-instance-filter", "rejected": ["gpu-vendor-instance-type"]}],
                "truncated_to": 60, "candidates_sent": 3, "allocation_strategy": "lowest-price",
                "capacity_type": "on-demand",
                "overrides": [{"instance_type": "default-instance-type", "zone": "test-zone-1", "priority": 0.5}],
                "fleet_decisions": [{"reason": "lowest price", "chosen": {"instance_type": "default-instance-type",
                                                                          "zone": "test-zone-1"},
                                     "errors": [{"error_code": "InsufficientInstanceCapacity",
                                                 "instance_type": "small-instance-type", "zone": "test-zone-2"}]}]}


def test_provider_launch_detail_is_included_and_rendered() -> None:
    provider = DetailProvider()
    result = run(make_nodepool("light"), pending("p", requests={"cpu": "1"}), provider=provider)
    rec = the_claim(result)
    nc = explain_nodeclaim(result, rec.name)
    assert nc["launch"]["truncated_to"] == 60 and "launch_note" not in nc
    assert rec.name in provider.asked
    text = render_explain(nc, verbose=True)
    assert "filter exotic-instance-filter: removed 1 (gpu-vendor-instance-type)" in text
    assert "cut to the 60 cheapest instance types" in text
    assert "fleet request: strategy lowest-price, capacity type on-demand" in text
    assert "default-instance-type test-zone-1 priority 0.5" in text
    assert "EC2 picked default-instance-type test-zone-1: lowest price" in text
    assert "error: InsufficientInstanceCapacity small-instance-type test-zone-2" in text


class FleetDetailProvider(DetailProvider):
    """Also has ``fleet_record`` (the document's ``fleet`` block), as the AWS provider does."""

    def explain_launch(self, name: str) -> dict[str, Any] | None:
        d = super().explain_launch(name)
        assert d is not None
        d["decisions"] = [{"reason": "r", "chosen": None, "errors": [],
                           "overrides_considered": [{"instance_type": "a"}, {"instance_type": "b"}]}]
        return d

    def fleet_record(self, name: str) -> dict[str, Any] | None:
        return {"allocation_strategy": "lowest-price", "capacity_type": "on-demand", "overrides": [], "errors": []}


def test_document_launch_detail_leaves_out_the_fleet_block() -> None:
    result = run(make_nodepool("light"), pending("p", requests={"cpu": "1"}), provider=FleetDetailProvider())
    rec = the_claim(result)
    doc = result.to_document()
    launch = doc["explain"]["nodeclaims"][rec.name]["launch"]
    assert not {"allocation_strategy", "capacity_type", "overrides", "errors"} & set(launch)
    assert launch["truncated_to"] == 60 and launch["decisions"][0]["overrides_considered"] == 2
    full = explain_nodeclaim(result, rec.name)["launch"]  # the CLI's view keeps everything
    assert full["allocation_strategy"] == "lowest-price" and len(full["decisions"][0]["overrides_considered"]) == 2


# -- the document ---------------------------------------------------------------------------------------
def test_document_explain_block() -> None:
    node = make_node("existing", labels={"kubernetes.io/hostname": "existing", ZONE: "test-zone-1",
                                         ARCH: "amd64", "kubernetes.io/os": "linux"},
                     capacity={"cpu": "2", "memory": "16Gi", "pods": "110"})
    result = run(*pools(), make_nodepool("last", weight=1), node, pending("small", requests={"cpu": "1"}),
                 pending("big", requests={"cpu": "3"}, node_selector={ARCH: "amd64"}),
                 pending("huge", requests={"cpu": "1000"}))
    doc = result.to_document()
    ex = doc["explain"]
    assert ex["scope"] == "all"
    assert list(ex["nodeclaims"]) == [r.name for r in result.launches]
    # kube-scheduler placed "small" on the existing node: Karpenter never saw it
    assert doc["pods"]["default/small"]["node"] == "existing"
    assert set(ex["pods"]) == {"default/big", "default/huge"}
    big = ex["pods"]["default/big"]
    assert big["placement"]["outcome"] == OUTCOME_NEW_NODECLAIM
    # compact: the pool after the winner (not tried) is left out of the document
    assert [(n["nodepool"], n["result"]) for n in big["nodepools"]] == [("heavy", "rejected"), ("light", "chosen")]
    full = explain_pod(result, "default/big")
    assert [(n["nodepool"], n["result"]) for n in full["nodepools"]] == [
        ("heavy", "rejected"), ("light", "chosen"), ("last", "not tried")]
    assert ex["nodeclaims"][result.launches[0].name]["funnel"]["remaining"] == \
        ex["nodeclaims"][result.launches[0].name]["funnel"]["candidates"]
    json.dumps(doc)  # serialisable
    assert result.to_json() == result.to_json()


def test_large_runs_keep_only_pending_pods_and_failed_claims(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(explain_mod, "FULL_EXPLAIN_MAX_NODECLAIMS", 1)
    provider = FakeCloudProvider()
    provider.next_create_err = InsufficientCapacityError("boom")
    result = run(make_nodepool("light"), pending("a", requests={"cpu": "1"}),
                 pending("huge", requests={"cpu": "1000"}), provider=provider)
    ex = explain_document(result)
    assert ex["scope"].startswith("pending pods and failed nodeclaims only (2 NodeClaims > 1)")
    assert list(ex["nodeclaims"]) == [result.launches[0].name]
    assert result.launches[0].launched is None
    assert list(ex["pods"]) == ["default/huge"]


def test_unknown_names_raise_lookup_errors() -> None:
    result = run(make_nodepool("light"), pending("p", requests={"cpu": "1"}))
    with pytest.raises(ExplainLookupError, match="unknown NodeClaim 'nope'"):
        explain_nodeclaim(result, "nope")
    with pytest.raises(ExplainLookupError, match="unknown pod 'default/nope'"):
        explain_pod(result, "default/nope")


def test_deterministic_output() -> None:
    def once() -> tuple[str, str]:
        provider = FakeCloudProvider()
        provider.next_create_err = InsufficientCapacityError("boom")
        pod = pending("pref", requests={"cpu": "1"}, node_preferences=[(ZONE, "In", ["test-zone-9"])])
        result = run(*pools(), pod, pending("p", requests={"cpu": "2"}, node_selector={ARCH: "amd64"}),
                     pending("huge", requests={"cpu": "1000"}), provider=provider)
        return result.to_json(), render_explain(explain_run(result))

    first, second = once(), once()
    assert first == second
    assert '"explain"' in first[0]


def test_document_block_renders_with_the_document() -> None:
    provider = FakeCloudProvider()
    provider.next_create_err = InsufficientCapacityError("boom")
    result = run(*pools(), pending("p", requests={"cpu": "1"}, node_selector={ARCH: "amd64"}), provider=provider)
    doc = result.to_document()
    failed, ok = result.launches
    entry = doc["explain"]["nodeclaims"][failed.name]
    assert "instance_type" not in entry and "kind" not in entry  # compact: the document has these
    assert doc["explain"]["pods"]["default/p"]["nodeclaims"] == [failed.name, ok.name]
    text = render_explain(doc["explain"], doc)
    assert f"NodeClaim {failed.name}  nodepool light (weight 10)  pass 1  launch FAILED: " in text
    assert f"NodeClaim {ok.name}  nodepool light (weight 10)  pass 2  launched {ok.instance_type}" in text
    assert "Pod default/p  Running  on node " + ok.name in text


def test_compact_launch_detail_from_the_provider_equals_the_compacted_full_detail() -> None:
    """A provider whose ``explain_launch`` takes ``compact`` (the AWS provider) is asked for the
    compact form directly: what ``_compact_launch`` keeps of the full detail, without building the
    considered overrides of every fleet decision first (issue #13: 1.2 s of a 1,000-pod report)."""
    from karpy.explain import _compact_launch  # noqa: PLC0415 - the rule compared with

    class CompactProvider(FleetDetailProvider):
        def __init__(self) -> None:
            super().__init__()
            self.compact_asks = 0

        def explain_launch(self, name: str, *, compact: bool = False) -> dict[str, Any] | None:
            d = super().explain_launch(name)
            assert d is not None
            if compact:
                self.compact_asks += 1
                d["decisions"] = [{**x, "overrides_considered": len(x["overrides_considered"])}
                                  for x in d["decisions"]]
            return d

    plain = run(make_nodepool("light"), pending("p", requests={"cpu": "1"}), provider=FleetDetailProvider())
    compact_provider = CompactProvider()
    compact = run(make_nodepool("light"), pending("p", requests={"cpu": "1"}), provider=compact_provider)
    doc_plain = plain.to_document()["explain"]["nodeclaims"]
    doc_compact = compact.to_document()["explain"]["nodeclaims"]
    assert compact_provider.compact_asks == 1
    assert list(doc_compact.values())[0]["launch"] == list(doc_plain.values())[0]["launch"]
    full = FleetDetailProvider().explain_launch("x")
    assert full is not None
    assert list(doc_compact.values())[0]["launch"] == _compact_launch(full, True)
