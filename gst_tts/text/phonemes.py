"""Text → IPA phonemes with espeak-ng's own phonemizer (``espeak_TextToPhonemes``).

The output keeps what the model needs to hear: stress marks (ˈ ˌ), length marks, one space
between words, and the clause punctuation ``, . ! ? ; :`` as symbols of their own, so pauses
survive. espeak-ng drops punctuation from its phonemes, so the text is cut at punctuation that
ends a clause (followed by a space or the end: "3.5" stays one number) and each piece is
phonemized on its own.

espeak-ng keeps global state, so one lock serialises every call in the process, and the
phonemizer has its own private copy of the library (:mod:`gst_tts.text.espeak`), loaded once per
process and never shared with the demo's synthesizer. The same text and voice give the same
phonemes whatever was phonemized before (tests/text/test_phonemes.py).
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import os
import re
import threading
import unicodedata

from gst_tts.errors import GstTtsError, TextError
from gst_tts.text import espeak as library

#: Changes whenever this module would phonemize a text differently; part of the phoneme cache's key.
PHONEMIZER_REVISION = 1

#: Punctuation kept as symbols: where espeak-ng ends a clause, and a pause in speech.
CLAUSE_PUNCTUATION = ",.!?;:"

# Values from espeak-ng's speak_lib.h.
_CHARS_UTF8 = 1
_PHONEMES_IPA = 0x02

# Clause punctuation followed by whitespace or the end of the text; the run is kept whole ("?!").
_CLAUSE_END = re.compile(rf"([{re.escape(CLAUSE_PUNCTUATION)}]+)(?=\s|$)")
# espeak-ng marks a switch to another language's rules (an English word in German text) with
# "(en)" and back with "(de)": markers, not phonemes.
_LANGUAGE_SWITCH = re.compile(r"\([a-z]{2,3}(?:-[a-z0-9-]+)?\)")
_SPACES = re.compile(r"\s+")
# espeak-ng's voice names: letters, digits and "-" ("en-us", "de", "cmn-latn-pinyin").
_VOICE_NAME = re.compile(r"^[a-z]{2,3}(?:-[a-z0-9]+)*$")


class _Voice(ctypes.Structure):
    """espeak-ng's ``espeak_VOICE``: the properties :meth:`EspeakPhonemizer._set_voice` selects by."""

    _fields_ = [
        ("name", ctypes.c_char_p),
        ("languages", ctypes.c_char_p),
        ("identifier", ctypes.c_char_p),
        ("gender", ctypes.c_ubyte),
        ("age", ctypes.c_ubyte),
        ("variant", ctypes.c_ubyte),
        ("xx1", ctypes.c_ubyte),
        ("score", ctypes.c_int),
        ("spare", ctypes.c_void_p),
    ]


