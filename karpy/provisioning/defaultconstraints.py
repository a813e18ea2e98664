"""Cluster default topology-spread constraints (``--scheduler-config``) on scheduling-time pod copies.

Mirrors pkg/controllers/provisioning/scheduling/defaultconstraints.go (DefaultTopologySpreadInjector,
defaultSelector, serviceMatchLabels, resolveOwnerContribution, requirementsFrom), which mirrors
kube-scheduler's PodTopologySpread ``defaultingType: List`` and helper.DefaultSelector:

* only pods declaring no ``topologySpreadConstraints`` get the defaults (all or nothing);
* the selector is deduced per pod: the selectors of every Service in the pod's namespace that
  selects it (merged as equality labels, last wins), then its controller's selector -- a
  ReplicationController's merged into those labels (labels.Merge: the RC's value wins), a
  ReplicaSet's or StatefulSet's as ``In`` expressions ANDed on (matchLabels first, in sorted key
  order: upstream ranges a Go map; then matchExpressions verbatim); a pod with no deducible
  selector is left unconstrained; a non-controller owner, an unsupported owner kind and a missing
  owner contribute nothing.
* each pod gets its own copies of the constraints; the originals are never changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from karpy.api.meta import LabelSelector, LabelSelectorRequirement

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["DefaultTopologySpreadInjector"]


class DefaultTopologySpreadInjector:
    """One injection pass over a cluster's Services and workload controllers."""

    def __init__(self, constraints: Sequence[Any], services: Iterable[Any] = (),
                 controllers: Iterable[Any] = ()) -> None:
        """``constraints``: SchedulerConfiguration.default_constraints; ``services``: Service
        objects; ``controllers``: ReplicationController / ReplicaSet / StatefulSet objects (a
        Deployment's ReplicaSet included) the pods' controller references point at."""
        self.constraints = tuple(constraints)
        self.services: dict[str, list[Any]] = {}
        for svc in services:
            self.services.setdefault(svc.metadata.namespace or "default", []).append(svc)
        self.controllers = {(c.metadata.namespace or "default", c.kind, c.metadata.name): c for c in controllers}
        self._cache: dict[tuple[Any, ...], LabelSelector | None] = {}

    def inject(self, pods: Sequence[Pod]) -> list[Pod]:
        """``Inject``: the pods, with defaulted copies in place of the pods that get defaults."""
        if not self.constraints:
            return list(pods)
        out = []
        for pod in pods:
            if pod.spec.topology_spread_constraints:
                out.append(pod)
                continue
            selector = self.selector_for(pod)
            if selector is None:
                out.append(pod)
                continue
            defaults = [c.model_copy(update={"label_selector": selector.model_copy(deep=True)}) for c in self.constraints]
            out.append(pod.model_copy(update={"spec": pod.spec.model_copy(update={"topology_spread_constraints": defaults})}))
        return out

    def selector_for(self, pod: Pod) -> LabelSelector | None:
        """getDefaultSelector: cached per (namespace, controller, labels)."""
        owner = self._controller_ref(pod)
        ns = pod.metadata.namespace or "default"
        key = (ns, (owner.kind, owner.name) if owner is not None else None,
               tuple(sorted((pod.metadata.labels or {}).items())))
        if key not in self._cache:
            self._cache[key] = self._deduce(pod, ns, owner)
        return self._cache[key]

    @staticmethod
    def _controller_ref(pod: Pod) -> Any | None:
        for ref in pod.metadata.owner_references or ():
            if ref.controller:
                return ref
        return None

    def _deduce(self, pod: Pod, ns: str, owner: Any | None) -> LabelSelector | None:
        labels = pod.metadata.labels or {}
        match_labels: dict[str, str] = {}
        for svc in self.services.get(ns, ()):
            sel = svc.spec.selector
            if sel is None:
                continue
            if all(labels.get(k) == v for k, v in sel.items()):
                match_labels.update(sel)
        exprs: list[LabelSelectorRequirement] = []
        if owner is not None and owner.kind == "ReplicationController" and owner.api_version == "v1":
            ctrl = self.controllers.get((ns, owner.kind, owner.name))
            match_labels.update((ctrl.spec.selector or {}) if ctrl is not None else {})
        if owner is not None and owner.kind in ("ReplicaSet", "StatefulSet") and \
                (owner.api_version or "").startswith("apps/"):
            ctrl = self.controllers.get((ns, owner.kind, owner.name))
            sel = ctrl.spec.selector if ctrl is not None else None
            if sel is not None:
                exprs += [LabelSelectorRequirement(key=k, operator="In", values=[v])
                          for k, v in sorted(sel.match_labels.items())]
                exprs += [e.model_copy(deep=True) for e in sel.match_expressions]
        if not match_labels and not exprs:
            return None
        return LabelSelector(match_labels=match_labels, match_expressions=exprs)
