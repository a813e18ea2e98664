"""Why not this instance type (or generation): where it left Karpenter's race, and the smallest
changes that flip it, each verified by re-running the simulation with the change.

The stages, in the pipeline's order (kubernetes-sigs/karpenter@2266468, aws/karpenter-provider-aws@1d92708):

- ``nodepool-requirement`` / ``pod-requirement`` / ``host-ports`` / ``resources`` / ``offerings``: the
  NodeClaim's filters (core pkg/controllers/provisioning/scheduling/nodeclaim.go, InstanceTypeFilterError),
  computed as :mod:`karpy.explain`'s funnel does;
- ``nodepool-limits``: scheduler.go filterByRemainingResources;
- ``price-filter``: removed from a consolidation replacement's options (``launchPrice < maxPrice``);
- ``max-instance-types``: ToNodeClaim's ``OrderByPrice(reqs)[:MaxInstanceTypes]`` (600; nodeclaimtemplate.go:50);
- ``provider-filter``: the AWS provider's filters (pkg/providers/instance/filter/filter.go);
- ``provider-cut``: the AWS provider's cut to 60 (pkg/providers/instance/instance.go:67, maxInstanceTypes);
- ``fleet``: CreateFleet's pick under its allocation strategy (instance.go: lowest-price, or prioritized
  with a NodeOverlay) -- the rank and the price gap to the winner;
- ``ice``: EC2 answered an insufficient-capacity error for it (pkg/errors/errors.go:56-65);
- ``consolidation``: launched, then replaced by consolidation, whose price filter keeps only types
  with ``launchPrice < maxPrice`` (core pkg/controllers/disruption/consolidation.go computeConsolidation,
  nodeclaim.go RemoveInstanceTypeOptionsByPriceAndMinValues);
- ``launched``: it runs.

Over several NodeClaims the answer is the furthest stage the type reached (for a generation: its
type that got furthest, the cheapest on a tie). A flip is reported only when the re-run launches
the type (or a type of the generation) without leaving more pods pending.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import yaml

from karpy.cloudprovider.types import InstanceTypes
from karpy._errors import KarpyError
from karpy.explain import _Explainer, _funnel_host_ports, _funnel_offerings, _funnel_resources, _price
from karpy.scheduling.labels import LABEL_HOSTNAME, LABEL_INSTANCE_TYPE
from karpy.scheduling.resources import requests_for_pods

__all__ = ["STAGES", "Flip", "WhyNot", "WhyNotError", "render_why_not", "why_not"]

LABEL_GENERATION = "karpenter.k8s.aws/instance-generation"


class Result(Protocol):
    """What a why-not question reads of a run (:class:`karpy.result.Result`); ``inputs`` is its
    ``RunInputs``, whose ``rerun`` (``karpy.simulate``) verifies each flip."""

    @property
    def simulation(self) -> Any: ...

    @property
    def cloud_provider(self) -> Any: ...

    @property
    def inputs(self) -> Any: ...

    @property
    def cost_per_hour(self) -> float: ...

    @property
    def pending_pods(self) -> Any: ...
LABEL_FAMILY = "karpenter.k8s.aws/instance-family"
#: NodePool requirement keys a requirement-change flip edits, in order
_FLIP_KEYS = (LABEL_FAMILY, LABEL_GENERATION, LABEL_INSTANCE_TYPE)
#: aws errors.go:56-65, the capacity errors that mark an offering unavailable
ICE_CODES = frozenset({"InsufficientInstanceCapacity", "MaxSpotInstanceCountExceeded", "VcpuLimitExceeded",
                       "UnfulfillableCapacity", "Unsupported", "InsufficientFreeAddressesInSubnet",
                       "MaxFleetCountExceeded", "ReservationCapacityExceeded"})

#: stage -> where upstream decides it (the pipeline's order: a later stage got further)
STAGES: dict[str, str] = {
    "not-offered": "the NodePool's instance types (cloudprovider GetInstanceTypes for its NodeClass)",
    "nodepool-requirement": "kubernetes-sigs/karpenter@2266468 pkg/controllers/provisioning/scheduling/nodeclaim.go",
    "pod-requirement": "kubernetes-sigs/karpenter@2266468 pkg/controllers/provisioning/scheduling/nodeclaim.go",
    "host-ports": "kubernetes-sigs/karpenter@2266468 pkg/controllers/provisioning/scheduling/nodeclaim.go",
    "resources": "kubernetes-sigs/karpenter@2266468 pkg/controllers/provisioning/scheduling/nodeclaim.go",
    "offerings": "kubernetes-sigs/karpenter@2266468 pkg/controllers/provisioning/scheduling/nodeclaim.go",
    "nodepool-limits": "kubernetes-sigs/karpenter@2266468 pkg/controllers/provisioning/scheduling/scheduler.go "
                       "(filterByRemainingResources)",
    "price-filter": "kubernetes-sigs/karpenter@2266468 pkg/controllers/disruption/consolidation.go "
                    "(a replacement's options: launchPrice < maxPrice)",
    "max-instance-types": "kubernetes-sigs/karpenter@2266468 pkg/controllers/provisioning/scheduling/"
                          "nodeclaimtemplate.go:50 (ToNodeClaim, MaxInstanceTypes)",
    "provider-filter": "aws/karpenter-provider-aws@1d92708 pkg/providers/instance/filter/filter.go",
    "provider-cut": "aws/karpenter-provider-aws@1d92708 pkg/providers/instance/instance.go:67 (maxInstanceTypes)",
    "fleet": "aws/karpenter-provider-aws@1d92708 pkg/providers/instance/instance.go (CreateFleet allocation "
             "strategy)",
    "ice": "aws/karpenter-provider-aws@1d92708 pkg/errors/errors.go:56-65 (insufficient-capacity codes)",
    "consolidation": "kubernetes-sigs/karpenter@2266468 pkg/controllers/disruption/consolidation.go "
                     "(computeConsolidation: launchPrice < maxPrice)",
    "launched": "",
}
_ORDER = {s: i for i, s in enumerate(STAGES)}
_PRICE_STAGES = ("nodepool-limits", "max-instance-types", "provider-filter", "provider-cut", "fleet")


class WhyNotError(KarpyError, LookupError):
    """An instance type or generation no NodePool of the run offered (the CLI: bad input, exit 2)."""


@dataclass(frozen=True)
class Flip:
    """A change that would flip the answer, verified by a re-run: ``verified`` says the re-run
    launched the type (or a type of the generation) and left no more pods pending."""

    kind: str  # "nodeoverlay" | "requirement" | "weighted-nodepool"
    change: str
    manifests: tuple[dict[str, Any], ...]
    feature_gates: Mapping[str, bool]
    verified: bool
    launched: tuple[str, ...]
    cost_per_hour: float
    cost_change: float
    pending_pods: int
    risk: str | None = None
    #: the change re-run again with the target's offerings all unavailable (an outage of the type or
    #: generation): ``{"launched": [...], "cost_per_hour", "pending_pods"}``
    outage: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "change": self.change, "verified": self.verified,
                "launched": list(self.launched), "cost_per_hour": self.cost_per_hour,
                "cost_change_per_hour": self.cost_change, "pending_pods": self.pending_pods, "risk": self.risk,
                "outage": dict(self.outage) if self.outage is not None else None,
                "feature_gates": dict(self.feature_gates), "manifests": [dict(m) for m in self.manifests]}


@dataclass(frozen=True)
class WhyNot:
    """Where the type left the race (``stage`` and its numbers in ``detail``), the one-line
    ``answer``, and the verified ``flips`` (changes tried that did not flip are left out)."""

    target: str
    instance_type: str
    stage: str
    detail: Mapping[str, Any]
    flips: tuple[Flip, ...]
    nodeclaims: Mapping[str, int]
    cost_per_hour: float
    note: str | None = None
    answer: str = field(default="")

    def to_dict(self) -> dict[str, Any]:
        """The ``why_not`` section of ``karpy explain --why-not -o json``."""
        return {"target": self.target, "instance_type": self.instance_type, "stage": self.stage,
                "upstream": STAGES[self.stage] or None, "answer": self.answer, "detail": dict(self.detail),
                "nodeclaims_by_stage": dict(self.nodeclaims), "cost_per_hour": self.cost_per_hour,
                "flips": [f.to_dict() for f in self.flips], "note": self.note}

    def __str__(self) -> str:
        return self.answer


# -- where it left the race --------------------------------------------------------------------


def _generation(it: Any) -> str | None:
    if LABEL_GENERATION not in it.requirements:
        return None
    values = sorted(it.requirements.get(LABEL_GENERATION).values)
    return values[0] if len(values) == 1 else None


def _value(it: Any, key: str) -> str | None:
    if key == LABEL_INSTANCE_TYPE:
        return str(it.name)
    if key not in it.requirements:
        return None
    values = sorted(it.requirements.get(key).values)
    return values[0] if len(values) == 1 else None


class _Race:
    """The stage of one instance type in one NodeClaim (see module doc)."""

    def __init__(self, ex: _Explainer) -> None:
        self.ex = ex
        self._launch: dict[str, dict[str, Any] | None] = {}
        self._order: dict[str, list[Any]] = {}

    def launch(self, rec: Any) -> dict[str, Any] | None:
        if rec.name not in self._launch:
            self._launch[rec.name] = self.ex.launch_detail(rec)[0]
        return self._launch[rec.name]

    def ordered(self, rec: Any, candidates: list[Any], reqs: Any) -> list[Any]:
        if rec.name not in self._order:
            self._order[rec.name] = list(InstanceTypes(list(candidates)).order_by_price(reqs,
                                                                                      rec.scheduling.well_known))
        return self._order[rec.name]

    def stage(self, rec: Any, it: Any) -> dict[str, Any]:
        claim = rec.scheduling
        out: dict[str, Any] = {"nodeclaim": rec.name, "nodepool": rec.nodepool}
        reqs = rec.requirements if rec.requirements is not None else claim.requirements
        pool = rec.instance_types if rec.instance_types is not None else claim.template.instance_type_options
        template = claim.template.requirements
        for key, req in reqs.items():
            if key == LABEL_HOSTNAME or id(it) not in self.ex._removed_by(pool, key, req):
                continue
            if key in template and id(it) in self.ex._removed_by(pool, key, template.get(key)):
                return {**out, "stage": "nodepool-requirement", "key": key,
                        "requirement": template.get(key).format(natural=True), "value": _value(it, key)}
            return {**out, "stage": "pod-requirement", "key": key, "requirement": req.format(natural=True),
                    "value": _value(it, key)}
        scratch: list[dict[str, Any]] = []
        overhead, left = _funnel_host_ports(claim, [it], scratch)
        if not left:
            return {**out, "stage": "host-ports"}
        pod_total = requests_for_pods(claim.pods)
        if not _funnel_resources(left, pod_total, overhead, scratch):
            return {**out, "stage": "resources", "requests": scratch[-1].get("requests")}
        if not _funnel_offerings(left, pod_total, overhead, reqs, claim.well_known, scratch):
            return {**out, "stage": "offerings"}
        candidates = list(rec.untruncated if rec.untruncated is not None else claim.instance_type_options)
        if all(c is not it for c in candidates):
            decision = self._replacing(rec)
            if decision is not None:
                return {**out, "stage": "price-filter", "method": decision.get("method"),
                        "candidates": list(decision.get("candidates", ()))}
            return {**out, "stage": "nodepool-limits"}
        ordered = self.ordered(rec, candidates, reqs)
        rank = next(i for i, c in enumerate(ordered) if c is it) + 1
        price = _price(it.min_compatible_price(reqs, claim.well_known))
        out.update({"rank": rank, "of": len(ordered), "price": price})
        if rec.launched is not None and rec.instance_type == it.name:
            if rec.deleted and "consolidation" in str(rec.deleted_by or ""):
                return {**out, "stage": "consolidation", "replaced_by": rec.deleted_by, "at": rec.deleted_at,
                        "price": _price(rec.price), **self._replacement(rec)}
            return {**out, "stage": "launched", "price": _price(rec.price), "zone": rec.zone,
                    "capacity_type": rec.capacity_type}
        out.update(self._winner(rec))
        if rank > self.ex.max_instance_types:
            return {**out, "stage": "max-instance-types", "max_instance_types": self.ex.max_instance_types}
        detail = self.launch(rec) or {}
        for name, removed in (detail.get("filters") or {}).items():
            if it.name in (removed or ()):
                return {**out, "stage": "provider-filter", "filter": name}
        kept = detail.get("truncated_to")
        if isinstance(kept, list) and it.name not in kept:
            return {**out, "stage": "provider-cut", "kept": len(kept)}
        decisions = [d for d in (detail.get("decisions") or detail.get("fleet_decisions") or ())
                     if isinstance(d, Mapping)]
        errors = [e for d in decisions for e in (d.get("errors") or ())] + list(detail.get("errors") or ())
        ice = [e for e in errors if isinstance(e, Mapping) and e.get("instance_type") == it.name
               and e.get("error_code") in ICE_CODES]
        if ice:
            zones = sorted({str(e.get("zone")) for e in ice if e.get("zone")})
            return {**out, "stage": "ice", "error_code": ice[0]["error_code"], "zones": zones}
        return self._fleet_stage(out, it, decisions)

    @staticmethod
    def _fleet_stage(out: dict[str, Any], it: Any, decisions: list[Mapping[str, Any]]) -> dict[str, Any]:
        """CreateFleet's rank of ``it`` in the last decision that considered it, and the gap to the pick."""
        for d in reversed(decisions):
            considered = [o for o in (d.get("overrides_considered") or ()) if isinstance(o, Mapping)]
            strategy = str(d.get("allocation_strategy") or "")
            by = "priority" if "prioritized" in strategy else "price"
            best: dict[str, float] = {}
            for o in considered:
                v = o.get(by)
                if v is not None and (o["instance_type"] not in best or v < best[o["instance_type"]]):
                    best[o["instance_type"]] = float(v)
            if it.name not in best:
                continue
            mine = best[it.name]
            out.update({"strategy": strategy, "ranked_by": by, "fleet_rank": 1 + sum(1 for v in best.values()
                                                                                    if v < mine),
                        "fleet_types": len(best), "fleet_price": round(mine, 6)})
            chosen = d.get("chosen")
            if isinstance(chosen, Mapping) and chosen.get(by) is not None:
                out["winner"] = chosen.get("instance_type")
                out["winner_price"] = round(float(chosen[by]), 6)
                out["gap"] = round(mine - float(chosen[by]), 6)
                out["gap_percent"] = round(100 * (mine - float(chosen[by])) / float(chosen[by]), 1) \
                    if chosen[by] else None
            return {**out, "stage": "fleet"}
        return {**out, "stage": "fleet", "note": "no CreateFleet decision lists it"}

    def _replacing(self, rec: Any) -> Mapping[str, Any] | None:
        """The disruption decision that created ``rec`` as a replacement, if any."""
        controller = getattr(self.ex.sim, "disruption", None)
        for d in getattr(controller, "decisions", None) or ():
            if rec.name in (d.get("replacements") or ()):
                found: Mapping[str, Any] = d
                return found
        return None

    def _replacement(self, rec: Any) -> dict[str, Any]:
        """The consolidation decision that replaced ``rec``: its method and the replacements with
        their $/h (launchPrice < maxPrice, the candidates' price, let them through)."""
        controller = getattr(self.ex.sim, "disruption", None)
        for d in reversed(getattr(controller, "decisions", None) or ()):
            if rec.name in d.get("candidates", ()) and d.get("replacements"):
                reps = [self.ex.by_name[n] for n in d["replacements"] if n in self.ex.by_name]
                prices = [r.price for r in reps if r.price is not None]
                return {"method": d.get("method"), "candidates": list(d["candidates"]),
                        "winner": ", ".join(str(r.instance_type) for r in reps),
                        "winner_price": _price(sum(prices)) if prices else None}
        return {"winner": None}

    def _winner(self, rec: Any) -> dict[str, Any]:
        """What the NodeClaim launched, and the gap of the type's NodeClaim price to it."""
        if rec.launched is None or rec.price is None:
            return {"winner": None}
        return {"winner": rec.instance_type, "winner_price": _price(rec.price)}


