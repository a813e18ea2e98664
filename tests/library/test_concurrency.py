"""Determinism under library use (issue #15): threads, a process pool, and A, B, A in one process
give the documents of sequential runs, byte for byte (no state leaks through caches)."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

import karpy

EXAMPLE = str(Path(__file__).resolve().parents[2] / "karpy" / "examples" / "generation-preference.yaml")

# B: another scenario on the same manifests -- every 7th-generation type unavailable, so 8i launches.
B_UNAVAILABLE = ("*7i.*:*:on-demand",)


def run_a() -> str:
    return karpy.simulate(EXAMPLE).to_json()


def run_b() -> str:
    return karpy.simulate(EXAMPLE, unavailable=B_UNAVAILABLE).to_json()


def run(name: str) -> str:
    return {"A": run_a, "B": run_b}[name]()


@pytest.fixture(scope="module")
def sequential() -> dict[str, str]:
    """A, then B, then A again, in this process; the documents of the first A and of B."""
    a1, b, a2 = run_a(), run_b(), run_a()
    assert a2 == a1, "A after B differs from the first A"
    return {"A": a1, "B": b}


def test_a_b_a_gives_a_byte_for_byte(sequential: dict[str, str]) -> None:
    assert sequential["A"] != sequential["B"]  # B really is another scenario (the fixture compared A, A)
    assert '"instance_type": "m8i.' in sequential["B"] and '"instance_type": "m7i.' in sequential["A"]


def test_threads_give_the_sequential_documents(sequential: dict[str, str]) -> None:
    order = ["A", "B", "A", "B"]
    with ThreadPoolExecutor(max_workers=4) as pool:
        docs = list(pool.map(run, order))
    assert docs == [sequential[n] for n in order]


def test_process_pool_gives_the_sequential_documents(sequential: dict[str, str]) -> None:
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        docs = list(pool.map(run, ["A", "B"]))
    assert docs == [sequential["A"], sequential["B"]]
