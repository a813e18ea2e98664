"""Hostile input and faults, round two (issue #35): one regression test per class, on input shaped
as users write it. Contract: exit 2, one line ``karpy: <file>: document <n> (...): <field>: ...``
on stderr, no traceback, the input file unchanged."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: default}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
        - name: app
          image: nginx
          resources: {{requests: {{cpu: 500m, memory: 1Gi}}}}
"""


@pytest.fixture
def run(invoke: Callable[..., Result], tmp_path: Path) -> Callable[..., Result]:
    """Write ``text`` to a manifest file, run ``karpy COMMAND FILE ARGS`` (``simulate`` adds the fake
    provider and JSON output), and check the file was not changed."""

    def go(text: str, *args: str, command: str = "simulate") -> Result:
        path = tmp_path / "in.yaml"
        path.write_text(text)
        before = hashlib.sha256(path.read_bytes()).hexdigest()
        extra = ("--cloud-provider", "fake", "-o", "json") if command == "simulate" else ()
        res = invoke(command, str(path), *extra, *args)
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before
        return res

    return go


def one_line(res: Result, *parts: str) -> str:
    """Assert the bad-input contract and that the line names every one of ``parts``."""
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = [line for line in res.stderr.strip().splitlines() if not line.startswith("karpy: warning: ")]
    assert len(lines) == 1 and lines[0].startswith("karpy: "), res.stderr
    assert "Traceback" not in res.output
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]


# -- 1. invalid apiVersion / kind ---------------------------------------------------------------------

@pytest.mark.parametrize("api_version", ["'*'", "'$(rm -rf /)'", "'日本語'", "apps/v1/extra", "/v1",
                                         "Example.com/v1", "example.com/V1", '"example.com/v1\\x01"'])
@pytest.mark.parametrize("command", ["simulate", "validate"])
def test_malformed_api_version_is_bad_input(run: Callable[..., Result], api_version: str, command: str) -> None:
    text = f"apiVersion: {api_version}\nkind: Widget\nmetadata: {{name: w}}\n---\n" + DEPLOYMENT.format(replicas=2)
    one_line(run(text, command=command), "in.yaml", "document 1", "apiVersion")


@pytest.mark.parametrize("kind", ["'Deployment '", "'EC2NodeClass\\t'", "'日本語'", "'Scenario!'", "'1Widget'",
                                  '"Node\\0"'])
def test_malformed_kind_is_bad_input(run: Callable[..., Result], kind: str) -> None:
    text = DEPLOYMENT.format(replicas=2) + f"---\napiVersion: apps/v1\nkind: {kind}\nmetadata: {{name: web2}}\n"
    one_line(run(text), "in.yaml", "document 2", "kind", "not a valid kind")


def test_well_formed_unmodelled_kind_is_still_skipped_with_a_warning(run: Callable[..., Result]) -> None:
    text = "apiVersion: example.com/v1alpha1\nkind: Widget\nmetadata: {name: w}\n---\n" + DEPLOYMENT.format(replicas=2)
    res = run(text)
    assert res.exit_code in (0, 3), res.output
    assert "example.com/v1alpha1 Widget" in res.stderr


# -- 2. negative and wrongly typed counts ------------------------------------------------------------

def workload(kind: str, field: str, value: str) -> str:
    api = "batch/v1" if kind == "Job" else "apps/v1"
    selector = "" if kind == "Job" else "  selector: {matchLabels: {app: web}}\n"
    restart = "      restartPolicy: Never\n" if kind == "Job" else ""
    return f"""apiVersion: {api}
kind: {kind}
metadata: {{name: web, namespace: default}}
spec:
  {field}: {value}
{selector}  template:
    metadata: {{labels: {{app: web}}}}
    spec:
{restart}      containers:
        - name: app
          image: nginx
          resources: {{requests: {{cpu: 500m, memory: 1Gi}}}}
"""


@pytest.mark.parametrize(("kind", "field"), [("Deployment", "replicas"), ("ReplicaSet", "replicas"),
                                             ("StatefulSet", "replicas"), ("Job", "parallelism"),
                                             ("Job", "completions")])
