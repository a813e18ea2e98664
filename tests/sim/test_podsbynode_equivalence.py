"""PodsByNode (karpy/sim/podsbynode.py), the pods bound to each node that draining and deleting a node
read, the unbound pods the run loop's settle checks read, and every cluster snapshot's binding of
pods to nodes (ClusterState.from_objects), against the plain walk over every pod of the store (issue
#32): every answer compared while nodes drain under consolidation, scale-downs and a plan's drift of
every node, and the documents compared with the index switched off."""

from __future__ import annotations

import operator
import sys
from pathlib import Path
from typing import Any

import pytest

import karpy
from karpy.sim.podsbynode import PodsByNode
from karpy.state.cluster import ClusterState
from tests.sim.test_controller_shortcuts import _run, _scenario

sys.path.insert(0, str(Path(__file__).parents[1] / "plan"))
from dumps import EC2NODECLASS, cluster_dump, deployment, dump_text, nodepool  # noqa: E402


def _checked(monkeypatch: pytest.MonkeyPatch, calls: list[int]) -> None:
    original = PodsByNode.on

    def both(self: PodsByNode, node: str) -> list[Any]:
        fast = original(self, node)
        plain = [p for p in self._store.list("Pod") if p.spec.node_name == node]
        assert [p.key for p in fast] == [p.key for p in plain] and all(a is b for a, b in zip(fast, plain))
        calls[0] += bool(fast)
        return fast

    unbound = PodsByNode.unbound

    def unbound_both(self: PodsByNode) -> list[Any]:
        fast = unbound(self)
        plain = [p for p in self._store.list("Pod") if not p.spec.node_name]
        assert [p.key for p in fast] == [p.key for p in plain] and all(a is b for a, b in zip(fast, plain))
        return fast

    monkeypatch.setattr(PodsByNode, "on", both)
    monkeypatch.setattr(PodsByNode, "unbound", unbound_both)
    original_snapshot = ClusterState.from_objects.__func__  # type: ignore[attr-defined]

    def snapshot_both(cls: type[ClusterState], *args: Any, **kwargs: Any) -> ClusterState:
        fast = original_snapshot(cls, *args, **kwargs)
        if kwargs.get("bindings") is None:
            return fast
        plain = original_snapshot(cls, *args, **{**kwargs, "bindings": None, "previous": None})
        assert [sn.name for sn in fast.nodes] == [sn.name for sn in plain.nodes]
        for a, b in zip(fast.nodes, plain.nodes):
            assert len(a.pods) == len(b.pods) and all(map(operator.is_, a.pods, b.pods)), a.name
        assert fast._scan is not None and plain._scan is not None
        for i in (2, 3):  # the unbound pods, the bound pods with an affinity
            assert len(fast._scan[i]) == len(plain._scan[i]) and all(map(operator.is_, fast._scan[i], plain._scan[i]))
        calls[1] += sum(map(len, (sn.pods for sn in fast.nodes))) > 0
        calls[2] += bool(fast._scan[3])
        return fast

    monkeypatch.setattr(ClusterState, "from_objects", classmethod(snapshot_both))


@pytest.mark.parametrize("seed", range(8))
def test_pods_on_a_node_are_the_store_walks(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    objs, events = _scenario(seed)
    calls = [0, 0, 0]
    with monkeypatch.context() as m:
        _checked(m, calls)
        fast = _run(objs, events)
    with monkeypatch.context() as m:
        m.setattr(PodsByNode, "enabled", False)
        plain = _run(objs, events)
    assert fast == plain and calls[0] > 0 and calls[1] > 0


def test_a_plan_draining_every_node_reads_each_nodes_pods_as_the_store_walk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = ["xlarge", "2xlarge"]
    design = [EC2NODECLASS, nodepool(sizes=sizes, budgets=[{"nodes": "50%"}]), deployment("web", 8, "3", "4Gi"),
              deployment("api", 6, "1500m", "10Gi")]
    dump = tmp_path / "cluster.yaml"
    dump.write_text(dump_text(cluster_dump(design, prices="2026-07-20")))
    change = nodepool(sizes=sizes, families=["c8i", "m8i", "r8i"], budgets=[{"nodes": "50%"}])
    calls = [0, 0, 0]
    with monkeypatch.context() as m:
        _checked(m, calls)
        fast = karpy.plan(dump, apply=[change], prices="2026-07-20")
    assert calls[0] >= len(fast.waves) > 0 and calls[1] > 0  # every drifted node drained through the index
    with monkeypatch.context() as m:
        m.setattr(PodsByNode, "enabled", False)
        plain = karpy.plan(dump, apply=[change], prices="2026-07-20")
    assert fast.to_json() == plain.to_json()


@pytest.mark.parametrize("seed", range(20))
def test_the_index_is_the_store_walk_under_random_binds_out_of_order(seed: int) -> None:
    """Pods created, bound (often after a newer pod on the same node), rebound, unbound, replaced and
    deleted at random, some with an affinity: after every event each node's pods, the unbound pods
    and the pods with an affinity are the plain walk's, the same objects in the store's order."""
    import random

    from karpy.api.meta import ObjectMeta
    from karpy.api.pod import Affinity, Pod, PodSpec
    from karpy.sim.store import ObjectStore

    rng = random.Random(seed)
    store = ObjectStore()
    index = PodsByNode(store)
    store.watch("Pod", index.observe)
    nodes = ["n1", "n2", "n3", None]
    untidy = affinity_untidy = 0
    for step in range(300):
        live = store.list("Pod")
        roll = rng.random()
        if roll < 0.35 or not live:
            spec = PodSpec(node_name=rng.choice(nodes), affinity=Affinity() if rng.random() < 0.3 else None)
            store.create("Pod", Pod(metadata=ObjectMeta(name=f"p{step}", namespace=rng.choice(["a", "b"])), spec=spec))
        elif roll < 0.85:
            old = rng.choice(live)
            update: dict[str, Any] = {"node_name": rng.choice(nodes)}
            if rng.random() < 0.2:  # (not in Kubernetes, where the affinity is set at creation)
                update["affinity"] = None if old.spec.affinity is not None else Affinity()
            new = old.model_copy(update={"spec": old.spec.model_copy(update=update)})
            store.update("Pod", new)
        else:
            store.delete("Pod", rng.choice(live))
        untidy += bool(index._untidy)
        affinity_untidy += index._affinity_untidy
        pods = store.list("Pod")
        for node in nodes[:-1]:
            want = [p for p in pods if p.spec.node_name == node]
            got = index.on(node)
            assert len(got) == len(want) and all(map(operator.is_, got, want)), (step, node)
        for got, want in ((index.unbound(), [p for p in pods if not p.spec.node_name]),
                          (index.with_affinity(), [p for p in pods if p.spec.affinity is not None])):
            assert len(got) == len(want) and all(map(operator.is_, got, want)), step
    assert untidy > 0 and affinity_untidy > 0  # binds after a newer pod on the node happened, and were put in order
