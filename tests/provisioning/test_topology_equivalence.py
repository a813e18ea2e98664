"""karpy/provisioning/topology*.py's shortcuts against the plain computation each replaces:

* NewTopology's loop shares the groups of pods alike (``Topology._build_memo`` and
  ``_inverse_memo``): the Topology it builds equals the one the plain loop builds in its groups,
  inverse groups, owners and version, and the memos are gone once NewTopology returns;
* the domain groups (DomainGroupCache, SHARED_DOMAIN_GROUPS) answer what build_domain_groups builds;
* TopologyGroup.next_domain's spread memo and Topology.narrow (AddRequirements as the keys it
  changes) against the plain scan and the plain add;
* Topology._count_domains' walk of the existing nodes, replayed for later groups, and the
  memoised MakeTopologyNodeFilter.

Upstream: pkg/controllers/provisioning/scheduling/{topology,topologygroup,topologydomaingroup}.go."""

from __future__ import annotations

import random
from typing import Any

import pytest

from karpy.api.builders import make_node, make_nodepool, make_pod, pod_affinity_term, topology_spread
from karpy.cloudprovider import fake
from karpy.cloudprovider.fake import default_instance_types
from karpy.state.cluster import ClusterState
from karpy.provisioning.topology import DomainGroupCache, Topology, build_domain_groups
from karpy.provisioning.topologygroup import TopologyGroup, TopologyType
from karpy.scheduling.labels import LABEL_HOSTNAME, LABEL_ZONE, CORE_WELL_KNOWN_LABELS, LABEL_CAPACITY_TYPE
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements, strict_pod_requirements

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


def _groups(groups: dict[str, Any]) -> dict[str, dict[str, list[Any]]]:
    return {k: {d: g.taint_sets(d) for d in g.domains()} for k, g in groups.items()}


def test_domain_group_cache_answers_what_build_domain_groups_builds() -> None:
    its = fake.instance_types(50)
    pools = [make_nodepool("a", requirements=[(LABEL_ZONE, "In", ["test-zone-1", "test-zone-2"])]),
             make_nodepool("b", taints=[("team", "x", "NoSchedule")])]
    cache = DomainGroupCache(build_domain_groups)
    first = cache.get(pools, {"a": its, "b": its})
    assert _groups(first) == _groups(build_domain_groups(pools, {"a": its, "b": its}))
    # same pools by value, same instance-type requirement objects: the same answer object
    again = [make_nodepool("a", requirements=[(LABEL_ZONE, "In", ["test-zone-1", "test-zone-2"])]),
             make_nodepool("b", taints=[("team", "x", "NoSchedule")])]
    assert cache.get(again, {"a": its, "b": its}) is first


def test_domain_group_cache_misses_when_a_pool_or_an_instance_type_changes() -> None:
    its = fake.instance_types(20)
    cache = DomainGroupCache(build_domain_groups)
    pool = make_nodepool("a", requirements=[(LABEL_ZONE, "In", ["test-zone-1"])])
    first = cache.get([pool], {"a": its})
    widened = make_nodepool("a", requirements=[(LABEL_ZONE, "In", ["test-zone-1", "test-zone-3"])])
    second = cache.get([widened], {"a": its})
    assert second is not first
    assert _groups(second) == _groups(build_domain_groups([widened], {"a": its}))
    assert sorted(second[LABEL_ZONE].domains()) == ["test-zone-1", "test-zone-3"]
    fresh = fake.instance_types(20)  # equal values, new requirement objects: rebuilt, same answer
    third = cache.get([pool], {"a": fresh})
    assert third is not first and _groups(third) == _groups(first)


def test_domain_group_cache_keyed_by_the_providers_key_answers_what_build_domain_groups_builds() -> None:
    """A pool whose types the cloud provider keyed is keyed by that key (equal keys: equal types):
    the same answer for the same key whatever list holds the types, another key or another
    template misses, and a pool without a key is keyed by its types' requirement objects."""
    its = fake.instance_types(30)
    pool = make_nodepool("a", requirements=[(LABEL_ZONE, "In", ["test-zone-1", "test-zone-2"])])
    other = make_nodepool("b")
    cache = DomainGroupCache(build_domain_groups)
    first = cache.get([pool, other], {"a": its, "b": its}, {"a": ("k", 1), "b": None})
    assert _groups(first) == _groups(build_domain_groups([pool, other], {"a": its, "b": its}))
    assert cache.get([pool, other], {"a": list(its), "b": its}, {"a": ("k", 1), "b": None}) is first
    assert cache.get([pool, other], {"a": its, "b": list(fake.instance_types(30))},
                     {"a": ("k", 1), "b": None}) is not first  # b: other requirement objects
    fewer = its[:10]
    second = cache.get([pool, other], {"a": fewer, "b": its}, {"a": ("k", 2), "b": None})
    assert second is not first and _groups(second) == _groups(build_domain_groups([pool, other], {"a": fewer, "b": its}))
    widened = make_nodepool("a", requirements=[(LABEL_ZONE, "In", ["test-zone-1", "test-zone-3"])])
    third = cache.get([widened, other], {"a": its, "b": its}, {"a": ("k", 1), "b": None})
    assert _groups(third) == _groups(build_domain_groups([widened, other], {"a": its, "b": its}))
    assert third is not first


