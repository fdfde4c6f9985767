"""gst-tts: Tacotron with location-sensitive attention and Global Style Tokens.

``from gst_tts import Synthesizer, Style, DecodingConfig, UNSPLIT_MAX_DECODER_STEPS`` gives the synthesis API; the import is
lazy because the synthesizer pulls in librosa and the model. Importing the package first checks that torch and
torchaudio load together (:mod:`gst_tts.dependencies`).
"""

from gst_tts.dependencies import require_dependencies

__version__ = "0.1.0"

# Every entry point imports this package first: a broken torch/torchaudio pair ends here, in one line.
require_dependencies()


def __getattr__(name: str):
    if name in ("Synthesizer", "SynthesisResult", "Style", "DecodingConfig"):
        from gst_tts.inference import synthesizer

        return getattr(synthesizer, name)
    if name == "UNSPLIT_MAX_DECODER_STEPS":
        from gst_tts.inference import decoding

        return decoding.UNSPLIT_MAX_DECODER_STEPS
    raise AttributeError(f"module 'gst_tts' has no attribute {name!r}")
