"""Input ergonomics and saying what is not modelled (issue #11), on real manifest shapes.

Shapes: upstream files of realworld_helpers.DATA (aws/karpenter-provider-aws 1d92708
``examples/``; kubernetes/examples 279e8e4 ``web/guestbook-go``), a Helm-rendered chart directory
as ``helm template`` / ``helm pull --untar`` leave it (Chart.yaml, values.yaml next to the rendered
manifests; chart shape as in kubernetes/examples' and common charts), a kustomize base
(kustomization.yaml), and ``kubectl get -o yaml`` output piped to stdin.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from realworld_helpers import DATA, PRICES  # noqa: E402

from karpy.api.loader import load_manifests  # noqa: E402
from karpy.cli import _Progress, cli  # noqa: E402
from karpy.report.table import group_pending  # noqa: E402

GENERAL = DATA / "aws/examples/v1/general-purpose.yaml"
INFLATE = DATA / "aws/examples/workloads/inflate.yaml"   # replicas unset -> 1 pod
GUESTBOOK = DATA / "k8s-examples/web/guestbook-go"


def invoke(*args: str, input: str | None = None):  # noqa: A002 - click's name
    result = CliRunner().invoke(cli, list(args), input=input)
    assert not (result.exception and not isinstance(result.exception, SystemExit)), result.output
    return result


def karpy_warnings(stderr: str) -> list[str]:
    return [line.removeprefix("karpy: warning: ") for line in stderr.splitlines() if line.startswith("karpy: warning: ")]


# ------------------------------------------------------------------------------------------ stdin

def test_dash_reads_manifests_from_stdin() -> None:
    """``kubectl get pods -A -o yaml | karpy simulate pools.yaml -`` (a v1 List on stdin)."""
    listing = json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "shop"},
         "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]},
         "status": {"phase": "Pending"}}]})
    res = invoke("simulate", str(GENERAL), "-", "--prices", PRICES, "--cloud-provider", "fake", "-o", "json",
                 input=listing)
    assert res.exit_code == 0, res.stderr
    assert list(json.loads(res.stdout)["pods"]) == ["shop/web-0"]
    twice = load_manifests  # stdin can be read once per load
    import io

    old = sys.stdin
    sys.stdin = io.StringIO(listing)
    try:
        with pytest.raises(ValueError, match="standard input"):
            twice(["-", "-"])
    finally:
        sys.stdin = old


# ------------------------------------------------------------------------------- directory walks

def _chart_dir(tmp_path: Path) -> Path:
    """A Helm chart directory with its rendered manifests (``helm template --output-dir``) and a
    kustomize overlay next to it."""
    root = tmp_path / "deploy"
    chart = root / "guestbook"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: guestbook\nversion: 0.1.0\nappVersion: \"v3\"\n")
    (chart / "values.yaml").write_text("replicaCount: 3\nimage:\n  repository: registry.k8s.io/guestbook\n")
    (chart / "values-prod.yaml").write_text("replicaCount: 6\n")
    for f in GUESTBOOK.iterdir():
        shutil.copy(f, chart / "templates" / f.name)
    (root / "kustomization.yaml").write_text("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                                             "resources:\n  - guestbook/templates\n")
    shutil.copy(GENERAL, root / "nodepool.yaml")
    return root


def test_walk_skips_chart_values_and_kustomization_with_one_warning(tmp_path: Path) -> None:
    root = _chart_dir(tmp_path)
    m = load_manifests(root)
    assert [np.metadata.name for np in m.nodepools] == ["general-purpose"]
    assert [rc.metadata.name for rc in m.replication_controllers] == ["guestbook", "redis-replica"]
    skipped = [w for w in m.warnings if "not Kubernetes manifests" in w]
    assert skipped == [f"skipped 4 files that are not Kubernetes manifests (Helm chart/values, kustomization): "
                       f"{root}/guestbook/Chart.yaml, {root}/guestbook/values-prod.yaml, "
                       f"{root}/guestbook/values.yaml, {root}/kustomization.yaml"]


def test_exclude_glob_skips_files_and_directories(tmp_path: Path) -> None:
    root = _chart_dir(tmp_path)
    m = load_manifests(root, exclude=["redis-*", "nodepool.yaml"])
    assert m.nodepools == [] and [rc.metadata.name for rc in m.replication_controllers] == ["guestbook"]
    assert any(w.startswith("skipped 3 files matching --exclude:") for w in m.warnings)
    res = invoke("simulate", str(root), "--exclude", "templates", "--cloud-provider", "fake", "-o", "json")
    assert res.exit_code == 0 and json.loads(res.stdout)["pods"] == {}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
def test_a_fifo_in_a_manifest_directory_is_skipped_and_does_not_block(tmp_path: Path) -> None:
    shutil.copy(GENERAL, tmp_path / "nodepool.yaml")
    os.mkfifo(tmp_path / "pipe.yaml")
    out: dict[str, object] = {}
    t = threading.Thread(target=lambda: out.setdefault("m", load_manifests(tmp_path)), daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():  # unblock the reader before failing
        with open(tmp_path / "pipe.yaml", "w"):
            pass
        pytest.fail("loading a directory with a FIFO blocked")
    m = out["m"]
    assert [np.metadata.name for np in m.nodepools] == ["general-purpose"]  # type: ignore[attr-defined]
    assert f"skipped 1 file that is not a regular file: {tmp_path}/pipe.yaml" in m.warnings  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------ warnings on stderr

@pytest.mark.parametrize("args", [["simulate"], ["simulate", "-o", "json"], ["explain"], ["explain", "-o", "json"]])
def test_loader_warnings_on_stderr_in_every_output_mode_once(tmp_path: Path, args: list[str]) -> None:
    root = _chart_dir(tmp_path)
    (root / "guestbook" / "templates" / "extra-service.yaml").write_text(
        (GUESTBOOK / "guestbook-service.yaml").read_text().replace("name: guestbook", "name: guestbook-2"))
    res = invoke(*args, str(root), "--cloud-provider", "fake")
    assert res.exit_code == 0, res.stderr
    warnings = karpy_warnings(res.stderr)
    # (the fake provider does not read EC2NodeClass: skipped too)
    # (the fake provider does not read EC2NodeClass; v1 Service is modelled since #12)
    assert "skipped 1 document of kinds karpy does not model: karpenter.k8s.aws/v1 EC2NodeClass" in warnings
    assert len(warnings) == len(set(warnings))
    assert "karpy: warning" not in res.stdout


def test_cronjob_is_loaded_and_said_not_run() -> None:
    # kubernetes/website content/en/examples/application/job/cronjob.yaml (the batch/v1 revision)
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "hello"},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure",
                "containers": [{"name": "hello", "image": "busybox:1.28", "command": ["/bin/sh", "-c", "date"]}]}}}}}}
    m = load_manifests([cron])
    assert [c.metadata.name for c in m.cron_jobs] == ["hello"] and m.all_pods() == []
    assert m.warnings == ["CronJob default/hello (schedule '* * * * *'): not run -- a run has no wall-clock schedule, "
                          "so its Jobs' pods are not created; give a Job for the capacity one run needs"]


# ------------------------------------------------------------------------------------- output

def test_pending_pods_grouped_by_owner() -> None:
    msg = "incompatible with nodepool \"gpu\""
    pending = [(f"default/web-7d4b9c8f6d-{s}", {"owner": "Deployment web", "message": msg, "nominated_node": None})
               for s in ("4xq9t", "b8mzk", "kd2r7")]
    pending.append(("default/solo", {"owner": None, "message": "x", "nominated_node": None}))
    assert group_pending(pending) == [("3 \u00d7 default/web-7d4b9c8f6d-\u2026 (Deployment web)", "-", msg),
                                      ("default/solo", "-", "x")]


def test_unavailable_error_names_the_option(tmp_path: Path) -> None:
    res = invoke("simulate", str(GENERAL), "--unavailable", "::::")
    assert res.exit_code == 2
    assert res.stderr.strip() == "karpy: --unavailable '::::': instance-type and zone globs must not be empty"
    res = invoke("simulate", str(GENERAL), "--unavailable", "c8i", "--cloud-provider", "fake")
    assert res.stderr.strip() == "karpy: --unavailable 'c8i': expected TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE"


def test_progress_line_ends_with_the_final_figures(capsys: pytest.CaptureFixture[str]) -> None:
    clock = iter([0.0, 3.0, 3.5, 41.0])
    p = _Progress(now=lambda: next(clock), tty=False)
    p(1.0, 1, 1)          # shown at 3 s wall: "t=1s, 1 pass"
    p(11.0, 2, 1)         # within 10 s of the last line: not shown
    p.done(41.0, 5, 3)    # the run ended: the last line says so
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["karpy: simulating... virtual t=1s, 1 provisioning passes, 1 NodeClaims (3s)",
                     "karpy: simulated virtual t=41s, 5 provisioning passes, 3 NodeClaims (41s)"]


def test_requirement_values_in_natural_order_in_instance_types(tmp_path: Path) -> None:
    """The blueprints cluster's default NodePool (instance-cpu In 4 8 16 32 48 64)."""
    pool = tmp_path / "pool.yaml"
    pool.write_text((DATA / "blueprints/cluster/terraform/karpenter-default.yaml").read_text())
    res = invoke("instance-types", "--nodepool", str(pool), "--limit", "1", "-o", "json")
    assert res.exit_code == 0, res.stderr
    reqs = {r["key"]: r["values"] for r in json.loads(res.stdout)["requirements"]}
    assert reqs["karpenter.k8s.aws/instance-cpu"] == ["4", "8", "16", "32", "48", "64"]