@pytest.mark.parametrize("prices", ["2026-07-20"])
def test_keying_domain_groups_by_the_providers_key_changes_no_plan(prices: str, tmp_path: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A drift plan (its consolidation simulations take the provider's keys) with a fresh memo,
    then with DomainGroupCache.use_provider_keys off: the same documents."""
    import sys
    from pathlib import Path

    import karpy
    from karpy.provisioning import topology

    sys.path.insert(0, str(Path(__file__).parents[1] / "plan"))
    from dumps import EC2NODECLASS, cluster_dump, deployment, dump_text, nodepool

    dump = tmp_path / "cluster.yaml"
    dump.write_text(dump_text(cluster_dump([EC2NODECLASS, nodepool(sizes=["xlarge", "2xlarge"]),
                                            deployment("web", 12, "3", "4Gi")], prices=prices)))
    change = nodepool(sizes=["xlarge", "2xlarge"], families=["c8i", "m8i", "r8i"])
    runs = []
    for on in (True, False):
        monkeypatch.setattr(DomainGroupCache, "use_provider_keys", on)
        monkeypatch.setattr(topology, "SHARED_DOMAIN_GROUPS", DomainGroupCache(build_domain_groups))
        plan = karpy.plan(dump, apply=[change], prices=prices, until="2h")
        assert plan.result is not None
        runs.append((plan.to_json(), plan.result.to_json()))
    assert '"method": "drift"' in runs[0][0] and runs[0] == runs[1]


def test_a_second_simulation_reuses_the_domain_groups_of_the_first(monkeypatch: Any) -> None:
    """The Provisioner's memo is the process's (SHARED_DOMAIN_GROUPS): the AWS provider hands every
    simulation of a process the same prototype requirement objects, so a warm run builds no group,
    and its document is the one a fresh memo gives."""
    import karpy
    from karpy.cli import bundled_example
    from karpy.provisioning import topology

    builds: list[int] = []
    real = topology.build_domain_groups

    def counting(*args: Any) -> Any:
        builds.append(1)
        return real(*args)

    monkeypatch.setattr(topology.SHARED_DOMAIN_GROUPS, "_build", counting)
    topology.SHARED_DOMAIN_GROUPS.clear()
    first = karpy.simulate([bundled_example()], region="us-east-1", prices="2026-07-20").to_json()
    built_by_first = len(builds)
    second = karpy.simulate([bundled_example()], region="us-east-1", prices="2026-07-20").to_json()
    assert built_by_first >= 1 and len(builds) == built_by_first
    assert second == first


ZONES = ["test-zone-1", "test-zone-2", "test-zone-3", "test-zone-4"]


APP = {"app": "web"}


WELL_KNOWN = CORE_WELL_KNOWN_LABELS


def _random_requirement(r: random.Random, key: str, values: list[str]) -> Requirement:
    op = r.choice(["In", "In", "NotIn", "Exists", "DoesNotExist"])
    return Requirement(key, op, r.sample(values, r.randint(1, min(3, len(values)))))


# --- TopologyGroup.next_domain: the spread memo -------------------------------------------------
def _spread_group(pod: Any, max_skew: int, min_domains: int | None) -> TopologyGroup:
    selector = topology_spread(LABEL_ZONE, APP).label_selector
    return TopologyGroup(TopologyType.SPREAD, LABEL_ZONE, pod, ["default"], selector, max_skew, min_domains,
                         None, None, None)


def test_spread_memo_equals_the_plain_scan_through_records_registers_and_unregisters() -> None:
    """next_domain (memoised per group version) answers what nextDomainTopologySpread computes
    afresh, whatever happened to the counts in between; with shared Requirement objects reused
    across calls (the memo's hits) and fresh equal ones (its misses)."""
    r = random.Random(11)
    pod = make_pod("p", labels=APP)
    other = make_pod("q", labels={"app": "db"})
    asked = hits = 0
    for trial in range(40):
        min_domains = r.choice([None, None, 2, 5])
        tg = _spread_group(pod, r.randint(1, 3), min_domains)
        shared = [tg.exists, *(_random_requirement(r, LABEL_ZONE, ZONES) for _ in range(4))]
        for step in range(120):
            roll = r.random()
            if roll < 0.15:
                tg.record(r.choice(ZONES))
            elif roll < 0.2:
                tg.register(r.choice(ZONES))
            elif roll < 0.22:
                tg.unregister(r.choice(ZONES))
            for _ in range(6):
                pd = r.choice(shared) if r.random() < 0.8 else _random_requirement(r, LABEL_ZONE, ZONES)
                nd = r.choice(shared) if r.random() < 0.8 else _random_requirement(r, LABEL_ZONE, ZONES)
                p = pod if r.random() < 0.7 else other
                version = tg._spread_memo_version
                size = len(tg._spread_memo)
                got = tg.next_domain(p, pd, nd)
                want = tg.next_domain_topology_spread(p, pd, nd)[0]
                assert got == want, (trial, step)
                asked += 1
                hits += version == tg._spread_memo_version and size == len(tg._spread_memo)
    assert hits > asked // 10  # the memo was exercised, and so were its misses
    assert hits < asked


def test_spread_domain_requirements_are_shared_objects() -> None:
    pod = make_pod("p", labels=APP)
    tg = _spread_group(pod, 1, None)
    tg.register(*ZONES)
    first = tg.next_domain(pod, tg.exists, tg.exists)
    assert first == Requirement(LABEL_ZONE, "In", ["test-zone-1"])
    tg.record("test-zone-2")  # a new version: recomputed, the same object for the same domain
    assert tg.next_domain(pod, tg.exists, tg.exists) is first
    tg.record("test-zone-1")
    assert tg.next_domain(pod, tg.exists, tg.exists) == Requirement(LABEL_ZONE, "In", ["test-zone-3"])


# --- Topology.narrow / add_requirements -----------------------------------------------------
def _plain_add_requirements(topo: Topology, pod: Any, pod_reqs: Requirements,
                            node_reqs: Requirements) -> tuple[Requirements | None, str | None]:
    """topology.go AddRequirements as written: copy, then Add every group's next domain."""
    out = node_reqs.copy()
    for tg in topo._matching_topologies(pod, (), node_reqs, WELL_KNOWN):
        pd = pod_reqs.get(tg.key)
        nd = node_reqs.get(tg.key)
        # the plain computations of topologygroup.go Get
        if tg.type == TopologyType.SPREAD:
            domains = tg.next_domain_topology_spread(pod, pd, nd)[0]
        elif tg.type == TopologyType.POD_AFFINITY:
            domains = tg.next_domain_affinity(pod, pd, nd)
        else:
            domains = tg.next_domain_anti_affinity(pd, nd)
        if not domains.complement and not domains.values:
            return None, "error"
        out.add(domains)
    return out, None


def test_narrow_and_add_requirements_equal_the_plain_add_in_value_and_key_order() -> None:
    r = random.Random(7)
    spread = [topology_spread(LABEL_ZONE, APP), topology_spread(LABEL_HOSTNAME, APP, max_skew=2)]
    pods = [make_pod(f"p{i}", labels=APP, topology_spread_constraints=spread,
                     pod_affinity=[pod_affinity_term(APP, LABEL_CAPACITY_TYPE)] if i % 3 == 0 else None)
            for i in range(30)]
    topo = Topology(ClusterState(), [], [make_nodepool("default")], {"default": default_instance_types()}, pods)
    outcomes = set()
    for i, pod in enumerate(pods):
        strict = strict_pod_requirements(pod)
        for c in range(12):
            node = Requirements(Requirement(LABEL_HOSTNAME, "In", [f"host-{c}"]))
            if r.random() < 0.5:
                node.add(_random_requirement(r, LABEL_ZONE, ZONES[:3]))
            if r.random() < 0.4:
                node.add(_random_requirement(r, LABEL_CAPACITY_TYPE, ["spot", "on-demand"]))
            want, werr = _plain_add_requirements(topo, pod, strict, node)
            got, err = topo.add_requirements(pod, (), strict, node, WELL_KNOWN)
            changes, nerr = topo.narrow(pod, (), strict, node, WELL_KNOWN)
            assert (err is None) == (werr is None) == (nerr is None)
            if want is None:
                outcomes.add("error")
                continue
            assert got is not None and got is not node
            assert list(got.items()) == list(want.items())  # values and key order
            assert changes is not None or dict(want) == dict(node)
            for k, v in (changes or {}).items():
                assert dict.get(node, k) != v  # only real changes
            for k, v in node.items():
                if k not in (changes or {}):
                    assert got[k] is v  # an unchanged key keeps the node's object
            outcomes.add("changed" if changes else "same")
        if i % 2 == 0:  # schedule the pod somewhere so the counts move
            node = Requirements(Requirement(LABEL_HOSTNAME, "In", [f"host-{i % 5}"]))
            placed, err = topo.add_requirements(pod, (), strict, node, WELL_KNOWN)
            if placed is not None:
                topo.register(LABEL_HOSTNAME, f"host-{i % 5}")
                topo.record(pod, (), placed, WELL_KNOWN)
    assert outcomes == {"error", "changed", "same"}


WELL_KNOWN_FRESH = CORE_WELL_KNOWN_LABELS | fake.FakeCloudProvider().well_known_labels()


ZONES_FRESH = ("test-zone-1", "test-zone-2", "test-zone-3")


def _types() -> dict[str, list[Any]]:
    """Both pools' types are offered in zones 1 and 2 only; the pools allow zone 3 too, so zone 3
    is a spread domain no type offers (as us-east-1e for the AWS workloads)."""
    def pool(prefix: str, price: float) -> list[Any]:
        return [fake.new_instance_type(
            f"{prefix}-{i}", resources={"cpu": str(2 * (i + 1)), "memory": f"{4 * (i + 1)}Gi", "pods": "20"},
            offerings=[fake._offering(ct, z, price + i) for z in ZONES_FRESH[:2] for ct in ("on-demand", "spot")])
            for i in range(4)]
    return {"a": pool("a", 1.0), "b": pool("b", 1.5)}


# --- Topology._count_domains: the existing nodes' walk ---------------------------------------
def _plain_node_domains(topo: Topology, tg: Any) -> list[str]:
    """The walk of topology.go countDomains over the existing nodes, for one group."""
    out = []
    for sn in topo.state_nodes:
        node = sn.node
        if node is None:
            continue
        if not tg.node_filter.matches(node.spec.taints or (), topo._node_requirements(node)):
            continue
        domain = sn.labels().get(tg.key)
        if domain is not None:
            out.append(domain)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_node_domain_walk_matches_the_walk_per_group(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    r = random.Random(seed)
    nodes = []
    for i in range(12):
        labels = {LABEL_ZONE: r.choice(ZONES_FRESH), "tier": r.choice(("web", "db"))}
        taints = [("dedicated", "x", "NoSchedule")] if r.random() < 0.3 else []
        nodes.append(make_node(f"n-{i:02d}", labels=labels, taints=taints))
    pods = []
    for i in range(30):
        tsc = topology_spread(r.choice((LABEL_ZONE, LABEL_HOSTNAME, "tier")), {"app": r.choice("ab")},
                              node_taints_policy=r.choice((None, "Honor", "Ignore")),
                              node_affinity_policy=r.choice((None, "Honor", "Ignore")))
        sel = r.choice(({}, {"tier": "web"}, {"tier": "db"}))
        tol = [{"key": "dedicated", "operator": "Exists"}] if r.random() < 0.3 else []
        pods.append(make_pod(f"q-{i}", uid=f"q-{i}", labels={"app": r.choice("ab")}, node_selector=sel,
                             tolerations=tol, topology_spread_constraints=[tsc]))
    cluster = ClusterState.from_objects(nodes=nodes)
    registered: list[tuple[int, str]] = []
    from karpy.provisioning import topologygroup

    register = topologygroup.TopologyGroup.register

    def recording(self: Any, domain: str) -> None:
        registered.append((id(self), domain))
        register(self, domain)

    monkeypatch.setattr(topologygroup.TopologyGroup, "register", recording)
    topo = Topology(cluster, cluster.active_nodes(), [make_nodepool("a")], _types(), pods, "Respect", WELL_KNOWN_FRESH)
    assert len(topo._node_domains) < len(topo.topology_groups)  # replays happened
    for tg in topo.topology_groups.values():
        got = [d for g, d in registered if g == id(tg)]
        assert got == _plain_node_domains(topo, tg)


# --- Topology._spread_node_filter: MakeTopologyNodeFilter memoised per Topology --------------
def test_spread_node_filter_memo_equals_make_topology_node_filter() -> None:
    """The shared filter of equal inputs has the hash and the answers of the one built afresh,
    on every node, whatever the pod's nodeSelector, tolerations, policies and node affinity."""
    from karpy.provisioning.topologygroup import TopologyType, group_node_filter
    from karpy.scheduling.requirements import Requirements

    r = random.Random(5)
    nodes = [make_node(f"n-{i}", labels={LABEL_ZONE: r.choice(ZONES_FRESH), "tier": r.choice(("web", "db"))},
                       taints=[("dedicated", r.choice(("x", "y")), "NoSchedule")] if r.random() < 0.5 else [])
             for i in range(10)]
    topo = Topology(ClusterState.from_objects(), [], [make_nodepool("a")], _types(), [], "Respect", WELL_KNOWN_FRESH)
    shared = 0
    for i in range(300):
        kw: dict[str, Any] = {}
        if r.random() < 0.5:
            kw["node_selector"] = r.choice(({"tier": "web"}, {"tier": "db"}, {"tier": "web", LABEL_ZONE: ZONES_FRESH[0]},
                                            {LABEL_ZONE: ZONES_FRESH[0], "tier": "web"}))
        if r.random() < 0.5:
            kw["tolerations"] = [{"key": "dedicated", "operator": r.choice(("Exists", "Equal")),
                                  "value": r.choice(("x", "")), "effect": r.choice(("", "NoSchedule"))}]
        if r.random() < 0.2:
            kw["node_requirements"] = [("tier", "In", [r.choice(("web", "db"))])]
        tsc = topology_spread(LABEL_ZONE, {"app": "a"}, node_taints_policy=r.choice((None, "Honor", "Ignore")),
                              node_affinity_policy=r.choice((None, "Honor", "Ignore")))
        pod = make_pod(f"s-{i}", uid=f"s-{i}", labels={"app": "a"}, topology_spread_constraints=[tsc], **kw)
        size = len(topo._node_filters)
        got = topo._spread_node_filter(pod, tsc)
        shared += size == len(topo._node_filters)
        want = group_node_filter(TopologyType.SPREAD, pod, tsc.node_taints_policy, tsc.node_affinity_policy)
        assert got.hash_key == want.hash_key
        for n in nodes:
            reqs = Requirements.from_labels(n.metadata.labels)
            assert got.matches(n.spec.taints, reqs) == want.matches(n.spec.taints, reqs)
    assert shared > 100


@pytest.mark.parametrize("policy", ["Respect", "Ignore"])
def test_skipping_pods_without_topology_equals_updating_every_pod(monkeypatch: pytest.MonkeyPatch, policy: str) -> None:
    """NewTopology's loop skips a pod with neither affinity nor spread whose uid no group or cache
    holds: the same Topology as calling update for every pod, also when such a pod shares its uid
    with a pod that has groups (it then drops that pod's groups, as update does), and with the
    uids and flags read by SpecMemo.prepare instead of from the pods."""
    from karpy.provisioning.poddata import SpecMemo

    plain_pod = make_pod("plain", labels=WEB)
    pods = _pending()
    shared = pods[0].model_copy(update={"spec": plain_pod.spec})  # the first pod's uid, no topology
    nameless = [_alike(plain_pod, f"p{i}").model_copy(deep=True) for i in range(3)]
    for p in nameless:
        p.metadata.uid = ""
    mixed = [pods[0], *nameless[:2], *pods[1:4], shared, nameless[2], *pods[4:]]
    pools = [make_nodepool("default")]

    def build() -> Topology:
        cluster = _cluster()
        return Topology(cluster, cluster.nodes, pools, {"default": default_instance_types()}, mixed,
                        preference_policy=policy)

    def prepared() -> Topology:
        cluster = _cluster()
        answers = SpecMemo().prepare(mixed, policy == "Ignore")
        return Topology(cluster, cluster.nodes, pools, {"default": default_instance_types()}, mixed,
                        preference_policy=policy, prepared=[(a.uid, a.derived.topology_free) for a in answers])

    updated: list[str] = []
    orig = Topology.update

    def counted(self: Topology, pod: Any) -> Any:
        updated.append(pod.metadata.name)
        return orig(self, pod)

    monkeypatch.setattr(Topology, "update", counted)
    fast = build()
    in_fast = list(updated)
    fast_prepared = prepared()
    monkeypatch.setattr(Topology, "_SKIP_FREE", False)
    plain = build()
    assert _state(fast) == _state(plain) == _state(fast_prepared)
    assert fast.excluded_pods == plain.excluded_pods == fast_prepared.excluded_pods
    # the three uid-less free pods were skipped; the free one sharing a uid with a pod that has
    # groups was not (it is updated after that pod: twice "s0")
    assert len(in_fast) == len(mixed) - 3 and in_fast.count(pods[0].metadata.name) == 2
    assert pods[0].metadata.uid not in fast._owned  # its groups' ownership went with the later pod
