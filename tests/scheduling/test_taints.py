"""Taints and tolerations (pkg/scheduling/taints.go, core/v1 Toleration.ToleratesTaint)."""

import pytest

from karpy.scheduling.hostports import HostPort, HostPortUsage
from karpy.scheduling.taints import (TaintSpec, format_taint, is_known_ephemeral_taint, merge_taints,
                                     toleration_tolerates_taint, tolerates)
from types import SimpleNamespace as NS


def tol(key=None, operator=None, value=None, effect=None):
    return NS(key=key, operator=operator, value=value, effect=effect)


GPU = TaintSpec("nvidia.com/gpu", "true", "NoSchedule")


# upstream: pkg/controllers/provisioning/suite_test.go "should schedule pods that tolerate taints" (P:1645)
@pytest.mark.parametrize("toleration", [
    tol("nvidia.com/gpu", "Equal", "true", "NoSchedule"),
    tol("nvidia.com/gpu", "Exists", None, "NoSchedule"),
    tol("nvidia.com/gpu", "Exists"),
    tol(None, "Exists"),
])
def test_tolerations_that_tolerate_the_gpu_taint(toleration):
    assert tolerates([GPU], [toleration]) is None


@pytest.mark.parametrize("toleration", [
    tol("nvidia.com/gpu", "Equal", "false", "NoSchedule"),
    tol("nvidia.com/gpu", "Exists", None, "NoExecute"),
    tol("other", "Exists"),
    tol("nvidia.com/gpu", None, None, None),  # operator defaults to Equal, value "" != "true"
])
def test_tolerations_that_do_not(toleration):
    assert tolerates([GPU], [toleration]) == "did not tolerate taint (taint=nvidia.com/gpu=true:NoSchedule)"


def test_every_untolerated_taint_is_reported():
    msg = tolerates([GPU, TaintSpec("foo", None, "PreferNoSchedule")], [])
    assert msg == ("did not tolerate taint (taint=nvidia.com/gpu=true:NoSchedule); "
                   "did not tolerate taint (taint=foo:PreferNoSchedule)")


def test_comparison_operators():
    sla = TaintSpec("sla", "950", "NoSchedule")
    assert toleration_tolerates_taint(tol("sla", "Gt", "900"), sla)
    assert not toleration_tolerates_taint(tol("sla", "Gt", "950"), sla)
    assert toleration_tolerates_taint(tol("sla", "Lt", "999"), sla)
    assert not toleration_tolerates_taint(tol("sla", "Lt", "abc"), sla)


def test_known_ephemeral_taints():
    assert is_known_ephemeral_taint(TaintSpec("node.kubernetes.io/not-ready", None, "NoExecute"))
    assert is_known_ephemeral_taint(TaintSpec("readiness.k8s.io/network", "x", "NoSchedule"))
    assert not is_known_ephemeral_taint(TaintSpec("node.cloudprovider.kubernetes.io/uninitialized", "false",
                                                  "NoSchedule"))
    assert format_taint(TaintSpec("a", None, "NoSchedule")) == "a:NoSchedule"


def test_merge_keeps_base_and_adds_unmatched():
    merged = merge_taints([TaintSpec("a", "1")], [TaintSpec("a", "2"), TaintSpec("b")])
    assert [(t.key, t.value) for t in merged] == [("a", "1"), ("b", None)]


# upstream: pkg/scheduling/hostportusage_test.go
def test_host_port_conflicts():
    u = HostPortUsage()
    u.add("default/a", [HostPort("0.0.0.0", 8080, "TCP")])
    assert u.conflicts("default/b", [HostPort("10.0.0.1", 8080, "TCP")]) is not None
    assert u.conflicts("default/b", [HostPort("10.0.0.1", 8080, "UDP")]) is None
    assert u.conflicts("default/b", [HostPort("10.0.0.1", 8081, "TCP")]) is None
    assert u.conflicts("default/a", [HostPort("0.0.0.0", 8080, "TCP")]) is None  # same pod never conflicts
    v = HostPortUsage()
    v.add("default/a", [HostPort("10.0.0.1", 80, "TCP")])
    assert v.conflicts("default/b", [HostPort("10.0.0.2", 80, "TCP")]) is None
    assert v.conflicts("default/b", [HostPort("::", 80, "TCP")]) is not None
