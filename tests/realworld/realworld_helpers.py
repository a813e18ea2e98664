"""Helpers of the real-world scenarios: upstream manifests in, karpy's answer out.

``data/`` holds upstream files verbatim, each with a first-line comment naming its source and
commit:

* ``data/aws/``          aws/karpenter-provider-aws at 1d927085 (``examples/v1``, ``examples/workloads``)
* ``data/blueprints/``   aws-samples/karpenter-blueprints at 529b88cf (``blueprints/``; the cluster's
  default NodePool and EC2NodeClass are the ``yaml_body`` heredocs of ``cluster/terraform/karpenter.tf``)
* ``data/k8s-examples/`` kubernetes/examples at 279e8e4f (``web/guestbook*``, ``databases/cassandra``)

Upstream workloads ship with ``replicas: 0`` (the READMEs say ``kubectl scale``): :func:`scale`
does that to the loaded documents, never to the files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

import karpy

DATA = Path(__file__).parent / "data"
#: the price table every scenario uses (a real, dated table)
PRICES = "2026-07-20"
#: the blueprints cluster's default EC2NodeClass + NodePool (karpenter.tf)
BLUEPRINTS_CLUSTER = "blueprints/cluster/terraform/karpenter-default.yaml"


def docs(*files: str) -> list[dict[str, Any]]:
    """The YAML documents of ``data/<file>...`` as dicts, in order."""
    out: list[dict[str, Any]] = []
    for f in files:
        out.extend(d for d in yaml.safe_load_all((DATA / f).read_text(encoding="utf-8")) if d)
    return out


def scale(documents: list[dict[str, Any]], name: str, replicas: int) -> list[dict[str, Any]]:
    """``kubectl scale --replicas`` on the loaded workload ``name`` (the file is untouched)."""
    hits = [d for d in documents if d.get("metadata", {}).get("name") == name
            and d.get("kind") in ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")]
    assert hits, f"no workload {name!r}"
    for d in hits:
        d["spec"]["replicas"] = replicas
    return documents


def on_demand(instance_type: str) -> float:
    """The on-demand $/h of ``instance_type`` in the scenarios' table."""
    from awsprovider.pricing import load_table

    price = load_table("us-east-1", PRICES).price(instance_type)
    assert price is not None, instance_type
    return price


def runner() -> Iterable[Callable[..., Any]]:
    """``run(documents, **simulate_kwargs)`` -> (result, document); the mocked EC2 is closed after
    (the ``run`` fixture of conftest.py)."""
    results: list[Any] = []

    def go(manifests: Any, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        kwargs.setdefault("prices", PRICES)
        result = karpy.simulate(manifests, **kwargs)
        results.append(result)
        return result, result.to_document()

    yield go
    for r in results:
        close = getattr(r.cloud_provider, "close", None)
        if close is not None:
            close()


def launched(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [nc for nc in document["nodeclaims"] if nc["instance_type"] is not None]


def pending(document: dict[str, Any]) -> dict[str, str | None]:
    return {k: v["message"] for k, v in document["pods"].items() if v["phase"] == "Pending"}
