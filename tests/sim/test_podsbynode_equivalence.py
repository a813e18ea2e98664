"""PodsByNode (karpy/sim/podsbynode.py), the pods bound to each node that draining and deleting a node
read, and the unbound pods the run loop's settle checks read, against the plain walk over every pod
of the store (issue #32): every answer compared while nodes drain under consolidation, scale-downs
and a plan's drift of every node, and the documents compared with the index switched off."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import karpy
from karpy.sim.podsbynode import PodsByNode
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


@pytest.mark.parametrize("seed", range(8))
def test_pods_on_a_node_are_the_store_walks(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    objs, events = _scenario(seed)
    calls = [0]
    with monkeypatch.context() as m:
        _checked(m, calls)
        fast = _run(objs, events)
    with monkeypatch.context() as m:
        m.setattr(PodsByNode, "enabled", False)
        plain = _run(objs, events)
    assert fast == plain and calls[0] > 0


def test_a_plan_draining_every_node_reads_each_nodes_pods_as_the_store_walk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = ["xlarge", "2xlarge"]
    design = [EC2NODECLASS, nodepool(sizes=sizes, budgets=[{"nodes": "50%"}]), deployment("web", 8, "3", "4Gi"),
              deployment("api", 6, "1500m", "10Gi")]
    dump = tmp_path / "cluster.yaml"
    dump.write_text(dump_text(cluster_dump(design, prices="2026-07-20")))
    change = nodepool(sizes=sizes, families=["c8i", "m8i", "r8i"], budgets=[{"nodes": "50%"}])
    calls = [0]
    with monkeypatch.context() as m:
        _checked(m, calls)
        fast = karpy.plan(dump, apply=[change], prices="2026-07-20")
    assert calls[0] >= len(fast.waves) > 0  # every drifted node drained through the index
    with monkeypatch.context() as m:
        m.setattr(PodsByNode, "enabled", False)
        plain = karpy.plan(dump, apply=[change], prices="2026-07-20")
    assert fast.to_json() == plain.to_json()
