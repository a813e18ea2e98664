"""Schemas of the built-in Kubernetes kinds, from the JSON schemas ``kubernetes-validate`` ships.

``kubernetes-validate`` (PyPI) ships the OpenAPI definitions of every Kubernetes minor version as
JSON schema (``kubernetes-json-schema/v<version>-local-strict/_definitions.json``: structs closed
with ``additionalProperties: false``, IntOrString/Quantity as a ``oneOf`` of types). karpy reads
that file for :data:`KUBERNETES_VERSION` (the kube-scheduler it models) without importing the
package (its validator is jsonschema's and would not give the API server's field paths); the
definitions are compiled on first use into :class:`~karpy.admission.schema.Schema` nodes, once per
process, lazily per definition.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path
from typing import Any

from karpy.admission.schema import Schema, fill_schema

__all__ = ["KUBERNETES_VERSION", "BuiltinSchemas", "builtin_schemas"]

#: the Kubernetes version whose API schemas admit the built-in kinds (kube-scheduler v1.35)
KUBERNETES_VERSION = "1.35"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def _definitions_file(version: str) -> Path:
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("kubernetes-validate is not installed (pip install kubernetes-validate)")
    base = Path(next(iter(spec.submodule_search_locations)))
    path = base / "kubernetes-json-schema" / f"v{version}.0-local-strict" / "_definitions.json"
    if not path.exists():
        raise RuntimeError(f"kubernetes-validate has no schemas for Kubernetes {version} ({path})")
    return path


class BuiltinSchemas:
    """The compiled definitions of one Kubernetes version."""

    def __init__(self, version: str = KUBERNETES_VERSION) -> None:
        self.version = version
        raw = json.loads(_definitions_file(version).read_text(encoding="utf-8"))
        self._raw: dict[str, Any] = raw["$defs"]
        self._compiled: dict[str, Schema] = {}
        self._lock = threading.Lock()
        self._by_gvk: dict[tuple[str, str], str] = {}
        for name, d in self._raw.items():
            for gvk in d.get("x-kubernetes-group-version-kind") or ():
                group, ver, kind = gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", "")
                api_version = f"{group}/{ver}" if group else ver
                self._by_gvk.setdefault((api_version, kind), name)

    def definition(self, name: str) -> Schema:
        """The compiled definition ``name`` (e.g. ``io.k8s.api.core.v1.Pod``)."""
        with self._lock:
            return self._definition(name)

    def _definition(self, name: str) -> Schema:
        s = self._compiled.get(name)
        if s is None:
            s = self._compiled[name] = Schema()
            fill_schema(s, self._raw[name], self._resolve, json_schema=True)
        return s

    def _resolve(self, ref: str) -> Schema:
        return self._definition(ref.rsplit("/", 1)[-1])

    def for_kind(self, api_version: str, kind: str) -> Schema | None:
        """The schema of ``apiVersion``/``kind``, or None when the version has no such kind."""
        name = self._by_gvk.get((api_version, kind))
        return self.definition(name) if name else None

    def object_meta(self) -> Schema:
        return self.definition(OBJECT_META)


_lock = threading.Lock()
_cache: dict[str, BuiltinSchemas] = {}


def builtin_schemas(version: str = KUBERNETES_VERSION) -> BuiltinSchemas:
    """The (process-wide, immutable once built) schemas of ``version``."""
    with _lock:
        found = _cache.get(version)
        if found is None:
            found = _cache[version] = BuiltinSchemas(version)
        return found
