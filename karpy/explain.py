"""Decision traces: why a NodeClaim got the instance types it got, and where a pod ended and why.

Every decision says why (docs/architecture.md, "Principles"). Everything here is computed lazily from what a run kept
(``karpy.sim.simulation.LaunchRecord`` / ``ProvisioningPass`` and the scheduler's
``PodAttempt`` facts); the provisioning hot path only records references and error strings.

- :func:`explain_nodeclaim` — the NodePool (and weight), the pods the claim got, the elimination
  funnel over the pool's instance types in that pass (each requirement in turn, then resources,
  then offerings, then minValues; upstream's wording), the price order, where the
  MaxInstanceTypes (600) cut fell, minValues outcomes, the cloud provider's launch detail (filters,
  the 60 cut, the fleet request and what EC2 picked; via the provider's optional
  ``explain_launch(name)``, else its ``fleet_record(name)``), and for a failed launch the
  NodeClaims that took its pods afterwards.
- :func:`explain_pod` — where the pod ended, the NodePools tried in weight order with the reason
  each was rejected, the preferences relaxed, the kube-scheduler condition, the NodeClaim chain.
- :func:`explain_run` / :func:`explain_document` — all of it (the latter is the ``explain`` key of
  the JSON document: compact, and for runs with more than :data:`FULL_EXPLAIN_MAX_NODECLAIMS`
  NodeClaims only pending pods and failed NodeClaims).
- :func:`render_explain` — plain-text rendering of any of these dicts.

Determinism: lists follow the run's order (catalogue order, weight order, creation order) or are
sorted; prices are rounded to 6 decimals; nothing depends on hashing or the clock.

The funnel re-applies the claim's final requirements to the pool's instance types of that pass.
Requirements only narrow and requests only grow while a claim is built, so the final requirements
remove exactly what the per-pod filters removed; anything else (a NodePool's limits cut by
``filterByRemainingResources``) appears as a last "other" step, so the funnel's remaining count
always equals the claim's candidate count.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karpy.cloudprovider.types import MAX_FLOAT64, InstanceTypes
from karpy._errors import KarpyError
from karpy.provisioning.preferences import describe_relaxations
from karpy.provisioning.scheduler import PodAttempt
from karpy.scheduling.hostports import get_host_ports
from karpy.scheduling.labels import LABEL_HOSTNAME, LABEL_INSTANCE_TYPE, NODECLAIM_MIN_VALUES_RELAXED_ANNOTATION_KEY
from karpy.scheduling.resources import fits, merge, requests_for_pods, to_strings
from karpy.sim.options import LAUNCH_DETAIL_LIMIT

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = [
    "FULL_EXPLAIN_MAX_NODECLAIMS",
    "PRICE_ORDER_SHOWN",
    "ExplainLookupError",
    "explain_document",
    "explain_nodeclaim",
    "explain_pod",
    "explain_run",
    "answer_lines",
    "nodeclaim_answer",
    "render_explain",
]

#: Above this many NodeClaims the document's explain block keeps only pending pods and failed claims.
FULL_EXPLAIN_MAX_NODECLAIMS = 200
#: How many candidates of the price order are listed.
PRICE_ORDER_SHOWN = 10
#: How many instance-type names each funnel step quotes.
EXAMPLES_SHOWN = 3
#: The default MaxInstanceTypes (nodeclaimtemplate.go) when the run's options are unknown.
DEFAULT_MAX_INSTANCE_TYPES = 600

# upstream wording (nodeclaim.go InstanceTypeFilterError, :488-538) of each funnel stage
UPSTREAM_REQUIREMENTS = "no instance type met all requirements"
UPSTREAM_RESOURCES = "no instance type has enough resources"
UPSTREAM_OFFERINGS = "no instance type has the required offering"
REASON_REQUIREMENT = "did not meet the requirement"
REASON_RESOURCES = "did not have enough resources"
REASON_OFFERINGS = "had no available offering compatible with the requirements"
REASON_HOST_PORTS = "their DaemonSet pods' host ports conflict with the pods' host ports"
REASON_LIMITS = "capacity exceeds the NodePool's remaining limits (filterByRemainingResources)"
REASON_OTHER = "removed while the claim was built (not reproduced by its final requirements)"
NO_LAUNCH_DETAIL = "provider gives no launch detail"
#: the launch_note of a NodeClaim whose detail a long run let go (karpy.sim.retention)
DETAIL_RELEASED = "launch detail not kept: gone after the run's first {limit:,} NodeClaims gone (launch_detail_limit)"


class ExplainLookupError(KarpyError, LookupError):
    """An unknown NodeClaim name or pod key (the CLI reports it as bad input)."""


def _price(p: float | None) -> float | None:
    if p is None or p >= MAX_FLOAT64:
        return None
    return round(p, 6)


class _Explainer:
    """Caches shared by the explanations of one result (indexes over launches and passes)."""

    def __init__(self, result: Any) -> None:
        self.result = result
        sim = result.simulation
        self.sim = sim
        opts = getattr(sim, "options", None)
        self.max_instance_types: int = getattr(opts, "max_instance_types", DEFAULT_MAX_INSTANCE_TYPES)
        self.min_values_policy: str = getattr(opts, "min_values_policy", "Strict")
        self.records: list[Any] = list(sim.launches)
        self.by_name: dict[str, Any] = {r.name: r for r in self.records}
        #: id(record) -> position in creation order
        self.pos: dict[int, int] = {id(r): i for i, r in enumerate(self.records)}
        #: pod key -> records whose claim got the pod, in creation order
        self.pod_claims: dict[str, list[Any]] = {}
        #: (pass index, hostname placeholder) -> record
        self.by_hostname: dict[tuple[int, str], Any] = {}
        for r in self.records:
            claim = r.scheduling
            if claim is None:
                continue
            self.by_hostname[(r.pass_index, claim.hostname)] = r
            for p in claim.pods:
                self.pod_claims.setdefault(p.key, []).append(r)
        #: pod key -> karpy.sim.simulation.PodHistory
        self.history: dict[str, Any] = dict(getattr(sim, "pod_history", {}) or {})
        #: (id(instance types), requirement) -> ids of the types it removes
        self._bad: dict[tuple[int, Any], frozenset[int]] = {}
        #: (id(instance types), key) -> the types grouped by their requirement for the key
        #: (the pools are held by the run's records, so an id is not reused while this lives)
        self._groups: dict[tuple[int, str], dict[Any, list[Any]]] = {}

    # -- lookups --------------------------------------------------------------------------------
    def record(self, name: str) -> Any:
        rec = self.by_name.get(name)
        if rec is None:
            names = sorted(self.by_name)
            known = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
            raise ExplainLookupError(f"unknown NodeClaim {name!r} (NodeClaims of this run: {known or 'none'})")
        return rec

    def pod_model(self, key: str) -> Any:
        pod = self.sim.pods.get(key) or self.sim.deleted_pods.get(key)
        if pod is None:
            raise ExplainLookupError(f"unknown pod {key!r} (expected NAMESPACE/NAME of a pod of this run)")
        return pod

    def record_for(self, ps: Any, hostname: str | None) -> Any:
        if ps is None or hostname is None:
            return None
        return self.by_hostname.get((ps.index, hostname))

    # -- NodeClaims -----------------------------------------------------------------------------
    def _removed_by(self, pool: Sequence[Any], key: str, req: Any) -> frozenset[int]:
        """ids of the pool's types whose own requirement for ``key`` does not intersect ``req``
        (nodeclaim.go compatible: ``it.Requirements.Intersects(reqs)``, one key at a time)."""
        ck = (id(pool), req)
        hit = self._bad.get(ck)
        if hit is None:
            # the answer depends only on each type's own requirement for ``key`` (intersects looks
            # at the keys of ``one`` alone): ask once per distinct requirement, not once per type
            one = {key: req}
            bad: list[int] = []
            for own, group in self._by_requirement(pool, key).items():
                if own is not None and group[0].requirements.intersects(one) is not None:
                    bad.extend(id(it) for it in group)
            hit = self._bad[ck] = frozenset(bad)
        return hit

    def _by_requirement(self, pool: Sequence[Any], key: str) -> dict[Any, list[Any]]:
        """The pool's types grouped by their own requirement for ``key`` (None: they have none)."""
        gk = (id(pool), key)
        groups = self._groups.get(gk)
        if groups is None:
            groups = self._groups[gk] = {}
            for it in pool:
                groups.setdefault(it.requirements.get(key) if key in it.requirements else None, []).append(it)
        return groups

    def funnel(self, rec: Any) -> tuple[dict[str, Any], list[Any], Any]:
        """The elimination funnel (see module doc) -> (funnel dict, remaining, requirements)."""
        claim = rec.scheduling
        reqs = rec.requirements if rec.requirements is not None else claim.requirements
        pool = rec.instance_types if rec.instance_types is not None else claim.template.instance_type_options
        steps: list[dict[str, Any]] = []
        current = self._funnel_requirements(pool, reqs, claim.template.requirements, steps)
        overhead, current = _funnel_host_ports(claim, current, steps)
        # resources: pod requests + the DaemonSet overhead of the type's group (nodeclaim.go:560-600)
        pod_total = requests_for_pods(claim.pods)
        current = _funnel_resources(current, pod_total, overhead, steps)
        current = _funnel_offerings(current, pod_total, overhead, reqs, claim.well_known, steps)

        candidates = list(rec.untruncated if rec.untruncated is not None else claim.instance_type_options)
        cand_ids = {id(it) for it in candidates}
        extra = [it for it in current if id(it) not in cand_ids]
        if extra:
            current = [it for it in current if id(it) in cand_ids]
            limited = claim.template.nodepool.spec.limits is not None
            _step(steps, "other", extra, current, REASON_LIMITS if limited else REASON_OTHER)
        out = {"start": len(pool), "steps": steps, "remaining": len(current), "candidates": len(candidates)}
        missing = len(cand_ids - {id(it) for it in current})
        if missing:
            out["unexplained_candidates"] = missing
        return out, candidates, reqs

    def _funnel_requirements(self, pool: Sequence[Any], reqs: Any, template_reqs: Any,
                             steps: list[dict[str, Any]]) -> list[Any]:
        """The funnel's requirement steps, one per key that removes types (hostname aside)."""
        current = list(pool)
        for key, req in reqs.items():
            if key == LABEL_HOSTNAME:
                continue
            bad = self._removed_by(pool, key, req)
            if not bad:
                continue
            removed = [it for it in current if id(it) in bad]
            if not removed:
                continue
            current = [it for it in current if id(it) not in bad]
            if key in template_reqs:
                source = "nodepool" if template_reqs[key] == req else "nodepool+pods"
            else:
                source = "pods"
            _step(steps, "requirement", removed, current, REASON_REQUIREMENT, requirement=req.format(natural=True),
                  source=source, upstream=UPSTREAM_REQUIREMENTS)
        return current

    def min_values(self, rec: Any, candidates: list[Any], reqs: Any) -> dict[str, Any] | None:
        """Per minValues requirement: the value asked (and the NodePool's, if BestEffort relaxed
        it), the distinct values among the candidates; the relaxed annotation."""
        if not reqs.has_min_values():
            return None
        entries = []
        for key, r in reqs.items():
            if r.min_values is None:
                continue
            values: set[str] = set()
            for it in candidates:
                values.update(it.requirements.get(key).values)
            original = rec.scheduling.template.requirements.get(key).min_values
            entry: dict[str, Any] = {"key": key, "min_values": r.min_values, "distinct_values": len(values),
                                     "satisfied": len(values) >= r.min_values}
            if original is not None and original != r.min_values:
                entry["nodepool_min_values"] = original
            entries.append(entry)
        ann = (rec.requested.metadata.annotations or {}).get(NODECLAIM_MIN_VALUES_RELAXED_ANNOTATION_KEY)
        return {"policy": self.min_values_policy, "requirements": entries, "relaxed": ann == "true"}

    def price_order(self, candidates: list[Any], reqs: Any,
                    wk: frozenset[str]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The first PRICE_ORDER_SHOWN candidates cheapest first, and where the MaxInstanceTypes
        cut fell (ToNodeClaim: ``OrderByPrice(reqs)[:MaxInstanceTypes]``)."""
        ordered = InstanceTypes(list(candidates)).order_by_price(reqs, wk)
        first = []
        for it in ordered[:PRICE_ORDER_SHOWN]:
            price = it.min_compatible_price(reqs, wk)
            entry: dict[str, Any] = {"instance_type": it.name, "price": _price(price)}
            for o in it.available_offerings:
                if o.price == price and o.is_compatible(reqs, wk):
                    entry["zone"] = o.zone
                    entry["capacity_type"] = o.capacity_type
                    break
            first.append(entry)
        limit = self.max_instance_types
        dropped = ordered[limit:]
        cut: dict[str, Any] = {"max_instance_types": limit, "kept": min(len(ordered), limit), "dropped": len(dropped)}
        if dropped:
            cut["cheapest_dropped"] = dropped[0].name
            cut["cheapest_dropped_price"] = _price(dropped[0].min_compatible_price(reqs, wk))
            cut["most_expensive_kept_price"] = _price(ordered[limit - 1].min_compatible_price(reqs, wk)) \
                if limit > 0 else None
        return {"count": len(ordered), "first": first}, cut

    def launch_detail(self, rec: Any, compact: bool = False) -> tuple[dict[str, Any] | None, str | None]:
        """The provider's ``explain_launch(name)``, else (not compact) its ``fleet_record(name)``
        (the document already carries that one as ``nodeclaims[].fleet``)."""
        provider = self.result.cloud_provider
        explain_launch = getattr(provider, "explain_launch", None)
        has_fleet = callable(getattr(provider, "fleet_record", None))
        if callable(explain_launch):
            # a provider whose explain_launch takes ``compact`` leaves out what _compact_launch
            # would reduce to a count anyway (the considered overrides of every fleet decision)
            detail = (explain_launch(rec.name, compact=True) if compact and _takes_compact(explain_launch)
                      else explain_launch(rec.name))
            if detail is not None:
                return (_compact_launch(detail, has_fleet) if compact else detail), None
        if compact:
            return None, NO_LAUNCH_DETAIL
        fleet_record = getattr(provider, "fleet_record", None)
        if callable(fleet_record):
            fleet = fleet_record(rec.name)
            if fleet is not None:
                return fleet, None
        return None, NO_LAUNCH_DETAIL

    def pod_outcome(self, key: str) -> dict[str, Any]:
        """Where a pod ended (its node, or None)."""
        pod = self.sim.pods.get(key) or self.sim.deleted_pods.get(key)
        if pod is None:
            return {"pod": key, "node": None}
        return {"pod": key, "node": pod.spec.node_name or None}

    def fallback(self, rec: Any) -> dict[str, Any] | None:
        """For a failed launch: the later NodeClaims that got its pods, and pods no claim took."""
        if rec.launched is not None or rec.scheduling is None:
            return None
        idx = self.pos[id(rec)]
        claims: dict[str, dict[str, Any]] = {}
        elsewhere: list[dict[str, Any]] = []
        for p in rec.scheduling.pods:
            later = next((r for r in self.pod_claims.get(p.key, ()) if self.pos[id(r)] > idx), None)
            if later is None:
                elsewhere.append(self.pod_outcome(p.key))
                continue
            entry = claims.setdefault(later.name, {"nodeclaim": later.name, "nodepool": later.nodepool,
                                                   "launched": later.launched is not None,
                                                   "instance_type": later.instance_type, "pods": []})
            entry["pods"].append(p.key)
        return {"error": rec.error, "nodeclaims": list(claims.values()), "pods_not_relaunched": elsewhere}

    def fallback_for(self, rec: Any) -> list[str]:
        """Earlier failed NodeClaims some of whose pods this claim took."""
        if rec.scheduling is None:
            return []
        idx = self.pos[id(rec)]
        out: list[str] = []
        for p in rec.scheduling.pods:
            for r in self.pod_claims.get(p.key, ()):
                if self.pos[id(r)] < idx and r.launched is None and r.name not in out:
                    out.append(r.name)
        return out

    def nodeclaim(self, name: str, compact: bool = False) -> dict[str, Any]:
        """The trace of one NodeClaim. ``compact`` (the document): leave out what the document's
        ``nodeclaims`` entry already says (kind, name, launch outcome, price, fleet block)."""
        rec = self.record(name)
        claim = rec.scheduling
        out: dict[str, Any] = {} if compact else {"kind": "nodeclaim", "name": rec.name}
        out["nodepool"] = rec.nodepool
        if claim is not None:
            out["weight"] = claim.template.weight
        out["pass"] = rec.pass_index
        if not compact:
            out.update({"created_at": rec.created_at, "launched": rec.launched is not None,
                        "instance_type": rec.instance_type, "capacity_type": rec.capacity_type, "zone": rec.zone,
                        "price": _price(rec.price), "error": rec.error})
        if claim is None:
            out["pods"] = []
            if rec.detail_released:
                out["launch"] = None
                opts = self.result.simulation.options
                out["launch_note"] = DETAIL_RELEASED.format(
                    limit=opts.launch_detail_limit if opts is not None else LAUNCH_DETAIL_LIMIT)
            return out
        out["pods"] = [p.key for p in claim.pods]
        funnel, candidates, reqs = self.funnel(rec)
        out["funnel"] = funnel
        order, cut = self.price_order(candidates, reqs, claim.well_known)
        out["price_order"] = order
        out["max_instance_types_cut"] = cut
        out["in_nodeclaim"] = _instance_type_count(rec.requested)
        out["min_values"] = self.min_values(rec, candidates, reqs)
        detail, note = self.launch_detail(rec, compact)
        out["launch"] = detail
        if note is not None:
            out["launch_note"] = note
        fb = self.fallback(rec)
        if fb is not None:
            out["fallback"] = fb
        took = self.fallback_for(rec)
        if took:
            out["fallback_for"] = took
        return out

    # -- pods -----------------------------------------------------------------------------------
    def nodepool_results(self, ps: Any, tries: Sequence[tuple[str, str | None]] | None,
                         outcome: str, compact: bool) -> list[dict[str, Any]]:
        """The pass's NodePools in weight order: filtered out up front / rejected (with the
        upstream error) / chosen / not tried (after the winner) / not needed."""
        tried = dict(tries or ())
        out: list[dict[str, Any]] = []
        for name, weight in ps.nodepools:
            entry: dict[str, Any] = {"nodepool": name, "weight": weight}
            if name in ps.template_errors:
                entry["result"] = "filtered out"
                entry["reason"] = ps.template_errors[name] or "no instance types"
            elif name in tried:
                err = tried[name]
                entry["result"] = "chosen" if err is None else "rejected"
                if err is not None:
                    entry["reason"] = err
            elif tries is None and outcome in ("existing-node", "in-flight-nodeclaim"):
                if compact:
                    continue
                entry["result"] = "not needed"
            else:
                if compact:
                    continue
                entry["result"] = "not tried"
            out.append(entry)
        return out

    def decisive_attempt(self, key: str) -> tuple[Any, Any] | None:
        """The pass that decided where the pod went (PodHistory.decisive)."""
        h = self.history.get(key)
        if h is None:
            return None
        ps, att = h.decisive
        return ps, (att if isinstance(att, PodAttempt) else PodAttempt.from_record(att))

    def pod(self, key: str, compact: bool = False) -> dict[str, Any]:
        pod = self.pod_model(key)
        out: dict[str, Any] = {}
        if not compact:  # (the document's ``pods`` entry already says these)
            doc_pod = self.result._pod(pod) if hasattr(self.result, "_pod") else {}
            out.update({"kind": "pod", "pod": key, "phase": doc_pod.get("phase"), "node": pod.spec.node_name or None,
                        "nominated_node": pod.status.nominated_node_name or None, "message": doc_pod.get("message")})
        out["condition"] = _condition(pod)
        gang = _gang_note(pod, self.result)
        if gang is not None:
            out["gang"] = gang
        last = self.decisive_attempt(key)
        if last is None:
            out["placement"] = None
        else:
            ps, att = last
            target = att.target
            placement: dict[str, Any] = {"pass": ps.index, "time": ps.time, "outcome": att.outcome,
                                         "passes_tried": self.history[key].passes}
            planned: str | None = None
            if att.outcome in ("new-nodeclaim", "in-flight-nodeclaim"):
                rec = self.record_for(ps, target)
                placement["nodeclaim"] = planned = rec.name if rec is not None else None
                if rec is None:
                    placement["note"] = "the NodeClaim was not created (see message)"
            elif att.outcome == "existing-node":
                placement["planned_node"] = planned = target
            else:
                placement["error"] = att.error
            # one truth: where the pod runs is the pod's node (kube-scheduler binds; Karpenter's
            # plan is a plan). A Node is named after its NodeClaim.
            bound = pod.spec.node_name or None
            placement["bound_node"] = bound
            placement["as_planned"] = None if bound is None or planned is None else bound == planned
            out["placement"] = placement
            names = getattr(ps, "templates", ())
            final = att.rounds[-1] if att.rounds else (None, None, None)
            final_tries = PodAttempt.templates_tried(names, final[1], final[2] is None)
            out["nodepools"] = self.nodepool_results(ps, final_tries, att.outcome, compact)
            steps = describe_relaxations(pod, att.relaxations)
            out["relaxations"] = steps
            if len(att.rounds) > 1:
                weights = dict(ps.nodepools)
                named = iter([None, *steps])
                out["rounds"] = [
                    {"relaxed": next(named),
                     "nodepools": [{"nodepool": n, "weight": weights.get(n, 0),
                                    "result": "chosen" if e is None else "rejected", "reason": e}
                                   for n, e in (PodAttempt.templates_tried(names, errs, err is None) or ())],
                     "error": err}
                    for r, errs, err in att.rounds
                ]
        chain = self.pod_claims.get(key, ())
        if compact:
            out["nodeclaims"] = [r.name for r in chain]
        else:
            out["nodeclaims"] = [
                {"name": r.name, "nodepool": r.nodepool, "pass": r.pass_index, "launched": r.launched is not None,
                 "instance_type": r.instance_type, "error": r.error}
                for r in chain
            ]
        return out


#: launch-detail keys the document's ``nodeclaims[].fleet`` block already holds
_FLEET_BLOCK_KEYS = ("allocation_strategy", "capacity_type", "overrides", "errors")


def _takes_compact(explain_launch: Callable[..., Any]) -> bool:
    """Whether a provider's ``explain_launch`` takes the ``compact`` keyword."""
    try:
        return "compact" in inspect.signature(explain_launch).parameters
    except (TypeError, ValueError):
        return False


