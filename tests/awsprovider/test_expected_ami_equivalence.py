"""The drift check's expected AMI (ami.go MapToInstanceTypes) looked up in the provider's
name-indexed prototypes against the plain path (the whole listed catalogue, cloned, scanned by
name): the same AMI for generated NodeClaims of every architecture, NodePool and unknown types."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

from awsprovider.cloudprovider import AWSCloudProvider, _nodeclass_name_of
from awsprovider.labels import WELL_KNOWN_LABELS
from karpy.sim.clock import VirtualClock


def _plain(p: AWSCloudProvider, nodeclaim: Any) -> str | None:
    labels = nodeclaim.metadata.labels
    nodeclass = p.resolve_nodeclass(_nodeclass_name_of(nodeclaim))
    assert nodeclass is not None
    its = list(p._types_for(nodeclass, labels.get("karpenter.sh/nodepool", "")))  # noqa: SLF001
    it = next((t for t in its if t.name == labels.get("node.kubernetes.io/instance-type", "")), None)
    if it is None:
        return None
    return next((a.id for a in p.amis_for(nodeclass) if it.requirements.is_compatible(a.requirements,
                                                                                     WELL_KNOWN_LABELS)), None)


def test_expected_ami_matches_the_plain_lookup() -> None:
    p = AWSCloudProvider("us-east-1", prices="2026-07-20", clock=VirtualClock())
    try:
        _check_every_lookup(p)
    finally:
        p.close()  # its mocked EC2's account is released (tests/library/test_host_process.py checks none is left)


def _check_every_lookup(p: AWSCloudProvider) -> None:
    nodeclass = p.resolve_nodeclass(_nodeclass_name_of(SimpleNamespace()))
    assert nodeclass is not None
    names = [t.name for t in p.instance_types.prototypes(nodeclass)]
    r = random.Random(7)
    sample = r.sample(names, 150) + ["m7g.large", "c7i.xlarge", "no-such.type", ""]
    amis = set()
    for i, name in enumerate(sample):
        nc = SimpleNamespace(metadata=SimpleNamespace(name=f"nc{i}", labels={
            "node.kubernetes.io/instance-type": name, "karpenter.sh/nodepool": r.choice(["default", "other", ""])}),
            spec=SimpleNamespace(node_class_ref=None))
        expected = _plain(p, nc)
        assert p.expected_ami(nc) == expected, name
        amis.add(expected)
    assert len(amis - {None}) == 2  # both architectures' AMIs were met
