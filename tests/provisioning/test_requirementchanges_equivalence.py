"""karpy/provisioning/requirementchanges.py: Compatible of a topology-narrowed requirement set,
tested on the changed keys only (topology_changes_error, apply_topology_requirements), against
``reqs.compatible(topo_reqs)`` and the plain Compatible-then-Add. Upstream:
pkg/controllers/provisioning/scheduling/{nodeclaim,existingnode}.go."""

from __future__ import annotations

import random

from karpy.cloudprovider import fake
from karpy.provisioning.nodeclaim import topology_changes_error, apply_topology_requirements
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS, LABEL_ZONE
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

WELL_KNOWN = CORE_WELL_KNOWN_LABELS


def _random_requirement(r: random.Random, key: str, values: list[str]) -> Requirement:
    op = r.choice(["In", "In", "NotIn", "Exists", "DoesNotExist"])
    return Requirement(key, op, r.sample(values, r.randint(1, min(3, len(values)))))


# --- topology_changes_error -------------------------------------------------------------------
def test_topology_changes_error_equals_compatible_of_the_topology_requirements() -> None:
    """nodeclaim.go:199-202 ``nodeClaimRequirements.Compatible(topologyRequirements)``."""
    r = random.Random(5)
    values = ["a", "b", "c"]
    outcomes = set()
    for _ in range(800):
        reqs = Requirements()
        for key in ("k1", "k2", LABEL_ZONE):
            if r.random() < 0.6:
                dict.__setitem__(reqs, key, _random_requirement(r, key, values))
        changes: dict[str, Requirement] = {}
        for key in r.sample(["k1", "k2", "k3", LABEL_ZONE], r.randint(1, 3)):
            changes[key] = _random_requirement(r, key, values)
        topo = reqs.copy()
        dict.update(topo, changes)
        want = reqs.compatible(topo, WELL_KNOWN)
        assert topology_changes_error(reqs, changes, WELL_KNOWN) == want
        outcomes.add(want is None)
    assert outcomes == {True, False}


WELL_KNOWN_APPLY = CORE_WELL_KNOWN_LABELS | fake.FakeCloudProvider().well_known_labels()


# --- apply_topology_requirements ----------------------------------------------------------------
def _plain_apply(reqs: Requirements, topo: Requirements, allow: frozenset[str]) -> tuple[Requirements, str | None]:
    """``reqs.Compatible(topoReqs)`` on the changed keys, then the topology requirements."""
    changed = Requirements()
    for k, v in topo.items():
        if dict.get(reqs, k) is not v:
            dict.__setitem__(changed, k, v)
    if not changed:
        return reqs, None
    e = reqs.compatible(changed, allow)
    return (reqs, e) if e is not None else (topo, None)


def test_apply_topology_requirements_per_key_check_equals_compatible() -> None:
    r = random.Random(5)
    values = ["a", "b", "c"]
    outcomes = set()
    for _ in range(600):
        reqs = Requirements()
        for key in ("k1", "k2", LABEL_ZONE):
            if r.random() < 0.6:
                dict.__setitem__(reqs, key, Requirement(key, r.choice(["In", "NotIn", "Exists", "DoesNotExist"]),
                                                        r.sample(values, r.randint(1, 2))))
        topo = reqs.copy()
        for key in r.sample(["k1", "k2", "k3", LABEL_ZONE], r.randint(0, 2)):
            op = r.choice(["In", "NotIn", "DoesNotExist", "Exists"])
            dict.__setitem__(topo, key, Requirement(key, op, r.sample(values, r.randint(1, 2))))
        got = apply_topology_requirements(reqs, topo, WELL_KNOWN_APPLY)
        want = _plain_apply(reqs, topo, WELL_KNOWN_APPLY)
        assert got[1] == want[1] and got[0] is want[0]
        outcomes.add((want[0] is reqs, want[1] is None))
    assert outcomes == {(True, True), (True, False), (False, True)}