# ------------------------------------------------------------------------- prices, regions, spot

def test_prices_date_without_a_table_uses_the_newest_before_it_and_says_so() -> None:
    res = invoke("simulate", str(GENERAL), str(INFLATE), "--prices", "2025-10-01", "-o", "json")
    assert res.exit_code == 0, res.stderr
    prices = json.loads(res.stdout)["prices"]
    assert prices["date"] == "2025-09-01" and prices["requested_date"] == "2025-10-01"
    assert "no us-east-1 price table dated 2025-10-01: using 2025-09-01, the newest on or before it" \
        in karpy_warnings(res.stderr)
    table = invoke("simulate", str(GENERAL), str(INFLATE), "--prices", "2025-10-01")
    assert "no table dated 2025-10-01: using 2025-09-01, the newest on or before it" in table.stdout


def test_price_region_is_marked_proxy_in_table_json_explain_and_report(tmp_path: Path) -> None:
    args = [str(GENERAL), str(INFLATE), "--region", "eu-west-1", "--price-region", "us-east-1", "--prices", PRICES]
    doc = json.loads(invoke("simulate", *args, "-o", "json").stdout)
    assert doc["prices"]["proxy"] is True and doc["prices"]["region"] == "us-east-1" and doc["region"] == "eu-west-1"
    assert doc["nodeclaims"][0]["zone"].startswith("eu-west-1")
    report = tmp_path / "r.html"
    table = invoke("simulate", *args, "--report", str(report))
    proxy = "PROXY prices: the us-east-1 table stands in for eu-west-1"
    assert proxy in table.stdout and proxy in report.read_text()
    assert any(w.startswith("PROXY prices: the us-east-1 table (2026-07-20) prices this eu-west-1 run")
               for w in karpy_warnings(table.stderr))
    explained = invoke("explain", *args)
    # the one-line answer comes first (#37), the price header with its PROXY mark right under it
    assert any(proxy in line for line in explained.stdout.splitlines()[1:3])
    assert json.loads(invoke("explain", *args, "-o", "json").stdout)["prices"]["proxy"] is True


