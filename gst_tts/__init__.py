"""gst-tts: Tacotron with location-sensitive attention and Global Style Tokens.

``from gst_tts import Synthesizer, Style, DecodingConfig, UNSPLIT_MAX_SECONDS`` gives the synthesis API; the import is
lazy because the synthesizer pulls in librosa and the model. Importing the package first checks that torch and
torchaudio load together (:mod:`gst_tts.dependencies`), except for ``import gst_tts.runtime``, the torch-free ONNX
runtime (``gst_tts.runtime.OnnxSynthesizer``).
"""

import sys

from gst_tts.dependencies import require_dependencies_when_needed

__version__ = "0.1.0"


def _is_gst_tts_command() -> bool:
    """Whether this process is the ``gst-tts`` command (its script or ``python -m gst_tts.cli``)."""
    argv = getattr(sys, "orig_argv", sys.argv)
    script = argv[1] if len(argv) > 1 else ""
    return script.endswith(("/gst-tts", "\\gst-tts", "\\gst-tts.exe")) or any(
        a == "-m" and b == "gst_tts.cli" for a, b in zip(argv, argv[1:])
    )


# Every entry point imports this package first: a broken torch/torchaudio pair ends here, in one line.
# The gst-tts command checks once it knows its subcommand (gst_tts.cli), so that `gst-tts --help` and
# `--version` answer without importing torch (seconds on a small machine); `import gst_tts.runtime`
# (the torch-free ONNX runtime) checks only if a module that needs torch follows.
if not _is_gst_tts_command():
    require_dependencies_when_needed()


def __getattr__(name: str):
    if name in ("Synthesizer", "SynthesisResult", "Style", "DecodingConfig"):
        from gst_tts.inference import synthesizer

        return getattr(synthesizer, name)
    if name == "UNSPLIT_MAX_SECONDS":
        from gst_tts.inference import decoding

        return decoding.UNSPLIT_MAX_SECONDS
    if name == "UNSPLIT_MAX_DECODER_STEPS":  # the bound is in seconds of audio now, whatever the model's r
        raise AttributeError(
            "gst_tts.UNSPLIT_MAX_DECODER_STEPS is gone: use UNSPLIT_MAX_SECONDS with DecodingConfig(max_seconds=...)"
        )
    raise AttributeError(f"module 'gst_tts' has no attribute {name!r}")
