"""Hostile input (issue #15): every crash, hang and silent-wrong class found by fuzzing, one
regression test each. Contract: exit 2, one line ``karpy: <file>: document <n> (...): <field>: ...``
on stderr, no traceback, no hang, the input file unchanged; valid input exits 0 or 3."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

import karpy
from karpy.api.loader import DEFAULT_MAX_PODS, MAX_ALIAS_EXPANSION, MAX_YAML_DEPTH

NODEPOOL = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
"""


def deployment(replicas: str = "2", cpu: str = "500m", pod_extra: str = "") -> str:
    return f"""---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: default}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
{pod_extra}      containers:
        - name: app
          image: nginx
          resources: {{requests: {{cpu: {cpu}, memory: 1Gi}}}}
"""


@pytest.fixture
def run(invoke: Callable[..., Result], tmp_path: Path) -> Callable[..., tuple[Result, Path]]:
    """Write ``text`` to a manifest file, run ``karpy simulate FILE --cloud-provider fake ARGS``,
    and check the file was not changed."""

    def go(text: str | bytes, *args: str) -> tuple[Result, Path]:
        path = tmp_path / "in.yaml"
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        before = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
        res = invoke("simulate", str(path), "--cloud-provider", "fake", "-o", "json", *args)
        assert (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns) == before
        return res, path

    return go


def one_line(res: Result, *parts: str) -> str:
    """Assert the bad-input contract and that the line names every one of ``parts``."""
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("karpy: "), res.stderr
    assert "Traceback" not in res.output
    for part in parts:
        assert part in lines[0], (part, lines[0])
    assert res.stdout == ""
    return lines[0]


DEPLOY = 'document 2 (Deployment "web")'
CPU = "spec.template.spec.containers[0].resources.requests.cpu"


# -- numbers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("cpu, says", [
    (".inf", "finite"), ("-.inf", "finite"), (".nan", "finite"), ("1.0e400", "finite"),
    ("inf", "quantities must match"), ("nan", "quantities must match"),
    ("1e400", "exponent out of range"), ("'1e400'", "exponent out of range"),
])
def test_non_finite_and_huge_quantities(run: Callable[..., tuple[Result, Path]], cpu: str, says: str) -> None:
    res, path = run(NODEPOOL + deployment(cpu=cpu))
    one_line(res, str(path), DEPLOY, CPU, says)


def test_4300_digit_integer_names_the_field_and_stays_short(run: Callable[..., tuple[Result, Path]]) -> None:
    res, path = run(NODEPOOL + deployment(replicas="9" * 4300))
    line = one_line(res, str(path), DEPLOY, "spec.replicas", "less than or equal to 2147483647", "4,300 characters")
    assert len(line) < 400


def test_integer_past_pythons_digit_limit(run: Callable[..., tuple[Result, Path]]) -> None:
    res, path = run(NODEPOOL + deployment(replicas="9" * 4301))
    one_line(res, str(path), "document 2", "spec.replicas", "4301 digits", "at most 4300")


@pytest.mark.parametrize("extra, field, bound", [
    ("      priority: 99999999999999999999\n", "spec.template.spec.priority", "2147483647"),
    ("      priority: -2147483649\n", "spec.template.spec.priority", "-2147483648"),
    ("      terminationGracePeriodSeconds: 99999999999999999999999\n",
     "spec.template.spec.terminationGracePeriodSeconds", "9223372036854775807"),
])
def test_integer_overflows_name_the_field(run: Callable[..., tuple[Result, Path]], extra: str, field: str,
                                          bound: str) -> None:
    res, path = run(NODEPOOL + deployment(pod_extra=extra))
    one_line(res, str(path), DEPLOY, field, bound)


def test_replicas_past_int32(run: Callable[..., tuple[Result, Path]]) -> None:
    res, path = run(NODEPOOL + deployment(replicas=str(2**31)))
    one_line(res, str(path), DEPLOY, "spec.replicas", "2147483647")


