"""A small demo corpus of many speaking styles, rendered offline with espeak-ng.

The corpus is in LJSpeech format (``metadata.csv`` + ``wavs/``) plus ``styles.csv`` (a coarse
label per utterance: ``low_slow``, ``low_fast``, ``high_slow``, ``high_fast``) and
``prosody.csv`` (the settings each utterance was rendered with). Every utterance gets its own
pitch level, intonation width, speaking rate and pause length between words, each drawn
independently and continuously from a seeded generator, so that a Global-Style-Token model trained
on it (on a CPU) has to measure pitch and tempo. The demo corpus speaks in one voice
(:data:`CORPUS_VARIANTS`): on the demo's budget a model of one voice learns words that a model of
34 does not (docs/results/2026-12-02-demo-levers.md). A corpus of many timbres, each
utterance's drawn from :data:`VETTED_VARIANTS` with its formants scaled within
:data:`FORMANT_SCALE_RANGE`, is an option of :func:`make_demo_corpus`. Some variants and voices are
never used in the corpus (:data:`UNSEEN_VARIANTS`, :data:`UNSEEN_VOICES`), for references the
model never heard.

Speech comes from the espeak-ng library bundled in the ``espeakng-loader`` wheel, driven
through ``ctypes``: no system package and no espeak binary are needed. Sentences come from a
seeded template generator; no text is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass
import hashlib
import json
import math
import os
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import soundfile as sf

from gst_tts.demo.espeak import SHARED_SYNTH, builtin_variant
from gst_tts.demo.sentences import READ_SHARE, demo_sentences
from gst_tts.errors import GstTtsError, first_line
from gst_tts.files import atomic_directory
from gst_tts.progress import progress_bar

SAMPLE_RATE = 22050
"""Rate of every rendered clip (Hz); espeak-ng's native rate."""

KEEP_SILENCE_S = 0.05
"""Silence kept before the first and after the last audible sample of a trimmed clip."""

_SILENCE_THRESHOLD = 0.01
"""Amplitude (full scale = 1) under which espeak's padding counts as silence (-40 dBFS)."""

# Bump when the generator, the settings or the rendering change, so that an existing corpus
# built by an older version is not mistaken for a complete one.
CORPUS_FORMAT_VERSION = 7
_MANIFEST_NAME = "demo_corpus.json"
PROSODY_NAME = "prosody.csv"
"""The per-utterance settings file of a corpus (CSV with a header, one row per utterance)."""


# --------------------------------------------------------------------------------------
# Voices, ranges and the pitch calibration
# --------------------------------------------------------------------------------------

CORPUS_VOICE = "en-us"
"""The espeak voice (language and accent) of every corpus utterance."""

# Variants chosen for clean voicing and for determinism: f2, f3, f5, victor, Alicia and sandro
# (breath noise, echo) read uninitialised memory in espeak-ng, so their clips change with the
# process's address layout; the ones here render the same samples in every process (a test
# checks this). Their own pitch lines are replaced (see the pitch calibration below), so that each timbre
# speaks at every pitch level. The second and third rows (corpus format 4) widen the timbres so
# that unheard voices fall among them: with only the first row, references in iven (a strong low
# formant and voicing) came out 9 % too fast and in norbert (a low second formant) 5 % too slow,
# the reference encoder reading tempo partly off the timbre. Left out as near copies of unseen
# variants: iven2-4 (iven's formants), Nguyen and robosoft* (m8's), aunty (belinda's), klatt6
# (benjamin's); and variants with their own intonation setting, whisper, croak and the like.
VETTED_VARIANTS: tuple[str, ...] = (
    "m2", "m3", "m4", "m6", "m7", "f1", "f4", "linda", "steph", "Gene", "michel", "adam", "edward",
    "m1", "m5", "Mike", "Alex", "Jacky", "Mario", "quincy", "robert", "kaukovalta", "travis", "boris",
    "max", "paul", "Storm", "Annie", "Andrea", "shelby", "Denis", "antonio", "klatt3", "anika",
)  # fmt: skip
"""espeak variants (timbres) that render the same samples in every process: the choices for a
corpus of many timbres, drawn uniformly per utterance."""

CORPUS_VARIANTS: tuple[str, ...] = ("m3",)
"""The demo corpus's variant: one voice. Of eight vetted variants, m3 and michel were the easiest
for the ASR across the corpus's pitches and rates (docs/results/2026-12-02-demo-levers.md)."""

