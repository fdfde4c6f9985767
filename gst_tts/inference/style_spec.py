"""Styles without a model: the :class:`Style` type and the rules that turn one into token weights
(:class:`StyleRules`), mix shares, the F0 and tempo targets a style asks for, and the checks of
its values; torch-free, so the ONNX runtime (:mod:`gst_tts.runtime`) resolves styles with the
same rules as the :class:`~gst_tts.inference.style.StyleResolver` (see :mod:`gst_tts.inference.style`
for what a style is). The text forms are parsed in :mod:`~gst_tts.inference.style_text`, a
reference's samples checked in :mod:`~gst_tts.inference.reference_audio`.

:class:`StyleRules` holds the resolution both share; a subclass gives the array type, the token
and head counts and how a reference becomes token weights.
"""

from __future__ import annotations

from dataclasses import dataclass
import logging
import math
import os
from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple, Sequence, Union

import numpy as np

from gst_tts.errors import GstTtsError, first_line

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)

__all__ = [
    "Reference",
    "StyleWeights",
    "StyleMix",
    "Style",
    "StyleRules",
    "MAX_STYLE_WEIGHT",
    "MAX_STYLE_STRENGTH",
    "check_style_strength",
    "check_f0_range",
    "F0Target",
    "ReferenceReading",
    "ResolvedStyle",
    "warn_unread_tempo",
    "mix_shares",
    "once_per_reference",
    "style_f0_range",
    "warn_f0_range_unused",
    "MAX_F0_RANGE_ST",
    "TempoTarget",
    "style_tempo",
    "reference_name",
    "short_repr",
]

#: Largest token weight or dial amount, in magnitude (see :mod:`gst_tts.inference.style`).
MAX_STYLE_WEIGHT = 100.0
#: Largest style strength (see :class:`Style`): 3 moves a reference's style three times as far from
#: neutral; past that the decoder extrapolates as with far-off token weights.
MAX_STYLE_STRENGTH = 3.0
#: Largest F0 spread a style may ask for (semitones, 10th to 90th percentile): two octaves, past
#: any speaking voice (read speech spans about 3 to 8).
MAX_F0_RANGE_ST = 24.0

# A reference is a path, or samples ``(n,)`` / ``(n, channels)`` with their rate.
Reference = Union[str, os.PathLike, tuple[np.ndarray, int]]
# Token weights: {token: w}, {(head, token): w}, or an array (n_tokens,) / (n_heads, n_tokens).
StyleWeights = Union[Mapping[Any, float], np.ndarray, "torch.Tensor"]
# References with their mixing weights: {reference: w} or [(reference, w), ...].
StyleMix = Union[Mapping[Reference, float], Sequence[tuple[Reference, float]]]


@dataclass(frozen=True)
class Style:
    """One style: at most one of ``reference``, ``weights``, ``dials``, ``mix``; none of them is the neutral style.

    ``strength`` (with a ``reference`` or ``mix`` only) moves the style from neutral toward the
    reference's: token weights ``neutral + strength * (reference - neutral)``, and so the style
    embedding, which is linear in the weights, by the same rule. 1 (the default) is the reference,
    0 neutral, above 1 exaggerates; 0 to :data:`MAX_STYLE_STRENGTH`.

    ``f0_range`` (with any style, or alone) sets the output's F0 spread (semitones between the 10th
    and 90th percentile of voiced F0), 0 to :data:`MAX_F0_RANGE_ST`, where the vocoder can (the
    spectral vocoder with a pitch head, :mod:`~gst_tts.audio.vocoders.intonation`: it stretches
    each chunk's F0 track by at most a factor of 0.5 to 3). Without it a reference's or mix's own
    spread is used (YIN-tracked), moved by ``strength`` as the token weights are: the factor from
    the decoded spread to the reference's raised to ``strength``. Other styles keep the spread as decoded.

    Examples: ``Style(reference="calm.wav")``, ``Style(reference="calm.wav", strength=1.5)``,
    ``Style(weights={3: 0.4, (1, 2): -0.2})``, ``Style(dials={(1, 6): 0.5})``,
    ``Style(mix={"a.wav": 0.5, "b.wav": 0.5})``, ``Style(weights={3: 0.4}, f0_range=6.0)``, ``Style()``.

    Raises:
        GstTtsError: more than one given; a strength without a reference or mix, or not a number
            in 0..MAX_STYLE_STRENGTH; an ``f0_range`` not a number in 0..MAX_F0_RANGE_ST.
    """

    reference: Reference | None = None
    weights: StyleWeights | None = None
    mix: StyleMix | None = None
    dials: StyleWeights | None = None
    strength: float | None = None
    f0_range: float | None = None

    def __post_init__(self) -> None:
        if sum(x is not None for x in (self.reference, self.weights, self.dials, self.mix)) > 1:
            raise GstTtsError("give at most one of reference, style_weights, style_dials, style_mix")
        if self.strength is not None:
            if self.reference is None and self.mix is None:
                raise GstTtsError("style_strength needs a reference or a style mix (it scales a reference's style)")
            object.__setattr__(self, "strength", check_style_strength(self.strength))
        if self.f0_range is not None:
            object.__setattr__(self, "f0_range", check_f0_range(self.f0_range))


