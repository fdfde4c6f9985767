"""Style transfer, measured: do the outputs' pitch level, pitch range and speaking rate follow
those of references the model never heard?

For every reference clip a fixed set of sentences is synthesized in its style. The reference and
each output are measured: median F0 over voiced frames, F0 range (10-90 percentile spread,
semitones) and articulation rate (letters per second of speech, pauses excluded; see
:mod:`gst_tts.analysis.prosody`). A reference's output value is the median over its sentences.
Over a set of references, per measure: Pearson r, Spearman and the least-squares slope of output
vs reference, F0 and rate in the log domain (a slope of 1 carries a reference's ratio whole into
the output; 0 ignores it), the range in semitones.

Reference sets: :func:`espeak_references` (voices and settings the demo corpus never used),
:func:`folder_references` (recordings; transcripts where a folder has them) and
:func:`augmented_references` (pitch-shifted and time-stretched copies of recordings). The run
that synthesizes in each reference's style is :func:`gst_tts.inference.transfer.evaluate_style_transfer`
(analysis sits below inference and only measures). Used by ``gst-tts measure-transfer``,
``gst-tts demo-report`` and ``gst-tts select-checkpoint``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from gst_tts.analysis.alignment import AlignmentHealth
from gst_tts.analysis.prosody import Fit, articulation_rate, fit, pitch_stats
from gst_tts.errors import GstTtsError

if TYPE_CHECKING:
    from gst_tts.audio.features import AudioConfig

__all__ = [
    "TRANSFER_F0_RANGE_HZ",
    "TRANSFER_HIGHPASS_HZ",
    "MIN_VOICED_SHARE",
    "MEASURES",
    "TEXT_SEED",
    "REFERENCE_TEXT_SEED",
    "REFERENCE_SENTENCES",
    "AUDIO_SUFFIXES",
    "ESPEAK_GROUP",
    "REAL_GROUP",
    "AUGMENTED_GROUP",
    "ReferenceClip",
    "ClipMeasures",
    "StyleTransferReport",
    "held_out_sentences",
    "espeak_references",
    "folder_references",
    "augmented_references",
    "measure_clip",
    "median_measures",
    "transfer_fits",
    "SELECTION_SEED",
    "selection_figures",
]

#: pyin's search range here (Hz): the corpus's F0 levels (90-260 Hz) with their intonation, and
#: a ceiling low enough to keep most octave errors on Griffin-Lim audio out of the medians.
TRANSFER_F0_RANGE_HZ = (60.0, 400.0)

#: What lies below this is filtered out before F0 is tracked (Hz): mains hum in real recordings
#: reads as F0 at the bottom of the range otherwise; espeak's 90 Hz voices measure the same with it.
TRANSFER_HIGHPASS_HZ = 70.0

#: Least voiced share (of a clip's frames) for its F0 level and range to count. Below it the clip
#: is unvoiced: pyin's few "voiced" frames in a whispered or noisy clip sit at the floor of its
#: search range (60 Hz) and would read as a very low voice. Speech is voiced on about half its frames.
MIN_VOICED_SHARE = 0.1

#: The measures compared, with the transform applied before fitting and a label for tables.
MEASURES: dict[str, tuple[str, str]] = {
    "f0_hz": ("log", "log F0"),
    "f0_range_st": ("linear", "F0 range (st)"),
    "rate_letters_per_s": ("log", "log rate"),
}

#: Seed of the default held-out sentences the outputs speak (the corpus default is 0).
TEXT_SEED = 9002
#: Seed of the sentences espeak references speak (added to the reference seed).
REFERENCE_TEXT_SEED = 9003
#: Held-out sentences each espeak reference reads by default.
REFERENCE_SENTENCES = 2
#: Seed of the references (and, added to the text seeds, of the sentences) that choose a checkpoint
#: (``gst-tts select-checkpoint``): apart from the seeds reports use (``demo-report``: 1), so the
#: chosen checkpoint is then judged on references that had no part in choosing it.
SELECTION_SEED = 100

#: Names of the reference sets the helpers below make.
ESPEAK_GROUP, REAL_GROUP, AUGMENTED_GROUP = "espeak-unseen", "real", "augmented"

#: File suffixes a reference folder is searched for (lower case).
AUDIO_SUFFIXES = (".wav", ".flac")


@dataclass(frozen=True)
class ReferenceClip:
    """One reference recording.

    Args:
        name: identifier, unique within a run (used for file and folder names).
        audio: ``(n_samples,)`` mono samples.
        sample_rate: their rate (Hz); any.
        text: what is said; ``None`` when unknown (then its rate is not measured).
        groups: the sets it belongs to (fits are computed per set), e.g. ``("espeak-unseen",)``.
        path: the file it came from, if any.
        info: how it was made (espeak settings, the pitch shift applied, …), for the report.
    """

    name: str
    audio: np.ndarray
    sample_rate: int
    text: str | None
    groups: tuple[str, ...]
    path: Path | None = None
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ClipMeasures:
    """What is measured on one clip; NaN where it cannot be (no voiced frame, no text)."""

    f0_hz: float  # median F0 over voiced frames
    f0_range_st: float  # 10-90 percentile spread of voiced F0, semitones
    voiced_share: float  # 0..1
    rate_letters_per_s: float  # articulation rate: letters per second of speech, pauses excluded
    duration_s: float

    def to_dict(self, digits: int = 3) -> dict[str, float | None]:
        """Rounded; NaN becomes None (JSON null)."""
        return {k: (round(v, digits) if math.isfinite(v) else None) for k, v in asdict(self).items()}


def _median(values: Sequence[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return float(np.median(finite)) if finite else float("nan")


def median_measures(measures: Sequence[ClipMeasures]) -> ClipMeasures:
    """Each field's median over ``measures`` (NaNs left out)."""
    return ClipMeasures(**{k: _median([getattr(m, k) for m in measures]) for k in asdict(measures[0])})


