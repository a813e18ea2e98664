"""Admission as the API server does it: upstream schemas, defaults, CEL rules, names, strict decoding.

:func:`admit` checks one manifest against its kind's schema — a CRD (Karpenter's ``karpenter.sh``
CRDs ship in ``karpy/admission/crds/``; a provider names its own on its model classes) or the
Kubernetes schema of a built-in kind — and returns a pruned, defaulted copy plus warnings, or raises
:class:`AdmissionError` carrying the API server's field errors.
"""

from karpy.admission.admit import UNKNOWN_FIELD_HINTS, AdmissionError, Admitted, admit, crd_for
from karpy.admission.builtin import KUBERNETES_VERSION
from karpy.admission.crd import CRD, KARPENTER_CRDS, load_crd
from karpy.admission.fielderrors import FieldError

__all__ = ["CRD", "KARPENTER_CRDS", "KUBERNETES_VERSION", "UNKNOWN_FIELD_HINTS", "AdmissionError", "Admitted",
           "FieldError", "admit", "crd_for", "load_crd"]
