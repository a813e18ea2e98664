"""NodeClaim controllers karpy models: disruption conditions and expiration
(upstream pkg/controllers/nodeclaim/{disruption,expiration})."""

from karpy.nodeclaim.disruption import (CONSOLIDATABLE, DRIFTED, NODEPOOL_DRIFTED, REQUIREMENTS_DRIFTED, drift_reason,
                                        set_condition, update_consolidatable, update_drifted)
from karpy.nodeclaim.expiration import expires_at

__all__ = ["CONSOLIDATABLE", "DRIFTED", "NODEPOOL_DRIFTED", "REQUIREMENTS_DRIFTED", "drift_reason", "expires_at",
           "set_condition", "update_consolidatable", "update_drifted"]
