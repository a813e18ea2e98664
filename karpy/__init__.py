"""karpy: a Karpenter-faithful node-provisioning engine.

Given NodePools and pending pods, karpy answers what Karpenter would launch, what it would cost
and why::

    import karpy
    result = karpy.simulate("manifests/", region="us-east-1", prices="2026-07-20")
    result.to_json()

``import karpy`` stays light: the engine loads on first use of :func:`simulate`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Result", "compare", "simulate", "sweep", "__version__"]

if TYPE_CHECKING:  # pragma: no cover
    from karpy.comparison import compare
    from karpy.result import Result
    from karpy.sweeps import sweep
    from karpy.simulator import simulate


def __getattr__(name: str) -> Any:
    if name == "simulate":
        from karpy.simulator import simulate

        return simulate
    if name == "compare":
        from karpy.comparison import compare

        return compare
    if name == "sweep":
        from karpy.sweeps import sweep

        return sweep
    if name == "Result":
        from karpy.result import Result

        return Result
    raise AttributeError(f"module 'karpy' has no attribute {name!r}")
