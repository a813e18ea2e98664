"""200 CreateFleet launches, 60 overrides each (20 types x 3 zones), through the hooks + moto.

    python benchmarks/fleet_benchmark.py [--profile]
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time

from awsprovider.ec2.backend import MockedEC2
from awsprovider.ec2.fleet import StaticPriceBook

FAMILIES = ("c7i", "c8i", "m7i", "m8i", "r7i", "r8i")
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


def main() -> None:
    with MockedEC2() as ec2:
        offered = ec2.catalog.offerings()
        types = [t for t in offered
                 if all(z in offered[t] for z in ZONES) and t.split(".")[0] in FAMILIES][:20]
        ec2.set_scenario(price_book=StaticPriceBook(on_demand={t: 0.05 + i * 0.01 for i, t in enumerate(types)}))
        print("zone e offered:", {t: "us-east-1e" in offered.get(t, ())
                                  for t in ("c7i.large", "c8i.large", "m7i.large", "m8i.large", "r8i.large")})
        ec2.create_launch_template("karpy-lt")
        subnets = ec2.default_subnets()
        ovs = [{"InstanceType": t, "SubnetId": subnets[z], "AvailabilityZone": z, "ImageId": "ami-12c6146b",
                "Priority": 0.1} for t in types for z in ZONES]
        assert len(ovs) == 60
        p = {"Type": "instant",
             "TargetCapacitySpecification": {"TotalTargetCapacity": 1, "DefaultTargetCapacityType": "on-demand"},
             "LaunchTemplateConfigs": [{"LaunchTemplateSpecification": {"LaunchTemplateName": "karpy-lt",
                                                                        "Version": "$Latest"},
                                        "Overrides": ovs}],
             "OnDemandOptions": {"AllocationStrategy": "lowest-price"},
             "TagSpecifications": [{"ResourceType": "instance", "Tags": [{"Key": "k", "Value": "v"}]}]}
        ec2.add_unavailable(f"{types[0]}:us-east-1a:on-demand")
        ec2.client.create_fleet(**p)  # warm
        prof = cProfile.Profile() if "--profile" in sys.argv else None
        t = time.perf_counter()
        if prof:
            prof.enable()
        for _ in range(200):
            ec2.client.create_fleet(**p)
        if prof:
            prof.disable()
        dt = time.perf_counter() - t
        print(f"200 launches in {dt:.2f}s = {200 / dt:.1f} launches/s")
        if prof:
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
