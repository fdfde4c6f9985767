"""Text frontends: what turns a text into the string of symbols the model reads.

One small interface, :class:`TextFrontend`, and two kinds (``data.text.frontend``):

- ``characters``: the cleaned text itself (``data.cleaner``; English).
- ``phonemes``: IPA phonemes from espeak-ng (:mod:`gst_tts.text.phonemes`) in ``data.text.language``.
  For English voices the text is cleaned first (numbers, abbreviations, currency spelled out by
  ``data.cleaner``); other languages are left to espeak-ng's own normalisation (cleaner
  ``whitespace``). Text inside ``{…}`` is taken as phonemes as written, for names and jargon:
  ``"I met {ɡˈʊðrʌn} today."``.

A frontend never builds ids: :class:`gst_tts.text.symbols.SymbolTable` maps its symbols.
"""

from __future__ import annotations

import re
from typing import Any, Iterable
import unicodedata

from gst_tts.errors import GstTtsError, TextError
from gst_tts.text.cleaners import get_cleaner
from gst_tts.text.phonemes import CLAUSE_PUNCTUATION, espeak_version, phonemize, phonemizer

FRONTENDS = ("characters", "phonemes")
DEFAULT_LANGUAGE = "en-us"
#: Most text pieces a phoneme frontend remembers the phonemes of (a corpus's, at most; LJSpeech has 13,100).
MAX_REMEMBERED = 200_000

_OVERRIDE = re.compile(r"\{([^{}]*)\}")
_SPACES = re.compile(r"\s+")
_BEFORE_PUNCTUATION = re.compile(rf" ([{re.escape(CLAUSE_PUNCTUATION)}])")


class TextFrontend:
    """Text → symbol string. ``clean`` gives the normalised words (what a person reads, and what
    prosody measures count syllables in); ``segments`` the symbols, in pieces that tell which
    came from a ``{…}`` override (checked strictly by the symbol table: no symbol is dropped
    from an override)."""

    name: str = ""

    def clean(self, text: str) -> str:
        raise NotImplementedError

    def segments(self, text: str) -> list[tuple[str, bool]]:
        """``[(symbols, from an override)]`` in reading order; joined they are :meth:`to_symbols`."""
        raise NotImplementedError

    def to_symbols(self, text: str) -> str:
        """The symbols the model reads for ``text``, as one string."""
        return "".join(symbols for symbols, _ in self.segments(text))

    def to_dict(self) -> dict[str, Any]:
        """What a checkpoint records of the frontend (besides the symbols); plain types only."""
        raise NotImplementedError


class CharacterFrontend(TextFrontend):
    """The cleaned text's characters are the symbols. ``cleaner``: a name from
    ``gst_tts.text.cleaners.CLEANERS``."""

    name = "characters"

    def __init__(self, cleaner: str = "english") -> None:
        self.cleaner = cleaner
        self._clean = get_cleaner(cleaner)  # fail now on an unknown name, not at first encode

    def clean(self, text: str) -> str:
        return self._clean(text)

    def segments(self, text: str) -> list[tuple[str, bool]]:
        return [(self._clean(text), False)]

    def to_dict(self) -> dict[str, Any]:
        return {"cleaner": self.cleaner}

    def __repr__(self) -> str:
        return f"CharacterFrontend(cleaner={self.cleaner!r})"


class PhonemeFrontend(TextFrontend):
    """espeak-ng's IPA phonemes of the text, ``{…}`` overrides taken as written.

    Args:
        language: an espeak-ng voice (``"en-us"``, ``"en-gb"``, ``"de"``, ``"es"``, ``"fr"``, …).
            Default ``"en-us"``.
        cleaner: the normalisation for English voices (a name from ``CLEANERS``); other
            languages always use ``"whitespace"``, leaving numbers and abbreviations to
            espeak-ng. Default ``"english"``.
        espeak_version: the espeak-ng version the phonemes were made with (a checkpoint's);
            None: the installed one. Default None.
    """

    name = "phonemes"

    def __init__(
        self, language: str = DEFAULT_LANGUAGE, cleaner: str = "english", *, espeak_version: str | None = None
    ) -> None:
        if not isinstance(language, str) or not language:
            raise GstTtsError(f"data.text.language must be an espeak-ng voice such as en-us or de, got {language!r}")
        self.language = language
        self.cleaner = cleaner if is_english(language) else "whitespace"
        self._clean = get_cleaner(self.cleaner)
        self._recorded_version = espeak_version
        self._memo: dict[str, str] = {}  # cleaned piece -> phonemes (PhonemeCache fills and saves it)

    @property
    def espeak_version(self) -> str:
        """The recorded espeak-ng version, or the installed one for a new frontend."""
        if self._recorded_version is None:
            self._recorded_version = espeak_version()
        return self._recorded_version

    @property
    def memo(self) -> dict[str, str]:
        """Phonemes made so far, by cleaned text piece: what a cache stores."""
        return self._memo

    def remember(self, phonemes: dict[str, str]) -> None:
        """Take phonemes of earlier runs (a cache's) instead of asking espeak-ng again."""
        self._memo.update(phonemes)

    def check(self) -> None:
        """Raise ``GstTtsError`` unless espeak-ng loads and has this language."""
        phonemizer().check_language(self.language)

    def clean(self, text: str) -> str:
        """The cleaned words with each override kept as ``{phonemes}``, so that a piece of the
        result (a chunk of a long text) reads as the same symbols."""
        parts = [
            f"{{{_normalise_override(piece)}}}" if override else self._clean(piece)
            for piece, override in _split_overrides(text)
        ]
        return _BEFORE_PUNCTUATION.sub(r"\1", " ".join(p for p in parts if p))

    def segments(self, text: str) -> list[tuple[str, bool]]:
        out: list[tuple[str, bool]] = []
        for piece, override in _split_overrides(text):
            symbols = _normalise_override(piece) if override else self._phonemes(self._clean(piece))
            if not symbols:
                continue
            # Words stay apart; punctuation stays on the word before it ("{ɡˈʊðrʌn},").
            if out and symbols[0] not in _ATTACHED:
                out.append((" ", False))
            out.append((symbols, override))
        return out

    def _phonemes(self, cleaned: str) -> str:
        if not cleaned.strip():
            return ""
        phonemes = self._memo.get(cleaned)
        if phonemes is None:
            phonemes = phonemize(cleaned, self.language)
            if len(self._memo) < MAX_REMEMBERED:  # a server meets endless new texts: stay bounded
                self._memo[cleaned] = phonemes
        return phonemes

    def to_dict(self) -> dict[str, Any]:
        return {
            "cleaner": self.cleaner,
            "frontend": self.name,
            "language": self.language,
            "espeak_version": self.espeak_version,
        }

    def __repr__(self) -> str:
        return f"PhonemeFrontend(language={self.language!r})"


