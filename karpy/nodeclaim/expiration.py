"""NodeClaim expiration: delete a NodeClaim once it is older than its ``expireAfter``.

Mirrors pkg/controllers/nodeclaim/expiration/controller.go: forceful — no budget, no
pre-launched replacement, no do-not-disrupt or PDB check at this point (the drain still honours
them until the terminationGracePeriod deadline). ``Never`` disables it.
"""

from __future__ import annotations

from typing import Any

from karpy.utils.duration import to_seconds

__all__ = ["expires_at"]


def expires_at(nodeclaim: Any) -> float | None:
    """Virtual time at which the NodeClaim expires (creation + spec.expireAfter), None = never."""
    ttl: float | None = nodeclaim.spec.expire_after_seconds
    if ttl is None:
        return None
    return (to_seconds(nodeclaim.metadata.creation_timestamp) or 0.0) + ttl
