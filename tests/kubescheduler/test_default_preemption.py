"""DefaultPreemption eligibility, nomination clearing and preemptionPolicy Never.

Ported from kubernetes/kubernetes pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go
(TestPodEligibleToPreemptOthers, TestPreempt) and pkg/scheduler/framework/preemption/preemption.go
(prepareCandidate / getLowerPriorityNominatedPods).
"""

import datetime
import random

import pytest

from karpy.api.builders import make_node, make_pod
from karpy.api.pod import PodCondition
from karpy.kubescheduler import KubeScheduler
from karpy.kubescheduler.podinfo import new_pod_info
from karpy.kubescheduler.preemption import MSG_POLICY_NEVER, MSG_TERMINATING
from karpy.kubescheduler.types import Diagnosis
from karpy.kubescheduler.scheduler import NOMINATED, UNSCHEDULABLE
from karpy.kubescheduler.types import Code, Status

from ._helpers import infos
from .conftest import FakeClock

LOW, MID, HIGH = 0, 100, 1000
CAP = {"cpu": "1", "memory": "1Gi", "pods": "10"}


def _sched(clock=None):
    return KubeScheduler(clock or FakeClock(), random.Random(0))


def _terminating(p, by_preemption=True):
    p.metadata.deletion_timestamp = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    if by_preemption:
        p.status.conditions.append(PodCondition(type="DisruptionTarget", status="True",
                                                reason="PreemptionByScheduler"))
    return p


def _eligible(pod, existing, nodes, nominated_status):
    s = _sched()
    by_name = {ni.name: ni for ni in infos([make_node(n) for n in nodes], existing)}
    diag = Diagnosis(node_to_status={"node1": nominated_status} if nominated_status is not None else {})
    return s.preemption.eligible(new_pod_info(pod), by_name, diag, s._terminating_by_preemption)


# upstream: default_preemption_test.go TestPodEligibleToPreemptOthers
@pytest.mark.parametrize("name,pod_kw,existing,nodes,status,want", [
    ("Pod with nominated node", dict(nominated_node_name="node1"),
     [("p1", LOW, True)], ["node1"], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["taint"]), True),
    ("Pod with nominated node, but without nominated node status", dict(nominated_node_name="node1"),
     [("p1", LOW, True)], ["node1"], None, False),
    ("Pod without nominated node", dict(), [], [], None, True),
    ("Pod with 'PreemptNever' preemption policy", dict(preemption_policy="Never"), [], [], None, False),
    # variants of the same rule (default_preemption.go PodEligibleToPreemptOthers / podTerminatingByPreemption)
    ("terminating pod on nominated node has equal priority", dict(nominated_node_name="node1"),
     [("p1", HIGH, True)], ["node1"], None, True),
    ("lower-priority pod on nominated node is running, not terminating", dict(nominated_node_name="node1"),
     [("p1", LOW, None)], ["node1"], None, True),
    ("terminating pod was not deleted by preemption (no DisruptionTarget)", dict(nominated_node_name="node1"),
     [("p1", LOW, False)], ["node1"], None, True),
    ("nominated node status Unschedulable (resolvable) still blocks", dict(nominated_node_name="node1"),
     [("p1", LOW, True)], ["node1"], Status(Code.UNSCHEDULABLE, ["Insufficient cpu"]), False),
])
def test_pod_eligible_to_preempt_others(name, pod_kw, existing, nodes, status, want):
    pod = make_pod("p", uid="p", priority=HIGH, **pod_kw)
    pods = []
    for n, prio, term in existing:
        p = make_pod(n, uid=n, priority=prio, node_name="node1")
        if term is not None:
            _terminating(p, by_preemption=term)
        pods.append(p)
    ok, msg = _eligible(pod, pods, nodes, status)
    assert ok is want
    if not want:
        assert msg == (MSG_POLICY_NEVER if pod_kw.get("preemption_policy") == "Never" else MSG_TERMINATING)


def test_nominated_preemptor_waits_for_terminating_victim_end_to_end():
    # upstream: default_preemption.go PodEligibleToPreemptOthers — a preemptor retried while its victim is still
    # terminating on the nominated node does not preempt again and keeps its nomination
    s = _sched()
    s.add_node(make_node("n", capacity=CAP))
    s.add_pod(make_pod("low", requests={"cpu": "800m"}, priority=LOW, node_name="n"))
    s.add_pod(make_pod("low2", requests={"cpu": "100m"}, priority=LOW, node_name="n"))
    s.add_pod(make_pod("high", requests={"cpu": "800m"}, priority=HIGH))
    r = s.schedule_one()
    assert r.outcome == NOMINATED and [v.key for v in r.victims] == ["default/low"]
    # the simulation writes status.nominatedNodeName and marks the victim terminating
    s.update_pod(make_pod("high", requests={"cpu": "800m"}, priority=HIGH, nominated_node_name="n"))
    s.update_pod(_terminating(make_pod("low", requests={"cpu": "800m"}, priority=LOW, node_name="n")))
    s.activate(["default/high"])
    r2 = s.schedule_one()
    assert r2.pod_key == "default/high" and r2.outcome == UNSCHEDULABLE
    assert r2.condition["message"].endswith("preemption: " + MSG_TERMINATING)
    assert r2.victims == [] and r2.nominated_node_name is None  # nomination unchanged
    assert s.nominated["default/high"] == "n"
    assert "default/low2" not in s.preempting