def _with_gap(s: dict[str, Any]) -> dict[str, Any]:
    if "gap" not in s and s.get("price") is not None and s.get("winner_price") is not None:
        s["gap"] = round(s["price"] - s["winner_price"], 6)
        s["gap_percent"] = round(100 * s["gap"] / s["winner_price"], 1) if s["winner_price"] else None
    return s


def _cheapest(it: Any) -> float:
    """The type's cheapest available offering (the tie-break between types filtered alike)."""
    return min((o.price for o in it.available_offerings), default=math.inf)


def _better(a: dict[str, Any], b: dict[str, Any] | None, a_it: Any = None, b_it: Any = None) -> bool:
    """``a`` got further than ``b`` (then: the smaller gap, the better rank, the cheaper type)."""
    if b is None:
        return True
    if _ORDER[a["stage"]] != _ORDER[b["stage"]]:
        return _ORDER[a["stage"]] > _ORDER[b["stage"]]
    ga, gb = a.get("gap"), b.get("gap")
    if ga is not None and gb is not None and ga != gb:
        return bool(ga < gb)
    ra, rb = a.get("rank", 1 << 30), b.get("rank", 1 << 30)
    if ra != rb:
        return bool(ra < rb)
    return a_it is not None and b_it is not None and _cheapest(a_it) < _cheapest(b_it)


