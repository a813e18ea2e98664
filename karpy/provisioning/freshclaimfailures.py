"""Memoises addToNewNodeClaim's instance-type filter failures on fresh NodeClaims (scheduler.go),
so a template a pod fails is not tried again in full -- the same error texts and placements as
building every claim, pinned by tests/provisioning/test_freshclaimfailures_equivalence.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Sequence

from karpy.provisioning.instancetypeindex import InstanceTypeIndex
from karpy.provisioning.requirementchanges import topology_changes_error
from karpy.scheduling.labels import LABEL_HOSTNAME, OP_IN
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["FreshClaimFailures"]


class NodeClaim(Protocol):
    """What the memo reads of a provisioning NodeClaim (karpy.provisioning.nodeclaim.NodeClaim)."""

    @property
    def pods(self) -> Sequence[Any]: ...

    @property
    def reservation_manager(self) -> Any: ...

    @property
    def template(self) -> Any: ...

    @property
    def _index(self) -> Any: ...

    def _options(self) -> frozenset[int]: ...


class FreshClaimFailures:
    """The instance-type filter failures of fresh NodeClaims in one Solve, as error texts, keyed by
    what decides them (docs/internals/upstream-mirrors.md#freshclaimfailures)."""

    __slots__ = ("_entries", "_merged")

    #: the hostname of :meth:`answer`'s stand-in claim requirements (never a claim's: those are
    #: ``hostname-placeholder-NNNN``; and never read, see :meth:`answer`)
    STAND_IN_HOSTNAME = "fresh-claim-stand-in"

    def __init__(self) -> None:
        self._entries: dict[tuple[Any, ...], tuple[Any, frozenset[int], str]] = {}
        #: (id(template), pod requirement set) -> (template, the stand-in merged requirements, or
        #: None when the pod's requirements are incompatible with the template's)
        self._merged: dict[tuple[int, Any], tuple[Any, Requirements | None]] = {}

    def answer(self, template: Any, instance_types: Sequence[Any], pod: Pod, pod_data: Any, topology: Any,
               index: InstanceTypeIndex, relax_min_values: bool) -> str | None:
        """The error text of a fresh claim's try when memoised, without building the claim: runs
        CanAdd's steps before the filter on stand-in claim requirements, then looks the key up;
        None when anything differs (the caller builds the claim and tries it)."""
        if not self._memoisable(template, index, pod_data):
            return None
        keys = topology.evaluated_keys(pod)
        if keys is None or LABEL_HOSTNAME in keys:
            return None
        if pod_data.tolerates(template) is not None:
            return None
        mkey = (id(template), pod_data.req_signature)
        hit = self._merged.get(mkey)
        if hit is None or hit[0] is not template:
            wk = index.well_known
            reqs = template.requirements.copy()
            reqs.add(Requirement(LABEL_HOSTNAME, OP_IN, (self.STAND_IN_HOSTNAME,)))
            merged: Requirements | None = reqs
            if pod_data.requirements:
                if reqs.compatible(pod_data.requirements, wk) is not None:
                    merged = None
                else:
                    merged = reqs.copy()
                    merged.add(*pod_data.requirements.values())
            hit = self._merged[mkey] = (template, merged)
        merged = hit[1]
        if merged is None:
            return None
        wk = index.well_known
        changes, e = topology.narrow(pod, template.taints, pod_data.strict_requirements, merged, wk)
        if e is not None or (changes and LABEL_HOSTNAME in changes):
            return None
        if changes and topology_changes_error(merged, changes, wk) is not None:
            return None
        options = index.ids_of(instance_types)
        entry = self._entries.get(self._key(template, options, pod_data, changes, relax_min_values))
        if entry is None or entry[0] is not template or entry[1] is not options:
            return None
        return entry[2]

    @staticmethod
    def _memoisable(template: Any, index: InstanceTypeIndex, pod_data: Any) -> bool:
        """Whether a try of ``pod_data`` on a fresh claim of ``template`` may be memoised: no host
        ports, no volume topology alternatives, and nothing (the pod, the template, a type or an
        offering) that defines or constrains the hostname label."""
        return not (pod_data.host_ports or pod_data.volume_requirements or LABEL_HOSTNAME in pod_data.requirements
                    or LABEL_HOSTNAME in template.requirements or index.defines(LABEL_HOSTNAME))

    @staticmethod
    def _key(template: Any, options: frozenset[int], pod_data: Any, changes: dict[str, Requirement] | None,
             relax_min_values: bool) -> tuple[Any, ...]:
        return (id(template), id(options), pod_data.req_signature, tuple(changes.items()) if changes else (),
                pod_data.requests_key, relax_min_values)

    @classmethod
    def key(cls, claim: NodeClaim, pod_data: Any, changes: dict[str, Requirement] | None,
            relax_min_values: bool) -> tuple[Any, ...] | None:
        """The memo key of this try, or None when the try is not memoised."""
        if claim.pods or claim.reservation_manager is not None or (changes and LABEL_HOSTNAME in changes) \
                or not cls._memoisable(claim.template, claim._index, pod_data):
            return None
        return cls._key(claim.template, claim._options(), pod_data, changes, relax_min_values)

    def get(self, key: tuple[Any, ...], claim: NodeClaim) -> str | None:
        hit = self._entries.get(key)
        if hit is None or hit[0] is not claim.template or hit[1] is not claim._options():
            return None
        return hit[2]

    def put(self, key: tuple[Any, ...], claim: NodeClaim, err: Any) -> str:
        text = str(err)
        self._entries[key] = (claim.template, claim._options(), text)
        return text
