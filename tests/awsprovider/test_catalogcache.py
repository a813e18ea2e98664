"""The on-disk catalogue cache (awsprovider.ec2.catalogcache): a memo of moto's answers, keyed by
what could change them, safe under concurrent writers, bypassable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from awsprovider.ec2 import catalog as catalog_module
from awsprovider.ec2.backend import MockedEC2
from awsprovider.ec2.catalog import InstanceTypeCatalog
from awsprovider.ec2.catalogcache import CACHE_DIR_ENV, NO_CACHE_ENV, CatalogCache, moto_data_fingerprint

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def backend() -> Iterator[MockedEC2]:
    """Per test: moto's state is process-wide, and the CLI tests below start their own backend, which
    must not run while another is active."""
    with MockedEC2("us-east-1") as ec2:
        yield ec2


@pytest.fixture
def no_process_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every catalogue in the test reads through the disk cache (or moto), not the process memo."""
    monkeypatch.setattr(catalog_module, "_MEMO", {})


def _catalog(backend: MockedEC2, cache: Any) -> InstanceTypeCatalog:
    return InstanceTypeCatalog.for_moto(backend.client, "us-east-1", disk_cache=cache)


def _entries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def test_second_catalogue_reads_the_disk_and_gets_the_same_frozen_answer(
        backend: MockedEC2, tmp_path: Path, no_process_memo: None) -> None:
    cache = CatalogCache(tmp_path)
    first = _catalog(backend, cache)
    types, offerings = first.instance_types(), first.offerings()
    assert not first.from_disk and first.describe_instance_types_pages > 0
    assert [n.split("-")[0] for n in _entries(tmp_path)] == ["DescribeInstanceTypeOfferings", "DescribeInstanceTypes"]

    catalog_module._MEMO.clear()
    second = _catalog(backend, cache)
    assert second.instance_types() == types and second.offerings() == offerings
    assert second.from_disk
    assert second.describe_instance_types_pages == first.describe_instance_types_pages
    assert list(second.instance_types()) == sorted(types)
    # frozen like a moto read: read-only mappings, tuples, frozensets
    entry = second.instance_types()["c8i.large"]
    with pytest.raises(TypeError):
        entry["InstanceType"] = "x"  # type: ignore[index]
    assert isinstance(entry["SupportedUsageClasses"], tuple)
    assert isinstance(second.offerings()["c8i.large"], frozenset)
    assert _shape(second.instance_types()) == _shape(types)  # the same container types all the way down


def _shape(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, [_shape(v) for v in value])
    if hasattr(value, "items"):
        return (type(value).__name__, {k: _shape(v) for k, v in value.items()})
    return type(value).__name__


@pytest.mark.parametrize("changed", ["moto_version", "karpy_version"])
def test_a_changed_moto_or_karpy_version_invalidates(
        backend: MockedEC2, tmp_path: Path, no_process_memo: None, changed: str) -> None:
    _catalog(backend, CatalogCache(tmp_path)).instance_types()
    assert len(_entries(tmp_path)) == 1
    catalog_module._MEMO.clear()
    other = CatalogCache(tmp_path, **{changed: "999.0.0"})
    assert other.load("DescribeInstanceTypes", "us-east-1", catalog_module._filters_key(
        catalog_module.INSTANCE_TYPE_FILTERS)) is None
    cat = _catalog(backend, other)
    cat.instance_types()
    assert not cat.from_disk  # read from moto again ...
    assert len(_entries(tmp_path)) == 2  # ... and kept under the new key


def test_a_changed_moto_catalogue_file_invalidates(backend: MockedEC2, tmp_path: Path, no_process_memo: None) -> None:
    data = tmp_path / "instance_types.json"
    data.write_text("[1]")

    def fingerprint(region: str) -> tuple[Any, ...]:
        st = data.stat()
        return (("instance_types.json", st.st_size, st.st_mtime_ns),)

    cache_dir = tmp_path / "cache"
    _catalog(backend, CatalogCache(cache_dir, fingerprint=fingerprint)).instance_types()
    catalog_module._MEMO.clear()
    hit = _catalog(backend, CatalogCache(cache_dir, fingerprint=fingerprint))
    hit.instance_types()
    assert hit.from_disk
    data.write_text("[1, 2]")  # moto's data changed under the same moto version
    catalog_module._MEMO.clear()
    miss = _catalog(backend, CatalogCache(cache_dir, fingerprint=fingerprint))
    miss.instance_types()
    assert not miss.from_disk


def test_the_real_fingerprint_names_motos_catalogue_files() -> None:
    names = [name for name, _, _ in moto_data_fingerprint("us-east-1")]
    assert any(n.startswith("instance_types.json") for n in names)
    assert any(n.startswith("instance_type_offerings/availability-zone/us-east-1.json") for n in names)
    assert moto_data_fingerprint("us-east-1") != moto_data_fingerprint("eu-west-1")


