"""k8s.io/apimachinery's string validators, once, with each caller's upstream message.

apimachinery v0.35/v0.36 (Kubernetes 1.35, Karpenter v1.14's v0.36.1) has two copies of the DNS-1123
checks that differ in one word:

* ``pkg/util/validation`` (``validation.IsDNS1123Subdomain``, ``IsDNS1123Label``): ``MaxLenError``
  says "must be no more than N **characters**". The API server names objects with these
  (``pkg/api/validation/generic.go`` NameIsDNSSubdomain / NameIsDNSLabel: ``metadata.name``,
  ``generateName``, ``namespace``) and core validation checks container names with them.
* ``pkg/api/validate/content`` (``IsLabelKey``, ``IsLabelValue`` and the label key's prefix
  ``IsDNS1123Subdomain``): "must be no more than N **bytes**". ``validation.IsQualifiedName`` and
  ``IsValidLabelValue`` are aliases of these since v0.35, so label and annotation keys, label values
  and Karpenter's requirement checks speak this way.

:data:`OBJECT_NAME` and :data:`CONTENT` say which; the functions take one (``flavour=``). Lengths
are Go's ``len(string)``: UTF-8 bytes, in both. ``RegexError`` is the same in both, including its
``"'a',  or 'b', "`` spacing for several examples.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CONTENT", "DNS1123_LABEL_MAX_LENGTH", "DNS1123_SUBDOMAIN_MAX_LENGTH", "LABEL_KEY_MAX_LENGTH",
           "LABEL_VALUE_MAX_LENGTH", "OBJECT_NAME", "Flavour", "is_dns1123_label", "is_dns1123_subdomain",
           "is_label_key", "is_label_value", "max_len_error", "regex_error"]

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
LABEL_KEY_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63


@dataclass(frozen=True)
class Flavour:
    """Which apimachinery package's wording: the unit of its ``MaxLenError``."""

    unit: str


#: pkg/util/validation: object names, namespaces, container names
OBJECT_NAME = Flavour("characters")
#: pkg/api/validate/content: label keys (and their prefix), label values, annotation keys
CONTENT = Flavour("bytes")

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_ERR = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                      "and must start and end with an alphanumeric character")
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_ERR = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                          "or '.', and must start and end with an alphanumeric character")
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_ERR = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                  "alphanumeric character")
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_ERR = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                    "and must start and end with an alphanumeric character")

_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)


def _blen(s: str) -> int:
    """Go ``len(string)``: UTF-8 bytes."""
    return len(s) if s.isascii() else len(s.encode("utf-8", "surrogatepass"))


def max_len_error(length: int, flavour: Flavour) -> str:
    """``MaxLenError`` of the flavour's package."""
    return f"must be no more than {length} {flavour.unit}"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``RegexError`` (the same in both packages)."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    return msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples) + f"regex used for validation is '{fmt}')"


def is_dns1123_label(value: str, flavour: Flavour = OBJECT_NAME) -> list[str]:
    """``IsDNS1123Label``."""
    errs = []
    if _blen(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH, flavour))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")  # a valid subdomain, length already checked
        else:
            errs.append(regex_error(_DNS1123_LABEL_ERR, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str, flavour: Flavour = OBJECT_NAME) -> list[str]:
    """``IsDNS1123Subdomain``."""
    errs = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH, flavour))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_ERR, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_label_key(value: str) -> list[str]:
    """content.IsLabelKey (``validation.IsQualifiedName``): an optional DNS-subdomain prefix and ``/``,
    then a name of at most 63 bytes."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix, CONTENT))
    else:
        return ["a valid label key " + regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif _blen(name) > LABEL_KEY_MAX_LENGTH:
        errs.append("name part " + max_len_error(LABEL_KEY_MAX_LENGTH, CONTENT))
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append("name part " + regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_label_value(value: str) -> list[str]:
    """content.IsLabelValue (``validation.IsValidLabelValue``)."""
    errs = []
    if _blen(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH, CONTENT))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_ERR, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs
