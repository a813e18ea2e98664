"""``karpy.io/v1alpha1`` BillingProfile: what the account pays, beside Karpenter's list prices (one per run).

::

    apiVersion: karpy.io/v1alpha1
    kind: BillingProfile
    metadata: {name: acme}
    spec:
      enterpriseDiscount: "10%"        # of the on-demand price, on usage no commitment covers
      spotDiscount: "0%"               # of the spot price (omit: none)
      savingsPlans:
      - name: sp-m7i
        type: EC2Instance              # EC2Instance (one family, one region) or Compute
        commitment: "1.20"             # $/h of Savings Plan rates
        family: m7i                    # EC2Instance only
        region: us-east-1              # EC2Instance only (default: the run's region)
        rates: {m7i: "38%", m7i.large: "37%"}   # discount off on-demand, per family or per type
      reservedInstances:
      - name: ri-m8i
        instanceType: m8i.xlarge
        zone: us-east-1a               # zonal; omit for a regional RI (size-flexible within the family)
        count: 2
        discount: "40%"                # the term's effective discount off on-demand
      nodeFees:
      - name: agent
        perNodeHour: "0.01"            # or perVCPUHour

Savings Plan rates are the user's (AWS publishes them per instance type; karpy ships none):
docs/guides/billing.md says how to export them. Percentages are strings ``"N%"`` (0 <= N < 100);
dollar amounts are non-negative numbers or decimal strings. Unknown fields are errors.
:mod:`karpy.billing` applies a profile to a run.
"""

from __future__ import annotations

import math
import re
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field, PrivateAttr, field_validator, model_validator

from karpy.api.meta import KubeModel, TypedObject

__all__ = ["BillingProfile", "BillingProfileSpec", "NodeFee", "ReservedInstance", "SavingsPlan",
           "parse_percent", "parse_dollars"]

_PERCENT_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")
_FAMILY_RE = re.compile(r"^[a-z][a-z0-9-]*\d[a-z0-9-]*$")
_TYPE_RE = re.compile(r"^[a-z][a-z0-9-]*\d[a-z0-9-]*\.[a-z0-9-]+$")


def parse_percent(value: Any) -> float:
    """``"10%"`` -> 0.1 (0 <= N < 100). Raises ``ValueError`` with the expected form."""
    if isinstance(value, str):
        m = _PERCENT_RE.match(value)
        if m:
            fraction = float(m.group(1)) / 100.0
            if fraction >= 1.0:
                raise ValueError(f"{value!r} must be below 100%")
            return fraction
    raise ValueError(f"{value!r} is not a percentage; write it as a string such as \"10%\"")