def check_f0_range(value: Any) -> float:
    """An F0 spread as a float: a finite number of semitones from 0 to :data:`MAX_F0_RANGE_ST`.

    Raises:
        GstTtsError: anything else, in one line naming the value.
    """
    return _number_from_zero(value, "F0 range", MAX_F0_RANGE_ST, " semitones")


def check_style_strength(value: Any) -> float:
    """A style strength as a float: a finite number from 0 to :data:`MAX_STYLE_STRENGTH`.

    Raises:
        GstTtsError: anything else, in one line naming the value.
    """
    return _number_from_zero(value, "style strength", MAX_STYLE_STRENGTH)


def _number_from_zero(value: Any, what: str, largest: float, unit: str = "") -> float:
    """``value`` as a finite float in ``0..largest``; a one-line ``GstTtsError`` naming ``what`` and
    the value otherwise."""
    if isinstance(value, bool):
        raise GstTtsError(f"{what} is not a number: {short_repr(value)}")
    number = _finite_float(value, what)
    if not 0.0 <= number <= largest:
        raise GstTtsError(f"{what} must lie in 0..{largest:g}{unit}, got {short_repr(value)}")
    return number


class StyleRules:
    """Style resolution over token weights of any array type (numpy here, torch in the
    :class:`~gst_tts.inference.style.StyleResolver`): subclasses give :attr:`n_heads`,
    :attr:`n_tokens`, :meth:`as_weights` and :meth:`reference_weights`."""

    n_heads: int
    n_tokens: int
    #: The checkpoint's neutral token weights ``(n_heads, n_tokens)`` float32 (the mean over the
    #: training references, :mod:`gst_tts.training.neutral`); ``None``: uniform (older checkpoints).
    neutral_weights: np.ndarray | None = None
    #: Logged (INFO) the first time the uniform neutral is used, then cleared: why it is uniform
    #: (an older checkpoint). Said on use, not on load, so that a request refused before any style
    #: is resolved stays one line.
    uniform_neutral_notice: str | None = None

    def as_weights(self, array: np.ndarray) -> Any:
        """A float32 ``(n_heads, n_tokens)`` numpy array as this resolver's weights type."""
        raise NotImplementedError

    def read_reference(self, reference: Reference, *, f0_range: bool = False, tempo: bool = False) -> ReferenceReading:
        """One reading of a reference recording: its token weights and, when asked, its F0 spread
        and letter rate, all from one decoding of its samples."""
        raise NotImplementedError

    def reference_weights(self, reference: Reference) -> Any:
        """The ``(n_heads, n_tokens)`` token weights a reference recording gets."""
        return self.read_reference(reference).weights

    def neutral(self) -> Any:
        """The neutral default ``(n_heads, n_tokens)``: :attr:`neutral_weights`, the mean token weights
        of the training references, when the checkpoint stores them; else uniform weights ``1 / n_tokens``."""
        if self.neutral_weights is not None:
            return self.as_weights(np.array(self.neutral_weights, dtype=np.float32))
        if self.uniform_neutral_notice:
            log.info(self.uniform_neutral_notice)
            self.uniform_neutral_notice = None
        return self.as_weights(np.full((self.n_heads, self.n_tokens), 1.0 / self.n_tokens, dtype=np.float32))

    def strengthened(self, weights: Any, strength: float | None) -> Any:
        """``neutral + strength * (weights - neutral)``; ``weights`` itself for ``None`` (see :class:`Style`)."""
        if strength is None:
            return weights
        neutral = self.neutral()
        return neutral + (weights - neutral) * strength

    def weights_tensor(self, weights: StyleWeights) -> Any:
        """Token weights as ``(n_heads, n_tokens)``.

        Accepts ``{token: weight}`` (same in every head), ``{(head, token): weight}``, or an array
        of shape ``(n_tokens,)`` or ``(n_heads, n_tokens)``. Tokens not named get weight 0.

        Raises:
            GstTtsError: unknown token or head, a weight that is not a finite number within
                ``±MAX_STYLE_WEIGHT``, wrong shape.
        """
        n_heads, n_tokens = self.n_heads, self.n_tokens
        shape = getattr(weights, "shape", None)  # an array's shape is checked before it is converted
        if shape is not None and tuple(shape) not in ((n_tokens,), (n_heads, n_tokens)):
            raise GstTtsError(
                f"style weights must have shape ({n_tokens},) or ({n_heads}, {n_tokens}), got {tuple(shape)}"
            )
        if isinstance(weights, Mapping):
            if not weights:
                raise GstTtsError("style weights name no token")
            out = np.zeros((n_heads, n_tokens), dtype=np.float32)
            for key, value in weights.items():
                head, token = key if isinstance(key, tuple) and len(key) == 2 else (None, key)
                if not (_is_int(token) and 0 <= token < n_tokens):
                    raise GstTtsError(f"style token {short_repr(token)} is not in 0..{n_tokens - 1}")
                if head is not None and not (_is_int(head) and 0 <= head < n_heads):
                    raise GstTtsError(f"style head {short_repr(head)} is not in 0..{n_heads - 1}")
                w = _style_weight(value, f"weight of style token {token}")
                if head is None:
                    out[:, int(token)] = w
                else:
                    out[int(head), int(token)] = w
            return self.as_weights(out)
        try:
            # float64 first, so that 1e39 is seen as too large rather than overflowing float32 to inf.
            a = np.asarray(weights.detach().cpu() if hasattr(weights, "detach") else weights, dtype=np.float64)
        except (TypeError, ValueError, RuntimeError) as exc:
            raise GstTtsError(f"style weights are not numbers ({first_line(exc, 80)})") from None
        if not np.isfinite(a).all():
            raise GstTtsError("style weights must be finite numbers")
        if a.size and float(np.abs(a).max()) > MAX_STYLE_WEIGHT:
            raise GstTtsError(f"style weights must lie within ±{MAX_STYLE_WEIGHT:g}, got {float(np.abs(a).max()):g}")
        t = a.astype(np.float32)
        if t.shape == (n_tokens,):
            return self.as_weights(np.repeat(t[None], n_heads, axis=0))
        if t.shape != (n_heads, n_tokens):
            raise GstTtsError(
                f"style weights must have shape ({n_tokens},) or ({n_heads}, {n_tokens}), got {tuple(t.shape)}"
            )
        return self.as_weights(t)

    def dial_weights(self, dials: StyleWeights) -> Any:
        """Token dials: the neutral weights moved toward tokens, ``(n_heads, n_tokens)``.

        A dial ``{(head, token): a}`` sets that head's weights to ``neutral + a * (onehot(token) -
        neutral)``: ``a = 0`` is neutral, ``a = 1`` the token alone, ``a = 2`` twice as far, and
        ``a < 0`` moves away from the token; ``{token: a}`` turns the dial in every head. Several
        dials add their moves. ``dials`` takes the forms of :meth:`weights_tensor`, holding amounts
        instead of weights.

        Why dials and not plain weights: a token alone (``Style(weights={t: a})``: weight ``a``
        in every head, every other token at 0) is a style no reference produces (a reference's
        largest weight per head is about 0.3), so the decoder extrapolates; on the demo model
        some tokens then collapse the voice into a steady tone. A dial starts at the neutral
        point, moves smoothly with ``a``, and can turn a single head; heads specialise (on the
        demo model one head carries pitch, another rate), so one dial changes one thing.

        Raises:
            GstTtsError: as :meth:`weights_tensor`.
        """
        amounts = self.weights_tensor(dials)
        neutral = self.neutral()
        return neutral + amounts - amounts.sum(-1)[..., None] * neutral

    def mix_weights(self, mix: StyleMix, read: Callable[[Reference], Any] | None = None) -> Any:
        """The references' token weights averaged with the mix weights (normalised to sum to one);
        ``read``: a reference's weights (default :meth:`reference_weights`).

        Raises:
            GstTtsError: a negative weight, no positive weight, or a bad reference (every
                reference is encoded, even at weight 0: a bad file is an error, not ignored).
        """
        read = read or self.reference_weights
        return sum(read(ref) * share for ref, share in mix_shares(mix))

    def resolve(self, style: Style | None) -> Any:
        """``(n_heads, n_tokens)`` token weights of one style (``None``: neutral)."""
        return self.resolve_all([style])[0]

    def resolve_all(self, styles: Sequence[Style | None]) -> list[Any]:
        """``(n_heads, n_tokens)`` token weights per style, all checked before any is used; a
        reference named by several styles is read once."""
        return [resolved.weights for resolved in self.resolve_styles(styles)]

    def resolve_styles(
        self,
        styles: Sequence[Style | ResolvedStyle | None],
        *,
        f0_range: bool = False,
        reference_f0_range: bool = False,
        reference_tempo: bool = False,
        read: Callable[[Reference], ReferenceReading] | None = None,
    ) -> list[ResolvedStyle]:
        """One :class:`ResolvedStyle` per style, all checked before any is used; each reference (a
        file path, or one samples object) is read once however many styles name it.

        Args:
            styles: :class:`Style` s (``None``: neutral); a :class:`ResolvedStyle` is taken as it is.
            f0_range: give a style's own ``f0_range`` as its F0 target (a vocoder that can set one).
            reference_f0_range: also a reference's or mix's F0 spread, read off the recording
                (:func:`style_f0_range`): a copy after the model.
            reference_tempo: a reference's or mix's tempo (:func:`style_tempo`): a copy after the model.
            read: a reference's :class:`ReferenceReading` (default :meth:`read_reference`; the
                server's reads its uploaded clips' stored readings).
        """
        bad = [type(s).__name__ for s in styles if s is not None and not isinstance(s, (Style, ResolvedStyle))]
        if bad:
            raise GstTtsError(f"a style must be a Style, a ResolvedStyle or None, got {bad[0]}")
        reading = once_per_reference(
            read or (lambda ref: self.read_reference(ref, f0_range=reference_f0_range, tempo=reference_tempo))
        )
        out = []
        for style in styles:
            if isinstance(style, ResolvedStyle):
                out.append(style._replace(weights=self.as_weights(np.asarray(style.weights, dtype=np.float32))))
                continue
            out.append(
                ResolvedStyle(
                    self._style_weights(style or Style(), reading),
                    style_f0_range(style, lambda ref: reading(ref).f0_range_st if reference_f0_range else None)
                    if f0_range or reference_f0_range
                    else None,
                    style_tempo(style, lambda ref: reading(ref).letters_per_s) if reference_tempo else None,
                )
            )
        if reference_tempo:
            warn_unread_tempo(styles, [r.tempo_target for r in out])
        return out

    def _style_weights(self, style: Style, reading: Callable[[Reference], ReferenceReading]) -> Any:
        if style.reference is not None:
            return self.strengthened(reading(style.reference).weights, style.strength)
        if style.weights is not None:
            return self.weights_tensor(style.weights)
        if style.dials is not None:
            return self.dial_weights(style.dials)
        if style.mix is not None:
            return self.strengthened(self.mix_weights(style.mix, lambda ref: reading(ref).weights), style.strength)
        return self.neutral()


