"""The Deployment controller: scale, and the RollingUpdate strategy with maxSurge / maxUnavailable.

Mirrors kubernetes ``pkg/controller/deployment/rolling.go`` (``rolloutRolling``,
``reconcileNewReplicaSet``, ``reconcileOldReplicaSets``, ``cleanupUnhealthyReplicas``,
``scaleDownOldReplicaSetsForRollingUpdate``) and ``deployment/util`` (``ResolveFenceposts``: maxSurge
rounds up, maxUnavailable rounds down, both 0 -> maxUnavailable 1; defaults 25 % / 25 %).
A rollout (``kubectl rollout restart``) stamps ``kubectl.kubernetes.io/restartedAt`` on the pod
template, which gives a new pod-template hash and a new ReplicaSet. The controller re-syncs a
Deployment whenever one of its pods is bound or deleted (upstream: RS / pod watch events).
Strategy ``Recreate``: old ReplicaSets go to 0 first, the new one scales up once no old pod is left.
Availability = bound and active (``minReadySeconds`` 0). Counts use ``spec.replicas`` of the
ReplicaSets as upstream's ``GetReplicaCountForReplicaSets`` does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from karpy.sim.replicaset import ControllerHost, ManagedReplicaSet, ManagedWorkload, ReplicaSetController

__all__ = ["DEFAULT_MAX_SURGE", "DEFAULT_MAX_UNAVAILABLE", "RESTARTED_AT_ANNOTATION", "DeploymentController",
           "ManagedDeployment", "resolve_fenceposts"]

#: apps/v1 defaults (pkg/apis/apps/v1/defaults.go)
DEFAULT_MAX_SURGE = "25%"
DEFAULT_MAX_UNAVAILABLE = "25%"
#: kubectl rollout restart
RESTARTED_AT_ANNOTATION = "kubectl.kubernetes.io/restartedAt"


def _scaled(value: Any, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value).strip()
    if text.endswith("%"):
        pct = float(text[:-1])
        x = pct * total / 100.0
        return int(math.ceil(x)) if round_up else int(math.floor(x))
    return int(text)


def resolve_fenceposts(strategy: dict[str, Any] | None, replicas: int) -> tuple[int, int]:
    """deployment/util ResolveFenceposts: (maxSurge, maxUnavailable) for ``replicas``."""
    rolling = ((strategy or {}).get("rollingUpdate") or {})
    surge = _scaled(rolling.get("maxSurge", DEFAULT_MAX_SURGE), replicas, True)
    unavailable = _scaled(rolling.get("maxUnavailable", DEFAULT_MAX_UNAVAILABLE), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


@dataclass
class ManagedDeployment(ManagedWorkload):
    #: its ReplicaSets, oldest first; the last one is the new ReplicaSet
    sets: list[ManagedReplicaSet] = field(default_factory=list)
    rolling_out: bool = False

    @property
    def new(self) -> ManagedReplicaSet:
        return self.sets[-1]

    @property
    def replicas(self) -> int:
        replicas: int = self.model.spec.replicas
        return replicas


@dataclass
class DeploymentController:
    """rolling.go on the virtual clock (see the module docstring)."""

    host: ControllerHost
    replica_sets: ReplicaSetController
    deployments: dict[str, ManagedDeployment] = field(default_factory=dict)

    def add(self, model: Any, initial_next_index: int | None = None) -> ManagedDeployment:
        """Manage a Deployment whose pods for the current template already exist (or are about to)."""
        d = ManagedDeployment(model)
        rs = model.replica_set()
        d.sets.append(self.replica_sets.add(ManagedReplicaSet(
            rs, model.spec.replicas, model.spec.replicas if initial_next_index is None else initial_next_index,
            self.host.now(), d.key)))
        self.deployments[d.key] = d
        return d

    def _related(self, d: ManagedDeployment) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for rs in d.sets:
            for p in self.replica_sets.active_pods(rs):
                out[p.key] = p
        return out

    def scale(self, d: ManagedDeployment, replicas: int) -> None:
        self.host.record("scale", d.object, replicas=replicas, previous=d.replicas)
        d.model.spec.replicas = replicas
        if not d.rolling_out:
            for rs in d.sets:
                target = replicas if rs is d.new else 0
                if rs.replicas != target:
                    self.host.record("scale", rs.object, replicas=target, previous=rs.replicas, reason="scale")
                    rs.replicas = target
        self.sync(d)

    def rollout(self, d: ManagedDeployment, template: Any | None = None) -> bool:
        """Start a rollout: a restart stamp (or the given new template). False when the template
        hash did not change (nothing to roll out)."""
        model = d.model.model_copy(deep=True)
        if template is not None:
            model.spec.template = template
        else:
            ann = dict(model.spec.template.metadata.annotations or {})
            ann[RESTARTED_AT_ANNOTATION] = f"{self.host.now():g}s"
            model.spec.template.metadata.annotations = ann
        rs_model = model.replica_set()
        existing = next((rs for rs in d.sets if rs.model.metadata.name == rs_model.metadata.name), None)
        d.model = model
        if existing is not None and existing is d.new:
            return False
        if existing is not None:  # rolling back to an older template: it becomes the new RS again
            d.sets.remove(existing)
            d.sets.append(existing)
        else:
            d.sets.append(self.replica_sets.add(ManagedReplicaSet(rs_model, 0, 0, self.host.now(), d.key)))
        d.rolling_out = True
        self.host.record("rollout", d.object, replica_set=d.new.model.metadata.name,
                         strategy=self._strategy_type(d))
        self.sync(d)
        return True

    @staticmethod
    def _strategy_type(d: ManagedDeployment) -> str:
        return str(((d.model.spec.strategy or {}).get("type")) or "RollingUpdate")

    def owns(self, rs_uid: str) -> ManagedDeployment | None:
        rs = self.replica_sets.sets.get(rs_uid)
        if rs is None or rs.deployment is None:
            return None
        return self.deployments.get(rs.deployment)

    def sync(self, d: ManagedDeployment) -> None:
        """One reconcile: rolling.go rolloutRolling (or Recreate), then each ReplicaSet syncs."""
        if d.rolling_out:
            if self._strategy_type(d) == "Recreate":
                self._recreate(d)
            else:
                self._rolling(d)
        related = self._related(d)
        for rs in d.sets:
            self.replica_sets.sync(rs, related)
        if d.rolling_out and self._complete(d):
            d.rolling_out = False
            self.host.record("rollout.complete", d.object, replica_set=d.new.model.metadata.name)

    def _complete(self, d: ManagedDeployment) -> bool:
        new = d.new
        return (new.replicas == d.replicas and all(rs.replicas == 0 for rs in d.sets[:-1])
                and self.replica_sets.available(new) == d.replicas
                and all(not self.replica_sets.active_pods(rs) for rs in d.sets[:-1]))

    def _recreate(self, d: ManagedDeployment) -> None:
        olds = d.sets[:-1]
        for rs in olds:
            if rs.replicas:
                self.replica_sets.scale(rs, 0, "rollout")
        if all(not self.host.owned_pods(rs.uid) for rs in olds):
            if d.new.replicas != d.replicas:
                self.replica_sets.scale(d.new, d.replicas, "rollout")

    def _rolling(self, d: ManagedDeployment) -> None:
        replicas = d.replicas
        surge, max_unavailable = resolve_fenceposts(d.model.spec.strategy, replicas)
        new, olds = d.new, d.sets[:-1]
        # reconcileNewReplicaSet
        total = sum(rs.replicas for rs in d.sets)
        if new.replicas > replicas:
            self.replica_sets.scale(new, replicas, "rollout")
        elif new.replicas < replicas:
            max_total = replicas + surge
            if total < max_total:
                up = min(max_total - total, replicas - new.replicas)
                self.replica_sets.scale(new, new.replicas + up, "rollout")
        # reconcileOldReplicaSets
        total = sum(rs.replicas for rs in d.sets)
        min_available = replicas - max_unavailable
        new_unavailable = new.replicas - self.replica_sets.available(new)
        max_scaled_down = total - min_available - new_unavailable
        if max_scaled_down <= 0:
            return
        # cleanupUnhealthyReplicas (oldest first)
        for rs in olds:
            if max_scaled_down <= 0:
                break
            unhealthy = rs.replicas - self.replica_sets.available(rs)
            down = min(max_scaled_down, max(unhealthy, 0), rs.replicas)
            if down > 0:
                self.replica_sets.scale(rs, rs.replicas - down, "rollout")
                max_scaled_down -= down
        # scaleDownOldReplicaSetsForRollingUpdate
        available = sum(self.replica_sets.available(rs) for rs in d.sets)
        total_down = available - min_available
        for rs in olds:
            if total_down <= 0:
                break
            if rs.replicas == 0:
                continue
            down = min(rs.replicas, total_down)
            self.replica_sets.scale(rs, rs.replicas - down, "rollout")
            total_down -= down