@pytest.mark.parametrize("command", ["simulate", "validate"])
def test_negative_counts_are_refused_as_the_api_server_does(run: Callable[..., Result], kind: str, field: str,
                                                            command: str) -> None:
    line = one_line(run(workload(kind, field, "-3"), command=command), "in.yaml", f'document 1 ({kind} "web")',
                    f"spec.{field}")
    assert line.endswith("Invalid value: -3: must be greater than or equal to 0"), line


def test_negative_count_in_a_library_model_is_refused() -> None:
    from pydantic import ValidationError

    from karpy.api.workloads import Deployment, Job
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        Deployment.model_validate({"metadata": {"name": "w"}, "spec": {"replicas": -3}})
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        Job.model_validate({"metadata": {"name": "w"}, "spec": {"parallelism": -1}})


SCENARIO = """---
apiVersion: karpy.io/v1alpha1
kind: Scenario
metadata: {{name: burst}}
spec:
  events:
    - at: 1m
      scale: {{kind: Deployment, name: web, replicas: {replicas}}}
"""


@pytest.mark.parametrize(("replicas", "says"), [("true", "must be a valid integer"),
                                                ('"3"', "must be a valid integer"),
                                                ("3.0", "must be a valid integer"),
                                                ("-1", "must be greater than or equal to 0")])
def test_scale_event_counts_are_not_coerced(run: Callable[..., Result], replicas: str, says: str) -> None:
    text = workload("Deployment", "replicas", "2") + SCENARIO.format(replicas=replicas)
    one_line(run(text), "in.yaml", 'document 2 (Scenario "burst")', "spec.events[0].scale.replicas", says)


def test_a_bad_event_line_is_named_as_the_user_wrote_it(run: Callable[..., Result]) -> None:
    """A count the API server refuses in an ``--event`` line names the option and the line, not an
    internal ``<events>`` list (it said ``<events>: events[0].scale.replicas: ...``)."""
    res = run(workload("Deployment", "replicas", "2"), "--until", "1h", "--event", "10m scale deployment/web -1")
    line = one_line(res, "--event '10m scale deployment/web -1'", "scale.replicas",
                    "must be greater than or equal to 0")
    assert "<events>" not in line


def test_scale_event_with_an_int_still_runs(run: Callable[..., Result]) -> None:
    res = run(workload("Deployment", "replicas", "2") + SCENARIO.format(replicas="3"))
    assert res.exit_code in (0, 3), res.output


# -- 3. output that fails must not destroy -----------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
COOKBOOK = ROOT / "examples" / "generation-preference"
SWEEP = f"""apiVersion: karpy.io/v1alpha1
kind: Sweep
metadata:
  name: cli
spec:
  designs:
    one-pool: [{COOKBOOK}/01-one-nodepool, {COOKBOOK}/common/workload.yaml]
  shared: [{COOKBOOK}/common/ec2nodeclass.yaml]
  prices: [2026-07-20]
"""


