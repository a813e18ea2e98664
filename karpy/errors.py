"""The exceptions karpy raises at its public surface, under one base, :class:`KarpyError`.

``except karpy.errors.KarpyError`` catches every error karpy reports about its input or a cloud
provider; each class also keeps the built-in base it had before (``ManifestError`` is still a
``ValueError``, ``ExplainLookupError`` a ``LookupError``), so existing ``except`` clauses and
messages are unchanged. The classes live beside the code that raises them and are re-exported
here lazily (importing this module loads nothing else):

- Input: :class:`ManifestError` (``file``, ``document_index``, ``field_path``, ``message``, ``kind``,
  ``name``, ``line``; ``str()`` is the one-line ``<file>: document <n> (<Kind> "<name>"): <path>:
  <message>``), :class:`QuantityError`, :class:`AdmissionError` (``errors``: the API server's field
  errors), :class:`UnknownPriorityClass`, :class:`ExplainLookupError`, :class:`FeatureGateError`
  (``--feature-gates``), :class:`SchedulerConfigError` (``--scheduler-config``),
  :class:`DurationError` (a Go duration), :class:`CompareError` (``karpy.compare``'s designs),
  :class:`BillingAlignmentError` (``karpy.align_billing`` without a BillingProfile).
- Prices: :class:`PricingError` (an invalid price table, spot feed or price request) and its
  :class:`UnknownPriceTable` (no table for that region / date; the message lists what exists).
- Cloud providers: :class:`UnknownCloudProviderError` (no provider registered under the name) and
  Karpenter's ``cloudprovider/types.go`` errors -- :class:`CloudProviderError` with
  :class:`NodeClaimNotFoundError`, :class:`InsufficientCapacityError`,
  :class:`NodeClassNotReadyError`, :class:`CreateError` -- and :class:`UnevaluatedNodePoolError`,
  each carrying the upstream message text.
- Instance types: :class:`MinValuesError` (``InstanceTypes.satisfies_min_values`` / ``truncate``
  could not meet the minValues; upstream's message, ``min_needed``, ``unsatisfied``,
  ``instance_types``).

A provider's own errors derive from :class:`KarpyError` too (``awsprovider`` exports
``NodeClassError``, ``CapacitySpecError``, ``InstanceTypeError``). Internal control-flow values
(kube-scheduler's ``FitError``, CEL evaluation errors, Go-style ``str | None`` error returns of
the hot paths, e.g. ``InstanceTypes._truncate``) are not part of this surface; where a public
method wraps one, the error value becomes the exception here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports


class KarpyError(Exception):
    """Base of every exception karpy raises at its public surface."""


class PricingError(KarpyError, ValueError):
    """A price table, spot feed or price request is invalid."""


class UnknownPriceTable(PricingError):
    """No price table for the requested region or date (the message names the available ones)."""


_EXPORTS = {
    "ManifestError": "api.loader",
    "QuantityError": "api.quantity",
    "AdmissionError": "admission.admit",
    "UnknownPriorityClass": "kubescheduler.priority",
    "ExplainLookupError": "explain",
    "UnknownCloudProviderError": "cloudprovider.registry",
    "CloudProviderError": "cloudprovider.types",
    "NodeClaimNotFoundError": "cloudprovider.types",
    "InsufficientCapacityError": "cloudprovider.types",
    "MinValuesError": "cloudprovider.types",
    "NodeClassNotReadyError": "cloudprovider.types",
    "CreateError": "cloudprovider.types",
    "UnevaluatedNodePoolError": "cloudprovider.types",
    "FeatureGateError": "featuregates",
    "SchedulerConfigError": "options",
    "DurationError": "utils.duration",
    "CompareError": "comparison",
    "BillingAlignmentError": "alignment",
}

__all__ = ["KarpyError", "PricingError", "UnknownPriceTable", *_EXPORTS]

if TYPE_CHECKING:  # pragma: no cover
    from karpy.alignment import BillingAlignmentError
    from karpy.admission.admit import AdmissionError
    from karpy.api.loader import ManifestError
    from karpy.api.quantity import QuantityError
    from karpy.cloudprovider.registry import UnknownCloudProviderError
    from karpy.cloudprovider.types import (CloudProviderError, CreateError, InsufficientCapacityError,
                                           MinValuesError, NodeClaimNotFoundError, NodeClassNotReadyError,
                                           UnevaluatedNodePoolError)
    from karpy.comparison import CompareError
    from karpy.explain import ExplainLookupError
    from karpy.featuregates import FeatureGateError
    from karpy.options import SchedulerConfigError
    from karpy.utils.duration import DurationError
    from karpy.kubescheduler.priority import UnknownPriorityClass

__getattr__, __dir__ = lazy_exports("karpy", _EXPORTS, globals())
