"""Karpenter's AWS provider in Python, talking boto3 to a mocked EC2 (moto + a fleet model)."""
