"""Virtual time 0 of the API's timestamps (k8s.io/apimachinery meta/v1 time.go's ``Time``).

karpy's clock counts seconds since :data:`EPOCH`; a ``creationTimestamp`` (or any ``metav1.Time``
field) is ``EPOCH + seconds``. Imports nothing, so every layer may use it.
"""

from __future__ import annotations

from datetime import datetime, timezone

__all__ = ["EPOCH"]

#: Virtual time 0 as a timestamp (for creationTimestamp and similar fields).
EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