UNSEEN_VARIANTS: tuple[str, ...] = ("m8", "belinda", "iven", "norbert", "benjamin")
"""Variants the corpus never uses: references in them test style transfer from unheard voices."""

UNSEEN_VOICES: tuple[str, ...] = ("en-us", "en-gb-x-rp", "en-gb-scotland")
"""Voices (accents) for unseen references; the corpus uses only :data:`CORPUS_VOICE`."""

F0_RANGE_HZ = (90.0, 260.0)
"""Median F0 of the utterances (Hz), drawn log-uniformly: low male to high female speech."""

RATE_RANGE_WPM = (110.0, 200.0)
"""espeak speaking rate (words per minute), drawn log-uniformly. Capped at 200: espeak-ng's
fastest speech is the hardest to learn words from on the demo's budget, and a model trained
without it speaks new words better (docs/results/2026-12-03-rate-cap-and-learning-rate.md)."""

INTONATION_RANGE = (1.2, 2.0)
"""Intonation width: the pitch line's top over its base, drawn log-uniformly. 1.2 is nearly
flat (a 10-90 % F0 spread of about 2 semitones), 2.0 lively (about 6.5)."""

WORD_GAP_RANGE = (0, 6)
"""Extra pause between words, espeak units of 10 ms at its default rate, drawn uniformly (ints)."""

FORMANT_SCALE_RANGE = (0.92, 1.08)
"""Factor on every formant frequency of the variant, drawn log-uniformly: a continuum of timbres
around each variant, so that none is a fixed fingerprint. Unseen references draw from it, and so
may a corpus of many timbres."""

CORPUS_FORMANT_SCALE_RANGE = (1.0, 1.0)
"""The demo corpus's formant scale: its variant as bundled."""

LABELS = ("low_slow", "low_fast", "high_slow", "high_fast")
"""Coarse labels of ``styles.csv``: pitch and rate above or below the middle of their ranges
(geometric means), kept for reports that group utterances by style."""

# Median F0 (Hz) that a variant speaks at when its pitch line is ``pitch BASE TOP`` with TOP =
# BASE x ratio (espeak pitch and range parameters at their default 50). Rows: BASE; columns:
# the ratios. Measured by benchmarks/calibrate_demo_pitch.py: three generated sentences (seed
# 777) rendered at 175 wpm in each of the 18 variants of corpus format 3 (the first row of
# VETTED_VARIANTS) and UNSEEN_VARIANTS,
# librosa.pyin (40-600 Hz) median over the voiced frames of the three clips together; the
# table holds the geometric mean over the variants. With their pitch lines replaced the variants
# agree: each lies within 3 % of the mean at every point (f1 3.0 %, m4 2.1 %, the others under
# 2 %), so one table serves them all. (espeak's own pitch parameter, 0-99, moves a variant's F0
# by only about 2.4x, from a base that differs between male and female variants, so no variant
# spanned 90-260 Hz and the variant would have told the pitch; the pitch line lets every timbre
# speak at every level.) The 21 variants format 4 added, measured the same way on one sentence,
# agree with m3 within 3 % over the corpus's F0 range (klatt, 6 % off, was left out).
_CALIBRATION_BASES_HZ = (50.0, 80.0, 130.0, 240.0)
_CALIBRATION_RATIOS = (1.2, 1.5, 2.0)
_CALIBRATION_MEDIAN_HZ = (
    (49.8, 63.1, 84.2),
    (84.6, 105.1, 139.2),
    (143.2, 176.0, 231.5),
    (272.2, 332.8, 432.9),
)


def pitch_line(f0_hz: float, intonation: float) -> tuple[int, int]:
    """The variant pitch line ``(base, top)`` in Hz that gives a median F0 of ``f0_hz`` with
    intonation width ``intonation`` (top / base), by the calibration table (log-log interpolation)."""
    log_ratio = math.log(intonation)
    ratios = np.log(_CALIBRATION_RATIOS)
    medians = [np.interp(log_ratio, ratios, np.log(row)) for row in _CALIBRATION_MEDIAN_HZ]
    base = math.exp(np.interp(math.log(f0_hz), medians, np.log(_CALIBRATION_BASES_HZ)))
    return int(round(base)), int(round(base * intonation))


