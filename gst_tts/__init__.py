"""gst-tts: Tacotron with location-sensitive attention and Global Style Tokens.

``from gst_tts import Synthesizer`` gives the synthesis API; the import is lazy because the
synthesizer pulls in torch, torchaudio and librosa.
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    if name in ("Synthesizer", "SynthesisResult"):
        from gst_tts import synthesizer

        return getattr(synthesizer, name)
    raise AttributeError(f"module 'gst_tts' has no attribute {name!r}")
