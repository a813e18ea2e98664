"""Resource lists and pod requests (pkg/utils/resources, component-helpers PodRequests)."""

from types import SimpleNamespace as NS

from karpy.api.quantity import NANO, parse_nanos
from karpy.scheduling import resources as r


def container(requests=None, restart_policy=None):
    return NS(resources=NS(requests=requests or {}, limits={}), restart_policy=restart_policy, ports=[])


def pod(containers=(), init=(), overhead=None):
    return NS(spec=NS(containers=list(containers), init_containers=list(init), overhead=overhead))


def test_pod_requests_sums_containers_and_adds_one_pod():
    p = pod([container({"cpu": "1", "memory": "1Gi"}), container({"cpu": "500m"})])
    assert r.pod_requests(p) == {"cpu": parse_nanos("1500m"), "memory": parse_nanos("1Gi"), "pods": NANO}


def test_init_container_larger_than_app_sum_wins():
    # upstream: sched/suite_test.go "should schedule based on the max resource requests of containers and initContainers"
    p = pod([container({"cpu": "1", "memory": "1Gi"})], init=[container({"cpu": "2", "memory": "1Gi"})])
    assert r.pod_requests(p)["cpu"] == parse_nanos("2")
    assert r.pod_requests(p)["memory"] == parse_nanos("1Gi")


def test_sidecars_add_to_app_sum_and_to_later_init_containers():
    # component-helpers resource.PodRequests with restartable init containers
    sidecar = container({"cpu": "1"}, restart_policy="Always")
    later_init = container({"cpu": "2"})
    p = pod([container({"cpu": "1"})], init=[sidecar, later_init])
    # app sum = 1 + sidecar 1 = 2; later init needs 2 + sidecar 1 = 3
    assert r.pod_requests(p)["cpu"] == parse_nanos("3")


def test_overhead_is_added():
    # upstream: sched/suite_test.go "should schedule with pod overhead" (RuntimeClass overhead)
    p = pod([container({"cpu": "1"})], overhead={"cpu": "2"})
    assert r.pod_requests(p)["cpu"] == parse_nanos("3")


def test_fits_is_exact_and_missing_total_is_zero():
    assert r.fits({"cpu": 5}, {"cpu": 5})
    assert not r.fits({"cpu": 6}, {"cpu": 5})
    assert not r.fits({"gpu": 1}, {"cpu": 5})
    assert r.fits({"gpu": 0}, {"cpu": 5})  # a zero request of an unknown resource fits
    assert not r.fits({}, {"cpu": -1})  # negative totals never fit


def test_min_resources_keeps_only_common_keys():
    assert r.min_resources({"cpu": 2, "memory": 5}, {"cpu": 1}) == {"cpu": 1}
    assert r.max_resources({"cpu": 2, "memory": 5}, {"cpu": 3}) == {"cpu": 3, "memory": 5}


def test_subtract_touches_only_lhs_keys():
    assert r.subtract({"cpu": 5}, {"cpu": 2, "memory": 9}) == {"cpu": 3}


def test_exceeds_is_strictly_greater():
    assert r.exceeds({"cpu": 10}, {"cpu": 10}) == []
    assert r.exceeds({"cpu": 11}, {"cpu": 10}) == ["cpu"]


def test_to_strings_uses_binary_for_memory():
    assert r.to_strings({"memory": parse_nanos("2Gi"), "cpu": parse_nanos("1500m")}) == {
        "cpu": "1500m", "memory": "2Gi"}


def test_merge_is_the_element_wise_sum_in_first_seen_order():
    """resources.Merge: every list's names, the first list's first (its order), each later new name
    where it is first seen; the values summed; the inputs untouched."""
    from hypothesis import given, strategies as st

    names = st.sampled_from(["cpu", "memory", "pods", "ephemeral-storage", "nvidia.com/gpu"])
    lists = st.lists(st.dictionaries(names, st.integers(-10**12, 10**12), max_size=5), max_size=4)

    @given(lists)
    def check(rls: list[dict[str, int]]) -> None:
        before = [dict(rl) for rl in rls]
        want: dict[str, int] = {}
        for rl in rls:
            for name, v in rl.items():
                want[name] = want.get(name, 0) + v
        got = r.merge(*rls)
        assert list(got.items()) == list(want.items())
        assert rls == before and all(got is not rl for rl in rls)

    check()


def test_a_host_port_usage_copy_is_its_own():
    """HostPortUsage.copy: the same reservations, and adding to or deleting from either leaves the other."""
    from karpy.scheduling.hostports import HostPort, HostPortUsage

    u = HostPortUsage()
    u.add("ns/a", [HostPort("0.0.0.0", 80, "TCP")])
    c = u.copy()
    assert type(c) is HostPortUsage and len(c) == 1 and c.conflicts("ns/b", [HostPort("0.0.0.0", 80, "TCP")])
    c.add("ns/b", [HostPort("0.0.0.0", 81, "TCP")])
    u.delete_pod("ns/a")
    assert len(u) == 0 and len(c) == 2 and not HostPortUsage().copy()
