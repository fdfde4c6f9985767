"""Text frontends and the symbol tables they make: characters unchanged, phonemes with ``{…}``
pronunciations, tables built from a corpus, what a checkpoint records."""

from __future__ import annotations

import logging

import pytest

from gst_tts.errors import GstTtsError, TextError
from gst_tts.text import frontends, symbols as symbols_module
from gst_tts.text.frontends import CharacterFrontend, PhonemeFrontend, frontend_from_dict, make_frontend
from gst_tts.text.phonemes import espeak_version, phonemize
from gst_tts.text.symbols import DEFAULT_SYMBOLS, SymbolTable

pytest.importorskip("espeakng_loader")

CORPUS = ["Hello, world!", "Dr. Smith paid $3.50 for 2 apples.", "Where is the station?"]


@pytest.fixture(scope="module")
def table() -> SymbolTable:
    return SymbolTable.for_corpus(PhonemeFrontend("en-us"), CORPUS)


def test_the_character_table_is_what_it_was() -> None:
    table = SymbolTable.for_corpus(make_frontend("characters"), CORPUS)
    assert table.symbols == DEFAULT_SYMBOLS and table.language is None
    assert table.to_dict() == {"symbols": list(DEFAULT_SYMBOLS), "cleaner": "english"}  # old checkpoints compare equal
    assert SymbolTable.from_dict({"symbols": list(DEFAULT_SYMBOLS), "cleaner": "english"}) == SymbolTable()


def test_a_phoneme_table_holds_the_corpus_phonemes_after_the_fixed_symbols(table: SymbolTable) -> None:
    assert table.symbols[:9] == ("_", "~", " ", ",", ".", "!", "?", ";", ":")
    rest = table.symbols[9:]
    assert list(rest) == sorted(rest)
    expected = {c for text in CORPUS for c in phonemize(PhonemeFrontend("en-us").clean(text), "en-us")}
    assert set(table.symbols[2:]) == expected | set(" ,.!?;:")
    assert "θ" in rest and "ˈ" in rest and "ɚ" in rest  # "three"'s th, stress, "doctor"'s r-coloured schwa


def test_english_is_cleaned_before_it_is_phonemized(table: SymbolTable) -> None:
    assert table.clean("Dr. Smith paid $3.50.") == "doctor smith paid three dollars, fifty cents."
    assert table.to_symbols("Dr. Smith") == phonemize("doctor smith", "en-us")
    # Other languages keep case, letters and digits for espeak-ng's own rules.
    german = PhonemeFrontend("de", "english")
    assert german.cleaner == "whitespace" and german.clean(" Um  3 Uhr. ") == "Um 3 Uhr."


def test_encode_reads_the_phonemes(table: SymbolTable) -> None:
    ids = table.encode("Hello, world!")
    assert int(ids[-1]) == table.eos_id
    assert table.decode(ids) == phonemize("hello, world!", "en-us")


def test_a_pronunciation_in_braces_is_taken_as_written(table: SymbolTable) -> None:
    assert table.to_symbols("Hello {wˈɜːld}, hello.") == "həlˈoʊ wˈɜːld, həlˈoʊ."
    assert table.decode(table.encode("{ðə} station")) == "ðə " + phonemize("station", "en-us")
    # The cleaned text keeps the braces, so a chunk of it (a long text is split) reads the same.
    cleaned = table.clean("I paid {ðə} 2 dollars.")
    assert "{ðə}" in cleaned and table.to_symbols(cleaned) == table.to_symbols("I paid {ðə} 2 dollars.")


@pytest.mark.parametrize(
    "text, message",
    [
        ("Hello {wˈɜːldX}.", "unknown phoneme 'X' in {wˈɜːldX}"),
        ("Hello {ʒ}.", "unknown phoneme 'ʒ'"),
        ("Hello {world.", "unmatched '{'"),
        ("Hello world}.", "unmatched '}'"),
        ("{}", "empty"),
    ],
)
def test_a_bad_pronunciation_is_one_line_naming_it(table: SymbolTable, text: str, message: str) -> None:
    with pytest.raises(TextError) as caught:
        table.encode(text)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_phoneme_table_round_trips_with_its_language_and_espeak_version(table: SymbolTable) -> None:
    d = table.to_dict()
    assert d["frontend"] == "phonemes" and d["language"] == "en-us" and d["espeak_version"] == espeak_version()
    again = SymbolTable.from_dict(d)
    assert again == table and again.language == "en-us"
    assert again.encode("Hello, world!").tolist() == table.encode("Hello, world!").tolist()
    assert again != SymbolTable.from_dict({**d, "language": "en-gb"})


def test_another_espeak_version_is_one_warning(table: SymbolTable, caplog, monkeypatch) -> None:
    monkeypatch.setattr(symbols_module, "_warned_versions", set())
    old = {**table.to_dict(), "espeak_version": "1.48.0"}
    with caplog.at_level(logging.WARNING, logger="gst_tts.text.symbols"):
        SymbolTable.from_dict(old)
        SymbolTable.from_dict(old)
        SymbolTable.from_dict(table.to_dict())
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "1.48.0" in warnings[0] and espeak_version() in warnings[0]


def test_frontend_names_and_languages_are_checked() -> None:
    with pytest.raises(GstTtsError, match="unknown text frontend 'letters'"):
        make_frontend("letters")
    with pytest.raises(GstTtsError, match="no language 'xx'"):
        PhonemeFrontend("xx").check()
    with pytest.raises(GstTtsError, match="unknown text frontend"):
        frontend_from_dict({"cleaner": "english", "frontend": "morphemes"})
    assert isinstance(frontend_from_dict({"cleaner": "basic"}), CharacterFrontend)


def test_a_frontend_remembers_a_bounded_number_of_texts(monkeypatch) -> None:
    monkeypatch.setattr(frontends, "MAX_REMEMBERED", 2)
    frontend = PhonemeFrontend("en-us")
    for word in ("one", "two", "three", "four"):
        frontend.to_symbols(word)
    assert len(frontend.memo) == 2
    assert frontend.to_symbols("four") == phonemize("four", "en-us")  # still phonemized, only not kept
