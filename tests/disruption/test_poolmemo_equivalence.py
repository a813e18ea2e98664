"""The drift check's NodePool facts shared by the NodeClaims of one look (karpy/nodeclaim/disruption.py
PoolMemo: the template hash and requirements) against each check hashing its NodePool anew: plans whose
change drifts every node by requirements and by the template hash, and a change that drifts none,
compared document for document with the memo off. Fails when a NodePool's facts outlive it."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest

import karpy
from karpy.disruption.controller import DisruptionController

sys.path.insert(0, str(Path(__file__).parents[1] / "plan"))
from dumps import EC2NODECLASS, cluster_dump, deployment, dump_text, nodepool  # noqa: E402

SIZES = ["xlarge", "2xlarge"]


def _labelled(pool: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(pool)
    out["spec"]["template"].setdefault("metadata", {})["labels"] = {"team": "blue"}  # in the hash: NodePoolDrifted
    return out


CHANGES = {
    "requirements": nodepool(sizes=SIZES, families=["c8i", "m8i", "r8i"], budgets=[{"nodes": "50%"}]),
    "template-hash": _labelled(nodepool(sizes=SIZES, budgets=[{"nodes": "50%"}])),
    "budget-only": nodepool(sizes=SIZES, budgets=[{"nodes": "1"}]),
}


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    design = [EC2NODECLASS, nodepool(sizes=SIZES, budgets=[{"nodes": "50%"}]), deployment("web", 6, "3", "4Gi"),
              deployment("api", 4, "1500m", "10Gi")]
    path = tmp_path_factory.mktemp("poolmemo") / "cluster.yaml"
    path.write_text(dump_text(cluster_dump(design, prices="2026-07-20")))
    return path


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_shared_pool_facts_change_no_decision(change: str, dump: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = karpy.plan(dump, apply=[CHANGES[change]], prices="2026-07-20")
    monkeypatch.setattr(DisruptionController, "share_pool_facts", False)
    plain = karpy.plan(dump, apply=[CHANGES[change]], prices="2026-07-20")
    assert shared.to_json() == plain.to_json()
    drifted = {"requirements": "RequirementsDrifted", "template-hash": "NodePoolDrifted", "budget-only": None}[change]
    reasons = {d["reason"] for d in shared.result.simulation.disruption.decisions}
    conditions = {c.reason for r in shared.result.simulation.launches if r.launched is not None
                  for c in r.launched.status.conditions or () if c.type == "Drifted" and c.status == "True"}
    if drifted:
        assert "Drifted" in reasons and conditions == {drifted}, (reasons, conditions)
    else:
        assert "Drifted" not in reasons and not conditions, (reasons, conditions)


def test_pool_facts_incompatible_answers_each_label_set_as_computed() -> None:
    """_PoolFacts.incompatible (asked once per label set) against Requirements.from_labels(...).compatible
    for label sets that differ in one value, in their order, and one edited in place between asks."""
    from karpy.api.nodepool import NodePool
    from karpy.nodeclaim.disruption import _pool_facts
    from karpy.scheduling.requirements import Requirements

    pool = NodePool.model_validate(nodepool(sizes=SIZES, families=["c8i", "m8i"]))
    facts = _pool_facts(pool, {})
    base = {"karpenter.sh/nodepool": "default", "karpenter.k8s.aws/instance-family": "c8i",
            "karpenter.k8s.aws/instance-size": "xlarge", "karpenter.sh/capacity-type": "on-demand"}
    sets = [base, {**base, "karpenter.k8s.aws/instance-family": "c7i"}, dict(reversed(base.items())),
            {**base, "karpenter.k8s.aws/instance-size": "4xlarge"}, {**base, "kubernetes.io/arch": "arm64"}]
    answers = []
    for labels in sets + sets:
        want = Requirements.from_labels(labels).compatible(facts.requirements) is not None
        assert facts.incompatible(labels) is want, labels
        answers.append(want)
    assert answers[:5] == [False, True, False, True, False]
    edited = dict(base)
    assert facts.incompatible(edited) is False
    edited["karpenter.k8s.aws/instance-family"] = "r7i"
    assert facts.incompatible(edited) is True
