"""Ports of pkg/utils/pdb/suite_test.go (CanEvictPods, IsCurrentlyReschedulable) plus the
disruptionsAllowed computation karpy does in place of the PDB status."""

from __future__ import annotations

import pytest

from karpy.api.builders import make_pod
from karpy.api.meta import LabelSelector, ObjectMeta
from karpy.api.pod import PodCondition
from karpy.api.poddisruptionbudget import PodDisruptionBudget, PodDisruptionBudgetSpec
from karpy.utils.pdb import Limits, disruptions_allowed, is_fully_blocking

LABELS = {"test": "value"}
NOW = 0.0


def pdb(name="pdb", labels=LABELS, min_available=None, max_unavailable=None, policy=None):
    return PodDisruptionBudget(metadata=ObjectMeta(name=name), spec=PodDisruptionBudgetSpec(
        selector=LabelSelector(match_labels=dict(labels)), min_available=min_available,
        max_unavailable=max_unavailable, unhealthy_pod_eviction_policy=policy))


def pod(name="p", labels=LABELS, ready=None):
    p = make_pod(name, labels=labels, node_name="node", unschedulable=False, phase="Running")
    if ready is not None:
        p.status.conditions = [PodCondition(type="Ready", status=ready)]
    return p


BLOCKING = {
    "100% min available": [pdb(min_available="100%")],
    "0% max unavailable": [pdb(max_unavailable="0%")],
    "0 max unavailable": [pdb(max_unavailable=0)],
    "multiple PDBs on the same pod": [pdb("pdb-1", min_available="100%"), pdb("pdb-2", min_available="100%")],
}


# upstream: pkg/utils/pdb/suite_test.go "can evict unhealthy pods when UnhealthyPodEvictionPolicy is set to always allow"
def test_can_evict_unhealthy_with_always_allow():
    p = pod(ready="False")
    limits = Limits.from_objects([pdb(min_available="100%", policy="AlwaysAllow")], [p])
    assert limits.can_evict_pods([p], NOW) == ([], True)


# upstream: pkg/utils/pdb/suite_test.go "can't evict unhealthy pods when UnhealthyPodEvictionPolicy is not set"
def test_cannot_evict_unhealthy_without_policy():
    p = pod(ready="False")
    limits = Limits.from_objects([pdb(min_available="100%")], [p])
    assert limits.can_evict_pods([p], NOW) == (["default/pdb"], False)


# upstream: pkg/utils/pdb/suite_test.go "can evict pods when no PDBs match"
def test_can_evict_when_no_pdb_matches():
    p = pod()
    limits = Limits.from_objects([pdb(labels={"other": "value"})], [p])
    assert limits.can_evict_pods([p], NOW) == ([], True)


# upstream: pkg/utils/pdb/suite_test.go DescribeTable "can't evict pods when disruptions are not allowed for every pod in the list"
@pytest.mark.parametrize("entry", sorted(BLOCKING))
def test_cannot_evict_every_pod(entry):
    pods = [pod("p1"), pod("p2")]
    limits = Limits.from_objects(BLOCKING[entry], pods)
    keys, ok = limits.can_evict_pods(pods, NOW)
    assert not ok
    assert sorted(keys) == sorted(f"default/{b.metadata.name}" for b in BLOCKING[entry])


# upstream: pkg/utils/pdb/suite_test.go DescribeTable "can't evict pods when disruptions are not allowed for one pod in the list"
@pytest.mark.parametrize("entry", sorted(BLOCKING))
def test_cannot_evict_one_pod(entry):
    pods = [pod("p1"), pod("p2", labels={})]
    limits = Limits.from_objects(BLOCKING[entry], pods)
    keys, ok = limits.can_evict_pods(pods, NOW)
    assert not ok and len(keys) == len(BLOCKING[entry])


# upstream: pkg/utils/pdb/suite_test.go "considers unhealthy pod as currently reschedulable when UnhealthyPodEvictionPolicy is set to always allow"
def test_unhealthy_reschedulable_with_always_allow():
    p = pod(ready="False")
    assert Limits.from_objects([pdb(min_available="100%", policy="AlwaysAllow")], [p]).is_currently_reschedulable(p, NOW)


# upstream: pkg/utils/pdb/suite_test.go "does not consider unhealthy pod as currently reschedulable when UnhealthyPodEvictionPolicy is not set"
def test_unhealthy_not_reschedulable_without_policy():
    p = pod(ready="False")
    assert not Limits.from_objects([pdb(min_available="100%")], [p]).is_currently_reschedulable(p, NOW)


# upstream: pkg/utils/pdb/suite_test.go "considers pod as currently reschedulable when no PDBs match"
def test_reschedulable_when_no_pdb_matches():
    p = pod()
    assert Limits.from_objects([pdb(labels={"other": "value"})], [p]).is_currently_reschedulable(p, NOW)


# upstream: pkg/utils/pdb/suite_test.go DescribeTable "pods which are not currently reschedulable due to PDBs"
@pytest.mark.parametrize("entry", sorted(BLOCKING))
def test_not_reschedulable_due_to_pdbs(entry):
    p = pod()
    assert not Limits.from_objects(BLOCKING[entry], [p]).is_currently_reschedulable(p, NOW)


# upstream: pkg/utils/pdb/suite_test.go "does not consider pod with do-not-disrupt annotation as currently reschedulable"
def test_do_not_disrupt_not_reschedulable():
    p = pod()
    p.metadata.annotations = {"karpenter.sh/do-not-disrupt": "true"}
    assert not Limits.from_objects([], [p]).is_currently_reschedulable(p, NOW)


def test_fully_blocking_forms():
    # pdb.go newPdb: an integer minAvailable equal to the replicas is not fully blocking
    assert is_fully_blocking(pdb(max_unavailable=0))
    assert is_fully_blocking(pdb(max_unavailable="0%"))
    assert is_fully_blocking(pdb(min_available="100%"))
    assert not is_fully_blocking(pdb(min_available=3))
    assert not is_fully_blocking(pdb(max_unavailable=1))


def test_disruptions_allowed_like_the_disruption_controller():
    pods = [pod(f"p{i}") for i in range(4)]
    assert disruptions_allowed(pdb(min_available=3), pods) == 1
    assert disruptions_allowed(pdb(min_available="50%"), pods) == 2
    assert disruptions_allowed(pdb(max_unavailable=1), pods) == 1
    assert disruptions_allowed(pdb(max_unavailable="30%"), pods) == 2  # ceil(1.2)
    assert disruptions_allowed(pdb(min_available=4), pods) == 0
    # a pending replica counts as expected but not healthy
    pending = make_pod("p9", labels=LABELS)
    assert disruptions_allowed(pdb(min_available=4), pods + [pending]) == 0
    assert disruptions_allowed(pdb(max_unavailable=1), pods + [pending]) == 0
    # a PDB with a minAvailable the pods can meet still blocks CanEvictPods when it allows 0
    limits = Limits.from_objects([pdb(min_available=4)], pods)
    assert limits.can_evict_pods(pods[:1], NOW) == (["default/pdb"], False)
    # mirror / inactive pods are ignored by isEvictable
    done = pod("done")
    done.status.phase = "Succeeded"
    assert limits.can_evict_pods([done], NOW) == ([], True)
