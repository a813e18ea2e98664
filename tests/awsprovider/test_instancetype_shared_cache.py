"""The process-wide instance-type memo (awsprovider.instancetype.SHARED_CACHE, issue #13).

Upstream's provider builds its instance types once per process and keys the cache by what changes
them (pkg/providers/instancetype/instancetype.go List: the NodeClass hash, the unavailable-offerings
sequence number, pricing); karpy's providers are per run, so equal inputs share one table across
providers -- and unequal ones (another price table, updated prices, a filled ICE cache) never do.
"""

from __future__ import annotations

from pathlib import Path

import karpy
from awsprovider.cloudprovider import DEFAULT_NODECLASS_NAME, AWSCloudProvider
from awsprovider.instancetype import SHARED_CACHE, InstanceTypeProvider
from karpy.scheduling.labels import CAPACITY_TYPE_ON_DEMAND

EXAMPLE = str(Path(__file__).resolve().parents[2] / "karpy" / "examples" / "generation-preference.yaml")


def _provider(made: list[AWSCloudProvider], prices: str = "2026-07-20") -> AWSCloudProvider:
    p = AWSCloudProvider("us-east-1", prices)
    made.append(p)
    return p


def _prototypes(p: AWSCloudProvider) -> tuple:
    nodeclass = p.resolve_nodeclass(DEFAULT_NODECLASS_NAME)
    assert nodeclass is not None
    return p.instance_types.prototypes(nodeclass)


def _od_price(its: tuple, name: str) -> float:
    it = next(it for it in its if it.name == name)
    return next(o.price for o in it.offerings if o.capacity_type == CAPACITY_TYPE_ON_DEMAND)


def test_equal_inputs_share_one_table_across_providers(made: list[AWSCloudProvider]) -> None:
    first = _prototypes(_provider(made))
    hits = SHARED_CACHE.hits
    second = _prototypes(_provider(made))
    assert second is first  # the same read-only prototypes, not a rebuild
    assert SHARED_CACHE.hits > hits


def test_another_price_table_is_another_entry(made: list[AWSCloudProvider]) -> None:
    new = _prototypes(_provider(made, "2026-07-20"))
    old = _prototypes(_provider(made, "2025-08-25"))  # predates the 8th generation's prices
    assert old is not new
    assert made[1].pricing.on_demand_price("c8i.large") is None
    assert _od_price(new, "c8i.large") == made[0].pricing.on_demand_price("c8i.large") > 0

    def od_available(its: tuple) -> bool:
        it = next(it for it in its if it.name == "c8i.large")
        return any(o.available for o in it.offerings if o.capacity_type == CAPACITY_TYPE_ON_DEMAND)

    assert od_available(new) and not od_available(old)  # no price: no launchable offering


def test_updated_prices_are_never_served_from_the_memo(made: list[AWSCloudProvider]) -> None:
    _prototypes(_provider(made))  # the memo holds this table's prototypes
    p = _provider(made)
    p.pricing.update_on_demand_prices({"m7i.2xlarge": 12.5})
    assert p.pricing.cache_token is None
    its = _prototypes(p)
    assert _od_price(its, "m7i.2xlarge") == 12.5
    # ... and the update did not reach the shared table another provider gets
    assert _od_price(_prototypes(_provider(made)), "m7i.2xlarge") != 12.5


def test_a_filled_ice_cache_builds_its_own_types_and_leaks_nothing(made: list[AWSCloudProvider]) -> None:
    shared = _prototypes(_provider(made))
    p = _provider(made)
    zone = next(o.zone for it in shared if it.name == "m7i.2xlarge" for o in it.offerings
                if o.capacity_type == CAPACITY_TYPE_ON_DEMAND and o.available)
    p.ice_cache.mark_unavailable("m7i.2xlarge", zone, CAPACITY_TYPE_ON_DEMAND)
    own = _prototypes(p)
    it = next(it for it in own if it.name == "m7i.2xlarge")
    marked = [o for o in it.offerings if o.capacity_type == CAPACITY_TYPE_ON_DEMAND and o.zone == zone]
    assert marked and not any(o.available for o in marked)
    # the shared table is untouched: a third provider (empty ICE cache) still sees the offering available
    third = _prototypes(_provider(made))
    assert third is shared
    it3 = next(it for it in third if it.name == "m7i.2xlarge")
    assert any(o.available for o in it3.offerings if o.capacity_type == CAPACITY_TYPE_ON_DEMAND and o.zone == zone)


def test_a_provider_without_the_memo_builds_equal_types(made: list[AWSCloudProvider]) -> None:
    p = _provider(made)
    shared = _prototypes(p)
    nodeclass = p.resolve_nodeclass(DEFAULT_NODECLASS_NAME)
    alone = InstanceTypeProvider("us-east-1", p.ec2.catalog, p.pricing, p.ice_cache, shared=None)
    own = alone.prototypes(nodeclass)
    assert own is not shared
    assert [(it.name, [(o.capacity_type, o.zone, o.price, o.available) for o in it.offerings], it.capacity)
            for it in own] == [
           (it.name, [(o.capacity_type, o.zone, o.price, o.available) for o in it.offerings], it.capacity)
            for it in shared]


def test_a_b_a_with_another_price_table_gives_a_byte_for_byte() -> None:
    a1 = karpy.simulate(EXAMPLE, prices="2026-07-20").to_json()
    b = karpy.simulate(EXAMPLE, prices="2025-08-25", unavailable=("m7i.*:*:on-demand",)).to_json()
    a2 = karpy.simulate(EXAMPLE, prices="2026-07-20").to_json()
    assert b != a1
    assert a2 == a1
