"""Writes gst_tts/demo/read_sentences.txt: the LJ Speech transcripts the demo corpus reads besides its templates.

Usage: python tools/select_read_sentences.py LJSPEECH_METADATA_CSV

The LJ Speech transcripts are in the public domain (keithito.com/LJ-Speech-Dataset). Kept: the
normalized text of 20-60 characters and 4-12 words, letters and the template sentences' punctuation
only (double quotes dropped), none holding a content word of ``NEW_WORD_SENTENCES`` (those measure
words the corpus never says), in a fixed shuffled order.
"""

from __future__ import annotations

import csv
import random
import re
import sys
from pathlib import Path

from gst_tts.demo.sentences import NEW_WORD_SENTENCES, SHARED_FUNCTION_WORDS, is_corpus_sentence, words_of

OUT = Path(__file__).resolve().parents[1] / "gst_tts" / "demo" / "read_sentences.txt"


def main(metadata: str) -> int:
    banned = set().union(*map(words_of, NEW_WORD_SENTENCES)) - SHARED_FUNCTION_WORDS
    kept: list[str] = []
    with open(metadata, encoding="utf-8", newline="") as f:
        for row in csv.reader(f, delimiter="|", quoting=csv.QUOTE_NONE):
            text = " ".join(row[2].replace('"', "").split())
            if not text or words_of(text) & banned:
                continue
            if text[-1] not in ".?!":
                text = re.sub(r"[,;:\s-]+$", "", text) + "."
            text = text[0].upper() + text[1:]
            if len(text) <= 60 and is_corpus_sentence(text) and text not in kept:
                kept.append(text)
    random.Random(0).shuffle(kept)
    OUT.write_text("\n".join(kept) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(kept)} sentences, {len(set().union(*map(words_of, kept)))} distinct words")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
