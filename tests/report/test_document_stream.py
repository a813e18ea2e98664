"""The streamed JSON output (issue #13, memory): ``Result.write_json`` / ``to_json`` and ``karpy
simulate -o json`` write the document section by section (``Result.document_sections``,
:func:`karpy.report.jsontext.write_object`) instead of building the whole tree and then its whole
text. The text must be the previous serialisation byte for byte --
``json.dumps(result.to_document(), indent=2, ensure_ascii=False) + "\\n"`` -- on documents with
every section (warnings, explain, static pools, capacity reservations, timeline, disruptions,
nodeclasses / nodepools), for any chunk size."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import karpy
from karpy.cli import cli
from karpy.report import jsontext
from karpy.report.jsontext import Lazy, write_indented, write_object
from karpy.result import Result, document_json, write_document_json
from tests.awsprovider.test_capacity_reservation_timeline import scenario
from tests.awsprovider.test_provisioning_paths_scenarios import RESERVED_NETWORK
from tests.report.test_jsontext import documents
from tests.static.test_scenarios import NODECLASS, static

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}


def _previous(result: Result) -> str:
    """The text before streaming: the whole document, then the stdlib's indented dump of it."""
    return json.dumps(result.to_document(), indent=2, ensure_ascii=False) + "\n"


@pytest.fixture(scope="module")
def results() -> dict[str, Result]:
    from karpy.api.builders import make_deployment, make_nodepool, make_pod

    od = [("karpenter.sh/capacity-type", "In", ["on-demand"])]
    return {
        # fake provider: disruptions, disruption_timeline, a pending pod's explain entry
        "disruption": karpy.simulate([make_nodepool(requirements=od), make_deployment("web", replicas=8,
                                                                                      requests={"cpu": "1"}),
                                      make_pod("huge", unschedulable=False, requests={"cpu": "5000"})],
                                     cloud_provider="fake", region=None, disruption=True, until="15m",
                                     events=["5m scale Deployment/web 1"]),
        # AWS: a static pool under its gate (launches, nodeclasses / nodepools) and, with the gate
        # off, the warning and a pending pod
        "static": karpy.simulate([NODECLASS, static(replicas=2), POD], prices="2026-07-20", until="30m",
                                 feature_gates={"StaticCapacity": True}),
        "static-gate-off": karpy.simulate([NODECLASS, static(), POD], prices="2026-07-20",
                                          feature_gates={}),
        # AWS: an ODCR that ends -- cost.capacity_reservations, relabelled timeline entries
        "reservation": karpy.simulate(RESERVED_NETWORK.replace(
            "tags: {team: web}}", "tags: {team: web}, endDate: '2026-01-01T02:00:00Z'}", 1) + scenario("3h"),
            prices="2026-07-20"),
    }


def test_the_documents_have_every_section(results: dict[str, Result]) -> None:
    docs = {name: r.to_document() for name, r in results.items()}
    assert docs["disruption"]["disruptions"] and docs["disruption"]["disruption_timeline"]
    assert docs["disruption"]["explain"]["pods"]
    assert docs["static"]["nodeclaims"] and docs["static"]["nodeclasses"] and docs["static"]["nodepools"]
    assert docs["static-gate-off"]["warnings"]
    assert docs["reservation"]["cost"]["capacity_reservations"]["by_reservation"]
    assert all(d["timeline"] and d["explain"]["scope"] for d in docs.values())


