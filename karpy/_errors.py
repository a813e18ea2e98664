"""The bases of karpy's exceptions: the bottom of the layers, importing nothing from karpy.

Every module (and a cloud provider) derives its errors from these; the public catalogue with the
whole hierarchy is :mod:`karpy.errors`, at the top.
"""

from __future__ import annotations

__all__ = ["KarpyError", "PricingError", "UnknownPriceTable"]


class KarpyError(Exception):
    """Base of every exception karpy raises at its public surface."""


class PricingError(KarpyError, ValueError):
    """A price table, spot feed or price request is invalid."""


class UnknownPriceTable(PricingError):
    """No price table for the requested region or date (the message names the available ones)."""