def _catalogue(result: Result) -> dict[str, Any]:
    """Instance types by name over the pools of the run's NodeClaims."""
    out: dict[str, Any] = {}
    for rec in result.simulation.launches:
        claim = rec.scheduling
        if claim is None:
            continue
        pool = rec.instance_types if rec.instance_types is not None else claim.template.instance_type_options
        for it in pool:
            out.setdefault(it.name, it)
    return out


# -- the flips -----------------------------------------------------------------------------------


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


def _nodepool_doc(result: Result, name: str) -> dict[str, Any] | None:
    for np in result.simulation.nodepools if hasattr(result.simulation, "nodepools") else ():
        if np.metadata.name == name:
            return _dump_nodepool(np)
    return None


def _dump_nodepool(np: Any) -> dict[str, Any]:
    d: dict[str, Any] = _prune(np.model_dump(mode="json", by_alias=True, exclude_none=True))
    d.pop("status", None)
    meta = d.get("metadata") or {}
    d["metadata"] = {k: v for k, v in meta.items() if k in ("name", "labels", "annotations")}
    return d


def _prune(value: Any) -> Any:
    """``value`` without empty dicts and lists (a NodePool as a user writes it)."""
    if isinstance(value, dict):
        return {k: p for k, v in value.items() if (p := _prune(v)) not in ({}, [])}
    if isinstance(value, list):
        return [_prune(v) for v in value]
    return value


