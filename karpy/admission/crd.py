"""CustomResourceDefinitions: the structural schema of each served version, compiled once.

A CRD file (``apiextensions.k8s.io/v1`` ``CustomResourceDefinition``) gives the group, kind, scope
and, per version, ``schema.openAPIV3Schema``. karpy's own (``karpenter.sh``) CRDs live in
``karpy/admission/crds/``; a cloud provider ships its own and names them on its model classes
(``CRD``), e.g. the AWS provider's EC2NodeClass.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import yaml

from karpy.admission.schema import Schema, compile_schema

__all__ = ["CRD", "KARPENTER_CRDS", "load_crd"]

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class CRD:
    """One CRD: ``group``, ``kind``, ``namespaced``, and the compiled schema of each served version."""

    group: str
    kind: str
    namespaced: bool
    versions: Mapping[str, Schema] = field(repr=False)
    #: where it came from (for messages)
    source: str = ""

    def api_versions(self) -> list[str]:
        return [f"{self.group}/{v}" for v in self.versions]


def _karpenter(name: str) -> Traversable:
    return files("karpy.admission") / "crds" / name


#: (group, kind) -> CRD file of the Karpenter core kinds karpy models (kubernetes-sigs/karpenter 2266468)
KARPENTER_CRDS: Mapping[tuple[str, str], Traversable] = {
    ("karpenter.sh", "NodePool"): _karpenter("karpenter.sh_nodepools.yaml"),
    ("karpenter.sh", "NodeClaim"): _karpenter("karpenter.sh_nodeclaims.yaml"),
    ("karpenter.sh", "NodeOverlay"): _karpenter("karpenter.sh_nodeoverlays.yaml"),
}

_lock = threading.Lock()
_cache: dict[str, CRD] = {}


def load_crd(source: Traversable | Path | str) -> CRD:
    """The CRD in ``source`` (a file), compiled once per process."""
    key = str(source)
    with _lock:
        found = _cache.get(key)
        if found is None:
            text = source.read_text(encoding="utf-8") if not isinstance(source, str) else Path(source).read_text(
                encoding="utf-8")
            found = _cache[key] = _compile(yaml.load(text, Loader=_Loader), key)
        return found


def _compile(raw: Any, source: str) -> CRD:
    spec = raw["spec"]
    versions = {v["name"]: compile_schema(v["schema"]["openAPIV3Schema"])
                for v in spec["versions"] if v.get("served", True)}
    return CRD(group=spec["group"], kind=spec["names"]["kind"], namespaced=spec.get("scope") == "Namespaced",
               versions=versions, source=source)