def _compact_launch(detail: Mapping[str, Any], has_fleet: bool) -> dict[str, Any]:
    """The provider's launch detail for the document: without what its ``fleet`` block already
    says, and each fleet decision's considered overrides reduced to their count."""
    out: dict[str, Any] = {}
    for k, v in detail.items():
        if has_fleet and k in _FLEET_BLOCK_KEYS:
            continue
        if k in ("decisions", "fleet_decisions") and isinstance(v, list):
            v = [_compact_decision(d) for d in v]
        out[k] = v
    return out


def _compact_decision(d: Any) -> Any:
    if not isinstance(d, Mapping):
        return d
    out = dict(d)
    considered = out.get("overrides_considered")
    if isinstance(considered, list):
        out["overrides_considered"] = len(considered)
    return out


def _gang_note(pod: Pod, result: Any) -> str | None:
    """The run's warning about the 1.37 gang (``spec.schedulingGroup``) of a pending pod: what
    Karpenter v1.14, which has no gang awareness, did with it (karpy.kubescheduler.scheduler
    pod_group_warnings). The result's warnings are read only for such a pod (Result.warnings
    walks every launch)."""
    sg = pod.spec.scheduling_group
    if sg is None or not sg.pod_group_name or pod.spec.node_name:
        return None
    gk = f"{pod.metadata.namespace}/{sg.pod_group_name}"
    for w in getattr(result, "warnings", None) or ():
        if isinstance(w, str) and (w.startswith(f"PodGroup {gk} ") or (w.startswith("GenericWorkload is off")
                                                                      and f" {gk}" in w)):
            return w
    return None


