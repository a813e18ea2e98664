"""``x-kubernetes-validations`` rules evaluated with a CEL library, plus the Kubernetes CEL functions it lacks.

The library is ``common-expression-language`` (``import cel``; Python bindings of the Rust
cel-interpreter), chosen over ``cel-python`` for fidelity to Kubernetes' cel-go on the functions the
Karpenter CRDs use (grep of every rule: ``has``, ``all``, ``exists``, ``filter``, ``size``, ``in``,
``int``, ``matches``, ``startsWith``, ``endsWith``, ``split``, ``find``):

* its core (macros, ``has``, ``size``, ``in``, conversions, string predicates) follows cel-go, and
  its opt-in Python standard library mirrors cel-go's ext libraries (the strings functions
  reproduced below follow the same cel-go definitions); cel-python has no ``split`` (the
  EC2NodeClass alias rules fail to evaluate there);
* ``int("abc")`` / ``int(" 5")`` are errors as with Go's ``strconv.ParseInt`` (cel-python accepts
  ``" 5"`` through Python's ``int``);
* ``matches`` uses an RE2-style engine, like cel-go;
* errors are absorbed by ``&&``/``||`` as the CEL spec says (both libraries);
* about 50x faster (≈10 µs per rule with its context vs ≈2 ms), which keeps admission off the
  profile.

Neither library ships Kubernetes' regex library (``k8s.io/apiserver/pkg/cel/library/regex.go``):
``<string>.find(<regex>)`` and ``<string>.findAll(<regex>[, <limit>])`` are implemented here with
Python's ``re`` (the CRD patterns are plain RE2 that ``re`` reads the same); so are the cel-go
string-extension functions Kubernetes enables (``split``, ``join``, ``lowerAscii``,
``upperAscii``), because the library's own Python versions live in a package whose import pulls in
its REPL. Only the functions a rule references are registered in its context. The functions never
raise (the library logs a warning for a failing Python callback).

Evaluation errors are reported in cel-go's words where the Rust text differs (``no such key: x``,
``index out of bounds: 3``; a failed ``int()`` string conversion becomes ``strconv.ParseInt:
parsing: invalid syntax`` — the Rust error does not carry the string, so it is left out).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import importlib.machinery
import json
import importlib.util
import sys

__all__ = ["CelEvalError", "CelRule", "KUBERNETES_FUNCTIONS", "compile_rule"]


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def find(text: str, pattern: str) -> str:
    """Kubernetes ``<string>.find(<regex>)``: the first match, or ``""``."""
    m = _regex(pattern).search(text)
    return m.group(0) if m else ""


def find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    """Kubernetes ``<string>.findAll(<regex>[, <limit>])`` (``limit < 0``: all matches)."""
    if limit == 0:
        return []
    out = [m.group(0) for m in _regex(pattern).finditer(text)]
    return out if limit < 0 else out[:limit]


def split(text: str, separator: str, limit: int = -1) -> list[str]:
    """cel-go ``ext.Strings`` ``<string>.split(<string>[, <int>])`` (``limit < 0``: no limit, ``0``: empty)."""
    if limit == 0:
        return []
    if separator == "":
        chars = list(text)
        return chars if limit < 0 or limit >= len(chars) else [*chars[:limit - 1], text[limit - 1:]]
    return text.split(separator) if limit < 0 else text.split(separator, limit - 1)


def join(items: list[str], separator: str = "") -> str:
    """cel-go ``ext.Strings`` ``<list<string>>.join([<string>])``."""
    return separator.join(items)


def lower_ascii(text: str) -> str:
    """cel-go ``ext.Strings`` ``lowerAscii``: only ASCII letters change."""
    return "".join(c.lower() if "A" <= c <= "Z" else c for c in text)


def upper_ascii(text: str) -> str:
    """cel-go ``ext.Strings`` ``upperAscii``: only ASCII letters change."""
    return "".join(c.upper() if "a" <= c <= "z" else c for c in text)


#: the Kubernetes CEL functions the library lacks: the regex library and the string extension
KUBERNETES_FUNCTIONS: Mapping[str, Callable[..., Any]] = {
    "find": find, "findAll": find_all, "split": split, "join": join,
    "lowerAscii": lower_ascii, "upperAscii": upper_ascii,
}


def _load_cel() -> Any:
    """The library's compiled module ``cel.cel``.

    ``import cel`` runs the package's ``__init__``, which also imports its command-line REPL
    (typer, prompt_toolkit, rich: ≈270 ms). The extension module is loaded on its own under its
    real name instead, so a later ``import cel`` by the host reuses it unchanged.
    """
    loaded = sys.modules.get("cel.cel")
    if loaded is not None:
        return loaded
    spec = importlib.util.find_spec("cel")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("common-expression-language is not installed (pip install common-expression-language)")
    for base in spec.submodule_search_locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            candidate = f"{base}/cel{suffix}"
            try:
                open(candidate, "rb").close()
            except OSError:
                continue
            loader = importlib.machinery.ExtensionFileLoader("cel.cel", candidate)
            ext_spec = importlib.util.spec_from_file_location("cel.cel", candidate, loader=loader)
            assert ext_spec is not None
            module = importlib.util.module_from_spec(ext_spec)
            sys.modules["cel.cel"] = module
            loader.exec_module(module)
            return module
    raise ImportError("common-expression-language: compiled module cel.cel not found")


cel = _load_cel()

_OLD_SELF = re.compile(r"\boldSelf\b")
#: results remembered per rule (see CelRule.evaluate)
MEMO_SIZE = 4096


class CelEvalError(Exception):
    """A rule that could not be evaluated; ``str()`` is cel-go's error text."""

    def __init__(self, text: str, no_overload: bool = False) -> None:
        super().__init__(text)
        self.text = text
        self.no_overload = no_overload

    def api_server_detail(self, rule: CelRule) -> str:
        """The detail the API server gives (validation.go validateExpressions)."""
        if self.no_overload:
            return (f"'{self.text}': call arguments did not match a supported operator, function or macro "
                    f"signature for rule: {rule.error_string}")
        return f"{self.text} evaluating rule: {rule.error_string}"