def test_spot_is_labelled_modelled_in_table_json_explain_and_report(tmp_path: Path) -> None:
    spot = DATA / "aws/examples/v1/spot.yaml"
    report = tmp_path / "r.html"
    table = invoke("simulate", str(spot), str(INFLATE), "--prices", PRICES, "--report", str(report))
    text = "spot prices modelled (spot-advisor savings + a per-zone offset), not measured"
    assert text in table.stdout and text in report.read_text()
    assert json.loads(invoke("simulate", str(spot), str(INFLATE), "--prices", PRICES, "-o", "json").stdout
                      )["prices"]["spot"] == "modelled"
    assert text in invoke("explain", str(spot), str(INFLATE), "--prices", PRICES).stdout


@pytest.mark.parametrize("region", ["us-gov-west-1", "cn-north-1"])
def test_listed_price_regions_that_cannot_be_simulated_are_rejected_clearly(region: str) -> None:
    res = invoke("simulate", str(GENERAL), str(INFLATE), "--region", region)
    assert res.exit_code == 2
    assert res.stderr.startswith(f"karpy: region '{region}' cannot be simulated: the mocked EC2 (moto) has no "
                                 "instance-type offerings for it")
    listing = json.loads(invoke("prices", "-o", "json").stdout)
    assert region not in [r["region"] for r in listing["regions"]]
    assert region in [r["region"] for r in listing["price_region_only"]]


