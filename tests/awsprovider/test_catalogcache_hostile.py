"""The catalogue cache trusts an entry only if it is a regular file whose answer passes a sanity
check (issue 35): a FIFO in an entry's place does not hang a run, and an entry with the right key
but an empty answer is a miss that is rewritten."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType

import pytest

from awsprovider.ec2 import catalog as catalog_module
from awsprovider.ec2.backend import MockedEC2
from awsprovider.ec2.catalog import INSTANCE_TYPE_FILTERS, OFFERINGS_LOCATION_TYPE, InstanceTypeCatalog, _filters_key
from awsprovider.ec2.catalogcache import CACHE_DIR_ENV, CatalogCache, encode_entry

ROOT = Path(__file__).resolve().parents[2]
TYPES = ("DescribeInstanceTypes", _filters_key(INSTANCE_TYPE_FILTERS))
OFFERINGS = ("DescribeInstanceTypeOfferings", (OFFERINGS_LOCATION_TYPE,))


@pytest.fixture
def backend() -> Iterator[MockedEC2]:
    with MockedEC2("us-east-1") as ec2:
        yield ec2


@pytest.fixture(autouse=True)
def no_process_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog_module, "_MEMO", {})


def _entry(cache: CatalogCache, kind: str, request: object, answer: object, pages: int = 1) -> bytes:
    """An entry with the right key (as the cache itself pickles it)."""
    return encode_entry(cache.key(kind, "us-east-1", request), cache._digest(kind, "us-east-1", request), pages,
                        answer)


def _catalog(backend: MockedEC2, cache: CatalogCache) -> InstanceTypeCatalog:
    return InstanceTypeCatalog.for_moto(backend.client, "us-east-1", disk_cache=cache)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_a_fifo_in_an_entrys_place_is_a_miss_and_is_replaced(backend: MockedEC2, tmp_path: Path) -> None:
    cache = CatalogCache(tmp_path)
    for kind, request in (TYPES, OFFERINGS):
        path = cache.path(kind, "us-east-1", request)
        tmp_path.mkdir(exist_ok=True)
        os.mkfifo(path)
        assert cache.load(kind, "us-east-1", request) is None  # returns at once: no writer is waited for
    cat = _catalog(backend, cache)
    assert "c8i.large" in cat.instance_types() and cat.offerings() and not cat.from_disk
    for kind, request in (TYPES, OFFERINGS):
        assert cache.path(kind, "us-east-1", request).is_file()  # repaired
    catalog_module._MEMO.clear()
    again = _catalog(backend, cache)
    assert again.instance_types() and again.from_disk


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_a_fifo_in_the_cache_does_not_hang_a_cli_run(tmp_path: Path) -> None:
    """`karpy simulate` on the bundled example, every catalogue entry a FIFO: it ends (bounded)."""
    env = {**os.environ, CACHE_DIR_ENV: str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("KARPY_NO_CACHE", None)
    code = ("from awsprovider.ec2.catalogcache import CatalogCache\n"
            "from awsprovider.ec2.catalog import INSTANCE_TYPE_FILTERS, OFFERINGS_LOCATION_TYPE, _filters_key\n"
            "import os\n"
            "c = CatalogCache()\n"
            "c.directory.mkdir(parents=True, exist_ok=True)\n"
            "for kind, req in (('DescribeInstanceTypes', _filters_key(INSTANCE_TYPE_FILTERS)),\n"
            "                  ('DescribeInstanceTypeOfferings', (OFFERINGS_LOCATION_TYPE,))):\n"
            "    os.mkfifo(c.path(kind, 'us-east-1', req))\n")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    assert any(p.is_fifo() for p in (tmp_path / "catalog").iterdir())
    res = subprocess.run([sys.executable, "-m", "karpy", "simulate", "-o", "json"], env=env, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert not any(p.is_fifo() for p in (tmp_path / "catalog").iterdir())


@pytest.mark.parametrize("answer", [{}, MappingProxyType({}), {"c8i.large": {}}, {"c8i.large": {"InstanceType": "x"}},
                                    [], None])
def test_an_entry_with_the_right_key_but_an_absurd_answer_is_a_miss_and_rewritten(
        backend: MockedEC2, tmp_path: Path, answer: object) -> None:
    cache = CatalogCache(tmp_path)
    expected = _catalog(backend, cache).instance_types()
    kind, request = TYPES
    cache.path(kind, "us-east-1", request).write_bytes(_entry(cache, kind, request, answer))
    assert cache.load(kind, "us-east-1", request) is None
    catalog_module._MEMO.clear()
    again = _catalog(backend, cache)
    assert again.instance_types() == expected and not again.from_disk
    assert cache.load(kind, "us-east-1", request) is not None  # repaired: the next run reads it


def test_an_offerings_entry_with_no_zones_is_a_miss(backend: MockedEC2, tmp_path: Path) -> None:
    cache = CatalogCache(tmp_path)
    expected = _catalog(backend, cache).offerings()
    kind, request = OFFERINGS
    for answer, pages in (({}, 1), ({"c8i.large": ()}, 1), (expected, 0)):
        cache.path(kind, "us-east-1", request).write_bytes(_entry(cache, kind, request, answer, pages))
        assert cache.load(kind, "us-east-1", request) is None
    catalog_module._MEMO.clear()
    assert _catalog(backend, cache).offerings() == expected


def test_a_flipped_bit_in_an_entry_is_a_miss_and_rewritten(backend: MockedEC2, tmp_path: Path) -> None:
    """A bit flipped anywhere in an entry (a bad disk sector): never a different answer. Before the
    answer's SHA-256 was stored, about half of such flips still unpickled into a plausible catalogue
    (an instance type's memory or a zone changed), trusted and never repaired."""
    import random

    cache = CatalogCache(tmp_path)
    rng = random.Random(35)
    first = _catalog(backend, cache)
    first.instance_types(), first.offerings()  # read lazily: this writes both entries
    for kind, request in (TYPES, OFFERINGS):
        path = cache.path(kind, "us-east-1", request)
        good, expected = path.read_bytes(), cache.load(kind, "us-east-1", request)
        assert expected is not None
        for _ in range(40):
            flipped = bytearray(good)
            flipped[rng.randrange(len(good))] ^= 1 << rng.randrange(8)
            path.write_bytes(bytes(flipped))
            assert cache.load(kind, "us-east-1", request) in (None, expected)
        catalog_module._MEMO.clear()
        again = _catalog(backend, cache)
        again.instance_types(), again.offerings()
        assert cache.load(kind, "us-east-1", request) == expected  # repaired
