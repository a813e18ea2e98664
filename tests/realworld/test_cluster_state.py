"""A real cluster's state, read as Karpenter, the AWS provider and the kubelet read it (issue #31).

Shapes: aws-samples/karpenter-blueprints ``blueprints/stateful`` (an EBS CSI StorageClass whose
``allowedTopologies`` use ``topology.ebs.csi.aws.com/zone``, and a StatefulSet with a
volumeClaimTemplate; the README substitutes ``<<AVAILABILITY_ZONE>>>`` with ``sed``, done here on the
loaded documents) on the blueprints cluster's default NodePool and EC2NodeClass.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from realworld_helpers import BLUEPRINTS_CLUSTER, docs, launched, pending  # noqa: E402

STATEFUL = "blueprints/blueprints/stateful"


def _stateful(zone: str = "us-east-1b") -> list[dict[str, Any]]:
    documents = docs(BLUEPRINTS_CLUSTER, f"{STATEFUL}/storage.yaml", f"{STATEFUL}/workload.yaml")
    for d in documents:  # the README's sed of <<AVAILABILITY_ZONE>>>
        for term in d.get("allowedTopologies", ()):
            for expr in term["matchLabelExpressions"]:
                expr["values"] = [zone]
    return documents


def test_ebs_csi_zone_label_is_an_alias_of_the_zone(run) -> None:
    """aws pkg/operator/operator.go init(): ``topology.ebs.csi.aws.com/zone`` normalises to
    ``topology.kubernetes.io/zone``, so Karpenter launches in the class's zone (main: every pod
    pending with 'does not have known values (typo of "topology.kubernetes.io/zone"?)')."""
    result, doc = run(_stateful())
    nodes = launched(doc)
    assert nodes and {nc["zone"] for nc in nodes} == {"us-east-1b"}, pending(doc)
    assert not any("does not have known values" in (p.get("message") or "") for p in doc["pods"].values())
