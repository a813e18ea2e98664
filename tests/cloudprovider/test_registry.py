"""The provider registry: entry points read once per ``sys.path``, not once per simulation."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from karpy.cloudprovider.fake import FakeCloudProvider
from karpy.cloudprovider.registry import (UnknownCloudProviderError, available_cloud_providers,
                                          refresh_cloud_providers, resolve_cloud_provider)


def _plugin_dist(root: Path, name: str) -> Path:
    """A distribution as pip installs one, registering ``name`` in the karpy.cloudproviders group."""
    info = root / f"karpy_test_plugin_{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: karpy-test-plugin-{name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[karpy.cloudproviders]\n{name} = karpy.cloudprovider.fake:FakeCloudProvider\n")
    return root


def test_built_in_providers_are_registered() -> None:
    assert {"aws", "fake"} <= set(available_cloud_providers())
    assert resolve_cloud_provider("fake") is FakeCloudProvider


def test_a_provider_on_a_new_path_entry_is_found_and_gone_with_it(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    assert "plugged" not in available_cloud_providers()  # the current path, read (and remembered)
    monkeypatch.syspath_prepend(str(_plugin_dist(tmp_path, "plugged")))
    assert resolve_cloud_provider("plugged") is FakeCloudProvider
    monkeypatch.undo()
    with pytest.raises(UnknownCloudProviderError, match="unknown cloud provider 'plugged'"):
        resolve_cloud_provider("plugged")


def test_refresh_finds_a_provider_installed_into_a_searched_directory(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "late" not in available_cloud_providers()
    _plugin_dist(tmp_path, "late")  # installed while the process runs
    refresh_cloud_providers()
    assert resolve_cloud_provider("late") is FakeCloudProvider
    assert sys.path[0] == str(tmp_path)
