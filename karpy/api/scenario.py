"""``karpy.io/v1alpha1`` Scenario: a horizon and timed events, one per run (optional).

::

    apiVersion: karpy.io/v1alpha1
    kind: Scenario
    metadata: {name: workday}
    spec:
      until: 6h                       # the horizon (default: run until settled)
      events:
      - at: 30m
        scale: {kind: Deployment, name: web, namespace: default, replicas: 40}
      - at: 1h
        capacity: {unavailable: ["c8i.*:*:*"]}
      - at: 2h
        capacity: {available: ["c8i.*:*:*"]}
      - at: 3h
        rollout: {kind: Deployment, name: web}
      - at: 4h
        interrupt: {node: default-bcdfg}         # or {instance_type: c7i.large, zone: us-east-1a}
      - at: 5h
        apply: {apiVersion: v1, kind: Pod, ...}  # an inline manifest (or a list, or a file path)
      - at: 5h30m
        delete: {kind: Deployment, name: web}
      - at: 5h45m
        cancel_reservation: {id: cr-0a1b2c3d4e5f60001}   # the provider cancels a capacity reservation
      - at: 6h
        scale: {kind: NodePool, name: gpu, replicas: 4}  # a static NodePool's spec.replicas

Each event has ``at`` and exactly one action. Durations are ``90s``, ``2m``, ``1h30m``, ``1.5h`` or
a number of seconds (:func:`parse_duration`). The CLI's ``--event`` takes the same events as one
line each (:func:`parse_event_line`).

Pod annotations that belong to time (read by :mod:`karpy.sim`): ``karpy.io/arrive-after``,
``karpy.io/depart-after``, ``karpy.io/run-for``.
"""

from __future__ import annotations

import math
import re
import shlex
from typing import Any, ClassVar, Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from karpy.api.meta import KubeModel, TypedObject

__all__ = [
    "ARRIVE_AFTER_ANNOTATION",
    "CancelReservationAction",
    "CapacityAction",
    "DEPART_AFTER_ANNOTATION",
    "EVENT_ACTIONS",
    "EVENT_LINE_SYNTAX",
    "InterruptAction",
    "ObjectRef",
    "RUN_FOR_ANNOTATION",
    "RolloutAction",
    "ScaleAction",
    "Scenario",
    "ScenarioEvent",
    "ScenarioSpec",
    "parse_duration",
    "parse_event_line",
]

#: Pod annotation: the pod is created this long after the start instead of at time 0.
ARRIVE_AFTER_ANNOTATION = "karpy.io/arrive-after"
#: Pod annotation: the pod is deleted this long after it was created (it departs; no controller
#: recreates it).
DEPART_AFTER_ANNOTATION = "karpy.io/depart-after"
#: Pod annotation: the pod's containers finish (phase Succeeded) this long after it started
#: running; a Job counts it as a completion.
RUN_FOR_ANNOTATION = "karpy.io/run-for"

#: The actions an event may carry (exactly one per event).
EVENT_ACTIONS = ("scale", "apply", "delete", "rollout", "capacity", "interrupt", "cancel_reservation")
_EVENT_KEYS = frozenset(("at", *EVENT_ACTIONS))
#: ``NodePool``: a static NodePool's ``spec.replicas`` (the scale subresource, karpy.static)
_SCALABLE = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "NodePool")
_DURATION_RE = re.compile(r"^(\d+(?:\.\d+)?h)?(\d+(?:\.\d+)?m)?(\d+(?:\.\d+)?s)?$")
EVENT_LINE_SYNTAX = ("'AT scale KIND/NAME REPLICAS [-n NS]' | 'AT rollout deployment/NAME [-n NS]' | "
                     "'AT delete KIND/NAME [-n NS]' | 'AT apply FILE' | 'AT capacity unavailable|available SPEC...' | "
                     "'AT interrupt node=NAME' | 'AT interrupt instance_type=TYPE zone=ZONE' | "
                     "'AT interrupt capacity_reservation=ID' | "
                     "'AT cancel-reservation ID'")


def parse_duration(value: Any, what: str = "duration") -> float:
    """Seconds of ``value``: a non-negative number, or text such as ``90s``, ``2m``, ``1h30m``,
    ``1.5h``. Raises ``ValueError`` naming ``what``."""
    if isinstance(value, bool):
        raise ValueError(f"{what} {value!r} is not a duration (e.g. 90s, 2m, 1h30m)")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip()
        number: float | None = None
        if not text.endswith(("h", "m", "s")):  # such a text is never a float: no exception to catch
            try:
                number = float(text)
            except ValueError:
                pass
        if number is not None:
            seconds = number
        else:
            m = _DURATION_RE.match(text)
            if not text or not m or not any(m.groups()):
                raise ValueError(f"{what} {value!r} is not a duration (e.g. 90s, 2m, 1h30m)") from None
            h, mi, sec = (float(g[:-1]) if g else 0.0 for g in m.groups())
            seconds = h * 3600 + mi * 60 + sec
    else:
        raise ValueError(f"{what} {value!r} is not a duration (e.g. 90s, 2m, 1h30m)")
    if math.isnan(seconds) or math.isinf(seconds):
        raise ValueError(f"{what} {value!r} is not a finite duration")
    if seconds < 0:
        raise ValueError(f"{what} {value!r} must not be negative")
    return seconds


