"""The AWS provider's own controllers that act over virtual time (upstream pkg/controllers):
the capacity-reservation ``capacitytype`` controller (:mod:`awsprovider.controllers.capacitytype`)
and ``expiration`` controller (:mod:`awsprovider.controllers.expiration`). The AWS cloud provider
hands them to karpy's simulation through its ``controllers(cluster)`` method
(:class:`karpy.cloudprovider.types.ProviderController`)."""

from __future__ import annotations

from awsprovider.controllers.capacitytype import CapacityTypeController, ReservationCluster
from awsprovider.controllers.expiration import CAPACITY_RESERVATION_EXPIRATION_PERIOD, ExpirationController

__all__ = ["CAPACITY_RESERVATION_EXPIRATION_PERIOD", "CapacityTypeController", "ExpirationController",
           "ReservationCluster"]