class ReferenceReading(NamedTuple):
    """What one reading of a reference recording gives: its ``(n_heads, n_tokens)`` token weights,
    and, when asked for, its F0 spread (semitones, 10th to 90th percentile of voiced frames) and
    its letters per second of articulation; ``None`` where not asked for or not measurable."""

    weights: Any
    f0_range_st: float | None = None
    letters_per_s: float | None = None


class ResolvedStyle(NamedTuple):
    """A style as a synthesis uses it: its ``(n_heads, n_tokens)`` token weights and what it asks
    done after the model, the F0 spread a vocoder sets and the tempo the output is retimed to
    (``None``: the model's own). Made by :meth:`StyleRules.resolve_styles`, one reading per reference."""

    weights: Any
    f0_target: F0Target | None = None
    tempo_target: TempoTarget | None = None


def warn_unread_tempo(styles: Sequence[Style | ResolvedStyle | None], targets: Sequence[TempoTarget | None]) -> None:
    """Log one line when a reference or mix of ``styles`` (at a strength above 0) got no target in
    ``targets`` (one per style): its tempo could not be read, so its output keeps the model's."""
    unread = [
        s
        for s, t in zip(styles, targets)
        if t is None and isinstance(s, Style) and (s.reference is not None or s.mix is not None) and s.strength != 0
    ]
    if unread:
        style = unread[0]
        name = reference_name(style.reference) if style.reference is not None else "the style mix"
        log.warning("the tempo of %s could not be read (too few syllables): its output keeps the model's tempo", name)


