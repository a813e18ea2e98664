"""The fuzz cases of the loader and the CLI (issue #15), shared by the CI test (``test_fuzz.py``)
and the long run (``run.py``).

A case is a few manifest files (real-shaped documents, mutated structurally -- a leaf replaced by a
hostile value, a key dropped or added, a kind or apiVersion changed -- then rendered as YAML or JSON
and sometimes mutated as text: a NUL, an alias bomb, deep brackets, a truncation, bad UTF-8) and
some command-line options (valid and invalid values). :func:`check` runs ``karpy simulate`` on it
in-process through click's runner (the fake cloud provider keeps a run ~50 ms) and classifies the
outcome against the contract:

* ``accepted``: exit 0 or 3 and a JSON document on stdout;
* ``clean error``: exit 2, exactly one line on stderr, starting ``karpy:``, no traceback, naming the
  file for manifest errors;
* ``crash``: anything else -- another exit code, an exception escaping, several lines, a changed
  input file;
* ``wrongly accepted``: accepted, but the case carries input the API server (or EC2) would refuse
  (issue 35's oracle, :func:`_oracle`): a malformed group/version or kind, a negative or wrongly
  typed count, a control character in an AWS string (checked with ``karpy validate --cloud-provider
  aws``: tags, a selector term's or a Network subnet's id), a Scenario event past ``--max-pods`` (a small
  bound of its own, so a missing check is accepted at once, not a hang) or with a negative or wrongly
  typed ``replicas`` (its Deployment always present);
* ``hang``: no answer within :data:`CASE_TIMEOUT_SECONDS` of CPU time (a SIGPROF interrupts the case;
  a SIGALRM after :data:`WALL_TIMEOUT_FACTOR` times as long of wall time, for a blocked case).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from hypothesis import strategies as st

from karpy.cli import cli

__all__ = ["CASE_TIMEOUT_SECONDS", "Case", "Outcome", "cases", "check"]

#: a case that spends more CPU seconds than this is a hang (valid cases run in well under a second)
CASE_TIMEOUT_SECONDS = 20
#: the wall-clock limit, for a case blocked without spending CPU, is this many times the CPU limit
WALL_TIMEOUT_FACTOR = 6

NODEPOOL = {
    "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "general"},
    "spec": {
        "template": {"spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                             {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
            "taints": [{"key": "team", "value": "a", "effect": "NoSchedule"}],
        }},
        "limits": {"cpu": "64"}, "weight": 10,
        "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "30s"},
    },
}
DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 2, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
            "tolerations": [{"key": "team", "operator": "Equal", "value": "a", "effect": "NoSchedule"}],
            "nodeSelector": {"kubernetes.io/arch": "amd64"},
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                           "whenUnsatisfiable": "ScheduleAnyway",
                                           "labelSelector": {"matchLabels": {"app": "web"}}}],
            "containers": [{"name": "app", "image": "nginx",
                            "resources": {"requests": {"cpu": "500m", "memory": "1Gi"},
                                          "limits": {"memory": "2Gi"}}}],
        }},
    },
}
POD = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "solo", "namespace": "default",
                                                    "annotations": {"note": "x"}},
    "spec": {"priorityClassName": "high", "tolerations": [{"operator": "Exists"}],
             "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": 1}}}]},
}
PRIORITY_CLASS = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                  "value": 1000}
JOB = {
    "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "batch", "namespace": "default"},
    "spec": {"parallelism": 2, "completions": 4, "template": {"spec": {
        "restartPolicy": "Never", "tolerations": [{"operator": "Exists"}],
        "containers": [{"name": "w", "image": "x", "resources": {"requests": {"cpu": "250m"}}}]}}},
}
PDB = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
       "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}}
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"k": "v"}}
#: kubernetes/examples web/guestbook-go/guestbook-controller.yaml (279e8e4), with a request
REPLICATION_CONTROLLER = {
    "kind": "ReplicationController", "apiVersion": "v1", "metadata": {"name": "guestbook", "labels": {"app": "guestbook"}},
    "spec": {"replicas": 3, "selector": {"app": "guestbook"}, "template": {
        "metadata": {"labels": {"app": "guestbook"}},
        "spec": {"containers": [{"name": "guestbook", "image": "registry.k8s.io/guestbook:v3",
                                 "ports": [{"name": "http-server", "containerPort": 3000}],
                                 "resources": {"requests": {"cpu": "100m"}}}]}}},
}
STATEFUL_SET = {
    "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
    "spec": {"replicas": 2, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
             "template": {"metadata": {"labels": {"app": "db"}}, "spec": {
                 "containers": [{"name": "db", "image": "postgres", "resources": {"requests": {"cpu": "1"}}}]}}},
}
CRON_JOB = {
    "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "default"},
    "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": {
        "restartPolicy": "OnFailure", "containers": [{"name": "n", "image": "busybox"}]}}}}},
}
BASE_DOCUMENTS = (NODEPOOL, DEPLOYMENT, POD, PRIORITY_CLASS, JOB, PDB, CONFIGMAP, REPLICATION_CONTROLLER,
                  STATEFUL_SET, CRON_JOB)

_BOMB = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi"))
TEXT_SNIPPETS = (
    "\x00", "\t", "\ufeff", "---\n", "...\n", "&x [*x]\n", "*undefined\n", "[" * 4000, "{a: " * 1000,
    "!!python/object:os.system [ls]\n", "<<: *nothing\n", "key: [unclosed\n", "? complex\n: key\n",
    "\n" + _BOMB, "x: 2026-13-45\n", "x: " + "9" * 4400 + "\n", "%YAML 1.1\n", "\"\\uD800\"\n", ": : :\n",
)
OPTION_CHOICES: tuple[tuple[str, ...], ...] = (
    ("-o", "table"), ("-o", "xml"), ("-o", ""), ("--region", ""), ("--region", "us-west-2"),
    ("--prices", ""), ("--prices", "1999-01-01"), ("--max-pods", "3"), ("--max-pods", "-5"),
    ("--max-pods", "1e9"), ("--unavailable", "*:*:*"), ("--unavailable", "nonsense"),
    ("--preference-policy", "Ignore"), ("--preference-policy", "respect"), ("--min-values-policy", "BestEffort"),
    ("--no-such-option",), ("--region",),
)

#: libyaml's emitter when PyYAML has it (generation is then a small part of a case)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

hostile_scalars = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 2**31 - 1, 2**31, -(2**31) - 1, 2**63, 10**30, 10**4299]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(), st.none(),
    st.sampled_from(["", " ", "inf", "nan", "1e400", "-1", "1Ki", "0.0001m", "100Mi", "1.5", "On", "no",
                     "a/b", "default", "web", "ghost", "system-node-critical", "karpenter.sh/v1", "v1beta1",
                     "In", "Exists", "Gt", "NoSchedule", "720h", "Never", "x" * 300, "\x00", "é", "\u2028"]),
    st.text(max_size=12),
)
hostile_values = st.recursive(hostile_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=6)


@dataclass
class Case:
    """Files to write (relative name -> bytes) and the CLI options; ``as_directory``: pass the
    directory instead of the file list. ``must_reject``: why the API server would refuse the input
    (None: no expectation); ``command``: ``simulate`` (fake provider) or ``validate`` (AWS kinds)."""

    files: dict[str, bytes]
    options: tuple[str, ...] = ()
    as_directory: bool = False
    notes: list[str] = field(default_factory=list)
    must_reject: str | None = None
    command: str = "simulate"


#: group/versions the API server cannot serve (apimachinery ParseGroupVersion, DNS-1123 subdomain
#: group, DNS-1035 label version)
MALFORMED_API_VERSIONS = ("*", "$(rm -rf /)", "日本語", "apps/v1/x", "/v1", "Apps/v1", "apps/V1", "v1 ", "a_b/v1",
                          "apps/1v", "apps/v1\x01".encode().decode("unicode_escape"), "-x.io/v1")
#: kinds that are no CamelCase identifier (a CRD's kind lowercased must be a DNS-1035 label)
MALFORMED_KINDS = ("Deployment ", " Pod", "Pod\t".encode().decode("unicode_escape"), "日本語", "1Widget",
                   "Node!", "Stateful Set", "a" * 64)
#: kind -> (apiVersion, count fields ValidateNonnegativeField checks)
COUNT_FIELDS = {"Deployment": ("apps/v1", ("replicas",)), "StatefulSet": ("apps/v1", ("replicas",)),
                "ReplicaSet": ("apps/v1", ("replicas",)), "ReplicationController": ("v1", ("replicas",)),
                "Job": ("batch/v1", ("parallelism", "completions"))}
#: what EC2 (and XML 1.0) cannot carry in a tag or filter value
CONTROL_TEXT = ("\x00", "\x01", "\x1b", "\x7f", "\ufffe", "\uffff", "\x85")
#: the --max-pods of the oracle's "past the bound" scale event (more than every base document's pods together)
_EVENT_BOUND = 40
EC2NODECLASS = {
    "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
    "spec": {"amiFamily": "AL2023", "role": "KarpenterNodeRole", "amiSelectorTerms": [{"alias": "al2023@latest"}],
             "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "example"}}],
             "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "example"}}]},
}
NETWORK = {"apiVersion": "karpy.io/v1alpha1", "kind": "Network", "metadata": {"name": "vpc"},
           "spec": {"subnets": [{"zone": "us-east-1a", "tags": {"karpenter.sh/discovery": "example"}}]}}


def _round_trips(text: str, group: list[Any], index: int) -> bool:
    """Whether document ``index`` of ``text`` reads back as the document it was dumped from."""
    try:
        back = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return True  # the file does not load: the loader's clean error is the expectation's business
    return index < len(back) and back[index] == group[index]


def _oracle(draw: Callable[..., Any], docs: list[Any], notes: list[str]) -> tuple[int, str, str, tuple[str, ...]] | None:
    """Add one input the API server would refuse (see the module doc): ``(document index, reason,
    command, options)``, or None when the case gets none."""
    cls = draw(st.sampled_from([None] * 8 + ["apiVersion", "kind", "count", "typed count", "aws text",
                                             "event"]))
    if cls is None:
        return None
    typed = [i for i, d in enumerate(docs) if isinstance(d, dict) and isinstance(d.get("kind"), str)
             and not d["kind"].endswith("List")]
    if cls in ("apiVersion", "kind"):
        if not typed:
            return None
        i = draw(st.sampled_from(typed))
        value = draw(st.sampled_from(MALFORMED_API_VERSIONS if cls == "apiVersion" else MALFORMED_KINDS))
        docs[i][cls] = value
        notes.append(f"oracle: {cls} {value!r} in document {i}")
        return i, f"malformed {cls} {value!r}", "simulate", ()
    if cls in ("count", "typed count"):
        counted = [i for i in typed if docs[i]["kind"] in COUNT_FIELDS and isinstance(docs[i].get("spec"), dict)
                   and docs[i].get("apiVersion") == COUNT_FIELDS[docs[i]["kind"]][0]]
        if not counted:
            return None
        i = draw(st.sampled_from(counted))
        name = draw(st.sampled_from(COUNT_FIELDS[docs[i]["kind"]][1]))
        value = draw(st.sampled_from([-1, -3, -(2**31)]) if cls == "count" else st.sampled_from(["3", True, "-1", 1.5]))
        docs[i]["spec"][name] = value
        notes.append(f"oracle: {cls} spec.{name}={value!r} in document {i}")
        return i, f"spec.{name} {value!r}", "simulate", ()
    if cls == "aws text":
        doc = copy.deepcopy(draw(st.sampled_from([EC2NODECLASS, NETWORK])))
        bad = f"a{draw(st.sampled_from(CONTROL_TEXT))}b"
        if doc["kind"] == "Network":
            where = draw(st.sampled_from(["tags", "id"]))  # the id goes to moto as the subnet's own id
            target = doc["spec"]["subnets"][0] if where == "id" else doc["spec"]["subnets"][0]["tags"]
        else:
            where = draw(st.sampled_from(["tags", "subnetSelectorTerms", "securityGroupSelectorTerms", "id"]))
            if where == "tags":
                doc["spec"]["tags"] = {}
                target = doc["spec"]["tags"]
            elif where == "id":  # a selector term's id is a filter value
                doc["spec"]["subnetSelectorTerms"] = [{"id": ""}]
                target = doc["spec"]["subnetSelectorTerms"][0]
            else:
                target = doc["spec"][where][0]["tags"]
        if where == "id":
            target["id"] = f"subnet-{bad}"
        elif draw(st.booleans()):
            target["team"] = bad
        else:
            target[f"team{bad}"] = "x"
        docs.append(doc)
        notes.append(f"oracle: aws text {bad!r} in a {doc['kind']}")
        return len(docs) - 1, f"control character {bad!r} in a {doc['kind']} {where}", "validate", ()
    replicas = draw(st.sampled_from([10**6, 2**31, -1, "3", True, 2.0, "past --max-pods"]))
    options: tuple[str, ...] = ()
    if replicas == "past --max-pods":  # a small bound: when the check is missing the run ends at once, accepted
        replicas, options = _EVENT_BOUND + 1, ("--max-pods", str(_EVENT_BOUND))
    if not any(isinstance(d, dict) and d.get("kind") == "Deployment" and isinstance(d.get("metadata"), dict)
               and d["metadata"].get("name") == "web" for d in docs):
        docs.append(copy.deepcopy(DEPLOYMENT))  # the event's target exists: it is judged on its count alone
    docs.append({"apiVersion": "karpy.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "oracle"},
                 "spec": {"events": [{"at": "1m", "scale": {"kind": "Deployment", "name": "web",
                                                           "replicas": replicas}}]}})
    notes.append(f"oracle: scale event replicas={replicas!r} {' '.join(options)}")
    return len(docs) - 1, f"a scale event to {replicas!r} replicas", "simulate", options


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


def _mutate(draw: Callable[..., Any], doc: Any, notes: list[str]) -> Any:
    paths = list(_paths(doc))
    path = draw(st.sampled_from(paths))
    op = draw(st.sampled_from(["replace", "replace", "replace", "delete", "add", "kind", "duplicate"]))
    notes.append(f"{op} {path}")
    if not path:
        return draw(hostile_values) if op == "replace" else doc
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if op == "replace":
        parent[last] = draw(hostile_values)
    elif op == "delete":
        del parent[last]
    elif op == "add" and isinstance(parent[last], dict):
        parent[last][draw(st.sampled_from(["name", "replicas", "nodeName", "priority", "x", "kind", "items"]))] = \
            draw(hostile_values)
    elif op == "add" and isinstance(parent[last], list):
        parent[last].append(draw(hostile_values))
    elif op == "kind" and isinstance(doc, dict):
        doc[draw(st.sampled_from(["kind", "apiVersion"]))] = draw(st.sampled_from(
            ["NodePool", "nodepool", "Pod", "List", "PodList", "karpenter.sh/v1beta1", "v2", "", "Deployment",
             "ReplicationController", "StatefulSet"]))
    elif op == "duplicate" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))
    return doc


def _json_safe(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_safe(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_safe(v) for v in value)
    return True


@st.composite
def cases(draw: Callable[..., Any]) -> Case:
    """One fuzz case (see the module doc)."""
    notes: list[str] = []
    chosen = draw(st.lists(st.sampled_from(range(1, len(BASE_DOCUMENTS))), min_size=1, max_size=4, unique=True))
    if BASE_DOCUMENTS.index(POD) in chosen and BASE_DOCUMENTS.index(PRIORITY_CLASS) not in chosen:
        chosen.append(BASE_DOCUMENTS.index(PRIORITY_CLASS))  # the pod names it
    docs = [copy.deepcopy(BASE_DOCUMENTS[i]) for i in (0, *chosen)]
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 1, 2, 3]))):
        i = draw(st.integers(min_value=0, max_value=len(docs) - 1))
        docs[i] = _mutate(draw, docs[i], notes)
    oracle = _oracle(draw, docs, notes)
    split = draw(st.integers(min_value=1, max_value=min(3, len(docs))))
    files: dict[str, bytes] = {}
    must_reject = oracle[1] if oracle is not None else None
    for f in range(split):
        group = docs[f::split]
        if draw(st.booleans()) and all(_json_safe(d) for d in group) and len(group) == 1:
            text = json.dumps(group[0], ensure_ascii=False)
            name = f"m{f}.json"
        else:
            text = yaml.dump_all(group, Dumper=_DUMPER, sort_keys=False, allow_unicode=True)
            name = f"m{f}.yaml"
            if oracle is not None and oracle[0] % split == f and not _round_trips(text, group, oracle[0] // split):
                # PyYAML writes U+0085 raw inside a quoted scalar, which YAML 1.1 reads back as a line
                # break folded to a space: the file no longer holds the text the API server refuses
                notes.append("oracle text does not survive the YAML round trip: no expectation")
                must_reject = None
        data = text.encode("utf-8", "surrogatepass")
        mode = draw(st.sampled_from(["none"] * 12 + ["insert", "insert", "truncate", "bytes"]))
        if mode != "none":
            at = draw(st.integers(min_value=0, max_value=len(data)))
            notes.append(f"text {mode} at {at} of {name}")
            if mode == "insert":
                data = data[:at] + draw(st.sampled_from(TEXT_SNIPPETS)).encode("utf-8", "surrogatepass") + data[at:]
            elif mode == "truncate":
                data = data[:at]
            else:
                data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\x80\x80", b"\r", b"\x1b"])) + data[at:]
            if oracle is not None and oracle[0] % split == f:
                must_reject = None  # a truncation may have cut the refused document off: no expectation
        files[name] = data
    command = oracle[2] if oracle is not None else "simulate"
    options = draw(st.sampled_from(OPTION_CHOICES)) if command == "simulate" and draw(st.integers(0, 3)) == 0 else ()
    if oracle is not None and oracle[3]:
        options = oracle[3]  # the oracle's own bound (another --max-pods would change what it judges)
    return Case(files, options, draw(st.booleans()), notes, must_reject, command)


@dataclass(frozen=True)
class Outcome:
    kind: str  # "accepted" | "clean error" | "crash" | "hang" | "wrongly accepted"
    detail: str = ""


class _Hang(BaseException):
    """Raised by the alarm: not an Exception, so nothing in karpy can swallow it."""


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """A hang is :data:`CASE_TIMEOUT_SECONDS` of this process's CPU time (``ITIMER_PROF``), so a
    loaded machine does not turn a slow case into a "hang"; a case blocked without spending CPU is
    caught by a wall-clock limit :data:`WALL_TIMEOUT_FACTOR` times longer (``ITIMER_REAL``)."""
    def ring(signum: int, frame: Any) -> None:
        raise _Hang

    previous = {sig: signal.signal(sig, ring) for sig in (signal.SIGALRM, signal.SIGPROF)}
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, seconds * WALL_TIMEOUT_FACTOR)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _digest(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


def check(case: Case, workdir: Path, runner: CliRunner | None = None) -> Outcome:
    """Run ``case`` in ``workdir`` (emptied first) and classify the outcome."""
    for old in workdir.iterdir():
        old.unlink()
    for name, data in case.files.items():
        (workdir / name).write_bytes(data)
    before = _digest(workdir)
    targets = [str(workdir)] if case.as_directory else [str(workdir / n) for n in sorted(case.files)]
    if case.command == "validate":
        args = ["validate", *targets, "--cloud-provider", "aws"]
    else:
        args = ["simulate", *targets, "--cloud-provider", "fake", "-o", "json", *case.options]
    try:
        with _deadline(CASE_TIMEOUT_SECONDS):
            res = (runner or CliRunner()).invoke(cli, args, catch_exceptions=True)
    except _Hang:
        return Outcome("hang", f"no answer within {CASE_TIMEOUT_SECONDS} CPU-s")
    if _digest(workdir) != before:
        return Outcome("crash", "an input file was changed")
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        return Outcome("crash", f"{type(res.exception).__name__}: {res.exception}"[:300])
    stderr_lines = [line for line in res.stderr.splitlines() if not line.startswith("karpy: simulating")]
    if res.exit_code in (0, 3):
        if case.must_reject is not None:
            return Outcome("wrongly accepted", f"the API server would refuse {case.must_reject}")
        if case.command == "validate":
            return Outcome("accepted")
        try:
            if "-o" not in case.options:  # the last -o wins: json unless the case chose another
                json.loads(res.stdout)
            elif not res.stdout.strip():
                raise ValueError("empty")
        except ValueError:
            return Outcome("crash", f"exit {res.exit_code} without a document on stdout")
        if any("Traceback" in line for line in stderr_lines):
            return Outcome("crash", "a traceback on stderr")
        return Outcome("accepted")
    if res.exit_code != 2:
        return Outcome("crash", f"exit {res.exit_code}: {res.output[-300:]}")
    if len(stderr_lines) != 1 or not stderr_lines[0].startswith("karpy: "):
        return Outcome("crash", f"exit 2 without exactly one 'karpy:' line: {res.stderr[-300:]!r}")
    line = stderr_lines[0]
    if "Traceback" in res.output:
        return Outcome("crash", "a traceback")
    if "document " in line or ".yaml" in line or ".json" in line:
        if not any(str(workdir / n) in line or str(workdir) in line for n in case.files):
            return Outcome("crash", f"a manifest error that names no input file: {line}")
    return Outcome("clean error", line)