class ObjectRef(KubeModel):
    """``{kind, name, namespace?}`` naming one object karpy loads."""

    kind: str
    name: str
    namespace: str = "default"

    @field_validator("kind", "name")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value:
            raise ValueError("must not be empty")
        return value


class ScaleAction(ObjectRef):
    """Set a Deployment / ReplicaSet / StatefulSet's ``spec.replicas``, or a static NodePool's."""

    #: strict: ``true`` or ``"3"`` is a wrong type, not 1 or 3 (the scale subresource's int32, apps/v1 Scale)
    replicas: int = Field(ge=0, le=2**31 - 1, strict=True)

    @field_validator("kind")
    @classmethod
    def _scalable(cls, value: str) -> str:
        if value not in _SCALABLE:
            raise ValueError(f"kind {value!r} cannot be scaled; one of {', '.join(_SCALABLE)}")
        return value


class RolloutAction(ObjectRef):
    """A rolling restart (``kubectl rollout restart``): a new pod-template hash."""

    kind: Literal["Deployment"] = "Deployment"


class CapacityAction(KubeModel):
    """Start (``unavailable``) or stop (``available``) injected capacity errors
    ``TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE``."""

    unavailable: list[str] = Field(default_factory=list)
    available: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_list(self) -> CapacityAction:
        if not self.unavailable and not self.available:
            raise ValueError("give `unavailable` or `available` (a list of TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE specs)")
        return self


class InterruptAction(KubeModel):
    """A spot interruption of one node (``node``) or of every spot node of ``instance_type`` in
    ``zone``; or the cloud provider reclaiming an interruptible capacity reservation
    (``capacity_reservation``: its nodes get the capacity-reservation interruption warning)."""

    node: str | None = None
    instance_type: str | None = None
    zone: str | None = None
    capacity_reservation: str | None = None

    @model_validator(mode="after")
    def _target(self) -> InterruptAction:
        if self.capacity_reservation is not None:
            if (self.node, self.instance_type, self.zone) != (None, None, None):
                raise ValueError("give `capacity_reservation` alone")
            return self
        if self.node is None and (self.instance_type is None or self.zone is None):
            raise ValueError("give `node`, or both `instance_type` and `zone`")
        if self.node is not None and (self.instance_type is not None or self.zone is not None):
            raise ValueError("give `node` or `instance_type`/`zone`, not both")
        return self


class CancelReservationAction(KubeModel):
    """The cloud provider cancels capacity reservation ``id`` (the AWS provider: EC2
    CancelCapacityReservation; its instances run on as on-demand)."""

    id: str

    @field_validator("id")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value:
            raise ValueError("must not be empty")
        return value


