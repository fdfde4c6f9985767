"""GST-Tacotron model. Pure PyTorch: no I/O, no configuration system."""

from gst_tts.model.decoder import Decoder, DecoderState
from gst_tts.model.encoder import Encoder
from gst_tts.model.gst import GlobalStyleTokens, ReferenceEncoder, StyleTokenLayer
from gst_tts.model.postnet import Postnet
from gst_tts.model.tacotron import GSTTacotron, SynthesisOutput, TacotronOutput, count_parameters

__all__ = [
    "Decoder",
    "DecoderState",
    "Encoder",
    "GlobalStyleTokens",
    "GSTTacotron",
    "Postnet",
    "ReferenceEncoder",
    "StyleTokenLayer",
    "SynthesisOutput",
    "TacotronOutput",
    "count_parameters",
]
