"""The mocked EC2: a pure fleet model (:mod:`.fleet`), injected capacity errors (:mod:`.capacity`),
the moto-backed client with the model installed (:mod:`.backend`) and the catalogue reader
(:mod:`.catalog`). Import :class:`MockedEC2` from :mod:`awsprovider.ec2.backend` (it imports boto3 and
moto lazily at start)."""

from awsprovider.ec2.capacity import CapacityModel, CapacityRule, CapacitySpecError, parse_capacity_spec
from awsprovider.ec2.fleet import (
    FleetAllocator,
    FleetChoice,
    FleetDecision,
    FleetOverride,
    PriceBook,
    StaticPriceBook,
)

__all__ = [
    "CapacityModel",
    "CapacityRule",
    "CapacitySpecError",
    "FleetAllocator",
    "FleetChoice",
    "FleetDecision",
    "FleetOverride",
    "PriceBook",
    "StaticPriceBook",
    "parse_capacity_spec",
]