_ATTACHED = set(CLAUSE_PUNCTUATION)  # symbols that follow the word before them without a space


def _normalise_override(phonemes: str) -> str:
    return _SPACES.sub(" ", unicodedata.normalize("NFC", phonemes)).strip()


def is_english(language: str) -> bool:
    """Whether an espeak-ng voice reads English (``en``, ``en-us``, ``en-gb-scotland``, …)."""
    return language == "en" or language.startswith("en-")


def _split_overrides(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into ``(piece, is an override)``; the braces are dropped. A ``{`` or ``}``
    without its partner is a ``TextError``."""
    if not isinstance(text, str):
        raise TextError(f"text must be a string, got {type(text).__name__}")
    pieces, position = [], 0
    for match in _OVERRIDE.finditer(text):
        pieces.append((text[position : match.start()], False))
        pieces.append((match.group(1), True))
        position = match.end()
    pieces.append((text[position:], False))
    for piece, override in pieces:
        if not override and ("{" in piece or "}" in piece):
            brace = "{" if "{" in piece else "}"
            raise TextError(f"unmatched {brace!r} in {_quote(text)}: a pronunciation is written {{phonemes}}")
    return pieces


def _quote(text: str, most: int = 40) -> str:
    return repr(text if len(text) <= most else text[:most] + "…")


def make_frontend(frontend: str = "characters", language: str | None = None, cleaner: str = "english") -> TextFrontend:
    """The frontend called ``frontend`` (``data.text.frontend``), with ``data.text.language`` and
    ``data.cleaner``; a one-line ``GstTtsError`` for an unknown name."""
    if frontend == "characters":
        return CharacterFrontend(cleaner)
    if frontend == "phonemes":
        return PhonemeFrontend(language or DEFAULT_LANGUAGE, cleaner)
    raise GstTtsError(f"unknown text frontend {frontend!r}; valid: {', '.join(FRONTENDS)} (data.text.frontend)")


def frontend_from_dict(d: dict[str, Any]) -> TextFrontend:
    """The frontend a checkpoint's symbol table recorded; one without ``frontend`` is characters."""
    kind = d.get("frontend", "characters")
    if kind == "characters":
        return CharacterFrontend(d["cleaner"])
    if kind == "phonemes":
        version = d.get("espeak_version")
        return PhonemeFrontend(
            d.get("language") or DEFAULT_LANGUAGE, d["cleaner"], espeak_version=str(version) if version else "unknown"
        )
    raise GstTtsError(f"unknown text frontend {kind!r} in the symbol table; valid: {', '.join(FRONTENDS)}")


def reads_alike(a: TextFrontend, b: TextFrontend) -> bool:
    """Whether two frontends turn text into the same symbols: same kind, language and cleaner (the
    espeak-ng version aside: a table made with another one still loads, with a warning)."""

    def key(f: TextFrontend) -> tuple:
        return f.name, getattr(f, "language", None), f.cleaner

    return key(a) == key(b)


def describe_frontend(frontend: TextFrontend) -> str:
    """``"phonemes in de"`` or ``"characters (cleaner english)"``, for messages."""
    language = getattr(frontend, "language", None)
    return f"phonemes in {language}" if language else f"{frontend.name} (cleaner {frontend.cleaner})"


def symbols_of(strings: Iterable[str]) -> set[str]:
    """Every symbol (code point) in ``strings``."""
    return {char for s in strings for char in s}