def _values(values: Sequence[str]) -> str:
    return f"[{', '.join(values)}]"


def _requirements(doc: dict[str, Any]) -> list[dict[str, Any]]:
    spec = doc.setdefault("spec", {}).setdefault("template", {}).setdefault("spec", {})
    reqs: list[dict[str, Any]] = spec.setdefault("requirements", [])
    return reqs


class _Flipper:
    """Builds the candidate changes and re-runs the simulation with each."""

    def __init__(self, result: Result, targets: frozenset[str], label: str) -> None:
        self.result = result
        self.targets = targets
        self.label = label
        self.nodepools = self._load_nodepools()

    def _load_nodepools(self) -> dict[str, dict[str, Any]]:
        from karpy.api.loader import load_manifests
        from karpy.api.nodepool import NodePool

        inputs = self.result.inputs
        assert inputs is not None
        opts = inputs.options
        self.loaded = load_manifests(inputs.manifests, extra_kinds=getattr(self.result.cloud_provider,
                                                                           "EXTRA_KINDS", None),
                                     strict=bool(opts.get("strict")), max_pods=opts.get("max_pods"),
                                     exclude=tuple(opts.get("exclude") or ()))
        return {o.metadata.name: _dump_nodepool(o) for o in self.loaded.objects if isinstance(o, NodePool)}

    def rerun(self, kind: str, change: str, *, nodepools: Mapping[str, dict[str, Any]] | None = None,
              extra: Sequence[dict[str, Any]] = (), gates: Mapping[str, bool] | None = None,
              risk: str | None = None, keep: bool = False) -> Flip:
        """Re-run with the change: flipped when the type launches (``keep``: still runs at the end)."""
        from karpy.api.nodepool import NodePool

        inputs = self.result.inputs
        assert inputs is not None
        simulate = inputs.rerun
        replace = dict(nodepools or {})
        objects: list[Any] = [replace.get(o.metadata.name, o) if isinstance(o, NodePool) else o
                              for o in self.loaded.objects]
        opts = dict(inputs.options)
        if gates:
            opts["feature_gates"] = {**dict(opts.get("feature_gates") or {}), **gates}
        after = simulate([*objects, *extra], **opts)
        launched = tuple(sorted({r.instance_type for r in after.simulation.launches
                                 if r.launched is not None and r.instance_type in self.targets
                                 and not (keep and r.deleted)}))
        verified = bool(launched) and len(after.pending_pods) <= len(self.result.pending_pods)
        outage: dict[str, Any] | None = None
        if verified:
            opts["unavailable"] = (*tuple(opts.get("unavailable") or ()), *(f"{t}:*:*" for t in sorted(self.targets)))
            short = simulate([*objects, *extra], **opts)
            outage = {"launched": sorted({str(r.instance_type) for r in short.simulation.launches
                                          if r.launched is not None and not r.deleted}),
                      "cost_per_hour": short.cost_per_hour, "pending_pods": len(short.pending_pods)}
        changed = tuple(replace[n] for n in sorted(replace) if n in self.nodepools) + tuple(
            d for d in extra if d.get("kind") == "NodePool")
        manifests = tuple(d for d in extra if d.get("kind") != "NodePool") + changed
        return Flip(kind, change, manifests, dict(gates or {}), verified, launched, after.cost_per_hour,
                    round(after.cost_per_hour - self.result.cost_per_hour, 6), len(after.pending_pods), risk, outage)

    def overlay(self, requirement: dict[str, Any], gap: float, keep: bool = False) -> Flip:
        amount = math.floor(gap * 1e5 + 1e-6) / 1e5 + 1e-5  # strictly more than the gap
        adj = f"-{amount:.5f}".rstrip("0").rstrip(".")
        doc = {"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay",
               "metadata": {"name": f"prefer-{_slug(self.label)}"},
               "spec": {"requirements": [requirement], "priceAdjustment": adj}}
        return self.rerun("nodeoverlay", f"NodeOverlay prefer-{_slug(self.label)}: priceAdjustment {adj} on "
                          f"{requirement['key']} In {_values(requirement['values'])} (feature gate NodeOverlay=true)",
                          extra=[doc], gates={"NodeOverlay": True}, keep=keep)

    def edit_requirement(self, nodepool: str, key: str, add: Sequence[str] = (), remove: Sequence[str] = (),
                         risk: str | None = None) -> Flip | None:
        doc = self.nodepools.get(nodepool)
        if doc is None:
            return None
        new = yaml.safe_load(yaml.safe_dump(doc))
        reqs = _requirements(new)
        mine = [r for r in reqs if r.get("key") == key]
        what: str
        if mine and mine[0].get("operator") == "In":
            values = [v for v in mine[0].get("values") or () if v not in remove] + \
                [v for v in add if v not in (mine[0].get("values") or ())]
            if not values or values == list(mine[0].get("values") or ()):
                return None
            mine[0]["values"] = values
            what = f"{key} In [{', '.join(values)}]"
        elif mine and mine[0].get("operator") == "NotIn":
            values = [v for v in mine[0].get("values") or () if v not in add] + \
                [v for v in remove if v not in (mine[0].get("values") or ())]
            if values == list(mine[0].get("values") or ()):
                return None
            if values:
                mine[0]["values"] = values
            else:
                reqs.remove(mine[0])
            what = f"{key} NotIn [{', '.join(values)}]" if values else f"no {key} NotIn requirement"
        elif not mine and remove and not add:
            reqs.append({"key": key, "operator": "NotIn", "values": sorted(remove)})
            what = f"{key} NotIn [{', '.join(sorted(remove))}]"
        else:
            return None
        return self.rerun("requirement", f"NodePool {nodepool}: requirement {what}", nodepools={nodepool: new},
                          risk=risk)

    def weighted(self, nodepool: str, requirement: dict[str, Any], relax: Mapping[str, Any] | None = None) -> Flip | None:
        doc = self.nodepools.get(nodepool)
        if doc is None:
            return None
        new = yaml.safe_load(yaml.safe_dump(doc))
        name = f"{nodepool}-{_slug(self.label)}"[:63].strip("-")
        new["metadata"] = {"name": name}
        weight = min(100, int(new.get("spec", {}).get("weight") or 0) + 10)
        new["spec"]["weight"] = weight
        reqs = _requirements(new)
        if relax:
            reqs[:] = [r for r in reqs if r.get("key") != relax["key"]]
        reqs[:] = [r for r in reqs if r.get("key") != requirement["key"]] + [requirement]
        return self.rerun("weighted-nodepool", f"NodePool {name} (weight {weight}, a copy of {nodepool} with "
                          f"{requirement['key']} In {_values(requirement['values'])}; {nodepool} stays as the fallback)",
                          extra=[new])


