"""Documents read straight from libyaml's events (karpy.api.loader._read_yaml_events: no node tree, the
one composed when a message needs a line) against the composing path: the same data, type for type,
on every YAML file under tests/ (upstream examples, blueprints, kubectl dumps, Helm output) and on
generated scalars; everything it does not read (anchors, aliases, tags, merge keys, duplicated or
collection keys, deep nesting, bad YAML) goes to the composing path; and a message about a List item
of a dump read from events names the same field and line as before."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from karpy.api import loader as L
from karpy.api.loader import ManifestError, load_manifests

pytestmark = pytest.mark.skipif(L._LIBYAML_LOADER is None, reason="PyYAML without libyaml: only the pure-Python path")


def _typed(x: Any) -> Any:
    """``x`` with every value's type beside it (``1``, ``1.0`` and ``True`` compare equal in Python)."""
    if isinstance(x, dict):
        return ("map", [(_typed(k), _typed(v)) for k, v in x.items()])
    if isinstance(x, list):
        return ("seq", [_typed(v) for v in x])
    return (type(x).__name__, repr(x))


def _composed(text: str) -> list[Any]:
    docs = L._read_yaml_composed(text, "f")
    assert docs is not None
    return [(_typed(d.data), d.index) for d in docs]


def test_every_real_manifest_reads_from_events_as_composed() -> None:
    texts = {str(p): p.read_text(encoding="utf-8") for p in sorted(Path(__file__).parents[1].rglob("*.yaml"))}
    texts.update({str(p): p.read_text(encoding="utf-8")
                  for p in sorted((Path(__file__).parents[2] / "karpy" / "examples").glob("*.yaml"))})
    texts.update({f"edge {i}": t for i, t in enumerate([
        "a: 1\r\nb: [1, 2]\r\n", "\ufeffkind: Pod\n", "---\n---\na: 1\n...\n", "", "# only\n",
        "a: 'q'\nb: \"d\"\nc: |\n  x\nd: >\n  y\n", "a: 2001-12-14\nb: 0x1F\nc: .inf\nd: ~\ne: yes\nf: 1:20\n",
        "a:\n- b\n- c: [d, {e: f}]\n", "~: x\n1: y\n2.5: z\nno: w\n", "a: {}\nb: []\nc:\n", "- 1\n- - 2\n  - [3]\n"])})
    from_events = 0
    for name, text in texts.items():
        docs = L._read_yaml_events(text, name)
        if docs is None:
            continue
        from_events += 1
        assert [(_typed(d.data), d.index) for d in docs] == _composed(text), name
        # the node tree composed on demand is the composing path's
        assert [yaml.serialize(d.node) if d.node is not None else None for d in docs] == \
            [yaml.serialize(d.node) if d.node is not None else None for d in L._read_yaml_composed(text, name)]
    assert from_events > 50  # real manifests are read from events


@pytest.mark.parametrize("text", [
    "a: &x 1\nb: 2\n", "a: &x [1]\nb: *x\n", "a: !!str 1\n", "a: !custom x\n", "a: !!set {b}\n",
    "base: &b {x: 1}\nc:\n  <<: *b\n", "a:\n  <<: {x: 1}\n", "a: 1\na: 2\n", "1: a\n'1': b\n", "? [a]\n: b\n",
    "? {a: 1}\n: b\n", "=: x\n", "a: =\n", "a: [1\n", "a: 1\n\tb: 2\n", "x: " + "[" * 120 + "]" * 120 + "\n",
    "%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n", "a: 123" + "4" * 5000 + "\n",
])
def test_what_events_do_not_read_goes_to_the_composing_path(text: str) -> None:
    assert L._read_yaml_events(text, "f") is None


@pytest.mark.parametrize("offset", [-2, -1, 0, 1])
def test_nesting_at_the_limit_reads_or_is_refused_as_the_reference_says(offset: int) -> None:
    """MAX_YAML_DEPTH counts levels, the scalar under the deepest collection included: 100 nested
    collections holding a value are refused by the reference loader, so events must not read them."""
    from tests.api.test_loader import _nested

    text = _nested(L.MAX_YAML_DEPTH + offset, False)
    try:
        reference = [_typed(d.data) for d in L._read_yaml_python(text, "f")]
    except ManifestError:
        reference = None
    docs = L._read_yaml_events(text, "f")
    if reference is None:
        assert docs is None
        with pytest.raises(ManifestError, match="levels deep"):
            load_manifests([text])
    else:
        assert docs is not None and [_typed(d.data) for d in docs] == reference


_SCALAR_BITS = st.sampled_from(["0", "1", "7", "9", "-", "+", ".", "_", ":", "e", "E", "x", "o", "b", "0x", "0o",
                                "0b", "inf", "nan", "Inf", "NaN", "yes", "No", "on", "OFF", "true", "False", "null",
                                "~", "y", "n", "2001-12-14", "t", "T", "Z", " ", "12:30:45", "a", "ff", "1e3"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_SCALAR_BITS, min_size=1, max_size=5).map("".join))
@example("1_000")
@example("0b1010")
@example("190:20:30")
@example("2001-12-14t21:59:43.10-05:00")
@example("-.inf")
def test_a_plain_scalar_reads_as_the_safe_loader_reads_it(scalar: str) -> None:
    text = f"k: {scalar}\nl: [{scalar}]\n{scalar}: v\n"
    docs = L._read_yaml_events(text, "f")
    if docs is None:
        return  # (what events do not read: the composing path, above)
    assert [_typed(d.data) for d in docs] == [_typed(x) for x in yaml.load_all(text, Loader=yaml.SafeLoader)]


def test_a_timestamp_is_a_datetime_from_events_too() -> None:
    (doc,) = L._read_yaml_events("a: 2001-12-14\nb: 2001-12-14 21:59:43.10 -5\n", "f") or []
    assert doc.data["a"] == datetime.date(2001, 12, 14) and isinstance(doc.data["b"], datetime.datetime)


def _dump(tmp_path: Path, bad: str) -> Path:
    items = "".join(f"""- apiVersion: v1
  kind: Pod
  metadata:
    name: p{i}
    namespace: default
  spec:
    containers:
    - name: c
      image: nginx
      resources:
        requests:
          cpu: {bad if i == 3 else '"1"'}
""" for i in range(5))
    path = tmp_path / "dump.yaml"
    path.write_text(f"apiVersion: v1\nkind: List\nitems:\n{items}")
    return path


def test_a_message_about_a_list_item_read_from_events_names_its_field_and_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _dump(tmp_path, "lots")
    assert L._read_yaml_events(path.read_text(), str(path)) is not None  # the dump is read from events
    with pytest.raises(ManifestError) as from_events:
        load_manifests([path])
    monkeypatch.setattr(L, "_LIBYAML_LOADER", None)  # the pure-Python reference path
    with pytest.raises(ManifestError) as reference:
        load_manifests([path])
    assert str(from_events.value) == str(reference.value) and from_events.value.line == reference.value.line
    assert "items[3].spec.containers[0].resources.requests.cpu" in str(from_events.value)
    assert from_events.value.line == path.read_text().splitlines().index("          cpu: lots") + 1
