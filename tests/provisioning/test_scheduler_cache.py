"""SchedulerCache (karpy/provisioning/schedulercache.py, issue #13): what NewScheduler builds on
every pass is kept while the cloud provider's key for a NodePool's instance types is unchanged,
and rebuilt when any key input changes -- one test per input. Each cached answer is compared with
a Scheduler built without the cache (CONTRIBUTING: every shortcut against what it shortcuts)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from karpy.api.builders import make_nodepool, make_pod
from karpy.cloudprovider import fake
from karpy.cloudprovider.types import MIN_VALUES_POLICY_BEST_EFFORT, Offering
from karpy.provisioning.provisioner import Provisioner
from karpy.provisioning.schedulercache import SchedulerCache, pass_key
from karpy.scheduling.labels import LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_ZONE
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements
from karpy.state.cluster import ClusterState


class KeyedProvider(fake.FakeCloudProvider):
    """The fake provider with the optional ``instance_types_key``: ``key`` is what it answers
    (a test changes it together with the types, as a real provider's key follows its types)."""

    def __init__(self, its: Sequence[Any]) -> None:
        super().__init__(instance_types=list(its))
        self.key: Hashable | None = ("catalogue", 1)
        self.listed = 0

    def instance_types_key(self, nodepool: Any) -> Hashable | None:
        return self.key

    def get_instance_types(self, nodepool: Any) -> list[Any]:
        self.listed += 1
        return list(super().get_instance_types(nodepool))


def _scheduler(prov: Provisioner, pools: Sequence[Any], pods: Sequence[Any] = ()) -> Any:
    pods = list(pods) or [make_pod("p", requests={"cpu": "1"})]
    s = prov.new_scheduler(pods, pools, ClusterState(), [])
    assert s is not None
    return s


def _view(s: Any) -> tuple[Any, ...]:
    """What the cached parts decide: the templates' types (names), the template errors, the
    reserved capacity."""
    rm = s.reservation_manager
    return ([(t.nodepool_name, [it.name for it in t.instance_type_options]) for t in s.templates],
            dict(s.template_errors), dict(rm.capacity) if rm is not None else None)


def _uncached(provider: Any, pools: Sequence[Any], **kw: Any) -> Any:
    """The same Scheduler built without any cache (a provider without a key)."""
    plain = fake.FakeCloudProvider(instance_types=list(provider.get_instance_types(pools[0])))
    return _scheduler(Provisioner(plain, **kw), pools)


def test_an_unchanged_key_lists_the_types_once_and_reuses_what_is_derived() -> None:
    provider = KeyedProvider(fake.instance_types(40))
    prov = Provisioner(provider)
    pools = [make_nodepool("default")]
    first = _scheduler(prov, pools)
    second = _scheduler(prov, [make_nodepool("default")])  # an equal NodePool, a new object
    assert provider.listed == 1 and prov.scheduler_cache.hits == 1
    assert second.index is first.index
    assert second.instance_types["default"] is first.instance_types["default"]
    assert _view(second) == _view(first) == _view(_uncached(provider, pools))
    # the templates own their lists (a Solve may narrow a claim's, never the cache's)
    assert second.templates[0].instance_type_options is not first.templates[0].instance_type_options


def test_a_changed_provider_key_lists_again_and_rebuilds_everything() -> None:
    provider = KeyedProvider(fake.instance_types(40))
    prov = Provisioner(provider)
    pools = [make_nodepool("default")]
    first = _scheduler(prov, pools)
    provider.instance_types = fake.instance_types(12)
    provider.key = ("catalogue", 2)
    second = _scheduler(prov, pools)
    assert provider.listed == 2
    assert second.index is not first.index
    assert len(second.templates[0].instance_type_options) == 12
    assert _view(second) == _view(_uncached(provider, pools))


def test_a_provider_without_a_key_is_asked_every_pass() -> None:
    provider = KeyedProvider(fake.instance_types(10))
    provider.key = None
    prov = Provisioner(provider)
    pools = [make_nodepool("default")]
    first = _scheduler(prov, pools)
    second = _scheduler(prov, pools)
    assert provider.listed == 2 and prov.scheduler_cache.hits == 0
    assert second.index is not first.index


def test_a_changed_nodepool_template_refilters_its_types() -> None:
    provider = KeyedProvider(fake.instance_types(40))
    prov = Provisioner(provider)
    first = _scheduler(prov, [make_nodepool("default")])
    names = sorted(it.name for it in first.templates[0].instance_type_options)[:3]
    narrowed = [make_nodepool("default", requirements=[(LABEL_INSTANCE_TYPE, "In", names)])]
    second = _scheduler(prov, narrowed)
    assert provider.listed == 1  # the types are the provider's; the template pre-filter is the pool's
    assert sorted(it.name for it in second.templates[0].instance_type_options) == names
    assert _view(second) == _view(_uncached(provider, narrowed))
    nowhere = [make_nodepool("default", requirements=[(LABEL_ZONE, "In", ["nowhere"])])]
    third = _scheduler(prov, nowhere)
    assert third.templates == [] and "default" in third.template_errors
    assert _view(third) == _view(_uncached(provider, nowhere))


def test_another_min_values_policy_refilters() -> None:
    its = fake.instance_types(5)
    provider = KeyedProvider(its)
    pools = [make_nodepool("default", requirements=[
        {"key": LABEL_INSTANCE_TYPE, "operator": "Exists", "minValues": 50}])]
    strict = Provisioner(provider)
    assert _scheduler(strict, pools).templates == []  # 5 types cannot satisfy minValues 50
    cache = strict.scheduler_cache
    relaxed = Provisioner(provider, min_values_policy=MIN_VALUES_POLICY_BEST_EFFORT)
    relaxed.scheduler_cache = cache  # the same cache, another policy: another template entry
    assert len(_scheduler(relaxed, pools).templates) == 1


def _reserved_types(capacity: int) -> list[Any]:
    base = fake.new_instance_type("small", resources={"cpu": "2", "memory": "2Gi"})
    offering = Offering(Requirements(Requirement(LABEL_CAPACITY_TYPE, "In", ("reserved",)),
                                     Requirement(LABEL_ZONE, "In", ("test-zone-1",)),
                                     Requirement(fake.LABEL_RESERVATION_ID, "In", ("r-small",))),
                        0.01, available=True, reservation_capacity=capacity,
                        reservation_id_label=fake.LABEL_RESERVATION_ID)
    return [fake.new_instance_type("small", resources={"cpu": "2", "memory": "2Gi"},
                                   offerings=[*base.offerings, offering])]


def test_changed_reservation_counts_come_with_a_changed_key() -> None:
    """The reservations' counts are part of the types' offerings, so of a real provider's key
    (the AWS prototypes change with them): a new key gives the new counts; the manager spends a
    copy, never the cached map."""
    provider = KeyedProvider(_reserved_types(3))
    prov = Provisioner(provider)
    pools = [make_nodepool("default", requirements=[(LABEL_CAPACITY_TYPE, "In", ["reserved", "on-demand"])])]
    first = _scheduler(prov, pools)
    assert first.reservation_manager.capacity == {"r-small": 3}
    first.reservation_manager.capacity["r-small"] = 0  # what a Solve's reservations do to it
    assert _scheduler(prov, pools).reservation_manager.capacity == {"r-small": 3}
    provider.instance_types = _reserved_types(1)
    provider.key = ("catalogue", "one reserved left")
    assert _scheduler(prov, pools).reservation_manager.capacity == {"r-small": 1}


def test_pass_key_is_none_when_a_pool_has_no_key() -> None:
    assert pass_key({"a": 1, "b": None}) is None
    assert pass_key({"a": 1, "b": 2}, "x") == ((("a", 1), ("b", 2)), "x")
    assert pass_key({"a": 1, "b": 2}) != pass_key({"b": 2, "a": 1})  # pool order is part of it


def test_cache_tables_are_bounded() -> None:
    cache = SchedulerCache()
    for i in range(SchedulerCache.ENTRIES * 3):
        cache.index(("k", i), object)
        cache.reserved_capacity(("k", i), dict)
    assert len(cache._index) == SchedulerCache.ENTRIES  # noqa: SLF001
    assert len(cache._reserved) == SchedulerCache.ENTRIES  # noqa: SLF001