def mix_shares(mix: StyleMix) -> list[tuple[Reference, float]]:
    """A style mix's references with their weights normalised to sum to one.

    Raises:
        GstTtsError: not a mapping or a list of pairs, a weight that is not a finite number or is
            negative, or no positive weight.
    """
    try:
        items = list(mix.items()) if isinstance(mix, Mapping) else [tuple(item) for item in mix]
    except TypeError:
        raise GstTtsError(
            f"a style mix is {{reference: weight}} or [(reference, weight), ...], got {type(mix).__name__}"
        ) from None
    if any(len(item) != 2 for item in items):
        raise GstTtsError("a style mix is {reference: weight} or [(reference, weight), ...]; an item is not a pair")
    pairs = [(ref, _finite_float(w, f"mix weight of {reference_name(ref)}")) for ref, w in items]
    if any(w < 0 for _, w in pairs):
        raise GstTtsError("style mix weights must not be negative")
    # Scaled by the largest first: two weights of 1e308 would sum to inf and weigh nothing.
    largest = max((w for _, w in pairs), default=0.0)
    if largest <= 0:
        raise GstTtsError("style mix needs at least one reference with a positive weight")
    total = sum(w / largest for _, w in pairs)
    return [(ref, w / largest / total) for ref, w in pairs]


