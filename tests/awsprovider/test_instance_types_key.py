"""AWSCloudProvider.instance_types_key (issue #13): the content key the provisioner's
SchedulerCache keeps a NodePool's instance types under. It must change with every input of
``get_instance_types`` -- upstream's provider cache key (instancetype.go cacheKey: the NodeClass,
the unavailable-offerings sequence numbers; InjectOfferings: the reservations' counts) plus the
NodeOverlays and the NodePool they are evaluated for -- and stay equal while none changes. One test
per input; each also checks the types themselves changed or stayed the same with the key."""

from __future__ import annotations

from typing import Any

import pytest

from awsprovider.apis.ec2nodeclass import KubeletConfiguration
from awsprovider.cloudprovider import AWSCloudProvider
from awsprovider.nodeclass import default_nodeclass
from karpy.api.builders import make_nodepool, make_pod
from karpy.api.nodeoverlay import NodeOverlay
from karpy.provisioning.provisioner import Provisioner
from karpy.state.cluster import ClusterState

from tests.awsprovider.reservation_helpers import cr, provider as reserved_provider

POOL_REF = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}


def _aws(made: list[AWSCloudProvider], **kw: Any) -> AWSCloudProvider:
    p = AWSCloudProvider("us-east-1", "2026-07-20", **kw)
    made.append(p)
    return p


def _pool(labels: dict[str, str] | None = None) -> Any:
    return make_nodepool("default", node_class_ref=POOL_REF, labels=labels)


def _summary(p: AWSCloudProvider, pool: Any) -> list[tuple[Any, ...]]:
    return [(it.name, sorted(it.capacity.items()),
             [(o.zone, o.capacity_type, o.price, o.available, o.reservation_capacity) for o in it.offerings])
            for it in p.get_instance_types(pool)]


def test_equal_while_nothing_changed(made: list[AWSCloudProvider]) -> None:
    p = _aws(made)
    pool = _pool()
    first = p.instance_types_key(pool)
    assert first is not None and p.instance_types_key(_pool()) == first
    assert _summary(p, pool) == _summary(p, _pool())


def test_an_unavailable_offering_changes_it(made: list[AWSCloudProvider]) -> None:
    p = _aws(made)
    pool = _pool()
    before, types = p.instance_types_key(pool), _summary(p, pool)
    p.ice_cache.mark_unavailable("m7i.2xlarge", "us-east-1a", "on-demand")
    assert p.instance_types_key(pool) != before
    assert _summary(p, pool) != types


def test_a_changed_nodeclass_changes_it(made: list[AWSCloudProvider]) -> None:
    p = _aws(made)
    pool = _pool()
    before, types = p.instance_types_key(pool), _summary(p, pool)
    nc = default_nodeclass()
    nc.spec.kubelet = KubeletConfiguration(max_pods=7)
    p.apply(nc)
    assert p.instance_types_key(pool) != before
    assert _summary(p, pool) != types  # the pods capacity follows maxPods


def test_price_updates_change_it(made: list[AWSCloudProvider]) -> None:
    p = _aws(made)
    pool = _pool()
    before = p.instance_types_key(pool)
    p.pricing.update_on_demand_prices({"m7i.2xlarge": 12.5})
    assert p.instance_types_key(pool) != before


def _overlay(name: str, labels: dict[str, str] | None = None) -> NodeOverlay:
    spec: dict[str, Any] = {"requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                              "values": ["m7i.2xlarge"]}],
                            "priceAdjustment": "-50%"}
    if labels:
        spec["requirements"].append({"key": next(iter(labels)), "operator": "In", "values": list(labels.values())})
    return NodeOverlay.model_validate({"metadata": {"name": name}, "spec": spec})


def test_an_applied_overlay_changes_it(made: list[AWSCloudProvider]) -> None:
    p = _aws(made)
    pool = _pool()
    before, types = p.instance_types_key(pool), _summary(p, pool)
    p.apply(_overlay("half-price"))
    assert p.instance_types_key(pool) != before
    assert _summary(p, pool) != types
    with_overlay = p.instance_types_key(pool)
    p.delete_object("NodeOverlay", "half-price")
    assert p.instance_types_key(pool) == before != with_overlay


def test_with_overlays_the_nodepool_template_is_part_of_it(made: list[AWSCloudProvider]) -> None:
    p = _aws(made, overlays=[_overlay("team-a", {"team": "a"})])
    plain, team_a = _pool(), _pool({"team": "a"})
    assert p.instance_types_key(plain) != p.instance_types_key(team_a)
    assert _summary(p, plain) != _summary(p, team_a)  # the overlay selects the pool by its label
    # without overlays the template does not reach the types
    q = _aws(made)
    assert q.instance_types_key(plain) == q.instance_types_key(team_a)


def test_reservation_counts_change_it(made: list[AWSCloudProvider]) -> None:
    p = reserved_provider([{"tags": {"karpy/reserved": "yes"}}],
                          [cr("cr-m5.large-1a-1", tags={"karpy/reserved": "yes"}, available=3)])
    made.append(p)
    pool = _pool()
    before, types = p.instance_types_key(pool), _summary(p, pool)
    p.capacity_reservations.mark_launched("cr-m5.large-1a-1")
    assert p.instance_types_key(pool) != before
    assert _summary(p, pool) != types


def test_an_injected_source_has_no_key(made: list[AWSCloudProvider]) -> None:
    p = _aws(made, instance_type_source=lambda nodeclass: [])
    assert p.instance_types_key(_pool()) is None


@pytest.mark.parametrize("overlays", [False, True])
def test_provisioning_passes_with_the_cache_decide_as_without(made: list[AWSCloudProvider], overlays: bool) -> None:
    """Two passes through the Provisioner (the second served from the SchedulerCache) plan the
    same NodeClaims as a Provisioner whose cache is cleared before each pass (with and without
    NodeOverlays, which make the NodePool part of the key)."""
    def plans(clear: bool) -> list[Any]:
        p = _aws(made, overlays=[_overlay("half-price")] if overlays else ())
        prov = Provisioner(p)
        out = []
        for n in (3, 5):
            if clear:
                prov.scheduler_cache.clear()
            pods = [make_pod(f"p{n}-{i}", requests={"cpu": "1500m", "memory": "3Gi"}) for i in range(n)]
            r = prov.schedule(pods, [_pool()], ClusterState())
            out.append(sorted((nc.nodepool_name, len(nc.pods), sorted(it.name for it in nc.instance_type_options))
                              for nc in r.new_nodeclaims))
        assert prov.scheduler_cache.hits == (0 if clear else 1)
        return out

    assert plans(clear=False) == plans(clear=True)
    hash(_aws(made, overlays=[_overlay("x")]).instance_types_key(_pool()))  # a dict key of the cache
