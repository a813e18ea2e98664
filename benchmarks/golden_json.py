"""Before/after JSON: record the documents of a fixed set of runs, then compare later runs with them.

    python benchmarks/golden_json.py record DIR   # on main, before an optimisation
    python benchmarks/golden_json.py compare DIR  # after it: byte-identical or a diff per run

The runs: the bundled example through the CLI (``python -m karpy simulate -o json``, stdout as
printed), every cookbook cell (examples/generation-preference, strategy x capacity), the
``aws_diverse`` workload at 2,000 pods on the AWS provider (benchmarks/workloads.py),
``makeDiversePods(2000)`` on the fake provider, and every document the end-to-end test modules
produce (``tests/sim tests/cli tests/cookbook tests/explain tests/testing
tests/awsprovider/test_simulate_aws.py``; recorded through :mod:`golden_plugin`, one file per test
and Result, in creation order).
"""

from __future__ import annotations

import difflib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
E2E_TESTS = ["tests/sim", "tests/cli", "tests/cookbook", "tests/explain", "tests/testing",
             "tests/awsprovider/test_simulate_aws.py"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(HERE)])
    return env


def _runs(out: Path) -> None:
    sys.path[:0] = [str(ROOT), str(HERE)]
    out.mkdir(parents=True, exist_ok=True)
    cli = subprocess.run([sys.executable, "-m", "karpy", "simulate", "-o", "json"], capture_output=True,
                         env=_env(), cwd=ROOT, check=False)
    (out / "cli-bundled.json").write_bytes(cli.stdout + f"\nexit {cli.returncode}\n".encode())
    spec = importlib.util.spec_from_file_location("make_table", ROOT / "examples/generation-preference/make_table.py")
    assert spec and spec.loader
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    for strategy in table.STRATEGIES:
        for capacity in table.CAPACITIES:
            doc = table.scenario(strategy, capacity).run().to_json()
            (out / f"cookbook-{strategy}-{capacity.replace(' ', '_')}.json").write_text(doc)
    import karpy
    from workloads import aws_diverse

    (out / "aws-diverse-2000.json").write_text(
        karpy.simulate(aws_diverse(2000), region="us-east-1", prices="2026-07-20").to_json())
    from karpy.api.builders import make_nodepool
    from karpy.cloudprovider.fake import FakeCloudProvider, instance_types
    from scheduling_benchmark import PodFactory

    pods = PodFactory().diverse(2000)
    for p in pods:
        p.status.conditions = []
    pool = make_nodepool(limits={"cpu": "10000000", "memory": "10000000Gi"})
    (out / "fake-diverse-2000.json").write_text(
        karpy.simulate([pool, *pods], cloud_provider=FakeCloudProvider(instance_types(400)), region=None).to_json())
    env = _env()
    env["KARPY_GOLDEN_DIR"] = str(out / "e2e")
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "golden_plugin",
                    *E2E_TESTS], env=env, cwd=ROOT, check=False)


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in ("record", "compare"):
        sys.exit(__doc__)
    target = Path(sys.argv[2]).resolve()
    if sys.argv[1] == "record":
        _runs(target)
        print(f"recorded {sum(1 for _ in target.rglob('*.json'))} documents in {target}")
        return
    # a private directory beside the recording: two compares of one recording never share output
    fresh = Path(tempfile.mkdtemp(prefix=target.name + ".now-", dir=target.parent))
    _runs(fresh)
    old = {p.relative_to(target): p for p in target.rglob("*.json")}
    new = {p.relative_to(fresh): p for p in fresh.rglob("*.json")}
    bad = added = 0
    for name in sorted(old.keys() | new.keys()):
        if name not in old:
            print(f"{name}: new (only in after; a test or run the recording did not have)")
            added += 1
        elif name not in new:
            print(f"{name}: only in before")
            bad += 1
        elif old[name].read_bytes() != new[name].read_bytes():
            bad += 1
            diff = difflib.unified_diff(old[name].read_text().splitlines(), new[name].read_text().splitlines(),
                                        "before", "after", n=1, lineterm="")
            print(f"{name}: DIFFERS\n" + "\n".join(list(diff)[:30]))
    print(f"{len(old)} documents before, {len(new)} after ({added} new), {bad} differ or are missing")
    if bad:
        print(f"the new documents are kept in {fresh}")
    else:
        shutil.rmtree(fresh)
    sys.exit(1 if bad else 0)

if __name__ == "__main__":
    main()
