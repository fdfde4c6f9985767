"""How free-running decoding ends: the one source of the stop threshold and the length bounds.

The model takes these as plain required keyword arguments (it knows no config object, nor the audio
settings: its absolute bound is in mel frames, which :meth:`DecodingConfig.model_arguments` makes
from seconds with the checkpoint's frame rate); the
:class:`~gst_tts.inference.synthesizer.Synthesizer`, every command that decodes, training's
validation and the plots take their defaults from :class:`DecodingConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
import math
import numbers
import logging
from typing import Any, Mapping

from gst_tts.analysis.alignment import DEFAULT_END_TOLERANCE
from gst_tts.errors import GstTtsError

__all__ = ["DecodingConfig", "UNSPLIT_MAX_SECONDS"]

log = logging.getLogger(__name__)

#: The absolute bound of unsplit long texts (``synthesize --no-split``), in seconds of audio: high
#: enough that the per-symbol bound governs (12 minutes, about what the 20,000 decoder steps at
#: r = 3 that bounded them before allowed at 22,050 Hz and hop 256).
UNSPLIT_MAX_SECONDS = 720.0


@dataclass(frozen=True)
class DecodingConfig:
    """Stop threshold and length bounds of free-running decoding.

    Each text (each chunk of a long text) runs until its stop probability exceeds
    ``stop_threshold`` or until ``ceil(min(max_frames, max_frames_per_symbol * symbols) / r)``
    decoder steps, whichever comes first, where ``max_frames = ceil(max_seconds * sample_rate /
    hop_length)`` with the checkpoint's audio settings; every result says which ended it. The
    stop token counts only once the attention has reached the end of the text
    (``stop_end_tolerance``). The bounds are in audio, not decoder steps, so that they mean the
    same length whatever the model's r.

    Args:
        stop_threshold: stop probability above which a text ends, in (0, 1]; 1 never ends on
            the stop token (useful for timing a fixed number of steps). Default 0.5.
        max_frames_per_symbol: mel frames allowed per input symbol (eos included), > 0. Default 20.
        max_seconds: absolute cap on each text's (each chunk's) audio, in seconds, > 0. Default
            60, several times a 180-character chunk read slowly (the per-symbol bound governs
            below it).
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
    max_seconds: float = 60.0
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
                isinstance(value, tuple)
                and len(value) == 2
                and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 0 for v in value)
            )
            return None if ok else f"must be None or (behind, ahead), two whole numbers >= 0, got {value!r}"
        if name == "stop_end_tolerance":
            ok = value is None or (isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0)
            return None if ok else f"must be None or a whole number >= 0, got {value!r}"
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value):
            return f"must be a finite number, got {value!r}"
        if name == "stop_threshold" and not 0.0 < value <= 1.0:
            return f"must be in (0, 1], got {value!r}"
        if name in ("max_frames_per_symbol", "max_seconds") and not value > 0:
            return f"must be positive, got {value!r}"
        return None

    def chunk_frames(self, symbols: int, *, frames_per_second: float, frames_per_step: int) -> int:
        """The most mel frames a chunk of ``symbols`` input symbols (eos included) decodes to:
        ``GSTTacotron.step_bounds``' whole steps of ``frames_per_step`` frames, ``min(max_frames,
        ceil(max_frames_per_symbol * symbols))`` rounded up to a whole step, at least one."""
        frames = min(
            self.max_frames(frames_per_second=frames_per_second), math.ceil(symbols * self.max_frames_per_symbol)
        )
        return max(1, -(-frames // frames_per_step)) * frames_per_step

    def max_frames(self, *, frames_per_second: float) -> int:
        """The absolute bound in mel frames at ``frames_per_second`` (``sample_rate / hop_length``
        of the checkpoint's audio settings): ``ceil(max_seconds * frames_per_second)``, >= 1."""
        # A bound made from a whole number of frames (validation's) must not gain one from rounding;
        # a huge one is capped where the per-symbol bound governs long before, as torch needs an int64.
        return max(1, min(2**40, math.ceil(round(self.max_seconds * frames_per_second, 6))))

    def model_arguments(self, *, frames_per_second: float) -> dict[str, Any]:
        """The keyword arguments of ``GSTTacotron.infer`` (and ``GSTTacotron.step_bounds``' two) for
        a model whose mels have ``frames_per_second`` frames a second."""
        return {
            "stop_threshold": self.stop_threshold,
            "max_frames_per_symbol": self.max_frames_per_symbol,
            "max_frames": self.max_frames(frames_per_second=frames_per_second),
            "attention_window": self.attention_window,
            "stop_end_tolerance": self.stop_end_tolerance,
        }

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any], *, seconds_per_step: float | None = None) -> "DecodingConfig":
        """A config from :meth:`to_dict`'s output as stored (a synthesis sidecar's ``decoding``),
        also from before ``max_seconds``: an older ``max_decoder_steps`` becomes seconds with the
        sidecar's ``seconds_per_step`` when given, else it is dropped (the default
        ``max_seconds`` stands) with one logged line saying so. Keys this version does not know
        are dropped the same way.

        Raises:
            GstTtsError: not a mapping, or a value out of its range (as for the constructor).
        """
        if not isinstance(stored, Mapping):
            raise GstTtsError(f"decoding must be a mapping of DecodingConfig fields, got {type(stored).__name__}")
        values = dict(stored)
        steps = values.pop("max_decoder_steps", None)
        if steps is not None and "max_seconds" not in values:
            if (
                seconds_per_step is not None
                and isinstance(steps, numbers.Real)
                and not isinstance(steps, bool)
                and steps > 0
            ):
                values["max_seconds"] = float(steps) * seconds_per_step
            else:
                log.warning(
                    "decoding: max_decoder_steps=%r is a bound in decoder steps from before max_seconds; "
                    "without the seconds a step lasts it is dropped (max_seconds=%g)",
                    steps,
                    cls.max_seconds,
                )
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            log.warning("decoding: dropped keys this version does not know: %s", ", ".join(unknown))
        return cls(**{k: v for k, v in values.items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (recorded in every synthesis sidecar)."""
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}
