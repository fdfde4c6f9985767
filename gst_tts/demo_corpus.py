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

import _ctypes
import atexit
import ctypes
import json
import os
import random
import shutil
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
import soundfile as sf
from tqdm import tqdm

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
# espeak-ng through ctypes
# --------------------------------------------------------------------------------------

# Values from espeak-ng's speak_lib.h.
_AUDIO_OUTPUT_SYNCHRONOUS = 0x02  # espeak_Synth returns once all audio went to the callback
_INITIALIZE_DONT_EXIT = 0x8000  # report errors instead of calling exit()
_CHARS_UTF8 = 1
_POS_CHARACTER = 1
_EE_OK = 0
_PARAM_RATE = 1
_PARAM_PITCH = 3
_PARAM_RANGE = 4

# int callback(short *wav, int numsamples, espeak_EVENT *events); return 0 to continue.
_SynthCallback = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p
)


def _unload_library(handle: int) -> None:
    """Unmaps a library opened with ctypes, so that the next load starts from fresh statics."""
    close = getattr(_ctypes, "dlclose", None) or getattr(_ctypes, "FreeLibrary")
    close(handle)


class EspeakSynth:
    """Renders text with the espeak-ng library bundled in ``espeakng-loader``.

    espeak-ng keeps synthesis state in function-level static variables (pitch-flutter phase,
    gain control, cycle counters) that ``espeak_Terminate`` does not reset, so a clip would
    depend on every clip rendered before it in the process. To make each clip a pure
    function of its text and settings, every :meth:`synthesize` loads a private copy of the
    library, initialises it, renders, and unloads it again (about a millisecond). The copy
    is made lazily, once per process; being private, it shares no state with other users of
    espeak-ng in the process (a phonemizer, say). A lock serialises synthesis across threads.
    """

    _lock = threading.Lock()
    _library_path: str | None = None  # the private copy
    _data_path: str = ""
    _owner_pid: int = 0  # process that made the copy; a forked child makes its own
    _sample_rate: int = 0
    _chunks: list[np.ndarray] = []

    @staticmethod
    def _collect(wav: ctypes.POINTER(ctypes.c_short), num_samples: int, events: int) -> int:
        # Copy: the buffer belongs to espeak and is reused for the next chunk.
        if wav and num_samples > 0:
            EspeakSynth._chunks.append(np.ctypeslib.as_array(wav, shape=(num_samples,)).copy())
        return 0

    _callback = _SynthCallback(_collect)  # one object for the process; ctypes must keep it alive

    @property
    def sample_rate(self) -> int:
        """Rate of the returned audio (Hz); prepares the library if needed."""
        with self._lock:
            if EspeakSynth._sample_rate == 0:
                self._close(self._open())
        return EspeakSynth._sample_rate

    def synthesize(self, text: str, voice: str, rate: int, pitch: int, pitch_range: int = 50) -> np.ndarray:
        """Renders ``text`` and returns float32 mono samples in [-1, 1] at :attr:`sample_rate`.

        Args:
            text: plain text (no SSML).
            voice: espeak voice name, optionally with a variant, e.g. ``"en-us+m3"``.
            rate: speaking rate in words per minute (espeak accepts about 80-450).
            pitch: base pitch, 0-99 (50 is the voice's normal pitch).
            pitch_range: intonation range, 0-99 (0 is monotone, 50 normal).

        Raises:
            GstTtsError: the library cannot be loaded, the voice does not exist, or synthesis
                fails.
        """
        with self._lock:
            lib = self._open()
            try:
                if lib.espeak_SetVoiceByName(voice.encode("utf-8")) != _EE_OK:
                    raise GstTtsError(f"espeak-ng has no voice {voice!r}")
                # Parameters after the voice: selecting a voice resets them.
                for parameter, value in ((_PARAM_RATE, rate), (_PARAM_PITCH, pitch), (_PARAM_RANGE, pitch_range)):
                    lib.espeak_SetParameter(parameter, int(value), 0)
                data = text.encode("utf-8") + b"\0"
                EspeakSynth._chunks = []
                status = lib.espeak_Synth(data, len(data), 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
                lib.espeak_Synchronize()
                chunks, EspeakSynth._chunks = EspeakSynth._chunks, []
            finally:
                self._close(lib)
        if status != _EE_OK:
            raise GstTtsError(f"espeak-ng failed to render {text!r} (error {status})")
        if not chunks:
            return np.zeros(0, dtype=np.float32)
        return np.concatenate(chunks).astype(np.float32) / 32768.0

    @classmethod
    def _prepare(cls) -> None:
        """Finds the bundled library and data and copies the library to a private file."""
        try:
            import espeakng_loader

            source = espeakng_loader.get_library_path()
            data_path = espeakng_loader.get_data_path()
            copy_dir = tempfile.mkdtemp(prefix="gst-tts-espeak-")
            atexit.register(shutil.rmtree, copy_dir, True)
            library_path = os.path.join(copy_dir, os.path.basename(source))
            shutil.copyfile(source, library_path)
        except (ImportError, OSError, RuntimeError) as error:
            message = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise GstTtsError(f"cannot load espeak-ng from espeakng-loader: {message}") from None
        cls._library_path, cls._data_path, cls._owner_pid = library_path, data_path, os.getpid()

    @classmethod
    def _open(cls) -> ctypes.CDLL:
        """Loads a fresh instance of the library and initialises it; the caller holds ``_lock``."""
        if cls._library_path is None or cls._owner_pid != os.getpid():
            cls._prepare()
        try:
            lib = ctypes.CDLL(cls._library_path)
        except OSError as error:
            raise GstTtsError(f"cannot load espeak-ng: {str(error).splitlines()[0]}") from None
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_SetSynthCallback.argtypes = [_SynthCallback]
        lib.espeak_SetSynthCallback.restype = None
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_Synth.argtypes = [
            ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int,
            ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
        ]  # fmt: skip
        sample_rate = lib.espeak_Initialize(
            _AUDIO_OUTPUT_SYNCHRONOUS, 0, cls._data_path.encode("utf-8"), _INITIALIZE_DONT_EXIT
        )
        if sample_rate <= 0:
            _unload_library(lib._handle)
            raise GstTtsError(f"cannot initialise espeak-ng with data at {cls._data_path} (error {sample_rate})")
        lib.espeak_SetSynthCallback(cls._callback)
        cls._sample_rate = sample_rate
        return lib

    @staticmethod
    def _close(lib: ctypes.CDLL) -> None:
        lib.espeak_Terminate()
        _unload_library(lib._handle)


_SHARED_SYNTH = EspeakSynth()


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


def trim_silence(audio: np.ndarray, sample_rate: int = SAMPLE_RATE, keep_s: float = KEEP_SILENCE_S) -> np.ndarray:
    """Cuts leading and trailing silence, keeping ``keep_s`` seconds on each side."""
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
    audio = trim_silence(audio)
    if audio.size == 0:
        raise GstTtsError(f"espeak-ng rendered silence for {text!r}")
    return audio


def render_sentences(texts: Iterable[str], style: Style | str) -> list[np.ndarray]:
    """Renders each text in ``style``, e.g. held-out reference clips for style transfer.

    Returns float32 mono clips at :data:`SAMPLE_RATE`, trimmed like the corpus clips.
    """
    return [render_sentence(text, style) for text in texts]


# --------------------------------------------------------------------------------------
# Sentence generator
# --------------------------------------------------------------------------------------

_NAMES = (
    "Anna", "Ben", "Clara", "David", "Elena", "Frank", "Grace", "Henry", "Iris", "Jack",
    "Kate", "Leo", "Maya", "Noah", "Olive", "Paul", "Rosa", "Sam", "Tina", "Victor",
    "Wendy", "Oscar", "Lucy", "Martin", "Nora", "Peter", "Ruth", "Simon",
)  # fmt: skip
# Adjectives that suit things, and those that suit people and animals.
_THING_ADJECTIVES = (
    "old", "small", "large", "heavy", "narrow", "golden", "silver", "wooden", "strange",
    "empty", "warm", "cold", "red", "green", "blue", "yellow", "ancient", "old-fashioned",
    "brand-new", "dusty", "shiny", "little", "famous", "broken", "clean", "tiny", "enormous",
)  # fmt: skip
_BEING_ADJECTIVES = (
    "old", "young", "quiet", "gentle", "strange", "happy", "tired", "careful", "clever",
    "noisy", "polite", "curious", "lonely", "famous", "well-known", "friendly", "hungry",
    "proud", "sleepy", "little", "brave", "cheerful", "busy",
)  # fmt: skip
_BEINGS = (
    ("captain", "captains"), ("teacher", "teachers"), ("farmer", "farmers"),
    ("doctor", "doctors"), ("sailor", "sailors"), ("painter", "painters"),
    ("child", "children"), ("dog", "dogs"), ("cat", "cats"), ("horse", "horses"),
    ("baker", "bakers"), ("fox", "foxes"), ("neighbor", "neighbors"), ("student", "students"),
    ("musician", "musicians"), ("driver", "drivers"),
)  # fmt: skip
_THINGS = (
    ("box", "boxes"), ("letter", "letters"), ("lamp", "lamps"), ("basket", "baskets"),
    ("bicycle", "bicycles"), ("window", "windows"), ("clock", "clocks"), ("kettle", "kettles"),
    ("ladder", "ladders"), ("map", "maps"), ("piano", "pianos"), ("umbrella", "umbrellas"),
    ("boat", "boats"), ("apple", "apples"), ("cake", "cakes"), ("book", "books"),
    ("key", "keys"), ("candle", "candles"), ("blanket", "blankets"), ("coat", "coats"),
    ("chair", "chairs"), ("bottle", "bottles"), ("hat", "hats"), ("drum", "drums"),
    ("mirror", "mirrors"), ("suitcase", "suitcases"), ("envelope", "envelopes"),
)  # fmt: skip
# (base, past) of verbs that take a thing as object.
_THING_VERBS = (
    ("carry", "carried"), ("find", "found"), ("paint", "painted"), ("open", "opened"),
    ("clean", "cleaned"), ("lift", "lifted"), ("hide", "hid"), ("buy", "bought"),
    ("sell", "sold"), ("fix", "fixed"), ("drop", "dropped"), ("bring", "brought"),
    ("borrow", "borrowed"), ("wash", "washed"), ("move", "moved"), ("check", "checked"),
    ("pack", "packed"), ("keep", "kept"), ("lose", "lost"), ("mend", "mended"),
)  # fmt: skip
# (base, past) of verbs of motion, followed by a direction and a place.
_MOTION_VERBS = (
    ("walk", "walked"), ("run", "ran"), ("drive", "drove"), ("sail", "sailed"),
    ("hurry", "hurried"), ("travel", "traveled"), ("wander", "wandered"),
    ("return", "returned"), ("march", "marched"), ("ride", "rode"), ("cycle", "cycled"),
)  # fmt: skip
_DIRECTIONS = ("to", "toward", "past", "away from", "back to")
_PLACES = (
    "station", "harbor", "market", "library", "bakery", "river", "village", "museum",
    "castle", "school", "bridge", "forest", "hospital", "theater", "beach", "farm", "church",
    "kitchen", "office", "mountain", "island", "valley", "lighthouse", "garden", "park",
    "airport", "hotel", "square",
)  # fmt: skip
_LOCATIONS = ("near", "behind", "beside", "inside", "outside", "under", "next to")
_PAST_TIMES = (
    "yesterday", "this morning", "last night", "last week", "on Sunday", "on Monday",
    "on Friday", "at noon", "before dinner", "after lunch", "in the evening", "at dawn",
)  # fmt: skip
_FUTURE_TIMES = (
    "tomorrow", "next week", "on Saturday", "on Tuesday", "tonight", "after breakfast",
    "at midnight", "next spring", "in an hour",
)  # fmt: skip
_NUMBERS = (
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "fifteen", "twenty", "thirty", "forty", "fifty", "a hundred",
)  # fmt: skip
_ADVERBS = ("slowly", "quickly", "quietly", "carefully", "happily", "suddenly", "finally", "gladly")
_INTERJECTIONS = ("Oh", "Well", "Look", "Wow", "Hey", "Listen")
_PLACE_STATES = ("open", "closed", "busy", "empty", "quiet", "crowded", "far away")
_OPINIONS = ("I think", "I doubt", "She said", "He believes", "They told me", "We know")


def _article(word: str) -> str:
    """``a`` or ``an`` for the word that follows."""
    return "an" if word[0] in "aeiou" else "a"


class _Picker:
    """Draws vocabulary items from a seeded random generator."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def pick(self, options: Sequence[str]) -> str:
        return self.rng.choice(options)

    def adjective(self, for_being: bool) -> str:
        return self.rng.choice(_BEING_ADJECTIVES if for_being else _THING_ADJECTIVES)

    def subject(self) -> str:
        """A name or a definite noun phrase for a person or animal."""
        if self.rng.random() < 0.45:
            return self.pick(_NAMES)
        noun = self.rng.choice(_BEINGS)[0]
        if self.rng.random() < 0.6:
            return f"the {self.adjective(True)} {noun}"
        return f"the {noun}"

    def thing_object(self) -> str:
        """An object phrase: ``the old lamp``, ``an empty box``, ``seven red apples``..."""
        singular, plural = self.rng.choice(_THINGS)
        kind = self.rng.random()
        if kind < 0.4:
            return f"the {self.adjective(False)} {singular}"
        if kind < 0.65:
            adjective = self.adjective(False)
            return f"{_article(adjective)} {adjective} {singular}"
        if kind < 0.85:
            return f"{self.pick(_NUMBERS)} {plural}"
        return f"the {singular}"

    def place_phrase(self, prepositions: Sequence[str]) -> str:
        return f"{self.pick(prepositions)} the {self.pick(_PLACES)}"


def _sentence_templates() -> tuple[Callable[[_Picker], str], ...]:
    """Sentence templates; each draws its words from a picker and returns one sentence."""
    return (
        lambda p: f"{p.subject()} {p.rng.choice(_THING_VERBS)[1]} {p.thing_object()} {p.place_phrase(_LOCATIONS)}.",
        lambda p: f"{p.subject()} {p.rng.choice(_MOTION_VERBS)[1]} {p.place_phrase(_DIRECTIONS)} {p.pick(_PAST_TIMES)}.",
        lambda p: f"Did {p.pick(_NAMES)} {p.rng.choice(_THING_VERBS)[0]} {p.thing_object()} {p.pick(_PAST_TIMES)}?",
        lambda p: f"Why did {p.subject()} {p.rng.choice(_MOTION_VERBS)[0]} {p.place_phrase(_DIRECTIONS)}?",
        lambda p: f"{p.pick(_INTERJECTIONS)}, the {p.rng.choice(_THINGS)[0]} is so {p.adjective(False)}!",
        lambda p: f"We will {p.rng.choice(_MOTION_VERBS)[0]} {p.place_phrase(_DIRECTIONS)} {p.pick(_FUTURE_TIMES)}, {p.pick(_NAMES)}.",
        lambda p: f"{p.pick(_NAMES)} said that the {p.rng.choice(_THINGS)[0]} was {p.adjective(False)}.",
        lambda p: f"Please {p.rng.choice(_THING_VERBS)[0]} {p.thing_object()}, {p.pick(_NAMES)}.",
        lambda p: f"There are {p.pick(_NUMBERS)} {p.adjective(False)} {p.rng.choice(_THINGS)[1]} {p.place_phrase(_LOCATIONS)}.",
        lambda p: f"How many {p.rng.choice(_THINGS)[1]} did {p.pick(_NAMES)} {p.rng.choice(_THING_VERBS)[0]} {p.pick(_PAST_TIMES)}?",
        lambda p: f"I can't believe the {p.rng.choice(_THINGS)[0]} is {p.adjective(False)}!",
        lambda p: f"{p.pick(_NAMES)}'s {p.rng.choice(_THINGS)[0]} is {p.place_phrase(_LOCATIONS)}.",
        lambda p: f"After {p.pick(('lunch', 'dinner', 'breakfast', 'the concert', 'the storm', 'the match'))}, "
        f"{p.subject()} {p.rng.choice(_MOTION_VERBS)[1]} {p.place_phrase(_DIRECTIONS)}.",
        lambda p: _pair_sentence(p),
        lambda p: f"Where did you {p.rng.choice(_THING_VERBS)[0]} the {p.adjective(False)} {p.rng.choice(_THINGS)[0]}?",
        lambda p: f"Never {p.rng.choice(_THING_VERBS)[0]} {p.thing_object()} {p.place_phrase(_LOCATIONS)}!",
        lambda p: f"{p.subject()} {p.pick(_ADVERBS)} {p.rng.choice(_THING_VERBS)[1]} {p.thing_object()}.",
        lambda p: f"Is the {p.pick(_PLACES)} {p.pick(_PLACE_STATES)} {p.pick(_FUTURE_TIMES)}?",
        lambda p: f"If it rains, {p.pick(_NAMES)} will {p.rng.choice(_MOTION_VERBS)[0]} {p.place_phrase(_DIRECTIONS)}.",
        lambda p: f"Who {p.rng.choice(_THING_VERBS)[1]} {p.thing_object()} {p.place_phrase(_LOCATIONS)}?",
        lambda p: f"{p.pick(_NAMES)} and {p.pick(_NAMES)} {p.rng.choice(_MOTION_VERBS)[1]} {p.place_phrase(_DIRECTIONS)} together.",
        lambda p: f"Be careful, the {p.rng.choice(_THINGS)[0]} is very {p.adjective(False)}!",
        lambda p: f"{p.pick(_OPINIONS)} the {p.pick(_PLACES)} is {p.pick(_PLACE_STATES)} {p.pick(_FUTURE_TIMES)}.",
        lambda p: f"Hello {p.pick(_NAMES)}, did you {p.rng.choice(_MOTION_VERBS)[0]} {p.place_phrase(_DIRECTIONS)}?",
    )


def _pair_sentence(p: _Picker) -> str:
    """``The lamp and the clock are dusty.`` with two different things."""
    first, second = p.rng.sample(_THINGS, 2)
    return f"The {first[0]} and the {second[0]} are {p.adjective(False)}."


_TEMPLATES = _sentence_templates()
_ALLOWED_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ,.?!'-")
MIN_WORDS, MAX_WORDS = 4, 12
MIN_CHARS, MAX_CHARS = 20, 80


def _is_acceptable(sentence: str) -> bool:
    words = sentence.split()
    return (
        MIN_WORDS <= len(words) <= MAX_WORDS
        and MIN_CHARS <= len(sentence) <= MAX_CHARS
        and set(sentence) <= _ALLOWED_CHARACTERS
    )


def generate_sentences(n: int, seed: int) -> list[str]:
    """Returns ``n`` distinct English sentences, the same ones for the same ``seed``.

    Sentences have 4-12 words and 20-80 characters of letters, spaces and ``,.?!'-``, and end
    with ``.``, ``?`` or ``!``. The template and vocabulary space holds far more than ten
    thousand sentences, so another seed gives mostly new ones (held-out text).
    """
    if n < 0:
        raise GstTtsError(f"number of sentences must be >= 0, got {n}")
    rng = random.Random(f"gst-tts-demo-sentences-{seed}")
    picker = _Picker(rng)
    sentences: list[str] = []
    seen: set[str] = set()
    attempts_left = 100 * n + 1000  # rejections are rare; this only stops a runaway loop
    while len(sentences) < n:
        if attempts_left == 0:
            raise GstTtsError(f"could not generate {n} distinct sentences")
        attempts_left -= 1
        sentence = rng.choice(_TEMPLATES)(picker)
        sentence = sentence[0].upper() + sentence[1:]
        if sentence in seen or not _is_acceptable(sentence):
            continue
        seen.add(sentence)
        sentences.append(sentence)
    return sentences


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