def test_higher_priority_preemptor_clears_lower_nominations():
    # upstream: preemption.go prepareCandidate -> getLowerPriorityNominatedPods + ClearNominatedNodeName: pods of lower
    # priority nominated to the chosen node lose their nomination; nominations elsewhere are untouched
    s = _sched()
    s.add_node(make_node("n1", capacity=CAP))
    s.add_node(make_node("n2", capacity=CAP))
    s.add_pod(make_pod("top", requests={"cpu": "800m"}, priority=10 * HIGH, node_name="n2"))
    s.add_pod(make_pod("low", requests={"cpu": "800m"}, priority=LOW, node_name="n1"))
    s.add_pod(make_pod("mid", requests={"cpu": "800m"}, priority=MID))
    r = s.schedule_one()
    assert (r.pod_key, r.outcome, r.nominated_node_name) == ("default/mid", NOMINATED, "n1")
    assert r.cleared_nominations == []
    s.add_pod(make_pod("elsewhere", requests={"cpu": "800m"}, priority=LOW, nominated_node_name="n2"))
    s.add_pod(make_pod("high", requests={"cpu": "800m"}, priority=HIGH))
    r = s.schedule_one()
    assert (r.pod_key, r.outcome, r.nominated_node_name) == ("default/high", NOMINATED, "n1")
    assert r.cleared_nominations == ["default/mid"]
    assert "default/mid" not in s.nominated
    assert s.nominated == {"default/high": "n1", "default/elsewhere": "n2"}


def test_equal_priority_nomination_not_cleared():
    # upstream: getLowerPriorityNominatedPods keeps pods with priority >= the preemptor's
    s = _sched()
    s.add_node(make_node("n", capacity={"cpu": "2", "memory": "1Gi", "pods": "10"}))
    s.add_pod(make_pod("low", requests={"cpu": "1500m"}, priority=LOW, node_name="n"))
    s.add_pod(make_pod("a", requests={"cpu": "800m"}, priority=HIGH))
    r = s.schedule_one()
    assert (r.outcome, r.nominated_node_name) == (NOMINATED, "n")
    s.add_pod(make_pod("b", requests={"cpu": "800m"}, priority=HIGH))
    r = s.schedule_one()
    assert r.pod_key == "default/b"
    assert "default/a" not in r.cleared_nominations and s.nominated.get("default/a") == "n"


# upstream: default_preemption_test.go TestPreempt "no preempting in pod" (adapted: the default plugin set, node
# capacity = veryLargeRes)
def test_preemption_policy_never_preempts_nothing():
    s = _sched()
    for n in ("node1", "node2", "node3"):
        s.add_node(make_node(n, capacity={"cpu": "500m", "memory": "500", "pods": "10"}))
    s.add_pod(make_pod("p1.1", requests={"cpu": "100m", "memory": "100"}, priority=LOW, node_name="node1"))
    s.add_pod(make_pod("p1.2", requests={"cpu": "100m", "memory": "100"}, priority=LOW, node_name="node1"))
    s.add_pod(make_pod("p2.1", requests={"cpu": "300m", "memory": "300"}, priority=HIGH, node_name="node2"))
    s.add_pod(make_pod("p3.1", requests={"cpu": "200m", "memory": "200"}, priority=MID, node_name="node3"))
    s.add_pod(make_pod("p", requests={"cpu": "500m", "memory": "500"}, priority=HIGH, preemption_policy="Never"))
    r = s.schedule_one()
    assert r.outcome == UNSCHEDULABLE and r.victims == [] and r.nominated_node_name is None
    assert r.condition["message"].endswith("preemption: " + MSG_POLICY_NEVER)
    assert s.preempting == set() and "default/p" not in s.nominated


# upstream: default_preemption_test.go TestPreempt "basic preemption logic" (same pods, policy PreemptLowerPriority)
def test_preempt_basic_logic_picks_node_with_lowest_priority_victims():
    s = _sched()
    for n in ("node1", "node2", "node3"):
        s.add_node(make_node(n, capacity={"cpu": "500m", "memory": "500", "pods": "10"}))
    s.add_pod(make_pod("p1.1", requests={"cpu": "100m", "memory": "100"}, priority=LOW, node_name="node1"))
    s.add_pod(make_pod("p1.2", requests={"cpu": "100m", "memory": "100"}, priority=LOW, node_name="node1"))
    s.add_pod(make_pod("p2.1", requests={"cpu": "300m", "memory": "300"}, priority=HIGH, node_name="node2"))
    s.add_pod(make_pod("p3.1", requests={"cpu": "200m", "memory": "200"}, priority=MID, node_name="node3"))
    s.add_pod(make_pod("p", requests={"cpu": "500m", "memory": "500"}, priority=HIGH,
                       preemption_policy="PreemptLowerPriority"))
    r = s.schedule_one()
    assert (r.outcome, r.nominated_node_name) == (NOMINATED, "node1")
    assert sorted(v.key for v in r.victims) == ["default/p1.1", "default/p1.2"]
