"""karpy: a Karpenter-faithful node-provisioning engine.

Given NodePools and pending pods, karpy answers what Karpenter would launch, what it would
cost and why. See README.md for the public API.
"""

__version__ = "0.1.0"
