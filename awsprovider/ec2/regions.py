"""Which regions the mocked EC2 can simulate end to end.

A region works when moto ships its instance-type offerings (per-zone DescribeInstanceTypeOfferings
data, ``moto/ec2/resources/instance_type_offerings/availability-zone/<region>.json.gz``): without
them no instance type has an offering and every pod would stay pending. moto ships none for the
``aws-cn`` and ``aws-us-gov`` partitions, so ``cn-north-1`` or ``us-gov-west-1`` cannot be simulated
even though karpy bundles their price tables -- those tables can still price a simulated
commercial region as a proxy (``--price-region``).
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["UnsupportedRegionError", "check_region", "simulated_regions"]

_OFFERINGS_DIR = ("instance_type_offerings", "availability-zone")
_SUFFIX = ".json.gz"


class UnsupportedRegionError(ValueError):
    """The mocked EC2 has no instance-type offerings for this region."""


@lru_cache(maxsize=1)
def simulated_regions() -> frozenset[str]:
    """The regions moto has per-zone instance-type offerings for (read from its package data).

    Found through moto's package location (``importlib.util.find_spec``), without importing
    ``moto.ec2``: the mocked EC2 imports it itself, with its import-time botocore sessions sharing
    one loader (:func:`awsprovider.ec2.backend._import_moto_ec2`)."""
    from awsprovider.ec2.catalogcache import moto_root

    root = moto_root()
    if root is None:
        return frozenset()
    offerings = root.joinpath("ec2", "resources", *_OFFERINGS_DIR)
    return frozenset(p.name[: -len(_SUFFIX)] for p in offerings.iterdir() if p.name.endswith(_SUFFIX))


def check_region(region: str) -> None:
    """Raise :class:`UnsupportedRegionError` (one line, with the way out) unless ``region`` works."""
    if region in simulated_regions():
        return
    raise UnsupportedRegionError(
        f"region {region!r} cannot be simulated: the mocked EC2 (moto) has no instance-type offerings for it "
        f"(it has them for {len(simulated_regions())} commercial regions, none in the aws-cn / aws-us-gov "
        f"partitions); simulate a supported region and price it with --price-region {region} if karpy has "
        f"that region's price table")
