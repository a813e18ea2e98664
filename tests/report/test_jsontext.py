"""karpy.report.jsontext.dumps_indented against ``json.dumps(indent=..., ensure_ascii=False)``,
the text it replaces (issue #13): byte-identical on generated documents, the bundled samples and
the edge cases of the stdlib's encoder (key coercion, NaN/Infinity, empty containers, tuples,
subclasses, escapes), and the same errors."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from karpy.report.jsontext import dumps_indented
from karpy.result import document_json

HERE = Path(__file__).resolve().parent

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                    st.text())
keys = st.one_of(st.text(), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none())
documents = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.tuples(inner, inner), st.dictionaries(keys, inner, max_size=5)), max_leaves=40)


@settings(max_examples=300, deadline=None)
@given(documents, st.sampled_from([0, 1, 2, 4]))
def test_same_text_as_json_dumps(doc: Any, indent: int) -> None:
    assert dumps_indented(doc, indent) == json.dumps(doc, indent=indent, ensure_ascii=False)


@pytest.mark.parametrize("name", ["sample_document.json", "sample_timeline_document.json"])
def test_same_text_on_the_sample_documents(name: str) -> None:
    doc = json.loads((HERE / name).read_text(encoding="utf-8"))
    assert document_json(doc) == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


class Str(str):
    pass


class Int(int):
    pass


def test_edge_cases() -> None:
    doc = {"a": [1, 2.5, math.nan, math.inf, -math.inf, True, False, None, "é\n\"\\\u2028\x00", [], {}, (1,), ()],
           1: {2.0: 3, True: False, None: [[]], math.inf: 1}, "": Str("sub"), "i": Int(7), "f": -0.0,
           Str("k"): 1e300}
    assert dumps_indented(doc) == json.dumps(doc, indent=2, ensure_ascii=False)
    assert dumps_indented([]) == "[]" and dumps_indented("x") == '"x"'


def test_same_errors() -> None:
    with pytest.raises(TypeError, match="keys must be str, int, float, bool or None, not tuple"):
        dumps_indented({(1, 2): 3})
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        dumps_indented({"a": {1}})


def test_document_json_without_indent_is_the_stdlib() -> None:
    doc = {"a": [1, {"b": None}]}
    assert document_json(doc, None) == json.dumps(doc, ensure_ascii=False) + "\n"
