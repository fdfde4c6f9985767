"""The compact text forms of token weights and style mixes that the command line and config files
use (``"3=0.4,1:2=-0.2"``, ``"a.wav=0.5,b.wav=0.5"``), parsed into what
:class:`~gst_tts.inference.style_spec.Style` takes; the values are checked when a style is resolved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gst_tts.errors import GstTtsError

__all__ = ["parse_style_weights", "parse_style_mix"]


def parse_style_weights(spec: str) -> dict[Any, float]:
    """``"3=0.4,7=-0.2"`` → ``{3: 0.4, 7: -0.2}``; ``"1:3=0.4"`` → ``{(1, 3): 0.4}`` (head 1).

    Token and head ranges are checked when the weights meet a model
    (:meth:`~gst_tts.inference.style_spec.StyleRules.weights_tensor`).

    Raises:
        GstTtsError: an empty spec, an item that is not ``TOKEN=WEIGHT`` / ``HEAD:TOKEN=WEIGHT``,
            a token given twice.
    """
    out: dict[Any, float] = {}
    items = [s.strip() for s in spec.split(",")]
    if not any(items):
        raise GstTtsError('the token weights are empty; expected e.g. "3=0.4,7=-0.2"')
    for item in items:
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep:
            raise GstTtsError(f'{item!r} is not TOKEN=WEIGHT (e.g. "3=0.4" or "1:3=0.4" for head 1)')
        head, colon, token = key.strip().rpartition(":")
        try:
            parsed_key: Any = (int(head), int(token)) if colon else int(token)
        except ValueError:
            raise GstTtsError(f"{key.strip()!r} is not a token index (or HEAD:TOKEN)") from None
        try:
            weight = float(value)
        except ValueError:
            raise GstTtsError(f"weight {value.strip()!r} of token {key.strip()} is not a number") from None
        if parsed_key in out:
            raise GstTtsError(f"token {key.strip()} is given twice")
        out[parsed_key] = weight
    return out


def parse_style_mix(spec: str) -> list[tuple[Path, float]]:
    """``"a.wav=0.5,b.wav=0.5"`` → ``[(Path("a.wav"), 0.5), (Path("b.wav"), 0.5)]``.

    Raises:
        GstTtsError: an empty spec, an item that is not ``FILE=WEIGHT``, a weight that is not a number.
    """
    out = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        path, sep, value = item.rpartition("=")
        if not sep or not path.strip():
            raise GstTtsError(f"{item!r} is not FILE=WEIGHT")
        try:
            out.append((Path(path.strip()), float(value)))
        except ValueError:
            raise GstTtsError(f"weight {value.strip()!r} of {path.strip()} is not a number") from None
    if not out:
        raise GstTtsError('the mix is empty; expected e.g. "a.wav=0.5,b.wav=0.5"')
    return out
