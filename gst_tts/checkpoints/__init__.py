"""Checkpoints: what a gst-tts file on disk holds and how it is read back, below both ``inference``
and ``training`` (which both load models from them).

``weights`` is the one weights-only ``torch.load`` (never running code), the CRC-32 digest every
gst-tts checkpoint carries, and the versioned save / check every schema uses; ``acoustic`` is the
acoustic model's checkpoint schema (payload, save, load, check, model rebuild, RNG state). The
vocoder's schema sits beside the generators it rebuilds (``gst_tts.audio.vocoders.checkpoint``).
Nothing is imported here, so ``gst_tts.checkpoints.weights`` loads without the model code.
"""