def _go_error(exc: Exception) -> CelEvalError:
    text = str(exc.args[0]) if exc.args else str(exc)
    if isinstance(exc, KeyError):
        return CelEvalError(f"no such key: {text}")
    if isinstance(exc, IndexError):
        return CelEvalError(text)
    if "Function 'int' error" in text and "parse" in text:
        return CelEvalError("strconv.ParseInt: parsing: invalid syntax")
    if isinstance(exc, TypeError):
        return CelEvalError(f"no such overload: {text}", no_overload=True)
    return CelEvalError(text)


@dataclass(frozen=True)
class CelRule:
    """One compiled ``x-kubernetes-validations`` entry."""

    rule: str
    message: str = ""
    reason: str = ""
    field_path: str = ""
    uses_old_self: bool = False
    program: Any = field(default=None, compare=False, repr=False)
    functions: Mapping[str, Callable[..., Any]] = field(default_factory=dict, compare=False, repr=False)
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def detail(self) -> str:
        """ruleMessageOrDefault."""
        return self.message.strip() if self.message else f"failed rule: {self.error_string}"

    @property
    def error_string(self) -> str:
        """ruleErrorString."""
        return self.message.strip() if self.message else self.rule.strip()

    def evaluate(self, value: Any) -> bool:
        """``True`` when the rule holds for ``self = value``; raises :class:`CelEvalError`.

        Results are memoised per rule on the value's JSON text (a rule is a pure function of
        ``self``; manifests repeat the same requirement lists, tags and terms), bounded by
        :data:`MEMO_SIZE` entries per rule."""
        try:
            key = json.dumps(value, separators=(",", ":"), default=str)
        except (TypeError, ValueError):
            key = None
        memo = self.memo
        if key is not None:
            found = memo.get(key)
            if found is not None:
                if isinstance(found, CelEvalError):
                    raise found
                return found
        try:
            result = self.program.execute(cel.Context(variables={"self": value}, functions=self.functions))
        except (RuntimeError, KeyError, IndexError, TypeError, ValueError) as e:
            error = _go_error(e)
            if key is not None:
                self._remember(key, error)
            raise error from None
        if not isinstance(result, bool):
            raise CelEvalError(f"rule did not evaluate to a boolean: {result!r}", no_overload=False)
        if key is not None:
            self._remember(key, result)
        return result

    def _remember(self, key: str, result: bool | CelEvalError) -> None:
        if len(self.memo) >= MEMO_SIZE:
            self.memo.clear()
        self.memo[key] = result


def compile_rule(raw: Mapping[str, Any]) -> CelRule:
    """Compile one rule of a schema (``rule``, ``message``, ``reason``, ``fieldPath``)."""
    source = str(raw["rule"])
    program = cel.compile(source)
    needed = {name: KUBERNETES_FUNCTIONS[name] for name in program.functions() if name in KUBERNETES_FUNCTIONS}
    return CelRule(rule=source, message=str(raw.get("message") or ""), reason=str(raw.get("reason") or ""),
                   field_path=str(raw.get("fieldPath") or ""), uses_old_self=bool(_OLD_SELF.search(source)),
                   program=program, functions=needed)
