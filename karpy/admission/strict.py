"""Strict decoding: duplicate mapping keys (sigs.k8s.io/json ``DisallowDuplicateFields``).

YAML (and PyYAML) keep the last of two equal keys; the API server's strict decoder reports
``duplicate field "spec.replicas"``. karpy finds them in the composed YAML node tree, so nothing about
how documents are constructed changes. Paths are the decoder's: keys dotted, indexes in brackets.
"""

from __future__ import annotations

import yaml

from karpy.admission.fielderrors import FieldError

__all__ = ["duplicate_fields"]


def duplicate_fields(node: yaml.Node | None) -> list[FieldError]:
    """Every duplicated mapping key under ``node``, in document order."""
    out: list[FieldError] = []
    if node is not None:
        _walk(node, "", out)
    return out


def _walk(node: yaml.Node, path: str, out: list[FieldError]) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.value == "<<":
                continue
            child = f"{path}.{key.value}" if path else key.value
            if key.value in seen:
                out.append(FieldError("Decoding", child, detail=f"duplicate field \"{child}\""))
            seen.add(key.value)
            _walk(value, child, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, f"{path}[{i}]", out)
