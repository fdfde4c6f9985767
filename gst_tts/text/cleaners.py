"""Text normalisation applied before a text is turned into symbols.

``english_cleaners`` runs these steps in this order:

1. currency amounts are spelled out ("$5.50" -> "five dollars, fifty cents");
   this runs first because the ASCII transliteration below would turn "£"
   into "PS" and "€" into "EUR";
2. Unicode is transliterated to ASCII ("café" -> "cafe");
3. the text is lowercased;
4. abbreviations are expanded ("dr." -> "doctor");
5. percentages, ordinals, decades, decimals, years and plain integers are
   spelled out;
6. runs of whitespace become one space and the ends are stripped.

Spelled-out numbers keep the hyphens that ``inflect`` writes
("twenty-three"): "-" is a symbol of the default table and it marks the
compound as one word. The group commas ``inflect`` writes in long numbers
("one thousand, two hundred") are removed, since the model would read them
as pauses. Other punctuation in the text is left as it is.
"""

from __future__ import annotations

import functools
import re
from typing import Callable
import unicodedata

from unidecode import unidecode

from gst_tts.errors import GstTtsError


@functools.cache
def _engine():
    """inflect's engine, made on the first number: importing inflect takes seconds (its type
    checks), which every command would otherwise pay at start-up."""
    import inflect

    return inflect.engine()


_WHITESPACE_RE = re.compile(r"\s+")

# Abbreviations read as the full word; the trailing period is part of the
# abbreviation, so "Dr. Smith" becomes "doctor smith".
_ABBREVIATIONS = [
    (re.compile(rf"\b{abbreviation}\.", re.IGNORECASE), expansion)
    for abbreviation, expansion in [
        ("mrs", "misess"),
        ("mr", "mister"),
        ("drs", "doctors"),
        ("dr", "doctor"),
        ("st", "saint"),
        ("co", "company"),
        ("jr", "junior"),
        ("maj", "major"),
        ("gen", "general"),
        ("rev", "reverend"),
        ("lt", "lieutenant"),
        ("hon", "honorable"),
        ("sgt", "sergeant"),
        ("capt", "captain"),
        ("esq", "esquire"),
        ("ltd", "limited"),
        ("col", "colonel"),
        ("ft", "fort"),
        ("etc", "et cetera"),
    ]
]

# Only ASCII digits are matched: "\d" would also match other scripts' digits,
# which inflect cannot read.
#
# The number patterns must stay linear in the text's length: a pattern that can start at every
# digit and then scan to the end of the run is quadratic ("1" * 100_000 took minutes). So a
# number starts only where a run of digits starts (``(?<![0-9])``), the plain digit run and the
# fraction are possessive (never given back digit by digit), and a grouped number has at most
# 11 comma groups (inflect's range; longer ones read as several numbers), so every failed
# match attempt costs a bounded amount of work beyond the digits it consumed once.
_INTEGER = r"[0-9]{1,3}(?:,[0-9]{3}){1,11}|[0-9]++"  # "1,000" or "1000"
_NUMBER = rf"(?<![0-9])(?:{_INTEGER})(?:\.[0-9]++)?"  # an integer with an optional fraction
# Longer integers than inflect spells out (it names groups up to decillions); they are read
# digit by digit, and never converted to int, which Python refuses past 4,300 digits.
_MAX_SPELLED_DIGITS = 36

# "$5", "£3.50", "€1,000", "$2.5 million"; the scale word is moved before the
# unit so that the amount reads "two point five million dollars".
_CURRENCY_RE = re.compile(
    rf"([$£€])\s?({_NUMBER})(?:\s+(thousand|million|billion|trillion)\b)?",
    re.IGNORECASE,
)
_PERCENT_RE = re.compile(rf"({_NUMBER})\s?%")
_ORDINAL_RE = re.compile(rf"\b({_INTEGER})(st|nd|rd|th)\b")  # \b: starts with its digit run
_DECADE_RE = re.compile(r"\b([0-9]{2}|[0-9]{4})'?s\b")  # "1990s", "80's"
# A digit next to a letter ("mp3", "4x4"); split so "3" reads as a word of its own.
_LETTER_DIGIT_RE = re.compile(r"(?<=[a-z])(?=[0-9])|(?<=[0-9])(?=[a-z])")
_DECIMAL_RE = re.compile(rf"((?<![0-9])(?:{_INTEGER})\.[0-9]++)")
_INTEGER_RE = re.compile(rf"({_INTEGER})")

