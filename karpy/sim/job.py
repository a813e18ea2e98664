"""The Job controller: keep ``parallelism`` pods running until ``completions`` pods succeeded.

Mirrors kubernetes ``pkg/controller/job/job_controller.go`` (``manageJob``: wanted active =
``min(parallelism, completions - succeeded)``; without ``completions`` the Job is done — and starts
no new pods — once any pod succeeded). A pod succeeds ``karpy.io/run-for`` after it started running
(:data:`karpy.api.scenario.RUN_FOR_ANNOTATION`); a Job pod without it runs for ever. A deleted
(evicted) Job pod is replaced (upstream counts a failure against ``backoffLimit``; karpy does not
model pod failure, so the limit is not consumed). Indexed Jobs replace an index with the same index.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from karpy.sim.replicaset import ControllerHost, ManagedWorkload, find_by_key

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["JobController", "ManagedJob"]

_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"


@dataclass
class ManagedJob(ManagedWorkload):
    next_index: int = 0
    succeeded: int = 0
    succeeded_indexes: set[int] = field(default_factory=set)
    complete: bool = False


@dataclass
class JobController:
    host: ControllerHost
    jobs: dict[str, ManagedJob] = field(default_factory=dict)  # by uid

    def add(self, model: Any) -> ManagedJob:
        j = ManagedJob(model, model.active_pods())
        self.jobs[j.uid] = j
        return j

    def get(self, key: str) -> ManagedJob | None:
        return find_by_key(self.jobs, key)

    def pod_succeeded(self, j: ManagedJob, pod: Pod) -> None:
        j.succeeded += 1
        idx = (pod.metadata.annotations or {}).get(_INDEX_ANNOTATION)
        if idx is not None:
            j.succeeded_indexes.add(int(idx))
        self.sync(j)

    def _wanted(self, j: ManagedJob) -> int:
        spec = j.model.spec
        if spec.suspend:
            return 0
        parallelism: int = spec.parallelism
        completions: int | None = spec.completions
        if completions is None:
            return 0 if j.succeeded > 0 else parallelism
        return max(0, min(parallelism, completions - j.succeeded))

    def sync(self, j: ManagedJob) -> None:
        spec = j.model.spec
        active = [p for p in self.host.owned_pods(j.uid) if self.host.counts_as_active(p)]
        wanted = self._wanted(j)
        if spec.completion_mode == "Indexed" and spec.completions is not None:
            busy = {int((p.metadata.annotations or {}).get(_INDEX_ANNOTATION, -1)) for p in active}
            free = [i for i in range(spec.completions) if i not in busy and i not in j.succeeded_indexes]
            for i in free[:max(0, wanted - len(active))]:
                self.host.create_controller_pod(j.model.pod_for(i))
        else:
            for _ in range(max(0, wanted - len(active))):
                self.host.create_controller_pod(j.model.pod_for(j.next_index))
                j.next_index += 1
        done = (spec.completions is not None and j.succeeded >= spec.completions) or \
               (spec.completions is None and j.succeeded > 0 and not active)
        if done and not j.complete:
            j.complete = True
            self.host.record("job.complete", j.object, succeeded=j.succeeded)