# --------------------------------------------------------------------------------------
# Settings of one utterance
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SpeechSettings:
    """How one utterance is rendered.

    Args:
        variant: espeak variant whose timbre (formants, voicing) is used, e.g. ``"m3"``.
        f0_hz: intended median F0 (Hz); the variant's pitch line is set from it (:func:`pitch_line`).
        intonation: intonation width, the pitch line's top over its base (see :data:`INTONATION_RANGE`).
        rate_wpm: espeak speaking rate, words per minute.
        word_gap: extra pause between words, espeak units of 10 ms at its default rate.
        formant_scale: factor on every formant frequency of the variant (1: as bundled).
        voice: espeak voice (language, accent). Default :data:`CORPUS_VOICE`.
    """

    variant: str
    f0_hz: float
    intonation: float
    rate_wpm: int
    word_gap: int
    formant_scale: float
    voice: str = CORPUS_VOICE

    @property
    def label(self) -> str:
        """The coarse label of :data:`LABELS` this utterance gets."""
        return coarse_label(self.f0_hz, self.rate_wpm)

    @property
    def pitch_line(self) -> tuple[int, int]:
        return pitch_line(self.f0_hz, self.intonation)

    def variant_text(self) -> str:
        """The espeak variant file this utterance is rendered with: the bundled variant with its
        formant frequencies scaled and its pitch line replaced."""
        return _scaled_variant(builtin_variant(self.variant), self.formant_scale) + "pitch {} {}\n".format(
            *self.pitch_line
        )


def coarse_label(f0_hz: float, rate_wpm: float) -> str:
    """``low``/``high`` (F0 below / above the geometric middle of :data:`F0_RANGE_HZ`) and
    ``slow``/``fast`` (likewise for :data:`RATE_RANGE_WPM`), e.g. ``"high_slow"``."""
    pitch = "high" if f0_hz >= math.sqrt(F0_RANGE_HZ[0] * F0_RANGE_HZ[1]) else "low"
    rate = "fast" if rate_wpm >= math.sqrt(RATE_RANGE_WPM[0] * RATE_RANGE_WPM[1]) else "slow"
    return f"{pitch}_{rate}"


_N_FORMANTS = 9  # espeak variant files set formants 0-8


def _scaled_variant(text: str, scale: float) -> str:
    """Variant file ``text`` with every formant frequency (percent of the voice's) times ``scale``;
    formants it does not set get 100 % times ``scale``."""
    lines, seen = [], set()
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[0] == "formant" and fields[1].isdigit():
            fields[2] = str(int(round(float(fields[2]) * scale)))
            seen.add(int(fields[1]))
            line = " ".join(fields)
        lines.append(line)
    lines += [f"formant {n} {int(round(100 * scale))} 100 100" for n in range(_N_FORMANTS) if n not in seen]
    return "\n".join(lines) + "\n"


def _log_uniform(rng: np.random.Generator, bounds: tuple[float, float], size: int | None = None) -> np.ndarray | float:
    return np.exp(rng.uniform(np.log(bounds[0]), np.log(bounds[1]), size))


def draw_settings(
    n: int,
    seed: int,
    *,
    variants: Sequence[str] = CORPUS_VARIANTS,
    voices: Sequence[str] = (CORPUS_VOICE,),
    formant_scale_range: tuple[float, float] = CORPUS_FORMANT_SCALE_RANGE,
) -> list[SpeechSettings]:
    """``n`` settings, every quantity drawn independently of the others from its range (the
    same ones for the same arguments): F0 log-uniform in :data:`F0_RANGE_HZ`, intonation in
    :data:`INTONATION_RANGE`, rate in :data:`RATE_RANGE_WPM` (rounded to whole wpm), word gap
    uniform in :data:`WORD_GAP_RANGE`, formant scale in ``formant_scale_range``, variant and
    voice uniform over ``variants`` and ``voices``.

    Args:
        n: how many.
        seed: the generator's seed (a stream of its own: the sentences of the same seed are
            drawn elsewhere). The first ``k`` of ``n`` settings are those of ``k``.
        variants: espeak variants to draw from. Default :data:`CORPUS_VARIANTS`.
        voices: espeak voices to draw from. Default ``(CORPUS_VOICE,)``.
        formant_scale_range: the formant scale's range. Default :data:`CORPUS_FORMANT_SCALE_RANGE`
            (every variant as bundled); :data:`FORMANT_SCALE_RANGE` for a continuum of timbres. The
            other quantities come out the same for any ``variants``, ``voices`` and range.
    """
    if n < 0:
        raise GstTtsError(f"number of settings must be >= 0, got {n}")
    rng = np.random.default_rng([seed, _SETTINGS_STREAM])
    # The timbre comes from a stream of its own, so that the styles of a seed are the same for any
    # choice of timbres (a draw from one choice consumes nothing).
    timbre = np.random.default_rng([seed, _TIMBRE_STREAM])
    out = []
    for _ in range(n):  # one utterance after the other, so that a longer corpus extends a shorter one
        f0, intonation, rate = (_log_uniform(rng, bounds) for bounds in (F0_RANGE_HZ, INTONATION_RANGE, RATE_RANGE_WPM))
        gap = rng.integers(WORD_GAP_RANGE[0], WORD_GAP_RANGE[1] + 1)
        formant = _log_uniform(timbre, formant_scale_range)
        variant, voice = variants[timbre.integers(len(variants))], voices[timbre.integers(len(voices))]
        out.append(_settings(variant, f0, intonation, rate, gap, formant, voice))
    return out


