"""Regression tests of the generation-preference cookbook (examples/generation-preference/).

"Prefer c8i/m8i/r8i, fall back to c7i/m7i/r7i", five ways plus one wrong knob, each with normal
capacity and with every 8th-gen on-demand offering failing (InsufficientInstanceCapacity), on the
real us-east-1 table of 2026-07-20 (every 8th-gen size costs exactly 1.05 x its 7th-gen twin).
The workload (6 x 1 cpu / 2Gi) fits one 2xlarge: c7i.2xlarge 0.357 $/h, c8i.2xlarge 0.37484 $/h.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from karpy.testing import (
    assert_all_running,
    assert_cost,
    assert_failed_launches,
    assert_launched,
    assert_offered,
    assert_pending,
    candidate_types,
    fleet_types,
    generation_of,
)

GEN7 = {"c7i", "m7i", "r7i"}
GEN8 = {"c8i", "m8i", "r8i"}
ICE = "8th gen ICE"
C7I_2XL = 0.357
C8I_2XL = 0.37484
OVERLAY_APPLIED = "karpenter.sh/price-overlay-applied"

Run = Callable[..., Any]


# -- 01: one NodePool allowing both generations (the seed document's finding) -------------------------
def test_01_one_nodepool_launches_7th_gen_although_8th_gen_is_offered(run: Run) -> None:
    result = run("01-one-nodepool")
    assert_launched(result, count=1, instance_types="c7i.2xlarge", generation="7", capacity_type="on-demand",
                    allocation_strategy="lowest-price")
    # 8th gen is not filtered out: it is in the NodeClaim's candidate list and in the CreateFleet request
    assert_offered(result, family_in=GEN8)
    assert_all_running(result)
    assert_cost(result, C7I_2XL)


def test_01_one_nodepool_never_tries_8th_gen_so_ice_changes_nothing(run: Run) -> None:
    result = run("01-one-nodepool", ICE)
    assert_launched(result, count=1, instance_types="c7i.2xlarge", generation="7")
    assert_failed_launches(result, count=0)
    assert_all_running(result)
    assert_cost(result, C7I_2XL)


# -- 02: weighted NodePools ---------------------------------------------------------------------------
def test_02_weighted_nodepools_launch_8th_gen_from_the_heavier_pool(run: Run) -> None:
    result = run("02-weighted-nodepools")
    [claim] = assert_launched(result, count=1, nodepool="gen8", instance_types="c8i.2xlarge", generation="8",
                              allocation_strategy="lowest-price")
    assert {generation_of(t) for t in candidate_types(claim)} == {"8"}
    assert_failed_launches(result, count=0)
    assert_all_running(result)
    assert_cost(result, C8I_2XL)


def test_02_weighted_nodepools_fall_back_to_the_7th_gen_pool_after_ice(run: Run) -> None:
    result = run("02-weighted-nodepools", ICE)
    [claim] = assert_launched(result, count=1, nodepool="gen7", instance_types="c7i.2xlarge", generation="7")
    failed = assert_failed_launches(result, min_count=1, error_code="InsufficientInstanceCapacity", generation="8")
    # the gen8 pool keeps being chosen while any 8th-gen offering is not yet ICE-cached; only then
    # does a later provisioning pass pick the gen7 pool
    assert {nc["nodepool"] for nc in failed} == {"gen8"}
    assert claim["created_at"] > max(nc["created_at"] for nc in failed)
    assert_all_running(result)
    assert_cost(result, C7I_2XL)


# -- 03: NodeOverlay price adjustment -> prioritized ----------------------------------------------------
def test_03_nodeoverlay_makes_the_fleet_prioritized_and_launches_8th_gen(run: Run) -> None:
    result = run("03-nodeoverlay")
    [claim] = assert_launched(result, count=1, instance_types="c8i.2xlarge", generation="8",
                              allocation_strategy="prioritized", annotations={OVERLAY_APPLIED: "true"})
    # 7th gen rides in the same request, behind 8th gen: the fallback needs no second NodeClaim
    assert_offered(result, family_in=GEN7)
    priority = {o["instance_type"]: o["priority"] for o in claim["fleet"]["overrides"]}
    assert priority["c8i.2xlarge"] < priority["c7i.2xlarge"]
    assert_all_running(result)
    # the overlay steers the choice; what the instance costs is still the real price
    assert_cost(result, C8I_2XL)


def test_03_nodeoverlay_falls_back_to_7th_gen_inside_the_same_fleet_request(run: Run) -> None:
    result = run("03-nodeoverlay", ICE)
    [claim] = assert_launched(result, count=1, instance_types="c7i.2xlarge", generation="7",
                              allocation_strategy="prioritized", annotations={OVERLAY_APPLIED: "true"})
    assert_failed_launches(result, count=0)
    errors = claim["fleet"]["errors"]
    assert errors and {e["error_code"] for e in errors} == {"InsufficientInstanceCapacity"}
    assert "c8i.2xlarge" in {e["instance_type"] for e in errors}
    assert_all_running(result)
    assert_cost(result, C7I_2XL)


# -- 04: instance-generation Gte 8 -- no fallback ---------------------------------------------------------
def test_04_generation_gte_8_launches_only_8th_gen(run: Run) -> None:
    result = run("04-generation-gte-8")
    [claim] = assert_launched(result, count=1, instance_types="c8i.2xlarge", generation="8")
    assert {generation_of(t) for t in candidate_types(claim)} == {"8"}
    assert_all_running(result)
    assert_cost(result, C8I_2XL)


def test_04_generation_gte_8_leaves_every_pod_pending_when_8th_gen_fails(run: Run) -> None:
    result = run("04-generation-gte-8", ICE)
    assert_launched(result, count=0)
    assert_failed_launches(result, min_count=1, error_code="InsufficientInstanceCapacity", generation="8")
    assert_pending(result, ["default/web-*"], reason_contains="filtered out all available instance types")
    assert len(assert_pending(result, 6)) == 6
    assert result.exit_code == 3
    assert_cost(result, 0.0)


# -- 05: preferred node affinity on the pods ------------------------------------------------------------
def test_05_preferred_affinity_launches_8th_gen(run: Run) -> None:
    result = run("05-preferred-affinity")
    [claim] = assert_launched(result, count=1, instance_types="c8i.2xlarge", generation="8",
                              allocation_strategy="lowest-price")
    # the heaviest preferred term is treated as required while solving: only 8th-gen candidates
    assert {generation_of(t) for t in candidate_types(claim)} == {"8"}
    assert_all_running(result)
    assert_cost(result, C8I_2XL)


def test_05_preferred_affinity_relaxes_only_after_8th_gen_offerings_are_ice_cached(run: Run) -> None:
    result = run("05-preferred-affinity", ICE)
    [claim] = assert_launched(result, count=1, instance_types="c7i.2xlarge", generation="7")
    failed = assert_failed_launches(result, min_count=2, error_code="InsufficientInstanceCapacity", generation="8")
    # the first NodeClaim is created for 8th gen only and fails; while any 8th-gen offering is still
    # available (metal, then smaller sizes), the preference stays satisfiable and is not relaxed
    first = min(failed, key=lambda nc: nc["created_at"])
    assert {generation_of(t) for t in candidate_types(first)} == {"8"}
    assert all(generation_of(t) == "8" for nc in failed for t in fleet_types(nc))
    # the relaxed pass comes after the last failure; by then every 8th-gen offering is ICE-cached, so
    # the candidates (types with an available offering) are 7th gen only
    assert claim["created_at"] > max(nc["created_at"] for nc in failed)
    assert {generation_of(t) for t in candidate_types(claim)} == {"7"}
    assert_all_running(result)
    assert_cost(result, C7I_2XL)


# -- 06: minValues, the wrong knob --------------------------------------------------------------------------
def test_06_minvalues_does_not_prefer_8th_gen_it_only_widens_the_list(run: Run) -> None:
    result = run("06-minvalues-wrong-knob")
    [claim] = assert_launched(result, count=1, instance_types="c7i.2xlarge", generation="7",
                              allocation_strategy="lowest-price")
    [family_req] = [r for r in claim["requirements"] if r["key"] == "karpenter.k8s.aws/instance-family"]
    assert family_req.get("minValues") == 6
    assert {t.split(".")[0] for t in candidate_types(claim)} >= GEN7 | GEN8
    # minValues switches off the exotic-instance filter: metal types join the CreateFleet request
    plain = assert_launched(run("01-one-nodepool"), count=1)[0]
    assert any(".metal" in t for t in fleet_types(claim))
    assert not any(".metal" in t for t in fleet_types(plain))
    assert len(fleet_types(claim)) > len(fleet_types(plain))
    assert_all_running(result)
    assert_cost(result, C7I_2XL)


def test_06_minvalues_with_8th_gen_failing_is_the_same_as_one_nodepool(run: Run) -> None:
    result = run("06-minvalues-wrong-knob", ICE)
    assert_launched(result, count=1, instance_types="c7i.2xlarge", generation="7")
    assert_failed_launches(result, count=0)
    assert_all_running(result)


# -- across strategies --------------------------------------------------------------------------------------
def test_preferring_8th_gen_costs_5_percent_more_here(run: Run) -> None:
    # 1.05 x, up to the table's 5 decimals (0.357 x 1.05 = 0.37485; the table says 0.37484)
    assert run("02-weighted-nodepools").cost_per_hour == pytest.approx(run("01-one-nodepool").cost_per_hour * 1.05,
                                                                       abs=2e-5)


@pytest.mark.parametrize("strategy", ["02-weighted-nodepools", "03-nodeoverlay", "05-preferred-affinity"])
def test_every_strategy_with_a_fallback_ends_on_the_7th_gen_price(run: Run, strategy: str) -> None:
    assert run(strategy, ICE).cost_per_hour == pytest.approx(C7I_2XL)
    assert run(strategy, ICE).exit_code == 0


def test_make_table_prints_one_row_per_strategy_and_capacity(cookbook: Any, run: Run, monkeypatch: Any) -> None:
    # make_table runs through Scenario.run(); reuse this session's results instead of re-simulating
    monkeypatch.setattr(cookbook.Scenario, "run", lambda self: run(*_cell(cookbook, self)))
    lines = cookbook.table().splitlines()
    rows = [line for line in lines if line.startswith("| 0")]
    assert len(rows) == len(cookbook.STRATEGIES) * len(cookbook.CAPACITIES) == 12
    row = next(r for r in rows if r.startswith("| 04") and "| 8th gen ICE |" in r)
    assert "| - | 0.00000 | 6 |" in row  # the first-half cells; the 2 h consolidation columns follow
    row = next(r for r in rows if r.startswith("| 01") and "| normal |" in r)
    assert "| c7i.2xlarge | 7 | lowest-price | 0 | 1 s | 0.35700 | 0 |" in row


def _cell(cookbook: Any, scenario: Any) -> tuple[str, str]:
    folder = next(p for p in scenario.manifests if p.parent == cookbook.HERE).name
    capacity = next(c for c, specs in cookbook.CAPACITIES.items() if tuple(specs) == scenario.unavailable)
    return folder, capacity


# -- the second half: two hours with the disruption controller on --------------------------------
# (docs/guides/cookbook.md table, last three columns; examples/generation-preference/make_table.py consolidation_run)
CONSOLIDATION_CELLS = {
    ("01-one-nodepool", "normal"): (["7"], {"7": 2.0}, 0),
    ("01-one-nodepool", ICE): (["7"], {"7": 2.0}, 0),
    ("02-weighted-nodepools", "normal"): (["8"], {"8": 2.0}, 0),
    ("02-weighted-nodepools", ICE): (["7"], {"7": 1.99}, 0),
    ("03-nodeoverlay", "normal"): (["8"], {"8": 2.0}, 0),
    ("03-nodeoverlay", ICE): (["8"], {"7": 1.1, "8": 0.92}, 1),
    ("04-generation-gte-8", "normal"): (["8"], {"8": 2.0}, 0),
    ("04-generation-gte-8", ICE): (["8"], {"8": 1.0}, 0),
    ("05-preferred-affinity", "normal"): (["8"], {"8": 2.0}, 0),
    ("05-preferred-affinity", ICE): (["7"], {"7": 1.99}, 0),
    ("06-minvalues-wrong-knob", "normal"): (["7"], {"7": 2.0}, 0),
    ("06-minvalues-wrong-knob", ICE): (["7"], {"7": 2.0}, 0),
}


@pytest.mark.parametrize("strategy,capacity", sorted(CONSOLIDATION_CELLS))
def test_two_hours_with_consolidation(cookbook: Any, two_hours: Run, strategy: str, capacity: str) -> None:
    generations, hours, replacements = CONSOLIDATION_CELLS[strategy, capacity]
    summary = cookbook.consolidation_summary(two_hours(strategy, capacity))
    assert summary["generations_at_end"] == generations
    assert summary["node_hours"] == pytest.approx(hours, abs=0.01)
    assert summary["replacements"] == replacements
    if strategy == "03-nodeoverlay" and capacity == ICE:
        # every replacement attempt during the outage ICEs and is rolled back; the first one after
        # the outage (at 1 h) goes through and 8th gen holds the end
        assert summary["failed_replacements"] > 0
        assert summary["first_replacement_at"] > 3600
        assert summary["instance_types_at_end"] == ["c8i.2xlarge"]
    else:
        assert summary["failed_replacements"] == 0


# -- what a person reads: the table of every cell fits one screen ------------------------------------
@pytest.mark.parametrize("capacity", ["normal", ICE])
@pytest.mark.parametrize("strategy", ["01-one-nodepool", "02-weighted-nodepools", "03-nodeoverlay",
                                      "04-generation-gte-8", "05-preferred-affinity", "06-minvalues-wrong-knob"])
def test_table_output_fits_one_screen(run: Run, strategy: str, capacity: str) -> None:
    from karpy.report.table import render_table

    doc = run(strategy, capacity).to_document()
    text = render_table(doc)
    assert len(text.splitlines()) <= 40, text
    failed = [nc for nc in doc["nodeclaims"] if nc["launched"] is False]
    if failed:
        assert f"{len(failed)} launch" in text and "InsufficientInstanceCapacity" in text
        assert len(render_table(doc, verbose=True).splitlines()) > 40
    if any(p["phase"] == "Pending" for p in doc["pods"].values()):
        assert "(capacity errors: " in text


@pytest.mark.parametrize("capacity", ["normal", ICE])
@pytest.mark.parametrize("strategy", ["01-one-nodepool", "02-weighted-nodepools", "03-nodeoverlay",
                                      "04-generation-gte-8", "05-preferred-affinity", "06-minvalues-wrong-knob"])
def test_explain_output_answers_first_and_fits_one_screen(run: Run, strategy: str, capacity: str) -> None:
    result = run(strategy, capacity)
    text = result.explain_text()
    lines = text.splitlines()
    assert len(lines) <= 40, text
    assert " won: " in lines[0] or " launches failed: " in lines[0], lines[0]
    assert lines.index(next(line for line in lines if line.startswith("NODECLAIMS ("))) < len(lines)
    if capacity == ICE and strategy in ("02-weighted-nodepools", "04-generation-gte-8", "05-preferred-affinity"):
        assert len(result.explain_text(verbose=True).splitlines()) > 40


@pytest.mark.parametrize("strategy,capacity", sorted(CONSOLIDATION_CELLS))
def test_two_hours_with_the_outage_fit_one_screen(two_hours: Run, strategy: str, capacity: str) -> None:
    """The cookbook's second half (`--until 2h`, 8th gen out for the first hour): `karpy simulate` and
    `karpy explain` still fit one screen; the 03 outage run (13 NodeClaims, a consolidation) printed 47
    explain lines."""
    from karpy.report.table import render_table

    result = two_hours(strategy, capacity)
    table = render_table(result.to_document())
    assert len(table.splitlines()) <= 40, table
    text = result.explain_text()
    lines = text.splitlines()
    assert len(lines) <= 40, text
    assert " won: " in lines[0] or " launches failed: " in lines[0], lines[0]


def test_explain_says_the_cheaper_8th_gen_failed_rather_than_was_not_picked(run: Run) -> None:
    """03 under the outage: the overlay makes c8i the prioritized pick, its offerings ICE inside the same
    CreateFleet request and c7i launches; the one-line answer says so (it said "was not picked")."""
    assert run("03-nodeoverlay", ICE).explain_text().splitlines()[0] == (
        "c7i.2xlarge won: the prioritized pick among 240 fleet overrides; the cheapest 8th-gen candidate "
        "c8i.2xlarge was $0.0196/h (5.5 %) cheaper but its 5 offerings failed: InsufficientInstanceCapacity "
        "(1 NodeClaim of nodepool general)")


def test_explain_says_in_one_line_why_the_7th_gen_won(run: Run) -> None:
    assert run("01-one-nodepool").explain_text().splitlines()[0] == (
        "c7i.2xlarge won: lowest price among 240 fleet overrides; the cheapest 8th-gen candidate c8i.2xlarge "
        "was $0.0178/h (5.0 %) dearer (1 NodeClaim of nodepool general)")


def test_a_failing_helper_prints_a_short_message_with_the_answer_first(run: Run) -> None:
    with pytest.raises(AssertionError) as err:
        assert_launched(run("04-generation-gte-8", ICE), generation="8")
    lines = str(err.value).splitlines()
    assert lines[0] == "expected at least one launched NodeClaim, got none"
    assert lines[2].startswith("why: 13 launches failed: c8i/m8i/r8i \u00d7 5 zones, InsufficientInstanceCapacity")
    assert len(lines) <= 30, str(err.value)