def _flips(result: Result, s: dict[str, Any], it: Any, targets: frozenset[str], label: str,
           generation: str | None, catalogue: Mapping[str, Any]) -> tuple[list[Flip], str | None]:
    """The verified flips for the stage ``s`` of type ``it`` (and a note when none could be tried)."""
    inputs = result.inputs
    if inputs is None:
        return [], "flips not tried: the run was not built by karpy.simulate from manifests"
    sources = inputs.manifests if isinstance(inputs.manifests, (list, tuple)) else [inputs.manifests]
    if any(str(x) == "-" for x in sources):
        return [], "flips not tried: the manifests came from standard input and cannot be re-read"
    stage = s["stage"]
    nodepool = s["nodepool"]
    target_req = ({"key": LABEL_GENERATION, "operator": "In", "values": [generation]} if generation is not None
                  else {"key": LABEL_INSTANCE_TYPE, "operator": "In", "values": [it.name]})
    flipper = _Flipper(result, targets, label)
    tried: list[Flip | None] = []
    if stage in _PRICE_STAGES and s.get("gap") is not None and s["gap"] >= 0:
        tried.append(flipper.overlay(target_req, s["gap"]))
        rec = next(r for r in result.simulation.launches if r.name == s["nodeclaim"])
        claim = rec.scheduling
        reqs = rec.requirements if rec.requirements is not None else claim.requirements
        price = it.min_compatible_price(reqs, claim.well_known)
        cands = rec.untruncated if rec.untruncated is not None else claim.instance_type_options
        cheaper = [c for c in cands if c.min_compatible_price(reqs, claim.well_known) <= price
                   and c.name not in targets]
        for key in _FLIP_KEYS:
            keep = {_value(c, key) for c in cands if c.name in targets}
            remove = sorted({v for c in cheaper if (v := _value(c, key)) is not None} - keep)
            if not remove:
                continue
            flip = flipper.edit_requirement(nodepool, key, remove=remove,
                                            risk=f"NodePool {nodepool} no longer launches {', '.join(remove)}")
            if flip is not None:
                tried.append(flip)
                break
        tried.append(flipper.weighted(nodepool, target_req))
    elif stage == "consolidation" and s.get("gap") is not None and s["gap"] > 0:
        # the candidate priced at or below its replacement fails launchPrice < maxPrice
        tried.append(flipper.overlay(target_req, s["gap"], keep=True))
    elif stage == "nodepool-requirement":
        key = s["key"]
        value = _value(it, key)
        if value is not None:
            tried.append(flipper.edit_requirement(nodepool, key, add=[value]))
            relaxed = {"key": key, "operator": "In", "values": [value]}
            tried.append(flipper.weighted(nodepool, target_req, relax=relaxed))
    flips = [f for f in tried if f is not None and f.verified]
    note = None
    if not flips:
        note = {"ice": "no NodePool change gives EC2 capacity; the fallback is what launched instead",
                "launched": None,
                "consolidation": "no overlay tried kept it",
                "pod-requirement": "the pods' own requirement removed it: change the pods",
                "resources": "the type is too small for the pods (with DaemonSets)",
                "host-ports": "change the DaemonSets' or the pods' host ports"}.get(stage, "no change tried flipped it")
    return flips, note


