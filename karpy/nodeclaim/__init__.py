"""NodeClaim controllers karpy models: disruption conditions and expiration
(upstream pkg/controllers/nodeclaim/{disruption,expiration}). Names resolve lazily."""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    **dict.fromkeys(("CONSOLIDATABLE", "DRIFTED", "NODEPOOL_DRIFTED", "REQUIREMENTS_DRIFTED", "drift_reason",
                     "set_condition", "update_consolidatable", "update_drifted"), "disruption"),
    **dict.fromkeys(("expires_at",), "expiration"),
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from karpy.nodeclaim.disruption import (CONSOLIDATABLE, DRIFTED, NODEPOOL_DRIFTED, REQUIREMENTS_DRIFTED,
                                            drift_reason, set_condition, update_consolidatable, update_drifted)
    from karpy.nodeclaim.expiration import expires_at

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
