"""``karpy validate PATH...``: admission alone, exit 0 / 2, warnings on stderr."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from karpy.cli import cli

GOOD = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
"""


def run(*args: str):
    return CliRunner().invoke(cli, ["validate", *args])


def test_valid_manifests_exit_zero(tmp_path: Path) -> None:
    f = tmp_path / "ok.yaml"
    f.write_text(GOOD)
    result = run(str(f))
    assert result.exit_code == 0, result.output
    assert "2 object(s) admitted" in result.output


def test_rejected_manifest_exits_two_with_one_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(GOOD.replace("karpenter.sh/capacity-type", "kubernetes.io/hostname"))
    result = run(str(f))
    assert result.exit_code == 2
    assert result.output == (f'karpy: {f}: document 1 (NodePool "default"): spec.template.spec.requirements[0].key: '
                             'Invalid value: "kubernetes.io/hostname": label "kubernetes.io/hostname" is restricted\n')


def test_unknown_fields_warn_and_strict_rejects(tmp_path: Path) -> None:
    f = tmp_path / "extra.yaml"
    f.write_text(GOOD.replace("  role: KarpenterNodeRole\n", "  role: KarpenterNodeRole\n  rol: typo\n"))
    result = run(str(f))
    assert result.exit_code == 0
    assert f'karpy: warning: {f}: document 2 (EC2NodeClass "default"): unknown field "spec.rol"' in result.output
    result = run("--strict", str(f))
    assert result.exit_code == 2 and 'strict decoding error: unknown field "spec.rol"' in result.output


def test_missing_path_is_bad_input(tmp_path: Path) -> None:
    result = run(str(tmp_path / "nope.yaml"))
    assert result.exit_code == 2 and "no such file or directory" in result.output
