"""The AWS provider's API types (karpenter.k8s.aws/v1)."""

from awsprovider.apis.ec2nodeclass import EXTRA_KINDS, EC2NodeClass
from awsprovider.apis.network import Network

__all__ = ["EC2NodeClass", "EXTRA_KINDS", "Network"]
