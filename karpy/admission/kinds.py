"""Versions and kinds: an older or unknown version of a known kind, and kinds spelled in the wrong case.

The API server answers both with ``no matches for kind "nodepool" in version "karpenter.sh/v1"``
(the REST mapping fails); karpy says what to write instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from karpy.validation import is_dns1123_subdomain

__all__ = ["UPGRADE_HINTS", "malformed_type", "unsupported_version", "wrong_case_kind"]

#: (group, version) of a removed API -> how to upgrade a manifest written for it
UPGRADE_HINTS: Mapping[tuple[str, str], str] = {
    ("karpenter.sh", "v1beta1"): "v1beta1 was removed in Karpenter v1.0: migrate the manifest to karpenter.sh/v1 "
                                 "(https://karpenter.sh/docs/upgrading/v1-migration/)",
    ("karpenter.sh", "v1alpha5"): "v1alpha5 (Provisioner) was removed in Karpenter v0.32: migrate to karpenter.sh/v1 "
                                  "NodePools (https://karpenter.sh/docs/upgrading/v1-migration/)",
    ("karpenter.k8s.aws", "v1beta1"): "v1beta1 was removed in Karpenter v1.0: migrate the manifest to "
                                      "karpenter.k8s.aws/v1 (https://karpenter.sh/docs/upgrading/v1-migration/)",
    ("karpenter.k8s.aws", "v1alpha1"): "v1alpha1 (AWSNodeTemplate) was removed in Karpenter v0.32: migrate to "
                                       "karpenter.k8s.aws/v1 EC2NodeClasses "
                                       "(https://karpenter.sh/docs/upgrading/v1-migration/)",
}


def _split(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def unsupported_version(api_version: str, kind: str, supported: Iterable[str]) -> str:
    """The message for a known group/kind at a version karpy does not read."""
    versions = sorted(set(supported))
    text = f"{api_version} {kind} is not supported; karpy reads {' or '.join(versions)}"
    hint = UPGRADE_HINTS.get(_split(api_version))
    return f"{text} ({hint})" if hint else text


def wrong_case_kind(api_version: str, kind: str, known: Iterable[tuple[str, str]]) -> str | None:
    """When ``kind`` matches a known ``(apiVersion, kind)`` of the same group but for case, the message
    naming the right spelling; else None."""
    group = _split(api_version)[0]
    for known_version, known_kind in known:
        # a key is an apiVersion ("apps/v1", "v1") or a bare group ("karpenter.k8s.aws")
        if "/" in known_version:
            known_group = _split(known_version)[0]
        else:
            known_group = "" if re.match(r"^v[0-9]", known_version) else known_version
        if known_kind != kind and known_kind.lower() == kind.lower() and group == known_group:
            return (f"no matches for kind \"{kind}\" in version \"{api_version}\": kinds are case-sensitive; "
                    f"write kind: {known_kind}")
    return None


def _shown(text: str) -> str:
    """``text`` as written, control and other unprintable characters escaped (the error stays one line)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


_DNS1035_LABEL_RE = re.compile("[a-z]([-a-z0-9]*[a-z0-9])?")


def _dns1035_label(value: str) -> str | None:
    """apimachinery ``validation.IsDNS1035Label``: the first problem, or None."""
    if len(value.encode("utf-8", "surrogatepass")) > 63:
        return "must be no more than 63 characters"
    if not _DNS1035_LABEL_RE.fullmatch(value):
        return ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character")
    return None


def malformed_type(api_version: str, kind: str) -> tuple[str, str] | None:
    """``(field, message)`` when ``apiVersion`` or ``kind`` is not a well-formed type name, else None.

    The API server's rules (a malformed one can name no served type): ``schema.ParseGroupVersion``
    (apimachinery pkg/runtime/schema/group_version.go: at most one ``/``); a group is a DNS-1123
    subdomain and a version a DNS-1035 label, a kind lowercased a DNS-1035 label
    (apiextensions-apiserver pkg/apis/apiextensions/validation/validation.go,
    ValidateCustomResourceDefinitionSpec / ValidateCustomResourceDefinitionNames)."""
    shown = _shown(api_version)
    if api_version.count("/") > 1:
        return "apiVersion", f'unexpected GroupVersion string: "{shown}" (write group/version, e.g. apps/v1)'
    group, _, version = api_version.rpartition("/")
    if "/" in api_version and not group:
        return "apiVersion", f'"{shown}" has an empty group (write group/version, or just v1 for the core group)'
    if group and (errs := is_dns1123_subdomain(group)):
        return "apiVersion", f'group "{_shown(group)}" is invalid: {errs[0]}'
    if problem := _dns1035_label(version):
        return "apiVersion", f'version "{_shown(version)}" is invalid: {problem}'
    if problem := _dns1035_label(kind.lower()):
        shown_kind = _shown(kind)
        return "kind", (f'"{shown_kind}" is not a valid kind: it may have mixed case, but should otherwise match: '
                        f"{problem} (a CamelCase name such as Deployment)")
    return None
