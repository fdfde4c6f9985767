"""The symbol table: turns a text, through its frontend, into ids for the encoder and back.

Entry 0 of a table is the padding symbol and entry 1 the end-of-sequence
symbol; every other entry is one character (a letter, or one code point of IPA
for the phoneme frontend). The padding and end-of-sequence characters themselves
are never read from a text, so a "_" or "~" in the input is dropped like any
other character that is not in the table.

The character table is fixed (:data:`DEFAULT_SYMBOLS`); a phoneme table is built from the
corpus (:meth:`SymbolTable.for_corpus`) and saved in the checkpoint with its frontend,
language and espeak-ng version.
"""

from __future__ import annotations

import string
import logging
from typing import TYPE_CHECKING, Any, Iterable, Sequence
import warnings

from gst_tts.errors import GstTtsError, TextError
from gst_tts.text.frontends import CharacterFrontend, PhonemeFrontend, TextFrontend, frontend_from_dict, symbols_of
from gst_tts.text.phonemes import CLAUSE_PUNCTUATION, espeak_version

if TYPE_CHECKING:
    import numpy as np
    import torch

log = logging.getLogger(__name__)

PAD = "_"
EOS = "~"
PUNCTUATION = "!'\"(),-.:;? "
LETTERS = string.ascii_lowercase

DEFAULT_SYMBOLS: tuple[str, ...] = (PAD, EOS, *PUNCTUATION, *LETTERS)

# How much of a text an error or warning message quotes.
_QUOTE_CHARS = 40


class DroppedCharacterWarning(UserWarning):
    """Warned when ``SymbolTable.encode`` drops characters that are not in the table."""


def quote_text(text: str) -> str:
    """Quote a text for a one-line message: truncated, newlines escaped by ``repr``."""
    if len(text) > _QUOTE_CHARS:
        text = text[:_QUOTE_CHARS] + "…"
    return repr(text)


def _listing(chars: Iterable[str], most: int = 10) -> str:
    """The first ``most`` characters, each ``repr``-quoted (so a line separator cannot break the
    line), then how many more: a text of a custom table may drop thousands of distinct ones."""
    chars = list(chars)
    shown = ", ".join(repr(c) for c in chars[:most])
    return shown + (f" and {len(chars) - most} more" if len(chars) > most else "")


