"""Ported from pkg/controllers/provisioning/scheduling/topology_test.go (Karpenter core v1.14).

End-to-end through Provisioner.schedule -> FakeCloudProvider.create -> Node -> binding, like
upstream's ExpectProvisioned; pods left pending stay in the cluster and are retried by later
rounds (Provisioner.Schedule lists every pending pod). ``skew`` mirrors ExpectSkew.
Skipped: DefaultConstraints, volume cases, "should not spread an invalid label selector" (skipped
upstream on k8s >= 1.24; covered in test_topology_unit.py).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from karpy.api.builders import make_node, make_nodepool, make_pod, pod_affinity_term, topology_spread
from karpy.api.meta import LabelSelector, LabelSelectorRequirement
from karpy.cloudprovider.fake import FakeCloudProvider, instance_types_assorted
from karpy.provisioning.provisioner import Provisioner
from karpy.provisioning.topology import ignored_for_topology
from karpy.provisioning.topologygroup import compile_selector
from karpy.scheduling.labels import LABEL_ARCH, LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_INSTANCE_TYPE, LABEL_ZONE
from karpy.state.cluster import ClusterState

LABELS = {"test": "test"}
Z1, Z2, Z3 = "test-zone-1", "test-zone-2", "test-zone-3"


class Env:
    """A tiny stand-in for upstream's envtest + ExpectProvisioned."""

    def __init__(self, instance_types: Any = None, preference_policy: str = "Respect") -> None:
        self.cp = FakeCloudProvider(instance_types)
        self.policy = preference_policy
        self.nodes: list[Any] = []
        self.pods: dict[str, Any] = {}
        self.seq = 0

    def pods_of(self, count: int, **kwargs: Any) -> list[Any]:
        out = []
        for _ in range(count):
            self.seq += 1
            out.append(make_pod(f"pod-{self.seq:04d}", **kwargs))
        return out

    def pod(self, **kwargs: Any) -> Any:
        return self.pods_of(1, **kwargs)[0]

    def apply(self, *objs: Any) -> None:
        for o in objs:
            if o.kind == "Node":
                self.nodes.append(o)
            else:
                self.pods[o.key] = o

    def provision(self, nodepools: list[Any], *pods: Any) -> Any:
        for p in pods:
            self.pods[p.key] = p
        keys = {p.key for p in pods}
        cluster = ClusterState.from_objects(nodes=self.nodes, pods=list(self.pods.values()))
        prov = Provisioner(self.cp, preference_policy=self.policy)
        results = prov.schedule(list(self.pods.values()), nodepools, cluster)
        for nc in results.new_nodeclaims:
            created = self.cp.create(prov.to_nodeclaim(nc))
            name = f"node-{len(self.nodes):04d}"
            labels = {k: v for k, v in created.metadata.labels.items() if k != LABEL_HOSTNAME}
            node = make_node(name, labels=labels, taints=list(created.spec.taints),
                             capacity={k: str(v) for k, v in created.status.capacity.items()},
                             allocatable={k: str(v) for k, v in created.status.allocatable.items()})
            self.nodes.append(node)
            for p in nc.pods:
                if p.key in keys:
                    self.pods[p.key].spec.node_name = name
        for en in results.existing_nodes:
            for p in en.pods:
                if p.key in keys:
                    self.pods[p.key].spec.node_name = en.state_node.node.metadata.name
        return results

    def scheduled(self, pod: Any) -> Any:
        node_name = self.pods[pod.key].spec.node_name
        assert node_name, f"{pod.key} not scheduled"
        return next(n for n in self.nodes if n.metadata.name == node_name)

    def not_scheduled(self, pod: Any) -> None:
        assert not self.pods[pod.key].spec.node_name

    def delete(self, pod: Any) -> None:
        del self.pods[pod.key]

    def delete_all_unscheduled(self) -> None:
        """ExpectDeleteAllUnscheduledPods."""
        for key in [k for k, p in self.pods.items() if not p.spec.node_name]:
            del self.pods[key]

    def skew(self, tsc: Any, namespace: str | None = "default") -> list[int]:
        """ExpectSkew: counts per domain of the pods the constraint's selector lists
        (``namespace=None``: all namespaces, as upstream's empty namespace)."""
        selector = compile_selector(tsc.label_selector, nil_matches=True)
        nodes = {n.metadata.name: n for n in self.nodes}
        counts: Counter[str] = Counter()
        for p in self.pods.values():
            if (namespace is not None and p.metadata.namespace != namespace) or not selector.matches(p.metadata.labels):
                continue
            if ignored_for_topology(p):
                continue
            node = nodes.get(p.spec.node_name)
            if node is None:
                continue
            if tsc.topology_key == LABEL_HOSTNAME:
                counts[node.metadata.name] += 1
            elif tsc.topology_key in node.metadata.labels:
                counts[node.metadata.labels[tsc.topology_key]] += 1
        return sorted(counts.values())


def default_pool(**kw: Any) -> Any:
    """The file's BeforeEach NodePool: capacity-type Exists."""
    reqs = kw.pop("requirements", [(LABEL_CAPACITY_TYPE, "Exists")])
    return make_nodepool(kw.pop("name", "default"), requirements=reqs, **kw)


def zones(*z: str) -> list[Any]:
    return [(LABEL_ZONE, "In", list(z))]


def tsc(key: str = LABEL_ZONE, max_skew: int = 1, labels: Any = LABELS, **kw: Any) -> Any:
    return topology_spread(key, labels, max_skew=max_skew, **kw)


RR = {"cpu": "1.1"}


@pytest.fixture
def env() -> Env:
    return Env()


# --- top level ---------------------------------------------------------------------------------
# upstream: topology_test.go "should ignore unknown topology keys"
def test_should_ignore_unknown_topology_keys(env: Env) -> None:
    a = env.pod(labels=LABELS, topology_spread_constraints=[tsc("unknown")])
    b = env.pod()
    env.provision([default_pool()], a, b)
    env.not_scheduled(a)
    env.scheduled(b)