def unseen_settings(n: int, seed: int) -> list[SpeechSettings]:
    """``n`` settings for references in voices the corpus never used (:data:`UNSEEN_VARIANTS`
    in turn, :data:`UNSEEN_VOICES` drawn), with pitch, intonation, rate and word gap inside the
    corpus ranges. They are stratified (a Latin hypercube: each quantity falls once into each of
    ``n`` equal slices of its range, in independent random orders), so that even a small set
    spreads evenly over every range and the quantities stay uncorrelated.
    """
    if n < 0:
        raise GstTtsError(f"number of settings must be >= 0, got {n}")
    rng = np.random.default_rng([seed, _UNSEEN_STREAM])

    def stratified(bounds: tuple[float, float], log: bool = True) -> np.ndarray:
        u = (rng.permutation(n) + rng.uniform(0.0, 1.0, n)) / max(n, 1)
        low, high = (np.log(bounds[0]), np.log(bounds[1])) if log else bounds
        values = low + u * (high - low)
        return np.exp(values) if log else values

    f0, intonation, rate = stratified(F0_RANGE_HZ), stratified(INTONATION_RANGE), stratified(RATE_RANGE_WPM)
    gap = np.floor(stratified((WORD_GAP_RANGE[0], WORD_GAP_RANGE[1] + 1), log=False))
    formant = _log_uniform(rng, FORMANT_SCALE_RANGE, n)
    voice = rng.integers(0, len(UNSEEN_VOICES), n)
    return [
        _settings(
            UNSEEN_VARIANTS[i % len(UNSEEN_VARIANTS)],
            f0[i],
            intonation[i],
            rate[i],
            min(gap[i], WORD_GAP_RANGE[1]),
            formant[i],
            UNSEEN_VOICES[voice[i]],
        )
        for i in range(n)
    ]


_SETTINGS_STREAM = 1  # seed-sequence keys of the generators
_UNSEEN_STREAM = 2
_TIMBRE_STREAM = 3


def _settings(variant, f0, intonation, rate, gap, formant, voice) -> SpeechSettings:
    """Rounds the draws to what is stored (and rendered): 0.1 Hz, 1e-3, whole wpm and gaps, 1e-3."""
    return SpeechSettings(
        variant=str(variant),
        f0_hz=round(float(f0), 1),
        intonation=round(float(intonation), 3),
        rate_wpm=int(round(float(rate))),
        word_gap=int(gap),
        formant_scale=round(float(formant), 3),
        voice=str(voice),
    )


def _strip_espeak_padding(
    audio: np.ndarray, sample_rate: int = SAMPLE_RATE, keep_s: float = KEEP_SILENCE_S
) -> np.ndarray:
    """Cuts espeak's leading and trailing padding, keeping ``keep_s`` seconds on each side.

    A fixed amplitude threshold with a kept margin, unlike :func:`gst_tts.audio.io.trim_silence`
    (frame energy relative to the peak, no margin), which prepares training and reference audio.
    This one is part of how the demo corpus is rendered: a corpus is byte-identical for a seed,
    and any change here changes every clip (then bump ``CORPUS_FORMAT_VERSION``).
    """
    loud = np.flatnonzero(np.abs(audio) > _SILENCE_THRESHOLD)
    if loud.size == 0:
        return audio[:0]
    keep = int(round(keep_s * sample_rate))
    start = max(0, int(loud[0]) - keep)
    end = min(len(audio), int(loud[-1]) + 1 + keep)
    return audio[start:end]