class EspeakPhonemizer:
    """One process-wide espeak-ng instance that turns text into IPA phonemes; use :func:`phonemizer`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lib: ctypes.CDLL | None = None
        self._pid = 0
        self._voice: str | None = None
        self._version = ""

    def _library(self) -> ctypes.CDLL:
        """The loaded library; the caller holds ``_lock``. A forked child loads its own."""
        if self._lib is None or self._pid != os.getpid():
            lib, _ = library.load_library(library.private_library("phonemizer"), library.AUDIO_OUTPUT_RETRIEVAL)
            lib.espeak_TextToPhonemes.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_int]
            lib.espeak_TextToPhonemes.restype = ctypes.c_char_p
            lib.espeak_SetVoiceByProperties.argtypes = [ctypes.POINTER(_Voice)]
            self._lib, self._pid, self._voice = lib, os.getpid(), None
            self._version = library.library_version(lib)
        return self._lib

    @property
    def version(self) -> str:
        """The espeak-ng version that phonemizes (``"1.52.0"``); loads the library if needed."""
        with self._lock:
            self._library()
            return self._version

    def check_language(self, language: str) -> None:
        """Raise ``GstTtsError`` unless espeak-ng has a voice called ``language``."""
        with self._lock:
            self._set_voice(language)

    def _set_voice(self, language: str) -> ctypes.CDLL:
        lib = self._library()
        if self._voice != language:
            # A voice's file name ("en-us", "de") or, as the espeak-ng command does, its language
            # ("en-gb", whose voice is called "en").
            if (
                not isinstance(language, str)
                or not _VOICE_NAME.match(language)
                or (
                    lib.espeak_SetVoiceByName(language.encode("ascii")) != library.EE_OK
                    and lib.espeak_SetVoiceByProperties(ctypes.byref(_Voice(languages=language.encode("ascii"))))
                    != library.EE_OK
                )
            ):
                self._voice = None
                raise GstTtsError(
                    f"espeak-ng has no language {language!r}; give an espeak-ng voice such as "
                    "en-us, en-gb, de, es, fr (`gst-tts phonemize --list-languages` lists them)"
                )
            self._voice = language
        return lib

    def phonemize(self, text: str, language: str) -> str:
        """IPA phonemes of ``text`` read in ``language`` (an espeak-ng voice: ``"en-us"``, ``"de"``).

        Words are separated by one space; clause punctuation stays, attached to the word before it
        (``"həlˈoʊ, wˈɜːld."``). Other punctuation (quotes, brackets, dashes) is dropped, as
        espeak-ng drops it. An empty string when ``text`` holds neither words nor clause
        punctuation.

        Raises:
            GstTtsError: ``language`` is not an espeak-ng voice, or the library cannot be loaded.
        """
        text = unicodedata.normalize("NFC", text)
        out: list[str] = []
        pieces = _CLAUSE_END.split(text)  # text, punctuation, text, punctuation, ..., text
        with self._lock:
            lib = self._set_voice(language)
            for i, piece in enumerate(pieces):
                if i % 2:  # punctuation: after the phonemes of the piece before it, if any
                    if out:
                        out[-1] += piece
                    else:
                        out.append(piece)
                    continue
                phonemes = self._clauses(lib, piece)
                if phonemes:
                    out.append(phonemes)
        return " ".join(out)

    @staticmethod
    def _clauses(lib: ctypes.CDLL, text: str) -> str:
        """espeak-ng's phonemes of ``text``, clause after clause until the text is used up."""
        if not text.strip():
            return ""
        buffer = ctypes.create_string_buffer(text.encode("utf-8"))
        pointer = ctypes.c_void_p(ctypes.addressof(buffer))
        clauses = []
        while pointer.value:
            result = lib.espeak_TextToPhonemes(ctypes.byref(pointer), _CHARS_UTF8, _PHONEMES_IPA)
            if result:
                clauses.append(result.decode("utf-8", "replace"))
        phonemes = _LANGUAGE_SWITCH.sub("", " ".join(clauses))
        return _SPACES.sub(" ", phonemes).strip()


@functools.lru_cache(maxsize=1)
def phonemizer() -> EspeakPhonemizer:
    """The process's phonemizer (loaded on first use)."""
    return EspeakPhonemizer()


def phonemize(text: str, language: str) -> str:
    """:meth:`EspeakPhonemizer.phonemize` with the process's phonemizer."""
    if not isinstance(text, str):
        raise TextError(f"text must be a string, got {type(text).__name__}")
    return phonemizer().phonemize(text, language)


def espeak_version() -> str:
    """The installed espeak-ng's version, as the phonemizer reports it."""
    return phonemizer().version


def list_languages() -> list[tuple[str, str]]:
    """espeak-ng's voices as ``(language code, name)`` (``("en-us", "English (America)")``), sorted
    by code: each code is a ``language`` that :func:`phonemize` takes.

    Raises:
        GstTtsError: the library cannot be loaded.
    """
    phonemes = phonemizer()
    found: dict[str, str] = {}
    with phonemes._lock:  # the voice list is espeak-ng's static memory, rewritten by the next listing
        lib = phonemes._library()
        lib.espeak_ListVoices.argtypes = [ctypes.c_void_p]
        lib.espeak_ListVoices.restype = ctypes.POINTER(ctypes.POINTER(_Voice))
        voices = lib.espeak_ListVoices(None)  # NULL: every voice but the variants, NULL-terminated
        for i in itertools.count():
            if not voices[i]:
                break
            voice = voices[i].contents
            # ``languages`` is (priority byte, name, NUL) pairs; the first name is the voice's own.
            code = (voice.languages or b"")[1:].decode("ascii", "replace")
            if _VOICE_NAME.match(code):  # the few others ("piqd", "chr-US-Qaaa-x-west") phonemize refuses
                found.setdefault(code, (voice.name or b"").decode("utf-8", "replace"))
    return sorted(found.items())
