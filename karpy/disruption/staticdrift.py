"""StaticDrift: replace drifted NodeClaims of static NodePools one for one (reason ``Drifted``).

Mirrors pkg/controllers/disruption/staticdrift.go (ShouldDisrupt, ComputeCommands): candidates of
static NodePools (``spec.replicas``) with ``Drifted=True``; per NodePool nothing while its budget
is 0 or while ``running + pendingDisruption > replicas`` (the deprovisioning controller scales it
down first); else ``min(budget, candidates)`` further limited by what ``limits.nodes`` lets the
NodePool state reserve (:meth:`karpy.static.nodepoolstate.NodePoolState.reserve_node_count`; the
queue's CreateNodeClaims releases it). One command per candidate, each replacing it with a fresh
NodeClaim of the NodePool's template -- no scheduling simulation, no validation, several commands
per round.

Deterministic rule (upstream groups with ``lo.GroupBy`` and ranges the map): NodePools in name
order; candidates by the Drifted transition time, then name (as :mod:`karpy.disruption.drift`).
"""

from __future__ import annotations

from collections.abc import Sequence

from karpy.disruption.budgets import REASON_DRIFTED
from karpy.disruption.drift import Drift
from karpy.disruption.types import EVENTUAL, Candidate, Cluster, Command, condition_true
from karpy.static.nodepoolstate import NodePoolState
from karpy.static.provisioning import StaticNodeClaim, node_limit

__all__ = ["StaticDrift"]


class StaticDrift:
    name = "static-drift"
    reason = REASON_DRIFTED
    disruption_class = EVENTUAL
    validates = False

    def should_disrupt(self, c: Candidate, cluster: Cluster) -> bool:
        """staticdrift.go ShouldDisrupt: static and Drifted=True."""
        return c.owned_by_static_nodepool() and condition_true(c.nodeclaim, "Drifted")

    def compute_commands(self, cluster: Cluster, budgets: dict[str, int],
                         candidates: Sequence[Candidate]) -> list[Command]:
        """staticdrift.go ComputeCommands (see the module docstring)."""
        state: NodePoolState = cluster.nodepool_state if cluster.nodepool_state is not None else NodePoolState()
        by_pool: dict[str, list[Candidate]] = {}
        for c in sorted(candidates, key=lambda c: (Drift._drifted_at(c), c.name)):
            by_pool.setdefault(c.nodepool.metadata.name, []).append(c)
        well_known: frozenset[str] = getattr(cluster.provisioner, "well_known", frozenset())
        cmds: list[Command] = []
        for pool_name in sorted(by_pool):
            pool_cands = by_pool[pool_name]
            np = pool_cands[0].nodepool
            budget = budgets.get(pool_name, 0)
            if budget == 0:
                continue
            running, _, pending = state.get_node_count(pool_name)
            if running + pending > int(np.spec.replicas or 0):
                continue  # wait until the scale-down is complete
            allowed = state.reserve_node_count(pool_name, node_limit(np), min(budget, len(pool_cands)))
            for c in pool_cands[:allowed]:
                cmds.append(Command([c], [StaticNodeClaim(np, well_known)]))
        return cmds