def render_sentence(text: str, settings: SpeechSettings) -> np.ndarray:
    """Renders one sentence with ``settings``.

    Returns float32 mono samples at :data:`SAMPLE_RATE`, silence trimmed to
    :data:`KEEP_SILENCE_S` at both ends. The same text and settings give the same samples.
    """
    if SHARED_SYNTH.sample_rate != SAMPLE_RATE:
        raise GstTtsError(f"espeak-ng renders at {SHARED_SYNTH.sample_rate} Hz, expected {SAMPLE_RATE} Hz")
    audio = SHARED_SYNTH.synthesize(
        text, settings.voice, settings.rate_wpm, 50, 50, word_gap=settings.word_gap, variant=settings.variant_text()
    )
    audio = _strip_espeak_padding(audio)
    if audio.size == 0:
        raise GstTtsError(f"espeak-ng rendered silence for {text!r}")
    return audio


def render_sentences(texts: Iterable[str], settings: SpeechSettings) -> list[np.ndarray]:
    """Renders each text with ``settings``. Returns float32 mono clips at :data:`SAMPLE_RATE`,
    trimmed like the corpus clips."""
    return [render_sentence(text, settings) for text in texts]


# --------------------------------------------------------------------------------------
# Corpus
# --------------------------------------------------------------------------------------


def _utterance_id(index: int) -> str:
    return f"DEMO-{index + 1:04d}"


PROSODY_COLUMNS = (
    "id", "label", "voice", "variant", "f0_hz", "intonation", "pitch_base_hz", "pitch_top_hz",
    "rate_wpm", "word_gap", "formant_scale",
)  # fmt: skip
"""Columns of :data:`PROSODY_NAME`."""


def _manifest(
    utterances: int,
    seed: int,
    variants: Sequence[str] = CORPUS_VARIANTS,
    formant_scale_range: tuple[float, float] = CORPUS_FORMANT_SCALE_RANGE,
    texts: str | None = None,
    read_share: float = READ_SHARE,
) -> dict:
    """What identifies a corpus build; stored in the corpus and compared on reuse. ``texts``: the
    SHA-256 of a sentence file, None for the generator's sentences (templates and, at
    ``read_share``, bundled read sentences; a sentence file records no share)."""
    return {
        "format_version": CORPUS_FORMAT_VERSION,
        "utterances": utterances,
        "seed": seed,
        "sample_rate": SAMPLE_RATE,
        "voice": CORPUS_VOICE,
        "variants": list(variants),
        "f0_range_hz": list(F0_RANGE_HZ),
        "rate_range_wpm": list(RATE_RANGE_WPM),
        "intonation_range": list(INTONATION_RANGE),
        "word_gap_range": list(WORD_GAP_RANGE),
        "formant_scale_range": list(formant_scale_range),
        "pitch_calibration": {
            "bases_hz": list(_CALIBRATION_BASES_HZ),
            "ratios": list(_CALIBRATION_RATIOS),
            "median_hz": [list(row) for row in _CALIBRATION_MEDIAN_HZ],
        },
        **({"texts_sha256": texts} if texts is not None else {"read_share": read_share}),
    }


def _is_complete_corpus(directory: Path, manifest: dict) -> bool:
    """True if ``directory`` holds a finished corpus built with ``manifest``."""
    try:
        stored = json.loads((directory / _MANIFEST_NAME).read_text(encoding="utf-8"))
        lines = (directory / "metadata.csv").read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError):
        return False
    if stored != manifest or len(lines) != manifest["utterances"]:
        return False
    if not (directory / "styles.csv").is_file() or not (directory / PROSODY_NAME).is_file():
        return False
    return all((directory / "wavs" / f"{line.split('|', 1)[0]}.wav").is_file() for line in lines)


