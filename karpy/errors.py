"""The exceptions karpy raises at its public surface, under one base, :class:`KarpyError`.

The hierarchy (a class keeps the built-in base shown in brackets, so ``except ValueError`` still
catches it; a ``+`` is a subclass of the class it is indented under)::

    KarpyError                                karpy._errors (the leaf every layer imports)
    + ManifestError [ValueError]              karpy.api.loader (file, document_index, field_path, ...)
    + QuantityError [ValueError]              karpy.api.quantity
    + AdmissionError [ValueError]             karpy.admission.admit (errors: the field errors)
    + UnknownPriorityClass [ValueError]       karpy.kubescheduler.priority
    + FeatureGateError [ValueError]           karpy.featuregates (--feature-gates)
    + SchedulerConfigError [ValueError]       karpy.options (--scheduler-config)
    + DurationError [ValueError]              karpy.utils.duration (a Go duration)
    + PricingError [ValueError]               karpy._errors (a price table, spot feed or price request)
    | + UnknownPriceTable                     no table for that region / date (lists what exists)
    + UnknownCloudProviderError [ValueError]  karpy.cloudprovider.registry
    + CloudProviderError                      karpy.cloudprovider.types (upstream's cloudprovider/types.go)
    | + NodeClaimNotFoundError
    | + InsufficientCapacityError
    | + NodeClassNotReadyError
    | + CreateError
    + UnevaluatedNodePoolError                karpy.cloudprovider.types
    + MinValuesError [ValueError]             karpy.cloudprovider.types (minValues not met)
    + ExplainLookupError [LookupError]        karpy.explain
    + CompareError [ValueError]               karpy.comparison (karpy.compare's designs)
    + BillingAlignmentError [ValueError]     karpy.billing (karpy.align_billing without a BillingProfile)
    + PlanError [ValueError]                  karpy.planner (a change, --delete or --fail-on that is bad input)

``ManifestError``'s ``str()`` is the one line ``<file>: document <n> (<Kind> "<name>"): <path>:
<message>``; ``MinValuesError`` carries ``min_needed``, ``unsatisfied`` and ``instance_types``.
The classes live beside the code that raises them and are re-exported here lazily (importing this
module loads nothing but the bases); each carries the upstream message text where it mirrors one.
A provider's own errors derive from :class:`KarpyError` too (``awsprovider`` exports
``NodeClassError``, ``CapacitySpecError``, ``InstanceTypeError``). Internal control-flow values
(kube-scheduler's ``FitError``, CEL evaluation errors, Go-style ``str | None`` error returns of
the hot paths, e.g. ``InstanceTypes._truncate``) are not part of this surface; where a public
method wraps one, the error value becomes the exception here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._errors import KarpyError, PricingError, UnknownPriceTable
from karpy._exports import lazy_exports

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
    "PlanError": "planner",
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
    from karpy.planner import PlanError
    from karpy.explain import ExplainLookupError
    from karpy.featuregates import FeatureGateError
    from karpy.options import SchedulerConfigError
    from karpy.utils.duration import DurationError
    from karpy.kubescheduler.priority import UnknownPriorityClass

__getattr__, __dir__ = lazy_exports("karpy", _EXPORTS, globals())
