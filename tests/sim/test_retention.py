"""What a long run keeps of its history (issue #32, karpy.sim.retention): past its limits a run counts
timeline entries and gone pods instead of listing them; everything else in the document is the
whole run's, and progress follows the virtual clock."""

from __future__ import annotations

from collections import Counter
from typing import Any

import karpy
from karpy.api.builders import make_deployment, make_nodepool
from karpy.cloudprovider.fake import FakeCloudProvider
from karpy.sim.options import SimulationOptions
from karpy.sim.retention import DELETED_PODS_LIMIT, TIMELINE_LIMIT

#: a day of scale events every 30 min: pods created and deleted all day, nodes added once
EVENTS = [f"{30 * k}m scale deployment/web {12 if k % 2 else 4}" for k in range(1, 48)]


def run(**limits: Any) -> dict[str, Any]:
    options = SimulationOptions(**limits)
    result = karpy.simulate([make_nodepool(), make_deployment("web", replicas=4, requests={"cpu": "1"})],
                            cloud_provider=FakeCloudProvider(), region=None, until="24h", events=EVENTS,
                            options=options)
    return result.to_document()


def test_past_the_limits_the_document_lists_a_prefix_counts_the_rest_and_keeps_every_total() -> None:
    whole = run()
    assert not any(w.startswith(("timeline:", "pods:")) for w in whole["warnings"])  # far below the defaults
    entries, gone = len(whole["timeline"]), [k for k, p in whole["pods"].items() if p["phase"] == "Deleted"]
    assert entries > 300 and len(gone) > 100
    cut = run(timeline_limit=200, deleted_pods_limit=40)
    # the listed timeline is the whole run's first 200 entries; the later ones are counted per kind
    assert cut["timeline"] == whole["timeline"][:200]
    later = Counter(e["kind"] for e in whole["timeline"][200:])
    [note] = [w for w in cut["warnings"] if w.startswith("timeline:")]
    assert f"{sum(later.values()):,} later entries are counted" in note
    assert all(f"{kind} {n:,}" in note for kind, n in later.items())
    assert f"to t={whole['timeline'][199]['t']:g}s" in note
    # pods: the first 40 gone pods listed (those still in the cluster always), the rest counted
    listed_gone = [k for k, p in cut["pods"].items() if p["phase"] == "Deleted"]
    assert len(listed_gone) == 40 and set(listed_gone) <= set(gone)
    assert {k: p for k, p in cut["pods"].items() if p["phase"] != "Deleted"} == \
        {k: p for k, p in whole["pods"].items() if p["phase"] != "Deleted"}
    [pods_note] = [w for w in cut["warnings"] if w.startswith("pods:")]
    assert f"{len(gone) - 40:,} later ones are counted, not listed (Deleted {len(gone) - 40:,})" in pods_note
    # the decisions and every total are the whole run's
    for key in ("nodeclaims", "cost", "cost_per_hour", "simulation"):
        assert cut[key] == whole[key], key
    assert [w for w in cut["warnings"] if not w.startswith(("timeline:", "pods:"))] == whole["warnings"]


def test_the_defaults_bound_a_long_run() -> None:
    assert SimulationOptions().timeline_limit == TIMELINE_LIMIT and TIMELINE_LIMIT <= 200_000
    assert SimulationOptions().deleted_pods_limit == DELETED_PODS_LIMIT and DELETED_PODS_LIMIT <= 20_000


def test_progress_follows_the_virtual_clock_between_provisioning_passes() -> None:
    seen: list[tuple[float, int]] = []
    karpy.simulate([make_nodepool(), make_deployment("web", replicas=4, requests={"cpu": "1"})],
                   cloud_provider=FakeCloudProvider(), region=None, until="24h", events=EVENTS, disruption=False,
                   progress=lambda t, passes, claims: seen.append((t, passes)))
    times = [t for t, _ in seen]
    assert times == sorted(times) and times[-1] >= 23 * 3600
    # most of the day runs without a provisioning pass (the nodes stay): progress still moves
    last_pass = min(t for t, p in seen if p == seen[-1][1])
    assert last_pass < 2 * 3600 and len({t for t, _ in seen if t > last_pass}) > 40


def test_progress_is_told_during_a_burst_of_kube_scheduler_cycles(monkeypatch: Any) -> None:
    """50,000 pods bind at one virtual instant (90 s of wall time): progress is called every
    PROGRESS_EVERY_CYCLES cycles too, with the figures of the moment."""
    import karpy.sim.simulation as simulation

    def run_with(every: int) -> tuple[list[tuple[float, int, int]], int]:
        monkeypatch.setattr(simulation, "PROGRESS_EVERY_CYCLES", every)
        seen: list[tuple[float, int, int]] = []
        result = karpy.simulate([make_nodepool(), make_deployment("web", replicas=120, requests={"cpu": "100m"})],
                                cloud_provider=FakeCloudProvider(), region=None,
                                progress=lambda t, passes, claims: seen.append((t, passes, claims)))
        return seen, result.to_document()["simulation"]["scheduling_cycles"]

    plain, cycles = run_with(10**9)
    told, cycles_again = run_with(16)
    assert cycles == cycles_again and cycles >= 120
    assert len(told) - len(plain) == cycles // 16
    # the extra calls repeat the figures of their moment: the same set, in virtual-time order
    assert set(told) == set(plain) and [t for t, _, _ in told] == sorted(t for t, _, _ in told)


