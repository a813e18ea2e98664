"""Ports of pkg/controllers/disruption/queue_test.go Reconcile (core 2266468) on karpy's Queue.

The queue talks to the cluster through :class:`karpy.disruption.queue.Operations` (the simulation's
DisruptionController implements it); here a small cluster record stands behind that seam so each It can
move a replacement through launched -> initialized (or deleted) the way upstream's tests do with
ExpectNodeClaimDeployedAndStateUpdated / ExpectMakeNodesAndNodeClaimsInitializedAndStateUpdated.
"""

from __future__ import annotations

from karpy.disruption.helpers import build_nodepool_map, get_candidates
from karpy.disruption.queue import MIN_RETRY_DURATION, Queue
from karpy.disruption.types import GRACEFUL, Command

from tests.disruption.test_consolidation_its import env_, node, rs_pod


class Cluster:
    """Taints, replacement NodeClaims and deletions, as the API server would hold them."""

    def __init__(self) -> None:
        self.tainted: set[str] = set()
        self.replacements: dict[str, str] = {}  # name -> "waiting" | "initialized" | "deleted"
        self.deleted: list[str] = []

    def mark_disrupted(self, cmd: Command) -> None:
        self.tainted.update(c.name for c in cmd.candidates)

    def unmark_disrupted(self, cmd: Command) -> None:
        self.tainted.difference_update(c.name for c in cmd.candidates)

    def create_replacements(self, cmd: Command) -> list[str]:
        names = [f"replacement-{len(self.replacements) + i}" for i in range(len(cmd.replacements))]
        self.replacements.update((n, "waiting") for n in names)
        return names

    def replacement_state(self, record: str) -> str:
        return self.replacements[record]

    def delete_candidates(self, cmd: Command) -> None:
        self.deleted.extend(c.name for c in cmd.candidates)


def command(names: tuple[str, ...] = ("node-1",), replacements: int = 1, now: float = 0.0) -> Command:
    """A drift command for the named NodeClaims with ``replacements`` NodeClaimTemplates."""
    env = env_()
    for n in names:
        node(env, n)
        rs_pod(env, f"pod-{n}", n, cpu="100m")
    cl = env.cluster()
    cands = [c for c in get_candidates(cl, lambda c: True, GRACEFUL, build_nodepool_map(cl)) if c.name in names]
    cmd = Command(cands, [object()] * replacements, reason="Drifted", method="drift")
    cmd.created_at = now
    return cmd


# upstream: queue_test.go Reconcile "should not return an error when handling commands before the timeout"
def test_command_waits_in_the_queue_before_the_timeout():
    cluster = Cluster()
    q = Queue(cluster)
    q.start_command(command())
    assert q.reconcile(now=60.0) == []
    assert q.has_any({"node-1"}) and cluster.tainted == {"node-1"}


# upstream: queue_test.go Reconcile "should not return an error when the NodeClaim doesn't exist but the NodeCliam is in cluster state"
def test_command_waits_for_a_launched_but_uninitialized_replacement():
    cluster = Cluster()
    q = Queue(cluster)
    q.start_command(command())
    # ExpectNodeClaimDeployedAndStateUpdated: launched, registered, not initialized
    assert cluster.replacements == {"replacement-0": "waiting"}
    assert q.reconcile(now=1.0) == [] and q.has_any({"node-1"})


# upstream: queue_test.go Reconcile "should only finish a command when all replacements are initialized"
def test_command_finishes_only_when_every_replacement_is_initialized():
    cluster = Cluster()
    q = Queue(cluster)
    q.start_command(command(replacements=2))
    assert q.reconcile(1.0) == []
    cluster.replacements["replacement-0"] = "initialized"
    assert q.reconcile(2.0) == [] and cluster.deleted == [] and cluster.tainted == {"node-1"}
    cluster.replacements["replacement-1"] = "initialized"
    [done] = q.reconcile(3.0)
    assert done.succeeded and cluster.deleted == ["node-1"] and not q.has_any({"node-1"})


# upstream: queue_test.go Reconcile "should not wait for replacements when none are needed"
def test_delete_command_does_not_wait():
    cluster = Cluster()
    q = Queue(cluster)
    q.start_command(command(replacements=0))
    [done] = q.reconcile(0.0)
    assert done.succeeded and cluster.deleted == ["node-1"]


# upstream: queue_test.go Reconcile "should finish two commands in order as replacements are initialized"
def test_two_commands_finish_as_their_replacements_initialize():
    cluster = Cluster()
    q = Queue(cluster)
    q.start_command(command(("node-1",)))
    q.start_command(command(("node-2",)))
    assert q.reconcile(1.0) == []
    cluster.replacements["replacement-0"] = "initialized"
    [first] = q.reconcile(2.0)
    assert [c.name for c in first.command.candidates] == ["node-1"] and cluster.deleted == ["node-1"]
    assert q.has_any({"node-2"})
    cluster.replacements["replacement-1"] = "initialized"
    [second] = q.reconcile(3.0)
    assert [c.name for c in second.command.candidates] == ["node-2"] and cluster.deleted == ["node-1", "node-2"]


# upstream: queue_test.go Reconcile "should untaint nodes when a command times out"
def test_command_times_out_after_the_retry_duration_and_untaints():
    cluster = Cluster()
    q = Queue(cluster)
    q.start_command(command())
    assert q.reconcile(MIN_RETRY_DURATION - 1) == []
    [done] = q.reconcile(11 * 60.0)  # env.Clock.Step(11 * time.Minute)
    assert not done.succeeded and done.failure.startswith("command reached timeout")
    assert cluster.tainted == set() and cluster.deleted == []


# upstream: queue.go CompleteCommand removes a finished command (its providerIDToCommand entries)
def test_a_finished_command_leaves_the_queue_and_the_rest_stay_in_start_order():
    cluster = Cluster()
    q = Queue(cluster)
    first = q.start_command(command(("node-1",)))
    second = q.start_command(command(("node-2",)))
    third = q.start_command(command(("node-3",)))
    cluster.replacements["replacement-1"] = "initialized"
    [done] = q.reconcile(1.0)
    assert done is second and done.succeeded
    # the finished command (and the simulation results it holds) is gone; the others wait in start order
    assert q.items == [first, third] and q.pending() and q.names() == {"node-1", "node-3"}
    [timed_out_1, timed_out_3] = q.reconcile(11 * 60.0)
    assert (timed_out_1, timed_out_3) == (first, third) and q.items == [] and not q.pending()