def once_per_reference(read: Callable[[Reference], Any]) -> Callable[[Reference], Any]:
    """``read`` that reads a reference named several times (one file path, or one samples object
    while the caller holds it) only once."""
    seen: dict[Any, Any] = {}

    def cached(reference: Reference) -> Any:
        key = os.fspath(reference) if isinstance(reference, (str, os.PathLike)) else ("object", id(reference))
        if key not in seen:
            seen[key] = read(reference)
        return seen[key]

    return cached


def warn_f0_range_unused(styles: Sequence[Style | None], where: str) -> None:
    """Warn (once per call) that ``where`` keeps the model's F0 spread when a style asks for one
    (``f0_range``)."""
    if any(isinstance(s, Style) and s.f0_range is not None for s in styles):
        log.warning("%s keeps the model's F0 spread: a style's f0_range is not applied", where)


class F0Target(NamedTuple):
    """The F0 spread a vocoder is asked for (:mod:`~gst_tts.audio.vocoders.intonation`): the
    track's spread is moved toward ``semitones`` by the factor between them raised to ``strength``."""

    semitones: float
    strength: float


def style_f0_range(style: Style | None, read: Callable[[Reference], float | None]) -> F0Target | None:
    """``(F0 spread in semitones, strength)`` a style asks the vocoder for
    (:mod:`~gst_tts.audio.vocoders.intonation`): its ``f0_range`` outright (strength 1), else a
    reference's spread as ``read`` reads it off the recording, or a mix's mean of its references'
    (by their shares, over those ``read`` measures), with the style's strength (default 1).
    ``None`` for token weights, dials or neutral without ``f0_range``, or nothing measured: the
    spread as decoded."""
    if style is None:
        return None
    if style.f0_range is not None:
        return F0Target(style.f0_range, 1.0)
    reading = _reference_reading(style, read)
    return None if reading is None else F0Target(*reading)


