"""Loading manifests: files, directories, YAML text, dicts or model objects -> typed objects.

``load_manifests(sources, extra_kinds=None) -> Manifests``. Rules:

* a ``Path``, or a ``str`` without a newline that does not look like YAML, is a path; ``"-"`` is
  standard input; a directory is walked recursively in sorted order for ``*.yaml``/``*.yml``/``*.json``
  (hidden entries skipped; so are files that are not Kubernetes manifests -- Helm's ``Chart.yaml``
  and ``values*.yaml``, kustomize's ``kustomization.yaml`` -- files that are not regular files, e.g.
  a FIFO, and entries matching an ``exclude`` glob; each group is said in one warning);
* any other ``str`` is YAML text (``---``-separated documents); a ``dict`` is one document; a
  pydantic model is taken as is (deep-copied, so later simulation never touches the caller's object);
  a list/tuple mixes any of these;
* a ``List`` (``kind: List`` or ``<Kind>List`` with ``items``, as ``kubectl get -o yaml`` prints) is
  unpacked; empty documents are skipped (they still count for the document number);
* pods whose ``status.phase`` is ``Succeeded`` or ``Failed`` hold no capacity (kube-scheduler and
  Karpenter skip terminal pods): they go to ``Manifests.terminal_pods``, with one warning;
* well-formed kinds karpy does not model are skipped with one warning naming them all; a known kind at
  an unsupported apiVersion, a malformed group/version or kind (the API server's syntax,
  :func:`karpy.admission.kinds.malformed_type`), or a document without ``apiVersion``/``kind``, is an
  error;
* every error is a :class:`ManifestError` naming the file, the document (1-based) and the field path.

Input files are only read. YAML 1.1 turns unquoted ``on``/``no``/``yes`` into booleans and ``4`` into
an int; where a string is required the error says so and quotes the text as written (found by
walking PyYAML's node tree along the error's path).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import stat
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from karpy.admission import ADMITTED_UNMODELLED_KINDS, KUBERNETES_VERSION, AdmissionError, admit
from karpy.admission.kinds import malformed_type, unsupported_version, wrong_case_kind
from karpy.api.billing import BillingProfile
from karpy.api.meta import TypedObject
from karpy.api.node import Node
from karpy.api.nodeclaim import NodeClaim
from karpy.api.nodeoverlay import NodeOverlay
from karpy.api.nodepool import NodePool, written_fields
from karpy.api.objects import KINDS, lookup, supported_versions
from karpy.api.pod import Pod
from karpy.api.poddisruptionbudget import PodDisruptionBudget
from karpy.api.podgroup import (CompositePodGroup, PodGroup, SchedulingPodGroup, SchedulingPodGroupV1Alpha3,
                                SchedulingWorkload, SchedulingWorkloadV1Alpha3, Workload, group_reference_errors)
from karpy.api.priorityclass import SYSTEM_PRIORITY_CLASS_NAMES, PriorityClass
from karpy.api.scenario import Scenario
from karpy.api.served import LOADER_KUBERNETES_VERSION, admission_version, check_served
from karpy.api.service import Service
from karpy.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from karpy.api.workloads import (CronJob, DaemonSet, Deployment, Job, ReplicaSet, ReplicationController,
                                 StatefulSet)
from karpy._errors import KarpyError

__all__ = ["ManifestError", "Manifests", "load_manifests", "format_loc", "manifest_files"]

_EXTENSIONS = (".yaml", ".yml", ".json")
#: files a directory walk skips: not Kubernetes manifests (Helm chart metadata and values, kustomize)
NON_MANIFEST_FILES: tuple[str, ...] = ("Chart.yaml", "Chart.yml", "values.yaml", "values.yml", "values-*.yaml",
                                       "values-*.yml", "values.*.yaml", "values.*.yml", "kustomization.yaml",
                                       "kustomization.yml", "Kustomization")
#: the path that means standard input
STDIN = "-"
#: pod phases that hold no capacity (kube-scheduler and Karpenter skip terminal pods)
TERMINAL_PHASES = ("Succeeded", "Failed")
#: how many names a grouped warning spells out before "+N more"
_WARNING_NAMES = 5
_YAML_BOOLS = {"y", "yes", "n", "no", "true", "false", "on", "off"}

#: Manifests attribute for each built-in kind
_LIST_ATTR: Mapping[type[BaseModel], str] = {
    Pod: "pods", Node: "nodes", NodePool: "nodepools", NodeClaim: "nodeclaims", NodeOverlay: "nodeoverlays",
    PriorityClass: "priority_classes", PodDisruptionBudget: "pod_disruption_budgets", PodGroup: "pod_groups",
    Workload: "scheduling_workloads", Deployment: "deployments", ReplicaSet: "replica_sets",
    StatefulSet: "stateful_sets", Job: "jobs", DaemonSet: "daemon_sets", Scenario: "scenarios",
    PersistentVolumeClaim: "persistent_volume_claims", PersistentVolume: "persistent_volumes",
    StorageClass: "storage_classes", CSINode: "csi_nodes", Service: "services",
    ReplicationController: "replication_controllers", CronJob: "cron_jobs", BillingProfile: "billing_profiles",
    SchedulingWorkload: "workloads_v1beta1", SchedulingWorkloadV1Alpha3: "workloads_v1beta1",
    SchedulingPodGroup: "scheduling_pod_groups", SchedulingPodGroupV1Alpha3: "scheduling_pod_groups",
    CompositePodGroup: "composite_pod_groups",
}


class ManifestError(KarpyError, ValueError):
    """A bad manifest. ``str()`` is one line:
    ``<file>: document <n> (<Kind> "<name>"): <field.path[i]>: <message>``."""

    def __init__(self, file: str, document_index: int | None, field_path: str, message: str, *,
                 kind: str | None = None, name: str | None = None, line: int | None = None) -> None:
        self.file = file
        self.document_index = document_index
        self.field_path = field_path
        self.message = message
        self.kind = kind
        self.name = name
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [self.file]
        if self.document_index is not None:
            doc = f"document {self.document_index}"
            if self.kind:
                doc += f" ({self.kind} {self.name!r})".replace("'", '"') if self.name else f" ({self.kind})"
            parts.append(doc)
        if self.field_path:
            parts.append(self.field_path)
        parts.append(self.message)
        return ": ".join(parts)


@dataclass
class Manifests:
    """Loaded objects, one list per kind in input order, plus warnings."""

    pods: list[Pod] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    nodepools: list[NodePool] = field(default_factory=list)
    nodeclaims: list[NodeClaim] = field(default_factory=list)
    nodeoverlays: list[NodeOverlay] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    pod_disruption_budgets: list[PodDisruptionBudget] = field(default_factory=list)
    pod_groups: list[PodGroup] = field(default_factory=list)
    scheduling_workloads: list[Workload] = field(default_factory=list)
    #: scheduling.k8s.io/v1beta1 (or v1alpha3) Workloads, PodGroups and CompositePodGroups (k8s 1.37)
    workloads_v1beta1: list[SchedulingWorkload] = field(default_factory=list)
    scheduling_pod_groups: list[SchedulingPodGroup] = field(default_factory=list)
    composite_pod_groups: list[CompositePodGroup] = field(default_factory=list)
    deployments: list[Deployment] = field(default_factory=list)
    replica_sets: list[ReplicaSet] = field(default_factory=list)
    stateful_sets: list[StatefulSet] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    daemon_sets: list[DaemonSet] = field(default_factory=list)
    replication_controllers: list[ReplicationController] = field(default_factory=list)
    #: CronJobs are loaded (and validated) but not run: see :class:`karpy.api.workloads.CronJob`
    cron_jobs: list[CronJob] = field(default_factory=list)
    #: pods with ``status.phase`` Succeeded/Failed: reported, never scheduled, hold no capacity
    terminal_pods: list[Pod] = field(default_factory=list)
    #: karpy.io/v1alpha1 Scenario (at most one per run)
    scenarios: list[Scenario] = field(default_factory=list)
    #: karpy.io/v1alpha1 BillingProfile (at most one per run; karpy.billing)
    billing_profiles: list[BillingProfile] = field(default_factory=list)
    persistent_volume_claims: list[PersistentVolumeClaim] = field(default_factory=list)
    persistent_volumes: list[PersistentVolume] = field(default_factory=list)
    storage_classes: list[StorageClass] = field(default_factory=list)
    csi_nodes: list[CSINode] = field(default_factory=list)
    services: list[Service] = field(default_factory=list)
    #: objects of ``extra_kinds`` (e.g. ``EC2NodeClass``), by kind
    extra: dict[str, list[BaseModel]] = field(default_factory=dict)
    #: every object, in input order
    objects: list[BaseModel] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: the bound on pods alive at once these manifests were loaded with (``max_pods``; None:
    #: unbounded); Scenario events are held to it too (:mod:`karpy.sim.scenario`)
    max_pods: int | None = None
    #: ``id(object)`` -> (file, document index) it was read from (``<object>``: given as a model)
    origins: dict[int, tuple[str, int | None]] = field(default_factory=dict)

    def by_kind(self, kind: str) -> list[BaseModel]:
        """All loaded objects of ``kind`` (built-in or extra)."""
        return [o for o in self.objects if getattr(o, "kind", None) == kind or type(o).__name__ == kind]

    def workload_pods(self) -> list[Pod]:
        """Pods of the Deployments, ReplicaSets, StatefulSets, Jobs and ReplicationControllers (not
        DaemonSets), in that order and in input order within each kind.

        A dump (``kubectl get all -o yaml``) lists a workload together with what it already made:
        a Deployment's ReplicaSet and the ReplicaSet's pods. The controllers count those, so karpy
        does too: a Deployment whose ReplicaSet is given (ownerReferences) is represented by that
        ReplicaSet, and a workload's given pods (controller ownerReference, not terminal) count
        towards its replicas -- only the missing ones are created."""
        owned_rs = {(rs.metadata.namespace, ref.name) for rs in self.replica_sets
                    for ref in rs.metadata.owner_references or () if ref.controller and ref.kind == "Deployment"}
        given: dict[tuple[str, str, str], int] = {}
        for pod in self.pods:
            for ref in pod.metadata.owner_references or ():
                if ref.controller:
                    key = (ref.kind, pod.metadata.namespace, ref.name)
                    given[key] = given.get(key, 0) + 1
                    if ref.kind == "ReplicaSet":
                        h = (pod.metadata.labels or {}).get("pod-template-hash")
                        if h and ref.name.endswith(f"-{h}"):
                            dkey = ("Deployment", pod.metadata.namespace, ref.name[: -len(h) - 1])
                            given[dkey] = given.get(dkey, 0) + 1
        taken = {p.key for p in self.pods}
        out: list[Pod] = []
        for workloads in (self.deployments, self.replica_sets, self.stateful_sets, self.jobs,
                          self.replication_controllers):
            for w in workloads:
                kind, ns = type(w).__name__, w.metadata.namespace
                if kind == "Deployment" and (ns, w.metadata.name) in owned_rs:
                    continue
                have = given.get((kind, ns, w.metadata.name), 0)
                expanded = w.expand_pods()
                fresh = [p for p in expanded if p.key not in taken]
                have -= len(expanded) - len(fresh)  # given under the controller's own name (StatefulSets)
                out.extend(fresh[have:] if have > 0 else fresh)
        return out

    def all_pods(self) -> list[Pod]:
        """Explicit pods followed by the workloads' pods."""
        return [*self.pods, *self.workload_pods()]

    def daemonset_pods(self) -> list[Pod]:
        """One representative (template) pod per DaemonSet."""
        return [ds.template_pod() for ds in self.daemon_sets]


