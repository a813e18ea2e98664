"""Finding cloud providers by name, the way Karpenter's providers plug into its core.

A provider registers itself under the ``karpy.cloudproviders`` entry-point group
(``aws = "awsprovider:AWSCloudProvider"``, ``fake = "karpy.cloudprovider.fake:FakeCloudProvider"``).
The registered object is a class (or any object) with a ``from_options(options)`` factory; it may
also carry ``EXTRA_KINDS`` — the manifest kinds it adds to the loader (e.g. ``EC2NodeClass``) — and
``NORMALIZED_LABELS`` — label aliases it adds to core's normalisation at start-up, as upstream's
providers extend ``v1.NormalizedLabels`` in an ``init()`` (:func:`register_provider`) — and
a ``preload()`` classmethod that imports what its first construction in a process imports (the
``karpy`` CLI calls it before a command builds the provider and freezes the result out of the
garbage collector's generations, :func:`karpy.cli.preload_cloud_provider`).
karpy itself never imports a provider package: it only looks the name up.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from karpy._errors import KarpyError
from karpy.options import Options
from karpy.scheduling.labels import register_normalized_labels

__all__ = ["ENTRY_POINT_GROUP", "ProviderOptions", "UnknownCloudProviderError", "available_cloud_providers",
           "refresh_cloud_providers", "register_provider", "resolve_cloud_provider"]

ENTRY_POINT_GROUP = "karpy.cloudproviders"


class UnknownCloudProviderError(KarpyError, ValueError):
    """No provider is registered under that name."""


@dataclass(frozen=True)
class ProviderOptions:
    """What a simulation hands a provider factory."""

    region: str | None = None
    #: a price-table date (``"2026-07-20"``), a path to a table, or None for the newest table
    prices: str | None = None
    #: injected capacity errors, ``TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE``
    unavailable: Sequence[str] = ()
    #: the simulation's virtual clock (``now() -> float`` seconds)
    clock: Any = None
    #: the loaded manifests (NodePools, NodeOverlays, provider kinds such as EC2NodeClass)
    manifests: Any = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: Karpenter's operator options (the same object the provisioner reads): min-values policy,
    #: preference policy, feature gates
    options: Options = field(default_factory=Options)
    #: price the run with another region's table (a proxy, said in every output); None = ``region``
    price_region: str | None = None


@functools.lru_cache(maxsize=8)
def _registered(search_path: tuple[str, ...]) -> tuple[EntryPoint, ...]:
    """The group's entry points as found on ``search_path`` (``sys.path``). Reading them opens every
    installed distribution's metadata (~150 files here, ~5 ms), once per path instead of once per
    simulation; a provider installed into an already-searched directory mid-process is found after
    :func:`refresh_cloud_providers`."""
    return tuple(entry_points(group=ENTRY_POINT_GROUP))


def refresh_cloud_providers() -> None:
    """Forget the entry points read so far (after installing a provider in a running process)."""
    _registered.cache_clear()


def available_cloud_providers() -> list[str]:
    """Names registered in the entry-point group, sorted."""
    return sorted(ep.name for ep in _registered(tuple(sys.path)))


def register_provider(provider: Any) -> Any:
    """What a provider adds to core at start-up (its ``NORMALIZED_LABELS``; aws
    pkg/operator/operator.go init); returns ``provider``. Process-wide and idempotent, as upstream."""
    aliases = getattr(provider, "NORMALIZED_LABELS", None)
    if aliases:
        register_normalized_labels(aliases)
    return provider


def resolve_cloud_provider(name: str) -> Any:
    """The registered provider class for ``name``; ``module:attr`` also works for unregistered ones."""
    for ep in _registered(tuple(sys.path)):
        if ep.name == name:
            return register_provider(ep.load())
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            return register_provider(getattr(importlib.import_module(module), attr))
        except (ImportError, AttributeError) as e:
            raise UnknownCloudProviderError(f"cannot load cloud provider {name!r}: {e}") from None
    known = ", ".join(available_cloud_providers()) or "none (is karpy installed with pip?)"
    raise UnknownCloudProviderError(f"unknown cloud provider {name!r}; registered: {known}")
