"""The ``karpy.io/v1alpha1`` ``Sweep`` kind: a matrix of designs x workloads x price tables x
capacity scenarios x policies (x timeline scenarios) for ``karpy sweep``.

::

    apiVersion: karpy.io/v1alpha1
    kind: Sweep
    metadata: {name: generation-preference}
    spec:
      region: us-east-1                 # default us-east-1
      cloudProvider: aws                # default aws
      designs:                          # name -> path or list of paths (files or directories)
        one-nodepool: 01-one-nodepool/
        weighted: [02-weighted-nodepools/, extra.yaml]
      shared: [common/ec2nodeclass.yaml]   # manifests every cell runs with
      workloads:                        # optional axis: name -> path(s)
        six-pods: common/workload.yaml
      prices: all                       # all | [2025-09-01, 2026-07-20] | {from: 2024-01-01, to: 2026-12-31}
      featureGates: {NodeOverlay: true} # Karpenter --feature-gates for every cell (upstream defaults otherwise)
      kubernetesVersion: ["1.35", "1.37"]  # optional axis: the modelled kube-scheduler version(s)
      unavailable:                      # capacity scenarios: name -> TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE specs
        normal: []
        8th-gen-ice: ["*8i.*:*:on-demand"]
      preferencePolicies: [Respect]     # default [Respect]
      minValuesPolicies: [Strict]       # default [Strict]
      scenarios:                        # optional axis: timeline Scenario files ([] = settle, no Scenario)
        settle: []
        workday: scenarios/workday.yaml
      billing:                          # optional axis: BillingProfile files ([] = list prices only)
        list: []
        sp-m7i: billing/sp-m7i.yaml

Paths are relative to the sweep file. The file is read with YAML's base loader (every scalar a
string), so ``01`` stays ``"01"`` and dates stay text. ``prices`` omitted: the newest table only.
A price entry that is not a ``YYYY-MM-DD`` date is a price-table file (relative to the sweep file).
Bad input raises :class:`SweepError` naming the file and the field path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["API_VERSION", "KIND", "PriceRange", "SweepError", "SweepSpec", "load_sweep", "parse_sweep"]

API_VERSION = "karpy.io/v1alpha1"
KIND = "Sweep"
PREFERENCE_POLICIES = ("Respect", "Ignore")
MIN_VALUES_POLICIES = ("Strict", "BestEffort")
DEFAULT_CAPACITY = "normal"
"""Name of the single capacity scenario of a sweep without ``unavailable``."""
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SPEC_KEYS = ("region", "cloudProvider", "designs", "shared", "workloads", "prices", "unavailable",
              "preferencePolicies", "minValuesPolicies", "scenarios", "featureGates", "billing",
              "kubernetesVersion")


class SweepError(ValueError):
    """A bad sweep: ``str()`` is one line, ``<file>: <field.path>: <message>``."""

    def __init__(self, file: str, field_path: str, message: str) -> None:
        self.file, self.field_path, self.message = file, field_path, message
        super().__init__(f"{file}: {field_path}: {message}" if field_path else f"{file}: {message}")


@dataclass(frozen=True)
class PriceRange:
    """``prices: {from: DATE, to: DATE}``: every bundled table dated in [from, to] (either may be
    omitted)."""

    start: str | None = None
    end: str | None = None

    def select(self, dates: list[str]) -> list[str]:
        return [d for d in dates if (self.start is None or d >= self.start) and (self.end is None or d <= self.end)]


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep (paths resolved against ``base_dir``; mappings keep the file's order)."""

    name: str = "sweep"
    region: str = "us-east-1"
    cloud_provider: str = "aws"
    designs: Mapping[str, tuple[Path, ...]] = field(default_factory=dict)
    shared: tuple[Path, ...] = ()
    workloads: Mapping[str, tuple[Path, ...]] = field(default_factory=dict)
    #: a tuple of dates / table paths, "all", a PriceRange, or () for the newest table
    prices: tuple[str, ...] | str | PriceRange = ()
    unavailable: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: {DEFAULT_CAPACITY: ()})
    preference_policies: tuple[str, ...] = ("Respect",)
    min_values_policies: tuple[str, ...] = ("Strict",)
    #: timeline scenarios: name -> Scenario manifest paths (empty: no timeline axis)
    scenarios: Mapping[str, tuple[Path, ...]] = field(default_factory=dict)
    #: BillingProfiles: name -> manifest paths (empty: no billing axis; karpy.billing)
    billing: Mapping[str, tuple[Path, ...]] = field(default_factory=dict)
    #: Karpenter ``--feature-gates`` for every cell (name -> bool; upstream defaults otherwise)
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    #: ``kubernetesVersion``: the modelled Kubernetes versions (empty: no axis, the newest modelled)
    kubernetes_versions: tuple[str, ...] = ()
    source: str = "<sweep>"


