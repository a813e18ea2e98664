"""CreateFleetBatcher's buckets: which pending requests share one CreateFleet.

Upstream (pkg/batcher/createfleet.go, batcher.go DefaultHasher) puts requests with the same hash of
the whole input in one bucket. The batcher finds the bucket by comparing inputs of the same shape
by value; these tests check that the buckets are exactly the groups of equal canonical-JSON hashes
(``request_hash``), in the order of their first request, including inputs that share a shape (the
same template, override count and first override) and differ further on. ``create_fleet`` here
records what the batcher sends, standing in for the EC2 call (the launch path's own tests run it
against moto).
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from awsprovider.batcher import CreateFleetBatcher, MAX_ITEMS, request_hash

TYPES = ("m5.large", "c5.large", "m5.xlarge")
SUBNETS = ("subnet-a", "subnet-b")


def _request(template: str, overrides: list[tuple[str, str, float]], strategy: str = "lowest-price") -> dict[str, Any]:
    return {
        "Type": "instant",
        "LaunchTemplateConfigs": [{
            "LaunchTemplateSpecification": {"LaunchTemplateName": template, "Version": "$Latest"},
            "Overrides": [{"InstanceType": t, "SubnetId": s, "ImageId": "ami-1", "AvailabilityZone": "us-east-1a",
                           "Priority": p} for t, s, p in overrides],
        }],
        "TargetCapacitySpecification": {"DefaultTargetCapacityType": "on-demand", "TotalTargetCapacity": 1},
        "OnDemandOptions": {"AllocationStrategy": strategy},
    }


class _Recorder:
    """The EC2 call: records each input and returns one instance per unit of capacity."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def __call__(self, **request: Any) -> dict[str, Any]:
        self.sent.append(request)
        n = request["TargetCapacitySpecification"]["TotalTargetCapacity"]
        return {"Instances": [{"InstanceIds": [f"i-{len(self.sent)}-{k}" for k in range(n)]}], "Errors": []}


_override = st.tuples(st.sampled_from(TYPES), st.sampled_from(SUBNETS), st.sampled_from((0.1, 0.2)))
# a small pool of variants, so that equal inputs, and inputs of one shape that differ after
# their first override (or in a field outside the overrides), are both common
_requests = st.lists(
    st.tuples(st.sampled_from(("lt-1", "lt-2")),
              st.tuples(_override, st.lists(_override, max_size=2)),
              st.sampled_from(("lowest-price", "prioritized"))),
    min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(_requests)
def test_buckets_are_the_groups_of_equal_request_hashes(specs: list[Any]) -> None:
    requests = [_request(t, [first, *rest], strategy) for t, (first, rest), strategy in specs]
    rec = _Recorder()
    batcher = CreateFleetBatcher(rec)
    tickets = [batcher.add(copy.deepcopy(r)) for r in requests]
    batcher.flush()
    # the reference: requests grouped by request_hash, groups in order of their first request
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(requests):
        groups.setdefault(request_hash(r), []).append(i)
    assert len(rec.sent) == len(groups) == batcher.calls
    for sent, members in zip(rec.sent, groups.values()):
        expected = copy.deepcopy(requests[members[0]])
        expected["TargetCapacitySpecification"]["TotalTargetCapacity"] = len(members)
        assert sent == expected
        assert all(tickets[i].batch_size == len(members) for i in members)
    assert batcher.pending() == 0


def test_same_shape_different_request_is_its_own_bucket() -> None:
    # same template, override count and first override; the second override differs
    a = _request("lt-1", [("m5.large", "subnet-a", 0.1), ("c5.large", "subnet-a", 0.1)])
    b = _request("lt-1", [("m5.large", "subnet-a", 0.1), ("c5.large", "subnet-b", 0.1)])
    rec = _Recorder()
    batcher = CreateFleetBatcher(rec)
    for r in (a, b, copy.deepcopy(a), copy.deepcopy(b), copy.deepcopy(a)):
        batcher.add(r)
    batcher.flush()
    assert [s["TargetCapacitySpecification"]["TotalTargetCapacity"] for s in rec.sent] == [3, 2]
    assert rec.sent[1]["LaunchTemplateConfigs"][0]["Overrides"][1]["SubnetId"] == "subnet-b"


def test_full_bucket_runs_at_max_items_and_a_new_one_starts() -> None:
    r = _request("lt-1", [("m5.large", "subnet-a", 0.1)])
    rec = _Recorder()
    batcher = CreateFleetBatcher(rec)
    for _ in range(MAX_ITEMS):
        batcher.add(copy.deepcopy(r))
    assert batcher.calls == 1 and batcher.pending() == 0  # ran when full, left no empty bucket behind
    last = batcher.add(copy.deepcopy(r))
    assert batcher.pending() == 1
    batcher.flush()
    assert [s["TargetCapacitySpecification"]["TotalTargetCapacity"] for s in rec.sent] == [MAX_ITEMS, 1]
    assert last.batch_size == 1
