"""espeak-ng's language list (``gst-tts phonemize --list-languages``): the voices the phonemizer takes."""

from __future__ import annotations

from gst_tts.text.phonemes import list_languages, phonemize, phonemizer


def test_languages_are_sorted_unique_codes_with_names():
    languages = list_languages()
    codes = [code for code, _ in languages]
    assert codes == sorted(set(codes))
    assert all(name.strip() and "\n" not in name for _, name in languages)
    assert {"en-us", "en-gb", "de", "es", "fr-fr"} <= set(codes)
    assert dict(languages)["de"] == "German"


def test_every_listed_code_is_a_language_the_phonemizer_takes():
    for code, _ in list_languages():
        phonemizer().check_language(code)  # raises GstTtsError for a code it refuses


def test_listing_leaves_the_phonemizer_as_it_was():
    # The phonemizer keeps its voice between calls: a listing that reset it would change the next call.
    phonemize("Hello.", "en-us")
    english = phonemize("Guten Tag.", "en-us")
    german = phonemize("Guten Tag.", "de")
    list_languages()
    assert phonemize("Guten Tag.", "de") == german != english