def _readme(manifest: dict) -> str:
    def span(bounds, unit=""):
        return f"{bounds[0]:g}-{bounds[1]:g}{unit}"

    utterances, seed = manifest["utterances"], manifest["seed"]
    source = (
        f"a sentence file (SHA-256 {manifest['texts_sha256'][:12]}...), its first {utterances} lines"
        if "texts_sha256" in manifest
        else f"the gst-tts template generator (seed {seed})"
        + (
            f", a share of {manifest['read_share']:g} of them replaced by bundled LJ Speech transcripts (public domain)"
            if manifest["read_share"]
            else ""
        )
    )
    return (
        "gst-tts demo corpus\n"
        "===================\n\n"
        f"{utterances} English sentences from {source},\n"
        f"rendered with espeak-ng ({CORPUS_VOICE}) at {SAMPLE_RATE} Hz, 16-bit mono, leading and trailing\n"
        f"silence trimmed to {int(KEEP_SILENCE_S * 1000)} ms. Format: LJSpeech (metadata.csv is "
        "id|text|normalized text).\n\n"
        "Every utterance has its own speaking style, each quantity drawn independently (seeded):\n\n"
        f"  median F0          {span(F0_RANGE_HZ, ' Hz')} (log-uniform)\n"
        f"  intonation width   pitch-line top/base {span(INTONATION_RANGE)} (log-uniform)\n"
        f"  speaking rate      {span(RATE_RANGE_WPM, ' wpm')} (log-uniform)\n"
        f"  word gap           {span(WORD_GAP_RANGE)} x 10 ms (uniform)\n"
        f"  voice variant      one of {', '.join(manifest['variants'])}\n"
        f"  formant scale      {span(manifest['formant_scale_range'])} (log-uniform)\n\n"
        f"{PROSODY_NAME} holds each utterance's settings (with a header line). styles.csv holds a\n"
        f"coarse label, one of {', '.join(LABELS)}:\n"
        "F0 and rate below or above the geometric middle of their ranges.\n"
        f"Variants never used here, for unseen references: {', '.join(UNSEEN_VARIANTS)}.\n"
    )


def make_demo_corpus(
    out_dir: str | os.PathLike,
    utterances: int = 2400,
    seed: int = 0,
    progress: bool = True,
    *,
    variants: Sequence[str] = CORPUS_VARIANTS,
    formant_scale_range: tuple[float, float] = CORPUS_FORMANT_SCALE_RANGE,
    texts: str | os.PathLike | None = None,
    read_share: float = READ_SHARE,
) -> Path:
    """Writes a many-style LJSpeech-format corpus to ``out_dir`` and returns its path.

    Contents: ``metadata.csv`` (``DEMO-0001|text|text``), ``wavs/DEMO-0001.wav`` (16-bit PCM,
    22050 Hz, mono), ``styles.csv`` (``DEMO-0001|low_slow``), ``prosody.csv`` (the settings of
    every utterance, :data:`PROSODY_COLUMNS`), ``README.txt``, and ``demo_corpus.json`` recording
    the build parameters. Settings come from :func:`draw_settings` with ``seed``, ``variants`` and
    ``formant_scale_range``; sentences from :func:`~gst_tts.demo.sentences.demo_sentences`
    (templates, a ``read_share`` of them replaced by bundled read sentences), or the first ``utterances``
    lines of the UTF-8 file ``texts`` (one sentence a line, already in words: no digits). The same
    arguments give byte-identical files.

    The corpus is built in a temporary directory beside ``out_dir`` and renamed into place,
    so an interrupted run leaves nothing half-written. An existing complete corpus built
    with the same parameters is reused; an empty directory is replaced.

    Raises:
        GstTtsError: ``utterances`` < 1, ``read_share`` outside [0, 1] or asking for more read
            sentences than are bundled, ``out_dir`` exists with other content, or espeak-ng is unusable.
    """
    if utterances < 1:
        raise GstTtsError(f"number of utterances must be at least 1, got {utterances}")
    variants = list(variants)
    if not variants:
        raise GstTtsError("the demo corpus needs at least one voice variant")
    for variant in variants:
        builtin_variant(variant)  # a one-line error for a name espeak-ng does not have
    low, high = formant_scale_range
    if not 0.5 <= low <= high <= 2.0:
        raise GstTtsError(f"formant scale range must satisfy 0.5 <= low <= high <= 2, got {low:g}-{high:g}")
    sentences, digest = (None, None) if texts is None else read_sentence_file(texts, utterances)
    out_dir = Path(out_dir)
    made = demo_sentences(utterances, seed, read_share) if sentences is None else None  # checks the share
    manifest = _manifest(utterances, seed, variants, (float(low), float(high)), digest, float(read_share))
    if out_dir.exists():
        if _is_complete_corpus(out_dir, manifest):
            return out_dir
        if not out_dir.is_dir() or any(out_dir.iterdir()):
            raise GstTtsError(
                f"{out_dir} exists and is not a demo corpus with {utterances} utterances and seed {seed} "
                f"(format {CORPUS_FORMAT_VERSION}); choose another directory or remove it"
            )
    texts = sentences if sentences is not None else made
    settings = draw_settings(utterances, seed, variants=variants, formant_scale_range=(low, high))
    with atomic_directory(out_dir) as staging:  # the caller checked that out_dir is empty or missing
        _write_corpus(staging, texts, settings, manifest, progress)
    return out_dir


