"""Splitting long text at sentence, clause, word boundaries (gst_tts.text.split)."""

from __future__ import annotations

import re

import pytest

from gst_tts.text.split import split_text


def _joined(chunks: list[str]) -> str:
    return " ".join(chunks)


def test_short_text_is_one_chunk_and_blank_is_none():
    assert split_text("  Hello   there. ", 50) == ["Hello there."]
    assert split_text(" \n\t ", 50) == []


def test_splits_at_sentence_ends_and_packs_short_sentences():
    text = "One two three. Four five six! Seven eight nine? Ten eleven twelve."
    chunks = split_text(text, 32)
    # All sentences fit, so no clause/word break is needed: every chunk ends a sentence.
    assert chunks == ["One two three. Four five six!", "Seven eight nine?", "Ten eleven twelve."]
    assert _joined(chunks) == text


def test_closing_quote_stays_with_its_sentence():
    chunks = split_text('He said "stop." Then he left the room quietly.', 20)
    assert chunks[0] == 'He said "stop."'


def test_long_sentence_splits_at_clauses_not_mid_clause():
    sentence = "first part of it, second part of it; third part of it: fourth part of it."
    chunks = split_text(sentence, 40)
    assert chunks == ["first part of it, second part of it;", "third part of it: fourth part of it."]


def test_sentence_break_preferred_over_packing_a_clause_into_the_previous_sentence():
    text = "Short one. " + "a clause that is long, " * 4 + "end."
    chunks = split_text(text, 60)
    assert chunks[0] == "Short one."  # the long sentence's clauses are not glued onto it
    assert all(len(c) <= 60 for c in chunks)
    assert _joined(chunks) == " ".join(text.split())


def test_text_without_punctuation_splits_between_words():
    words = " ".join(f"word{i}" for i in range(100))
    chunks = split_text(words, 50)
    assert all(len(c) <= 50 for c in chunks)
    assert _joined(chunks) == words
    assert all(re.fullmatch(r"(word\d+ ?)+", c) for c in chunks)


def test_a_word_longer_than_the_limit_is_cut():
    chunks = split_text("x" * 25, 10)
    assert chunks == ["x" * 10, "x" * 10, "x" * 5]


def test_two_thousand_character_paragraph_comes_out_whole():
    sentence = "The old house on the hill, which nobody had visited for years, stood silent; its windows were dark. "
    paragraph = (sentence * 21)[:2000].rsplit(" ", 1)[0] + "."
    assert len(paragraph) >= 1900
    chunks = split_text(paragraph, 150)
    assert len(chunks) > 10
    assert all(0 < len(c) <= 150 for c in chunks)
    assert _joined(chunks) == paragraph


def test_bad_limit():
    with pytest.raises(ValueError):
        split_text("hello", 0)