def test_instance_types_and_prices_diff_nodepool_share_simulates_path() -> None:
    """aws/karpenter-provider-aws 1d92708 examples/v1/general-purpose.yaml: simulate works on it, so must
    these (they failed with "selects no subnets")."""
    its = invoke("instance-types", "--nodepool", str(GENERAL), "--limit", "3", "-o", "json")
    assert its.exit_code == 0, its.stderr
    doc = json.loads(its.stdout)
    assert doc["nodepool"] == "general-purpose" and doc["shown"] == 3
    assert all(t["labels"]["karpenter.k8s.aws/instance-category"] in ("c", "m", "r") for t in doc["instance_types"])
    diff = invoke("prices", "diff", "2025-09-01", PRICES, "--nodepool", str(GENERAL), "--top", "3", "-o", "json")
    assert diff.exit_code == 0, diff.stderr
    assert json.loads(diff.stdout)["nodepool"] == "general-purpose"


# ------------------------------------------------------------- unknown fields, --report, regions
# (aws/karpenter-provider-aws 1d92708 examples/v1/general-purpose.yaml, edited as a user slips)

def test_requirements_typo_in_an_upstream_nodepool_is_an_error_naming_the_field(tmp_path: Path) -> None:
    """``requirments:`` gave an unrestricted pool and exit 0 without a word; the v1 CRD requires
    ``requirements``, so admission now says so, and names the typo beside it (main: "(and 1 more
    problem in this document)", which was the CEL rules' note, not the typo)."""
    pool = tmp_path / "general-purpose.yaml"
    pool.write_text(GENERAL.read_text().replace("      requirements:", "      requirments:"))
    res = invoke("simulate", str(pool), str(INFLATE))
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.strip().splitlines() == [
        f'karpy: {pool}: document 1 (NodePool "general-purpose"): spec.template.spec.requirements: Required value; '
        'unknown field "spec.template.spec.requirments"; <nil>: Invalid value: null: some validation rules were not '
        "checked because the object was invalid; correct the existing errors to complete validation"]
    check = invoke("validate", str(pool))  # karpy validate says the same
    assert check.exit_code == 2 and 'Required value; unknown field "spec.template.spec.requirments"' in check.stderr


