"""The torch-free runtime: an export folder (``gst-tts export``) synthesized with numpy, onnxruntime
and soundfile only (the ``[onnx]`` extra). ``import gst_tts.runtime`` imports no torch, and runs where
torch is not installed.

``OnnxSynthesizer.from_dir("exported/").synthesize(["Hello there."], styles=[Style(reference="calm.wav")])``
"""

from gst_tts.inference.style_spec import Style
from gst_tts.runtime.synthesizer import DecodedBatch, OnnxSynthesizer

__all__ = ["OnnxSynthesizer", "DecodedBatch", "Style"]
