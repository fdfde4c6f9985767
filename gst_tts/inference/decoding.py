"""How free-running decoding ends: the one source of the stop threshold and the step bounds.

The model takes these as plain required keyword arguments (it knows no config object); the
:class:`~gst_tts.inference.synthesizer.Synthesizer`, every command that decodes and the plots
take their defaults from :class:`DecodingConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
import math
import numbers
from typing import Any

from gst_tts.analysis.alignment import DEFAULT_END_TOLERANCE
from gst_tts.errors import GstTtsError

__all__ = ["DecodingConfig", "UNSPLIT_MAX_DECODER_STEPS"]

#: The absolute step bound of unsplit long texts (``synthesize --no-split``): high enough that the
#: per-symbol bound governs (20,000 steps at r = 3 are about 12 minutes of audio).
UNSPLIT_MAX_DECODER_STEPS = 20_000


@dataclass(frozen=True)
class DecodingConfig:
    """Stop threshold and step bounds of free-running decoding.

    Each text (each chunk of a long text) runs until its stop probability exceeds
    ``stop_threshold`` or until ``min(max_decoder_steps, ceil(max_frames_per_symbol * symbols / r))``
    decoder steps, whichever comes first; every result says which ended it. The stop token counts
    only once the attention has reached the end of the text (``stop_end_tolerance``).

    Args:
        stop_threshold: stop probability above which a text ends, in (0, 1]; 1 never ends on
            the stop token (useful for timing a fixed number of steps). Default 0.5.
        max_frames_per_symbol: mel frames allowed per input symbol (eos included), > 0. Default 20.
        max_decoder_steps: absolute cap on decoder steps, >= 1. Default 1000.
        attention_window: ``(behind, ahead)``, whole numbers >= 0: each step attends only to the
            symbols from ``behind`` before to ``ahead`` after the previous step's most attended
            one, so the alignment cannot skip words or fall back to repeat them; None attends to
            every symbol. Default None.
        stop_end_tolerance: the stop token ends a text only once a step's most attended symbol
            has come within this many symbols of the last one (the end-of-sequence symbol), a
            whole number >= 0, so that a stop token firing early cannot cut the text short; None
            lets it end anywhere. Default 3, the tolerance of alignment health's "reached the end"
            (``gst_tts.analysis.alignment.DEFAULT_END_TOLERANCE``).

    Raises:
        GstTtsError: a value out of its range (one line naming the field).
    """

    stop_threshold: float = 0.5
    max_frames_per_symbol: float = 20.0
    max_decoder_steps: int = 1000
    attention_window: tuple[int, int] | None = None
    stop_end_tolerance: int | None = DEFAULT_END_TOLERANCE

    def __post_init__(self) -> None:
        if isinstance(self.attention_window, list):  # as read back from a JSON sidecar
            object.__setattr__(self, "attention_window", tuple(self.attention_window))
        for f in fields(self):
            problem = self.problem(f.name, getattr(self, f.name))
            if problem:
                raise GstTtsError(f"{f.name} {problem}")

    @staticmethod
    def problem(name: str, value: Any) -> str | None:
        """Why ``value`` cannot be field ``name`` ("must be …, got …"), or None when it can.

        The command line uses it to name its own option in the message.
        """
        if name == "attention_window":
            ok = value is None or (
                isinstance(value, tuple) and len(value) == 2
                and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 0 for v in value)
            )
            return None if ok else f"must be None or (behind, ahead), two whole numbers >= 0, got {value!r}"
        if name == "stop_end_tolerance":
            ok = value is None or (isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0)
            return None if ok else f"must be None or a whole number >= 0, got {value!r}"
        if name == "max_decoder_steps":
            ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1
            return None if ok else f"must be a whole number >= 1, got {value!r}"
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value):
            return f"must be a finite number, got {value!r}"
        if name == "stop_threshold" and not 0.0 < value <= 1.0:
            return f"must be in (0, 1], got {value!r}"
        if name == "max_frames_per_symbol" and not value > 0:
            return f"must be positive, got {value!r}"
        return None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (recorded in every synthesis sidecar)."""
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}