def _disk_full(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every atomic write fails half-way with ENOSPC (after writing some bytes to its temporary
    file), as a directory that fills up does; returns the temporary files it was given."""
    import errno

    from karpy.utils import atomicwrite
    seen: list[Path] = []

    def full(path: Path, raw: bytes) -> None:
        seen.append(path)
        with open(path, "wb") as f:
            f.write(raw[: len(raw) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomicwrite, "_write", full)
    return seen


def test_a_full_disk_leaves_the_earlier_report_as_it_was(invoke: Callable[..., Result], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    report = tmp_path / "report.html"
    report.write_text("<html>the good report of yesterday</html>")
    seen = _disk_full(monkeypatch)
    res = invoke("simulate", "--cloud-provider", "fake", "--report", str(report))
    one_line(res, "--report", str(report), "No space left on device")
    assert report.read_text() == "<html>the good report of yesterday</html>"
    assert seen and not any(p.exists() for p in seen)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]  # no temporary file left


def test_a_full_disk_leaves_every_sweep_output_as_it_was(invoke: Callable[..., Result], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(SWEEP)
    for option, name in (("--csv", "rows.csv"), ("--jsonl", "rows.jsonl"), ("--report", "report.html")):
        target = tmp_path / name
        target.write_text("earlier rows\n")
        with monkeypatch.context() as m:
            _disk_full(m)
            res = invoke("sweep", str(sweep), "--executor", "sequential", "-q", option, str(target))
        one_line(res, option, str(target), "No space left on device")
        assert target.read_text() == "earlier rows\n"
    charts = tmp_path / "charts"
    charts.mkdir()
    (charts / "generation-share.svg").write_text("<svg/>")
    with monkeypatch.context() as m:
        _disk_full(m)
        one_line(invoke("sweep", str(sweep), "--executor", "sequential", "-q", "--charts", str(charts)),
                 "--charts", "No space left on device")
    assert [p.name for p in charts.iterdir()] == ["generation-share.svg"]
    assert (charts / "generation-share.svg").read_text() == "<svg/>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["charts", "report.html", "rows.csv", "rows.jsonl",
                                                          "sweep.yaml"]


def test_a_full_disk_on_one_chart_leaves_the_earlier_set_of_charts_whole(invoke: Callable[..., Result],
                                                                          tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """--charts writes several files: the disk filling up at the second one replaced the first with
    this run's chart and left the rest from the earlier run (each file whole, the set mixed)."""
    import errno

    from karpy.utils import atomicwrite
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(SWEEP)
    charts = tmp_path / "charts"
    assert invoke("sweep", str(sweep), "--executor", "sequential", "-q", "--charts", str(charts)).exit_code == 0
    earlier = {p.name: p.read_bytes() for p in charts.iterdir()}
    assert len(earlier) >= 2
    for p in charts.iterdir():
        p.write_bytes(b"<svg>" + p.name.encode() + b" of yesterday</svg>")
    earlier = {p.name: p.read_bytes() for p in charts.iterdir()}
    real, calls = atomicwrite._write, []

    def full_at_the_second(path: Path, raw: bytes) -> None:
        calls.append(path)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, raw)

    monkeypatch.setattr(atomicwrite, "_write", full_at_the_second)
    res = invoke("sweep", str(sweep), "--executor", "sequential", "-q", "--charts", str(charts))
    one_line(res, "--charts", str(charts), ".svg: cannot write: No space left on device")
    assert {p.name: p.read_bytes() for p in charts.iterdir()} == earlier  # no temporary file, none replaced