def test_a_foreign_or_truncated_entry_is_a_miss_not_an_error(
        backend: MockedEC2, tmp_path: Path, no_process_memo: None) -> None:
    cache = CatalogCache(tmp_path)
    cat = _catalog(backend, cache)
    expected = cat.instance_types()
    [name] = _entries(tmp_path)
    (tmp_path / name).write_text('{"key": [1], "pages": 1, "answer": {}}')
    catalog_module._MEMO.clear()
    again = _catalog(backend, cache)
    assert again.instance_types() == expected and not again.from_disk
    (tmp_path / name).write_text('{"key": ')
    catalog_module._MEMO.clear()
    third = _catalog(backend, cache)
    assert third.instance_types() == expected and not third.from_disk
    (tmp_path / name).write_bytes((tmp_path / name).read_bytes()[:1000])  # a truncated pickle
    catalog_module._MEMO.clear()
    fourth = _catalog(backend, cache)
    assert fourth.instance_types() == expected and not fourth.from_disk


class _Planted:
    """A pickle that would call ``os.getpid`` if it were loaded with a plain ``pickle.load``."""

    def __reduce__(self) -> Any:
        import os

        return os.getpid, ()


def test_a_planted_entry_naming_another_callable_is_a_miss_and_never_called(
        backend: MockedEC2, tmp_path: Path, no_process_memo: None) -> None:
    import pickle

    cache = CatalogCache(tmp_path)
    expected = _catalog(backend, cache).instance_types()
    [name] = _entries(tmp_path)
    digest = cache._digest("DescribeInstanceTypes", "us-east-1",
                           catalog_module._filters_key(catalog_module.INSTANCE_TYPE_FILTERS))
    (tmp_path / name).write_bytes(pickle.dumps({"digest": digest, "pages": 1, "answer": _Planted()}))
    assert cache.load("DescribeInstanceTypes", "us-east-1",
                      catalog_module._filters_key(catalog_module.INSTANCE_TYPE_FILTERS)) is None
    catalog_module._MEMO.clear()
    again = _catalog(backend, cache)
    assert again.instance_types() == expected and not again.from_disk


def test_an_unwritable_cache_directory_still_answers(backend: MockedEC2, tmp_path: Path, no_process_memo: None) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cat = _catalog(backend, CatalogCache(blocker / "catalog"))
    assert "c8i.large" in cat.instance_types()
    assert not cat.from_disk


def test_env_var_and_disk_cache_false_bypass(backend: MockedEC2, tmp_path: Path, no_process_memo: None,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(NO_CACHE_ENV, "1")
    cat = InstanceTypeCatalog.for_moto(backend.client, "us-east-1")
    assert cat.disk_cache is None
    cat.instance_types()
    assert _entries(tmp_path / "catalog") == []
    monkeypatch.delenv(NO_CACHE_ENV)
    assert InstanceTypeCatalog.for_moto(backend.client, "us-east-1", disk_cache=False).disk_cache is None
    default = InstanceTypeCatalog.for_moto(backend.client, "us-east-1")
    assert isinstance(default.disk_cache, CatalogCache) and default.disk_cache.directory == tmp_path / "catalog"


def test_catalogues_over_other_clients_never_use_it(backend: MockedEC2) -> None:
    assert InstanceTypeCatalog(backend.client).disk_cache is None


_FILL = textwrap.dedent("""
    import hashlib, json, sys
    from awsprovider.ec2.backend import MockedEC2
    with MockedEC2("us-east-1") as ec2:
        cat = ec2.catalog
        types, offerings = cat.instance_types(), cat.offerings()
        digest = hashlib.sha256(json.dumps([types, {k: sorted(v) for k, v in offerings.items()}],
                                           default=dict, sort_keys=True).encode()).hexdigest()
        print(json.dumps({"from_disk": cat.from_disk, "digest": digest, "types": len(types)}))
""")


def test_two_processes_filling_the_cache_at_once_both_succeed(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{CACHE_DIR_ENV: str(tmp_path)})
    env.pop(NO_CACHE_ENV, None)
    procs = [subprocess.Popen([sys.executable, "-c", _FILL], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    results = [json.loads(out) for out, _ in outs]
    assert results[0]["digest"] == results[1]["digest"] and results[0]["types"] > 500
    # both wrote (or one read what the other had finished); no temporary files are left behind
    assert [n.split("-")[0] for n in _entries(tmp_path / "catalog")] == [
        "DescribeInstanceTypeOfferings", "DescribeInstanceTypes"]
    third = subprocess.run([sys.executable, "-c", _FILL], env=env, capture_output=True, text=True, timeout=600)
    assert third.returncode == 0, third.stderr
    answer = json.loads(third.stdout)
    assert answer["from_disk"] and answer["digest"] == results[0]["digest"]