def _condition(pod: Pod) -> str | None:
    """The kube-scheduler's PodScheduled=False message (reason when there is no message)."""
    for c in pod.status.conditions or ():
        if c.type == "PodScheduled" and c.status == "False":
            said: str | None = c.message or c.reason
            return said
    return None


def _instance_type_count(model: Any) -> int | None:
    for r in model.spec.requirements or ():
        if r.key == LABEL_INSTANCE_TYPE and r.operator == "In":
            return len(r.values or ())
    return None


# -- public API ---------------------------------------------------------------------------------
def _with_prices(result: Any, trace: dict[str, Any]) -> dict[str, Any]:
    """The trace with the run's ``prices`` (date, source, proxy, how spot is priced), which the
    text rendering states first."""
    prices = getattr(result, "prices", None)
    if prices:
        trace["prices"] = dict(prices)
        trace["region"] = getattr(result, "region", None)
    return trace


def explain_nodeclaim(result: Any, name: str) -> dict[str, Any]:
    """The decision trace of one NodeClaim (see module doc). Raises ExplainLookupError. With the
    disruption controller on, a ``disruption`` block says why it was or was not disrupted."""
    out = _with_prices(result, _Explainer(result).nodeclaim(name))
    controller = getattr(result.simulation, "disruption", None)
    if controller is not None:
        from karpy.disruption.explain import explain_disruption

        rec = next((r for r in result.simulation.launches if r.name == name), None)
        if rec is not None:
            out["disruption"] = explain_disruption(controller, rec)
    return out


