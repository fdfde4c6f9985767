"""A small multi-style demo corpus rendered offline with espeak-ng.

The corpus is in LJSpeech format (``metadata.csv`` + ``wavs/``) plus ``styles.csv`` saying
which speaking style rendered each utterance. Four styles cross two pitch levels with two
speaking rates, so a Global-Style-Token model trained on it (in minutes, on a CPU) has clear
style factors to discover, and style transfer can be checked by measuring pitch and duration.

Speech comes from the espeak-ng library bundled in the ``espeakng-loader`` wheel, driven
through ``ctypes``: no system package and no espeak binary are needed. Sentences come from a
seeded template generator in this module; no text is downloaded.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
import json
import os
from pathlib import Path
import shutil
import tempfile
from typing import Iterable

import numpy as np
import soundfile as sf
from tqdm import tqdm

from gst_tts.demo.espeak import _SHARED_SYNTH
from gst_tts.demo.sentences import generate_sentences
from gst_tts.errors import GstTtsError

SAMPLE_RATE = 22050
"""Rate of every rendered clip (Hz); espeak-ng's native rate."""

KEEP_SILENCE_S = 0.05
"""Silence kept before the first and after the last audible sample of a trimmed clip."""

_SILENCE_THRESHOLD = 0.01
"""Amplitude (full scale = 1) under which espeak's padding counts as silence (-40 dBFS)."""

# Bump when the generator, the styles or the rendering change, so that an existing corpus
# built by an older version is not mistaken for a complete one.
CORPUS_FORMAT_VERSION = 2
_MANIFEST_NAME = "demo_corpus.json"


# --------------------------------------------------------------------------------------
# Styles
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Style:
    """One speaking style of the demo corpus.

    Args:
        name: identifier written to ``styles.csv``.
        voice: espeak voice with variant, e.g. ``"en-us+m3"``.
        rate_wpm: speaking rate in words per minute.
        pitch: espeak base pitch, 0-99.
        pitch_range: espeak intonation range, 0-99.
    """

    name: str
    voice: str
    rate_wpm: int
    pitch: int
    pitch_range: int


# Two pitch levels x two rates. Each style has its own voice variant, so that a style is more
# than pitch and rate; the pitch setting is tuned per variant because variants shift pitch
# themselves. Variants were chosen for clean voicing (m1, f5 confuse pitch trackers more) and
# for determinism: f2 (breath noise, echo) reads uninitialised memory in espeak-ng, so its clips
# changed with the process's address layout; the variants used here render the same samples in
# every process (a test checks this).
# The low level sits near 145 Hz rather than at a typical male 100 Hz: with 80 mels and
# Griffin-Lim, slightly smoothed mels of 100 Hz speech come back unvoiced (pyin found 0% voiced
# frames), which made pitch transfer unmeasurable; at 145 Hz they keep most of their voicing.
# Measured over 40 generated sentences, median F0 by librosa.pyin (50-500 Hz):
#   low_slow 144 Hz, low_fast 145 Hz, high_slow 243 Hz, high_fast 245 Hz -> levels 8.9 semitones
#   apart; slow clips last 1.78-1.89x as long as fast ones.
STYLES: tuple[Style, ...] = (
    Style("low_slow", "en-us+m3", 130, 82, 50),
    Style("low_fast", "en-us+m6", 245, 84, 50),
    Style("high_slow", "en-us+f1", 130, 79, 50),
    Style("high_fast", "en-us+linda", 245, 56, 50),
)


def get_style(name: str) -> Style:
    """Returns the style of :data:`STYLES` called ``name``; raises GstTtsError if none is."""
    for style in STYLES:
        if style.name == name:
            return style
    known = ", ".join(style.name for style in STYLES)
    raise GstTtsError(f"unknown demo style {name!r} (known: {known})")


def _strip_espeak_padding(audio: np.ndarray, sample_rate: int = SAMPLE_RATE, keep_s: float = KEEP_SILENCE_S) -> np.ndarray:
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


def render_sentence(text: str, style: Style | str) -> np.ndarray:
    """Renders one sentence in ``style`` (a :class:`Style` or its name).

    Returns float32 mono samples at :data:`SAMPLE_RATE`, silence trimmed to
    :data:`KEEP_SILENCE_S` at both ends. The same text and style give the same samples.
    """
    if isinstance(style, str):
        style = get_style(style)
    if _SHARED_SYNTH.sample_rate != SAMPLE_RATE:
        raise GstTtsError(f"espeak-ng renders at {_SHARED_SYNTH.sample_rate} Hz, expected {SAMPLE_RATE} Hz")
    audio = _SHARED_SYNTH.synthesize(text, style.voice, style.rate_wpm, style.pitch, style.pitch_range)
    audio = _strip_espeak_padding(audio)
    if audio.size == 0:
        raise GstTtsError(f"espeak-ng rendered silence for {text!r}")
    return audio


def render_sentences(texts: Iterable[str], style: Style | str) -> list[np.ndarray]:
    """Renders each text in ``style``, e.g. held-out reference clips for style transfer.

    Returns float32 mono clips at :data:`SAMPLE_RATE`, trimmed like the corpus clips.
    """
    return [render_sentence(text, style) for text in texts]


