"""``karpy explain`` through click's CliRunner, on the fake cloud provider."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from karpy.cli import cli

MANIFESTS = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: heavy}
spec:
  weight: 100
  template:
    spec:
      nodeClassRef: {group: karpenter.test.sh, kind: TestNodeClass, name: default}
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [arm64]}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: light}
spec:
  weight: 10
  template:
    spec:
      nodeClassRef: {group: karpenter.test.sh, kind: TestNodeClass, name: default}
      requirements: []
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  nodeSelector: {kubernetes.io/arch: amd64}
  containers:
    - name: c
      image: pause
      resources: {requests: {cpu: "1"}}
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: shop}
spec:
  containers:
    - name: c
      image: pause
      resources: {requests: {cpu: "1000"}}
"""


@pytest.fixture()
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(MANIFESTS)
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, ["explain", *args, "--cloud-provider", "fake"])
    return res.exit_code, res.stdout, res.stderr


def test_summary_lists_every_nodeclaim_and_pending_pod(scenario: Path) -> None:
    code, out, err = invoke(str(scenario))
    assert code == 0, err
    answer, *_ = out.splitlines()
    assert " won: lowest price among " in answer  # the one-line answer first, the funnel after it
    assert "\nNODECLAIMS (1)\n" in out
    assert "nodepool light (weight 10)" in out
    assert "PENDING PODS (1)" in out and "Pod shop/huge  Pending  not placed" in out
    assert "nodepool heavy (weight 100): rejected: no instance type has enough resources" in out


def test_pod_json(scenario: Path) -> None:
    code, out, _ = invoke(str(scenario), "--pod", "shop/web", "-o", "json")
    assert code == 0
    d = json.loads(out)
    assert d["kind"] == "pod" and d["pod"] == "shop/web" and d["phase"] == "Running"
    assert [(n["nodepool"], n["result"]) for n in d["nodepools"]] == [("heavy", "rejected"), ("light", "chosen")]
    assert "kubernetes.io/arch In [amd64] not in kubernetes.io/arch In [arm64]" in d["nodepools"][0]["reason"]


def test_nodeclaim_text_and_json(scenario: Path) -> None:
    code, out, _ = invoke(str(scenario), "-o", "json")
    assert code == 0
    (name,) = json.loads(out)["nodeclaims"]
    code, out, _ = invoke(str(scenario), "--nodeclaim", name)
    assert code == 0
    assert " won: lowest price among " in out.splitlines()[0]
    assert out.splitlines()[1].startswith(f"NodeClaim {name}  nodepool light (weight 10)")
    assert "did not meet the requirement: kubernetes.io/arch In [amd64] [pods]" in out
    assert "launch: provider gives no launch detail" in out
    code, out, _ = invoke(str(scenario), "--nodeclaim", name, "-o", "json")
    d = json.loads(out)
    assert d["funnel"]["remaining"] == d["funnel"]["candidates"] == d["in_nodeclaim"]


def test_bare_pod_name_means_default_namespace(scenario: Path) -> None:
    code, _, err = invoke(str(scenario), "--pod", "web")
    assert code == 2
    assert "unknown pod 'default/web'" in err


@pytest.mark.parametrize(("args", "message"), [
    (["--pod", "shop/nope"], "karpy: unknown pod 'shop/nope'"),
    (["--nodeclaim", "nope"], "karpy: unknown NodeClaim 'nope'"),
    (["--pod", "shop/web", "--nodeclaim", "x"], "karpy: --pod and --nodeclaim are mutually exclusive"),
    (["--pod", "a/b/c"], "karpy: --pod 'a/b/c': expected NAMESPACE/NAME"),
])
def test_bad_input_exits_2_with_one_line(scenario: Path, args: list[str], message: str) -> None:
    code, out, err = invoke(str(scenario), *args)
    assert code == 2
    assert out == ""
    assert err.startswith(message) and err.count("\n") == 1
    assert "Traceback" not in err


def test_missing_path_is_bad_input(tmp_path: Path) -> None:
    code, _, err = invoke(str(tmp_path / "missing.yaml"))
    assert code == 2 and "no such file or directory" in err


def test_cli_output_is_deterministic(scenario: Path) -> None:
    assert invoke(str(scenario), "-o", "json") == invoke(str(scenario), "-o", "json")
    assert invoke(str(scenario)) == invoke(str(scenario))