def measure_clip(
    audio: np.ndarray,
    sample_rate: int,
    text: str | None,
    audio_config: AudioConfig,
    *,
    log_mel: np.ndarray | None = None,
    f0_range_hz: tuple[float, float] = TRANSFER_F0_RANGE_HZ,
) -> ClipMeasures:
    """Measures one clip at the model's feature settings (F0 after a :data:`TRANSFER_HIGHPASS_HZ`
    high-pass; F0 level and range NaN when the clip is voiced on under :data:`MIN_VOICED_SHARE` of
    its frames).

    Args:
        audio: ``(n_samples,)`` mono samples at ``sample_rate``; resampled to
            ``audio_config.sample_rate`` first, so references and outputs are measured alike.
        sample_rate: their rate (Hz).
        text: the cleaned text spoken (letters are counted); ``None``: rate NaN.
        audio_config: the model's feature settings (the log-mel the rate is read from).
        log_mel: ``(frames, n_mels)`` log-mel of the clip when already known (an output's); by
            default computed from the audio.
        f0_range_hz: pyin's search range. Default :data:`TRANSFER_F0_RANGE_HZ`.
    """
    from gst_tts.audio.features import wav_to_logmel
    from gst_tts.audio.io import to_mono_resampled

    rate = audio_config.sample_rate
    samples = to_mono_resampled(np.asarray(audio, dtype=np.float32), int(sample_rate), rate)
    pitch = pitch_stats(samples, rate, f0_range_hz=f0_range_hz, highpass_hz=TRANSFER_HIGHPASS_HZ)
    if log_mel is None:
        log_mel = wav_to_logmel(samples, audio_config)
    f0_hz, f0_range_st = pitch.median_hz, pitch.range_semitones
    if not pitch.voiced_share >= MIN_VOICED_SHARE:
        f0_hz = f0_range_st = float("nan")
    speech_rate = float("nan")
    if text is not None and len(log_mel):
        speech_rate = articulation_rate(text, log_mel, audio_config.hop_length / rate)
    return ClipMeasures(
        f0_hz=f0_hz,
        f0_range_st=f0_range_st,
        voiced_share=pitch.voiced_share,
        rate_letters_per_s=speech_rate,
        duration_s=len(samples) / rate,
    )


