"""Data: corpus reading and validation (``corpus``), the feature cache (``cache``), the
train/validation split (``split``), datasets, sampler and collation (``batching``)."""