class ScenarioEvent(KubeModel):
    """``{at, <one action>}``; ``at`` is kept as seconds (:attr:`seconds`)."""

    at: float
    scale: ScaleAction | None = None
    apply: Any = None
    delete: ObjectRef | None = None
    rollout: RolloutAction | None = None
    capacity: CapacityAction | None = None
    interrupt: InterruptAction | None = None
    cancel_reservation: CancelReservationAction | None = None

    @field_validator("at", mode="before")
    @classmethod
    def _at(cls, value: Any) -> float:
        return parse_duration(value, "at")

    @model_validator(mode="before")
    @classmethod
    def _exactly_one(cls, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(str(k) for k in data if k not in _EVENT_KEYS)
            if unknown:
                raise ValueError(f"unknown action {unknown[0]!r}; an event has `at` and one of "
                                 f"{', '.join(EVENT_ACTIONS)}")
            given = [k for k in EVENT_ACTIONS if data.get(k) is not None]
            if len(given) != 1:
                raise ValueError(f"an event needs exactly one action ({', '.join(EVENT_ACTIONS)}); "
                                 f"got {', '.join(given) if given else 'none'}")
            if "at" not in data:
                raise ValueError("`at` is missing (when the event happens, e.g. 30m)")
        return data

    @property
    def action(self) -> str:
        """The name of the event's action."""
        for k in EVENT_ACTIONS:
            if getattr(self, k) is not None:
                return k
        raise StopIteration  # as next() over no action did


class ScenarioSpec(KubeModel):
    """``until`` (seconds, None = run until settled) and the events."""

    until: float | None = None
    events: list[ScenarioEvent] = Field(default_factory=list)

    @field_validator("until", mode="before")
    @classmethod
    def _until(cls, value: Any) -> float | None:
        if value is None:
            return None
        seconds = parse_duration(value, "until")
        if seconds <= 0:
            raise ValueError(f"until {value!r} must be greater than 0")
        return seconds

    # an event after the horizon is reported by karpy.sim.scenario (the horizon may be overridden
    # by --until / simulate(until=))


class Scenario(TypedObject):
    """karpy.io/v1alpha1 Scenario (see the module docstring)."""

    API_VERSION: ClassVar[str] = "karpy.io/v1alpha1"
    KIND: ClassVar[str] = "Scenario"
    CLUSTER_SCOPED: ClassVar[bool] = True

    spec: ScenarioSpec = Field(default_factory=ScenarioSpec)
    #: (file, document number) it was loaded from, for error messages (set by the loader)
    _source: tuple[str, int | None] = PrivateAttr(default=("<scenario>", None))

    @property
    def source(self) -> tuple[str, int | None]:
        """``(file, document number)`` the Scenario came from."""
        return self._source


_CANONICAL_KINDS = {k.lower(): k for k in (*_SCALABLE, "Job", "DaemonSet", "Pod", "EC2NodeClass",
                                           "NodeOverlay", "PriorityClass", "PodDisruptionBudget")}


def _ref(text: str, line: str) -> tuple[str, str]:
    kind, sep, name = text.partition("/")
    if not sep or not kind or not name:
        raise ValueError(f"--event {line!r}: expected KIND/NAME, got {text!r}")
    return _CANONICAL_KINDS.get(kind.lower(), kind), name


#: a quote, an escape, or whitespace that shlex does not split on (str.split does)
_SHLEX_SPECIAL = re.compile(r"""['"\\]|[^\S \t\r\n]""")


def _shlex_plain(line: str) -> bool:
    """``shlex.split(line) == line.split()``: no quote, no escape, only shlex's whitespace
    (performance only: a year of 10-minute events is 52,559 lines)."""
    return _SHLEX_PLAIN_ENABLED and _SHLEX_SPECIAL.search(line) is None


#: the equivalence test switches the plain-line shortcut off
_SHLEX_PLAIN_ENABLED = True


def parse_event_line(line: str) -> dict[str, Any]:
    """One ``--event`` line (:data:`EVENT_LINE_SYNTAX`) -> the event as a dict (validated later as a
    :class:`ScenarioEvent`). Raises ``ValueError`` with a one-line message quoting ``line``."""
    try:
        tokens = line.split() if _shlex_plain(line) else shlex.split(line)
    except ValueError as err:
        raise ValueError(f"--event {line!r}: {err}") from None
    if len(tokens) < 2:
        raise ValueError(f"--event {line!r}: expected {EVENT_LINE_SYNTAX}")
    at, action, rest = tokens[0], tokens[1].lower(), tokens[2:]
    parse_duration(at, f"--event {line!r}: at")
    namespace = "default"
    if "-n" in rest:
        i = rest.index("-n")
        if i + 1 >= len(rest):
            raise ValueError(f"--event {line!r}: -n needs a namespace")
        namespace = rest[i + 1]
        rest = rest[:i] + rest[i + 2:]
    if action == "scale":
        if len(rest) != 2:
            raise ValueError(f"--event {line!r}: expected 'AT scale KIND/NAME REPLICAS [-n NS]'")
        kind, name = _ref(rest[0], line)
        try:
            replicas = int(rest[1])
        except ValueError:
            raise ValueError(f"--event {line!r}: replicas {rest[1]!r} is not an integer") from None
        return {"at": at, "scale": {"kind": kind, "name": name, "namespace": namespace, "replicas": replicas}}
    if action in ("rollout", "delete"):
        if len(rest) != 1:
            raise ValueError(f"--event {line!r}: expected 'AT {action} KIND/NAME [-n NS]'")
        kind, name = _ref(rest[0], line)
        return {"at": at, action: {"kind": kind, "name": name, "namespace": namespace}}
    if action == "apply":
        if len(rest) != 1:
            raise ValueError(f"--event {line!r}: expected 'AT apply FILE'")
        return {"at": at, "apply": rest[0]}
    if action == "capacity":
        if len(rest) < 2 or rest[0] not in ("unavailable", "available"):
            raise ValueError(f"--event {line!r}: expected 'AT capacity unavailable|available SPEC...'")
        return {"at": at, "capacity": {rest[0]: rest[1:]}}
    if action == "interrupt":
        fields: dict[str, str] = {}
        for tok in rest:
            key, sep, value = tok.partition("=")
            key = key.replace("-", "_")
            if not sep or key not in ("node", "instance_type", "zone", "capacity_reservation"):
                raise ValueError(f"--event {line!r}: expected node=NAME, instance_type=TYPE zone=ZONE or "
                                 f"capacity_reservation=ID, got {tok!r}")
            fields[key] = value
        return {"at": at, "interrupt": fields}
    if action in ("cancel-reservation", "cancel_reservation"):
        if len(rest) != 1:
            raise ValueError(f"--event {line!r}: expected 'AT cancel-reservation ID'")
        return {"at": at, "cancel_reservation": {"id": rest[0]}}
    raise ValueError(f"--event {line!r}: unknown action {tokens[1]!r}; one of {', '.join(EVENT_ACTIONS)}")
