"""Versions and kinds: an older or unknown version of a known kind, and kinds spelled in the wrong case.

The API server answers both with ``no matches for kind "nodepool" in version "karpenter.sh/v1"``
(the REST mapping fails); karpy says what to write instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["UPGRADE_HINTS", "unsupported_version", "wrong_case_kind"]

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