def parse_dollars(value: Any) -> float:
    """A non-negative dollar amount (a number or a decimal string such as ``"0.25"``)."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a dollar amount")
    if isinstance(value, (int, float)):
        amount = float(value)
    elif isinstance(value, str):
        try:
            amount = float(value.strip().lstrip("$"))
        except ValueError:
            raise ValueError(f"{value!r} is not a dollar amount (e.g. \"0.25\")") from None
    else:
        raise ValueError(f"{value!r} is not a dollar amount (e.g. \"0.25\")")
    if math.isnan(amount) or math.isinf(amount):
        raise ValueError(f"{value!r} is not a finite dollar amount")
    if amount < 0:
        raise ValueError(f"{value!r} must not be negative")
    return amount


def family_of_type(instance_type: str) -> str:
    """``m7i.large`` -> ``m7i``."""
    return instance_type.split(".", 1)[0]


class _Strict(KubeModel):
    model_config = ConfigDict(extra="forbid")


class SavingsPlan(_Strict):
    """One Savings Plan: ``type`` EC2Instance (``family`` and ``region``) or Compute (any family);
    ``commitment`` $/h; ``rates``: discount off on-demand by family or by type (a type's own rate wins)."""

    name: str
    type: Literal["EC2Instance", "Compute"]
    commitment: float
    family: str | None = None
    region: str | None = None
    rates: dict[str, float] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not value:
            raise ValueError("must not be empty")
        return value

    @field_validator("commitment", mode="before")
    @classmethod
    def _commitment(cls, value: Any) -> float:
        amount = parse_dollars(value)
        if amount <= 0:
            raise ValueError(f"{value!r} must be greater than 0 ($/h)")
        return amount

    @field_validator("family")
    @classmethod
    def _family(cls, value: str | None) -> str | None:
        if value is not None and not _FAMILY_RE.match(value):
            raise ValueError(f"{value!r} is not an instance family (e.g. m7i)")
        return value

    @field_validator("rates", mode="before")
    @classmethod
    def _rates(cls, value: Any) -> dict[str, float]:
        if not isinstance(value, dict) or not value:
            raise ValueError("give the plan's discount rates: {family or type: \"N%\"} (AWS publishes them per "
                             "instance type; karpy ships none)")
        out: dict[str, float] = {}
        for key, rate in value.items():
            if not isinstance(key, str) or not (_FAMILY_RE.match(key) or _TYPE_RE.match(key)):
                raise ValueError(f"{key!r} is not an instance family (m7i) or type (m7i.large)")
            try:
                out[key] = parse_percent(rate)
            except ValueError as err:
                raise ValueError(f"{key}: {err}") from None
        return out

    @model_validator(mode="after")
    def _scope(self) -> SavingsPlan:
        if self.type == "EC2Instance":
            if self.family is None:
                raise ValueError("an EC2Instance Savings Plan needs `family` (e.g. m7i)")
            other = sorted(k for k in self.rates if family_of_type(k) != self.family)
            if other:
                raise ValueError(f"rates: {other[0]!r} is outside the plan's family {self.family!r}")
        elif self.family is not None or self.region is not None:
            raise ValueError("a Compute Savings Plan applies to every family and region: drop `family`/`region`")
        return self

    def rate(self, instance_type: str) -> float | None:
        """The plan's discount for ``instance_type`` (its own rate, else its family's), None if none."""
        own = self.rates.get(instance_type)
        return own if own is not None else self.rates.get(family_of_type(instance_type))


class ReservedInstance(_Strict):
    """``count`` Reserved Instances of ``instance_type``: zonal (``zone``) or regional (no zone);
    ``discount``: the term's effective discount off the on-demand price."""

    name: str | None = None
    instance_type: str
    zone: str | None = None
    count: int = Field(ge=1)
    discount: float

    @field_validator("instance_type")
    @classmethod
    def _type(cls, value: str) -> str:
        if not _TYPE_RE.match(value):
            raise ValueError(f"{value!r} is not an instance type (e.g. m7i.large)")
        return value

    @field_validator("discount", mode="before")
    @classmethod
    def _discount(cls, value: Any) -> float:
        return parse_percent(value)

    @property
    def label(self) -> str:
        """The RI's name, else ``ri-<type>[-<zone>]``."""
        return self.name or f"ri-{self.instance_type}" + (f"-{self.zone}" if self.zone else "")


class NodeFee(_Strict):
    """A fee per node-hour or per vCPU-hour (a licence, an agent) on every launched node."""

    name: str
    per_node_hour: float | None = Field(default=None, alias="perNodeHour")
    per_vcpu_hour: float | None = Field(default=None, alias="perVCPUHour")

    @field_validator("per_node_hour", "per_vcpu_hour", mode="before")
    @classmethod
    def _amount(cls, value: Any) -> float | None:
        return None if value is None else parse_dollars(value)

    @model_validator(mode="after")
    def _one(self) -> NodeFee:
        if (self.per_node_hour is None) == (self.per_vcpu_hour is None):
            raise ValueError("give exactly one of perNodeHour, perVCPUHour")
        return self


class BillingProfileSpec(_Strict):
    """See the module docstring."""

    enterprise_discount: float = 0.0
    spot_discount: float = 0.0
    savings_plans: list[SavingsPlan] = Field(default_factory=list)
    reserved_instances: list[ReservedInstance] = Field(default_factory=list)
    node_fees: list[NodeFee] = Field(default_factory=list)

    @field_validator("enterprise_discount", "spot_discount", mode="before")
    @classmethod
    def _percent(cls, value: Any) -> float:
        return 0.0 if value is None else parse_percent(value)

    @field_validator("reserved_instances")
    @classmethod
    def _no_overlap(cls, value: list[ReservedInstance]) -> list[ReservedInstance]:
        seen: dict[tuple[str, str | None], int] = {}
        for i, ri in enumerate(value):
            key = (ri.instance_type, ri.zone)
            if key in seen:
                scope = ri.zone or "regional"
                raise ValueError(f"[{i}] overlaps [{seen[key]}] ({ri.instance_type}, {scope}): give one entry "
                                 "with the total count")
            seen[key] = i
        return value

    @model_validator(mode="after")
    def _unique_names(self) -> BillingProfileSpec:
        names: set[str] = set()
        for label in [sp.name for sp in self.savings_plans] + [ri.label for ri in self.reserved_instances]:
            if label in names:
                raise ValueError(f"commitment name {label!r} is used twice")
            names.add(label)
        return self


class BillingProfile(TypedObject):
    """karpy.io/v1alpha1 BillingProfile (see the module docstring)."""

    API_VERSION: ClassVar[str] = "karpy.io/v1alpha1"
    KIND: ClassVar[str] = "BillingProfile"
    CLUSTER_SCOPED: ClassVar[bool] = True

    spec: BillingProfileSpec = Field(default_factory=BillingProfileSpec)
    #: (file, document number) it was loaded from, for error messages (set by the loader)
    _source: tuple[str, int | None] = PrivateAttr(default=("<billing>", None))

    @property
    def source(self) -> tuple[str, int | None]:
        """``(file, document number)`` the profile came from."""
        return self._source