# ---------------------------------------------------------------- reference sets


def held_out_sentences(n: int, seed: int = TEXT_SEED, exclude: Sequence[str] = ()) -> list[str]:
    """``n`` generated sentences of ``seed`` that are not in ``exclude`` (a corpus's)."""
    from gst_tts.demo.sentences import generate_sentences

    excluded = set(exclude)
    candidates = [s for s in generate_sentences(2 * n + 8, seed) if s not in excluded]
    if len(candidates) < n:
        raise GstTtsError(f"could not find {n} held-out sentences")
    return candidates[:n]


def espeak_references(
    n: int,
    seed: int = 0,
    *,
    sentences: int = REFERENCE_SENTENCES,
    exclude: Sequence[str] = (),
    group: str = ESPEAK_GROUP,
) -> list[ReferenceClip]:
    """``n`` espeak-ng references in voices the demo corpus never used, with pitch, intonation,
    rate and word gap spread over the corpus's ranges (:func:`gst_tts.demo.corpus.unseen_settings`),
    each reading ``sentences`` held-out sentences (none of ``exclude``; default
    :data:`REFERENCE_SENTENCES`). The same arguments give the same clips.

    Raises:
        GstTtsError: ``sentences`` < 1.
    """
    from gst_tts.demo import corpus as demo_corpus

    if sentences < 1:
        raise GstTtsError(f"each reference reads at least one sentence, got {sentences}")
    settings = demo_corpus.unseen_settings(n, seed)
    texts = held_out_sentences(sentences * n, REFERENCE_TEXT_SEED + seed, exclude)
    clips = []
    for i, s in enumerate(settings):
        text = " ".join(texts[sentences * i : sentences * (i + 1)])
        base, top = s.pitch_line
        info = {**asdict(s), "pitch_base_hz": base, "pitch_top_hz": top, "label": s.label}
        clips.append(
            ReferenceClip(
                name=f"espeak-{i + 1:02d}-{s.variant}",
                audio=demo_corpus.render_sentence(text, s),
                sample_rate=demo_corpus.SAMPLE_RATE,
                text=text,
                groups=(group,),
                info=info,
            )
        )
    return clips


def _transcripts(folder: Path) -> dict[str, str]:
    """Transcripts by file stem: ``metadata.csv`` (LJSpeech: ``id|text[|normalized]``, the last
    column wins) in ``folder`` or its parent, then ``<stem>.txt`` / ``<stem>.lab`` files."""
    found: dict[str, str] = {}
    for metadata in (folder.parent / "metadata.csv", folder / "metadata.csv"):
        if metadata.is_file():
            for line in metadata.read_text(encoding="utf-8", errors="replace").splitlines():
                fields = line.split("|")
                if len(fields) >= 2 and fields[-1].strip():
                    found[fields[0].strip()] = fields[-1].strip()
    for suffix in (".txt", ".lab"):
        for path in folder.glob(f"*{suffix}"):
            text = path.read_text(encoding="utf-8", errors="replace").strip()
            if text:
                found[path.stem] = " ".join(text.split())
    return found