# (singular, plural) names of a unit and of its hundredth.
_CURRENCIES = {
    "$": (("dollar", "dollars"), ("cent", "cents")),
    "£": (("pound", "pounds"), ("penny", "pence")),
    "€": (("euro", "euros"), ("cent", "cents")),
}

_DIGIT_WORDS = "zero one two three four five six seven eight nine".split()


def collapse_whitespace(text: str) -> str:
    """Turn every run of whitespace into one space and strip both ends."""
    return _WHITESPACE_RE.sub(" ", text).strip()


def to_ascii(text: str) -> str:
    """Transliterate Unicode to the nearest ASCII ("café" -> "cafe")."""
    return unidecode(text)


def expand_abbreviations(text: str) -> str:
    """Replace abbreviations such as "Mr." or "St." by the words they stand for."""
    for pattern, expansion in _ABBREVIATIONS:
        text = pattern.sub(expansion, text)
    return text


def _digits(digits: str) -> str:
    """Read a string of digits one by one ("042" -> "zero four two")."""
    return " ".join(_DIGIT_WORDS[int(d)] for d in digits)


# Cached: inflect takes tens of microseconds a number, and a text of many numbers ("1, 2, 1, 2")
# repeats them; the cache's size bounds its memory.
@functools.lru_cache(maxsize=4096)
def _words(number: int) -> str:
    """Spell out a non-negative integer, without "and" or group commas."""
    import inflect

    try:
        return _engine().number_to_words(number, andword="").replace(",", "")
    except inflect.NumOutOfRangeError:
        # inflect names groups only up to decillions; read longer numbers digit by digit.
        return _digits(str(number))


def _cardinal(digits: str) -> str:
    """Spell out an integer written with or without group commas ("1,000"); one of more than
    ``_MAX_SPELLED_DIGITS`` digits is read digit by digit."""
    digits = digits.replace(",", "")
    if len(digits) > _MAX_SPELLED_DIGITS:
        return _digits(digits)
    return _words(int(digits))


def _decimal(number: str) -> str:
    """Spell out "3.14" as "three point one four"; the fraction is read digit by digit."""
    whole, _, fraction = number.partition(".")
    if not fraction:
        return _cardinal(whole)
    return f"{_cardinal(whole)} point {_digits(fraction)}"


def _plural(count: int, names: tuple[str, str]) -> str:
    """Spell out ``count`` followed by the singular or plural name."""
    return f"{_words(count)} {names[0] if count == 1 else names[1]}"


def _expand_currency(match: re.Match) -> str:
    symbol, amount, scale = match.group(1), match.group(2), match.group(3)
    unit, subunit = _CURRENCIES[symbol]
    if scale:
        # "$2.5 million" is an amount in millions, not dollars and cents.
        return f"{_decimal(amount)} {scale.lower()} {unit[1]}"
    whole, _, fraction = amount.partition(".")
    if len(fraction) > 2 or len(whole.replace(",", "")) > _MAX_SPELLED_DIGITS:
        # "$1.005" is not dollars and cents, nor are 40 digits a count; read the number as written.
        return f"{_decimal(amount)} {unit[1]}"
    units = int(whole.replace(",", ""))
    hundredths = int(fraction.ljust(2, "0")) if fraction else 0
    if units and hundredths:
        return f"{_plural(units, unit)}, {_plural(hundredths, subunit)}"
    if hundredths:
        return _plural(hundredths, subunit)
    return _plural(units, unit)


def expand_currency(text: str) -> str:
    """Spell out amounts of dollars, pounds and euros.

    "$5" -> "five dollars", "$1" -> "one dollar", "£3" -> "three pounds",
    "$5.50" -> "five dollars, fifty cents", "$0.05" -> "five cents".
    """
    return _CURRENCY_RE.sub(_expand_currency, text)


def expand_percent(text: str) -> str:
    """Spell out "50%" as "fifty percent"."""
    return _PERCENT_RE.sub(lambda m: f"{_decimal(m.group(1))} percent", text)


@functools.lru_cache(maxsize=4096)  # cached as _words is: inflect's ordinal takes ~40 µs
def _ordinal(digits: str) -> str:
    """Spell out the ordinal of an integer written with or without group commas ("22" -> "twenty-second")."""
    return _engine().ordinal(_cardinal(digits))