# --------------------------------------------------------------------------------------
# Corpus
# --------------------------------------------------------------------------------------


def _utterance_id(index: int) -> str:
    return f"DEMO-{index + 1:04d}"


def _manifest(utterances: int, seed: int) -> dict:
    """What identifies a corpus build; stored in the corpus and compared on reuse."""
    return {
        "format_version": CORPUS_FORMAT_VERSION,
        "utterances": utterances,
        "seed": seed,
        "sample_rate": SAMPLE_RATE,
        "styles": [asdict(style) for style in STYLES],
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
    if not (directory / "styles.csv").is_file():
        return False
    return all((directory / "wavs" / f"{line.split('|', 1)[0]}.wav").is_file() for line in lines)


def _readme(utterances: int, seed: int) -> str:
    rows = "\n".join(
        f"  {s.name:<10}  voice {s.voice:<9}  rate {s.rate_wpm} wpm  pitch {s.pitch}  range {s.pitch_range}"
        for s in STYLES
    )
    return (
        "gst-tts demo corpus\n"
        "===================\n\n"
        f"{utterances} English sentences from the gst-tts template generator (seed {seed}),\n"
        f"rendered with espeak-ng at {SAMPLE_RATE} Hz, 16-bit mono, leading and trailing silence\n"
        f"trimmed to {int(KEEP_SILENCE_S * 1000)} ms. Format: LJSpeech (metadata.csv is id|text|normalized text).\n\n"
        "Styles (styles.csv maps each id to one, assigned in turn): two pitch levels\n"
        "(low, high; about 9 semitones apart) crossed with two speaking rates (slow, fast;\n"
        "about 1.8x apart in duration), each with its own espeak voice variant:\n\n"
        f"{rows}\n"
    )


def make_demo_corpus(out_dir: str | os.PathLike, utterances: int = 600, seed: int = 0, progress: bool = True) -> Path:
    """Writes a multi-style LJSpeech-format corpus to ``out_dir`` and returns its path.

    Contents: ``metadata.csv`` (``DEMO-0001|text|text``), ``wavs/DEMO-0001.wav`` (16-bit PCM,
    22050 Hz, mono), ``styles.csv`` (``DEMO-0001|low_slow``), ``README.txt``, and
    ``demo_corpus.json`` recording the build parameters. Styles are assigned in turn, so
    they are balanced. The same arguments give byte-identical files.

    The corpus is built in a temporary directory beside ``out_dir`` and renamed into place,
    so an interrupted run leaves nothing half-written. An existing complete corpus built
    with the same parameters is reused; an empty directory is replaced.

    Raises:
        GstTtsError: ``utterances`` < 1, ``out_dir`` exists with other content, or espeak-ng
            is unusable.
    """
    if utterances < 1:
        raise GstTtsError(f"number of utterances must be at least 1, got {utterances}")
    out_dir = Path(out_dir)
    manifest = _manifest(utterances, seed)
    if out_dir.exists():
        if _is_complete_corpus(out_dir, manifest):
            return out_dir
        if not out_dir.is_dir() or any(out_dir.iterdir()):
            raise GstTtsError(
                f"{out_dir} exists and is not a demo corpus with {utterances} utterances and seed {seed}; "
                "choose another directory or remove it"
            )
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    texts = generate_sentences(utterances, seed)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.partial-", dir=out_dir.parent))
    try:
        staging.chmod(0o755)  # mkdtemp makes it private; the corpus is an ordinary directory
        _write_corpus(staging, texts, manifest, progress)
        if out_dir.exists():
            out_dir.rmdir()  # empty (checked above); fails, as it should, if filled meanwhile
        os.replace(staging, out_dir)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise GstTtsError(f"cannot write demo corpus to {out_dir}: {error}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out_dir


def _write_corpus(directory: Path, texts: list[str], manifest: dict, progress: bool) -> None:
    """Renders every text and writes all corpus files into ``directory``."""
    wav_dir = directory / "wavs"
    wav_dir.mkdir()
    metadata_rows: list[str] = []
    style_rows: list[str] = []
    for index, text in enumerate(tqdm(texts, desc="rendering demo corpus", unit="utt", disable=not progress)):
        utterance_id = _utterance_id(index)
        style = STYLES[index % len(STYLES)]
        audio = render_sentence(text, style)
        sf.write(str(wav_dir / f"{utterance_id}.wav"), audio, SAMPLE_RATE, subtype="PCM_16", format="WAV")
        # Generated text has no digits or abbreviations, so it is already normalized.
        metadata_rows.append(f"{utterance_id}|{text}|{text}\n")
        style_rows.append(f"{utterance_id}|{style.name}\n")
    (directory / "metadata.csv").write_text("".join(metadata_rows), encoding="utf-8", newline="")
    (directory / "styles.csv").write_text("".join(style_rows), encoding="utf-8", newline="")
    (directory / "README.txt").write_text(_readme(manifest["utterances"], manifest["seed"]), encoding="utf-8")
    # Written last: its presence marks a corpus as complete.
    (directory / _MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