def folder_references(folder: str | os.PathLike, *, group: str = REAL_GROUP) -> list[ReferenceClip]:
    """The recordings in ``folder`` (``.wav`` / ``.flac``, any rate; in ``folder/wavs`` when
    ``folder`` holds none itself, as in an LJSpeech corpus), sorted by name, with transcripts
    where ``metadata.csv`` or ``<stem>.txt`` files give them.

    Raises:
        GstTtsError: ``folder`` is not a folder or holds no recording.
        AudioError: a recording is unreadable.
    """
    from gst_tts.audio.io import load_audio

    folder = Path(folder)
    if not folder.is_dir():
        raise GstTtsError(f"reference folder {folder} does not exist or is not a folder")

    def recordings(where: Path) -> list[Path]:
        return sorted(p for p in where.iterdir() if p.is_file() and p.suffix.lower() in AUDIO_SUFFIXES)

    files = recordings(folder)
    if not files and (folder / "wavs").is_dir():
        folder = folder / "wavs"
        files = recordings(folder)
    if not files:
        raise GstTtsError(f"reference folder {folder} holds no {' or '.join(AUDIO_SUFFIXES)} files")
    transcripts = _transcripts(folder)
    clips = []
    for path in files:
        audio, rate = load_audio(path)
        clips.append(
            ReferenceClip(
                name=path.stem,
                audio=audio,
                sample_rate=rate,
                text=transcripts.get(path.stem),
                groups=(group,),
                path=path,
                info={"source": str(path)},
            )
        )
    return clips


def augmented_references(
    clips: Sequence[ReferenceClip],
    *,
    semitones: tuple[float, ...] | None = None,
    speeds: tuple[float, ...] | None = None,
    group: str = AUGMENTED_GROUP,
) -> list[ReferenceClip]:
    """Each clip (now also in ``group``) followed by its pitch-shifted and time-stretched copies
    (in ``group`` only; :func:`gst_tts.audio.augment.shift_and_stretch`, defaults there): a set
    with a known spread of pitch and tempo even when every clip is one voice. Copies keep the
    transcript and have no path."""
    from gst_tts.audio.augment import DEFAULT_SEMITONES, DEFAULT_SPEEDS, shift_and_stretch

    out = []
    for clip in clips:
        out.append(replace(clip, groups=(*clip.groups, group), info={**clip.info, "semitones": 0.0, "speed": 1.0}))
        variations = shift_and_stretch(
            clip.audio,
            clip.sample_rate,
            semitones=DEFAULT_SEMITONES if semitones is None else semitones,
            speeds=DEFAULT_SPEEDS if speeds is None else speeds,
        )
        for v in variations:
            out.append(
                ReferenceClip(
                    name=f"{clip.name}-{v.suffix}",
                    audio=v.audio,
                    sample_rate=clip.sample_rate,
                    text=clip.text,
                    groups=(group,),
                    info={**clip.info, "of": clip.name, "semitones": v.semitones, "speed": v.speed},
                )
            )
    return out


# ---------------------------------------------------------------- the evaluation


