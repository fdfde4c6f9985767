"""espeak-ng's phonemizer as gst-tts drives it: IPA per language, stress and word boundaries,
punctuation, determinism, threads, errors.

The expected IPA is what espeak-ng 1.52 (the ``espeakng-loader`` wheel of the lock) writes.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
import subprocess
import sys

import pytest

from gst_tts.errors import GstTtsError
from gst_tts.text.phonemes import CLAUSE_PUNCTUATION, espeak_version, phonemize

pytest.importorskip("espeakng_loader")


@pytest.mark.parametrize(
    "language, text, expected",
    [
        ("en-us", "hello", "həlˈoʊ"),
        ("en-us", "world", "wˈɜːld"),
        ("en-us", "thanks", "θˈæŋks"),
        ("en-us", "bath", "bˈæθ"),
        ("en-gb", "bath", "bˈaθ"),  # the accent is the language's, not the spelling's
        ("en-gb", "half", "hˈɑːf"),
        ("de", "ich", "ɪç"),
        ("de", "Müller", "mˈʏlɜ"),
        ("de", "Uhr", "ˈuːɾ"),
        ("fr", "bonjour", "bɔ̃ʒˈuʁ"),
        ("es", "dónde", "dˈonde"),
        ("es", "aquí", "akˈi"),
    ],
)
def test_known_words_give_their_ipa(language: str, text: str, expected: str) -> None:
    assert phonemize(text, language) == expected


def test_stress_marks_and_word_boundaries_are_kept() -> None:
    phonemes = phonemize("printing differs from most arts", "en-us")
    words = phonemes.split(" ")
    assert len(words) == 5 and all(words)
    assert sum("ˈ" in w for w in words) >= 3  # primary stress on the content words
    assert "ˌ" in phonemize("understand", "en-us")  # secondary stress


def test_clause_punctuation_stays_on_the_word_before_it() -> None:
    phonemes = phonemize("Hello, world! How are you? Fine; thanks: really.", "en-us")
    assert [c for c in phonemes if c in CLAUSE_PUNCTUATION] == [",", "!", "?", ";", ":", "."]
    assert phonemes.startswith("həlˈoʊ, wˈɜːld! ")
    assert " ," not in phonemes and "  " not in phonemes
    # A run of punctuation stays whole; punctuation inside a number is the number's.
    assert phonemize("what?!", "en-us").endswith("?!")
    assert "." not in phonemize("three point 3.5", "en-us")


def test_other_punctuation_is_dropped_as_espeak_drops_it() -> None:
    assert phonemize('"yes" (he said) - maybe', "en-us") == phonemize("yes he said maybe", "en-us")


def test_other_languages_normalise_numbers_themselves() -> None:
    assert phonemize("3", "de") == phonemize("drei", "de")
    assert phonemize("5", "es") == phonemize("cinco", "es")
    assert phonemize("3", "en-us") == phonemize("three", "en-us")  # (gst-tts cleans English before)


def test_nothing_speakable_gives_nothing() -> None:
    assert phonemize("", "en-us") == ""
    assert phonemize("   ", "en-us") == ""
    assert phonemize("...", "en-us") == "..."  # punctuation alone stays: the synthesizer refuses it


def test_a_text_phonemizes_the_same_whatever_came_before() -> None:
    text = "The quick brown fox jumps over the lazy dog."
    first = phonemize(text, "en-us")
    for language, other in (("de", "Guten Morgen, wie geht's?"), ("fr", "Bonjour."), ("en-gb", "Tomato.")):
        phonemize(other, language)
    assert phonemize(text, "en-us") == first


def test_threads_get_what_one_thread_gets() -> None:
    texts = [
        (f"Sentence number {i}, said {name}.", language)
        for i in range(12)
        for name, language in (("Anna", "en-us"), ("Jürgen", "de"), ("Amélie", "fr"))
    ]
    expected = [phonemize(t, lang) for t, lang in texts]
    with ThreadPoolExecutor(max_workers=6) as pool:
        got = list(pool.map(lambda pair: phonemize(*pair), texts * 3))
    assert got == expected * 3


def test_another_process_gets_the_same_phonemes() -> None:
    text, language = "Herr Dr. Müller kam um 3.000 Uhr, oder?", "de"
    code = (
        "import sys; from gst_tts.text.phonemes import phonemize; "
        f"sys.stdout.buffer.write(phonemize({text!r}, {language!r}).encode())"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, timeout=60).stdout.decode()
    assert other == phonemize(text, language)


@pytest.mark.parametrize("language", ["xx-yy", "zz", "EN", "../en", "", "en us"])
def test_an_unknown_language_is_one_line(language: str) -> None:
    with pytest.raises(GstTtsError) as caught:
        phonemize("hello", language)
    message = str(caught.value)
    assert "\n" not in message and repr(language) in message


def test_the_version_is_espeak_ngs() -> None:
    version = espeak_version()
    assert version.count(".") == 2 and version.split(".")[0].isdigit()
