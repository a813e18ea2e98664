"""Helpers for the launch-path tests: hand-built instance types (like upstream's fake catalogue) and
NodeClaims built the way Karpenter core builds them."""

from __future__ import annotations

from typing import Any

from awsprovider.labels import LABEL_INSTANCE_SIZE, WELL_KNOWN_LABELS
from karpy.api.nodeclaim import NodeClaim
from karpy.api.quantity import NANO
from karpy.cloudprovider.types import InstanceType, Offering, Offerings
from karpy.scheduling.labels import LABEL_ARCH, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_ZONE, OP_IN
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

GIB = 1024**3


def offering(ct: str, zone: str, price: float, available: bool = True) -> Offering:
    return Offering(Requirements(Requirement(LABEL_CAPACITY_TYPE, OP_IN, [ct]), Requirement(LABEL_ZONE, OP_IN, [zone])),
                    price, available)


def make_it(name: str, offerings: list[Offering], cpu: int = 2, mem_gib: int = 8, pods: int = 110,
            arch: str = "amd64", size: str | None = None, extra: dict[str, int] | None = None) -> InstanceType:
    reqs = Requirements(
        Requirement(LABEL_INSTANCE_TYPE, OP_IN, [name]),
        Requirement(LABEL_ARCH, OP_IN, [arch]),
        Requirement(LABEL_INSTANCE_SIZE, OP_IN, [size or name.split(".")[1]]),
        Requirement(LABEL_ZONE, OP_IN, sorted({o.zone for o in offerings})),
        Requirement(LABEL_CAPACITY_TYPE, OP_IN, sorted({o.capacity_type for o in offerings})),
    )
    cap = {"cpu": cpu * NANO, "memory": mem_gib * GIB * NANO, "pods": pods * NANO}
    cap.update({k: v * NANO for k, v in (extra or {}).items()})
    return InstanceType(name, reqs, Offerings(offerings), cap, well_known=WELL_KNOWN_LABELS)


def nodeclaim(name: str = "nc-1", requirements: list[dict[str, Any]] | None = None,
              annotations: dict[str, str] | None = None, labels: dict[str, str] | None = None,
              requests: dict[str, str] | None = None) -> NodeClaim:
    return NodeClaim.model_validate({
        "metadata": {"name": name, "annotations": annotations or {}, "labels": labels or {"karpenter.sh/nodepool": "default"}},
        "spec": {"requirements": requirements or [], "resources": {"requests": requests or {}},
                 "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}},
    })
