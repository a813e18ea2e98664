"""EC2NodeClass status conditions end to end (awsprovider.nodeclassstatus), on real us-east-1 prices.

Shapes: aws/karpenter-provider-aws 1d92708 ``examples/v1/general-purpose.yaml`` (NodePool +
EC2NodeClass "default", ``${CLUSTER_NAME}`` as written) and ``examples/workloads/inflate.yaml``,
next to a copy of that pair whose EC2NodeClass selects subnets tagged for another cluster; the VPC
is a karpy.io Network carrying the general-purpose NodeClass's discovery tags. The dump test uses
the ``status`` a ``kubectl get ec2nodeclass -o yaml`` prints (pkg/apis/v1/ec2nodeclass_status.go),
with ``managedFields``.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from realworld_helpers import PRICES, docs, launched, pending, scale  # noqa: E402

from karpy.cli import cli  # noqa: E402

TAG = {"karpenter.sh/discovery": "${CLUSTER_NAME}"}
NETWORK = {"apiVersion": "karpy.io/v1alpha1", "kind": "Network", "metadata": {"name": "cluster-vpc"},
           "spec": {"subnets": [{"id": "subnet-0a1b2c3d4e5f60001", "zone": "us-east-1a", "tags": TAG},
                                {"id": "subnet-0a1b2c3d4e5f60002", "zone": "us-east-1b", "tags": TAG}],
                    "securityGroups": [{"id": "sg-0a1b2c3d4e5f60001", "name": "eks-cluster-sg", "tags": TAG}]}}
BAD_SELECTOR = [{"tags": {"karpenter.sh/discovery": "other-cluster"}}]


def _manifests(replicas: int = 3) -> list[dict[str, Any]]:
    """general-purpose (weight 0) + a heavier copy "staging" whose EC2NodeClass matches no subnet."""
    ds = scale(docs("aws/examples/v1/general-purpose.yaml", "aws/examples/workloads/inflate.yaml"), "inflate", replicas)
    np = copy.deepcopy(next(d for d in ds if d["kind"] == "NodePool"))
    nc = copy.deepcopy(next(d for d in ds if d["kind"] == "EC2NodeClass"))
    np["metadata"]["name"], np["spec"]["weight"] = "staging", 50
    np["spec"]["template"]["spec"]["nodeClassRef"]["name"] = nc["metadata"]["name"] = "staging"
    nc["spec"]["subnetSelectorTerms"] = BAD_SELECTOR
    return [NETWORK, *ds, np, nc]


def _conds(doc: dict[str, Any], kind: str, name: str) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in doc[kind][name]["conditions"]}


def test_unmatched_subnet_selector_pool_is_skipped_and_said_on_real_prices(tmp_path: Path) -> None:
    # the heavier pool's EC2NodeClass is NotReady (subnet.go SubnetsNotFound), so the provisioner skips
    # it (provisioner.go: "ignoring nodepool, not ready") and the pods go to general-purpose
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(_manifests()), encoding="utf-8")
    for mode in ("json", "table"):
        result = CliRunner().invoke(cli, ["simulate", str(path), "--prices", PRICES, "-o", mode])
        assert result.exit_code == 0, result.output
        # stderr says why, in every output mode
        assert ("karpy: warning: EC2NodeClass staging: not ready (Ready=False, UnhealthyDependents: SubnetsReady=False, "
                "ValidationSucceeded=False; SubnetsReady=False, SubnetsNotFound: SubnetSelector did not match any "
                "Subnets;") in result.stderr, result.stderr
        assert ('NodePool "staging" is not ready and was ignored (NodeClassReady=False, UnhealthyDependents: '
                "SubnetsReady=False, ValidationSucceeded=False)") in result.stderr
    doc = json.loads(CliRunner().invoke(cli, ["simulate", str(path), "--prices", PRICES, "-o", "json"]).stdout)
    claims = launched(doc)
    assert claims and {c["nodepool"] for c in claims} == {"general-purpose"}
    assert {o["subnet_id"] for c in claims for o in c["fleet"]["overrides"]} <= {
        "subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"}
    assert not pending(doc)
    assert doc["cost_per_hour"] > 0
    bad = _conds(doc, "nodeclasses", "staging")
    assert bad["SubnetsReady"] == ("False", "SubnetsNotFound", "SubnetSelector did not match any Subnets")
    assert bad["ValidationSucceeded"] == ("False", "DependenciesNotReady",
                                          "Awaiting AMI, Instance Profile, Security Group, and Subnet resolution")
    assert bad["Ready"] == ("False", "UnhealthyDependents", "SubnetsReady=False, ValidationSucceeded=False")
    assert doc["nodeclasses"]["staging"]["subnets"] == []
    assert all(s == "True" for s, _, _ in _conds(doc, "nodeclasses", "default").values())
    assert _conds(doc, "nodepools", "staging")["Ready"] == ("False", "UnhealthyDependents", "NodeClassReady=False")
    assert _conds(doc, "nodepools", "general-purpose")["Ready"][0] == "True"


def test_lone_notready_pool_leaves_pods_pending(run) -> None:
    # only the NotReady pool: no dynamic NodePool, the pods stay pending (provisioner.go
    # ErrNodePoolsNotFound) and nothing launches
    ds = [d for d in _manifests(2) if d["metadata"]["name"] not in ("general-purpose", "default")]
    result, doc = run(ds)
    assert launched(doc) == []
    # provisioner.go:416-419 Schedule: ErrNodePoolsNotFound -> "no dynamic nodepools found"
    assert list(pending(doc).values()) == ["no dynamic nodepools found"] * 2, doc["pods"]
    assert any(w.startswith('NodePool "staging" is not ready and was ignored (NodeClassReady=False, ')
               for w in doc["warnings"])


def test_conditions_re_evaluate_when_the_nodeclass_is_fixed_during_the_run(run, tmp_path: Path) -> None:
    # a Scenario applies the corrected EC2NodeClass at 10m: its conditions re-evaluate (subnet.go
    # SetTrue), the NodePool turns Ready and the pods, pending till then, launch on real prices
    ds = [d for d in _manifests(2) if d["metadata"]["name"] not in ("general-purpose", "default")]
    fixed = copy.deepcopy(next(d for d in ds if d["kind"] == "EC2NodeClass"))
    fixed["spec"]["subnetSelectorTerms"] = [{"tags": TAG}]
    fix = tmp_path / "fixed.yaml"
    fix.write_text(yaml.safe_dump(fixed), encoding="utf-8")
    scenario = {"apiVersion": "karpy.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "fix"},
                "spec": {"until": "30m", "events": [{"at": "10m", "apply": str(fix)}]}}
    result, doc = run([*ds, scenario])
    claims = launched(doc)
    assert claims and all(c["nodepool"] == "staging" for c in claims)
    assert min(c["created_at"] for c in claims) >= 600
    conds = {c["type"]: c for c in doc["nodeclasses"]["staging"]["conditions"]}
    assert conds["SubnetsReady"]["status"] == "True" and conds["Ready"]["status"] == "True"
    assert conds["SubnetsReady"]["last_transition_time"] == "2026-01-01T00:10:00Z"
    assert conds["AMIsReady"]["last_transition_time"] == "2026-01-01T00:00:00Z"  # unchanged: kept
    pool = {c["type"]: c for c in doc["nodepools"]["staging"]["conditions"]}
    # karpy runs the NodePool controllers with the provisioning pass the apply triggers (its 1 s batch)
    assert pool["Ready"]["status"] == "True" and pool["Ready"]["last_transition_time"] == "2026-01-01T00:10:01Z"
    assert not pending(doc)


DUMP_STATUS = {
    "conditions": [
        {"type": "AMIsReady", "status": "True", "reason": "AMIsReady", "message": "",
         "lastTransitionTime": "2025-11-02T08:00:00Z", "observedGeneration": 1},
        {"type": "SubnetsReady", "status": "False", "reason": "SubnetsNotFound",
         "message": "SubnetSelector did not match any Subnets", "lastTransitionTime": "2025-11-03T09:00:00Z",
         "observedGeneration": 1},
        {"type": "Ready", "status": "False", "reason": "UnhealthyDependents", "message": "SubnetsReady=False",
         "lastTransitionTime": "2025-11-03T09:00:00Z", "observedGeneration": 1},
    ],
    "securityGroups": [{"id": "sg-0a1b2c3d4e5f60001", "name": "eks-cluster-sg"}],
}


def test_a_dump_with_status_conditions_loads_and_they_are_reconciled(run) -> None:
    # ``kubectl get ec2nodeclass -o yaml``: status.conditions are the state before karpy's reconcile, as
    # status.subnets already are; what did not change keeps its transition time (operatorpkg Set)
    ds = [d for d in _manifests(1) if d["metadata"]["name"] != "staging"]
    nc = next(d for d in ds if d["kind"] == "EC2NodeClass")
    nc["metadata"].update({"generation": 1, "creationTimestamp": "2025-11-01T00:00:00Z", "uid": "1d9e5b0c",
                           "managedFields": [{"manager": "kubectl", "operation": "Apply",
                                              "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]})
    nc["status"] = DUMP_STATUS
    result, doc = run(ds)
    conds = {c["type"]: c for c in doc["nodeclasses"]["default"]["conditions"]}
    assert conds["AMIsReady"]["last_transition_time"] == "2025-11-02T08:00:00Z"
    assert conds["SubnetsReady"]["status"] == "True"
    assert conds["SubnetsReady"]["last_transition_time"] == "2026-01-01T00:00:00Z"
    assert conds["Ready"]["status"] == "True"
    # a dependent the dump lacks starts Unknown (For) and transitions to True now (operatorpkg Set)
    assert conds["PlacementGroupReady"]["last_transition_time"] == "2026-01-01T00:00:00Z"
    assert len(launched(doc)) == 1
