"""Simulation._apply writes exactly what a scheduling result asks for; a failure that repeats the
pod's condition and asks for nothing else (the shortcut that skips the pod lookup) changes
nothing, and each of the other requests still acts."""

from __future__ import annotations

from typing import Any

from karpy.api.builders import make_nodepool, make_pod
from karpy.api.loader import load_manifests
from karpy.cloudprovider.fake import FakeCloudProvider
from karpy.kubescheduler.scheduler import NOMINATED, UNSCHEDULABLE, ScheduleOneResult, Victim
from karpy.sim.simulation import Simulation, SimulationOptions

_COND = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "no nodes available"}


def _sim() -> Simulation:
    sim = Simulation(load_manifests([make_nodepool(), make_pod("a", requests={"cpu": "1"}),
                                     make_pod("b", requests={"cpu": "1"}, nominated_node_name="n1")]),
                     FakeCloudProvider(), SimulationOptions(time_limit=60))
    sim.load()
    return sim


def _pod(sim: Simulation, name: str) -> Any:
    return sim.store.get("Pod", name, "default")


def test_a_repeated_failure_changes_nothing():
    sim = _sim()
    before, a = sim.store.resource_version, _pod(sim, "a")
    for outcome in (UNSCHEDULABLE, NOMINATED, "Error", "Skipped"):
        sim.pods.apply(ScheduleOneResult("default/a", outcome, None, dict(_COND), False, None))
        sim.pods.apply(ScheduleOneResult("default/gone", outcome, None, dict(_COND), True, ""))  # no such pod
    assert sim.store.resource_version == before
    assert _pod(sim, "a") is a


def test_each_request_of_a_failure_still_acts():
    sim = _sim()
    sim.pods.apply(ScheduleOneResult("default/a", UNSCHEDULABLE, None, dict(_COND), True, None))
    assert [(c.type, c.message) for c in _pod(sim, "a").status.conditions] == [("PodScheduled", "no nodes available")]
    sim.pods.apply(ScheduleOneResult("default/a", NOMINATED, None, dict(_COND), False, "n9"))
    assert _pod(sim, "a").status.nominated_node_name == "n9"
    sim.pods.apply(ScheduleOneResult("default/a", UNSCHEDULABLE, None, dict(_COND), False, ""))
    assert _pod(sim, "a").status.nominated_node_name is None
    sim.pods.apply(ScheduleOneResult("default/a", NOMINATED, None, dict(_COND), False, None,
                                 cleared_nominations=["default/b"]))
    assert _pod(sim, "b").status.nominated_node_name is None
    sim.pods.apply(ScheduleOneResult("default/a", NOMINATED, None, dict(_COND), False, None,
                                 victims=[Victim("default/b", "n1", 30)]))
    assert _pod(sim, "b").metadata.deletion_timestamp is not None
