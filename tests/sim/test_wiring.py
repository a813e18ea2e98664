"""The simulation and its controllers: wired from above (karpy.simulator.new_simulation, as upstream's
pkg/controllers/controllers.go), seen through karpy.sim.host.SimulationHost, never through a private
member; the input read once into the store; one options object."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import karpy
from karpy.api import load_manifests, make_nodepool, make_pod
from karpy.cloudprovider.fake import FakeCloudProvider
from karpy.options import FeatureGates, Options, SchedulerConfiguration
from karpy.sim.host import SimulationHost
from karpy.sim.options import SimulationOptions
from karpy.sim.simulation import Simulation
from karpy.simulator import new_simulation

ROOT = Path(karpy.__file__).parent
#: the controllers registered with the simulation, and the cloud provider's
CONTROLLER_SOURCES = [*(ROOT / "disruption").glob("*.py"), *(ROOT / "static").glob("*.py"),
                      *(ROOT / "termination").glob("*.py"), ROOT / "sim" / "scenario.py",
                      *(ROOT.parent / "awsprovider").rglob("*.py")]


def _imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.append(node.module)
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return out


def test_the_simulation_imports_none_of_the_controllers_it_runs():
    for path in (ROOT / "sim").glob("*.py"):
        up = [m for m in _imports(path) if m.split(".")[:2] in (["karpy", "disruption"], ["karpy", "static"],
                                                                 ["karpy", "termination"])]
        assert up == [], f"{path.name} imports {up}"


def _private_uses(path: Path) -> list[str]:
    """``sim._x`` / ``self.sim._x`` / ``cluster._x`` (the simulation's private members)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = node.value
            name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", None)
            if name in ("sim", "simulation", "cluster"):
                out.append(f"{path.name}:{node.lineno} {name}.{node.attr}")
    return out


def test_no_controller_touches_a_private_member_of_the_simulation():
    assert [use for path in CONTROLLER_SOURCES for use in _private_uses(path)] == []


def test_the_simulation_offers_every_member_of_the_host_interface():
    members = [n for n in vars(SimulationHost) if not n.startswith("_")]
    members += list(SimulationHost.__annotations__)
    assert "stage_nodeclaim" in members and "evict" in members
    sim = Simulation(load_manifests([make_nodepool()]), FakeCloudProvider())
    assert [m for m in members if not hasattr(sim, m)] == []


def _manifests():
    return load_manifests([make_nodepool(), make_pod("a", requests={"cpu": "1"})])


def test_new_simulation_registers_termination_always_and_disruption_when_asked():
    plain = new_simulation(_manifests(), FakeCloudProvider(), SimulationOptions(time_limit=60))
    assert plain.termination is not None and plain.disruption is None
    with_disruption = new_simulation(_manifests(), FakeCloudProvider(),
                                     SimulationOptions(disruption=True, time_limit=60))
    from karpy.disruption.controller import DisruptionController

    assert isinstance(with_disruption.disruption, DisruptionController)
    assert with_disruption.disruption.termination is with_disruption.termination
    assert with_disruption.run().disruption is with_disruption.disruption


def test_a_bare_simulation_says_how_to_wire_termination():
    sim = Simulation(_manifests(), FakeCloudProvider(), SimulationOptions(time_limit=60))
    sim.run()
    name = sim.launches[0].name
    with pytest.raises(RuntimeError, match="set_termination"):
        sim.delete_nodeclaim(name, "test")


def test_the_input_kinds_nothing_watches_are_read_from_the_store():
    text = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""
    sim = new_simulation(load_manifests([make_nodepool(), text]), FakeCloudProvider(), SimulationOptions(time_limit=60))
    assert [p.metadata.name for p in sim.pod_disruption_budgets()] == ["web"]
    assert [c.metadata.name for c in sim.store.list("PriorityClass")] == ["high"]
    assert sim.volumes is not None and sim.provisioner.volumes is sim.volumes
    assert "default/data" in sim.volumes.claims


def test_one_options_object_its_operator_derived_once():
    # the gate overrides and the two policies reach Karpenter's Options, which every layer reads
    opts = SimulationOptions(feature_gates={"StaticCapacity": True}, min_values_policy="BestEffort")
    op = opts.operator_options()
    assert op.feature_gates.static_capacity and op.best_effort and op.feature_gates.reserved_capacity
    assert opts.operator is op
    # an operator given keeps what the fields do not say (the scheduler config); the policy fields win
    cfg = SchedulerConfiguration()
    given = Options(preference_policy="Ignore", scheduler_config=cfg,
                    feature_gates=FeatureGates(spot_to_spot_consolidation=True))
    opts = SimulationOptions(operator=given)
    assert opts.operator_options().scheduler_config is cfg
    assert opts.operator_options().preference_policy == "Respect"
    assert opts.operator_options().feature_gates.spot_to_spot_consolidation
    # unchanged: the same object
    same = Options()
    assert SimulationOptions(operator=same).operator is same
    assert FeatureGates.from_mapping(FeatureGates(node_overlay=True).to_mapping()) == FeatureGates(node_overlay=True)