# ----------------------------------------------------------------------------------------------------
# error formatting


def format_loc(loc: Iterable[Any]) -> str:
    """``("spec", "containers", 0, "name")`` -> ``spec.containers[0].name``; odd keys are quoted."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part and all(c.isalnum() or c in "_-" for c in part):
            out += f".{part}" if out else part
        else:
            out += f"[{str(part)!r}]".replace("'", '"')
    return out


def _data_loc(data: Any, loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Keep only the loc parts that address the input: drop union-branch tags (``'int'``, ``'str'``)
    and ``'[key]'`` markers; a field missing from a mapping ends the path."""
    out: list[Any] = []
    cur = data
    for part in loc:
        if part == "[key]":
            continue
        if isinstance(cur, Mapping):
            out.append(part)
            if part not in cur:
                break
            cur = cur[part]
        elif isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur):
            out.append(part)
            cur = cur[part]
        else:
            break  # a scalar: what follows are validator tags
    return tuple(out)


def _node_at(node: yaml.Node | None, loc: tuple[Any, ...]) -> yaml.Node | None:
    """The YAML node addressed by ``loc`` in a composed document, if any."""
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return None
    return node


def _describe(error: Mapping[str, Any], node: yaml.Node | None) -> str:
    """One clear sentence for a pydantic error."""
    etype = error["type"]
    value = error.get("input")
    written = node.value if isinstance(node, yaml.ScalarNode) else None
    if etype == "string_type" and isinstance(value, bool):
        if written is not None and isinstance(node, yaml.ScalarNode) and not node.style:  # plain: None or ""
            return (f"must be a string; YAML 1.1 read the unquoted value `{written}` as a boolean — "
                    f"quote it (\"{written}\")")
        return (f"must be a string, got the boolean {value}; YAML 1.1 reads unquoted on/off/yes/no/true/false "
                f"as booleans — quote the value")
    if etype == "string_type" and isinstance(value, (int, float)):
        text = written if written is not None else str(value)
        return f"must be a string; YAML read the unquoted value `{text}` as a number — quote it (\"{text}\")"
    if etype == "missing":
        return "required field is missing"
    if etype in ("list_type", "dict_type", "model_type", "model_attributes_type"):
        want = "a list" if etype == "list_type" else "a mapping"
        return f"must be {want} (got {type(value).__name__} {value!r})"
    msg: str = error["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    elif msg.startswith("Assertion failed, "):
        msg = msg[len("Assertion failed, "):]
    else:
        if msg.startswith("Input should be"):
            msg = "must be" + msg[len("Input should be"):]
        if not isinstance(value, (dict, list)):
            msg += f" (got {_short(value)})"
    return msg


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut in the middle when long (a 4,300-digit integer stays one readable line)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit // 2]}...{text[-10:]} ({len(text):,} characters)"


# ----------------------------------------------------------------------------------------------------
# loading


class _ComposedText:
    """A text read from libyaml's events without composing (:func:`_read_yaml_events`), composed as
    the reference path composes it the first time an error message asks where something is."""

    __slots__ = ("text", "file", "_roots")

    def __init__(self, text: str, file: str) -> None:
        self.text, self.file = text, file
        self._roots: list[yaml.Node | None] | None = None

    def root(self, index: int) -> yaml.Node | None:
        if self._roots is None:
            docs = _read_yaml_composed(self.text, self.file) or _read_yaml_python(self.text, self.file)
            self._roots = [d.node for d in docs]
        return self._roots[index - 1] if index <= len(self._roots) else None


class _NodeLookup:
    """Where a document's (or a List item's) node is in a :class:`_ComposedText`."""

    __slots__ = ("_text", "_index", "_path")

    def __init__(self, text: _ComposedText, index: int, path: tuple[Any, ...] = ()) -> None:
        self._text, self._index, self._path = text, index, path

    def at(self, loc: tuple[Any, ...]) -> _NodeLookup:
        return _NodeLookup(self._text, self._index, self._path + loc)

    def node(self) -> yaml.Node | None:
        return _node_at(self._text.root(self._index), self._path)


def _child(source: yaml.Node | _NodeLookup | None, loc: tuple[Any, ...]) -> yaml.Node | _NodeLookup | None:
    return source.at(loc) if isinstance(source, _NodeLookup) else _node_at(source, loc)


@dataclass
class _Doc:
    """One document to validate: raw data, where it came from, and its YAML node tree if any
    (``source``: the tree, or where to find it once composed)."""

    data: Any
    file: str
    index: int
    source: yaml.Node | _NodeLookup | None = None
    prefix: tuple[Any, ...] = ()

    @property
    def node(self) -> yaml.Node | None:
        """The YAML node tree (composed now for a document read from events: only messages need it)."""
        s = self.source
        return s.node() if isinstance(s, _NodeLookup) else s

    @property
    def composed(self) -> yaml.Node | None:
        """The node tree if the read composed one (a document read from events had no duplicate key)."""
        return None if isinstance(self.source, _NodeLookup) else self.source


#: deepest nesting karpy reads (real manifests stay under ~25 levels; deeper input is hostile or broken)
MAX_YAML_DEPTH = 100
#: how many nodes YAML aliases may add to a document when expanded (bounds "billion laughs")
MAX_ALIAS_EXPANSION = 100_000


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with the nesting bounded while *scanning*: deep flow nesting (``[[[[...``)
    is quadratic in PyYAML's scanner (every open bracket keeps a possible simple key it re-checks
    per token) and recursive in its composer, so 100,000 brackets would hang or overflow the
    stack before any later check could run. Past :data:`MAX_YAML_DEPTH` levels, it stops with a
    ``ScannerError`` at the offending mark."""

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:  # noqa: N803 - PyYAML's name
        super().fetch_flow_collection_start(TokenClass)
        if self.flow_level > MAX_YAML_DEPTH:
            raise yaml.scanner.ScannerError(None, None, f"nested deeper than {MAX_YAML_DEPTH} levels "
                                            "(karpy's limit)", self.get_mark())

    def add_indent(self, column: int) -> bool:
        added: bool = super().add_indent(column)
        if len(self.indents) > MAX_YAML_DEPTH:
            raise yaml.scanner.ScannerError(None, None, f"nested deeper than {MAX_YAML_DEPTH} levels "
                                            "(karpy's limit)", self.get_mark())
        return added

    def construct_scalar(self, node: Any) -> Any:
        value = super().construct_scalar(node)
        if isinstance(value, str) and _SURROGATES.search(value):
            # a "\uD800" escape: no Unicode text (libyaml, and the go-yaml kubectl reads with, refuse it)
            raise yaml.scanner.ScannerError("while parsing a quoted scalar", node.start_mark,
                                            "found invalid Unicode character escape code (a surrogate)",
                                            node.start_mark)
        return value


#: a lone surrogate, which only a YAML escape can put in a string
_SURROGATES = re.compile("[\ud800-\udfff]")


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _step(node: yaml.Node, child: yaml.Node) -> Any:
    """The loc part that leads from ``node`` to ``child`` (a mapping key's text or a list index)."""
    if isinstance(node, yaml.SequenceNode):
        return next(i for i, c in enumerate(node.value) if c is child)
    for key, value in node.value:
        if child is value or child is key:
            return key.value if isinstance(key, yaml.ScalarNode) else "<key>"
    return "?"


def _check_shape(root: yaml.Node, file: str, index: int) -> None:
    """Reject a composed document that is too deep or whose aliases expand too far, before anything
    builds Python objects from it. One iterative post-order pass over the distinct nodes computes
    each node's expanded size and depth; a recursive alias (a cycle) is rejected too."""
    memo: dict[int, tuple[int, int]] = {}
    opened: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            kids = [memo[id(c)] for c in _children(node)]
            memo[key] = (1 + sum(k[0] for k in kids), 1 + max((k[1] for k in kids), default=0))
            opened.discard(key)
            continue
        if key in memo:
            continue
        if key in opened:
            raise ManifestError(file, index, "", "a YAML alias refers to itself (a recursive document)",
                                line=node.start_mark.line + 1)
        opened.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in memo)
    size, depth = memo[id(root)]
    if size - len(memo) > MAX_ALIAS_EXPANSION:
        raise ManifestError(file, index, "", f"YAML aliases expand this document by {size - len(memo):,} nodes; "
                                             f"karpy reads at most {MAX_ALIAS_EXPANSION:,} (an alias bomb?)")
    if depth > MAX_YAML_DEPTH:
        loc: list[Any] = []
        node = root
        while len(loc) < MAX_YAML_DEPTH and _children(node):
            child = max(_children(node), key=lambda c: memo[id(c)][1])
            loc.append(_step(node, child))
            node = child
        raise ManifestError(file, index, format_loc(loc), f"nested {depth} levels deep; karpy reads at most "
                                                          f"{MAX_YAML_DEPTH}", line=node.start_mark.line + 1)


def _find_long_int(root: yaml.Node) -> tuple[list[Any], yaml.Node] | None:
    """The first integer scalar longer than Python converts (``sys.get_int_max_str_digits``)."""
    limit = sys.get_int_max_str_digits()
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, list[Any]]] = [(root, [])]
    while stack:
        node, loc = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            if node.tag == "tag:yaml.org,2002:int" and limit and sum(c.isdigit() for c in node.value) > limit:
                return loc, node
            continue
        for child in reversed(_children(node)):
            stack.append((child, [*loc, _step(node, child)]))
    return None


#: libyaml's loader when PyYAML was built with it (``yaml.__with_libyaml__``), else None
_LIBYAML_LOADER: Any = getattr(yaml, "CSafeLoader", None) if getattr(yaml, "__with_libyaml__", False) else None
_OPENING_EVENTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSING_EVENTS = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _read_yaml(text: str, file: str) -> list[_Doc]:
    """The documents of ``text``: through libyaml when it is there and the text reads cleanly,
    else (and for every error) through :class:`_BoundedLoader`, whose results and messages are the
    reference."""
    text = _json_breaks_escaped(text)
    if _LIBYAML_LOADER is not None:
        docs = _read_yaml_libyaml(text, file)
        if docs is not None:
            return docs
    return _read_yaml_python(text, file)


#: characters a JSON string holds as they are and YAML 1.1 reads as line breaks (folded into a space)
_YAML_ONLY_BREAKS = re.compile("[\u0085\u2028\u2029]")


def _json_breaks_escaped(text: str) -> str:
    """A JSON document (kubectl reads one with a JSON decoder) with its raw U+0085, U+2028 and
    U+2029 written as JSON/YAML escapes, which YAML reads as the same characters: PyYAML had read a
    string holding U+0085 with a space in its place. Only inside JSON strings can they occur, so any
    other text is left as it is."""
    if not _YAML_ONLY_BREAKS.search(text) or text.lstrip()[:1] not in ("{", "["):
        return text
    try:
        json.loads(text)
    except ValueError:
        return text  # not JSON (a YAML flow collection): its own rules apply
    return _YAML_ONLY_BREAKS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


#: the tags a plain or quoted scalar may resolve to in a document read from events (PyYAML's safe
#: resolver's others -- merge ``<<``, value ``=`` -- and every explicit tag take the composing path)
_EVENT_SCALAR_TAGS = frozenset("tag:yaml.org,2002:" + t for t in ("str", "int", "float", "bool", "null", "timestamp"))
_STR_TAG = "tag:yaml.org,2002:str"


class _NotFromEvents(Exception):
    """The text holds something :func:`_read_yaml_events` leaves to the composing path."""


def _read_yaml_events(text: str, file: str) -> list[_Doc] | None:
    """The documents of ``text`` built straight from libyaml's events, without composing a node tree
    (libyaml's composer makes a node and two marks per scalar: a 5,000-pod kubectl dump took 4x as
    long to read), with PyYAML's own resolver and scalar constructors; None when the text holds
    anything else than plain collections of scalars -- an anchor, alias or explicit tag, a merge or
    value key, a collection as a key, a duplicated key, nesting past :data:`MAX_YAML_DEPTH` -- or does
    not read: :func:`_read_yaml_composed` reads it then. Each document's node tree is composed when a
    message needs a line (:class:`_NodeLookup`). Checked against the composing path by
    tests/api/test_loader_events.py."""
    assert _LIBYAML_LOADER is not None
    loader = _LIBYAML_LOADER(text)
    resolve, constructors = loader.resolve, loader.yaml_constructors
    scalar_node, scalar_event = yaml.ScalarNode, yaml.ScalarEvent
    mapping_start, sequence_start = yaml.MappingStartEvent, yaml.SequenceStartEvent
    closing = _CLOSING_EVENTS
    composed = _ComposedText(text, file)
    docs: list[_Doc] = []
    # open collections, under the document's own one-item list: [container, key awaiting its value
    # (mappings; _NO_KEY while the next key is awaited), raw keys seen (mappings)]
    stack: list[list[Any]] = []
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, scalar_event):
                if event.anchor is not None or event.tag not in (None, "!"):
                    raise _NotFromEvents
                raw = event.value
                tag = resolve(scalar_node, raw, event.implicit)
                if tag == _STR_TAG:
                    value: Any = raw
                elif tag in _EVENT_SCALAR_TAGS:
                    value = constructors[tag](loader, scalar_node(tag, raw))
                else:
                    raise _NotFromEvents
                top = stack[-1]
                if top[1] is _NO_KEY:
                    if raw in top[2]:
                        raise _NotFromEvents
                    top[2].add(raw)
                    top[1] = value
                else:
                    _put(top, value)
            elif isinstance(event, (mapping_start, sequence_start)):
                # (the document's list and the open collections: a scalar under the MAX_YAML_DEPTH-th
                # collection would be one level too deep, which the composing path says)
                if event.anchor is not None or event.tag not in (None, "!") or len(stack) >= MAX_YAML_DEPTH:
                    raise _NotFromEvents
                if stack[-1][1] is _NO_KEY:
                    raise _NotFromEvents  # a collection as a mapping key
                stack.append([{}, _NO_KEY, set()] if isinstance(event, mapping_start) else [[], None, None])
            elif isinstance(event, closing):
                _put(stack[-2], stack.pop()[0])
            elif isinstance(event, yaml.DocumentStartEvent):
                stack.append([[], None, None])
            elif isinstance(event, yaml.DocumentEndEvent):
                (root,) = stack.pop()[0]
                docs.append(_Doc(root, file, len(docs) + 1, _NodeLookup(composed, len(docs) + 1)))
            elif isinstance(event, yaml.AliasEvent):
                raise _NotFromEvents
    except Exception:  # noqa: BLE001 - _NotFromEvents, or text the composing path reads (or reports)
        return None
    finally:
        loader.dispose()
    return docs


#: a mapping waiting for its next key (None is a key YAML can write: ``~: x``)
_NO_KEY = object()


def _put(top: list[Any], value: Any) -> None:
    """``value`` into the open collection ``top``: a list, or a mapping whose key was read."""
    if type(top[0]) is list:
        top[0].append(value)
    else:
        top[0][top[1]] = value
        top[1] = _NO_KEY


def _read_yaml_libyaml(text: str, file: str) -> list[_Doc] | None:
    """The documents of ``text`` through libyaml: built from its events (:func:`_read_yaml_events`)
    or else composed (:func:`_read_yaml_composed`); None when the text goes the pure-Python way."""
    if yaml.reader.Reader.NON_PRINTABLE.search(text):
        return None
    docs = _read_yaml_events(text, file)
    return docs if docs is not None else _read_yaml_composed(text, file)


def _read_yaml_composed(text: str, file: str) -> list[_Doc] | None:
    """Compose and construct with libyaml (``CSafeLoader``: its scanner, parser and composer are C,
    the constructor and resolver are PyYAML's same Python classes), ~5x faster than the pure-Python
    loader on real manifests; None when the text should go the pure-Python way instead.

    Same results as :func:`_read_yaml_python`: the same data, node tags, values and start lines
    (checked on every manifest under tests/realworld; plain scalars' ``style`` is ``""`` here and
    None there, which the message helpers treat alike). The pure-Python loader stays the reference
    for everything else, so nothing about bad input changes: text its reader would reject
    (``Reader.NON_PRINTABLE``), nesting past :data:`MAX_YAML_DEPTH` -- found in a first pass over
    libyaml's events that stops at the limit, before anything deep is scanned further (libyaml's
    scanner is quadratic in flow nesting, like PyYAML's, and its composer recurses in C) -- and any
    error at all go to :func:`_read_yaml_python`, which then reports exactly what it always did.
    """
    if yaml.reader.Reader.NON_PRINTABLE.search(text):
        return None
    try:
        events = _LIBYAML_LOADER(text)
        try:
            depth = deepest = 0
            aliased = False
            while events.check_event():
                event = events.get_event()
                if isinstance(event, _OPENING_EVENTS):
                    depth += 1
                    if depth > MAX_YAML_DEPTH:
                        return None
                    deepest = max(deepest, depth)
                elif isinstance(event, _CLOSING_EVENTS):
                    depth -= 1
                elif isinstance(event, yaml.AliasEvent):
                    aliased = True
        finally:
            events.dispose()
        docs: list[_Doc] = []
        loader = _LIBYAML_LOADER(text)
        try:
            # without an alias nothing expands or loops, and no node is more than one level below
            # the deepest collection: _check_shape would pass
            _compose_documents(loader, file, docs, [None], check_shape=aliased or deepest >= MAX_YAML_DEPTH)
        finally:
            loader.dispose()
        return docs
    except Exception:  # noqa: BLE001 - the reference loader reads it again and says what is wrong
        return None


def _compose_documents(loader: Any, file: str, docs: list[_Doc], current: list[yaml.Node | None],
                       check_shape: bool = True) -> None:
    """Compose, check (:func:`_check_shape`) and construct every document of ``loader`` into
    ``docs``; ``current[0]`` is the node being constructed (what an error message points into).
    ``check_shape=False``: the text is known to pass the check (no alias, nested less than the limit)."""
    while loader.check_node():
        node = current[0] = loader.get_node()
        if node is not None and check_shape:
            _check_shape(node, file, len(docs) + 1)
        data = loader.construct_document(node) if node is not None else None
        docs.append(_Doc(data, file, len(docs) + 1, node))
        current[0] = None


def _read_yaml_python(text: str, file: str) -> list[_Doc]:
    docs: list[_Doc] = []
    loader: _BoundedLoader | None = None
    current: list[yaml.Node | None] = [None]
    try:
        loader = _BoundedLoader(text)  # its reader rejects NUL and other control characters
        _compose_documents(loader, file, docs, current)
    except ManifestError:
        raise
    except yaml.reader.ReaderError as e:
        line = text.count("\n", 0, e.position) + 1
        char = ord(e.character) if isinstance(e.character, str) else e.character
        raise ManifestError(file, len(docs) + 1, "",
                            f"invalid YAML: character #x{char:04x} is not allowed in YAML text (line {line})",
                            line=line) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e)
        context = getattr(e, "context", None)
        detail = f"{context}; {problem}" if context else problem
        raise ManifestError(file, len(docs) + 1, "", f"invalid YAML: {detail}{where}",
                            line=mark.line + 1 if mark is not None else None) from None
    except RecursionError:
        mark = loader.get_mark() if loader is not None else None
        raise ManifestError(file, len(docs) + 1, "",
                            "nested too deeply to read" + (f", line {mark.line + 1}" if mark is not None else "")
                            + f" (karpy reads at most {MAX_YAML_DEPTH} levels)",
                            line=mark.line + 1 if mark is not None else None) from None
    except ValueError as e:  # a value the constructor cannot build: an over-long integer, a bad date
        node = current[0]
        found = _find_long_int(node) if node is not None else None
        if found is not None:
            loc, scalar = found
            raise ManifestError(file, len(docs) + 1, format_loc(loc),
                                f"an integer of {len(scalar.value)} digits; karpy reads at most "
                                f"{sys.get_int_max_str_digits()} (Python's limit)",
                                line=scalar.start_mark.line + 1) from None
        raise ManifestError(file, len(docs) + 1, "", f"cannot read a value: {e}") from None
    finally:
        if loader is not None:
            loader.dispose()
    return docs