# -- the answer ----------------------------------------------------------------------------------


def _money(p: float | None) -> str:
    return "-" if p is None else f"${p:.5f}".rstrip("0").rstrip(".") + "/h"


def _stage_text(s: Mapping[str, Any], name: str) -> str:
    stage = s["stage"]
    where = f"NodeClaim {s['nodeclaim']}, NodePool {s['nodepool']}"
    if stage == "nodepool-requirement":
        return f"{name} was filtered out by NodePool {s['nodepool']}'s requirement {s['requirement']}"
    if stage == "pod-requirement":
        return f"{name} was filtered out by the pods' requirement {s['requirement']} ({where})"
    if stage == "host-ports":
        return f"{name} was filtered out: its DaemonSets' host ports conflict with the pods' ({where})"
    if stage == "resources":
        req = ", ".join(f"{k}={v}" for k, v in (s.get("requests") or {}).items())
        return f"{name} was filtered out: not enough resources for the pods ({req}) with DaemonSets ({where})"
    if stage == "offerings":
        return f"{name} was filtered out: no available offering compatible with the requirements ({where})"
    gap = ""
    if s.get("gap") is not None and s.get("winner"):
        pct = f" ({s['gap_percent']:.1f} %)" if s.get("gap_percent") is not None else ""
        gap = f": {_money(s['gap'])}{pct} dearer than {s['winner']}"
    if stage == "price-filter":
        return (f"{name} was removed from {s['nodeclaim']}'s options by {s.get('method')}'s price filter "
                f"(launchPrice < maxPrice, the price of {', '.join(s.get('candidates') or ())})")
    if stage == "nodepool-limits":
        return f"{name} was removed by NodePool {s['nodepool']}'s limits ({where})"
    if stage == "max-instance-types":
        return (f"{name} was cut by ToNodeClaim's MaxInstanceTypes {s['max_instance_types']}: rank {s['rank']} of "
                f"{s['of']} by price{gap}")
    if stage == "provider-filter":
        return f"{name} was removed by the AWS provider's {s['filter']}{gap}"
    if stage == "provider-cut":
        return f"{name} was cut by the AWS provider's cut to {s['kept']}: rank {s['rank']} of {s['of']} by price{gap}"
    if stage == "fleet" and not s.get("strategy"):
        return f"{name} lost at the cloud provider's launch pick (it gives no CreateFleet detail){gap}"
    if stage == "fleet":
        rank = f"rank {s['fleet_rank']} of {s['fleet_types']}" if s.get("fleet_rank") else ""
        return f"{name} lost at CreateFleet's {s.get('strategy') or ''} pick{gap}".replace("  ", " ") + \
            (f" ({rank})" if rank else "")
    if stage == "ice":
        return (f"{name} got {s['error_code']} from CreateFleet in {', '.join(s['zones'])}"
                + (f"; {s['winner']} launched instead" if s.get("winner") else ""))
    if stage == "consolidation":
        by = (f" with {s['winner']} ({_money(s.get('winner_price'))} < {_money(s.get('price'))}: launchPrice < "
              f"maxPrice)" if s.get("winner") else "")
        return (f"{name} was launched ({s['nodeclaim']}), then replaced by {s.get('method') or s['replaced_by']}"
                f"{by} at t={s['at']:g}s")
    return f"{name} was launched ({s['nodeclaim']}, {_money(s.get('price'))})"