def explain_pod(result: Any, key: str) -> dict[str, Any]:
    """The decision trace of one pod (``namespace/name``). Raises ExplainLookupError."""
    return _with_prices(result, _Explainer(result).pod(key))


def _pending(result: Any) -> list[str]:
    return sorted(k for k, p in result.simulation.pods.items() if not p.spec.node_name)


def explain_run(result: Any) -> dict[str, Any]:
    """Every NodeClaim and every pending pod."""
    ex = _Explainer(result)
    return _with_prices(result, {"kind": "run",
                                 "nodeclaims": {r.name: ex.nodeclaim(r.name) for r in ex.records},
                                 "pods": {k: ex.pod(k) for k in _pending(result)}})


def explain_document(result: Any) -> dict[str, Any]:
    """The JSON document's ``explain`` block: every NodeClaim and every pod provisioning touched
    or left pending; above FULL_EXPLAIN_MAX_NODECLAIMS NodeClaims only failed claims and pending
    pods (``scope`` says which). Compact: entries leave out what the document's ``nodeclaims`` /
    ``pods`` entries already say, pod entries list only the NodePools that were tried and name
    their NodeClaims. (:func:`render_explain` renders the block; pass ``document`` for the rest.)"""
    ex = _Explainer(result)
    n = len(ex.records)
    pending = _pending(result)
    if n <= FULL_EXPLAIN_MAX_NODECLAIMS:
        scope = "all"
        records = ex.records
        keys = sorted(set(pending) | (set(ex.history) & (set(ex.sim.pods) | set(ex.sim.deleted_pods))))
    else:
        scope = (f"pending pods and failed nodeclaims only ({n} NodeClaims > {FULL_EXPLAIN_MAX_NODECLAIMS})")
        records = [r for r in ex.records if r.launched is None]
        keys = pending
    return {"scope": scope,
            "nodeclaims": {r.name: ex.nodeclaim(r.name, compact=True) for r in records},
            "pods": {k: ex.pod(k, compact=True) for k in keys}}


# -- text ---------------------------------------------------------------------------------------
#: Longest message the text rendering prints in full (JSON output always has everything).
TEXT_MESSAGE_LIMIT = 400