def _looks_like_yaml(s: str) -> bool:
    stripped = s.lstrip()
    return "\n" in s or stripped.startswith(("---", "{", "apiVersion", "kind")) or ": " in s


@dataclass
class _Walk:
    """State of one load: ``exclude`` globs, what the directory walks skipped, stdin read once."""

    exclude: tuple[str, ...] = ()
    not_manifests: list[str] = field(default_factory=list)
    not_regular: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    stdin_read: bool = False

    def is_excluded(self, path: Path, relative: Path) -> bool:
        rel = relative.as_posix()
        return any(fnmatch.fnmatchcase(rel, g) or fnmatch.fnmatchcase(path.name, g)
                   or fnmatch.fnmatchcase(str(path), g) for g in self.exclude)

    def warnings(self) -> list[str]:
        out = []
        for what, files in (("that {} not Kubernetes manifests (Helm chart/values, kustomization)",
                             self.not_manifests),
                            ("that {} not a regular file", self.not_regular),
                            ("matching --exclude", self.excluded)):
            if files:
                many = len(files) != 1
                out.append(f"skipped {len(files)} file{'s' if many else ''} {what.format('are' if many else 'is')}"
                           f": {_names(sorted(files))}")
        return out


def _names(items: list[str]) -> str:
    """``a, b, c, d, e, +2 more``."""
    shown = ", ".join(items[:_WARNING_NAMES])
    return shown + (f", +{len(items) - _WARNING_NAMES} more" if len(items) > _WARNING_NAMES else "")


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def _files_in(directory: Path, walk: _Walk | None = None) -> list[Path]:
    walk = walk or _Walk()
    found: list[Path] = []
    for root, dirs, files in os.walk(directory):
        kept_dirs = []
        for d in sorted(dirs):
            if d.startswith("."):
                continue
            if walk.exclude and walk.is_excluded(Path(root) / d, (Path(root) / d).relative_to(directory)):
                walk.excluded.append(str(Path(root) / d))
                continue
            kept_dirs.append(d)
        dirs[:] = kept_dirs
        for f in sorted(files):
            if f.startswith(".") or not f.endswith(_EXTENSIONS):
                continue
            path = Path(root) / f
            if walk.exclude and walk.is_excluded(path, path.relative_to(directory)):
                walk.excluded.append(str(path))
            elif any(fnmatch.fnmatchcase(f, g) for g in NON_MANIFEST_FILES):
                walk.not_manifests.append(str(path))
            elif not _is_regular(path):
                walk.not_regular.append(str(path))
            else:
                found.append(path)
    return sorted(found, key=lambda p: p.relative_to(directory).parts)


