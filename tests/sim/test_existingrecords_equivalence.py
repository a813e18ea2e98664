"""The records of the NodeClaims not deleted (karpy/sim/lifecycle.py ``existing_records``, kept as
records are created and deleted) against the plain walk over every record the run made: checked at
every call through a day that launches, consolidates, expires and interrupts nodes, and the same
document as the walk gives. Fails when a record leaves too early, stays too long or moves."""

from __future__ import annotations

from typing import Any

import pytest

import karpy
from karpy.sim.lifecycle import NodeClaimLifecycle


def _deployment(name: str, replicas: int, cpu: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "x",
                                                           "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}}}}


NODEPOOL = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
            "spec": {"template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "expireAfter": "2h",
                "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                                  "values": ["c7i", "m7i", "c8i", "m8i"]},
                                 {"key": "karpenter.k8s.aws/instance-size", "operator": "In",
                                  "values": ["large", "xlarge"]}]}},
                     "disruption": {"consolidateAfter": "1m"}}}
EVENTS = [f"{m}m scale deployment/web {n}" for m, n in ((20, 2), (50, 16), (80, 5), (110, 20), (140, 3))] + \
    ["65m capacity unavailable c7i.*:*:*", "95m capacity available c7i.*:*:*"]


def _run() -> Any:
    return karpy.simulate([NODEPOOL, _deployment("web", 10, "700m"), _deployment("api", 3, "1500m")],
                          prices="2026-07-20", until="5h", events=EVENTS, disruption=True)


def test_existing_records_are_the_walk_over_every_record(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    kept = NodeClaimLifecycle.existing_records

    def checked(self: NodeClaimLifecycle) -> list[Any]:
        out = kept(self)
        plain = [r for r in self.launches if not r.deleted]
        assert [id(r) for r in out] == [id(r) for r in plain]
        calls.append((len(out), len(self.launches)))
        return out

    monkeypatch.setattr(NodeClaimLifecycle, "existing_records", checked)
    doc = _run().to_json()
    monkeypatch.setattr(NodeClaimLifecycle, "existing_records",
                        lambda self: [r for r in self.launches if not r.deleted])
    assert _run().to_json() == doc
    # it was asked while deleted records were around (the walk and the kept records part)
    assert calls and any(live < made for live, made in calls), calls[-5:]
    assert max(made for _, made in calls) >= 8
