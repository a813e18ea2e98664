"""OpenAPI v3 structural schemas: compile once, then prune, default and validate as the API server does.

One :class:`Schema` per node of a CRD's ``openAPIV3Schema`` (or of a Kubernetes JSON schema, see
:mod:`karpy.admission.builtin`). Three passes, in the API server's order:

1. :func:`normalize` — ``pruning.PruneWithOptions`` (unknown fields are removed and their paths
   returned, ``spec.foo``, ``spec.items[0].bar``, sorted), ``PruneNonNullableNullsWithoutDefaults``
   and structural defaulting (``defaulting/algorithm.go``: a missing or non-nullable ``null``
   property gets a deep copy of its default, then defaulting recurses into it);
2. :func:`validate` — kube-openapi ``validate`` converted to field errors as
   ``apiextensions-apiserver/pkg/apiserver/validation/validation.go`` does
   (``kubeOpenAPIResultToFieldErrors``), plus ``listtype.ValidateListSetsAndMaps``;
3. :func:`validate_rules` — the ``x-kubernetes-validations`` CEL rules
   (``schema/cel/validation.go``), only when pass 2 found no blocking error.

Deterministic rules where Go iterates maps: properties are visited in schema order, object keys in
input order; all errors are kept in that order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any

from karpy.admission.cel import CelEvalError, CelRule, compile_rule
from karpy.admission.fielderrors import OMIT, FieldError

__all__ = ["Key", "Schema", "compile_schema", "copy_json", "field_path", "normalize", "openapi_path",
           "validate", "validate_rules"]

_NO_DEFAULT: Any = object()
_META_FIELDS = frozenset({"apiVersion", "kind", "metadata"})


class Key(str):
    """A map key in a path (``labels[foo]`` in field paths, ``labels.foo`` in kube-openapi names)."""

    __slots__ = ()


Path = tuple[Any, ...]


def _link(path: Path) -> Path:
    """A flat path as the linked form the passes use internally: ``(parent, part)``, root ``()``
    (appending is O(1); a path is only flattened for a message)."""
    linked: Path = ()
    for part in path:
        linked = (linked, part)
    return linked


def _flat(linked: Path) -> Path:
    parts: list[Any] = []
    while linked:
        linked, part = linked
        parts.append(part)
    return tuple(reversed(parts))


def openapi_path(path: Path) -> str:
    """kube-openapi's name of a node: ``spec.template.spec.requirements[0].key``, map keys dotted."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def field_path(path: Path) -> str:
    """``field.Path`` of a node: properties dotted, indexes and map keys in brackets."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, Key):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


_SCALARS = frozenset({str, int, float, bool, type(None)})


def copy_json(value: Any) -> Any:
    """A deep copy of plain JSON-like data (dicts, lists, scalars)."""
    t = type(value)
    if t in _SCALARS:
        return value
    if t is dict:
        return {k: (v if type(v) in _SCALARS else copy_json(v)) for k, v in value.items()}
    if t is list:
        return [v if type(v) in _SCALARS else copy_json(v) for v in value]
    if isinstance(value, Mapping):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [copy_json(v) for v in value]
    return value


def json_type(value: Any) -> str:
    """The JSON type of a decoded YAML value (YAML timestamps are strings, as the API server gets them)."""
    t = type(value)
    if t is str:
        return "string"
    if t is bool:
        return "boolean"
    if t is int:
        return "integer"
    if t is float:
        return "number"
    if t is dict or isinstance(value, Mapping):
        return "object"
    if t is list:
        return "array"
    if value is None:
        return "null"
    if isinstance(value, (datetime, date, str)):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return type(value).__name__


class Schema:
    """One compiled schema node."""

    __slots__ = ("types", "nullable", "properties", "required", "additional", "closed", "items", "enum",
                 "pattern", "pattern_src", "minimum", "maximum", "exclusive_minimum", "exclusive_maximum",
                 "min_length", "max_length", "min_items", "max_items", "min_properties", "max_properties",
                 "default", "defaults", "any_of", "rules", "preserve_unknown", "int_or_string", "list_type",
                 "list_map_keys", "type_name", "_has_rules")

    def __init__(self) -> None:
        self.types: tuple[str, ...] = ()  # () = any type
        self.nullable = False
        self.properties: dict[str, Schema] = {}
        self.required: tuple[str, ...] = ()
        self.additional: Schema | None = None
        #: unknown keys are pruned (a structural object without additionalProperties)
        self.closed = False
        self.items: Schema | None = None
        self.enum: tuple[Any, ...] | None = None
        self.pattern: re.Pattern[str] | None = None
        self.pattern_src = ""
        self.minimum: float | None = None
        self.maximum: float | None = None
        self.exclusive_minimum = False
        self.exclusive_maximum = False
        self.min_length: int | None = None
        self.max_length: int | None = None
        self.min_items: int | None = None
        self.max_items: int | None = None
        self.min_properties: int | None = None
        self.max_properties: int | None = None
        self.default: Any = _NO_DEFAULT
        #: (property, schema) of the properties that have a default
        self.defaults: tuple[tuple[str, Schema], ...] = ()
        self.any_of: tuple[Schema, ...] = ()
        self.rules: tuple[CelRule, ...] = ()
        self.preserve_unknown = False
        self.int_or_string = False
        self.list_type = ""
        self.list_map_keys: tuple[str, ...] = ()
        #: the schema's ``type`` as CEL errors name it (``sts.Type``)
        self.type_name = ""
        self._has_rules: bool | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    def has_rules(self) -> bool:
        """True when this node or any node below it carries CEL rules."""
        if self._has_rules is None:
            self._has_rules = False  # cycle guard (recursive Kubernetes definitions)
            children = [*self.properties.values(), self.additional, self.items]
            self._has_rules = bool(self.rules) or any(c is not None and c.has_rules() for c in children)
        return self._has_rules


Resolver = Callable[[str], Schema]


def compile_schema(raw: Mapping[str, Any], resolve: Resolver | None = None, *, json_schema: bool = False) -> Schema:
    """Compile an OpenAPI v3 schema (``json_schema=True``: a Kubernetes JSON schema, where ``type``
    may list ``"null"``, ``$ref`` points at a definition, and an object without
    ``additionalProperties`` accepts any key)."""
    ref = raw.get("$ref")
    if isinstance(ref, str) and resolve is not None:
        return resolve(ref)  # shared node: recursive definitions stay finite
    s = Schema()
    fill_schema(s, raw, resolve, json_schema=json_schema)
    return s


def fill_schema(s: Schema, raw: Mapping[str, Any], resolve: Resolver | None, *, json_schema: bool) -> None:
    """Fill ``s`` from ``raw`` (separate from :func:`compile_schema` so recursive references can be
    registered before they are filled)."""
    raw_type = raw.get("type")
    if isinstance(raw_type, list):
        s.nullable = "null" in raw_type
        s.types = tuple(t for t in raw_type if t != "null")
    elif isinstance(raw_type, str):
        s.types = (raw_type,)
    s.type_name = s.types[0] if len(s.types) == 1 else ""
    s.nullable = s.nullable or bool(raw.get("nullable"))
    one_of = raw.get("oneOf")
    if json_schema and isinstance(one_of, list) and all(isinstance(b, Mapping) and set(b) <= {"type"} for b in one_of):
        # IntOrString / Quantity in the JSON schemas: a union of types
        types: list[str] = []
        for branch in one_of:
            bt = branch.get("type")
            for t in (bt if isinstance(bt, list) else [bt]):
                if t == "null":
                    s.nullable = True
                elif t and t not in types:
                    types.append(t)
        s.types = tuple(types)
        s.int_or_string = True
    if raw.get("x-kubernetes-int-or-string"):
        s.int_or_string = True
    props = raw.get("properties")
    if isinstance(props, Mapping):
        s.properties = {k: compile_schema(v, resolve, json_schema=json_schema) for k, v in props.items()}
    s.required = tuple(raw.get("required") or ())
    additional = raw.get("additionalProperties")
    if isinstance(additional, Mapping):
        s.additional = compile_schema(additional, resolve, json_schema=json_schema)
    s.preserve_unknown = bool(raw.get("x-kubernetes-preserve-unknown-fields"))
    if json_schema:
        s.closed = additional is False
        if "object" in s.types and additional is None and not s.properties:
            s.preserve_unknown = True  # RawExtension, FieldsV1, ...: any content
    else:
        s.closed = s.additional is None and not s.preserve_unknown
    items = raw.get("items")
    if isinstance(items, Mapping):
        s.items = compile_schema(items, resolve, json_schema=json_schema)
    if isinstance(raw.get("enum"), list):
        s.enum = tuple(raw["enum"])
    if isinstance(raw.get("pattern"), str):
        s.pattern_src = raw["pattern"]
        s.pattern = re.compile(s.pattern_src)
    for key, slot in (("minimum", "minimum"), ("maximum", "maximum"), ("minLength", "min_length"),
                      ("maxLength", "max_length"), ("minItems", "min_items"), ("maxItems", "max_items"),
                      ("minProperties", "min_properties"), ("maxProperties", "max_properties")):
        if key in raw:
            setattr(s, slot, raw[key])
    s.exclusive_minimum = bool(raw.get("exclusiveMinimum"))
    s.exclusive_maximum = bool(raw.get("exclusiveMaximum"))
    if "default" in raw:
        s.default = raw["default"]
    s.defaults = tuple((k, p) for k, p in s.properties.items() if p.has_default)
    any_of = raw.get("anyOf")
    if isinstance(any_of, list):
        s.any_of = tuple(compile_schema(b, resolve, json_schema=json_schema) for b in any_of)
    rules = raw.get("x-kubernetes-validations")
    if isinstance(rules, list):
        s.rules = tuple(compile_rule(r) for r in rules if isinstance(r, Mapping) and r.get("rule"))
    s.list_type = raw.get("x-kubernetes-list-type") or ""
    s.list_map_keys = tuple(raw.get("x-kubernetes-list-map-keys") or ())


# ----------------------------------------------------------------------------------------------------
# pass 1: pruning, null pruning, defaulting (mutates ``value``: call it on a copy)


def normalize(value: Any, schema: Schema, path: Path = (), unknown: list[str] | None = None, *,
              root: bool = False, skip: frozenset[str] = frozenset()) -> list[str]:
    """Prune unknown fields, drop non-nullable nulls without defaults, apply defaults. Returns the
    unknown field paths (sorted, as ``PruneWithOptions`` returns them). ``root``: apiVersion, kind
    and metadata are left alone at the top; ``skip``: top-level keys not touched at all."""
    found: list[str] = [] if unknown is None else unknown
    _normalize(value, schema, _link(path), found, root, skip)
    found.sort()
    return found


def _normalize(x: Any, s: Schema, path: Path, unknown: list[str], root: bool, skip: frozenset[str]) -> None:
    if type(x) is dict:
        props = s.properties
        for k in list(x):
            if root and (k in _META_FIELDS or k in skip):
                continue
            prop = props.get(k)
            key_part: Any = k
            if prop is None and s.additional is not None:
                prop = s.additional
                key_part = Key(k)
            if prop is None:
                if not s.preserve_unknown:
                    unknown.append(openapi_path(_flat((path, k))))
                    del x[k]
                continue
            v = x[k]
            if v is None and not prop.nullable:
                if prop.has_default:
                    v = x[k] = copy_json(prop.default)
                else:
                    del x[k]
                    continue
            if v is not None:
                _normalize(v, prop, (path, key_part), unknown, False, skip)
        for k, prop in s.defaults:
            if k not in x:
                x[k] = copy_json(prop.default)
                _normalize(x[k], prop, (path, k), unknown, False, skip)
    elif type(x) is list:
        items = s.items
        if items is not None:
            for i, v in enumerate(x):
                if v is not None and type(v) not in _SCALARS:
                    _normalize(v, items, (path, i), unknown, False, skip)


# ----------------------------------------------------------------------------------------------------
# pass 2: OpenAPI value validation


def validate(value: Any, schema: Schema, path: Path = (), *, root: bool = False,
             skip: frozenset[str] = frozenset()) -> list[FieldError]:
    """Field errors of ``value`` against ``schema`` (kube-openapi messages, ``in body``)."""
    errs: list[FieldError] = []
    _validate(value, schema, _link(path), errs, root, skip)
    return errs


def _type_ok(x: Any, t: str, types: tuple[str, ...]) -> bool:
    if t in types:
        return True
    if t == "number" and "integer" in types:
        return float(x).is_integer()
    return t == "integer" and "number" in types


def _validate(x: Any, s: Schema, path: Path, errs: list[FieldError], root: bool, skip: frozenset[str]) -> None:
    if x is None:
        if s.types and not s.nullable:
            name = openapi_path(_flat(path))
            errs.append(FieldError("TypeInvalid", name, "null",
                                   f"{name} in body must be of type {','.join(s.types)}: \"null\""))
        return
    t = json_type(x)
    if s.types and not _type_ok(x, t, s.types):
        name = openapi_path(_flat(path))
        errs.append(FieldError("TypeInvalid", name, t, f"{name} in body must be of type {','.join(s.types)}: \"{t}\"",
                               loc=_flat(path)))
        return
    if s.any_of:
        branch_errors = []
        for branch in s.any_of:
            found: list[FieldError] = []
            _validate(x, branch, path, found, False, frozenset())
            if not found:
                break
            branch_errors.append(found)
        else:
            name = openapi_path(_flat(path))
            errs.append(FieldError("Invalid", "", "", f"\"{name}\" must validate at least one schema (anyOf)"))
            errs.extend(branch_errors[0])
            return
    if s.enum is not None and not any(type(x) is type(e) and x == e for e in s.enum):
        allowed = ", ".join(_quote(e) for e in s.enum)
        errs.append(FieldError("NotSupported", openapi_path(_flat(path)), x, f"supported values: {allowed}"))
    if t == "string":
        _validate_string(x if isinstance(x, str) else _as_text(x), s, path, errs)
    elif t in ("integer", "number"):
        _validate_number(x, s, path, errs)
    elif t == "array":
        _validate_array(x, s, path, errs)
    elif t == "object":
        _validate_object(x, s, path, errs, root, skip)


def _quote(value: Any) -> str:
    import json

    return json.dumps(value if isinstance(value, str) else json.dumps(value, separators=(",", ":")),
                      ensure_ascii=False)


def _as_text(value: Any) -> str:
    return value.isoformat() if isinstance(value, (datetime, date)) else str(value)


def _validate_string(x: str, s: Schema, path: Path, errs: list[FieldError]) -> None:
    if s.max_length is not None and len(x) > s.max_length:
        errs.append(FieldError("TooLong", openapi_path(_flat(path)), "<value omitted>",
                               f"may not be more than {s.max_length} byte{'' if s.max_length == 1 else 's'}"))
    if s.min_length is not None and len(x) < s.min_length:
        name = openapi_path(_flat(path))
        errs.append(FieldError("Invalid", name, x, f"{name} in body should be at least {s.min_length} chars long"))
    if s.pattern is not None and s.pattern.search(x) is None:
        name = openapi_path(_flat(path))
        errs.append(FieldError("Invalid", name, x, f"{name} in body should match '{s.pattern_src}'"))


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(v)


def _validate_number(x: float, s: Schema, path: Path, errs: list[FieldError]) -> None:
    if s.maximum is not None and (x >= s.maximum if s.exclusive_maximum else x > s.maximum):
        name = openapi_path(_flat(path))
        op = "less than" if s.exclusive_maximum else "less than or equal to"
        errs.append(FieldError("Invalid", name, x, f"{name} in body should be {op} {_num(s.maximum)}"))
    if s.minimum is not None and (x <= s.minimum if s.exclusive_minimum else x < s.minimum):
        name = openapi_path(_flat(path))
        op = "greater than" if s.exclusive_minimum else "greater than or equal to"
        errs.append(FieldError("Invalid", name, x, f"{name} in body should be {op} {_num(s.minimum)}"))


def _validate_array(x: list[Any], s: Schema, path: Path, errs: list[FieldError]) -> None:
    n = len(x)
    if s.max_items is not None and n > s.max_items:
        errs.append(FieldError("TooMany", openapi_path(_flat(path)), n,
                               f"must have at most {s.max_items} item{'' if s.max_items == 1 else 's'}"))
    if s.min_items is not None and n < s.min_items:
        name = openapi_path(_flat(path))
        errs.append(FieldError("Invalid", name, n, f"{name} in body should have at least {s.min_items} items"))
    items = s.items
    if items is not None:
        for i, v in enumerate(x):
            _validate(v, items, (path, i), errs, False, frozenset())
    if s.list_type == "set":
        seen: list[Any] = []
        for i, v in enumerate(x):
            if any(type(v) is type(o) and v == o for o in seen):
                errs.append(FieldError("Duplicate", field_path(_flat((path, i))), v))
            else:
                seen.append(v)
    elif s.list_type == "map" and s.list_map_keys:
        keys_seen: set[str] = set()
        for i, v in enumerate(x):
            if not isinstance(v, Mapping):
                continue
            key = {k: v[k] for k in s.list_map_keys if k in v}
            marker = repr(sorted(key.items()))
            if marker in keys_seen:
                errs.append(FieldError("Duplicate", field_path(_flat((path, i))), key))
            keys_seen.add(marker)


def _validate_object(x: Mapping[str, Any], s: Schema, path: Path, errs: list[FieldError], root: bool,
                     skip: frozenset[str]) -> None:
    n = len(x)
    if s.max_properties is not None and n > s.max_properties:
        errs.append(FieldError("TooMany", openapi_path(_flat(path)), n,
                               f"must have at most {s.max_properties} item{'' if s.max_properties == 1 else 's'}"))
    if s.min_properties is not None and n < s.min_properties:
        name = openapi_path(_flat(path))
        errs.append(FieldError("Invalid", name, n, f"{name} in body should have at least {s.min_properties} properties"))
    props = s.properties
    additional = s.additional
    for k, v in x.items():
        if root and (k in skip or k == "metadata"):
            continue
        prop = props.get(k)
        if prop is not None:
            _validate(v, prop, (path, k), errs, False, frozenset())
        elif additional is not None:
            _validate(v, additional, (path, Key(k)), errs, False, frozenset())
    for k in s.required:
        if k not in x and not (root and k in skip):
            errs.append(FieldError("Required", openapi_path(_flat((path, k))), OMIT, ""))


# ----------------------------------------------------------------------------------------------------
# pass 3: x-kubernetes-validations


def validate_rules(value: Any, schema: Schema, path: Path = (), *, root: bool = False,
                   skip: frozenset[str] = frozenset()) -> list[FieldError]:
    """Field errors of the CEL rules (schema/cel/validation.go ``validateExpressions``): a rule that
    evaluates to false gives its message; an evaluation error gives ``<error> evaluating rule:
    <message>``. Rules that use ``oldSelf`` (transition rules) are skipped, as on create."""
    errs: list[FieldError] = []
    if schema.has_rules():
        _rules(value, schema, _link(path), errs, root, skip)
    return errs


def _rules(x: Any, s: Schema, path: Path, errs: list[FieldError], root: bool, skip: frozenset[str]) -> None:
    if x is None:
        return
    for rule in s.rules:
        if rule.uses_old_self:
            continue
        try:
            ok = rule.evaluate(x)
        except CelEvalError as e:
            errs.append(FieldError("Invalid", field_path(_flat(path)), s.type_name, e.api_server_detail(rule)))
            continue
        if ok:
            continue
        where = field_path(_flat(path))
        if rule.field_path:
            where += rule.field_path
        value = OMIT if s.type_name in ("object", "array") else x
        reason = rule.reason
        if reason == "FieldValueForbidden":
            errs.append(FieldError("Forbidden", where, OMIT, rule.detail))
        elif reason == "FieldValueRequired":
            errs.append(FieldError("Required", where, OMIT, rule.detail))
        elif reason == "FieldValueDuplicate":
            errs.append(FieldError("Duplicate", where, value))
        else:
            errs.append(FieldError("Invalid", where, value, rule.detail))
    if type(x) is dict:
        props = s.properties
        additional = s.additional
        for k, v in x.items():
            if root and (k in skip or k in _META_FIELDS):
                continue
            prop = props.get(k)
            if prop is not None:
                if prop.has_rules():
                    _rules(v, prop, (path, k), errs, False, frozenset())
            elif additional is not None and additional.has_rules():
                _rules(v, additional, (path, Key(k)), errs, False, frozenset())
    elif type(x) is list and s.items is not None and s.items.has_rules():
        for i, v in enumerate(x):
            _rules(v, s.items, (path, i), errs, False, frozenset())
