"""cloudprovider."""
