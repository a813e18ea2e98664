"""CPython's cyclic garbage collector during a run (performance only, issue #32).

A run keeps a large heap alive (modules, the cloud provider's catalogue, pods, the timeline), and each
full (generation 2) collection walks all of it: 5.5 s of the 44 s day benchmark. While a run loops,
:class:`FrozenSurvivors` freezes (``gc.freeze``) what is alive once the run is loaded and, after each
full collection, what survived it, so the next full collection walks only newer objects; the run's
end hands them all back (``gc.unfreeze``). ``karpy.simulate`` and ``karpy.plan`` freeze from the read
of their input on (``FrozenSurvivors(thresholds=False)``: the cloud provider's catalogue, the manifests
or dump, the set-up), keeping the host's thresholds there, and the run raises them inside that freeze:
at 2,000 pods the plan's full collections before its run took 1.3 s; raised thresholds during the
set-up made the 1,000-pod day's collections walk the new catalogue twice more (0.87 s, 0.43 s now).
Reference counting frees frozen objects as usual; only a reference cycle among them that became
garbage waits for the end of the run (the day benchmark's peak RSS: +14 MB). It also collects the young generation every 100,000 allocations instead of 700 and the
middle one every 20 young collections (:data:`RUN_GC_THRESHOLDS`, the ``karpy`` process's own; a
host's higher thresholds are kept), giving the host's back at the end: the day benchmark's collector
time 7.1 -> 2.6 s at 5,000 pods, 1.3 -> 0.3 s at 1,000. Nothing the run decides depends on when
garbage is collected.
"""

from __future__ import annotations

import gc
import threading
from types import TracebackType
from typing import Any, ClassVar

__all__ = ["RUN_GC_THRESHOLDS", "FrozenSurvivors"]

#: ``gc.set_threshold`` while a run loops (each at least; the ``karpy`` command sets them for its whole process)
RUN_GC_THRESHOLDS = (100_000, 20, 10)


class FrozenSurvivors:
    """``with FrozenSurvivors():`` around a run's loop (see the module docstring); ``thresholds=False``
    freezes without raising the thresholds (a read and set-up: :func:`karpy.simulate`). Does nothing
    when switched off (``enabled``), when the collector is disabled, or when objects are frozen
    already by the caller's own ``gc.freeze`` or another thread's run: their freeze is not undone.
    Inside a freeze of its own thread's enclosing FrozenSurvivors it only raises the thresholds."""

    #: the equivalence tests switch it off and compare the documents
    enabled: ClassVar[bool] = True
    #: the thread whose FrozenSurvivors holds the freeze (None: karpy holds none)
    _owner: ClassVar[int | None] = None

    def __init__(self, thresholds: bool = True) -> None:
        self.active = False
        self.raise_thresholds = thresholds
        self._thresholds: tuple[int, ...] = ()

    def __enter__(self) -> FrozenSurvivors:
        if not self.enabled or not gc.isenabled():
            return self
        owner = FrozenSurvivors._owner
        # (gc.get_freeze_count walks the frozen objects: asked only when karpy holds no freeze)
        if owner is None and not gc.get_freeze_count():
            self.active = True
            FrozenSurvivors._owner = threading.get_ident()
            gc.freeze()
            gc.callbacks.append(self._after_collection)
        elif owner != threading.get_ident():
            return self
        now = gc.get_threshold()
        raised = tuple(map(max, now, RUN_GC_THRESHOLDS))
        if self.raise_thresholds and raised != now:  # (an enclosing run raised them already: kept)
            self._thresholds = now
            gc.set_threshold(*raised)
        return self

    def _after_collection(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info.get("generation") == 2:
            gc.freeze()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._thresholds:
            gc.set_threshold(*self._thresholds)
            self._thresholds = ()
        if self.active:
            self.active = False
            FrozenSurvivors._owner = None
            gc.callbacks.remove(self._after_collection)
            gc.unfreeze()
