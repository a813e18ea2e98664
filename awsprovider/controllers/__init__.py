"""The AWS provider's own controllers that act over virtual time (upstream pkg/controllers):
the capacity-reservation ``capacitytype`` controller (:mod:`awsprovider.controllers.capacitytype`)
and ``expiration`` controller (:mod:`awsprovider.controllers.expiration`). The AWS cloud provider
hands them to karpy's simulation through its ``controllers(cluster)`` method
(:class:`karpy.cloudprovider.types.ProviderController`). Names resolve lazily (they load the API
models)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    **dict.fromkeys(("CapacityTypeController", "ReservationCluster"), "capacitytype"),
    **dict.fromkeys(("CAPACITY_RESERVATION_EXPIRATION_PERIOD", "ExpirationController"), "expiration"),
}

__all__ = [
    "CAPACITY_RESERVATION_EXPIRATION_PERIOD", "CapacityTypeController", "ExpirationController",
    "ReservationCluster",
]

if TYPE_CHECKING:  # pragma: no cover
    from awsprovider.controllers.capacitytype import CapacityTypeController, ReservationCluster
    from awsprovider.controllers.expiration import CAPACITY_RESERVATION_EXPIRATION_PERIOD, ExpirationController

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
