"""ONNX export of a checkpoint: :mod:`~gst_tts.export.graphs` (the computation cut into graphs with
plain tensors in and out) and :mod:`~gst_tts.export.exporter` (the export folder and its
``model.json``), which :mod:`gst_tts.runtime` runs without torch."""

from gst_tts.export.exporter import OPSET, check_exportable, export_checkpoint, export_synthesizer

__all__ = ["OPSET", "check_exportable", "export_checkpoint", "export_synthesizer"]