def manifest_files(path: Path) -> list[Path]:
    """The files :func:`load_manifests` reads for ``path``, in the order it reads them: the file
    itself, or a directory's ``*.yaml``/``*.yml``/``*.json`` files (sorted walk, hidden skipped)."""
    return _files_in(path) if path.is_dir() else [path]


def _read_stdin(walk: _Walk) -> list[_Doc]:
    if walk.stdin_read:
        raise ManifestError("<stdin>", None, "", "standard input (-) given more than once")
    walk.stdin_read = True
    try:
        text = sys.stdin.read()
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ManifestError("<stdin>", None, "", f"cannot read standard input: {e}") from None
    return _read_yaml(text, "<stdin>")


def _read_path(path: Path, walk: _Walk | None = None) -> list[_Doc]:
    walk = walk or _Walk()
    label = str(path)
    if label == STDIN:
        return _read_stdin(walk)
    if path.is_dir():
        out: list[_Doc] = []
        for f in _files_in(path, walk):
            out.extend(_read_path(f, walk))
        return out
    if not path.exists():
        raise ManifestError(label, None, "", "no such file or directory")
    if not _is_regular(path):
        raise ManifestError(label, None, "", "not a regular file (a FIFO, socket or device is not read)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ManifestError(label, None, "", f"cannot read file: {e}") from None
    return _read_yaml(text, label)


def _expand_sources(sources: Any, walk: _Walk | None = None) -> list[_Doc | BaseModel]:
    walk = walk or _Walk()
    items: list[Any]
    if isinstance(sources, (str, Path, Mapping, BaseModel)):
        items = [sources]
    else:
        items = list(sources)
    out: list[_Doc | BaseModel] = []
    for i, item in enumerate(items, start=1):
        if isinstance(item, BaseModel):
            out.append(item)
        elif isinstance(item, Mapping):
            out.append(_Doc(item, f"<dict {i}>", 1))
        elif isinstance(item, Path):
            out.extend(_read_path(item, walk))
        elif isinstance(item, str):
            if _looks_like_yaml(item):
                out.extend(_read_yaml(item, "<yaml text>" if len(items) == 1 else f"<yaml text {i}>"))
            else:
                out.extend(_read_path(Path(item) if item != STDIN else Path(STDIN), walk))
        else:
            raise ManifestError(f"<source {i}>", None, "",
                                f"cannot load a {type(item).__name__}: pass a path, YAML text, a dict or a model")
    return out


def _unpack_lists(doc: _Doc) -> list[_Doc]:
    """``kind: List`` (or ``FooList``) with ``items`` -> one _Doc per item (path prefix ``items[i]``)."""
    data = doc.data
    if isinstance(data, Mapping) and isinstance(data.get("kind"), str) and data["kind"].endswith("List") \
            and "items" in data:
        items = data.get("items") or []
        if not isinstance(items, list):
            raise ManifestError(doc.file, doc.index, format_loc((*doc.prefix, "items")),
                                "must be a list of objects", kind=data["kind"])
        item_kind = data["kind"][: -len("List")]
        out: list[_Doc] = []
        items_node = _child(doc.source, ("items",))
        for i, item in enumerate(items):
            if item_kind and isinstance(item, Mapping):
                item = {"apiVersion": data.get("apiVersion"), "kind": item_kind, **item}
            out.extend(_unpack_lists(_Doc(item, doc.file, doc.index, _child(items_node, (i,)),
                                          (*doc.prefix, "items", i))))
        return out
    return [doc]


def _own_copy(obj: BaseModel, extra_kinds: Mapping[tuple[str, str], type[BaseModel]] | None) -> BaseModel:
    """A copy of a model object the caller passed in, so the simulation never touches theirs.

    An object whose class is not the one registered for its kind (a class from another import of
    the module, e.g. after a test framework reloaded it) is rebuilt through the registered class,
    so every later ``type``/``isinstance`` check sees karpy's own classes.
    """
    cls = lookup(getattr(obj, "api_version", "") or "", getattr(obj, "kind", "") or "", extra_kinds)
    if cls is None or type(obj) is cls:
        return obj.model_copy(deep=True)
    return cls.model_validate(obj.model_dump(mode="json", by_alias=True, exclude_unset=False))


#: default bound on the pods one run creates (explicit pods plus workload replicas): an absurd
#: ``replicas`` is a fast, clear error instead of an hours-long run; raise it with ``max_pods``
#: (``karpy simulate --max-pods N``)
DEFAULT_MAX_PODS = 10_000


def static_nodes_over_limit(nodepool: NodePool, max_pods: int | None, replicas: int | None = None) -> str | None:
    """What a static NodePool whose nodes for ``replicas`` (default its own) pass the run's bound says,
    else None (``max_pods`` bounds the NodeClaims of static NodePools as it bounds pods: 1,000,000
    replicas was an 11 GB, endless run)."""
    nodes = nodepool.static_node_count(replicas)
    if max_pods is None or nodes is None or nodes <= max_pods:
        return None
    return (f"{nodes:,} static NodeClaims (spec.replicas, within limits.nodes) are more than karpy's limit of "
            f"{max_pods:,} per run (--max-pods bounds a static NodePool's nodes as it bounds pods); raise it "
            f"with --max-pods (library: max_pods=)")


def _pod_count(obj: BaseModel) -> tuple[int, str]:
    """How many pods ``obj`` creates at the start, and the field that says so."""
    if isinstance(obj, Pod):  # a Succeeded/Failed pod holds nothing and is never scheduled
        return (0 if obj.status is not None and obj.status.phase in ("Succeeded", "Failed") else 1), ""
    if isinstance(obj, Job):
        return obj.pod_count(), "spec.parallelism"
    if isinstance(obj, (Deployment, ReplicaSet, ReplicationController, StatefulSet)):
        return obj.pod_count(), "spec.replicas"
    return 0, ""


class _PodTally:
    """Pods alive at once, counted as the controllers count them: a dump lists a Deployment, its
    ReplicaSet and the ReplicaSet's pods, which are one set of pods, not three. Objects joined by
    controller ownerReferences (in either input order) form one family, which counts
    max(the largest replicas any member declares, the pods given); a union-find keeps it O(n)."""

    def __init__(self) -> None:
        self._parent: dict[tuple[str, str, str], tuple[str, str, str]] = {}
        self._declared: dict[tuple[str, str, str], int] = {}
        self._given: dict[tuple[str, str, str], int] = {}
        self.total = 0

    def _root(self, k: tuple[str, str, str]) -> tuple[str, str, str]:
        self._parent.setdefault(k, k)
        while self._parent[k] != k:
            self._parent[k] = self._parent[self._parent[k]]
            k = self._parent[k]
        return k

    def _value(self, r: tuple[str, str, str]) -> int:
        return max(self._declared.get(r, 0), self._given.get(r, 0))

    def add(self, obj: BaseModel, count: int) -> None:
        meta = getattr(obj, "metadata", None)
        if meta is None or not count:
            self.total += count
            return
        ns = getattr(meta, "namespace", None) or "default"
        r = self._root((ns, getattr(obj, "kind", None) or type(obj).__name__, meta.name or ""))
        self.total -= self._value(r)
        if isinstance(obj, Pod):
            self._given[r] = self._given.get(r, 0) + 1
        else:
            self._declared[r] = max(self._declared.get(r, 0), count)
        self.total += self._value(r)
        ref = meta.controller_ref() if hasattr(meta, "controller_ref") else None
        if ref is not None:
            o = self._root((ns, ref.kind, ref.name))
            if o != r:
                self.total -= self._value(r) + self._value(o)
                self._parent[r] = o
                self._declared[o] = max(self._declared.get(o, 0), self._declared.pop(r, 0))
                self._given[o] = self._given.get(o, 0) + self._given.pop(r, 0)
                self.total += self._value(o)


def _pod_specs(obj: BaseModel) -> list[tuple[str, Any]]:
    """(field prefix, PodSpec) of a Pod or of a workload's pod template."""
    if isinstance(obj, Pod):
        return [("spec", obj.spec)]
    if isinstance(obj, (Deployment, ReplicaSet, ReplicationController, StatefulSet, Job, DaemonSet)):
        return [("spec.template.spec", obj.spec.template.spec)]
    return []


def _check_references(result: Manifests, origins: Mapping[int, tuple[str, int | None]]) -> None:
    """Admission-time references that would otherwise fail late or silently: a pod bound
    (``nodeName``) to a Node that is not in the manifests would be reported Running on nothing (the
    kubelet never starts it; PodGC deletes it), and a ``priorityClassName`` that names no
    PriorityClass is rejected by the Priority admission plugin (admission.go: "no PriorityClass
    with name ... was found")."""
    nodes = {n.metadata.name for n in result.nodes}
    classes = {pc.metadata.name for pc in result.priority_classes} | SYSTEM_PRIORITY_CLASS_NAMES
    for obj in result.objects:
        if not isinstance(obj, TypedObject):  # only Pods and workloads (typed objects) carry pod specs
            continue
        file, index = origins.get(id(obj), ("<object>", None))
        for prefix, spec in _pod_specs(obj):
            kind, name = getattr(obj, "kind", None) or type(obj).__name__, obj.metadata.name
            if spec.node_name and spec.node_name not in nodes:
                raise ManifestError(file, index, f"{prefix}.nodeName",
                                    f"no Node {spec.node_name!r} in the manifests: a pod bound to a node that "
                                    "does not exist never runs (add the Node, or drop nodeName to let the "
                                    "scheduler place it)".replace("'", '"'), kind=kind, name=name)
            if spec.priority_class_name and spec.priority_class_name not in classes:
                raise ManifestError(file, index, f"{prefix}.priorityClassName",
                                    f"no PriorityClass with name {spec.priority_class_name} was found "
                                    "(add its scheduling.k8s.io/v1 PriorityClass manifest)", kind=kind, name=name)


def load_manifests(sources: Any,
                   extra_kinds: Mapping[tuple[str, str], type[BaseModel]] | None = None, *,
                   strict: bool = False, max_pods: int | None = DEFAULT_MAX_PODS,
                   exclude: Iterable[str] = (), kubernetes_version: str = LOADER_KUBERNETES_VERSION) -> Manifests:
    """Load ``sources`` (paths, YAML text, dicts, model objects, or a list of them) into :class:`Manifests`.

    ``extra_kinds`` maps ``(group, kind)`` (or ``(apiVersion, kind)``) to a pydantic model class, so a
    cloud provider can register e.g. ``("karpenter.k8s.aws", "EC2NodeClass")``. Every document is
    admitted first (:mod:`karpy.admission`: schema, defaults, CEL rules, names); unknown fields are
    warnings, or errors with ``strict=True``. ``max_pods`` bounds the pods the manifests create
    (None: no bound). Raises :class:`ManifestError` on the first bad document (or the first workload
    past ``max_pods``, or a dangling ``nodeName`` / ``priorityClassName``). ``exclude``: glob patterns;
    a directory walk skips files and directories whose name, path relative to the walked directory,
    or full path matches one. ``kubernetes_version``: the API server whose built-in kinds are
    admitted (``"1.35"``, ``"1.37"``): the scheduling.k8s.io group versions it serves, and
    ``spec.workloadRef`` (removed in 1.36) or ``spec.schedulingGroup`` (1.36+) on pods.
    """
    result = Manifests(max_pods=max_pods)
    skipped: dict[str, int] = {}
    seen: dict[tuple[str, str], str] = {}
    origins = result.origins
    tally = _PodTally()
    # the object after which the count went past max_pods: raised once all are read, since an owner
    # later in the input (a dump lists pods before their ReplicaSet) can still join a family
    crossing: list[tuple[str, int | None, str, BaseModel, int]] = []

    def admit(obj: BaseModel, file: str, index: int | None) -> None:
        _add(result, obj, seen, file, index, extra_kinds)
        origins[id(obj)] = (file, index)
        count, where = _pod_count(obj)
        tally.add(obj, count)
        if max_pods is None or tally.total <= max_pods:
            crossing.clear()
        elif not crossing:
            crossing.append((file, index, where, obj, count))

    walk = _Walk(tuple(exclude))
    for entry in _expand_sources(sources, walk):
        if isinstance(entry, BaseModel):
            admit(_own_copy(entry, extra_kinds), "<object>", None)
            continue
        for doc in _unpack_lists(entry):
            obj = _validate(doc, extra_kinds, skipped, strict=strict, warnings=result.warnings,
                            kubernetes_version=kubernetes_version)
            if obj is not None:
                admit(obj, doc.file, doc.index)
    if crossing and max_pods is not None:
        file, index, where, obj, count = crossing[0]
        raise ManifestError(file, index, where,
                            f"the manifests create {tally.total:,} pods (this one adds {count:,}), more than "
                            f"karpy's limit of {max_pods:,} per run; raise it with --max-pods "
                            f"(library: max_pods=)", kind=getattr(obj, "kind", None),
                            name=getattr(getattr(obj, "metadata", None), "name", None))
    _check_references(result, origins)
    for obj, where, message in group_reference_errors(result.workloads_v1beta1, result.scheduling_pod_groups,
                                                      result.composite_pod_groups):
        file, index = origins.get(id(obj), ("<object>", None))
        raise ManifestError(file, index, where, message, kind=obj.kind, name=obj.metadata.name)
    result.warnings.extend(walk.warnings())
    if skipped:
        names = ", ".join(f"{k} \u00d7{n}" if n > 1 else k for k, n in skipped.items())
        total = sum(skipped.values())
        result.warnings.append(f"skipped {total} document{'s' if total != 1 else ''} of kinds karpy does "
                               f"not model: {names}")
    if result.terminal_pods:
        terminal = [f"{p.key} ({p.status.phase})" for p in result.terminal_pods]
        n = len(terminal)
        result.warnings.append(f"ignored {n} terminal pod{'s' if n != 1 else ''} (status.phase Succeeded/Failed "
                               f"holds no capacity; kube-scheduler and Karpenter skip them): {_names(terminal)}")
    for cj in result.cron_jobs:
        result.warnings.append(cj.not_run_warning())
    return result


def _validate(doc: _Doc, extra_kinds: Mapping[tuple[str, str], type[BaseModel]] | None,
              skipped: dict[str, int], *, strict: bool = False, warnings: list[str] | None = None,
              kubernetes_version: str = LOADER_KUBERNETES_VERSION) -> BaseModel | None:
    data = doc.data
    if data is None:
        return None
    here = format_loc(doc.prefix)
    if not isinstance(data, Mapping):
        raise ManifestError(doc.file, doc.index, here,
                            f"a manifest must be a mapping with apiVersion and kind, not a {type(data).__name__}")
    raw_meta = data.get("metadata")
    name = raw_meta.get("name") if isinstance(raw_meta, Mapping) else None
    name = name if isinstance(name, str) else None
    kind, api_version = data.get("kind"), data.get("apiVersion")
    for key, value in (("apiVersion", api_version), ("kind", kind)):
        if value is None or value == "":
            raise ManifestError(doc.file, doc.index, format_loc((*doc.prefix, key)),
                                "required field is missing; every manifest needs apiVersion and kind",
                                kind=kind if isinstance(kind, str) else None, name=name)
        if not isinstance(value, str):
            raise ManifestError(doc.file, doc.index, format_loc((*doc.prefix, key)),
                                f"must be a string (got {value!r})", name=name)
    assert isinstance(kind, str) and isinstance(api_version, str)
    served = check_served(api_version, kind, data, kubernetes_version)
    if served is not None:
        raise ManifestError(doc.file, doc.index, format_loc((*doc.prefix, *served[0].split("."))), served[1],
                            kind=kind, name=name)
    cls = lookup(api_version, kind, extra_kinds)
    fixed_version = getattr(cls, "API_VERSION", "") if cls is not None else ""
    if cls is None or (fixed_version and fixed_version != api_version):
        malformed = malformed_type(api_version, kind)
        if malformed is not None:  # the API server serves no such type: bad input, not a kind to skip
            raise ManifestError(doc.file, doc.index, format_loc((*doc.prefix, malformed[0])), malformed[1],
                                name=name)
        versions = [fixed_version] if cls is not None else supported_versions(api_version, kind)
        if versions:
            raise ManifestError(doc.file, doc.index, format_loc((*doc.prefix, "apiVersion")),
                                unsupported_version(api_version, kind, versions), kind=kind, name=name)
        wrong_case = wrong_case_kind(api_version, kind, [*KINDS, *(extra_kinds or {})])
        if wrong_case:
            raise ManifestError(doc.file, doc.index, format_loc((*doc.prefix, "kind")), wrong_case, name=name)
        if (api_version, kind) in ADMITTED_UNMODELLED_KINDS:
            _admit(doc, None, kind, name, strict, warnings)  # not simulated, but the API server would check it
        label = f"{api_version} {kind}"
        skipped[label] = skipped.get(label, 0) + 1
        return None
    raw = data
    data = _admit(doc, cls, kind, name, strict, warnings, admission_version(api_version, kind, kubernetes_version))
    try:
        obj = cls.model_validate(data)
        if isinstance(obj, NodePool):
            obj._written = written_fields(raw)  # what the user wrote, before admission's defaults
        return obj
    except ValidationError as e:
        errors = e.errors()
        first = errors[0]
        loc = _data_loc(data, tuple(first["loc"]))
        node = _node_at(doc.node, loc)
        message = "; ".join([_describe(first, node), *(
            f"{format_loc((*doc.prefix, *_data_loc(data, tuple(x['loc']))))}: "
            f"{_describe(x, _node_at(doc.node, _data_loc(data, tuple(x['loc']))))}" for x in errors[1:])])
        line = node.start_mark.line + 1 if node is not None else None
        raise ManifestError(doc.file, doc.index, format_loc((*doc.prefix, *loc)), message,
                            kind=kind, name=name, line=line) from None


def _admit(doc: _Doc, cls: type[BaseModel] | None, kind: str, name: str | None, strict: bool,
           warnings: list[str] | None, kubernetes_version: str = KUBERNETES_VERSION) -> Mapping[str, Any]:
    """The document as the API server would store it (pruned, defaulted), or a ManifestError."""
    try:
        admitted = admit(doc.data, cls, node=doc.composed, strict=strict, kubernetes_version=kubernetes_version)
    except AdmissionError as e:
        first = e.errors[0]
        # every problem of the document, as the API server returns them all (and the unknown
        # fields it warns about: a typo'd key is often why a required one is missing)
        message = "; ".join([first.body + _yaml_hint(first, doc.node), *e.warnings,
                             *(str(x) + _yaml_hint(x, doc.node) for x in e.errors[1:])])
        field_path = ".".join(p for p in (format_loc(doc.prefix), first.field) if p)
        node = _node_at(doc.node, tuple(first.loc)) if first.loc else None
        raise ManifestError(doc.file, doc.index, field_path, message, kind=kind, name=name,
                            line=node.start_mark.line + 1 if node is not None else None) from None
    if warnings is not None:
        where = str(ManifestError(doc.file, doc.index, "", "", kind=kind, name=name))[:-2]
        warnings.extend(f"{where}: {w}" for w in admitted.warnings)
    return admitted.data


def _yaml_hint(error: Any, node: yaml.Node | None) -> str:
    """For a type error on a value YAML 1.1 typed (unquoted ``no``, ``4``), say so and how to quote it."""
    if error.type != "TypeInvalid" or error.value not in ("boolean", "integer", "number") or "type string" not in error.detail:
        return ""
    scalar = _node_at(node, tuple(error.loc)) if error.loc else None
    if isinstance(scalar, yaml.ScalarNode) and not scalar.style:  # plain (None, or "" from libyaml)
        kind = "a boolean" if error.value == "boolean" else "a number"
        return f"; YAML 1.1 read the unquoted value `{scalar.value}` as {kind} — quote it (\"{scalar.value}\")"
    if error.value == "boolean":
        return "; YAML 1.1 reads unquoted on/off/yes/no/true/false as booleans — quote the value"
    return ""


def _add(result: Manifests, obj: BaseModel, seen: dict[tuple[str, str], str], file: str, index: int | None,
         extra_kinds: Mapping[tuple[str, str], type[BaseModel]] | None) -> None:
    kind = getattr(obj, "kind", None) or type(obj).__name__
    if isinstance(obj, TypedObject):
        name = obj.metadata.name
        key = obj.key
        where = f"{file} document {index}" if index is not None else file
        if not name:
            if obj.metadata.generate_name is None:
                raise ManifestError(file, index, "metadata.name", "required field is missing", kind=kind)
        elif (kind, key) in seen:
            raise ManifestError(file, index, "metadata.name",
                                f"duplicate {kind} {key!r} (first defined in {seen[(kind, key)]})".replace("'", '"'),
                                kind=kind, name=name)
        else:
            seen[(kind, key)] = where
    if isinstance(obj, (Scenario, BillingProfile)):
        given: list[Any] = result.scenarios if isinstance(obj, Scenario) else result.billing_profiles
        if given:
            first = given[0].source
            raise ManifestError(file, index, "kind", f"a run takes one {kind}; another was defined in "
                                f"{first[0]}" + (f" document {first[1]}" if first[1] is not None else ""),
                                kind=kind, name=obj.metadata.name or None)
        obj._source = (file, index)
    attr = _LIST_ATTR.get(type(obj))
    if isinstance(obj, Pod) and obj.status.phase in TERMINAL_PHASES:
        attr = "terminal_pods"
    if attr is not None:
        getattr(result, attr).append(obj)
    else:
        result.extra.setdefault(kind, []).append(obj)
    result.objects.append(obj)
