"""What a run keeps after a provisioning pass (issue #13, memory): a launched in-flight NodeClaim
stays on its LaunchRecord for explain output only, so it lets go of the Solve-only state
(``NodeClaim.release_solve_state``) -- without that every pass's Topology, instance-type index and
merge memo stayed alive to the end of the run (a third of the objects left after a 2,000-pod
run). Explain output, which reads the kept claims, is unchanged (the golden JSON compare)."""

from __future__ import annotations

import gc

import pytest

import karpy
from karpy.api.builders import make_deployment, make_nodepool
from karpy.provisioning.nodeclaim import NodeClaim
from karpy.provisioning.topology import Topology


@pytest.fixture(scope="module")
def result() -> karpy.Result:
    """Three passes' worth of claims on the fake provider: Deployments arriving apart, zonal spread."""
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "b"}}}]
    return karpy.simulate([make_nodepool(), make_deployment("a", replicas=6, requests={"cpu": "3"}),
                           make_deployment("b", replicas=6, requests={"cpu": "3"}, topology_spread_constraints=spread)],
                          cloud_provider="fake", region=None)


def test_launched_claims_keep_what_explain_reads_and_not_the_solve_state(result: karpy.Result) -> None:
    claims = [r.scheduling for r in result.launches if isinstance(r.scheduling, NodeClaim)]
    assert claims
    for claim in claims:
        assert claim.topology is None and claim.reservation_manager is None and not claim._merge_cache
        assert not hasattr(claim, "_index")
        assert claim.pods and claim.hostname and claim.template is not None and claim.instance_type_options
    doc = result.to_document()
    assert set(doc["explain"]["nodeclaims"]) == {r.name for r in result.launches}
    assert all("funnel" in e for e in doc["explain"]["nodeclaims"].values())


def test_no_pass_topology_outlives_the_run(result: karpy.Result) -> None:
    gc.collect()
    assert [o for o in gc.get_objects() if type(o) is Topology] == []


def test_no_topology_outlives_a_run_whose_disruption_launched_replacements() -> None:
    """A consolidation replacement is launched through the same Simulation.launch as a pass's
    claims, and lets go of its Solve state too: the cookbook's two-hour run (03, the 8th-gen outage
    in the first hour) kept 12 Topologies alive through its replacements' NodeClaims."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "generation-preference" / "make_table.py"
    spec = importlib.util.spec_from_file_location("generation_preference_make_table_memory", path)
    assert spec is not None and spec.loader is not None
    make_table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_table)
    run = make_table.consolidation_run("03-nodeoverlay", "8th gen ICE")
    assert make_table.consolidation_summary(run)["replacements"] >= 1
    gc.collect()
    assert [o for o in gc.get_objects() if type(o) is Topology] == []