def read_sentence_file(path: str | os.PathLike, count: int) -> tuple[list[str], str]:
    """The first ``count`` lines of the sentence file ``path`` and the SHA-256 of those lines.

    Raises:
        GstTtsError: the file is unreadable or not UTF-8, has fewer than ``count`` lines, or one of
            them is empty, holds a ``|`` (the metadata separator) or a digit (the corpus's text is
            its normalized text), or is longer than :data:`MAX_SENTENCE_CHARS`; the error names the line.
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise GstTtsError(f"{path}: unreadable sentence file ({first_line(error)})") from None
    if len(lines) < count:
        raise GstTtsError(f"{path}: {len(lines)} sentences, fewer than the {count} utterances asked for")
    sentences = []
    for number, line in enumerate(lines[:count], start=1):
        text = " ".join(line.split())
        problem = (
            "is empty"
            if not text
            else "holds '|'"
            if "|" in text
            else "holds a digit (spell numbers out)"
            if any(c.isdigit() for c in text)
            else f"is longer than {MAX_SENTENCE_CHARS} characters"
            if len(text) > MAX_SENTENCE_CHARS
            else None
        )
        if problem:
            raise GstTtsError(f"{path}:{number}: the sentence {problem}: {text[:60]!r}")
        sentences.append(text)
    return sentences, hashlib.sha256("\n".join(sentences).encode("utf-8")).hexdigest()


MAX_SENTENCE_CHARS = 300
"""Longest sentence of a sentence file (characters): the demo's training drops utterances over
its ``max_frames``, and the demo's own sentences are at most 80."""


def prosody_row(utterance_id: str, settings: SpeechSettings) -> list[str]:
    """One :data:`PROSODY_NAME` row (as strings, in :data:`PROSODY_COLUMNS` order)."""
    base, top = settings.pitch_line
    values = (
        utterance_id,
        settings.label,
        settings.voice,
        settings.variant,
        f"{settings.f0_hz:.1f}",
        f"{settings.intonation:.3f}",
        base,
        top,
        settings.rate_wpm,
        settings.word_gap,
        f"{settings.formant_scale:.3f}",
    )
    return [str(v) for v in values]


def _write_corpus(
    directory: Path, texts: list[str], settings: list[SpeechSettings], manifest: dict, progress: bool
) -> None:
    """Renders every text and writes all corpus files into ``directory``."""
    wav_dir = directory / "wavs"
    wav_dir.mkdir()
    metadata_rows: list[str] = []
    style_rows: list[str] = []
    prosody_rows = [",".join(PROSODY_COLUMNS) + "\n"]
    pairs = list(zip(texts, settings))
    for index, (text, utterance) in enumerate(
        progress_bar(pairs, desc="rendering demo corpus", unit="utt", enabled=progress)
    ):
        utterance_id = _utterance_id(index)
        audio = render_sentence(text, utterance)
        sf.write(str(wav_dir / f"{utterance_id}.wav"), audio, SAMPLE_RATE, subtype="PCM_16", format="WAV")
        # Generated text has no digits or abbreviations, so it is already normalized.
        metadata_rows.append(f"{utterance_id}|{text}|{text}\n")
        style_rows.append(f"{utterance_id}|{utterance.label}\n")
        prosody_rows.append(",".join(prosody_row(utterance_id, utterance)) + "\n")
    (directory / "metadata.csv").write_text("".join(metadata_rows), encoding="utf-8", newline="")
    (directory / "styles.csv").write_text("".join(style_rows), encoding="utf-8", newline="")
    (directory / PROSODY_NAME).write_text("".join(prosody_rows), encoding="utf-8", newline="")
    (directory / "README.txt").write_text(_readme(manifest), encoding="utf-8")
    # Written last: its presence marks a corpus as complete.
    (directory / _MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