class _Reader:
    def __init__(self, file: str, base_dir: Path) -> None:
        self.file, self.base_dir = file, base_dir

    def fail(self, where: str, message: str) -> SweepError:
        return SweepError(self.file, where, message)

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, f"must be a non-empty string, got {_show(value)}")
        return value.strip()

    def texts(self, value: Any, where: str, *, allow_empty: bool = True) -> tuple[str, ...]:
        if value is None or value == "":
            items: list[Any] = []
        elif isinstance(value, str):
            items = [value]
        elif isinstance(value, list):
            items = value
        else:
            raise self.fail(where, f"must be a string or a list of strings, got {_show(value)}")
        out = tuple(self.text(v, f"{where}[{i}]") for i, v in enumerate(items))
        if not out and not allow_empty:
            raise self.fail(where, "must name at least one entry")
        return out

    def paths(self, value: Any, where: str, *, allow_empty: bool = False) -> tuple[Path, ...]:
        out = []
        for i, text in enumerate(self.texts(value, where, allow_empty=allow_empty)):
            path = Path(text).expanduser()
            path = path if path.is_absolute() else self.base_dir / path
            if not path.exists():
                shown = f"{where}[{i}]" if isinstance(value, list) else where
                raise self.fail(shown, f"{text}: no such file or directory")
            out.append(path)
        return tuple(out)

    def mapping(self, value: Any, where: str, *, allow_empty: bool = True) -> dict[str, Any]:
        if value is None or value == "":
            value = {}
        if not isinstance(value, dict):
            raise self.fail(where, f"must be a mapping of name -> value, got {_show(value)}")
        if not value and not allow_empty:
            raise self.fail(where, "must name at least one entry")
        for k in value:
            self.text(k, f"{where} key")
        return value

    def choices(self, value: Any, where: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
        out = self.texts(value, where, allow_empty=False)
        for i, v in enumerate(out):
            if v not in allowed:
                raise self.fail(f"{where}[{i}]" if isinstance(value, list) else where,
                                f"{v!r} is not one of {', '.join(allowed)}")
        if len(set(out)) != len(out):
            raise self.fail(where, "lists a value twice")
        return out

    def prices(self, value: Any, where: str) -> tuple[str, ...] | str | PriceRange:
        if value is None or value == "":
            return ()
        if value == "all":
            return "all"
        if isinstance(value, dict):
            unknown = sorted(set(value) - {"from", "to"})
            if unknown:
                raise self.fail(f"{where}.{unknown[0]}", "unknown key; a range has 'from' and/or 'to'")
            bounds = {}
            for key in ("from", "to"):
                if key in value:
                    bound = self.text(value[key], f"{where}.{key}")
                    if not _DATE.match(bound):
                        raise self.fail(f"{where}.{key}", f"{bound!r} is not a YYYY-MM-DD date")
                    bounds[key] = bound
            return PriceRange(bounds.get("from"), bounds.get("to"))
        entries = self.texts(value, where, allow_empty=False)
        out = []
        for i, entry in enumerate(entries):
            if _DATE.match(entry):
                out.append(entry)
                continue
            path = Path(entry).expanduser()
            path = path if path.is_absolute() else self.base_dir / path
            if not path.is_file():
                raise self.fail(f"{where}[{i}]" if isinstance(value, list) else where,
                                f"{entry!r} is neither a YYYY-MM-DD date nor a price-table file")
            try:  # as --prices: a table that is not UTF-8 is bad input before the first cell, not every cell failing
                path.read_bytes().decode("utf-8")
            except UnicodeDecodeError as err:
                raise self.fail(f"{where}[{i}]" if isinstance(value, list) else where,
                                f"{path}: not UTF-8 text (byte 0x{err.object[err.start]:02x} at offset {err.start}); "
                                "a price table is a UTF-8 JSON or CSV file") from None
            except OSError:
                pass  # unreadable: the cell's price-table loader says so, naming the file
            out.append(str(path))
        if len(set(out)) != len(out):
            raise self.fail(where, "lists a price table twice")
        return tuple(out)


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def parse_sweep(document: Any, *, source: str = "<sweep>", base_dir: Path | str = ".") -> SweepSpec:
    """Validate one Sweep document (a dict as the base YAML loader gives it)."""
    r = _Reader(source, Path(base_dir))
    if not isinstance(document, dict):
        raise r.fail("", f"expected a {KIND} document (a mapping), got {_show(document)}")
    if document.get("apiVersion") != API_VERSION:
        raise r.fail("apiVersion", f"must be {API_VERSION!r}, got {_show(document.get('apiVersion'))}")
    if document.get("kind") != KIND:
        raise r.fail("kind", f"must be {KIND!r}, got {_show(document.get('kind'))}")
    meta = r.mapping(document.get("metadata"), "metadata")
    name = r.text(meta["name"], "metadata.name") if "name" in meta else "sweep"
    spec = r.mapping(document.get("spec"), "spec", allow_empty=False)
    for key in spec:
        if key not in _SPEC_KEYS:
            raise r.fail(f"spec.{key}", f"unknown field; expected one of {', '.join(_SPEC_KEYS)}")
    if "designs" not in spec:
        raise r.fail("spec.designs", "required: name -> manifests of each NodePool design")
    designs = {k: r.paths(v, f"spec.designs.{k}")
               for k, v in r.mapping(spec["designs"], "spec.designs", allow_empty=False).items()}
    workloads = {k: r.paths(v, f"spec.workloads.{k}")
                 for k, v in r.mapping(spec.get("workloads"), "spec.workloads").items()}
    scenarios = {k: r.paths(v, f"spec.scenarios.{k}", allow_empty=True)
                 for k, v in r.mapping(spec.get("scenarios"), "spec.scenarios").items()}
    billing = {k: r.paths(v, f"spec.billing.{k}", allow_empty=True)
               for k, v in r.mapping(spec.get("billing"), "spec.billing").items()}
    unavailable_raw = r.mapping(spec.get("unavailable"), "spec.unavailable")
    unavailable = ({k: r.texts(v, f"spec.unavailable.{k}") for k, v in unavailable_raw.items()}
                   or {DEFAULT_CAPACITY: ()})
    shared = r.paths(spec["shared"], "spec.shared") if spec.get("shared") else ()
    versions = _kubernetes_versions(r, spec.get("kubernetesVersion"))
    return SweepSpec(
        name=name,
        region=r.text(spec.get("region", "us-east-1"), "spec.region"),
        cloud_provider=r.text(spec.get("cloudProvider", "aws"), "spec.cloudProvider"),
        designs=designs, shared=shared, workloads=workloads,
        prices=r.prices(spec.get("prices"), "spec.prices"),
        unavailable=unavailable,
        preference_policies=r.choices(spec.get("preferencePolicies", ["Respect"]), "spec.preferencePolicies",
                                      PREFERENCE_POLICIES),
        min_values_policies=r.choices(spec.get("minValuesPolicies", ["Strict"]), "spec.minValuesPolicies",
                                      MIN_VALUES_POLICIES),
        scenarios=scenarios,
        billing=billing,
        feature_gates=_feature_gates(r, spec.get("featureGates"), versions),
        kubernetes_versions=versions,
        source=source,
    )


def _kubernetes_versions(r: Any, value: Any) -> tuple[str, ...]:
    """``spec.kubernetesVersion``: one version or a list (an axis), each a modelled one
    (karpy.featuregates.KUBERNETES_VERSIONS); omitted: no axis."""
    from karpy.featuregates import FeatureGateError, check_kubernetes_version

    out: list[str] = []
    for i, v in enumerate(r.texts(value, "spec.kubernetesVersion")):
        where = "spec.kubernetesVersion" if isinstance(value, str) else f"spec.kubernetesVersion[{i}]"
        try:
            version = check_kubernetes_version(v)
        except FeatureGateError as err:
            raise r.fail(where, str(err)) from None
        if version in out:
            raise r.fail(where, f"{version} is listed twice")
        out.append(version)
    return tuple(out)


def _feature_gates(r: Any, value: Any, versions: tuple[str, ...] = ()) -> dict[str, bool]:
    """``spec.featureGates``: ``{NodeOverlay: true, ...}`` checked against karpy.featuregates
    (Karpenter's gates and kube-scheduler's at each ``kubernetesVersion``, else the newest modelled)."""
    from karpy.featuregates import DEFAULT_KUBERNETES_VERSION, FeatureGateError, resolve, resolve_kubernetes, split_gates

    # the Sweep file is read with YAML's base loader (scalars stay text): true/false as written
    gates = {k: {"true": True, "false": False}.get(v, v) if isinstance(v, str) else v
             for k, v in r.mapping(value, "spec.featureGates").items()}
    try:
        for version in versions or (DEFAULT_KUBERNETES_VERSION,):
            karpenter, kube = split_gates(gates, version)
            resolve(karpenter)
            resolve_kubernetes(version, kube)
    except FeatureGateError as err:
        raise r.fail("spec.featureGates", str(err)) from None
    return dict(gates)


def load_sweep(path: str | Path) -> SweepSpec:
    """Read and validate a Sweep file (exactly one YAML document)."""
    path = Path(path)
    label = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SweepError(label, "", "no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise SweepError(label, "", f"cannot read file: {err}") from None
    try:
        documents = [d for d in yaml.load_all(text, Loader=yaml.BaseLoader) if d is not None]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise SweepError(label, "", f"invalid YAML: {getattr(err, 'problem', None) or err}{where}") from None
    if len(documents) != 1:
        raise SweepError(label, "", f"expected exactly one {KIND} document, found {len(documents)}")
    return parse_sweep(documents[0], source=label, base_dir=path.resolve().parent)
