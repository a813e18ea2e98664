"""A guard against launch loops: capacity launched again and again for a pod that never binds.

Not in upstream: Karpenter goes on launching, one paid node per provisioning pass. When Karpenter's
model of a pod and kube-scheduler's disagree (something karpy does not model, or a bug), each pass
launches a NodeClaim for the pod, the node initializes, kube-scheduler refuses the pod and the next
pass launches again. Once :data:`LOOP_LIMIT` NodeClaims launched for a pod (since it was created)
have initialized while it stayed pending, karpy launches nothing more for it and says so in the
pod's pending message and in the run's warnings. A diagnostic, not an answer: the cause is the
disagreement the message names.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from karpy.utils.duration import to_seconds

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.pod import Pod
    from karpy.sim.lifecycle import NodeClaimLifecycle

__all__ = ["LOOP_LIMIT", "LaunchLoopGuard"]

#: initialized NodeClaims launched for one pending pod after which karpy stops launching for it; well
#: above ordinary churn (aws_diverse's zone-spread pods reach 5 while kube-scheduler binds others
#: to their nodes: at 5 the guard changed that run's NodeClaims and placements)
LOOP_LIMIT = 25


class LaunchLoopGuard:
    """Filters a provisioning pass's new NodeClaims (see the module docstring)."""

    def __init__(self, nodeclaims: NodeClaimLifecycle) -> None:
        self.nodeclaims = nodeclaims
        #: pod key -> the initialized NodeClaims launched for it (when karpy stopped launching)
        self.stopped: dict[str, list[str]] = {}

    def _loop(self, pod: Pod) -> list[str] | None:
        """The initialized NodeClaims launched for pending ``pod`` since it was created, when they
        reach the limit; else None."""
        names = self.nodeclaims.pod_claims.get(pod.key)
        if not names or len(names) < LOOP_LIMIT:
            return None
        born = to_seconds(pod.metadata.creation_timestamp) or 0.0
        found = []
        for name in sorted(names):
            rec = self.nodeclaims.nodeclaim(name)
            if rec is not None and rec.initialized_at is not None and rec.created_at >= born:
                found.append(name)
        return found if len(found) >= LOOP_LIMIT else None

    def admitted(self, claims: Iterable[Any], pod_errors: dict[str, str]) -> Iterator[Any]:
        """The claims to launch: a claim all of whose pods loop is dropped, and each of its pods
        gets the guard's message in ``pod_errors``."""
        for claim in claims:
            loops: dict[str, list[str]] = {}
            for p in claim.pods:
                names = self._loop(p)
                if names is None:
                    break
                loops[p.key] = names
            else:
                for key, names in loops.items():
                    self.stopped[key] = names
                    pod_errors[key] = self.message(key)
                continue
            yield claim

    def message(self, key: str) -> str:
        names = self.stopped[key]
        return (f"karpy stopped launching capacity for this pod: {len(names)} NodeClaims launched for it "
                f"({', '.join(names)}) initialized and kube-scheduler bound it to none of them (Karpenter's and "
                "kube-scheduler's models of the pod disagree; production would go on launching a node per pass)")

    def warnings(self) -> list[str]:
        if not self.stopped:
            return []
        keys = sorted(self.stopped)
        return [f"stopped a launch loop: capacity was launched again and again for {len(keys)} pod(s) that never "
                f"bound ({', '.join(keys)}); no more NodeClaims were launched for them (see their pending message)"]
