"""Data: corpus reading and validation (``corpus``), the feature cache (``cache``), the
train/validation split (``split``), datasets, sampler and collation (``batching``); for vocoder
training, random (mel, waveform) segments (``segments``) and GTA mel folders (``gta``)."""
