"""The issue's proof: a sweep of 3 designs x 4 price dates x 2 capacity scenarios gives the same
rows, in the same order, byte for byte, sequentially, on the local process pool, and on a
``dask.distributed.LocalCluster`` started here (two worker processes on the loopback interface).

Designs are cookbook strategies 01 (one NodePool allowing both generations), 03 (NodeOverlay -10 %
on gen 8) and 06 (minValues); the capacity scenarios are normal and every 8th-gen on-demand
offering failing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import karpy
from karpy.sweeps import SweepResult, expand, load_sweep

from .conftest import ROOT

MATRIX = """featureGates: {NodeOverlay: true}
designs:
  one-pool: [@01-one-nodepool, @common/workload.yaml]
  overlay: [@03-nodeoverlay, @common/workload.yaml]
  min-values: [@06-minvalues-wrong-knob, @common/workload.yaml]
shared: [@common/ec2nodeclass.yaml]
prices: [2024-03-04, 2025-01-06, 2025-09-01, 2026-07-20]
unavailable:
  normal: []
  8th-gen-ice: ["*8i.*:*:on-demand"]"""


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sweep") / "matrix.yaml"
    cookbook = ROOT / "examples" / "generation-preference"
    text = "apiVersion: karpy.io/v1alpha1\nkind: Sweep\nmetadata:\n  name: matrix\nspec:\n" + "".join(
        f"  {line}\n" for line in MATRIX.splitlines())
    path.write_text(text.replace("@", f"{cookbook}/"), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sequential(matrix: Path) -> SweepResult:
    return karpy.sweep(matrix, executor="sequential")


def test_sequential_rows_are_the_matrix(sequential: SweepResult) -> None:
    assert len(sequential) == 24 and not sequential.errors
    assert [r["cell"] for r in sequential] == list(range(24))
    assert [(r["design"], r["capacity"], r["prices"]) for r in sequential[:5]] == [
        ("one-pool", "normal", "2024-03-04"), ("one-pool", "normal", "2025-01-06"),
        ("one-pool", "normal", "2025-09-01"), ("one-pool", "normal", "2026-07-20"),
        ("one-pool", "8th-gen-ice", "2024-03-04")]
    by = {(r["design"], r["capacity"], r["prices"]): r for r in sequential}
    # the seed finding on the 2026-07-20 table: one pool allowing both launches 7th gen
    assert by["one-pool", "normal", "2026-07-20"]["instance_types"] == "c7i.2xlarge"
    assert by["one-pool", "normal", "2026-07-20"]["nodes_gen7"] == 1
    # the overlay flips to 8th gen, and falls back inside the same fleet request under ICE
    assert by["overlay", "normal", "2026-07-20"]["generations"] == "8"
    assert by["overlay", "8th-gen-ice", "2026-07-20"]["generations"] == "7"
    assert by["overlay", "8th-gen-ice", "2026-07-20"]["failed_launches"] == 0
    # minValues 6 on instance-family needs six families the NodePool allows: before 8th gen was
    # priced (2024) only c7i/m7i/r7i exist, so nothing can launch -- the wrong knob, visibly
    assert by["min-values", "normal", "2024-03-04"]["pending_pods"] == 6
    assert by["min-values", "normal", "2026-07-20"]["pending_pods"] == 0
    assert {r["design"] for r in sequential if r["pending_pods"]} == {"min-values"}
    assert sequential.exit_code == 3


def test_process_pool_gives_identical_rows(matrix: Path, sequential: SweepResult) -> None:
    pooled = karpy.sweep(matrix, executor="process", workers=2)
    assert pooled.to_csv() == sequential.to_csv()
    assert pooled.to_jsonl() == sequential.to_jsonl()


def test_dask_local_cluster_gives_identical_rows(matrix: Path, sequential: SweepResult) -> None:
    distributed = pytest.importorskip("distributed")  # CI installs it through the test extra
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1") as cluster, distributed.Client(cluster) as client:
        on_dask = karpy.sweep(matrix, executor=client)
        assert on_dask.to_jsonl() == sequential.to_jsonl()
        # the same sweep through the scheduler address, as --executor dask --scheduler ADDR does
        cells = expand(load_sweep(matrix))[:2]
        from karpy.sweeps import run_cells

        rows = run_cells(cells, "dask", scheduler=cluster.scheduler_address)
        assert SweepResult(rows).to_csv() == SweepResult(sequential.raw_rows[:2]).to_csv()


def test_rows_do_not_depend_on_pythonhashseed(sweep_file: Callable[..., Path]) -> None:
    path = sweep_file("designs:\n  one-pool: [@01-one-nodepool, @common]\nprices: [2026-07-20]")
    outputs = []
    for seed in ("0", "4242"):
        env = {"PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                              "KARPY_CACHE_DIR": os.environ["KARPY_CACHE_DIR"]}
        done = subprocess.run([sys.executable, "-m", "karpy", "sweep", str(path), "-o", "jsonl", "-q",
                               "--executor", "sequential"], capture_output=True, text=True, env=env, timeout=600)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and '"instance_types": "c7i.2xlarge"' in outputs[0]


def test_dask_is_not_imported_unless_asked() -> None:
    code = ("import sys, karpy, karpy.sweeps, karpy.cli, karpy.report.sweep; "
            "assert not {'dask', 'distributed', 'pyarrow', 'pandas'} & set(sys.modules), sorted(sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                              "KARPY_CACHE_DIR": os.environ["KARPY_CACHE_DIR"]})
    assert done.returncode == 0, done.stderr