def _answer(w: WhyNot) -> str:
    head = w.target if w.target == w.instance_type else f"{w.target}: its best candidate"
    line = _stage_text(w.detail, w.instance_type)
    if head != w.instance_type:
        line = f"{head} {line}"
    if w.stage == "launched":
        return line
    if w.flips:
        return line + "; verified flips: " + "; ".join(
            f"{_short_change(f)} ({_money(f.cost_per_hour)})" for f in w.flips)
    return line + f"; no verified flip{': ' + w.note if w.note else ''}"


def _short_change(f: Flip) -> str:
    if f.kind == "nodeoverlay":
        return f"NodeOverlay priceAdjustment {f.manifests[0]['spec']['priceAdjustment']}"
    if f.kind == "weighted-nodepool":
        return f"weighted NodePool {f.manifests[0]['metadata']['name']}"
    return f.change


def why_not(result: Result, instance_type: str | None = None, *, generation: int | str | None = None,
            verify: bool = True, nodeclaim: str | None = None, pod: str | None = None) -> WhyNot:
    """See :meth:`karpy.result.Result.why_not`. ``verify=False`` skips the re-runs (no flips);
    ``nodeclaim`` / ``pod`` (``NAMESPACE/NAME``) look only at that NodeClaim / the NodeClaims that
    got the pod (:class:`karpy.explain.ExplainLookupError` when unknown)."""
    if (instance_type is None) == (generation is None):
        raise WhyNotError("give an instance type or a generation (one of them)")
    catalogue = _catalogue(result)
    gen = None if generation is None else str(generation).strip()
    if instance_type is not None:
        instance_type = instance_type.strip()
        if instance_type not in catalogue:
            raise WhyNotError(f"unknown instance type {instance_type!r}: no NodePool of this run offered it "
                              f"({len(catalogue)} types offered)")
        types = [catalogue[instance_type]]
        target = instance_type
    else:
        types = [it for it in catalogue.values() if _generation(it) == gen]
        if not types:
            gens = sorted({g for it in catalogue.values() if (g := _generation(it)) is not None}, key=int)
            raise WhyNotError(f"no instance type of generation {gen!r} was offered in this run "
                              f"(generations offered: {', '.join(gens) or 'none'})")
        target = f"generation {gen}"
    ex = _Explainer(result)
    race = _Race(ex)
    records: list[Any] = list(result.simulation.launches)
    if nodeclaim is not None:
        records = [ex.record(nodeclaim)]
    elif pod is not None:
        ex.pod_model(pod)
        records = list(ex.pod_claims.get(pod, ()))
    best: dict[str, Any] | None = None
    best_it: Any = None
    counts: dict[str, int] = {}
    for rec in records:
        if rec.scheduling is None:
            continue
        claim_best: dict[str, Any] | None = None
        claim_it: Any = None
        pool = rec.instance_types if rec.instance_types is not None else rec.scheduling.template.instance_type_options
        by_name = {x.name: x for x in pool}
        for t in types:
            it = by_name.get(t.name)
            if it is None:
                continue
            s = _with_gap(race.stage(rec, it))
            if _better(s, claim_best, it, claim_it):
                claim_best, claim_it = s, it
        if claim_best is None:
            continue
        counts[claim_best["stage"]] = counts.get(claim_best["stage"], 0) + 1
        if _better(claim_best, best, claim_it, best_it):
            best, best_it = claim_best, claim_it
    if best is None:
        scope = (f"NodeClaim {nodeclaim}" if nodeclaim is not None else
                 f"the NodeClaims of pod {pod}" if pod is not None else "no NodeClaim of this run")
        raise WhyNotError(f"{target}: {scope} never considered it" if nodeclaim is not None or pod is not None
                          else f"{target}: no NodeClaim of this run considered it")
    names = frozenset(it.name for it in types)
    flips: list[Flip] = []
    note: str | None = None
    if verify and best["stage"] != "launched":
        flips, note = _flips(result, best, best_it, names, instance_type or f"gen{gen}", gen, catalogue)
    elif not verify:
        note = "flips not tried (verify=False)"
    w = WhyNot(target, best_it.name, best["stage"], best, tuple(flips), dict(sorted(counts.items(),
                                                                                  key=lambda kv: _ORDER[kv[0]])),
               result.cost_per_hour, note)
    object.__setattr__(w, "answer", _answer(w))
    return w


