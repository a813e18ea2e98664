"""Transient capacity errors recover (issue 35): with ``fail=N`` every pool fails its first N
attempts; Karpenter marks each failed offering unavailable for 3 minutes (the ICE cache), and its
10 s re-queue of the pending pods tries again once the entry expires, so every pod ends Running
within the horizon. A permanent rule still settles the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import karpy
from awsprovider.ec2.capacity import CapacityModel

EXAMPLE = str(Path(karpy.__file__).parent / "examples" / "generation-preference.yaml")


def test_a_fail_n_rule_fails_for_good_only_while_it_is_not_fail_n() -> None:
    model = CapacityModel.from_specs(["m8i.large:*:spot:fail=2", "c8i.large:*:*", "r8i.large:*:*:after=1"])
    assert not model.fails_for_good("m8i.large", "us-east-1a", "spot", 0)
    assert model.fails_for_good("c8i.large", "us-east-1a", "spot", 0)
    assert not model.fails_for_good("r8i.large", "us-east-1a", "spot", 0)
    model.try_launch("r8i.large", "us-east-1a", "spot", 0)
    assert model.fails_for_good("r8i.large", "us-east-1a", "spot", 0)


@pytest.mark.parametrize("fail", range(2, 11))
def test_transient_capacity_errors_recover_within_the_horizon(fail: int) -> None:
    result = karpy.simulate(EXAMPLE, unavailable=[f"*:*:*:fail={fail}"], until="1h")
    # consolidation (on: time passes) may replace a fallback node; its evicted pods are Deleted, replaced
    pods = {k: p for k, p in result.to_document()["pods"].items() if p["phase"] != "Deleted"}
    assert len(pods) == 8 and all(p["phase"] == "Running" for p in pods.values()), {k: p["phase"] for k, p in pods.items()}
    assert result.exit_code == 0


def test_cli_fail_3_ends_with_every_pod_running() -> None:
    from click.testing import CliRunner

    from karpy.cli import cli
    res = CliRunner().invoke(cli, ["simulate", "--unavailable", "*:*:*:fail=3", "--until", "1h", "-o", "json"])
    assert res.exit_code == 0, res.stderr
    pods = {k: p for k, p in json.loads(res.stdout)["pods"].items() if p["phase"] != "Deleted"}
    assert len(pods) == 8 and {p["phase"] for p in pods.values()} == {"Running"}


def test_a_permanent_rule_still_settles_the_run() -> None:
    result = karpy.simulate(EXAMPLE, unavailable=["*:*:*"])
    pods = result.to_document()["pods"]
    assert pods and all(p["phase"] == "Pending" for p in pods.values())
    assert result.simulation.virtual_seconds < 3600
