"""The character symbol table: turns cleaned text into ids for the encoder and back.

Entry 0 of a table is the padding symbol and entry 1 the end-of-sequence
symbol; every other entry is one character. The padding and end-of-sequence
characters themselves are never read from a text, so a "_" or "~" in the input
is dropped like any other character that is not in the table.
"""

from __future__ import annotations

import string
from typing import Any, Iterable, Sequence
import warnings

import torch

from gst_tts.errors import GstTtsError, TextError
from gst_tts.text.cleaners import get_cleaner

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
    """Maps characters to integer ids, after cleaning the text with a named cleaner.

    ``symbols[0]`` is the padding symbol and ``symbols[1]`` the end-of-sequence
    symbol; the rest are the characters the model can read. ``cleaner`` is a
    name from ``gst_tts.text.cleaners.CLEANERS``.
    """

    def __init__(self, symbols: Sequence[str] | None = None, cleaner: str = "english") -> None:
        symbols = DEFAULT_SYMBOLS if symbols is None else tuple(symbols)
        _check_symbols(symbols)
        self._symbols: tuple[str, ...] = symbols
        self._cleaner_name = cleaner
        self._cleaner = get_cleaner(cleaner)  # fail now on an unknown name, not at first encode
        # Pad and eos are left out: they are added by the model, never read from text.
        self._ids = {symbol: i for i, symbol in enumerate(symbols) if i > 1}

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
        return self._cleaner_name

    def __len__(self) -> int:
        return len(self._symbols)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SymbolTable):
            return NotImplemented
        return self._symbols == other._symbols and self._cleaner_name == other._cleaner_name

    def __hash__(self) -> int:
        return hash((self._symbols, self._cleaner_name))

    def __repr__(self) -> str:
        return f"SymbolTable({len(self)} symbols, cleaner={self._cleaner_name!r})"

    def clean(self, text: str) -> str:
        """Normalise ``text`` with this table's cleaner; raises ``TextError`` for a non-string.

        The cleaners' work is linear in the text's length (``tests/text/test_hostile_text.py``
        cleans 100,000-character adversarial inputs), so bounding a text's length bounds it.
        """
        if not isinstance(text, str):
            raise TextError(f"text must be a string, got {type(text).__name__}")
        return self._cleaner(text)

    def encode(self, text: str) -> torch.Tensor:
        """Clean ``text`` and return its ids followed by ``eos_id``, a LongTensor of shape (n,).

        Characters that are not in the table are dropped, with one
        ``DroppedCharacterWarning`` naming them (the first ten). Raises ``TextError`` when
        the cleaned text is empty or keeps no symbol other than spaces.
        """
        cleaned = self.clean(text)
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
                stacklevel=2,
            )
        ids.append(self.eos_id)
        return torch.tensor(ids, dtype=torch.long)

    def decode(self, ids: Iterable[int] | torch.Tensor) -> str:
        """Turn ids back into text, skipping padding and end-of-sequence ids."""
        if isinstance(ids, torch.Tensor):
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
        ``torch.load(..., weights_only=True)``.
        """
        return {"symbols": list(self._symbols), "cleaner": self._cleaner_name}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SymbolTable:
        """Rebuild a table saved with ``to_dict``; raises ``GstTtsError`` for a malformed dict."""
        if not isinstance(d, dict) or "symbols" not in d or "cleaner" not in d:
            raise GstTtsError("symbol table dict needs the keys 'symbols' and 'cleaner'")
        return cls(d["symbols"], cleaner=d["cleaner"])


def _check_symbols(symbols: tuple[str, ...]) -> None:
    """Raise ``GstTtsError`` unless ``symbols`` is pad, eos and at least one distinct character."""
    if len(symbols) < 3:
        raise GstTtsError(
            f"a symbol table needs pad, eos and at least one other symbol, got {len(symbols)}"
        )
    bad = [s for s in symbols if not isinstance(s, str) or len(s) != 1]
    if bad:
        raise GstTtsError(f"symbols must be single characters, got {', '.join(map(repr, bad))}")
    repeated = sorted({s for s in symbols if symbols.count(s) > 1})
    if repeated:
        raise GstTtsError(f"symbols appear more than once: {', '.join(map(repr, repeated))}")