class TempoTarget(NamedTuple):
    """The tempo an output is retimed to (:mod:`~gst_tts.inference.tempo`): its articulation rate
    (letters per second of speech) is moved toward ``letters_per_s`` by the factor between them
    raised to ``strength``."""

    letters_per_s: float
    strength: float


def style_tempo(style: Style | None, read: Callable[[Reference], float | None]) -> TempoTarget | None:
    """The :class:`TempoTarget` of a reference or mix: the reference's letter rate as ``read``
    estimates it from the recording, or a mix's geometric mean of its references' (by their shares,
    over those ``read`` measures), with the style's strength (default 1). ``None`` for token
    weights, dials, neutral, or nothing measured: the tempo as decoded."""

    def log_rate(reference: Reference) -> float | None:
        rate = read(reference)
        return math.log(rate) if rate is not None and math.isfinite(rate) and rate > 0 else None

    reading = _reference_reading(style, log_rate)
    return None if reading is None else TempoTarget(math.exp(reading[0]), reading[1])


def _reference_reading(style: Style | None, read: Callable[[Reference], float | None]) -> tuple[float, float] | None:
    """``(value, strength)``: what ``read`` reads off a style's reference, or the mean of a mix's
    references' readings by their shares (those it reads; a share of 0 is not read), with the
    style's strength (default 1); ``None`` for other styles, a strength of 0 (the model's own,
    nothing read) or nothing read."""
    if style is None or (style.reference is None and style.mix is None) or style.strength == 0:
        return None
    strength = 1.0 if style.strength is None else float(style.strength)
    pairs = [(style.reference, 1.0)] if style.reference is not None else mix_shares(style.mix)
    measured = [(read(ref), share) for ref, share in pairs if share > 0]
    measured = [(value, share) for value, share in measured if value is not None]
    if not measured:
        return None
    return sum(value * share for value, share in measured) / sum(share for _, share in measured), strength


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _style_weight(value: Any, what: str) -> float:
    """A token weight or dial amount: a finite number within ``±MAX_STYLE_WEIGHT``."""
    w = _finite_float(value, what)
    if abs(w) > MAX_STYLE_WEIGHT:
        raise GstTtsError(f"{what} must lie within ±{MAX_STYLE_WEIGHT:g}, got {short_repr(value)}")
    return w


def _finite_float(value: Any, what: str) -> float:
    try:
        w = float(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int past float's range
        raise GstTtsError(f"{what} is not a finite number: {short_repr(value)}") from None
    if not math.isfinite(w):
        raise GstTtsError(f"{what} must be finite, got {short_repr(value)}")
    return w


def short_repr(value: Any, limit: int = 40) -> str:
    """``repr(value)`` for a one-line message: whitespace runs (newlines of an array's repr) made one
    space, at most ``limit`` characters."""
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[:limit] + "…"


def reference_name(reference: Any) -> str:
    """A reference as messages name it: a path as it is, or ``repr``-quoted when it holds a line
    break or another character that is not printable (which would break the one-line message);
    samples as "reference array"."""
    if isinstance(reference, (str, os.PathLike)):
        text = os.fsdecode(reference)
        return text if text.isprintable() else repr(text)
    return "reference array" if isinstance(reference, tuple) else short_repr(reference)
