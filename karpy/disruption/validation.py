"""The 15-second re-check before a graceful command acts.

Mirrors pkg/controllers/disruption/validation.go (EmptinessValidator, ConsolidationValidator,
validateCandidates, validateCommand, instanceTypesAreSubset) with upstream's error texts. The
wait itself is the controller's: it parks the command for
:data:`~karpy.disruption.consolidation.COMMAND_VALIDATION_DELAY` virtual seconds while the rest of
the simulation (kube-scheduler, provisioning, binding) keeps running, then calls these with a
fresh look at the cluster.
"""

from __future__ import annotations

from karpy.disruption.budgets import build_disruption_budget_mapping
from karpy.disruption.helpers import get_candidates, simulate_scheduling
from karpy.disruption.types import Candidate, Cluster, Command, Method

__all__ = ["BudgetValidationError", "ChurnValidationError", "SchedulingValidationError", "ValidationError",
           "validate_command", "validate_consolidation", "validate_emptiness"]


class ValidationError(Exception):
    """validation.go ValidationError; ``kind`` is getValidationFailureReason's word."""

    kind = "unknown"


class BudgetValidationError(ValidationError):
    kind = "budget"


class SchedulingValidationError(ValidationError):
    kind = "scheduling"


class ChurnValidationError(ValidationError):
    kind = "churn"


def validate_emptiness(method: Method, cluster: Cluster, cmd: Command) -> Command:
    """EmptinessValidator.Validate (:116-148, :222-253): lenient, may keep a subset."""
    names = {c.name for c in cmd.candidates}
    now_valid = [c for c in get_candidates(cluster, lambda c: method.should_disrupt(c, cluster),
                                           method.disruption_class)
                 if c.name in names]
    if not now_valid:
        raise ChurnValidationError(f"{len(cmd.candidates)} candidates are no longer valid")
    budgets = build_disruption_budget_mapping(cluster.state.nodes, cluster.nodepools.values(), cluster.now,
                                              method.reason)
    kept = []
    by_name = {c.name: c for c in now_valid}
    for orig in cmd.candidates:
        c = by_name.get(orig.name)
        if c is None:
            continue
        pool = c.nodepool.metadata.name
        if cluster.is_nominated(c.name) or budgets.get(pool, 0) <= 0:
            continue
        budgets[pool] -= 1
        kept.append(c)
    if not kept:
        raise BudgetValidationError(f"{len(cmd.candidates)} candidates failed validation because it they were "
                                    "nominated for a pod or would violate disruption budgets")
    return Command(kept, [], cmd.results)


def _validate_candidates(method: Method, cluster: Cluster, cmd: Command) -> list[Candidate]:
    names = {c.name for c in cmd.candidates}
    valid = [c for c in get_candidates(cluster, lambda c: method.should_disrupt(c, cluster),
                                       method.disruption_class)
             if c.name in names]
    if len(valid) != len(cmd.candidates):
        raise ChurnValidationError(f"{len(cmd.candidates) - len(valid)} candidates are no longer valid")
    budgets = build_disruption_budget_mapping(cluster.state.nodes, cluster.nodepools.values(), cluster.now,
                                              method.reason)
    for c in valid:
        if cluster.is_nominated(c.name):
            raise BudgetValidationError("a candidate was nominated during validation")
        pool = c.nodepool.metadata.name
        if budgets.get(pool, 0) == 0:
            raise BudgetValidationError("a candidate can no longer be disrupted without violating budgets")
        budgets[pool] -= 1
    return valid


def validate_command(cluster: Cluster, cmd: Command, candidates: list[Candidate]) -> None:
    """validation.go validateCommand: the re-simulation must give the same shape, and a
    replacement's options must be a subset (by name) of the new simulation's."""
    results = simulate_scheduling(cluster, candidates, consolidation=True)
    if isinstance(results, str):
        raise ValidationError(results)
    if not results.all_non_pending_pods_scheduled():
        raise SchedulingValidationError(results.non_pending_pod_scheduling_errors())
    new = results.new_nodeclaims
    if not new:
        if not cmd.replacements:
            return
        raise SchedulingValidationError("scheduling simulation produced new results")
    if len(new) > 1 or not cmd.replacements:
        raise SchedulingValidationError("scheduling simulation produced new results")
    allowed = {it.name for it in new[0].instance_type_options}
    if not all(it.name in allowed for it in cmd.replacements[0].instance_type_options):
        raise SchedulingValidationError("scheduling simulation produced new results")


def validate_consolidation(method: Method, cluster: Cluster, cmd: Command) -> Command:
    """ConsolidationValidator.Validate (:156-220): all or nothing."""
    candidates = _validate_candidates(method, cluster, cmd)
    validate_command(cluster, cmd, candidates)
    _validate_candidates(method, cluster, cmd)
    return cmd