def test_priorityclass_value_overflow(run: Callable[..., tuple[Result, Path]]) -> None:
    res, path = run(NODEPOOL + deployment() + "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                    "metadata: {name: low}\nvalue: -99999999999\n")
    one_line(res, str(path), 'document 3 (PriorityClass "low")', "value", "-2147483648")


# -- YAML tricks --------------------------------------------------------------------------------

def test_nul_byte(run: Callable[..., tuple[Result, Path]]) -> None:
    res, path = run(NODEPOOL + deployment() + "\x00\n")
    one_line(res, str(path), "document 1", "#x0000", "line 24")


@pytest.mark.parametrize("shape", ["[" * 5000 + "]" * 5000, "{a: " * 3000 + "1" + "}" * 3000],
                         ids=["brackets", "braces"])
def test_very_deep_nesting_cannot_recurse_out(run: Callable[..., tuple[Result, Path]], shape: str) -> None:
    res, path = run(NODEPOOL + deployment() + f"---\napiVersion: v1\nkind: ConfigMap\ndata: {shape}\n")
    one_line(res, str(path), "document 3", f"nested deeper than {MAX_YAML_DEPTH} levels", "line 27")


def test_deep_brackets_are_refused_while_scanning_not_after_minutes(run: Callable[..., tuple[Result, Path]]) -> None:
    """PyYAML's scanner is quadratic in open brackets: 200,000 of them must not take minutes."""
    res, path = run("a: " + "[" * 200_000)
    one_line(res, str(path), "document 1", f"nested deeper than {MAX_YAML_DEPTH} levels")


def test_nesting_past_the_depth_bound_names_the_path(run: Callable[..., tuple[Result, Path]]) -> None:
    levels = MAX_YAML_DEPTH * 2 // 3  # block levels, then as many flow levels: each within the
    # scanner's bound, together deeper than the document bound
    deep = "".join(f"{'  ' * i}k{i}:\n" for i in range(levels)) + "  " * levels + "x: " + "[" * levels + "]" * levels
    res, path = run(NODEPOOL + "---\n" + deep)
    one_line(res, str(path), "document 2", "k0.k1.k2", f"karpy reads at most {MAX_YAML_DEPTH}")


BOMB = "".join(f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi"))


def test_alias_bomb_is_bounded(run: Callable[..., tuple[Result, Path]]) -> None:
    res, path = run("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + BOMB)
    one_line(res, str(path), "document 1", "alias", f"at most {MAX_ALIAS_EXPANSION:,}")


def test_alias_bomb_inside_a_pod_is_bounded(run: Callable[..., tuple[Result, Path]]) -> None:
    """The bomb's anchors in a field karpy ignores, the blast in the container's args."""
    anchors = "".join(f"  {line}\n" for line in ("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
                                                  + BOMB).splitlines())
    pod = ("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nx-anchors:\n" + anchors
           + "spec:\n  containers:\n    - name: c\n      image: x\n      args: *i\n")
    res, path = run(NODEPOOL + pod)
    one_line(res, str(path), "document 2", "alias", f"at most {MAX_ALIAS_EXPANSION:,}")


def test_line_separators_in_a_quoted_value_keep_the_error_on_one_line(
        run: Callable[..., tuple[Result, Path]]) -> None:
    """Found by the fuzz test: a requirement key holding U+2028 was echoed raw, two "lines"."""
    res, path = run(NODEPOOL.replace("key: kubernetes.io/arch", "key: \"a\\u2028b\\x85c\"") + deployment())
    one_line(res, str(path), "document 1", "\\u2028")


def test_recursive_alias(run: Callable[..., tuple[Result, Path]]) -> None:
    res, path = run("a: &a [*a]\n")
    one_line(res, str(path), "document 1", "refers to itself")


# -- bounds and references -------------------------------------------------------------------

def test_absurd_replicas_stop_fast_with_the_limit_named(run: Callable[..., tuple[Result, Path]]) -> None:
    res, path = run(NODEPOOL + deployment(replicas="100000000"))
    one_line(res, str(path), DEPLOY, "spec.replicas", f"limit of {DEFAULT_MAX_PODS:,}", "--max-pods")


def rc(replicas: str = "3", pod_extra: str = "") -> str:
    """kubernetes/examples web/guestbook-go/guestbook-controller.yaml (279e8e4) in flow style."""
    return f"""---
kind: ReplicationController
apiVersion: v1
metadata: {{name: guestbook, labels: {{app: guestbook}}}}
spec:
  replicas: {replicas}
  selector: {{app: guestbook}}
  template:
    metadata: {{labels: {{app: guestbook}}}}
    spec:
{pod_extra}      containers: [{{name: guestbook, image: "registry.k8s.io/guestbook:v3"}}]
"""


RC = 'document 2 (ReplicationController "guestbook")'


def test_absurd_replicationcontroller_replicas_stop_fast_too(run: Callable[..., tuple[Result, Path]]) -> None:
    # the bound once missed ReplicationControllers: 10^8 replicas expanded until memory ran out
    res, path = run(NODEPOOL + rc(replicas="100000000"))
    one_line(res, str(path), RC, "spec.replicas", f"limit of {DEFAULT_MAX_PODS:,}", "--max-pods")


def test_replicationcontroller_template_names_a_missing_priorityclass(run: Callable[..., tuple[Result, Path]]) -> None:
    res, path = run(NODEPOOL + rc(pod_extra="      priorityClassName: nope\n"))
    one_line(res, str(path), RC, "spec.template.spec.priorityClassName", "no PriorityClass with name nope")


def test_max_pods_option_lowers_and_raises_the_limit(run: Callable[..., tuple[Result, Path]]) -> None:
    res, path = run(NODEPOOL + deployment(replicas="12"), "--max-pods", "10")
    one_line(res, str(path), DEPLOY, "spec.replicas", "limit of 10")
    res, _ = run(NODEPOOL + deployment(replicas="12"), "--max-pods", "12")
    assert res.exit_code == 0, res.output


def test_pod_bound_to_a_missing_node_is_rejected_not_running(run: Callable[..., tuple[Result, Path]]) -> None:
    res, path = run(NODEPOOL + deployment(pod_extra="      nodeName: ghost\n"))
    one_line(res, str(path), DEPLOY, "spec.template.spec.nodeName", 'no Node "ghost"')


def test_pod_bound_to_a_node_in_the_manifests_runs(run: Callable[..., tuple[Result, Path]]) -> None:
    node = ("---\napiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {kubernetes.io/hostname: n1}}\n"
            "status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n")
    res, _ = run(NODEPOOL + deployment(replicas="1", pod_extra="      nodeName: n1\n") + node)
    assert res.exit_code == 0, res.output


def test_missing_priorityclass_names_file_document_field(run: Callable[..., tuple[Result, Path]]) -> None:
    res, path = run(NODEPOOL + deployment(pod_extra="      priorityClassName: nope\n"))
    one_line(res, str(path), DEPLOY, "spec.template.spec.priorityClassName", "no PriorityClass with name nope")


def test_system_priorityclasses_need_no_manifest(run: Callable[..., tuple[Result, Path]]) -> None:
    res, _ = run(NODEPOOL + deployment(pod_extra="      priorityClassName: system-cluster-critical\n"))
    assert res.exit_code == 0, res.output


# -- options ------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, says", [
    (("-o", "xml"), "Invalid value for '-o' / '--output': 'xml'"),
    (("--preference-policy", "Sometimes"), "--preference-policy"),
    (("--bogus",), "No such option '--bogus'"),
    (("--region", ""), "Invalid value for '--region': must not be empty"),
    (("--prices", ""), "Invalid value for '--prices': must not be empty"),
    (("--cloud-provider", " "), "Invalid value for '--cloud-provider'"),
    (("--max-pods", "-1"), "--max-pods"),
])
def test_bad_option_values_are_one_line(invoke: Callable[..., Result], args: tuple[str, ...], says: str) -> None:
    res = invoke("simulate", *args)
    line = one_line(res, "simulate: ", says)
    assert "Usage:" not in res.output and "Try '" not in res.output, line


def test_unknown_command_is_one_line(invoke: Callable[..., Result]) -> None:
    one_line(invoke("simulat"), "No such command 'simulat'")


def test_library_rejects_empty_region_and_prices() -> None:
    for kwargs in ({"region": ""}, {"prices": " "}):
        with pytest.raises(ValueError, match=f"{next(iter(kwargs))} must not be empty"):
            karpy.simulate(NODEPOOL, cloud_provider="fake", **kwargs)


# -- --report -----------------------------------------------------------------------------------

def test_report_to_a_directory_is_refused_before_simulating(run: Callable[..., tuple[Result, Path]],
                                                            tmp_path: Path) -> None:
    res, _ = run(NODEPOOL + deployment(), "--report", str(tmp_path))
    one_line(res, f"--report {tmp_path}", "is a directory")


@pytest.mark.parametrize("target", ["/proc/karpy-report.html", "/nonexistent-dir/report.html"])
def test_report_to_an_unwritable_path_is_refused_before_simulating(
        run: Callable[..., tuple[Result, Path]], target: str) -> None:
    res, _ = run(NODEPOOL + deployment(), "--report", target)
    one_line(res, f"--report {target}", "cannot write")
    assert not Path(target).exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_report_into_a_read_only_directory(run: Callable[..., tuple[Result, Path]], tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    res, _ = run(NODEPOOL + deployment(), "--report", str(ro / "r.html"))
    one_line(res, "--report", "Permission denied")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_report_write_error_is_one_line(run: Callable[..., tuple[Result, Path]]) -> None:
    res, _ = run(NODEPOOL + deployment(), "--report", "/dev/full")
    one_line(res, "--report /dev/full", "cannot write", "No space left on device")


def test_report_check_leaves_an_existing_file_alone_until_written(
        run: Callable[..., tuple[Result, Path]], tmp_path: Path) -> None:
    report = tmp_path / "r.html"
    report.write_text("old")
    res, _ = run(NODEPOOL + deployment(cpu="inf"), "--report", str(report))  # bad input: nothing written
    assert res.exit_code == 2 and report.read_text() == "old"
    res, _ = run(NODEPOOL + deployment(), "--report", str(report))
    assert res.exit_code == 0 and report.read_text().startswith("<!DOCTYPE html>")