def test_optional_field_typo_in_an_upstream_nodepool_is_warned_and_strict_rejects_it(tmp_path: Path) -> None:
    """examples/v1/max-node-lifetime.yaml with ``expireAftr:``: the default 720h would apply silently."""
    pool = tmp_path / "max-node-lifetime.yaml"
    pool.write_text((DATA / "aws/examples/v1/max-node-lifetime.yaml").read_text().replace("expireAfter:", "expireAftr:"))
    res = invoke("simulate", str(pool), str(INFLATE), "--prices", PRICES, "-o", "json")
    assert res.exit_code == 0, res.stderr
    said = f'{pool}: document 1 (NodePool "default"): unknown field "spec.template.spec.expireAftr"'
    assert said in karpy_warnings(res.stderr) and said in json.loads(res.stdout)["warnings"]
    strict = invoke("simulate", str(pool), str(INFLATE), "--strict")
    assert strict.exit_code == 2 and strict.stdout == ""
    assert strict.stderr.strip().splitlines() == [
        f'karpy: {pool}: document 1 (NodePool "default"): spec.template.spec.expireAftr: '
        'strict decoding error: unknown field "spec.template.spec.expireAftr"']


def test_v1beta1_kubelet_block_in_an_upstream_nodepool_is_warned_with_where_it_went(tmp_path: Path) -> None:
    """v1beta1 NodePools carried ``template.spec.kubelet``; v1 moved it to the EC2NodeClass."""
    pool = tmp_path / "general-purpose.yaml"
    pool.write_text(GENERAL.read_text().replace("      requirements:", "      kubelet: {maxPods: 110}\n      requirements:"))
    res = invoke("simulate", str(pool), str(INFLATE), "--prices", PRICES)
    assert res.exit_code == 0, res.stderr
    [said] = [w for w in karpy_warnings(res.stderr) if "kubelet" in w]
    assert 'unknown field "spec.template.spec.kubelet"' in said and "EC2NodeClass spec.kubelet" in said


@pytest.mark.parametrize("target", ["/nonexistent-dir/report.html", "/dev/full/report.html"])
def test_report_to_an_unwritable_path_fails_before_the_simulation(target: str) -> None:
    res = invoke("simulate", str(GENERAL), str(INFLATE), "--report", target)
    assert res.exit_code == 2 and res.stdout == ""
    [line] = res.stderr.strip().splitlines()  # no "simulating..." progress: it never started
    assert line.startswith(f"karpy: --report {target}: cannot write"), line


def test_every_region_karpy_lists_simulates_end_to_end() -> None:
    listing = json.loads(invoke("prices", "-o", "json").stdout)
    assert listing["regions"]
    for entry in listing["regions"]:
        res = invoke("simulate", str(GENERAL), str(INFLATE), "--region", entry["region"], "-o", "json")
        assert res.exit_code == 0, (entry, res.stderr)
        [claim] = json.loads(res.stdout)["nodeclaims"]
        assert claim["zone"].startswith(entry["region"]) and claim["price"] > 0


def test_pending_pods_of_an_upstream_workload_are_grouped_in_the_table(tmp_path: Path) -> None:
    """examples/v1/100-cpu-limit.yaml + examples/workloads/inflate.yaml scaled to 120 (1 CPU each):
    the pods past the limit are one line per owner, not one per pod."""
    workload = tmp_path / "inflate.yaml"
    workload.write_text(INFLATE.read_text().replace("spec:\n  selector:", "spec:\n  replicas: 120\n  selector:", 1))
    res = invoke("simulate", str(DATA / "aws/examples/v1/100-cpu-limit.yaml"), str(workload), "--prices", PRICES)
    assert res.exit_code == 3, res.stderr
    grouped = [line for line in res.stdout.splitlines() if "default/inflate-" in line and "\u00d7" in line]
    assert len(grouped) == 1, res.stdout
    count = int(grouped[0].split("\u00d7")[0].split()[-1])
    assert 0 < count < 120 and "(Deployment inflate)" in grouped[0]
    assert "all available instance types exceed limits for nodepool" in grouped[0]