def _churn(**limits: Any) -> Any:
    """The bundled example on the AWS provider, deployment/web scaled 6 <-> 9 every hour for 16 h
    with the disruption controller on: a NodeClaim launched and consolidated away about every 2 h."""
    from karpy.cli import bundled_example

    events = [f"{60 * k}m scale deployment/web {6 if k % 2 else 9}" for k in range(1, 16)]
    return karpy.simulate(bundled_example(), until="16h", events=events, disruption=True,
                          options=SimulationOptions(**limits))


def test_past_the_launch_detail_limit_a_gone_nodeclaim_lets_its_launch_detail_go() -> None:
    """launch_detail_limit: the first N NodeClaims gone from the cluster keep their launch detail
    (fleet block, explain), later ones gone let it go -- here and in the provider -- and the
    document says so; every NodeClaim is still listed, every decision and total unchanged."""
    from karpy.explain import DETAIL_RELEASED

    whole_result = _churn()
    whole = whole_result.to_document()
    gone = [nc for nc in whole["nodeclaims"] if nc["deleted_at"] is not None]
    assert len(gone) >= 4 and all(nc["fleet"] is not None for nc in whole["nodeclaims"])
    assert not any(w.startswith("nodeclaims:") for w in whole["warnings"])
    cut_result = _churn(launch_detail_limit=2)
    cut = cut_result.to_document()
    released = [nc["name"] for nc in cut["nodeclaims"] if nc["fleet"] is None]
    assert len(released) == len(gone) - 2 and set(released) <= {nc["name"] for nc in gone}
    # the two that kept theirs were the first gone
    kept_gone = [nc for nc in cut["nodeclaims"] if nc["deleted_at"] is not None and nc["fleet"] is not None]
    assert len(kept_gone) == 2
    assert max(nc["deleted_at"] for nc in kept_gone) <= min(
        nc["deleted_at"] for nc in cut["nodeclaims"] if nc["name"] in released)
    # every NodeClaim listed, each the same but for the fleet block it let go
    assert [{**nc, "fleet": None} if nc["name"] in released else nc for nc in whole["nodeclaims"]] \
        == cut["nodeclaims"]
    for key in ("cost", "cost_per_hour", "simulation", "pods", "timeline", "disruptions"):
        assert cut[key] == whole[key], key
    [note] = [w for w in cut["warnings"] if w.startswith("nodeclaims:")]
    assert f"first 2 NodeClaims gone" in note and f"{len(released):,} later ones gone have fleet null" in note
    assert [w for w in cut["warnings"] if not w.startswith("nodeclaims:")] == whole["warnings"]
    # explain: the released ones say why they have no detail; the rest is the same
    for name, entry in cut["explain"]["nodeclaims"].items():
        if name in released:
            assert entry["launch"] is None and entry["launch_note"] == DETAIL_RELEASED.format(limit=2)
        else:
            assert entry == whole["explain"]["nodeclaims"][name], name
    # the provider let its launch records go too
    assert not set(released) & set(cut_result.cloud_provider.launches)
    assert set(released) <= set(whole_result.cloud_provider.launches)


def test_the_launch_detail_limit_default() -> None:
    from karpy.sim.options import LAUNCH_DETAIL_LIMIT

    assert SimulationOptions().launch_detail_limit == LAUNCH_DETAIL_LIMIT == 500


def test_a_failed_launch_leaves_the_live_records() -> None:
    """A NodeClaim whose launch failed is gone at once: the per-round readers of the live records
    (cluster state, the disruption and static controllers) no longer walk every failed launch of the
    run -- a year whose launches failed walked thousands each round."""
    from karpy.api.builders import make_pod
    from karpy.api import load_manifests
    from karpy.simulator import new_simulation

    provider = FakeCloudProvider()
    provider.next_create_err = RuntimeError("InsufficientInstanceCapacity")
    sim = new_simulation(load_manifests([make_nodepool(), make_pod("a", requests={"cpu": "1"})]), provider,
                         SimulationOptions(time_limit=120))
    sim.run()
    failed = [r for r in sim.launches if r.error is not None]
    assert len(failed) == 1 and any(r.launched is not None for r in sim.launches)
    live = sim.existing_records()
    assert live and not [r for r in live if r.error is not None]
    assert [r.name for r in live] == [r.name for r in sim.launches if r.error is None and not r.deleted]