@dataclass
class StyleTransferReport:
    """The outcome of :func:`evaluate_style_transfer`.

    ``rows`` holds one dict per reference: ``name``, ``groups``, ``text``, ``path``, ``info``,
    ``reference`` and ``output`` (measures, the output's being medians over the sentences),
    ``outputs`` (per sentence: measures, stop reason, focus, coverage, aligned) and
    ``aligned_share``. ``fits[group][measure]`` compares outputs with
    references over the references of a group.
    """

    texts: list[str]
    rows: list[dict[str, Any]]
    fits: dict[str, dict[str, Fit]]
    healths: list[AlignmentHealth]
    stop_reasons: list[str]

    def to_dict(self) -> dict[str, Any]:
        fits = {
            group: {name: _rounded_fit(f) for name, f in by_measure.items()} for group, by_measure in self.fits.items()
        }
        return {
            "texts": self.texts,
            "measures": {k: v[0] for k, v in MEASURES.items()},
            "fits": fits,
            "references": self.rows,
        }

    def csv_header(self) -> list[str]:
        measured = [f"{side}_{k}" for k in (*MEASURES, "voiced_share") for side in ("reference", "output")]
        return ["name", "groups", "label", *measured, "aligned_share", "text", "source"]

    def csv_rows(self) -> list[list[Any]]:
        """One row per reference, in :meth:`csv_header` order (NaN as empty)."""
        out = []
        for row in self.rows:
            values = [row["name"], "+".join(row["groups"]), row["info"].get("label", "")]
            for key in (*MEASURES, "voiced_share"):
                values += [row["reference"][key], row["output"][key]]
            values += [row["aligned_share"], row["text"] or "", row["path"] or ""]
            out.append(["" if v is None else v for v in values])
        return out

    def table_lines(self) -> list[str]:
        """The per-reference table and the fits, for printing."""
        lines = [
            f"{'reference':<28} {'sets':<14} {'F0 Hz ref→out':>15} {'range st ref→out':>17} "
            f"{'rate l/s ref→out':>17} {'aligned':>8}"
        ]
        for row in self.rows:
            ref, out = row["reference"], row["output"]
            lines.append(
                f"{row['name'][:28]:<28} {'+'.join(row['groups'])[:14]:<14} {_pair(ref['f0_hz'], out['f0_hz'], 0):>15} "
                f"{_pair(ref['f0_range_st'], out['f0_range_st'], 1):>17} "
                f"{_pair(ref['rate_letters_per_s'], out['rate_letters_per_s'], 1):>17} {row['aligned_share']:>8.0%}"
            )
        lines.append("Output vs reference over each set (F0 and rate in log):")
        lines.append(f"  {'set':<14} {'measure':<14} {'Pearson r':>9} {'Spearman':>9} {'slope':>7} {'n':>4}")
        for group, by_measure in self.fits.items():
            for name, f in by_measure.items():
                lines.append(
                    f"  {group[:14]:<14} {MEASURES[name][1]:<14} {_num(f.r):>9} {_num(f.spearman):>9} "
                    f"{_num(f.slope):>7} {f.n:>4}"
                )
        return lines


def selection_figures(report: StyleTransferReport, group: str = ESPEAK_GROUP) -> dict[str, float]:
    """The figures a checkpoint is chosen by, over the references of ``group``: Pearson r of log F0
    and of log rate, their slopes as ``1 - |1 - slope|`` (over- and undershooting alike), and the
    share of outputs aligned. NaN (nothing measured) counts as -inf, the worst.

    Raises:
        GstTtsError: ``group`` is not one of the report's.
    """
    if group not in report.fits:
        raise GstTtsError(f"no reference set {group!r} in the report (sets: {', '.join(report.fits) or 'none'})")
    fits = report.fits[group]
    rows = [row for row in report.rows if group in row["groups"]]

    def finite(value: float) -> float:
        return value if math.isfinite(value) else -math.inf

    figures = {}
    for name in ("f0_hz", "rate_letters_per_s"):
        label = MEASURES[name][1]
        figures[f"{label} r"] = finite(fits[name].r)
        figures[f"{label} slope"] = finite(1.0 - abs(1.0 - fits[name].slope))
    figures["aligned"] = float(np.mean([o["aligned"] for row in rows for o in row["outputs"]]))
    return figures


def _num(value: float, digits: int = 2) -> str:
    return f"{value:.{digits}f}" if math.isfinite(value) else "-"


def _pair(ref: float | None, out: float | None, digits: int) -> str:
    show = lambda v: "-" if v is None else f"{v:.{digits}f}"  # noqa: E731
    return f"{show(ref)} → {show(out)}"


def _rounded_fit(f: Fit) -> dict[str, float | int | None]:
    return {
        k: (round(v, 4) if math.isfinite(v) else None) if isinstance(v, float) else v for k, v in f.to_dict().items()
    }


def _transformed(values: Sequence[float], how: str) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if how == "log":
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(values > 0, np.log(np.where(values > 0, values, 1.0)), np.nan)
    return values


def transfer_fits(references: Sequence[ClipMeasures], outputs: Sequence[ClipMeasures]) -> dict[str, Fit]:
    """Per measure of :data:`MEASURES`: the fit of output values on reference values."""

    def values(measures: Sequence[ClipMeasures], name: str, how: str) -> np.ndarray:
        return _transformed([getattr(m, name) for m in measures], how)

    return {name: fit(values(references, name, how), values(outputs, name, how)) for name, (how, _) in MEASURES.items()}
