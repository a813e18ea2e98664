"""NodeClaim controllers karpy models: disruption conditions, expiration and the Node a NodeClaim
registers (upstream pkg/controllers/nodeclaim/{disruption,expiration,lifecycle/registration.go}).
Names resolve lazily."""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    **dict.fromkeys(("CONSOLIDATABLE", "DRIFTED", "NODEPOOL_DRIFTED", "REQUIREMENTS_DRIFTED", "drift_reason",
                     "set_condition", "update_consolidatable", "update_drifted"), "disruption"),
    **dict.fromkeys(("expires_at",), "expiration"),
    **dict.fromkeys(("node_annotations", "node_labels"), "registration"),
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from karpy.nodeclaim.disruption import (CONSOLIDATABLE, DRIFTED, NODEPOOL_DRIFTED, REQUIREMENTS_DRIFTED,
                                            drift_reason, set_condition, update_consolidatable, update_drifted)
    from karpy.nodeclaim.expiration import expires_at
    from karpy.nodeclaim.registration import node_annotations, node_labels

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
