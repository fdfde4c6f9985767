"""Names for the style dials, from what ``gst-tts probe-tokens`` measured each one do.

A dial (``--style-dials HEAD:TOKEN=AMOUNT``) moves one head's weights from neutral toward a token.
Which dial lowers the pitch and which slows the speech differs from checkpoint to checkpoint, so
``probe-tokens --save-dials`` measures every head's every token against neutral and writes the
figures beside the checkpoint (``best.pt`` → ``best.dials.json``); ``gst-tts serve`` reads that
file and the page offers the dials by name ("higher pitch, slower") instead of raw token weights.

A dial is named by the changes it makes at the probed amount that reach a threshold:
:data:`PITCH_SEMITONES` of median F0, a rate ratio of :data:`RATE_RATIO` either way,
:data:`ENERGY_DB` of mel energy; the larger (relative to its threshold) first, two at most.

Torch-free: written by the CLI, read by the server.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
import json
import math
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from gst_tts.errors import GstTtsError
from gst_tts.files import write_json

__all__ = [
    "DIALS_FORMAT",
    "ENERGY_DB",
    "NO_EFFECT",
    "PITCH_SEMITONES",
    "RATE_RATIO",
    "UNSTABLE",
    "NamedDial",
    "dial_name",
    "dials_path",
    "named_dials",
    "read_dials",
    "write_dials",
]

DIALS_FORMAT = "gst-tts style dials"
_VERSION = 1
#: A dial changes the pitch where the median F0 moves this many semitones or more.
PITCH_SEMITONES = 1.0
#: A dial changes the rate where the letters per second change by this factor or more, either way.
RATE_RATIO = 1.08
#: A dial changes the energy where the mean mel level moves this many dB or more.
ENERGY_DB = 1.5
#: The name of a dial whose changes all stay under the thresholds.
NO_EFFECT = "little change"
#: The name of a dial whose output ran into the decoder's step bound: it breaks the model.
UNSTABLE = "unstable (runs on)"


@dataclass(frozen=True)
class NamedDial:
    """One head's dial toward one token, with what it did at ``amount`` (against neutral)."""

    head: int
    token: int
    name: str
    amount: float
    d_f0_semitones: float | None
    rate_ratio: float | None
    d_energy_db: float | None

    @property
    def effect(self) -> float:
        """The largest change relative to its threshold (0 for an unstable dial): how strong a dial is."""
        if self.name == UNSTABLE:
            return 0.0
        return max(_relative(self.d_f0_semitones, self.rate_ratio, self.d_energy_db).values(), default=0.0)


def _relative(d_f0: float | None, rate_ratio: float | None, d_energy: float | None) -> dict[str, float]:
    """Each measured change over its threshold (1 = just named)."""
    out = {}
    if d_f0 is not None and math.isfinite(d_f0):
        out["pitch"] = abs(d_f0) / PITCH_SEMITONES
    if rate_ratio is not None and math.isfinite(rate_ratio) and rate_ratio > 0:
        out["rate"] = abs(math.log(rate_ratio)) / math.log(RATE_RATIO)
    if d_energy is not None and math.isfinite(d_energy):
        out["energy"] = abs(d_energy) / ENERGY_DB
    return out


def dial_name(
    d_f0_semitones: float | None, rate_ratio: float | None, d_energy_db: float | None, stopped_on_bound: bool = False
) -> str:
    """What a dial does, in words: e.g. ``"lower pitch, slower"``; :data:`NO_EFFECT` where nothing
    reaches its threshold, :data:`UNSTABLE` where the output ran into the step bound."""
    if stopped_on_bound:
        return UNSTABLE
    words = {
        "pitch": "higher pitch" if (d_f0_semitones or 0) > 0 else "lower pitch",
        "rate": "faster" if (rate_ratio or 1) > 1 else "slower",
        "energy": "louder" if (d_energy_db or 0) > 0 else "softer",
    }
    relative = _relative(d_f0_semitones, rate_ratio, d_energy_db)
    named = sorted((k for k, v in relative.items() if v >= 1.0), key=lambda k: -relative[k])[:2]
    return ", ".join(words[k] for k in named) or NO_EFFECT


def named_dials(rows: Iterable[Mapping[str, Any]], amount: float) -> list[NamedDial]:
    """The dials of ``probe-tokens``' rows (``--control dial``) at ``amount``, strongest first."""
    dials = []
    for row in rows:
        if row["token"] == "neutral" or row["head"] == "all" or float(row["scale"]) != amount:
            continue
        values = [_finite_or_none(row[k]) for k in ("d_f0_semitones", "rate_ratio", "d_energy_db")]
        dials.append(
            NamedDial(
                int(row["head"]),
                int(row["token"]),
                dial_name(*values, bool(row["stopped_on_bound"])),
                float(amount),
                *values,
            )
        )
    return sorted(dials, key=lambda d: (-d.effect, d.head, d.token))


def dials_path(checkpoint: str | os.PathLike) -> Path:
    """Where a checkpoint's dial names live: beside it, ``NAME.dials.json``."""
    return Path(checkpoint).with_suffix(".dials.json")


def write_dials(
    path: str | os.PathLike,
    dials: list[NamedDial],
    *,
    checkpoint: str | os.PathLike,
    sentence: str,
    repeats: int,
    seed: int,
) -> Path:
    """Writes the dials and how they were measured (atomically)."""
    return write_json(
        path,
        {
            "format": DIALS_FORMAT,
            "version": _VERSION,
            "checkpoint": str(checkpoint),
            "sentence": sentence,
            "repeats": repeats,
            "seed": seed,
            "thresholds": {"pitch_semitones": PITCH_SEMITONES, "rate_ratio": RATE_RATIO, "energy_db": ENERGY_DB},
            "dials": [asdict(d) for d in dials],
        },
    )


def read_dials(path: str | os.PathLike, *, n_heads: int, n_tokens: int) -> list[NamedDial]:
    """The dials a file names, checked against the model's heads and tokens.

    Raises:
        GstTtsError: one line naming the file: unreadable, not a dials file, or a dial the model
            does not have (a file of another checkpoint).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GstTtsError(f"{path}: not a readable dials file ({type(exc).__name__})") from None
    if not isinstance(data, dict) or data.get("format") != DIALS_FORMAT or not isinstance(data.get("dials"), list):
        raise GstTtsError(f"{path}: not a {DIALS_FORMAT} file (write one with gst-tts probe-tokens --save-dials)")
    dials = []
    for i, item in enumerate(data["dials"]):
        try:
            dial = NamedDial(
                int(item["head"]),
                int(item["token"]),
                str(item["name"]),
                float(item["amount"]),
                *(_finite_or_none(item[k]) for k in ("d_f0_semitones", "rate_ratio", "d_energy_db")),
            )
        except (KeyError, TypeError, ValueError):
            raise GstTtsError(f"{path}: dial {i} is not a head, token, name, amount and three measures") from None
        if not (0 <= dial.head < n_heads and 0 <= dial.token < n_tokens):
            raise GstTtsError(
                f"{path}: dial {i} is head {dial.head} token {dial.token}, but the model has {n_heads} heads"
                f" of {n_tokens} tokens (a file of another checkpoint?)"
            )
        dials.append(dial)
    return dials


def _finite_or_none(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None
