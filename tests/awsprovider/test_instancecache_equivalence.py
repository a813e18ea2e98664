"""IsDrifted's DescribeInstances through the instance cache (awsprovider.instancecache, upstream's
instanceCache) against the plain path (a DescribeInstances per NodeClaim per round): the same
document on days whose EC2NodeClass changes (security groups, subnets, static fields) with
disruption on. Fails when the cache changes a drift decision."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

import karpy
from awsprovider.instancecache import InstanceCache

ROOT = Path(__file__).resolve().parents[2]
COOKBOOK = ROOT / "examples" / "generation-preference"


def _nodeclass(**spec_changes: Any) -> dict[str, Any]:
    doc = yaml.safe_load((COOKBOOK / "common" / "ec2nodeclass.yaml").read_text())
    doc["spec"].update(spec_changes)
    return dict(doc)


def _run(seed: int) -> Any:
    r = random.Random(seed)
    change = r.choice([{"subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "other"}}]},
                       {"securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "other"}}]},
                       {"tags": {"team": "b"}}, {}])
    events: list[Any] = [{"at": f"{r.randint(5, 20)}m", "apply": _nodeclass(**change)}]
    events += [f"{r.randint(1, 25)}m scale deployment/{name} {r.randint(0, 12)}"
               for name in ("web",) for _ in range(3)]
    return karpy.simulate([COOKBOOK / "01-one-nodepool", COOKBOOK / "common"], prices="2026-07-20",
                          disruption=True, until="40m", events=events).to_document()


def _decisions(doc: Any) -> Any:
    """What drift decides (the mocked network's random resource ids aside): every disruption
    decision, and each NodeClaim's type, launch and deletion."""
    return (doc["disruptions"], doc.get("disruption_timeline"),
            [(nc["name"], nc.get("instance_type"), nc.get("launched"), nc.get("deleted_by"), nc.get("deleted"))
             for nc in doc["nodeclaims"]])


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_instance_cache_changes_no_drift_decision(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    cached = _run(seed)
    monkeypatch.setattr(InstanceCache, "enabled", False)
    plain = _run(seed)
    assert any(d["method"] == "drift" for d in cached["disruptions"])  # the days do drift
    assert _decisions(cached) == _decisions(plain)


def test_a_cached_entry_is_what_describe_instances_returns() -> None:
    calls: list[str] = []

    def describe(instance_id: str) -> list[dict[str, Any]]:
        calls.append(instance_id)
        if instance_id == "i-gone":
            raise KeyError(instance_id)
        return [] if instance_id == "i-none" else [{"InstanceId": instance_id, "SubnetId": "s"}]

    cache = InstanceCache(describe)
    assert cache.get("i-1") == cache.get("i-1") == {"InstanceId": "i-1", "SubnetId": "s"}
    assert calls == ["i-1"]
    assert cache.get("i-none") is None and cache.get("i-none") is None
    assert calls == ["i-1", "i-none", "i-none"]  # nothing found is asked again
    with pytest.raises(KeyError):
        cache.get("i-gone")
    cache.delete("i-1")
    cache.get("i-1")
    assert calls[-1] == "i-1" and len(cache) == 1