def _short(text: Any, limit: int = TEXT_MESSAGE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters for the text rendering, saying how much was left out."""
    s = str(text)
    if len(s) <= limit:
        return s
    return f"{s[:limit]}... ({len(s) - limit} more characters; -o json has all)"


def _clip(text: Any, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (the compact text; ``--verbose`` has all)."""
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[:limit - 1] + "\u2026"


def _fmt_price(p: Any) -> str:
    return "-" if p is None else f"${float(p):.5f}/h"


def _render_launch(detail: Mapping[str, Any], lines: list[str], claim_error: Any = None) -> None:
    """Provider launch detail: known keys first, in a fixed order, then any other key."""
    shown = set()

    def has(k: str) -> bool:
        shown.add(k)
        return detail.get(k) not in (None, [], {}, "")

    strategy, capacity = has("allocation_strategy"), has("capacity_type")
    if strategy or capacity:
        lines.append(f"    fleet request: strategy {detail.get('allocation_strategy') or '-'}, "
                     f"capacity type {detail.get('capacity_type') or '-'}")
    if has("filters"):
        _render_filters(detail["filters"], lines)
    if has("candidates_sent"):
        lines.append(f"    candidates sent: {detail['candidates_sent']}")
    if has("truncated_to"):
        t = detail["truncated_to"]
        if isinstance(t, list):
            head = ", ".join(map(str, t[:EXAMPLES_SHOWN])) + (", ..." if len(t) > EXAMPLES_SHOWN else "")
            lines.append(f"    cut to the 60 cheapest: {len(t)} instance types sent ({head})")
        else:
            lines.append(f"    cut to the {t} cheapest instance types")
    if has("batch_size"):
        lines.append(f"    CreateFleet batch size: {detail['batch_size']}")
    if has("overrides"):
        overrides = detail["overrides"]
        lines.append(f"    overrides ({len(overrides)}, as sent):")
        for o in overrides[:20]:
            pr = o.get("priority")
            lines.append(f"      {o.get('instance_type')} {o.get('zone')}"
                         + (f" priority {pr}" if pr is not None else ""))
        if len(overrides) > 20:
            lines.append(f"      ... {len(overrides) - 20} more")
    printed: set[str] = set()
    for k in ("fleet_decisions", "decisions"):
        if has(k):
            for d in detail[k]:
                if isinstance(d, Mapping):
                    chosen = d.get("chosen")
                    lines.append(f"    EC2 picked {_chosen_text(chosen)}: {d.get('reason', '-')}")
                    for e in d.get("errors") or ():
                        printed.add(_error_text(e))
                        lines.append(f"      error: {_error_text(e)}")
                else:
                    lines.append(f"    EC2: {d}")
    if has("errors"):
        for e in detail["errors"]:
            if _error_text(e) not in printed:
                lines.append(f"    fleet error: {_error_text(e)}")
    if has("error") and detail["error"] != claim_error:
        lines.append(f"    launch error: {_short(detail['error'])}")
    for k in sorted(detail):
        if k in shown or detail.get(k) in (None, [], {}, ""):
            continue
        lines.append(f"    {k}: {detail[k]}")


def _render_filters(filters: Any, lines: list[str]) -> None:
    """The provider's launch filters, one line each (``filter NAME: removed N (examples)``)."""
    if isinstance(filters, Mapping):
        for name, rejected in filters.items():
            lines.append(f"    filter {name}: removed {_count_or_list(rejected)}")
    else:
        for f in filters:
            if isinstance(f, Mapping):
                name = f.get("name") or f.get("filter") or "filter"
                rejected = next((f[k] for k in ("rejected", "removed") if k in f), None)
                rest = {k: v for k, v in f.items() if k not in ("name", "filter", "rejected", "removed")}
                text = f"removed {_count_or_list(rejected)}" if rejected is not None else ""
                if rest:
                    text = ", ".join([text] * bool(text) + [f"{k} {v}" for k, v in sorted(rest.items())])
                lines.append(f"    filter {name}: {text}".rstrip(": "))
            else:
                lines.append(f"    filter: {f}")


def _count_or_list(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        head = ", ".join(str(x) for x in v[:EXAMPLES_SHOWN])
        return f"{len(v)}" + (f" ({head}{', ...' if len(v) > EXAMPLES_SHOWN else ''})" if v else "")
    return str(v)


def _chosen_text(chosen: Any) -> str:
    if isinstance(chosen, Mapping):
        return " ".join(str(chosen[k]) for k in ("instance_type", "zone", "capacity_type", "price") if chosen.get(k))
    return str(chosen) if chosen is not None else "nothing"


def _error_text(e: Any) -> str:
    if isinstance(e, Mapping):
        return " ".join(str(e[k]) for k in ("error_code", "instance_type", "zone", "message") if e.get(k))
    return str(e)


def _render_nodeclaim(d: Mapping[str, Any], lines: list[str], verbose: bool = True,
                      funnels: dict[str, str] | None = None) -> None:
    """``funnels`` (compact run text): funnel + price order already printed -> that NodeClaim's name; a
    NodeClaim with the same ones says so in one line."""
    if "launched" not in d:
        status = ""
    elif d["launched"]:
        status = (f"launched {d.get('instance_type')} {d.get('capacity_type')} {d.get('zone')} "
                  f"{_fmt_price(d.get('price'))}")
    else:
        status = f"launch FAILED: {_short(d.get('error'), 160) if verbose else _clip(d.get('error'), 80)}"
    weight = f" (weight {d['weight']})" if "weight" in d else ""
    lines.append(f"NodeClaim {d['name']}  nodepool {d['nodepool']}{weight}  pass {d.get('pass')}  {status}".rstrip())
    pods = d.get("pods") or []
    shown = 10 if verbose else 3
    lines.append(f"  pods ({len(pods)}): {', '.join(pods[:shown])}"
                 + ((" ..." if verbose else f", +{len(pods) - shown} more") if len(pods) > shown else ""))
    f = d.get("funnel")
    order = d.get("price_order")
    same = repr((f, order))
    if f and not verbose and funnels is not None and same in funnels:
        lines.append(f"  instance types and price order: as NodeClaim {funnels[same]} ({f['remaining']} candidates)")
        f = order = None
    elif f and funnels is not None:
        funnels[same] = str(d.get("name"))
    _render_funnel(f, order, lines, verbose)
    cut = d.get("max_instance_types_cut")
    if cut:
        if cut.get("dropped"):
            lines.append(f"  MaxInstanceTypes cut at {cut['max_instance_types']}: kept {cut['kept']}, dropped "
                         f"{cut['dropped']} (cheapest dropped {cut.get('cheapest_dropped')} "
                         f"{_fmt_price(cut.get('cheapest_dropped_price'))})")
        elif verbose:  # the compact text leaves out a cut that changed nothing
            lines.append(f"  MaxInstanceTypes cut at {cut['max_instance_types']}: nothing dropped "
                         f"({cut['kept']} sent in the NodeClaim)")
    mv = d.get("min_values")
    if mv:
        for r in mv["requirements"]:
            extra = f" (NodePool asked {r['nodepool_min_values']})" if "nodepool_min_values" in r else ""
            lines.append(f"  minValues {r['key']}: {r['min_values']}{extra}, {r['distinct_values']} distinct values "
                         f"among candidates -> {'met' if r['satisfied'] else 'NOT met'}")
        lines.append(f"  minValues policy {mv['policy']}, relaxed: {'yes' if mv['relaxed'] else 'no'}")
    if d.get("launch") is not None and not verbose:
        _render_launch_summary(d["launch"], lines)
    elif d.get("launch") is not None:
        lines.append("  launch:")
        _render_launch(d["launch"], lines, d.get("error"))
    elif d.get("launch_note"):
        lines.append(f"  launch: {d['launch_note']}")
    _render_fallback(d.get("fallback"), lines, verbose)
    if d.get("fallback_for"):
        took = d["fallback_for"]
        if not verbose and len(took) > 3:
            took = [*took[:3], f"+{len(took) - 3} more"]
        lines.append(f"  fallback for failed NodeClaim(s): {', '.join(took)}")


def _render_funnel(f: Any, order: Any, lines: list[str], verbose: bool) -> None:
    """A NodeClaim's instance-type funnel and its price order (the first three unless ``verbose``)."""
    if f:
        lines.append(f"  instance types: {f['start']} in the NodePool's catalogue")
        for s in f["steps"]:
            what = s.get("requirement") or s["stage"]
            src = f" [{s['source']}]" if s.get("source") else ""
            req = (" (requests " + ", ".join(f"{k}={v}" for k, v in s["requests"].items()) + ")"
                   if s.get("requests") else "")
            ex = f" e.g. {', '.join(s['examples'])}" if s.get("examples") else ""
            lines.append(f"    - {s['removed']:>5} {s['reason']}: {what}{src}{req} -> {s['remaining']} left;{ex}")
        lines.append(f"    = {f['remaining']} candidates (NodeClaim candidate list: {f['candidates']})")
    if order and order.get("first") and not verbose:
        head = ", ".join(f"{e['instance_type']} {_fmt_price(e['price'])}" for e in order["first"][:3])
        lines.append(f"  price order ({order['count']} candidates, cheapest first): {head}"
                     + (", ..." if order["count"] > 3 else ""))
    elif order and order.get("first"):
        lines.append(f"  price order ({order['count']} candidates, cheapest first):")
        for i, e in enumerate(order["first"], 1):
            where = " ".join(x for x in (e.get("capacity_type"), e.get("zone")) if x)
            lines.append(f"    {i:>2}. {e['instance_type']:<28} {_fmt_price(e['price'])} {where}".rstrip())


def _render_fallback(fb: Any, lines: list[str], verbose: bool) -> None:
    """Where a failed NodeClaim's pods went: the later NodeClaims that took them, or none."""
    if not fb:
        return
    if verbose:
        lines.append(f"  capacity error: {_short(fb.get('error'))}")
    for c in fb["nodeclaims"]:
        state = f"launched {c['instance_type']}" if c["launched"] else "also failed"
        took = c["pods"] if verbose or len(c["pods"]) <= 3 else [*c["pods"][:3], f"+{len(c['pods']) - 3} more"]
        lines.append(f"    fallback -> {c['nodeclaim']} (nodepool {c['nodepool']}, {state}) took "
                     f"{', '.join(took)}")
    for p in fb["pods_not_relaunched"]:
        lines.append(f"    {p['pod']}: no later NodeClaim; " + (f"runs on {p['node']}" if p["node"] else "pending"))


def _render_pod(d: Mapping[str, Any], lines: list[str], verbose: bool = True) -> None:
    where = f"on node {d['node']}" if d.get("node") else "not placed"
    lines.append(f"Pod {d['pod']}  {d.get('phase')}  {where}")
    if d.get("nominated_node"):
        lines.append(f"  nominated node: {d['nominated_node']}")
    pl = d.get("placement")
    if pl is None:
        lines.append("  Karpenter never scheduled this pod (it was not provisionable in any pass)")
    else:
        if pl.get("nodeclaim"):
            target = f"NodeClaim {pl['nodeclaim']}"
        elif pl.get("planned_node") or pl.get("node"):
            target = f"node {pl.get('planned_node') or pl.get('node')}"
        else:
            target = _short(pl.get("error") or pl.get("note") or "-", 160)
        lines.append(f"  Karpenter's plan, provisioning pass {pl['pass']} (t={pl['time']:g}s; tried in "
                     f"{pl['passes_tried']} pass(es)): {pl['outcome']} -> {target}")
        if pl.get("as_planned") is False:
            lines.append(f"  kube-scheduler bound it to node {pl.get('bound_node')} instead (Karpenter plans, "
                         "kube-scheduler binds)")
    def nodepool_lines(entries: Any, indent: str) -> None:
        for np in entries or ():
            reason = (f": {_short(np['reason']) if verbose else _clip(np['reason'], 120)}"
                      if np.get("reason") else "")
            lines.append(f"{indent}nodepool {np['nodepool']} (weight {np['weight']}): {np['result']}{reason}")

    rounds = d.get("rounds")
    if rounds:
        for i, r in enumerate(rounds, 1):
            if r.get("relaxed"):
                lines.append(f"  relaxed: {r['relaxed']}")
            outcome = f"failed: {_short(r['error'])}" if r.get("error") else "placed"
            if r.get("nodepools") and r.get("error"):
                outcome = "failed (every NodePool rejected the pod)"
            lines.append(f"    try {i}: {outcome}")
            nodepool_lines(r.get("nodepools"), "      ")
    else:
        nodepool_lines(d.get("nodepools"), "    ")
        for step in d.get("relaxations") or ():
            lines.append(f"  relaxed: {step}")
    if d.get("message"):
        lines.append(f"  message: {_short(d['message'])}")
    if d.get("condition") and d.get("condition") != d.get("message"):
        lines.append(f"  kube-scheduler: {_short(d['condition'])}")
    if d.get("gang"):
        lines.append(f"  gang: {d['gang']}")
    chain = list(d.get("nodeclaims") or ())
    failed = [c for c in chain if isinstance(c, Mapping) and not c.get("launched")]
    if not verbose and len(failed) > 1:
        names = ", ".join(str(c["name"]) for c in failed[:3]) + (f", +{len(failed) - 3} more" if len(failed) > 3 else "")
        lines.append(f"  went through {len(failed)} NodeClaims that failed to launch ({names}): "
                     f"{_clip(failed[0].get('error'), 80)}")
        chain = [c for c in chain if c not in failed]
    for c in chain:
        if isinstance(c, str):
            lines.append(f"  nodeclaim {c}")
            continue
        state = f"launched {c['instance_type']}" if c["launched"] else f"failed: {_short(c['error'], 160)}"
        lines.append(f"  went through NodeClaim {c['name']} (nodepool {c['nodepool']}, pass {c['pass']}): {state}")


def _expand_claim(name: str, entry: Mapping[str, Any], document: Mapping[str, Any] | None) -> dict[str, Any]:
    """A compact document entry with the fields the document's ``nodeclaims`` entry holds."""
    out: dict[str, Any] = {"kind": "nodeclaim", "name": name}
    for nc in (document or {}).get("nodeclaims") or ():
        if nc.get("name") == name:
            out.update({k: nc.get(k) for k in ("launched", "instance_type", "capacity_type", "zone", "price",
                                               "error")})
            if entry.get("launch") is None and nc.get("fleet"):
                out["launch"] = nc["fleet"]
            break
    for k, v in entry.items():
        if k == "launch" and v is None and out.get("launch") is not None:
            continue
        if k == "launch_note" and out.get("launch") is not None:
            continue
        out[k] = v
    return out


def _expand_pod(key: str, entry: Mapping[str, Any], document: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "pod", "pod": key}
    st = ((document or {}).get("pods") or {}).get(key) or {}
    out.update({"phase": st.get("phase"), "node": st.get("node"), "nominated_node": st.get("nominated_node"),
                "message": st.get("message")})
    out.update({k: v for k, v in entry.items() if k not in out or v is not None})
    return out


def render_explain(d: Mapping[str, Any], document: Mapping[str, Any] | None = None, verbose: bool = False) -> str:
    """Plain-text rendering of an explain dict: a NodeClaim, a pod, a run (:func:`explain_run`) or
    the document's ``explain`` block (pass the whole ``document`` to fill in what the compact
    entries leave to the document's ``nodeclaims`` and ``pods``). The one-line answer comes first
    (:func:`answer_lines`), the funnel after it; without ``verbose``, a run prints one NodeClaim
    per (NodePool, outcome) and one pod per pending group, and lists are cut (``verbose``: the full trace)."""
    lines: list[str] = []
    kind = d.get("kind")
    prices = d.get("prices")
    claims = {name: (c if c.get("kind") else _expand_claim(name, c, document))
              for name, c in (d.get("nodeclaims") or {}).items()} if kind not in ("nodeclaim", "pod") else {}
    pods = {key: (p if p.get("kind") else _expand_pod(key, p, document))
            for key, p in (d.get("pods") or {}).items()} if kind not in ("nodeclaim", "pod") else {}
    if kind == "nodeclaim":
        lines.append(nodeclaim_answer(d))
    elif kind != "pod":
        lines.extend(answer_lines(claims, pods))
    if isinstance(prices, Mapping) and prices.get("date"):
        from karpy.report.table import prices_notes

        lines.append("; ".join([f"prices: {prices.get('date')}", *prices_notes(prices, d.get("region"))]))
    if kind == "nodeclaim":
        _render_nodeclaim(d, lines, verbose)
        if "disruption" in d:
            from karpy.disruption.explain import render_disruption

            render_disruption(d["disruption"], lines)
    elif kind == "pod":
        _render_pod(d, lines, verbose)
    else:
        _render_run(d, claims, pods, lines, verbose)
    return "\n".join(lines) + "\n"


def _render_run(d: Mapping[str, Any], claims: Mapping[str, Mapping[str, Any]], pods: Mapping[str, Mapping[str, Any]],
                lines: list[str], verbose: bool) -> None:
    if d.get("scope") and d["scope"] != "all":
        lines.append(f"(scope: {d['scope']})")
    lines.append(f"NODECLAIMS ({len(claims)})")
    shown_claims = claims if verbose else _first_of_each(claims, _claim_group)
    funnels: dict[str, str] = {}
    for name, c in shown_claims.items():
        lines.append("")
        _render_nodeclaim(c, lines, verbose, funnels)
        like = [n for n, o in claims.items() if n != name and _claim_group(o) == _claim_group(c)]
        if not verbose and like:
            lines.append(f"  and {len(like)} more like it: {', '.join(like[:3])}" + (", ..." if len(like) > 3 else ""))
    lines.append("")
    lines.append(f"PENDING PODS ({len(pods)})" if d.get("kind") == "run" else f"PODS ({len(pods)})")
    shown_pods = pods if verbose else _first_of_each(pods, _pod_group)
    for key, p in shown_pods.items():
        lines.append("")
        _render_pod(p, lines, verbose)
        like = [k for k, o in pods.items() if k != key and _pod_group(o) == _pod_group(p)]
        if not verbose and like:
            lines.append(f"  and {len(like)} more like it: {', '.join(like[:3])}" + (", ..." if len(like) > 3 else ""))
    if not verbose and (len(shown_claims) < len(claims) or len(shown_pods) < len(pods)):
        lines.append("")
        lines.append("(--verbose: every NodeClaim and pod in full; --nodeclaim NAME / --pod NS/NAME: one of them)")


def _first_of_each(items: Mapping[str, Mapping[str, Any]],
                   group: Callable[[Mapping[str, Any]], tuple[Any, ...]]) -> dict[str, Mapping[str, Any]]:
    seen: dict[tuple[Any, ...], str] = {}
    for key, item in items.items():
        seen.setdefault(group(item), key)
    return {key: items[key] for key in seen.values()}


def _claim_group(c: Mapping[str, Any]) -> tuple[Any, ...]:
    """NodeClaims the compact text shows once: same NodePool and outcome (instance type, or failed)."""
    return (c.get("nodepool"), bool(c.get("launched")), c.get("instance_type"), c.get("capacity_type"))


def _pod_group(p: Mapping[str, Any]) -> tuple[Any, ...]:
    return (p.get("phase"), p.get("node") is None, p.get("message"),
            tuple(sorted({np.get("nodepool") for np in p.get("nodepools") or () if isinstance(np, Mapping)})))


# -- the one-line answer ---------------------------------------------------------------------------
def _generation(instance_type: Any) -> str | None:
    """``c8i.2xlarge`` -> ``8`` (the digits after the family's letters); None when the name has none."""
    import re

    m = re.match(r"[a-z]+(\d+)", str(instance_type or "").split(".", 1)[0])
    return m.group(1) if m else None


def _ordinal(n: str) -> str:
    k = int(n)
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def _as_table_claim(c: Mapping[str, Any]) -> dict[str, Any]:
    """An explain NodeClaim in the document's ``nodeclaims`` shape (what the table's grouping reads)."""
    launch = c.get("launch") if isinstance(c.get("launch"), Mapping) else {}
    return {"name": c.get("name"), "nodepool": c.get("nodepool"), "launched": bool(c.get("launched")),
            "instance_type": c.get("instance_type"), "capacity_type": c.get("capacity_type"),
            "fleet": {"capacity_type": (launch or {}).get("capacity_type"), "errors": (launch or {}).get("errors") or []}}


def nodeclaim_answer(d: Mapping[str, Any]) -> str:
    """Why this NodeClaim got its instance type, in one line: ``m7i.2xlarge won: lowest price among
    230 fleet overrides; the cheapest 8th-gen candidate m8i.2xlarge was $0.0202/h (5.0 %) dearer``."""
    name = d.get("name")
    if not d.get("launched"):
        from karpy.report.table import summarize_failures

        failures = summarize_failures([_as_table_claim(d)], names=False)
        return f"NodeClaim {name} did not launch: " + (failures[0] if failures else _short(d.get("error"), 120))
    itype, price = d.get("instance_type"), d.get("price")
    launch = d.get("launch") if isinstance(d.get("launch"), Mapping) else {}
    strategy = (launch or {}).get("allocation_strategy")
    overrides = len((launch or {}).get("overrides") or ())
    order = d.get("price_order") or {}
    among = (f"{overrides} fleet overrides" if overrides else f"{order.get('count', '?')} candidates")
    why = "lowest price" if strategy in (None, "lowest-price") else f"the {strategy} pick"
    text = f"{itype} won: {why} among {among}"
    if d.get("fallback_for"):
        text += f" (after {len(d['fallback_for'])} failed launch{'es' if len(d['fallback_for']) != 1 else ''})"
    first = [e for e in order.get("first") or () if e.get("instance_type") != itype and e.get("price") is not None]
    if price is None or not first:
        return text
    gen = _generation(itype)
    other = next((e for e in first if _generation(e["instance_type"]) not in (None, gen)), None)
    rival, label = (other, f"the cheapest {_ordinal(_generation(other['instance_type']) or '0')}-gen candidate") \
        if other is not None else (first[0], "the next candidate")
    delta = float(rival["price"]) - float(price)
    pct = f" ({abs(delta) / float(price) * 100:.1f} %)" if price else ""
    if delta > 0:
        return f"{text}; {label} {rival['instance_type']} was ${delta:.4f}/h{pct} dearer"
    if delta == 0:
        return f"{text}; {label} {rival['instance_type']} costs the same"
    failed = [e for e in (launch or {}).get("errors") or () if isinstance(e, Mapping)
              and e.get("instance_type") == rival["instance_type"]]
    if failed:  # the cheaper rival was in the request but EC2 could not launch it
        codes = "/".join(sorted({str(e.get("error_code")) for e in failed}))
        return (f"{text}; {label} {rival['instance_type']} was ${-delta:.4f}/h{pct} cheaper but its "
                f"{len(failed)} offering{'s' if len(failed) != 1 else ''} failed: {codes}")
    return f"{text}; {label} {rival['instance_type']} was ${-delta:.4f}/h{pct} cheaper but was not picked"


def answer_lines(claims: Mapping[str, Mapping[str, Any]], pods: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The answer of a run, first thing in ``karpy explain``: why each launched (NodePool, instance
    type) won, the failed launches grouped, and why pods stay pending; one line each."""
    from karpy.report.table import EMPTIED_BY_OFFERINGS, summarize_failures

    out: list[str] = []
    launched = _first_of_each({n: c for n, c in claims.items() if c.get("launched")}, _claim_group)
    for name, c in list(launched.items())[:3]:
        n = sum(1 for o in claims.values() if _claim_group(o) == _claim_group(c))
        out.append(f"{nodeclaim_answer(c)} ({n} NodeClaim{'s' if n != 1 else ''} of nodepool {c.get('nodepool')})")
    if len(launched) > 3:
        out.append(f"... and {len(launched) - 3} more (NodePool, instance type) outcomes below")
    failed = [_as_table_claim(c) for c in claims.values() if not c.get("launched")]
    out.extend(summarize_failures(failed, names=False))
    pending = [p for p in pods.values() if p.get("phase") == "Pending"]
    if pending:
        messages = _first_of_each({str(i): p for i, p in enumerate(pending)}, lambda p: (p.get("message"),))
        for p in messages.values():
            n = sum(1 for o in pending if o.get("message") == p.get("message"))
            after = " (after the capacity errors above)" if failed and EMPTIED_BY_OFFERINGS in str(p.get("message")) else ""
            out.append(f"{n} pod{'s' if n != 1 else ''} pending: {_clip(p.get('message') or '-', 200)}{after}")
    return out or ["nothing to explain: no NodeClaim, no pending pod"]


def _render_launch_summary(detail: Mapping[str, Any], lines: list[str]) -> None:
    """The launch in three lines: the fleet request, what EC2 picked, the capacity errors grouped."""
    from karpy.report.table import summarize_failures

    overrides = detail.get("overrides") or []
    types = len({o.get("instance_type") for o in overrides if isinstance(o, Mapping)})
    request = f"{detail.get('allocation_strategy') or '-'} {detail.get('capacity_type') or '-'}"
    if overrides:
        request += f", {len(overrides)} overrides ({types} instance types)"
    lines.append(f"  launch: {request}")
    if detail.get("filters"):
        _render_filters(detail["filters"], lines)
    for dec in detail.get("fleet_decisions") or detail.get("decisions") or ():
        if isinstance(dec, Mapping) and dec.get("chosen"):
            lines.append(f"    EC2 picked {_chosen_text(dec['chosen'])}: {_clip(dec.get('reason', '-'), 120)}")
    errors = detail.get("errors") or []
    if errors:
        [failure] = summarize_failures([{"fleet": {"errors": errors}, "nodepool": None}], names=False) or [""]
        codes = failure.split(": ", 1)[-1].rsplit(" (", 1)[0]
        lines.append(f"    capacity errors: {len(errors)} offerings: {codes}")


def _step(steps: list[dict[str, Any]], stage: str, removed: list[Any], current: list[Any], reason: str,
          **extra: Any) -> None:
    """One funnel step (none when nothing was removed); ``current`` is what remains after it."""
    if not removed:
        return
    steps.append({"stage": stage, **extra, "removed": len(removed), "remaining": len(current), "reason": reason,
                  "examples": [it.name for it in removed[:EXAMPLES_SHOWN]]})


def _funnel_host_ports(claim: Any, current: list[Any],
                       steps: list[dict[str, Any]]) -> tuple[dict[int, dict[str, int]], list[Any]]:
    """Each type's DaemonSet overhead by id, and the types left once those whose DaemonSets'
    host ports conflict with the pods' are removed (the host-ports step)."""
    overhead: dict[int, dict[str, int]] = {}
    blocked: set[int] = set()
    pod_ports = [(p.key, get_host_ports(p)) for p in claim.pods]
    for g in claim.daemon_groups:
        conflict = any(ports and g.host_port_usage.conflicts(k, ports) is not None for k, ports in pod_ports)
        for iid in g.ids:
            overhead[iid] = g.daemon_overhead
            if conflict:
                blocked.add(iid)
    if blocked:
        removed = [it for it in current if id(it) in blocked]
        current = [it for it in current if id(it) not in blocked]
        _step(steps, "host-ports", removed, current, REASON_HOST_PORTS)
    return overhead, current


def _total_for(it: Any, pod_total: dict[str, int], overhead: Mapping[int, dict[str, int]]) -> dict[str, int]:
    """The pods' requests plus the DaemonSet overhead of the type's group."""
    ovh = overhead.get(id(it))
    return merge(pod_total, ovh) if ovh else pod_total


def _usable(alloc: Mapping[str, int]) -> bool:
    return not any(v < 0 for v in alloc.values())


def _funnel_resources(current: list[Any], pod_total: dict[str, int], overhead: Mapping[int, dict[str, int]],
                      steps: list[dict[str, Any]]) -> list[Any]:
    """The resources step: types none of whose allocatable groups fits the requests and overhead."""
    kept: list[Any] = []
    removed: list[Any] = []
    for it in current:
        total = _total_for(it, pod_total, overhead)
        if any(_usable(g.allocatable) and fits(total, g.allocatable) for g in it.allocatable_groups()):
            kept.append(it)
        else:
            removed.append(it)
    _step(steps, "resources", removed, kept, REASON_RESOURCES, requests=to_strings(pod_total),
          upstream=UPSTREAM_RESOURCES)
    return kept


def _funnel_offerings(current: list[Any], pod_total: dict[str, int], overhead: Mapping[int, dict[str, int]],
                      reqs: Any, wk: Any, steps: list[dict[str, Any]]) -> list[Any]:
    """The offerings step: types with no compatible offering in a group that fits."""
    kept: list[Any] = []
    removed: list[Any] = []
    for it in current:
        total = _total_for(it, pod_total, overhead)
        ok = False
        for g in it.allocatable_groups():
            if not (_usable(g.allocatable) and fits(total, g.allocatable)):
                continue
            if any(reqs.is_compatible(o.requirements, wk) for o in g.offerings):
                ok = True
                break
        (kept if ok else removed).append(it)
    _step(steps, "offerings", removed, kept, REASON_OFFERINGS, upstream=UPSTREAM_OFFERINGS)
    return kept