def expand_ordinals(text: str) -> str:
    """Spell out "1st" and "22nd" as "first" and "twenty-second"."""
    return _ORDINAL_RE.sub(lambda m: _ordinal(m.group(1)), text)


@functools.lru_cache(maxsize=4096)  # cached as _words is: inflect's plural_noun takes ~150 µs
def _decade(digits: str) -> str:
    """Spell out a decade of two or four digits ("1990" -> "nineteen nineties")."""
    number = _year(int(digits)) if 1000 <= int(digits) <= 2999 else _words(int(digits))
    return _engine().plural_noun(number)


def expand_decades(text: str) -> str:
    """Spell out "1990s" as "nineteen nineties" and "80's" as "eighties"."""
    return _DECADE_RE.sub(lambda m: _decade(m.group(1)), text)


def separate_digits_from_letters(text: str) -> str:
    """Put a space between digits and letters that touch: "mp3" -> "mp 3"."""
    return _LETTER_DIGIT_RE.sub(" ", text)


def expand_decimals(text: str) -> str:
    """Spell out "3.14" as "three point one four"."""
    return _DECIMAL_RE.sub(lambda m: _decimal(m.group(1)), text)


def _year(year: int) -> str:
    """Read a year from 1000 to 2999 the way it is spoken.

    1999 -> "nineteen ninety-nine", 1905 -> "nineteen oh five",
    1900 -> "nineteen hundred", 2000 -> "two thousand", 2005 -> "two thousand five".
    """
    century, rest = divmod(year, 100)
    if year % 1000 < 10:
        # 2000-2009 (and 1000-1009) are read as plain numbers.
        return _words(year)
    if rest == 0:
        return f"{_words(century)} hundred"
    if rest < 10:
        return f"{_words(century)} oh {_words(rest)}"
    return f"{_words(century)} {_words(rest)}"


def _expand_integer(match: re.Match) -> str:
    digits = match.group(1)
    # Only a bare four-digit number is taken for a year: "1,999" is a count.
    if len(digits) == 4 and 1000 <= int(digits) <= 2999:
        return _year(int(digits))
    return _cardinal(digits)


def expand_integers(text: str) -> str:
    """Spell out integers; four-digit numbers from 1000 to 2999 read as years."""
    return _INTEGER_RE.sub(_expand_integer, text)


def expand_numbers(text: str) -> str:
    """Spell out percentages, ordinals, decades, decimals, years and integers, in that order.

    The order matters: each rule consumes digits that a later, more general
    rule would otherwise read differently ("3.14" must not become "three.fourteen").
    Digits still touching letters after ordinals and decades are split off,
    so "mp3" reads "mp three" rather than "mpthree". Expects lowercase text.
    Currency is handled separately, by ``expand_currency``.
    """
    text = expand_percent(text)
    text = expand_ordinals(text)
    text = expand_decades(text)
    text = separate_digits_from_letters(text)
    text = expand_decimals(text)
    return expand_integers(text)


def basic_cleaners(text: str) -> str:
    """Transliterate to ASCII, lowercase and collapse whitespace; nothing else."""
    return collapse_whitespace(to_ascii(text).lower())


def whitespace_cleaners(text: str) -> str:
    """Compose Unicode (NFC) and collapse whitespace; case, letters and numbers are left to the
    phonemizer, which normalises them by its language's own rules."""
    return collapse_whitespace(unicodedata.normalize("NFC", text))


def english_cleaners(text: str) -> str:
    """Normalise English text: ASCII, lowercase, abbreviations and numbers spelled out."""
    text = expand_currency(text)
    text = to_ascii(text).lower()
    text = expand_abbreviations(text)
    text = expand_numbers(text)
    return collapse_whitespace(text)


CLEANERS: dict[str, Callable[[str], str]] = {
    "english": english_cleaners,
    "basic": basic_cleaners,
    "whitespace": whitespace_cleaners,
}


def get_cleaner(name: str) -> Callable[[str], str]:
    """Return the cleaner called ``name``; raise ``GstTtsError`` for an unknown name."""
    try:
        return CLEANERS[name]
    except (KeyError, TypeError):
        valid = ", ".join(sorted(CLEANERS))
        raise GstTtsError(f"unknown text cleaner {name!r}; valid names: {valid}") from None