@pytest.fixture
def unvalidated(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Result.document_sections`` without the suite's schema hook (tests/conftest.py), which
    hands a streamed write plain sections: here the streamed ones (Lazy) are written."""
    monkeypatch.setattr(Result, "document_sections", Result.document_sections.__wrapped__)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["disruption", "static", "static-gate-off", "reservation"])
def test_streamed_text_is_the_previous_serialisation(results: dict[str, Result], name: str,
                                                     monkeypatch: pytest.MonkeyPatch, unvalidated: None) -> None:
    result = results[name]
    before = _previous(result)
    streamed = dict(result.document_sections(streamed=True))
    assert all(isinstance(streamed[k], Lazy) for k in ("nodeclaims", "pods", "timeline"))
    assert result.to_json() == before
    assert document_json(result.to_document()) == before
    # any chunk size: every fragment its own write, and the default
    for chunk in (1, 7, jsontext.CHUNK_FRAGMENTS):
        monkeypatch.setattr(jsontext, "CHUNK_FRAGMENTS", chunk)
        pieces: list[str] = []
        result.write_json(pieces.append)
        assert "".join(pieces) == before
        if chunk == 1:
            assert len(pieces) > 10  # really written in pieces
    pieces = []
    write_document_json(result.to_document(), pieces.append)
    assert "".join(pieces) == before


def test_to_json_without_indent_is_unchanged(results: dict[str, Result]) -> None:
    result = results["disruption"]
    assert result.to_json(None) == json.dumps(result.to_document(), ensure_ascii=False) + "\n"
    assert result.to_json(0) == json.dumps(result.to_document(), indent=0, ensure_ascii=False) + "\n"
    with pytest.raises(ValueError, match="needs an indent"):
        write_document_json({}, print, None)  # type: ignore[arg-type]


def test_sections_are_the_document_in_order(results: dict[str, Result]) -> None:
    for result in results.values():
        sections = list(result.document_sections())
        assert [k for k, _ in sections] == list(result.to_document())
        assert dict(sections) == result.to_document()


def test_cli_streams_the_same_bytes(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, unvalidated: None) -> None:
    """``karpy simulate -o json`` (streamed) prints what echoing the whole document printed, and the
    ``--report`` path (which builds the document) prints the same."""
    path = tmp_path / "w.yaml"
    import yaml

    path.write_text(yaml.safe_dump_all([NODECLASS, static(replicas=2), POD]))
    args = ["simulate", str(path), "-o", "json", "--prices", "2026-07-20", "--feature-gates", "StaticCapacity=true"]
    monkeypatch.setattr(jsontext, "CHUNK_FRAGMENTS", 3)
    streamed = CliRunner().invoke(cli, args)
    assert streamed.exit_code in (0, 3), streamed.output
    reported = CliRunner().invoke(cli, [*args, "--report", str(tmp_path / "r.html")])
    assert reported.stdout_bytes == streamed.stdout_bytes
    doc = json.loads(streamed.stdout)
    assert streamed.stdout == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    assert doc["nodeclaims"] and doc["nodeclasses"]


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(), documents, max_size=6), st.sampled_from([0, 1, 2, 4]), st.integers(1, 5))
def test_write_object_and_write_indented_are_json_dumps(doc: dict[str, Any], indent: int, chunk: int) -> None:
    expected = json.dumps(doc, indent=indent, ensure_ascii=False)
    old = jsontext.CHUNK_FRAGMENTS
    jsontext.CHUNK_FRAGMENTS = chunk
    try:
        pieces: list[str] = []
        write_object(iter(doc.items()), pieces.append, indent)
        assert "".join(pieces) == expected
        pieces = []
        write_indented(doc, pieces.append, indent)
        assert "".join(pieces) == expected
    finally:
        jsontext.CHUNK_FRAGMENTS = old


def test_write_object_of_no_members_is_an_empty_object() -> None:
    pieces: list[str] = []
    write_object(iter(()), pieces.append)
    assert pieces == ["{}"]


def test_lazy_members_are_written_as_lists_and_objects_and_only_streamed() -> None:
    doc = {"a": [1, {"b": []}], "e": [], "o": {}, "d": {"x": [None]}}
    lazy = {"a": Lazy(iter(doc["a"])), "e": Lazy(iter(())), "o": Lazy(iter(()), items=True),
            "d": Lazy(iter(doc["d"].items()), items=True)}
    pieces: list[str] = []
    write_object(lazy.items(), pieces.append)
    assert "".join(pieces) == json.dumps(doc, indent=2, ensure_ascii=False)
    with pytest.raises(TypeError, match="Object of type Lazy is not JSON serializable"):
        jsontext.dumps_indented({"a": Lazy(iter(()))})
