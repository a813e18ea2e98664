"""karpy: a Karpenter-faithful node-provisioning engine.

Given NodePools and pending pods, karpy answers what Karpenter would launch, what it would cost
and why::

    import karpy
    result = karpy.simulate("manifests/", region="us-east-1", prices="2026-07-20")
    result.to_json()
    karpy.schema()      # the document's JSON Schema (draft 2020-12)

``import karpy`` stays light: names resolve lazily, and the engine loads on first use of
:func:`simulate`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

__version__ = "0.1.0"
__all__ = ["Plan", "Result", "align_billing", "compare", "plan", "schema", "simulate", "sweep", "__version__"]

if TYPE_CHECKING:  # pragma: no cover
    from karpy.alignment import align_billing
    from karpy.comparison import compare
    from karpy.planner import Plan, plan
    from karpy.result import Result
    from karpy.schemas import schema
    from karpy.sweeps import sweep
    from karpy.simulator import simulate

__getattr__, __dir__ = lazy_exports(
    __name__, {"Result": "result", "align_billing": "alignment", "compare": "comparison", "Plan": "planner", "plan": "planner", "schema": "schemas", "simulate": "simulator",
               "sweep": "sweeps"}, globals())