def _shown(m: Mapping[str, Any]) -> dict[str, Any]:
    """A flip's object as the text shows it: a NodePool by its name, weight and requirements (the
    JSON output has the whole object)."""
    if m.get("kind") != "NodePool":
        return dict(m)
    spec = m.get("spec") or {}
    short: dict[str, Any] = {"weight": spec["weight"]} if spec.get("weight") is not None else {}
    short["template"] = {"spec": {"requirements": ((spec.get("template") or {}).get("spec") or {})
                                  .get("requirements", [])}}
    return {"apiVersion": m.get("apiVersion"), "kind": "NodePool", "metadata": {"name": m["metadata"]["name"]},
            "spec": short}


def render_why_not(w: WhyNot) -> str:
    """The text of ``karpy explain --why-not``: the one-line answer, then the details."""
    d = w.detail
    lines = [w.answer, ""]
    lines.append(f"why not {w.target}" + (f" (best candidate {w.instance_type})" if w.target != w.instance_type
                                          else ""))
    lines.append(f"  stage: {w.stage}" + (f"  [{STAGES[w.stage]}]" if STAGES[w.stage] else ""))
    lines.append(f"  NodeClaim {d['nodeclaim']} (NodePool {d['nodepool']})"
                 + (f": price rank {d['rank']} of {d['of']} candidates, {_money(d.get('price'))}"
                    if d.get("rank") else ""))
    if d.get("fleet_rank"):
        lines.append(f"  CreateFleet {d['strategy']} by {d['ranked_by']}: rank {d['fleet_rank']} of "
                     f"{d['fleet_types']} types, {_money(d['fleet_price'])}")
    if d.get("winner"):
        gap = (f", gap {_money(d['gap'])} ({d['gap_percent']:.1f} %)" if w.stage in _PRICE_STAGES
               and d.get("gap") is not None and d.get("gap_percent") is not None else "")
        lines.append(f"  {'winner' if w.stage in _PRICE_STAGES else 'launched instead'}: {d['winner']} "
                     f"{_money(d.get('winner_price'))}{gap}")
    lines.append("  NodeClaims by stage: " + ", ".join(f"{k} {v}" for k, v in w.nodeclaims.items()))
    lines.append(f"  this run: {_money(w.cost_per_hour)}")
    if any(m.get("kind") == "NodePool" for f in w.flips for m in f.manifests):
        lines.append("  (NodePools shown by their requirements and weight; -o json has the whole objects)")
    if w.flips:
        lines.append("  verified flips (each re-run with the change):")
        for i, f in enumerate(w.flips, 1):
            lines.append(f"    {i}. {f.change}")
            did = "still runs at the end" if w.stage == "consolidation" else "launched"
            lines.append(f"       verified: {did} {', '.join(f.launched)}; {_money(f.cost_per_hour)} "
                         f"({'+' if f.cost_change >= 0 else '-'}{_money(abs(f.cost_change))}), "
                         f"{f.pending_pods} pods pending" + (f"; risk: {f.risk}" if f.risk else ""))
            if f.outage is not None:
                o = f.outage
                lines.append(f"       with {w.target} unavailable: launched {', '.join(o['launched']) or 'nothing'}; "
                             f"{_money(o['cost_per_hour'])}, {o['pending_pods']} pods pending")
            for m in f.manifests:
                text = yaml.safe_dump(_shown(m), sort_keys=False, default_flow_style=None).rstrip()
                lines.extend("       " + ln for ln in text.splitlines())
                lines.append("       ---")
            lines.pop()
    elif w.note:
        lines.append(f"  no verified flip: {w.note}")
    return "\n".join(lines) + "\n"