def test_a_full_disk_leaves_the_earlier_parquet_as_it_was(invoke: Callable[..., Result], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    import errno
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(SWEEP)
    target = tmp_path / "rows.parquet"
    target.write_bytes(b"earlier")

    def full(table: object, where: str, *args: object, **kwargs: object) -> None:
        Path(where).write_bytes(b"PAR1 half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq, "write_table", full)
    one_line(invoke("sweep", str(sweep), "--executor", "sequential", "-q", "--parquet", str(target)),
             "--parquet", str(target), "No space left on device")
    assert target.read_bytes() == b"earlier"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.parquet", "sweep.yaml"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_dev_full_as_an_output_is_one_line(invoke: Callable[..., Result], tmp_path: Path) -> None:
    one_line(invoke("simulate", "--cloud-provider", "fake", "--report", "/dev/full"), "--report /dev/full",
             "No space left on device")
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(SWEEP)
    one_line(invoke("sweep", str(sweep), "--executor", "sequential", "-q", "--csv", "/dev/full"),
             "--csv /dev/full", "No space left on device")
    assert Path("/dev/full").is_char_device()  # written in place, never renamed over


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("unbuffered", [False, True])
@pytest.mark.parametrize("args", [("simulate", "-o", "json"), ("--help",), ("--version",)])
def test_standard_output_on_a_full_disk_is_one_line(tmp_path: Path, args: tuple[str, ...], unbuffered: bool) -> None:
    """``karpy simulate -o json > file`` on a full disk: the shell opened the file, so karpy cannot keep
    an earlier one; what it can do is say so in one line and exit non-zero (2), never a traceback
    (``--help``/``--version`` to a full stdout were a traceback, exit 1; with a buffered stdout -- no
    ``PYTHONUNBUFFERED``, as on a fresh machine -- the one line, then Python's failed flush at exit, 120)."""
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"} | {"PYTHONPATH": str(ROOT)}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    with open("/dev/full", "w") as full:
        res = subprocess.run([sys.executable, "-m", "karpy", *args], stdout=full, stderr=subprocess.PIPE, text=True,
                             env=env, cwd=tmp_path, timeout=300)
    lines = [line for line in res.stderr.splitlines() if not line.startswith(("karpy: warning", "karpy: simulat"))]
    assert res.returncode == 2 and lines == ["karpy: cannot write output: No space left on device"], res.stderr


@pytest.mark.parametrize("option", ["--csv", "--jsonl", "--parquet", "--report"])
def test_sweep_checks_every_output_path_before_the_first_cell(invoke: Callable[..., Result], tmp_path: Path,
                                                              option: str) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(SWEEP)
    target = tmp_path / "nonexistent" / "dir" / "rows.out"
    res = invoke("sweep", str(sweep), "--executor", "sequential", option, str(target))
    one_line(res, option, str(target), "No such file or directory")
    assert "cells" not in res.stderr  # refused before the progress bar's first cell


def test_sweep_checks_the_charts_directory_before_the_first_cell(invoke: Callable[..., Result],
                                                                 tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(SWEEP)
    (tmp_path / "file").write_text("")
    one_line(invoke("sweep", str(sweep), "--executor", "sequential", "--charts", str(tmp_path / "file" / "c")),
             "--charts", "is not a directory")


@pytest.mark.parametrize("command", ["simulate", "sweep"])
def test_an_output_path_ending_in_a_slash_names_a_directory_and_is_refused(
        invoke: Callable[..., Result], tmp_path: Path, command: str) -> None:
    """Chosen: an error (not a file written inside), so nothing is created under a name the user did not give."""
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(SWEEP)
    args = ("simulate", "--cloud-provider", "fake") if command == "simulate" else ("sweep", str(sweep))
    res = invoke(*args, "--report", f"{tmp_path}/out/")
    one_line(res, "--report", "names a directory")
    assert not (tmp_path / "out").exists()


def test_a_non_utf8_prices_file_names_the_option_and_the_file(invoke: Callable[..., Result],
                                                              tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_bytes(b'\xff\xfe{"region": "us-east-1"}')
    one_line(invoke("simulate", "--prices", str(prices)), "--prices", str(prices), "not UTF-8")
    from awsprovider.pricing import PricingError, load_table_from_path
    with pytest.raises(PricingError, match="prices.json: cannot read price table: not UTF-8"):
        load_table_from_path(prices)


def test_a_non_utf8_price_table_in_a_sweep_is_bad_input_before_the_first_cell(invoke: Callable[..., Result],
                                                                              tmp_path: Path) -> None:
    """The Sweep's spec.prices is its --prices: a table file that is not UTF-8 failed every cell (exit 1)."""
    (tmp_path / "prices.json").write_bytes(b'\xff\xfe{"region": "us-east-1"}')
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(SWEEP.replace("prices: [2026-07-20]", "prices: [2026-07-20, prices.json]"))
    res = invoke("sweep", str(sweep), "--executor", "sequential")
    one_line(res, "sweep.yaml: spec.prices[1]", str(tmp_path / "prices.json"), "not UTF-8 text (byte 0xff at offset 0)")
    assert "cells" not in res.stderr


# -- 5. control characters in what goes to EC2 ---------------------------------------------------------

NODECLASS = (COOKBOOK / "common" / "ec2nodeclass.yaml").read_text()
SG_TAGS = "  securityGroupSelectorTerms:\n    - tags:\n        karpenter.sh/discovery: example"
SUBNET_TAGS = "  subnetSelectorTerms:\n    - tags:\n        karpenter.sh/discovery: example"


@pytest.mark.parametrize(("text", "field"), [
    (NODECLASS + '  tags:\n    team: "a\\x01b"\n', "spec.tags.team"),
    (NODECLASS + '  tags:\n    "te\\0am": b\n', "spec.tags"),
    (NODECLASS.replace(SG_TAGS, SG_TAGS.replace("example", '"ex\\0ample"')),
     'spec.securityGroupSelectorTerms[0].tags["karpenter.sh/discovery"]'),
    (NODECLASS.replace(SUBNET_TAGS, SUBNET_TAGS.replace("example", '"ex\\uFFFEample"')),
     'spec.subnetSelectorTerms[0].tags["karpenter.sh/discovery"]'),
    (NODECLASS + "---\napiVersion: karpy.io/v1alpha1\nkind: Network\nmetadata: {name: n}\nspec:\n  subnets:\n"
                 '    - {zone: us-east-1a, tags: {karpenter.sh/discovery: "ex\\x01ample"}}\n',
     'spec.subnets[0].tags["karpenter.sh/discovery"]'),
    (NODECLASS + '  blockDeviceMappings:\n    - deviceName: "/dev/xvd\\x01a"\n      ebs: {volumeSize: 20Gi}\n',
     "spec.blockDeviceMappings[0].deviceName"),
    (NODECLASS + '  blockDeviceMappings:\n    - deviceName: /dev/xvda\n      ebs: {volumeSize: 20Gi, '
                 'kmsKeyID: "arn:aws:kms:us-east-1:111122223333:key/\\0"}\n',
     "spec.blockDeviceMappings[0].ebs.kmsKeyID"),
    (NODECLASS + '  context: "arn:aws:ec2:us-east-1:111122223333:context/\\x01"\n', "spec.context"),
])
def test_control_characters_in_ec2_tags_are_bad_input(invoke: Callable[..., Result], tmp_path: Path, text: str,
                                                      field: str) -> None:
    path = tmp_path / "nodeclass.yaml"
    path.write_text(text)
    res = invoke("simulate", str(path), str(COOKBOOK / "01-one-nodepool"), str(COOKBOOK / "common" / "workload.yaml"),
                 "-o", "json")
    line = one_line(res, "nodeclass.yaml", field, "EC2 tags and filter values are UTF-8 text")
    assert "XML" not in line and res.stdout == ""


@pytest.mark.parametrize(("text", "line"), [
    (NODECLASS + '  tags:\n    team: "a\\uD800b"\n', 19),
    (NODECLASS.replace(SG_TAGS, SG_TAGS.replace("example", '"ex\\uDC00ample"')), 15),
])
def test_a_surrogate_escape_is_invalid_yaml_naming_the_line(invoke: Callable[..., Result], tmp_path: Path, text: str,
                                                             line: int) -> None:
    """A ``\\uD800`` escape is no Unicode text: libyaml and the go-yaml kubectl reads with refuse it;
    PyYAML read it, and the CRD's CEL rules then failed with a line naming no file or field."""
    path = tmp_path / "nodeclass.yaml"
    path.write_text(text)
    res = invoke("validate", str(path))
    one_line(res, "nodeclass.yaml: document 1: invalid YAML", "invalid Unicode character escape code", f"(line {line},")


NETWORK = "---\napiVersion: karpy.io/v1alpha1\nkind: Network\nmetadata: {name: prod}\nspec:\n"


@pytest.mark.parametrize(("spec", "field", "says"), [
    ('  subnets:\n    - {id: "subnet-0a1\\x01", zone: us-east-1a, tags: {karpenter.sh/discovery: example}}\n',
     "spec.subnets[0].id", "U+0001 (a control character)"),
    ('  cidr: "10.20.0.0/16\\0"\n  subnets:\n    - {zone: us-east-1a, tags: {karpenter.sh/discovery: example}}\n',
     "spec.cidr", "not an IPv4 CIDR block"),
    ("  cidr: 10.0.0.0/8\n  subnets:\n    - {zone: us-east-1a, tags: {karpenter.sh/discovery: example}}\n",
     "spec.cidr", "between a /16 and a /28 netmask"),
    ("  cidr: fd00::/48\n", "spec.cidr", "not an IPv4 CIDR block"),
    ("  cidr: 10.20.0.0/16\n  subnets:\n    - {zone: us-east-1a, cidr: 10.9.0.0/24}\n",
     "spec", "subnets[0].cidr 10.9.0.0/24 is not inside the VPC's cidr 10.20.0.0/16"),
])
def test_what_ec2_refuses_in_a_network_is_bad_input(invoke: Callable[..., Result], tmp_path: Path, spec: str,
                                                     field: str, says: str) -> None:
    """A Network's subnet id and CIDR blocks go to CreateVpc/CreateSubnet: a control character or a
    block EC2 refuses was a botocore traceback (exit 1), now one line naming the field."""
    path = tmp_path / "network.yaml"
    path.write_text(NODECLASS + NETWORK + spec)
    res = invoke("simulate", str(path), str(COOKBOOK / "01-one-nodepool"), str(COOKBOOK / "common" / "workload.yaml"),
                 "-o", "json")
    one_line(res, "network.yaml", 'document 2 (Network "prod")', f"{field}: ", says)


def test_subnets_ec2_refuses_together_are_one_line(invoke: Callable[..., Result], tmp_path: Path) -> None:
    """Two subnets with one block (InvalidSubnet.Conflict) or a block outside karpy's default VPC
    (InvalidSubnet.Range): EC2's own refusal, one line naming the Network, not a traceback."""
    path = tmp_path / "network.yaml"
    for subnets, says in (("    - {zone: us-east-1a, cidr: 10.20.0.0/24}\n    - {zone: us-east-1b, cidr: 10.20.0.0/24}\n",
                           "InvalidSubnet.Conflict"),
                          ("    - {zone: us-east-1a, cidr: 192.168.0.0/24}\n", "InvalidSubnet.Range")):
        cidr = "  cidr: 10.20.0.0/16\n" if "Conflict" in says else ""
        path.write_text(NODECLASS + NETWORK + cidr + "  subnets:\n" + subnets)
        res = invoke("simulate", str(path), str(COOKBOOK / "01-one-nodepool"),
                     str(COOKBOOK / "common" / "workload.yaml"), "-o", "json")
        one_line(res, "Network prod: EC2 refused it", says)
    from awsprovider.ec2 import backend as ec2_backend

    assert not ec2_backend._claimed_accounts  # the refused run's mocked EC2 was stopped, its account released


# -- 7. --max-pods bounds the pods alive at any moment ---------------------------------------------------

def test_a_scale_event_past_max_pods_is_bad_input_naming_the_event(run: Callable[..., Result]) -> None:
    text = workload("Deployment", "replicas", "2") + SCENARIO.format(replicas="1000000")
    line = one_line(run(text), 'document 2 (Scenario "burst")', "spec.events[0].scale.replicas", "1,000,000",
                    "--max-pods")
    assert "10,000" in line


def test_max_pods_counts_every_workload_alive_at_once(run: Callable[..., Result]) -> None:
    text = (workload("Deployment", "replicas", "4") + "---\n" + workload("Job", "parallelism", "3")
            .replace("name: web,", "name: batch,") + SCENARIO.format(replicas="7"))
    one_line(run(text, "--max-pods", "9"), "spec.events[0].scale.replicas", "makes 10 pods")  # 7 + the Job's 3
    assert run(text, "--max-pods", "10").exit_code in (0, 3)


def test_a_cli_event_past_max_pods_is_bad_input(run: Callable[..., Result]) -> None:
    res = run(workload("Deployment", "replicas", "2"), "--max-pods", "50", "--event", "1m scale deployment/web 51")
    one_line(res, "--event '1m scale deployment/web 51': scale.replicas", "makes 51 pods", "50")


def test_an_apply_event_past_max_pods_is_bad_input(run: Callable[..., Result], tmp_path: Path) -> None:
    (tmp_path / "more.yaml").write_text(workload("StatefulSet", "replicas", "9").replace("name: web,", "name: db,"))
    text = workload("Deployment", "replicas", "2") + SCENARIO.replace(
        "scale: {{kind: Deployment, name: web, replicas: {replicas}}}", "apply: more.yaml").format()
    one_line(run(text, "--max-pods", "10"), "spec.events[0].apply", "makes 11 pods")
    assert run(text, "--max-pods", "11").exit_code in (0, 3)


def test_a_rollout_counts_its_surge(run: Callable[..., Result]) -> None:
    text = workload("Deployment", "replicas", "8") + SCENARIO.replace(
        "scale: {{kind: Deployment, name: web, replicas: {replicas}}}", "rollout: {{name: web}}").format()
    one_line(run(text, "--max-pods", "9"), "spec.events[0].rollout", "makes 10 pods", "maxSurge")  # 8 + 25% of 8
    assert run(text, "--max-pods", "10").exit_code in (0, 3)


def test_scale_down_then_up_stays_within_the_bound(run: Callable[..., Result]) -> None:
    text = workload("Deployment", "replicas", "8") + SCENARIO.format(replicas="0") + \
        "    - at: 2m\n      scale: {kind: Deployment, name: web, replicas: 8}\n"
    assert run(text, "--max-pods", "8").exit_code in (0, 3)
