"""karpy/provisioning/scanskips.py's ``_OptionMisses`` against the plain in-flight scan it shortcuts.

Within one addToInflightNode scan, a claim whose CanAdd ended with no instance-type option
compatible with its merged requirements has, per topology key of the pod, the types ruled out by
the merged requirement for that key noted under the claim's own requirement for it; later claims
with an equal requirement whose options all lie in the noted set are skipped. Every test compares
a Solve with the skip against the same Solve without it (upstream's scan: CanAdd on each claim)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from karpy.api.builders import make_nodepool, make_pod, pod_affinity_term, requirement, topology_spread
from karpy.cloudprovider import fake
from karpy.provisioning import scanskips
from karpy.provisioning.scheduler import Scheduler
from karpy.provisioning.topology import Topology
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS, LABEL_HOSTNAME, LABEL_NODEPOOL, LABEL_ZONE
from karpy.state.cluster import ClusterState

WELL_KNOWN = CORE_WELL_KNOWN_LABELS | fake.FakeCloudProvider().well_known_labels()


def _types() -> dict[str, list[Any]]:
    """``narrow``'s types are offered in zones 1 and 2 only (its claims leave the zone undefined,
    so a zone-3 spread domain rules all their options out); ``wide``'s in every zone."""
    narrow = [fake.new_instance_type(
        f"narrow-{i}", resources={"cpu": str(i + 2), "memory": f"{4 * (i + 1)}Gi", "pods": "20"},
        offerings=[fake._offering("on-demand", z, 1.0 + i) for z in ("test-zone-1", "test-zone-2")])
        for i in range(4)]
    wide = [fake.new_instance_type(
        f"wide-{i}", resources={"cpu": str(2 * (i + 1)), "memory": f"{4 * (i + 1)}Gi", "pods": "20"})
        for i in range(4)]
    return {"narrow": narrow, "wide": wide}


def _pod(r: random.Random, i: int) -> Any:
    app = r.choice("abc")
    kind = r.choice(("zone-spread", "zone-spread", "generic", "generic", "generic", "host-spread",
                     "zone-affinity", "zone-pinned"))
    kw: dict[str, Any] = {}
    if kind == "zone-spread":
        kw["topology_spread_constraints"] = [topology_spread(LABEL_ZONE, {"app": app}, max_skew=r.choice([1, 2]))]
    elif kind == "host-spread":
        kw["topology_spread_constraints"] = [topology_spread(LABEL_HOSTNAME, {"app": app}, max_skew=2)]
    elif kind == "zone-affinity":
        kw["pod_affinity"] = [pod_affinity_term({"app": app}, LABEL_ZONE)]
    elif kind == "zone-pinned":
        kw["node_selector"] = {LABEL_ZONE: r.choice(("test-zone-1", "test-zone-3"))}
    # generic pods are larger: the Queue tries them first, so claims with the zone undefined exist
    cpu = r.choice(["1", "1500m"]) if kind == "generic" else r.choice(["100m", "250m", "500m"])
    return make_pod(f"p-{i:03d}", uid=f"p-{i:03d}", labels={"app": app},
                    requests={"cpu": cpu, "memory": "128Mi"}, **kw)


def _solve(seed: int) -> tuple[dict[str, str], dict[str, str], list[tuple[str, str, int, tuple[str, ...]]]]:
    """(placements, pod errors, claims: hostname, nodepool, pods, options) of one Solve."""
    r = random.Random(seed)
    types = _types()
    pools = [make_nodepool("narrow", weight=10), make_nodepool("wide")]
    if seed % 2:
        pools[0] = make_nodepool("narrow", weight=10, requirements=[requirement(("karpenter.sh/capacity-type", "In",
                                                                                 ["on-demand"]))])
    pods = [_pod(r, i) for i in range(120)]
    cluster = ClusterState.from_objects()
    topology = Topology(cluster, cluster.active_nodes(), pools, types, pods, "Respect", WELL_KNOWN)
    s = Scheduler(pools, cluster, cluster.active_nodes(), topology, types, [], well_known=WELL_KNOWN)
    results = s.solve(pods)
    out = {p.key: nc.hostname for nc in results.new_nodeclaims for p in nc.pods}
    claims = [(nc.hostname, nc.nodepool_name, len(nc.pods), tuple(it.name for it in nc.instance_type_options))
              for nc in results.new_nodeclaims]
    return out, dict(results.pod_errors), claims


@pytest.mark.parametrize("seed", range(6))
def test_option_misses_place_every_pod_where_the_plain_scan_does(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    skipped: list[bool] = []
    skips = scanskips._OptionMisses.skips

    def counted(stream: Any) -> Any:
        for hit in stream:
            skipped.append(hit)
            yield hit

    def counting(self: Any, values: Any, option_ids: Any, claims: list[Any], covers: Any = None) -> list[Any]:
        return [counted(s) for s in skips(self, values, option_ids, claims, covers)]

    monkeypatch.setattr(scanskips._OptionMisses, "skips", counting)
    fast = _solve(seed)
    assert any(skipped), "the scenario must exercise the skip"
    monkeypatch.setattr(scanskips._OptionMisses, "note", lambda self, nc, merged: None)
    plain = _solve(seed)
    assert fast == plain


def test_option_misses_with_every_prefilter_off_match(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _solve(7)
    monkeypatch.setattr(Topology, "hostname_blocked", lambda self, pod: [])
    monkeypatch.setattr(scanskips._TopologyMisses, "note", lambda self, err, reqs: None)
    monkeypatch.setattr(scanskips._OptionMisses, "note", lambda self, nc, merged: None)
    assert _solve(7) == fast


def test_no_notes_when_an_inverse_group_has_a_node_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Topology.evaluated_keys is None (a group evaluated on some nodes only): nothing is noted."""
    monkeypatch.setattr(Topology, "evaluated_keys", lambda self, pod: None)
    notes: list[int] = []
    note = scanskips._OptionMisses.note

    def counting(self: Any, nc: Any, merged: Any) -> None:
        notes.append(1)
        note(self, nc, merged)

    monkeypatch.setattr(scanskips._OptionMisses, "note", counting)
    fast = _solve(2)
    assert not notes
    monkeypatch.undo()
    assert _solve(2) == fast


def test_evaluated_keys_are_the_owned_and_inverse_group_keys() -> None:
    pods = [make_pod("a", uid="a", labels={"app": "a"},
                     topology_spread_constraints=[topology_spread(LABEL_ZONE, {"app": "a"})]),
            make_pod("b", uid="b", labels={"app": "a"},
                     pod_anti_affinity=[pod_affinity_term({"app": "a"}, LABEL_HOSTNAME)])]
    types = _types()
    pools = [make_nodepool("wide")]
    cluster = ClusterState.from_objects()
    topology = Topology(cluster, cluster.active_nodes(), pools, {"wide": types["wide"]}, pods, "Respect", WELL_KNOWN)
    assert topology.evaluated_keys(pods[0]) == {LABEL_ZONE, LABEL_HOSTNAME}  # b's anti-affinity selects a
    assert topology.evaluated_keys(pods[1]) == {LABEL_HOSTNAME}
    assert LABEL_NODEPOOL not in (topology.evaluated_keys(pods[0]) or ())