class SymbolTable:
    """Maps the symbols of a text (its frontend's output) to integer ids.

    ``symbols[0]`` is the padding symbol and ``symbols[1]`` the end-of-sequence
    symbol; the rest are the characters the model can read. ``cleaner`` is a
    name from ``gst_tts.text.cleaners.CLEANERS``, for the default ``characters``
    frontend; ``frontend`` (:mod:`gst_tts.text.frontends`) replaces both.
    """

    def __init__(
        self, symbols: Sequence[str] | None = None, cleaner: str = "english", *, frontend: TextFrontend | None = None
    ) -> None:
        symbols = DEFAULT_SYMBOLS if symbols is None else tuple(symbols)
        _check_symbols(symbols)
        self._symbols: tuple[str, ...] = symbols
        # The cleaner's name is checked now, not at first encode.
        self._frontend = frontend if frontend is not None else CharacterFrontend(cleaner)
        # Pad and eos are left out: they are added by the model, never read from text.
        self._ids = {symbol: i for i, symbol in enumerate(symbols) if i > 1}

    @classmethod
    def for_corpus(cls, frontend: TextFrontend, texts: Iterable[str]) -> SymbolTable:
        """The table for a corpus read with ``frontend``: the default characters for the
        ``characters`` frontend; for ``phonemes``, space and clause punctuation, then every
        phoneme symbol of ``texts`` (through the frontend, ``{…}`` overrides included), sorted.

        Raises ``TextError`` or ``GstTtsError`` as the frontend does (an unmatched brace, an
        unknown language).
        """
        if not isinstance(frontend, PhonemeFrontend):
            return cls(frontend=frontend)
        fixed = (" ", *CLAUSE_PUNCTUATION)
        found = symbols_of(frontend.to_symbols(text) for text in texts) - {PAD, EOS, *fixed}
        return cls((PAD, EOS, *fixed, *sorted(found)), frontend=frontend)

    @property
    def pad_id(self) -> int:
        """Id of the padding symbol (always 0)."""
        return 0

    @property
    def eos_id(self) -> int:
        """Id of the end-of-sequence symbol (always 1)."""
        return 1

    @property
    def symbols(self) -> tuple[str, ...]:
        """All symbols, in id order."""
        return self._symbols

    @property
    def cleaner(self) -> str:
        """Name of the cleaner applied by ``clean`` and ``encode``."""
        return self._frontend.cleaner

    @property
    def frontend(self) -> TextFrontend:
        """What turns a text into this table's symbols."""
        return self._frontend

    @property
    def language(self) -> str | None:
        """The phoneme frontend's espeak-ng language; None for characters."""
        return getattr(self._frontend, "language", None)

    def __len__(self) -> int:
        return len(self._symbols)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SymbolTable):
            return NotImplemented
        return self._symbols == other._symbols and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self._symbols, self.cleaner, self.language))

    def __repr__(self) -> str:
        language = f", language={self.language!r}" if self.language else ""
        return f"SymbolTable({len(self)} symbols, {self._frontend.name}, cleaner={self.cleaner!r}{language})"

    def clean(self, text: str) -> str:
        """Normalise ``text`` with this table's cleaner (the words, not yet phonemes; ``{…}``
        overrides kept as written); raises ``TextError`` for a non-string.

        The cleaners' work is linear in the text's length (``tests/text/test_hostile_text.py``
        cleans 100,000-character adversarial inputs), so bounding a text's length bounds it.
        """
        if not isinstance(text, str):
            raise TextError(f"text must be a string, got {type(text).__name__}")
        return self._frontend.clean(text)

    def to_symbols(self, text: str) -> str:
        """What the model reads for ``text``: the cleaned characters, or the phonemes."""
        if not isinstance(text, str):
            raise TextError(f"text must be a string, got {type(text).__name__}")
        return self._frontend.to_symbols(text)

    def encode(self, text: str) -> "torch.Tensor":
        """Turn ``text`` into its ids followed by ``eos_id``, a LongTensor of shape (n,)
        (:meth:`encode_ids` as a tensor).
        """
        import torch  # here, not at the top: the torch-free runtime encodes with encode_ids

        return torch.tensor(self._encode(text, stacklevel=3), dtype=torch.long)

    def encode_ids(self, text: str) -> list[int]:
        """Turn ``text`` into its ids followed by ``eos_id``, a list of n ints.

        Characters that are not in the table are dropped, with one
        ``DroppedCharacterWarning`` naming them (the first ten); in a ``{…}`` pronunciation
        they are a ``TextError`` naming the phoneme. Raises ``TextError`` when the cleaned
        text is empty or keeps no symbol other than spaces.
        """
        return self._encode(text, stacklevel=3)

    def _encode(self, text: str, *, stacklevel: int) -> list[int]:
        """:meth:`encode_ids`; its warning points ``stacklevel`` frames up (at the caller of the public method)."""
        if not isinstance(text, str):
            raise TextError(f"text must be a string, got {type(text).__name__}")
        segments = self._frontend.segments(text)
        for symbols, override in segments:
            unknown = [c for c in symbols if c not in self._ids] if override else []
            if unknown:
                raise TextError(
                    f"unknown phoneme {unknown[0]!r} in {{{symbols}}}: this model reads "
                    f"{_listing(s for s in self._symbols[2:] if not s.isspace())}"
                )
        cleaned = "".join(symbols for symbols, _ in segments)
        if not cleaned.strip():
            raise TextError(f"text is empty after cleaning: {quote_text(text)}")
        ids = [self._ids[char] for char in cleaned if char in self._ids]
        # dict.fromkeys keeps the order of first appearance and drops repeats.
        dropped = _listing(dict.fromkeys(c for c in cleaned if c not in self._ids))
        if all(self._symbols[i].isspace() for i in ids):
            detail = f" (dropped {dropped})" if dropped else ""
            raise TextError(f"text has no symbol of the symbol table{detail}: {quote_text(text)}")
        if dropped:
            warnings.warn(
                f"dropped characters not in the symbol table: {dropped} in {quote_text(text)}",
                DroppedCharacterWarning,
                stacklevel=stacklevel,
            )
        ids.append(self.eos_id)
        return ids

    def decode(self, ids: Iterable[int] | "torch.Tensor" | "np.ndarray") -> str:
        """Turn ids back into text, skipping padding and end-of-sequence ids."""
        if hasattr(ids, "flatten") and hasattr(ids, "tolist"):  # a tensor or an array
            ids = ids.flatten().tolist()
        chars = []
        for i in ids:
            i = int(i)
            if not 0 <= i < len(self._symbols):
                raise ValueError(f"symbol id {i} is out of range for a table of {len(self)} symbols")
            if i not in (self.pad_id, self.eos_id):
                chars.append(self._symbols[i])
        return "".join(chars)

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (a list and strings) that ``from_dict`` turns back into this table.

        It holds no custom class, so a checkpoint that stores it loads with
        ``torch.load(..., weights_only=True)``. A character table's dict is ``symbols`` and
        ``cleaner``, as before frontends existed; a phoneme table's adds ``frontend``,
        ``language`` and ``espeak_version``.
        """
        return {"symbols": list(self._symbols), **self._frontend.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SymbolTable:
        """Rebuild a table saved with ``to_dict``; raises ``GstTtsError`` for a malformed dict.

        A phoneme table made with another espeak-ng version than the installed one loads with
        one warning: its pronunciations may differ from what the model learnt.
        """
        if not isinstance(d, dict) or "symbols" not in d or "cleaner" not in d:
            raise GstTtsError("symbol table dict needs the keys 'symbols' and 'cleaner'")
        table = cls(d["symbols"], frontend=frontend_from_dict(d))
        if isinstance(table.frontend, PhonemeFrontend):
            _warn_on_other_espeak(table.frontend.espeak_version)
        return table


_warned_versions: set[tuple[str, str]] = set()


def _warn_on_other_espeak(recorded: str) -> None:
    """One warning per process when the espeak-ng that phonemizes now is not the recorded one."""
    installed = espeak_version()
    if installed != recorded and (recorded, installed) not in _warned_versions:
        _warned_versions.add((recorded, installed))
        log.warning(
            "this model's phonemes were made with espeak-ng %s and %s is installed: "
            "some words may be pronounced differently",
            recorded,
            installed,
        )


def _check_symbols(symbols: tuple[str, ...]) -> None:
    """Raise ``GstTtsError`` unless ``symbols`` is pad, eos and at least one distinct character."""
    if len(symbols) < 3:
        raise GstTtsError(f"a symbol table needs pad, eos and at least one other symbol, got {len(symbols)}")
    bad = [s for s in symbols if not isinstance(s, str) or len(s) != 1]
    if bad:
        raise GstTtsError(f"symbols must be single characters, got {', '.join(map(repr, bad))}")
    repeated = sorted({s for s in symbols if symbols.count(s) > 1})
    if repeated:
        raise GstTtsError(f"symbols appear more than once: {', '.join(map(repr, repeated))}")
