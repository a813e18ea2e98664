"""NewTopology's loop shares the groups of pods alike (topology.py ``Topology._build_memo`` and
``_inverse_memo``): the Topology it builds equals the one the plain loop builds -- every pod's
newForTopologies / newForAffinities / updateInverseAntiAffinity run -- in its groups (order,
domains and their insertion order, owners), its inverse groups, what each pod owns and the
version; and the memos are gone once NewTopology returns (Solve's relaxation edits specs in place).
"""

from __future__ import annotations

from typing import Any

import pytest

from karpy.api.builders import make_node, make_nodepool, make_pod, pod_affinity_term, topology_spread
from karpy.cloudprovider.fake import default_instance_types
from karpy.provisioning.topology import Topology
from karpy.scheduling.labels import LABEL_HOSTNAME, LABEL_ZONE
from karpy.state.cluster import ClusterState

WEB = {"app": "web"}
DB = {"app": "db"}


def _alike(base: Any, name: str, *, namespace: str | None = None, labels: dict[str, str] | None = None,
           node_name: str | None = None) -> Any:
    """A pod sharing ``base``'s spec object (as pods of one template do), with its own metadata;
    ``node_name`` binds it (a new spec sharing the rest, as a bind does)."""
    meta = base.metadata.model_copy(update={
        "name": name, "uid": f"uid-{name}", "namespace": namespace or base.metadata.namespace,
        "labels": dict(labels if labels is not None else base.metadata.labels or {})})
    spec = base.spec if node_name is None else base.spec.model_copy(update={"node_name": node_name})
    return base.model_copy(update={"metadata": meta, "spec": spec})


def _cluster() -> ClusterState:
    nodes = [make_node(f"n-{z}-{i}", labels={LABEL_ZONE: f"test-zone-{z}", LABEL_HOSTNAME: f"n-{z}-{i}"})
             for z in (1, 2, 3) for i in (1, 2)]
    anti = make_pod("bound", labels=DB, pod_anti_affinity=[pod_affinity_term(DB)], unschedulable=False,
                    phase="Running")
    zonal = make_pod("bound-z", labels=DB, pod_anti_affinity=[pod_affinity_term(WEB, LABEL_ZONE),
                                                              pod_affinity_term(DB)],
                     unschedulable=False, phase="Running")
    pods = []
    for i, node in enumerate(n.metadata.name for n in nodes):
        pods.append(_alike(anti, f"b{i}", node_name=node))  # one term list, six specs
        pods.append(_alike(anti, f"o{i}", namespace="other", node_name=node))
        pods.append(_alike(zonal, f"z{i}", node_name=node, labels={**DB, "i": str(i)}))
        pods.append(_alike(zonal, f"w{i}", labels=WEB, node_name=node))  # counted by spreads
    return ClusterState.from_objects(nodes, (), pods)


def _pending() -> list[Any]:
    spread = make_pod("spread", labels={**WEB, "version": "1"}, topology_spread_constraints=[
        topology_spread(LABEL_ZONE, WEB, match_label_keys=["version"]), topology_spread(LABEL_HOSTNAME, WEB, 2)])
    twice = make_pod("twice", labels=WEB, tolerations=[{"operator": "Exists"}],
                     topology_spread_constraints=[topology_spread(LABEL_ZONE, WEB)] * 2)
    affine = make_pod("affine", labels=DB, pod_affinity=[pod_affinity_term(WEB, LABEL_ZONE)],
                      pod_anti_affinity=[pod_affinity_term(DB)],
                      pod_anti_affinity_preferences=[pod_affinity_term(WEB)])
    soft = make_pod("soft", labels=DB, pod_anti_affinity_preferences=[pod_affinity_term(DB, LABEL_ZONE)],
                    topology_spread_constraints=[topology_spread(LABEL_ZONE, DB, when_unsatisfiable="ScheduleAnyway")])
    out: list[Any] = []
    for i in range(4):
        # same spec, other labels (matchLabelKeys reads them) and other namespaces
        out.append(_alike(spread, f"s{i}", labels={**WEB, "version": str(i % 2)}))
        out.append(_alike(spread, f"t{i}", namespace="other"))
        out.append(_alike(twice, f"d{i}"))
        out.append(_alike(affine, f"a{i}", namespace="other" if i % 2 else None))
        out.append(_alike(soft, f"f{i}"))
    out.append(make_pod("lone", labels={**WEB, "version": "1"}, topology_spread_constraints=[
        topology_spread(LABEL_ZONE, WEB, match_label_keys=["version"])]))  # equal content, own spec
    return out


def _state(topo: Topology) -> Any:
    def groups(table: dict[Any, Any]) -> list[Any]:
        return [(k, g.key, g.type, list(g.domains.items()), sorted(g.empty_domains), sorted(g.owners), g.version)
                for k, g in table.items()]

    def owned(table: dict[str, list[Any]]) -> dict[str, list[Any]]:
        return {uid: [g.hash_key for g in gs] for uid, gs in table.items()}

    return (groups(topo.topology_groups), groups(topo.inverse_topology_groups), owned(topo._owned),
            owned(topo._inverse_owned), topo._version, {k: [g.hash_key for g in gs] for k, gs in topo._by_key.items()})


def _build(policy: str) -> Topology:
    pools = [make_nodepool("default")]
    cluster = _cluster()
    return Topology(cluster, cluster.nodes, pools, {"default": default_instance_types()}, _pending(),
                    preference_policy=policy)


@pytest.mark.parametrize("policy", ["Respect", "Ignore"])
def test_the_shared_build_equals_the_plain_one(monkeypatch: pytest.MonkeyPatch, policy: str) -> None:
    fast = _build(policy)
    monkeypatch.setattr(Topology, "_MEMOISE_BUILD", False)
    plain = _build(policy)
    assert _state(fast) == _state(plain)
    assert len(fast.topology_groups) >= 6 and len(fast.inverse_topology_groups) >= 3  # the cases are there
    assert any(g.domains and sum(g.domains.values()) for g in fast.topology_groups.values())  # counted pods


def test_the_memos_end_with_new_topology() -> None:
    topo = _build("Respect")
    assert topo._build_memo is None and topo._inverse_memo is None
    # a later update (Solve's relaxation) goes the plain way: a pod alike but for an edited spec
    # gets the groups of its edited spec
    pod = _pending()[0]
    edited = pod.model_copy(update={"spec": pod.spec.model_copy(update={
        "topology_spread_constraints": [topology_spread(LABEL_ZONE, DB)]})})
    assert topo.update(edited) is None
    (group,) = topo.owned_groups(edited)
    assert group.raw_selector is not None and group.raw_selector.match_labels == DB
