"""Command.String() and Command.StringForNode(), the wording of every disruption event and log
line, ported from kubernetes-sigs/karpenter 2266468 pkg/controllers/disruption/types.go."""

from __future__ import annotations

from types import SimpleNamespace

from karpy.disruption.types import Command


def _candidate(name: str, pool: str = "default") -> SimpleNamespace:
    return SimpleNamespace(name=name, nodepool=SimpleNamespace(metadata=SimpleNamespace(name=pool)), price=0.0)


# upstream: consolidation_logging_test.go TestCommand_String (all five cases)
def test_command_string_without_a_method() -> None:
    n1, n2 = _candidate("node-1"), _candidate("node-2")
    assert str(Command([n1])) == "delete: [node-1]"
    assert str(Command([n1, n2])) == "delete: [node-1, node-2]"
    assert str(Command([n1], [object()])) == "replace: [node-1] -> [1 replacement]"
    assert str(Command([n1], [object(), object()])) == "replace: [node-1] -> [2 replacements]"
    assert str(Command([])) == "no-op: []"


def test_string_for_node_is_the_command_for_one_node_and_names_the_multi_node_part() -> None:
    """types.go StringForNode: what ConsolidationCandidate and ConsolidationRejected events say
    (main: a rejected command lost its ``-> [1 replacement]`` and its multi-node suffix)."""
    n1, n2, n3 = _candidate("node-1"), _candidate("node-2"), _candidate("node-3")
    single = Command([n1], [object()])
    assert single.string_for_node(n1) == "replace: [node-1] -> [1 replacement]"
    multi = Command([n1, n2, n3])
    assert multi.string_for_node(n2) == "delete: [node-2] (part of 3-node consolidation)"


# upstream: consolidation_test.go "should not consolidate if ... during the validation wait" (churn),
# the ConsolidationRejected event's wording (events.go ConsolidationRejected, types.go EmitRejectedEvents)
def test_rejected_replace_is_worded_as_upstream() -> None:
    """main: "Consolidation rejected: replace: [n], reason: churn" (no ``-> [1 replacement]``)."""
    from tests.disruption.test_scenarios import bare, build, scale_down

    sim = build([bare(f"p{i}") for i in range(8)])
    scale_down(sim, 300, [f"default/p{i}" for i in range(1, 8)])

    def block() -> None:  # a do-not-disrupt pod lands on every node during the 15 s validation wait
        for n in sim.store.list("Node"):
            p = bare(f"guard-{n.metadata.name}", cpu="10m", annotations={"karpenter.sh/do-not-disrupt": "true"})
            p.spec = p.spec.model_copy(update={"node_name": n.metadata.name})
            sim.pods.create(p)

    sim.events.schedule(325, "block", block)
    r = sim.run()
    [rejected] = [d for d in r.disruption.decisions if d.get("validated") is False]
    name = rejected["candidates"][0]
    messages = [msg for (reason, msg) in r.disruption.node_events[name] if reason == "ConsolidationRejected"]
    assert messages == [f"Consolidation rejected: replace: [{name}] -> [1 replacement], reason: churn "
                        f"(savings: ${rejected['savings_per_hour']:.2f})"]
