"""Requirements: a mutable, insertion-ordered mapping label key -> Requirement.

Mirrors pkg/scheduling/requirements.go. Go's ``error`` results are ``str | None`` here (None = ok);
where Go combines errors with multierr we join the messages with ``"; "``.

Determinism rules (Go iterates maps in random order):
- ``compatible`` reports the undefined key that sorts first (Go: the first one met in map order).
- ``intersects`` reports the failing keys in sorted key order.
- the "typo of" hint looks at candidates in sorted order and prefers a label whose name part
  (after '/') equals the bad key's suffix; otherwise the first matching candidate in sorted order.
- ``node_selector_requirements`` and ``labels`` follow insertion order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping

from karpy.scheduling.labels import OP_IN, RESTRICTED_LABELS
from karpy.scheduling.requirement import Requirement, make_node_selector_requirement

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.pod import Pod

_EMPTY_KEYS: frozenset[str] = frozenset()


def _not_in_or_dne(r: Requirement) -> bool:
    """``r.operator in {NotIn, DoesNotExist}`` without building the operator string."""
    return bool(r.values) if r.complement else not r.values


class Requirements(dict[str, Requirement]):
    """Mirrors requirements.go Requirements (``map[string]*Requirement``).

    ``Requirements(*reqs)`` adds each requirement (intersecting repeated keys). Use ``.copy()``
    where upstream deep-copies; the Requirement values themselves are immutable.
    """

    __slots__ = ()

    def __init__(self, *requirements: Requirement) -> None:
        super().__init__()
        if requirements:
            self.add(*requirements)

    # --- constructors --------------------------------------------------------------------------
    @classmethod
    def from_node_selector_requirements(cls, reqs: Iterable[Any], with_min_values: bool = True) -> Requirements:
        """Mirrors NewNodeSelectorRequirementsWithMinValues (and, with ``with_min_values=False``,
        NewNodeSelectorRequirements, which ignores minValues). ``reqs`` are duck-typed objects with
        ``key``, ``operator``, ``values`` and optional ``min_values``."""
        r = cls()
        add = r._add_one
        for q in reqs:
            mv = getattr(q, "min_values", None) if with_min_values else None
            add(Requirement(q.key, q.operator, q.values or (), mv))
        return r

    @classmethod
    def from_labels(cls, labels: Mapping[str, str] | None) -> Requirements:
        """Mirrors NewLabelRequirements: ``In [value]`` per label."""
        r = cls()
        if labels:
            add = r._add_one
            for k, v in labels.items():
                add(Requirement(k, OP_IN, (v,)))
        return r

    # --- mapping operations --------------------------------------------------------------------
    def _add_one(self, req: Requirement) -> None:
        existing = dict.get(self, req.key)
        if existing is not None:
            req = req.intersection(existing)
        self[req.key] = req

    def add(self, *requirements: Requirement) -> None:
        """Mirrors requirements.go Add: intersect with an existing requirement of the same key."""
        for req in requirements:
            existing = dict.get(self, req.key)
            if existing is not None:
                req = req.intersection(existing)
            self[req.key] = req

    def get(self, key: str) -> Requirement:  # type: ignore[override]
        """Mirrors requirements.go Get: an ``Exists`` requirement when the key is undefined."""
        r = dict.get(self, key)
        if r is None:
            return Requirement._make(key, True, frozenset())
        return r

    def has(self, key: str) -> bool:
        """Mirrors requirements.go Has: presence of the key."""
        return key in self

    def copy(self) -> Requirements:
        """A new Requirements with the same (immutable) Requirement values."""
        r = Requirements()
        dict.update(r, self)
        return r

    def __copy__(self) -> Requirements:
        return self.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> Requirements:
        return self.copy()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (list(self.values()),))

    def has_min_values(self) -> bool:
        """Mirrors requirements.go HasMinValues."""
        for r in self.values():
            if r.min_values is not None:
                return True
        return False

    # --- compatibility -------------------------------------------------------------------------
    def compatible(self, incoming: Requirements, allow_undefined: frozenset[str] = _EMPTY_KEYS) -> str | None:
        """Mirrors requirements.go Compatible.

        Keys of ``incoming`` that ``self`` does not define are denied (first error only) unless
        in ``allow_undefined`` (upstream ``AllowUndefinedWellKnownLabels`` = the full well-known
        set) or the incoming operator is NotIn/DoesNotExist. Then ``intersects``.
        """
        bad: str | None = None
        for key, req in incoming.items():
            if key in allow_undefined or key in self or _not_in_or_dne(req):
                continue
            if bad is None or key < bad:
                bad = key
        if bad is not None:
            return f'label "{bad}" does not have known values{label_hint(self, bad, allow_undefined)}'
        return self.intersects(incoming)

    def is_compatible(self, incoming: Requirements, allow_undefined: frozenset[str] = _EMPTY_KEYS) -> bool:
        """Boolean fast path of ``compatible`` (no error strings)."""
        for key, req in incoming.items():
            if key in allow_undefined or key in self or _not_in_or_dne(req):
                continue
            return False
        return self._intersects_ok(incoming)

    def _intersects_ok(self, incoming: Mapping[str, Requirement]) -> bool:
        """True when ``intersects`` would return None (no error strings built)."""
        if len(self) <= len(incoming):
            for key, existing in self.items():
                if key in incoming:
                    inc = incoming[key]
                    if not existing.has_intersection(inc) and not (_not_in_or_dne(inc) and _not_in_or_dne(existing)):
                        return False
        else:
            for key, inc in incoming.items():
                found = dict.get(self, key)
                if found is not None and not found.has_intersection(inc) and not (
                    _not_in_or_dne(inc) and _not_in_or_dne(found)
                ):
                    return False
        return True

    def intersects(self, incoming: Mapping[str, Requirement]) -> str | None:
        """Mirrors requirements.go Intersects over the keys present in both.

        A non-intersecting key is still fine when both operators are in {NotIn, DoesNotExist};
        otherwise ``key <k>, <incoming> not in <existing>`` for every such key (sorted by key).
        """
        if self._intersects_ok(incoming):
            return None
        errs: list[str] = []
        for key in sorted(k for k in incoming if k in self):
            existing = dict.__getitem__(self, key)
            inc = incoming[key]
            if not existing.has_intersection(inc) and not (_not_in_or_dne(inc) and _not_in_or_dne(existing)):
                errs.append(f"key {key}, {inc} not in {existing}")
        return "; ".join(errs)

    # --- conversions ---------------------------------------------------------------------------
    def node_selector_fields(self) -> list[tuple[str, str, list[str], int | None]]:
        """``(key, operator, values, min_values)`` tuples of ``node_selector_requirements``."""
        out: list[tuple[str, str, list[str], int | None]] = []
        for r in self.values():
            if r.gte is not None and r.lte is not None:
                out.extend(r.bounded_node_selector_fields())
            else:
                out.append(r.node_selector_fields())
        return out

    def node_selector_requirements(self) -> list[Any]:
        """Mirrors requirements.go NodeSelectorRequirements (Gte and Lte both emitted when both
        bounds exist), in insertion order."""
        return [make_node_selector_requirement(*f) for f in self.node_selector_fields()]

    def labels(self, exclude: frozenset[str] = _EMPTY_KEYS) -> dict[str, str]:
        """One concrete label per requirement via ``Requirement.any()``.

        Mirrors nodeclaimtemplate.go resolveCustomLabelsFromRequirements: restricted labels and
        ``exclude`` (callers pass the well-known labels and scheduling-simulation keys) are skipped,
        as are requirements whose ``any()`` is "".
        """
        out: dict[str, str] = {}
        for key, r in self.items():
            if key in exclude or key in RESTRICTED_LABELS:
                continue
            v = r.any()
            if v != "":
                out[key] = v
        return out

    def __str__(self) -> str:
        """Mirrors requirements.go String: restricted labels (hostname) dropped, sorted, ", "."""
        return ", ".join(sorted(str(r) for r in self.values() if r.key not in RESTRICTED_LABELS))

    def __repr__(self) -> str:
        return f"Requirements({self!s})"


def _rebuild(reqs: list[Requirement]) -> Requirements:
    r = Requirements()
    for q in reqs:
        dict.__setitem__(r, q.key, q)
    return r


def _suffix(key: str) -> str:
    """requirements.go getSuffix: the part after the first '/', else the whole key."""
    before, sep, after = key.partition("/")
    return after if sep else before


def label_hint(reqs: Mapping[str, Requirement], key: str, allowed_undefined: Iterable[str]) -> str:
    """Mirrors requirements.go labelHint: ``' (typo of "<label>"?)'`` or "".

    Candidates: first the allowed-undefined (well-known) labels, then the existing keys. A
    candidate matches if it contains ``key`` or ends with ``key``'s suffix. Go picks whichever
    matching label map iteration meets first; we prefer (deterministically) a candidate whose
    name part equals the suffix, then the first match in sorted order.
    """
    suffix = _suffix(key)
    for group in (allowed_undefined, reqs.keys()):
        matches = sorted(c for c in group if key in c or c.endswith(suffix))
        if matches:
            exact = [c for c in matches if _suffix(c) == suffix]
            return f' (typo of "{(exact or matches)[0]}"?)'
    return ""


def _pod_requirements(pod: Pod, include_preferred: bool) -> Requirements:
    """Mirrors requirements.go newPodRequirements (duck-typed over karpy.api.pod.Pod)."""
    spec = pod.spec
    requirements = Requirements.from_labels(getattr(spec, "node_selector", None))
    affinity = getattr(spec, "affinity", None)
    node_affinity = getattr(affinity, "node_affinity", None) if affinity is not None else None
    if node_affinity is None:
        return requirements
    if include_preferred:
        preferred = getattr(node_affinity, "preferred_during_scheduling_ignored_during_execution", None)
        if preferred:
            # Heaviest preference; Go's sort.Slice is unstable, we keep the first on ties and do
            # not reorder the pod's list (upstream sorts it in place).
            heaviest = preferred[0]
            for term in preferred[1:]:
                if term.weight > heaviest.weight:
                    heaviest = term
            exprs = getattr(heaviest.preference, "match_expressions", None) or ()
            requirements.add(*Requirements.from_node_selector_requirements(exprs, with_min_values=False).values())
    required = getattr(node_affinity, "required_during_scheduling_ignored_during_execution", None)
    if required is not None:
        terms = getattr(required, "node_selector_terms", None)
        if terms:
            # Only the first term: an outer loop relaxes OR-terms one at a time.
            exprs = getattr(terms[0], "match_expressions", None) or ()
            requirements.add(*Requirements.from_node_selector_requirements(exprs, with_min_values=False).values())
    return requirements


def pod_requirements(pod: Pod) -> Requirements:
    """Mirrors requirements.go NewPodRequirements: nodeSelector, the heaviest preferred term
    (treated as required) and the first required node-selector term; matchFields ignored."""
    return _pod_requirements(pod, True)


def strict_pod_requirements(pod: Pod) -> Requirements:
    """Mirrors requirements.go NewStrictPodRequirements: like ``pod_requirements`` without
    preferences."""
    return _pod_requirements(pod, False)


def has_preferred_node_affinity(pod: Pod | None) -> bool:
    """Mirrors requirements.go HasPreferredNodeAffinity."""
    if pod is None:
        return False
    affinity = getattr(pod.spec, "affinity", None)
    node_affinity = getattr(affinity, "node_affinity", None) if affinity is not None else None
    return bool(node_affinity is not None and getattr(
        node_affinity, "preferred_during_scheduling_ignored_during_execution", None))
