"""Inference: the ``Synthesizer`` (checkpoint → text → mel → waveform), style resolution and results."""