# upstream: topology_test.go "should not spread when a nil label selector is defined"
def test_should_not_spread_when_a_nil_label_selector_is_defined(env: Env) -> None:
    t = tsc(labels=None)
    env.provision([default_pool()], *env.pods_of(2, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [2]


# --- Zonal -------------------------------------------------------------------------------------
# upstream: topology_test.go Zonal "should balance pods across zones (match labels)"
def test_zonal_should_balance_pods_across_zones_match_labels(env: Env) -> None:
    t = tsc()
    env.provision([default_pool()], *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 1, 2]


# upstream: topology_test.go Zonal "should balance pods across zones (match expressions)"
def test_zonal_should_balance_pods_across_zones_match_expressions(env: Env) -> None:
    sel = LabelSelector(match_expressions=[LabelSelectorRequirement(key="test", operator="In", values=["test"])])
    t = topology_spread(LABEL_ZONE, None, label_selector=sel)
    env.provision([default_pool()], *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 1, 2]


# upstream: topology_test.go Zonal "should respect NodePool zonal constraints"
def test_zonal_should_respect_nodepool_zonal_constraints(env: Env) -> None:
    t = tsc()
    env.provision([default_pool(requirements=zones(Z1, Z2, Z3))],
                  *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 1, 2]


# upstream: topology_test.go Zonal "should respect NodePool zonal constraints (subset) with requirements"
def test_zonal_subset_with_requirements(env: Env) -> None:
    t = tsc()
    env.provision([default_pool(requirements=zones(Z1, Z2))],
                  *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [2, 2]


# upstream: topology_test.go Zonal "should respect NodePool zonal constraints (subset) with labels"
def test_zonal_subset_with_labels(env: Env) -> None:
    t = tsc()
    env.provision([default_pool(labels={LABEL_ZONE: Z1})],
                  *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [4]


# upstream: topology_test.go Zonal "should respect NodePool zonal constraints (subset) with requirements and labels"
def test_zonal_subset_with_requirements_and_labels(env: Env) -> None:
    t = tsc()
    env.provision([default_pool(requirements=zones(Z1, Z2), labels={LABEL_ZONE: Z1})],
                  *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [4]


# upstream: topology_test.go Zonal "should respect NodePool zonal constraints (subset) with labels across NodePools"
def test_zonal_subset_with_labels_across_nodepools(env: Env) -> None:
    t = tsc()
    np1 = default_pool(requirements=zones(Z1, Z2), labels={LABEL_ZONE: Z1})
    np2 = make_nodepool("second", labels={LABEL_ZONE: Z2})
    env.provision([np1, np2], *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [2, 2]


# upstream: topology_test.go Zonal "should respect NodePool zonal constraints (existing pod)"
def test_zonal_existing_pod(env: Env) -> None:
    first = env.pod(labels=LABELS, requests=RR, node_selector={LABEL_ZONE: Z3})
    env.provision([default_pool()], first)
    env.scheduled(first)
    t = tsc()
    env.provision([default_pool(requirements=zones(Z1, Z2))],
                  *env.pods_of(6, labels=LABELS, requests=RR, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 2, 2]


# upstream: topology_test.go Zonal "should schedule to the non-minimum domain if its all that's available"
def test_zonal_non_minimum_domain_if_all_available(env: Env) -> None:
    t = tsc(max_skew=5)
    env.provision([default_pool(requirements=zones(Z1))], env.pod(labels=LABELS, requests=RR, topology_spread_constraints=[t]))
    assert env.skew(t) == [1]
    env.provision([default_pool(requirements=zones(Z2))], env.pod(labels=LABELS, requests=RR, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 1]
    env.provision([default_pool(requirements=zones(Z3))],
                  *env.pods_of(10, labels=LABELS, requests=RR, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 1, 6]


# upstream: topology_test.go Zonal "should only schedule to minimum domains if already violating max skew"
def test_zonal_only_minimum_domains_if_violating(env: Env) -> None:
    t = tsc()
    pods = env.pods_of(9, labels=LABELS, requests=RR, topology_spread_constraints=[t])
    env.provision([default_pool()], *pods)
    assert env.skew(t) == [3, 3, 3]
    for p in pods:
        if env.scheduled(p).metadata.labels[LABEL_ZONE] != Z1:
            env.delete(p)
    assert env.skew(t) == [3]
    env.provision([default_pool()], *env.pods_of(3, labels=LABELS, requests=RR, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 2, 3]


# upstream: topology_test.go Zonal "should not violate max-skew when unsat = do not schedule"
def test_zonal_not_violate_max_skew_do_not_schedule(env: Env) -> None:
    t = tsc()
    env.provision([default_pool(requirements=zones(Z1))], env.pod(labels=LABELS, requests=RR, topology_spread_constraints=[t]))
    assert env.skew(t) == [1]
    env.provision([default_pool(requirements=zones(Z2, Z3))],
                  *env.pods_of(10, labels=LABELS, requests=RR, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 2, 2]


# upstream: topology_test.go Zonal "should not violate max-skew when unsat = do not schedule (discover domains)"
def test_zonal_not_violate_max_skew_discover_domains(env: Env) -> None:
    t = tsc()
    env.provision([default_pool(requirements=zones(Z1))], env.pod(labels=LABELS, requests=RR))
    env.provision([default_pool(requirements=zones(Z2, Z3))],
                  *env.pods_of(10, labels=LABELS, requests=RR, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 2, 2]


def _count_only_running_case(env: Env, key: str, first: dict[str, str], second: dict[str, str]) -> Any:
    n1 = make_node("first", labels=first)
    n2 = make_node("second", labels=second)
    n3 = make_node("third")
    env.apply(n1, n2, n3)
    t = tsc(key)
    terminating = env.pod(labels=LABELS, unschedulable=False)
    terminating.metadata.deletion_timestamp = "2030-01-01T00:00:00Z"
    env.provision(
        [default_pool()],
        env.pod(node_name="first", unschedulable=False),
        env.pod(labels=LABELS, unschedulable=False),
        env.pod(labels=LABELS, node_name="third", unschedulable=False),
        env.pod(namespace="wrong", labels=LABELS, node_name="first", unschedulable=False),
        terminating,
        env.pod(labels=LABELS, node_name="first", phase="Failed", unschedulable=False),
        env.pod(labels=LABELS, node_name="first", phase="Succeeded", unschedulable=False),
        env.pod(labels=LABELS, node_name="first", unschedulable=False),
        env.pod(labels=LABELS, node_name="first", unschedulable=False),
        env.pod(labels=LABELS, node_name="second", unschedulable=False),
        env.pod(labels=LABELS, topology_spread_constraints=[t]),
        env.pod(labels=LABELS, topology_spread_constraints=[t]),
    )
    return t


# upstream: topology_test.go Zonal "should only count running/scheduled pods with matching labels scheduled to nodes with a corresponding domain"
def test_zonal_only_count_running_scheduled_pods(env: Env) -> None:
    t = _count_only_running_case(env, LABEL_ZONE, {LABEL_ZONE: Z1}, {LABEL_ZONE: Z2})
    assert env.skew(t) == [1, 2, 2]


# upstream: topology_test.go Zonal "should match all pods when labelSelector is not specified"
def test_zonal_match_all_pods_without_label_selector(env: Env) -> None:
    env.provision([default_pool()], env.pod())
    assert env.skew(tsc(labels=None)) == [1]


# upstream: topology_test.go Zonal "should handle interdependent selectors"
def test_zonal_interdependent_selectors(env: Env) -> None:
    t = tsc(LABEL_HOSTNAME)
    pods = env.pods_of(5, topology_spread_constraints=[t])
    env.provision([default_pool()], *pods)
    assert len({env.scheduled(p).metadata.name for p in pods}) == 1


# upstream: topology_test.go Zonal "should respect minDomains constraints"
def test_zonal_min_domains(env: Env) -> None:
    t = tsc(min_domains=3)
    env.provision([default_pool(requirements=zones(Z1, Z2))],
                  *env.pods_of(3, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 1]


# upstream: topology_test.go Zonal "satisfied minDomains constraints (equal) should allow expected pod scheduling"
def test_zonal_min_domains_equal(env: Env) -> None:
    t = tsc(min_domains=3)
    env.provision([default_pool(requirements=zones(Z1, Z2, Z3))],
                  *env.pods_of(11, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [3, 4, 4]


# upstream: topology_test.go Zonal "satisfied minDomains constraints (greater than minimum) should allow expected pod scheduling"
def test_zonal_min_domains_greater(env: Env) -> None:
    t = tsc(min_domains=2)
    env.provision([default_pool(requirements=zones(Z1, Z2, Z3))],
                  *env.pods_of(11, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [3, 4, 4]


# --- Hostname ----------------------------------------------------------------------------------
# upstream: topology_test.go Hostname "should balance pods across nodes"
def test_hostname_balance_pods_across_nodes(env: Env) -> None:
    t = tsc(LABEL_HOSTNAME)
    env.provision([default_pool()], *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 1, 1, 1]


# upstream: topology_test.go Hostname "should balance pods on the same hostname up to maxskew"
def test_hostname_same_hostname_up_to_maxskew(env: Env) -> None:
    t = tsc(LABEL_HOSTNAME, max_skew=4)
    env.provision([default_pool()], *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [4]


def _spread_app(env: Env, app: str, arch: str | None = None) -> Any:
    kw: dict[str, Any] = {}
    if arch:
        kw["node_requirements"] = [(LABEL_ARCH, "In", [arch])]
    return env.pod(labels={"app": app}, topology_spread_constraints=[tsc(LABEL_HOSTNAME, labels={"app": app})], **kw)


# upstream: topology_test.go Hostname "balance multiple deployments with hostname topology spread"
def test_hostname_balance_multiple_deployments(env: Env) -> None:
    pods = [_spread_app(env, "app1"), _spread_app(env, "app1"), _spread_app(env, "app2"), _spread_app(env, "app2")]
    env.provision([default_pool()], *pods)
    for p in pods:
        env.scheduled(p)
    assert len(env.nodes) == 2


# upstream: topology_test.go Hostname "balance multiple deployments with hostname topology spread & varying arch"
def test_hostname_balance_multiple_deployments_varying_arch(env: Env) -> None:
    pods = [_spread_app(env, "app1", "amd64"), _spread_app(env, "app1", "amd64"),
            _spread_app(env, "app2", "arm64"), _spread_app(env, "app2", "arm64")]
    env.provision([default_pool()], *pods)
    for p in pods:
        env.scheduled(p)
    assert len(env.nodes) == 4


# --- CapacityType ------------------------------------------------------------------------------
# upstream: topology_test.go CapacityType "should balance pods across capacity types"
def test_capacity_type_balance(env: Env) -> None:
    t = tsc(LABEL_CAPACITY_TYPE)
    env.provision([default_pool()], *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [2, 2]


# upstream: topology_test.go CapacityType "should respect NodePool capacity type constraints"
def test_capacity_type_respect_nodepool_constraints(env: Env) -> None:
    t = tsc(LABEL_CAPACITY_TYPE)
    env.provision([default_pool(requirements=[(LABEL_CAPACITY_TYPE, "In", ["spot", "on-demand"])])],
                  *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [2, 2]


# upstream: topology_test.go CapacityType "should not violate max-skew when unsat = do not schedule (capacity type)"
def test_capacity_type_not_violate_max_skew(env: Env) -> None:
    t = tsc(LABEL_CAPACITY_TYPE)
    env.provision([default_pool(requirements=[(LABEL_CAPACITY_TYPE, "In", ["spot"])])],
                  env.pod(labels=LABELS, requests=RR, topology_spread_constraints=[t]))
    assert env.skew(t) == [1]
    env.provision([default_pool(requirements=[(LABEL_CAPACITY_TYPE, "In", ["on-demand"])])],
                  *env.pods_of(5, labels=LABELS, requests=RR, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 2]


# upstream: topology_test.go CapacityType "should violate max-skew when unsat = schedule anyway (capacity type)"
def test_capacity_type_schedule_anyway_violates(env: Env) -> None:
    t = tsc(LABEL_CAPACITY_TYPE, when_unsatisfiable="ScheduleAnyway")
    env.provision([default_pool(requirements=[(LABEL_CAPACITY_TYPE, "In", ["spot"])])],
                  env.pod(labels=LABELS, requests=RR, topology_spread_constraints=[t]))
    assert env.skew(t) == [1]
    env.provision([default_pool(requirements=[(LABEL_CAPACITY_TYPE, "In", ["on-demand"])])],
                  *env.pods_of(5, labels=LABELS, requests=RR, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 5]


# upstream: topology_test.go CapacityType "should only count running/scheduled pods with matching labels scheduled to nodes with a corresponding domain"
def test_capacity_type_only_count_running_scheduled_pods(env: Env) -> None:
    t = _count_only_running_case(env, LABEL_CAPACITY_TYPE, {LABEL_CAPACITY_TYPE: "spot"},
                                 {LABEL_CAPACITY_TYPE: "on-demand"})
    assert env.skew(t) == [2, 3]


# upstream: topology_test.go CapacityType "should match all pods when labelSelector is not specified"
def test_capacity_type_match_all_without_selector(env: Env) -> None:
    env.provision([default_pool()], env.pod())
    assert env.skew(tsc(LABEL_CAPACITY_TYPE, labels=None)) == [1]


# upstream: topology_test.go CapacityType "should handle interdependent selectors"
def test_capacity_type_interdependent_selectors(env: Env) -> None:
    pods = env.pods_of(5, topology_spread_constraints=[tsc(LABEL_HOSTNAME)])
    env.provision([default_pool()], *pods)
    assert len({env.scheduled(p).metadata.name for p in pods}) == 1


# upstream: topology_test.go CapacityType "should balance pods across capacity-types (node required affinity constrained)"
def test_capacity_type_node_required_affinity_constrained(env: Env) -> None:
    first = env.pod(labels=LABELS, node_requirements=[(LABEL_ZONE, "In", [Z1]), (LABEL_CAPACITY_TYPE, "In", ["on-demand"])])
    env.provision([default_pool()], first)
    env.scheduled(first)
    t = tsc(LABEL_CAPACITY_TYPE)
    env.provision([default_pool()], *env.pods_of(
        5, labels=LABELS, topology_spread_constraints=[t],
        node_requirements=[(LABEL_ZONE, "In", [Z2]), (LABEL_CAPACITY_TYPE, "In", ["spot"])]))
    assert env.skew(t) == [1, 5]


# upstream: topology_test.go CapacityType "should balance pods across capacity-types (no constraints)"
def test_capacity_type_no_constraints(env: Env) -> None:
    first = env.pod(labels=LABELS, node_selector={LABEL_INSTANCE_TYPE: "single-pod-instance-type"},
                    node_requirements=[(LABEL_CAPACITY_TYPE, "In", ["on-demand"])])
    env.provision([default_pool()], first)
    env.scheduled(first)
    t = tsc(LABEL_CAPACITY_TYPE)
    env.provision([default_pool(requirements=[(LABEL_CAPACITY_TYPE, "In", ["spot"])])],
                  *env.pods_of(5, labels=LABELS, requests={"cpu": "2"}, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 2]


# upstream: topology_test.go CapacityType "should balance pods across arch (no constraints)"
def test_arch_no_constraints(env: Env) -> None:
    first = env.pod(labels=LABELS, node_selector={LABEL_INSTANCE_TYPE: "single-pod-instance-type"},
                    node_requirements=[(LABEL_ARCH, "In", ["amd64"])])
    env.provision([default_pool()], first)
    env.scheduled(first)
    t = tsc(LABEL_ARCH)
    env.provision([default_pool(requirements=[(LABEL_ARCH, "In", ["arm64"])])],
                  *env.pods_of(5, labels=LABELS, requests={"cpu": "2"}, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 2]


# --- Combined Hostname and Zonal ---------------------------------------------------------------
# upstream: topology_test.go Combined Hostname and Zonal "should spread pods while respecting both constraints (hostname and zonal)"
def test_combined_hostname_and_zonal(env: Env) -> None:
    tz, th = tsc(LABEL_ZONE), tsc(LABEL_HOSTNAME, max_skew=3)
    for n, expected in ((2, [1, 1]), (3, [1, 2, 2]), (5, [3, 3, 4]), (11, [7, 7, 7])):
        env.provision([default_pool()], *env.pods_of(n, labels=LABELS, topology_spread_constraints=[tz, th]))
        assert env.skew(tz) == expected
        assert max(env.skew(th)) <= 3


# upstream: topology_test.go Combined Hostname and Zonal "should balance pods across NodePool requirements"
def test_combined_balance_across_nodepool_requirements(env: Env) -> None:
    spot = make_nodepool("spot", requirements=[(LABEL_CAPACITY_TYPE, "In", ["spot"]),
                                               ("capacity.spread.4-1", "In", ["2", "3", "4", "5"])])
    od = make_nodepool("od", requirements=[(LABEL_CAPACITY_TYPE, "In", ["on-demand"]),
                                           ("capacity.spread.4-1", "In", ["1"])])
    t = tsc("capacity.spread.4-1")
    pods = env.pods_of(20, labels=LABELS, topology_spread_constraints=[t])
    env.provision([spot, od], *pods)
    for p in pods:
        env.scheduled(p)
    assert env.skew(t) == [4, 4, 4, 4, 4]
    assert env.skew(tsc(LABEL_CAPACITY_TYPE)) == [4, 16]


# upstream: topology_test.go Combined Hostname and Zonal "should spread pods while respecting both constraints" (:1052)
def test_combined_zonal_with_disabled_nodepool(env: Env) -> None:
    tz, th = tsc(LABEL_ZONE), tsc(LABEL_HOSTNAME, when_unsatisfiable="ScheduleAnyway")
    np_a = default_pool(requirements=zones(Z1, Z2))
    np_b = make_nodepool("b", requirements=zones(Z3), limits={"cpu": "0"})
    env.provision([np_a, np_b], *env.pods_of(10, labels=LABELS, topology_spread_constraints=[tz, th]))
    assert env.skew(tz) == [1, 1]
    assert env.skew(th) == [1, 1]


# upstream: topology_test.go Combined Hostname and Zonal "should spread pods while respecting both constraints" (:1093)
def test_combined_capacity_type_and_hostname(env: Env) -> None:
    tc, th = tsc(LABEL_CAPACITY_TYPE), tsc(LABEL_HOSTNAME, max_skew=3)
    for n, expected in ((2, [1, 1]), (3, [2, 3]), (5, [5, 5]), (11, [10, 11])):
        env.provision([default_pool()], *env.pods_of(n, labels=LABELS, topology_spread_constraints=[tc, th]))
        assert env.skew(tc) == expected
        assert max(env.skew(th)) <= 3


# --- MatchLabelKeys ----------------------------------------------------------------------------
# upstream: topology_test.go MatchLabelKeys "should support matchLabelKeys"
def test_match_label_keys(env: Env) -> None:
    t = tsc(LABEL_HOSTNAME, match_label_keys=["test-label"])
    pods = env.pods_of(2, labels={**LABELS, "test-label": "value-a"}, topology_spread_constraints=[t])
    pods += env.pods_of(2, labels={**LABELS, "test-label": "value-b"}, topology_spread_constraints=[t])
    env.provision([default_pool()], *pods)
    assert env.skew(t) == [2, 2]


# upstream: topology_test.go MatchLabelKeys "should ignore unknown labels specified in matchLabelKeys"
def test_match_label_keys_unknown_ignored(env: Env) -> None:
    t = tsc(LABEL_HOSTNAME, match_label_keys=["test-label"])
    env.provision([default_pool()], *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [1, 1, 1, 1]


# --- NodeTaintsPolicy --------------------------------------------------------------------------
def _tainted_existing_nodes(env: Env) -> None:
    taint = [("taintname", "taintvalue", "NoSchedule")]
    env.apply(make_node("n1", labels={"fake-label": "foo"}, taints=taint, allocatable={"cpu": "100m"}),
              make_node("n2", labels={"fake-label": "bar"}, taints=taint, allocatable={"cpu": "100m"}))


# upstream: topology_test.go NodeTaintsPolicy "should balance pods across a label (NodeTaintsPolicy=ignore)"
def test_node_taints_policy_ignore(env: Env) -> None:
    _tainted_existing_nodes(env)
    t = tsc("fake-label", node_taints_policy="Ignore")
    env.provision([default_pool(labels={"fake-label": "baz"})],
                  *env.pods_of(5, labels=LABELS, requests={"cpu": "1"}, topology_spread_constraints=[t]))
    assert env.skew(t) == [1]


# upstream: topology_test.go NodeTaintsPolicy "should balance pods across a label (NodeTaintsPolicy=honor)"
def test_node_taints_policy_honor(env: Env) -> None:
    _tainted_existing_nodes(env)
    t = tsc("fake-label", node_taints_policy="Honor")
    env.provision([default_pool(labels={"fake-label": "baz"})],
                  *env.pods_of(5, labels=LABELS, requests={"cpu": "1"}, topology_spread_constraints=[t]))
    assert env.skew(t) == [5]


def _tainted_pool_pair() -> list[Any]:
    base = default_pool(requirements=[(LABEL_CAPACITY_TYPE, "Exists"), ("fake-label", "In", ["foo"])])
    tainted = make_nodepool("tainted", taints=[("taint-key", "taint-value", "NoSchedule")],
                            requirements=[(LABEL_CAPACITY_TYPE, "Exists"), ("fake-label", "In", ["bar"])])
    return [base, tainted]


# upstream: topology_test.go NodeTaintsPolicy "should balance pods across a label when discovered from the nodepool (NodeTaintsPolicy=ignore)"
def test_node_taints_policy_ignore_discovered_from_nodepool(env: Env) -> None:
    t = tsc("fake-label", node_taints_policy="Ignore")
    env.provision(_tainted_pool_pair(), *env.pods_of(2, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [1]


# upstream: topology_test.go NodeTaintsPolicy "should balance pods across a label when discovered from the nodepool (NodeTaintsPolicy=honor)"
def test_node_taints_policy_honor_discovered_from_nodepool(env: Env) -> None:
    t = tsc("fake-label", node_taints_policy="Honor")
    env.provision(_tainted_pool_pair(), *env.pods_of(2, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [2]


# upstream: topology_test.go NodeTaintsPolicy "should balance pods across a label when mutually exclusive NodePools (by taints) share domains (NodeTaintsPolicy=honor)"
def test_node_taints_policy_honor_mutually_exclusive_pools(env: Env) -> None:
    pools = [make_nodepool(f"np-{i}", taints=[("taint-key", f"nodepool-{i}", "NoSchedule")],
                           requirements=[(LABEL_CAPACITY_TYPE, "Exists"), ("fake-label", "In", domains)])
             for i, domains in enumerate((["foo", "bar"], ["foo", "baz"]))]
    t = tsc("fake-label", node_taints_policy="Honor")
    pods = []
    for i in range(2):
        pods += env.pods_of((i + 1) * 2, labels=LABELS, topology_spread_constraints=[t],
                            tolerations=[{"key": "taint-key", "effect": "NoSchedule", "value": f"nodepool-{i}"}])
    env.provision(pools, *pods)
    assert env.skew(t) == [1, 2, 3]


# --- NodeAffinityPolicy ------------------------------------------------------------------------
def _affinity_policy_case(env: Env, policy: str) -> Any:
    env.apply(make_node("n1", labels={"fake-label": "foo", "selector": "mismatch"}, allocatable={"cpu": "100m"}),
              make_node("n2", labels={"fake-label": "bar", "selector": "mismatch"}, allocatable={"cpu": "100m"}))
    t = tsc("fake-label", node_affinity_policy=policy)
    env.provision([default_pool(labels={"fake-label": "baz", "selector": "value"})],
                  *env.pods_of(5, labels=LABELS, requests={"cpu": "1"}, node_selector={"selector": "value"},
                               topology_spread_constraints=[t]))
    return t


# upstream: topology_test.go NodeAffinityPolicy "should balance pods across a label (NodeAffinityPolicy=ignore)"
def test_node_affinity_policy_ignore(env: Env) -> None:
    assert env.skew(_affinity_policy_case(env, "Ignore")) == [1]


# upstream: topology_test.go NodeAffinityPolicy "should balance pods across a label (NodeAffinityPolicy=honor)"
def test_node_affinity_policy_honor(env: Env) -> None:
    assert env.skew(_affinity_policy_case(env, "Honor")) == [5]


# --- Combined Zonal and Capacity Type ----------------------------------------------------------
# upstream: topology_test.go Combined Zonal and Capacity Type Topology "should spread pods while respecting both constraints"
def test_combined_zonal_and_capacity_type(env: Env) -> None:
    tc, tz = tsc(LABEL_CAPACITY_TYPE), tsc(LABEL_ZONE)
    for n, (mc, mz) in ((2, (1, 1)), (3, (3, 2)), (3, (5, 4)), (11, (11, 7))):
        env.provision([default_pool()], *env.pods_of(n, labels=LABELS, topology_spread_constraints=[tc, tz]))
        assert max(env.skew(tc)) <= mc
        assert max(env.skew(tz)) <= mz


# upstream: topology_test.go Combined Hostname, Zonal, and Capacity Type Topology "should spread pods while respecting all constraints"
def test_combined_hostname_zonal_capacity_type() -> None:
    env = Env(instance_types_assorted())
    tc, tz, th = tsc(LABEL_CAPACITY_TYPE), tsc(LABEL_ZONE, max_skew=2), tsc(LABEL_HOSTNAME, max_skew=3)
    for i in range(1, 15):
        pods = env.pods_of(i, labels=LABELS, topology_spread_constraints=[tc, tz, th])
        env.provision([default_pool()], *pods)
        for t, limit in ((tc, 1), (tz, 2), (th, 3)):
            s = env.skew(t)
            assert max(s) - min(s) <= limit
        for p in pods:
            env.scheduled(p)


# --- Combined Zonal Topology and Node Affinity -------------------------------------------------
# upstream: topology_test.go Combined Zonal Topology and Node Affinity "should limit spread options by nodeSelector"
def test_zonal_limited_by_node_selector(env: Env) -> None:
    t = tsc()
    env.provision([default_pool()],
                  *env.pods_of(5, labels=LABELS, topology_spread_constraints=[t], node_selector={LABEL_ZONE: Z1}),
                  *env.pods_of(10, labels=LABELS, topology_spread_constraints=[t], node_selector={LABEL_ZONE: Z2}))
    assert env.skew(t) == [5, 10]


# upstream: topology_test.go Combined Zonal Topology and Node Affinity "should limit spread options by node requirements"
def test_zonal_limited_by_node_requirements(env: Env) -> None:
    t = tsc()
    env.provision([default_pool()], *env.pods_of(10, labels=LABELS, topology_spread_constraints=[t],
                                                 node_requirements=[(LABEL_ZONE, "In", [Z1, Z2])]))
    assert env.skew(t) == [5, 5]


# upstream: topology_test.go Combined Zonal Topology and Node Affinity "should limit spread options by required node affinity"
def test_zonal_limited_by_required_node_affinity(env: Env) -> None:
    t = tsc()
    env.provision([default_pool()], *env.pods_of(6, labels=LABELS, topology_spread_constraints=[t],
                                                 node_requirements=[(LABEL_ZONE, "In", [Z1, Z2])]))
    assert env.skew(t) == [3, 3]
    pool = default_pool(requirements=zones(Z1, Z2, Z3))
    env.provision([pool], env.pod(labels=LABELS, topology_spread_constraints=[t],
                                  node_requirements=[(LABEL_ZONE, "In", [Z2, Z3])]))
    assert env.skew(t) == [1, 3, 3]
    env.provision([pool], *env.pods_of(5, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [4, 4, 4]


# upstream: topology_test.go Combined Zonal Topology and Node Affinity "should not limit spread options by preferred node affinity"
def test_zonal_not_limited_by_preferred_node_affinity(env: Env) -> None:
    t = tsc()
    env.provision([default_pool()], *env.pods_of(6, labels=LABELS, topology_spread_constraints=[t],
                                                 node_preferences=[(LABEL_ZONE, "In", [Z1, Z2])]))
    assert env.skew(t) == [2, 2, 2]


# --- Combined Capacity Type Topology and Node Affinity -----------------------------------------
# upstream: topology_test.go Combined Capacity Type Topology and Node Affinity "should limit spread options by nodeSelector"
def test_capacity_type_limited_by_node_selector(env: Env) -> None:
    t = tsc(LABEL_CAPACITY_TYPE, when_unsatisfiable="ScheduleAnyway")
    env.provision([default_pool()],
                  *env.pods_of(5, labels=LABELS, topology_spread_constraints=[t], node_selector={LABEL_CAPACITY_TYPE: "spot"}),
                  *env.pods_of(5, labels=LABELS, topology_spread_constraints=[t], node_selector={LABEL_CAPACITY_TYPE: "on-demand"}))
    assert env.skew(t) == [5, 5]


# upstream: topology_test.go Combined Capacity Type Topology and Node Affinity "should limit spread options by node affinity (capacity type)"
def test_capacity_type_limited_by_node_affinity(env: Env) -> None:
    t = tsc(LABEL_CAPACITY_TYPE)
    env.provision([default_pool()], *env.pods_of(3, labels=LABELS, topology_spread_constraints=[t],
                                                 node_requirements=[(LABEL_CAPACITY_TYPE, "In", ["spot"])]))
    assert env.skew(t) == [3]
    env.provision([default_pool()], env.pod(labels=LABELS, topology_spread_constraints=[t],
                                            node_requirements=[(LABEL_CAPACITY_TYPE, "In", ["on-demand", "spot"])]))
    assert env.skew(t) == [1, 3]
    env.provision([default_pool()], *env.pods_of(5, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [4, 5]


# --- Pod Affinity/Anti-Affinity ----------------------------------------------------------------
AFF = {"security": "s2"}


def zone_of(node: Any) -> str:
    return node.metadata.labels[LABEL_ZONE]


def any_zone() -> Any:
    return topology_spread(LABEL_ZONE, None)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should schedule a pod with empty pod affinity and anti-affinity"
def test_empty_pod_affinity_and_anti_affinity(env: Env) -> None:
    pod = env.pod(pod_affinity=[], pod_anti_affinity=[])
    env.provision([default_pool()], pod)
    env.scheduled(pod)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should respect pod affinity (hostname)"
def test_pod_affinity_hostname(env: Env) -> None:
    aff1 = env.pod(labels=AFF)
    aff2 = env.pod(pod_affinity=[pod_affinity_term(AFF, LABEL_HOSTNAME)])
    pods = env.pods_of(10, labels=LABELS, topology_spread_constraints=[tsc(LABEL_HOSTNAME)]) + [aff1, aff2]
    env.provision([default_pool()], *pods)
    assert env.scheduled(aff1).metadata.name == env.scheduled(aff2).metadata.name


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should respect pod affinity (arch)"
def test_pod_affinity_arch(env: Env) -> None:
    t = tsc(LABEL_HOSTNAME, labels=AFF)
    aff1 = env.pod(labels=AFF, topology_spread_constraints=[t], requests={"cpu": "2"}, node_selector={LABEL_ARCH: "arm64"})
    aff2 = env.pod(labels=AFF, topology_spread_constraints=[t], requests={"cpu": "1"},
                   pod_affinity=[pod_affinity_term(AFF, LABEL_ARCH)])
    env.provision([default_pool()], aff1, aff2)
    n1, n2 = env.scheduled(aff1), env.scheduled(aff2)
    assert n1.metadata.labels[LABEL_ARCH] == n2.metadata.labels[LABEL_ARCH]
    assert n1.metadata.name != n2.metadata.name


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should respect self pod affinity (hostname)"
def test_self_pod_affinity_hostname(env: Env) -> None:
    pods = env.pods_of(3, labels=AFF, pod_affinity=[pod_affinity_term(AFF, LABEL_HOSTNAME)])
    env.provision([default_pool()], *pods)
    assert len({env.scheduled(p).metadata.name for p in pods}) == 1


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should respect self pod affinity for first empty topology domain only (hostname)"
def test_self_pod_affinity_first_empty_domain_only_hostname(env: Env) -> None:
    def create() -> list[Any]:
        return env.pods_of(10, labels=AFF, pod_affinity=[pod_affinity_term(AFF, LABEL_HOSTNAME)])
    pods = create()
    env.provision([default_pool()], *pods)
    nodes = {env.pods[p.key].spec.node_name for p in pods if env.pods[p.key].spec.node_name}
    scheduled = sum(1 for p in pods if env.pods[p.key].spec.node_name)
    assert len(nodes) == 1
    assert scheduled == 5  # the default instance type holds 5 pods
    pods = create()
    env.provision([default_pool()], *pods)
    for p in pods:
        env.not_scheduled(p)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should respect self pod affinity for first empty topology domain only (hostname/constrained zones)"
def test_self_pod_affinity_first_empty_domain_only_constrained_zones(env: Env) -> None:
    term = pod_affinity_term(AFF, LABEL_HOSTNAME)
    env.provision([default_pool()], env.pod(labels=AFF, node_selector={LABEL_ZONE: Z1}, pod_affinity=[term]))
    pods = env.pods_of(10, labels=AFF, node_requirements=[(LABEL_ZONE, "In", [Z2, Z3])], pod_affinity=[term])
    env.provision([default_pool()], *pods)
    for p in pods:
        env.not_scheduled(p)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should respect self pod affinity (zone)"
def test_self_pod_affinity_zone(env: Env) -> None:
    pods = env.pods_of(3, labels=AFF, pod_affinity=[pod_affinity_term(AFF, LABEL_ZONE)])
    env.provision([default_pool()], *pods)
    assert len({env.scheduled(p).metadata.name for p in pods}) == 1


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should respect self pod affinity (zone w/ constraint)"
def test_self_pod_affinity_zone_with_constraint(env: Env) -> None:
    pods = env.pods_of(3, labels=AFF, pod_affinity=[pod_affinity_term(AFF, LABEL_ZONE)],
                       node_requirements=[(LABEL_ZONE, "In", [Z3])])
    env.provision([default_pool()], *pods)
    nodes = {env.scheduled(p).metadata.name for p in pods}
    assert len(nodes) == 1
    assert all(zone_of(env.scheduled(p)) == Z3 for p in pods)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should allow two nodes to be created when two pods with matching affinities have incompatible selectors"
def test_matching_affinities_incompatible_selectors(env: Env) -> None:
    aff = {"security": "s1"}
    p1 = env.pod(labels=aff, pod_affinity=[pod_affinity_term(aff, LABEL_ZONE)], node_requirements=[(LABEL_ZONE, "In", [Z2])])
    p2 = env.pod(labels=aff, pod_affinity=[pod_affinity_term(aff, LABEL_ZONE)], node_requirements=[(LABEL_ZONE, "In", [Z3])])
    env.provision([default_pool()], p1, p2)
    n1, n2 = env.scheduled(p1), env.scheduled(p2)
    assert zone_of(n1) == Z2 and zone_of(n2) == Z3
    assert n1.metadata.name != n2.metadata.name


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should allow violation of preferred pod affinity"
def test_allow_violation_of_preferred_pod_affinity(env: Env) -> None:
    aff2 = env.pod(pod_affinity_preferences=[(50, pod_affinity_term(AFF, LABEL_HOSTNAME))])
    pods = env.pods_of(10, labels=LABELS, topology_spread_constraints=[tsc(LABEL_HOSTNAME)]) + [aff2]
    env.provision([default_pool()], *pods)
    env.scheduled(aff2)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should allow violation of preferred pod anti-affinity"
def test_allow_violation_of_preferred_pod_anti_affinity(env: Env) -> None:
    aff_pods = env.pods_of(10, pod_anti_affinity_preferences=[(50, pod_affinity_term(LABELS, LABEL_ZONE))])
    pods = env.pods_of(3, labels=LABELS, topology_spread_constraints=[tsc(LABEL_ZONE)]) + aff_pods
    env.provision([default_pool()], *pods)
    for p in aff_pods:
        env.scheduled(p)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should separate nodes using simple pod anti-affinity on hostname"
def test_separate_nodes_simple_anti_affinity_hostname(env: Env) -> None:
    for _ in range(10):
        aff1 = env.pod(labels=AFF)
        aff2 = env.pod(pod_anti_affinity=[pod_affinity_term(AFF, LABEL_HOSTNAME)])
        env.provision([default_pool()], aff2, aff1)
        assert env.scheduled(aff1).metadata.name != env.scheduled(aff2).metadata.name


def _zone_pods(env: Env, **kw: Any) -> list[Any]:
    return [env.pod(requests={"cpu": "2"}, node_selector={LABEL_ZONE: z}, **kw) for z in (Z1, Z2, Z3)]


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should not violate pod anti-affinity on zone"
def test_not_violate_anti_affinity_on_zone(env: Env) -> None:
    zone_pods = _zone_pods(env, labels=AFF)
    aff = env.pod(pod_anti_affinity=[pod_affinity_term(AFF, LABEL_ZONE)])
    env.provision([default_pool()], *zone_pods, aff)
    for p in zone_pods:
        env.scheduled(p)
    env.not_scheduled(aff)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should not violate pod anti-affinity on zone (other schedules first)"
def test_not_violate_anti_affinity_on_zone_other_first(env: Env) -> None:
    pod = env.pod(labels=AFF, requests={"cpu": "2"})
    aff = env.pod(pod_anti_affinity=[pod_affinity_term(AFF, LABEL_ZONE)])
    env.provision([default_pool()], pod, aff)
    env.scheduled(pod)
    env.not_scheduled(aff)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should not violate pod anti-affinity (arch)"
def test_not_violate_anti_affinity_arch(env: Env) -> None:
    t = tsc(LABEL_HOSTNAME, labels=AFF)
    aff1 = env.pod(labels=AFF, topology_spread_constraints=[t], requests={"cpu": "2"}, node_selector={LABEL_ARCH: "arm64"})
    aff2 = env.pod(labels=AFF, topology_spread_constraints=[t], requests={"cpu": "1"},
                   pod_anti_affinity=[pod_affinity_term(AFF, LABEL_ARCH)])
    env.provision([default_pool()], aff1, aff2)
    assert env.scheduled(aff1).metadata.labels[LABEL_ARCH] != env.scheduled(aff2).metadata.labels[LABEL_ARCH]


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should violate preferred pod anti-affinity on zone (inverse)"
def test_violate_preferred_anti_affinity_on_zone_inverse(env: Env) -> None:
    zone_pods = _zone_pods(env, pod_anti_affinity_preferences=[(10, pod_affinity_term(AFF, LABEL_ZONE))])
    aff = env.pod(labels=AFF)
    env.provision([default_pool()], *zone_pods, aff)
    for p in zone_pods + [aff]:
        env.scheduled(p)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should not violate pod anti-affinity on zone (inverse)"
def test_not_violate_anti_affinity_on_zone_inverse(env: Env) -> None:
    zone_pods = _zone_pods(env, pod_anti_affinity=[pod_affinity_term(AFF, LABEL_ZONE)])
    aff = env.pod(labels=AFF)
    env.provision([default_pool()], *zone_pods, aff)
    for p in zone_pods:
        env.scheduled(p)
    env.not_scheduled(aff)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should not violate pod anti-affinity on zone (Schrödinger)"
def test_not_violate_anti_affinity_on_zone_schrodinger(env: Env) -> None:
    anywhere = env.pod(requests={"cpu": "2"}, pod_anti_affinity=[pod_affinity_term(AFF, LABEL_ZONE)])
    aff = env.pod(labels=AFF)
    env.provision([default_pool()], anywhere, aff)
    node1 = env.scheduled(anywhere)
    env.not_scheduled(aff)
    env.provision([default_pool()], aff)
    node2 = env.scheduled(aff)
    assert zone_of(node1) != zone_of(node2)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should not violate pod anti-affinity on zone (inverse w/existing nodes)"
def test_not_violate_anti_affinity_on_zone_inverse_existing_nodes(env: Env) -> None:
    zone_pods = _zone_pods(env, pod_anti_affinity=[pod_affinity_term(AFF, LABEL_ZONE)])
    env.provision([default_pool()], *zone_pods)
    for p in zone_pods:
        env.scheduled(p)
    aff = env.pod(labels=AFF)
    env.provision([default_pool()], aff)
    env.not_scheduled(aff)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should violate preferred pod anti-affinity on zone (inverse w/existing nodes)"
def test_violate_preferred_anti_affinity_on_zone_inverse_existing_nodes(env: Env) -> None:
    zone_pods = _zone_pods(env, pod_anti_affinity_preferences=[(10, pod_affinity_term(AFF, LABEL_ZONE))])
    env.provision([default_pool()], *zone_pods)
    for p in zone_pods:
        env.scheduled(p)
    aff = env.pod(labels=AFF)
    env.provision([default_pool()], aff)
    env.scheduled(aff)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should allow violation of a pod affinity preference with a conflicting required constraint"
def test_allow_violation_of_affinity_preference_with_conflicting_required(env: Env) -> None:
    constraint = tsc(LABEL_HOSTNAME)
    aff1 = env.pod(labels=AFF)
    aff_pods = env.pods_of(3, labels=LABELS, topology_spread_constraints=[constraint],
                           pod_affinity_preferences=[(50, pod_affinity_term(AFF, LABEL_HOSTNAME))])
    pods = aff_pods + [aff1]
    env.provision([default_pool()], *pods)
    for p in pods:
        env.scheduled(p)
    assert env.skew(constraint, namespace=None) == [1, 1, 1]


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should support pod anti-affinity with a zone topology"
def test_anti_affinity_zone_topology_rounds(env: Env) -> None:
    def create() -> list[Any]:
        return env.pods_of(3, labels=AFF, pod_anti_affinity=[pod_affinity_term(AFF, LABEL_ZONE)])
    for expected in ([1], [1, 1], [1, 1, 1], [1, 1, 1]):
        env.provision([default_pool()], *create())
        assert env.skew(any_zone()) == expected
        env.delete_all_unscheduled()


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should not schedule pods with affinity to a non-existent pod"
def test_no_schedule_affinity_to_nonexistent_pod(env: Env) -> None:
    pods = env.pods_of(10, pod_affinity=[pod_affinity_term(AFF, LABEL_ZONE)])
    env.provision([default_pool()], *pods)
    for p in pods:
        env.not_scheduled(p)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should support pod affinity with zone topology (unconstrained target)"
def test_pod_affinity_zone_unconstrained_target(env: Env) -> None:
    target = env.pod(labels=AFF)
    aff_pods = env.pods_of(10, pod_affinity=[pod_affinity_term(AFF, LABEL_ZONE)])
    env.provision([default_pool()], *aff_pods, target)
    for p in aff_pods:
        env.not_scheduled(p)
    assert env.skew(any_zone()) == [1]
    env.provision([default_pool()], *aff_pods)
    for p in aff_pods:
        env.scheduled(p)
    assert env.skew(any_zone()) == [11]


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should support pod affinity with zone topology (constrained target)"
def test_pod_affinity_zone_constrained_target(env: Env) -> None:
    target = env.pod(labels=AFF, node_requirements=[(LABEL_ZONE, "In", [Z1])])
    aff_pods = env.pods_of(10, pod_affinity=[pod_affinity_term(AFF, LABEL_ZONE)])
    env.provision([default_pool()], *aff_pods, target)
    assert env.skew(any_zone()) == [11]


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should handle multiple dependent affinities" (10 rounds instead of 50)
def test_multiple_dependent_affinities() -> None:
    db = {"type": "db", "spread": "spread"}
    web = {"type": "web", "spread": "spread"}
    cache = {"type": "cache", "spread": "spread"}
    ui = {"type": "ui", "spread": "spread"}
    for _ in range(10):
        env = Env()
        pods = [
            env.pod(labels=db),
            env.pod(labels=web, pod_affinity=[pod_affinity_term(db, LABEL_HOSTNAME)]),
            env.pod(labels=cache, pod_affinity=[pod_affinity_term(web, LABEL_HOSTNAME)]),
            env.pod(labels=ui, pod_affinity=[pod_affinity_term(cache, LABEL_HOSTNAME)]),
        ]
        env.provision([default_pool()], *pods)
        for p in pods:
            env.scheduled(p)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should fail to schedule pods with unsatisfiable dependencies"
def test_unsatisfiable_dependencies(env: Env) -> None:
    pod = env.pod(labels={"type": "db", "spread": "spread"},
                  pod_affinity=[pod_affinity_term({"type": "web", "spread": "spread"}, LABEL_HOSTNAME)])
    env.provision([default_pool()], pod)
    env.not_scheduled(pod)


def _namespace_case(env: Env, ns: str, **term_kw: Any) -> tuple[Any, Any]:
    aff1 = env.pod(namespace=ns, labels=AFF)
    aff2 = env.pod(pod_affinity=[pod_affinity_term(AFF, LABEL_HOSTNAME, **term_kw)])
    pods = env.pods_of(10, labels=LABELS, topology_spread_constraints=[tsc(LABEL_HOSTNAME)]) + [aff1, aff2]
    env.provision([default_pool()], *pods)
    return aff1, aff2


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should filter pod affinity topologies by namespace, no matching pods"
def test_affinity_namespace_no_matching_pods(env: Env) -> None:
    aff1, aff2 = _namespace_case(env, "other-ns-no-match")
    env.scheduled(aff1)
    env.not_scheduled(aff2)


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should filter pod affinity topologies by namespace, matching pods namespace list"
def test_affinity_namespace_list(env: Env) -> None:
    aff1, aff2 = _namespace_case(env, "other-ns-list", namespaces=["other-ns-list"])
    assert env.scheduled(aff1).metadata.name == env.scheduled(aff2).metadata.name


# upstream: topology_test.go Pod Affinity/Anti-Affinity "should filter pod affinity topologies by namespace, empty namespace selector"
def test_affinity_namespace_empty_selector(env: Env) -> None:
    aff1, aff2 = _namespace_case(env, "empty-ns-selector", namespace_selector=LabelSelector())
    assert env.scheduled(aff1).metadata.name == env.scheduled(aff2).metadata.name


# Preference policy Ignore (karpy's PREFERENCE_POLICY=Ignore, §2.8): ScheduleAnyway is not enforced
def test_ignore_policy_does_not_enforce_schedule_anyway() -> None:
    env = Env(preference_policy="Ignore")
    t = tsc(LABEL_HOSTNAME, when_unsatisfiable="ScheduleAnyway")
    env.provision([default_pool()], *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [4]
    respect = Env()
    respect.provision([default_pool()], *respect.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert respect.skew(t) == [1, 1, 1, 1]


# upstream: topology_test.go Hostname "should balance pods across nodes", in two provisioning passes:
# the second pass's pods meet the first pass's nodes as existing nodes (Topology.hostname_blocked
# rules those nodes out: one matching pod each already, maxSkew 1 over hostnames whose min is 0)
def test_hostname_balance_pods_across_existing_nodes(env: Env) -> None:
    t = tsc(LABEL_HOSTNAME)
    env.provision([default_pool()], *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    env.provision([default_pool()], *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [1] * 8


# upstream: topology_test.go Zonal "should not violate max-skew when unsat = do not schedule", in two
# passes: the first pass puts two nodes in each zone (a hostname spread besides the zonal one); the
# second pass's pods meet them as existing nodes, first fit, and keep the zones within maxSkew
def test_zonal_max_skew_over_existing_nodes(env: Env) -> None:
    t = tsc(LABEL_ZONE)
    pool = default_pool(requirements=zones(Z1, Z2, Z3))
    env.provision([pool], *env.pods_of(6, labels=LABELS, topology_spread_constraints=[t, tsc(LABEL_HOSTNAME)]))
    assert env.skew(t) == [2, 2, 2]
    env.provision([pool], *env.pods_of(4, labels=LABELS, topology_spread_constraints=[t]))
    assert env.skew(t) == [3, 3, 4]
