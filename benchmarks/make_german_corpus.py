"""A small German corpus rendered with espeak-ng, for training and aligning with ``frontend=phonemes``.

``python benchmarks/make_german_corpus.py --out DIR --utterances N --seed S [--held-out K]`` writes an
LJSpeech-format corpus: ``metadata.csv`` (``DE-0001|text|text``), ``wavs/DE-0001.wav`` (16-bit PCM,
22050 Hz, mono), ``styles.csv``, ``prosody.csv`` (the demo corpus's columns), ``README.txt``, and
with ``--held-out K`` ``heldout.txt``: K further sentences, none of them in the corpus, one a line.

Sentences come from a seeded German template generator written here (conjugated verbs, articles
and adjective endings in the case they stand in, places, times, numbers as digits that espeak-ng
reads out in German, questions, exclamations, commas). Speech comes from the demo corpus's
renderer (:func:`gst_tts.demo.corpus.render_sentence`) with espeak-ng's voice ``de``; every
utterance's variant (one of the 34 vetted ones), pitch, intonation, rate, word gap and formant
scale are drawn as :func:`gst_tts.demo.corpus.draw_settings` draws them. The same arguments give
byte-identical files. The corpus is built in a folder beside ``DIR`` and renamed into place; a
``DIR`` that exists and is not empty is refused (one line, exit code 2).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import random
import sys
from typing import Callable, Sequence

import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gst_tts.demo.corpus import (  # noqa: E402
    FORMANT_SCALE_RANGE,
    PROSODY_COLUMNS,
    PROSODY_NAME,
    SAMPLE_RATE,
    VETTED_VARIANTS,
    SpeechSettings,
    draw_settings,
    prosody_row,
    render_sentence,
)
from gst_tts.errors import GstTtsError  # noqa: E402
from gst_tts.files import atomic_directory  # noqa: E402
from gst_tts.progress import progress_bar  # noqa: E402

VOICE = "de"
"""The espeak-ng voice of every utterance."""

HELDOUT_NAME = "heldout.txt"

# --------------------------------------------------------------------------------------
# Vocabulary. Nouns are (gender, singular, plural); gender "m", "f" or "n" picks the article
# and adjective ending of the case a template puts the noun in.
# --------------------------------------------------------------------------------------

_NAMES = (
    "Anna", "Ben", "Clara", "Jonas", "Lena", "Felix", "Marie", "Paul", "Sophie", "Lukas", "Emma",
    "Moritz", "Hannah", "Jürgen", "Jörg", "Käthe", "Günter", "Uwe", "Greta", "Tobias", "Ute", "Björn",
)  # fmt: skip

_BEINGS = (
    ("m", "Bäcker", "Bäcker"), ("m", "Lehrer", "Lehrer"), ("f", "Ärztin", "Ärztinnen"),
    ("n", "Kind", "Kinder"), ("m", "Hund", "Hunde"), ("f", "Katze", "Katzen"), ("m", "Fischer", "Fischer"),
    ("f", "Köchin", "Köchinnen"), ("m", "Müller", "Müller"), ("f", "Großmutter", "Großmütter"),
    ("m", "Förster", "Förster"), ("f", "Schülerin", "Schülerinnen"), ("n", "Mädchen", "Mädchen"),
    ("m", "Kapitän", "Kapitäne"), ("f", "Malerin", "Malerinnen"), ("m", "Fahrer", "Fahrer"),
)  # fmt: skip

# Stems: the weak ending of a definite phrase adds "e"/"en", the strong plural "e".
_BEING_ADJECTIVES = (
    "alt", "jung", "freundlich", "müde", "fröhlich", "klug", "höflich", "neugierig", "hungrig",
    "stolz", "fleißig", "schüchtern", "still", "mutig",
)  # fmt: skip

_THINGS = (
    ("m", "Koffer", "Koffer"), ("m", "Schlüssel", "Schlüssel"), ("m", "Apfel", "Äpfel"),
    ("m", "Brief", "Briefe"), ("m", "Stuhl", "Stühle"), ("m", "Hut", "Hüte"), ("m", "Kuchen", "Kuchen"),
    ("m", "Mantel", "Mäntel"), ("f", "Lampe", "Lampen"), ("f", "Tasche", "Taschen"), ("f", "Uhr", "Uhren"),
    ("f", "Flasche", "Flaschen"), ("f", "Kerze", "Kerzen"), ("f", "Karte", "Karten"), ("f", "Decke", "Decken"),
    ("n", "Buch", "Bücher"), ("n", "Fahrrad", "Fahrräder"), ("n", "Brötchen", "Brötchen"), ("n", "Glas", "Gläser"),
    ("n", "Bild", "Bilder"), ("n", "Klavier", "Klaviere"), ("n", "Boot", "Boote"), ("n", "Messer", "Messer"),
)  # fmt: skip

_THING_ADJECTIVES = (
    "alt", "klein", "groß", "schwer", "rot", "grün", "blau", "gelb", "neu", "schön", "leer", "warm",
    "kalt", "schmutzig", "sauber", "seltsam", "hölzern", "golden", "winzig", "kaputt",
)  # fmt: skip

# Adjectives with an inflected form: "kaputt" and the like only stand after "ist".
_INFLECTABLE_THING_ADJECTIVES = tuple(a for a in _THING_ADJECTIVES if a != "kaputt")

_PLACES = (
    ("m", "Bahnhof"), ("m", "Markt"), ("m", "Hafen"), ("m", "Wald"), ("m", "Strand"), ("m", "Fluss"),
    ("m", "Garten"), ("f", "Schule"), ("f", "Bibliothek"), ("f", "Bäckerei"), ("f", "Kirche"),
    ("f", "Brücke"), ("f", "Insel"), ("f", "Apotheke"), ("n", "Museum"), ("n", "Schloss"), ("n", "Dorf"),
    ("n", "Theater"), ("n", "Krankenhaus"), ("n", "Rathaus"), ("n", "Büro"), ("n", "Hotel"),
)  # fmt: skip

# Person endings of the present: ich, du, er/sie/es, wir, ihr, sie.
_PERSONS = ("ich", "du", "er", "wir", "ihr", "sie")


def _regular(stem: str) -> tuple[str, ...]:
    """The present of a regular verb; stems ending in t, d or a consonant + n take an extra e."""
    e = "e" if stem.endswith(("t", "d", "ffn", "chn")) else ""
    second = stem + e + ("t" if stem.endswith(("s", "ß", "z")) else "st")
    return (stem + "e", second, stem + e + "t", stem + "en", stem + e + "t", stem + "en")


class _Verb:
    """A verb: its present in the six persons of :data:`_PERSONS`, the du imperative and the participle."""

    def __init__(self, present: Sequence[str], imperative: str, participle: str) -> None:
        self.present = dict(zip(_PERSONS, present))
        self.imperative, self.participle = imperative, participle


# Verbs taking an accusative object (perfect with "haben").
_OBJECT_VERBS = (
    _Verb(_regular("kauf"), "kauf", "gekauft"),
    _Verb(_regular("find"), "finde", "gefunden"),
    _Verb(("trage", "trägst", "trägt", "tragen", "tragt", "tragen"), "trag", "getragen"),
    _Verb(_regular("öffn"), "öffne", "geöffnet"),
    _Verb(_regular("verkauf"), "verkauf", "verkauft"),
    _Verb(("sehe", "siehst", "sieht", "sehen", "seht", "sehen"), "sieh", "gesehen"),
    _Verb(("nehme", "nimmst", "nimmt", "nehmen", "nehmt", "nehmen"), "nimm", "genommen"),
    _Verb(("wasche", "wäschst", "wäscht", "waschen", "wascht", "waschen"), "wasch", "gewaschen"),
    _Verb(_regular("reparier"), "reparier", "repariert"),
    _Verb(_regular("such"), "such", "gesucht"),
    _Verb(_regular("mal"), "mal", "gemalt"),
    _Verb(("vergesse", "vergisst", "vergisst", "vergessen", "vergesst", "vergessen"), "vergiss", "vergessen"),
    _Verb(("verliere", "verlierst", "verliert", "verlieren", "verliert", "verlieren"), "verlier", "verloren"),
    _Verb(_regular("putz"), "putz", "geputzt"),
    _Verb(_regular("hol"), "hol", "geholt"),
    _Verb(_regular("brauch"), "brauch", "gebraucht"),
)

# Verbs of motion, with a destination (perfect with "sein").
_MOTION_VERBS = (
    _Verb(_regular("geh"), "geh", "gegangen"),
    _Verb(("fahre", "fährst", "fährt", "fahren", "fahrt", "fahren"), "fahr", "gefahren"),
    _Verb(("laufe", "läufst", "läuft", "laufen", "lauft", "laufen"), "lauf", "gelaufen"),
    _Verb(("wandere", "wanderst", "wandert", "wandern", "wandert", "wandern"), "wandere", "gewandert"),
    _Verb(_regular("reit"), "reite", "geritten"),
    _Verb(_regular("eil"), "eile", "geeilt"),
    _Verb(_regular("flieg"), "flieg", "geflogen"),
    _Verb(("segle", "segelst", "segelt", "segeln", "segelt", "segeln"), "segle", "gesegelt"),
    _Verb(_regular("komm"), "komm", "gekommen"),
)

_HABEN = dict(zip(_PERSONS, ("habe", "hast", "hat", "haben", "habt", "haben")))
_SEIN = dict(zip(_PERSONS, ("bin", "bist", "ist", "sind", "seid", "sind")))

_PAST_TIMES = (
    "gestern", "heute Morgen", "letzte Woche", "am Sonntag", "am Montag", "vorgestern", "gestern Abend",
    "am Freitag", "nach dem Essen", "im Sommer",
)  # fmt: skip

_FUTURE_TIMES = ("morgen", "nächste Woche", "am Samstag", "übermorgen", "heute Abend", "am Dienstag", "im Winter")

_NUMBER_WORDS = ("zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "zwölf", "zwanzig")

_LOCATIONS = ("neben", "hinter", "vor", "in", "an")

_INTERJECTIONS = ("Oh", "Ach", "Schau mal", "Na", "Hör mal", "Donnerwetter")

_OPINIONS = ("Ich glaube", "Sie sagt", "Er meint", "Wir wissen", "Man hört")


def _case_article(gender: str, case: str) -> str:
    """The definite article of a singular noun (cases: ``nom``, ``acc``, ``dat``)."""
    return {
        "nom": {"m": "der", "f": "die", "n": "das"},
        "acc": {"m": "den", "f": "die", "n": "das"},
        "dat": {"m": "dem", "f": "der", "n": "dem"},
    }[case][gender]


def _weak(adjective: str, gender: str, case: str) -> str:
    """An adjective after a definite article: "-e" in the nominative and the feminine and neuter
    accusative, "-en" elsewhere."""
    stem = adjective[:-1] if adjective.endswith("e") else adjective
    return stem + ("e" if case == "nom" or (case == "acc" and gender != "m") else "en")


def _strong_plural(adjective: str) -> str:
    return (adjective[:-1] if adjective.endswith("e") else adjective) + "e"


class _Picker:
    """Draws the phrases of the templates from a seeded generator."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def pick(self, options: Sequence):
        return self.rng.choice(options)

    def number(self) -> str:
        """A count above one: a word, or digits that espeak-ng reads out."""
        if self.rng.random() < 0.5:
            return self.pick(_NUMBER_WORDS)
        return str(self.rng.choice((self.rng.randint(2, 20), self.rng.randint(21, 99), self.rng.randint(100, 999))))

    def subject(self) -> tuple[str, str]:
        """``(phrase, person)`` of a nominative subject: a name, a being, or a pronoun."""
        draw = self.rng.random()
        if draw < 0.35:
            return self.pick(_NAMES), "er"
        if draw < 0.75:
            gender, noun, _ = self.pick(_BEINGS)
            if self.rng.random() < 0.6:
                return (
                    f"{_case_article(gender, 'nom')} {_weak(self.pick(_BEING_ADJECTIVES), gender, 'nom')} {noun}",
                    "er",
                )
            return f"{_case_article(gender, 'nom')} {noun}", "er"
        if draw < 0.85:
            gender, _, plural = self.pick(_BEINGS)
            return f"die {plural}", "sie"
        pronoun = self.pick(("ich", "du", "wir", "ihr"))
        return pronoun, pronoun

    def thing_object(self) -> str:
        """An accusative object: ``den roten Koffer``, ``eine kleine Lampe``, ``23 alte Bücher``."""
        gender, singular, plural = self.pick(_THINGS)
        adjective = self.pick(_INFLECTABLE_THING_ADJECTIVES)
        draw = self.rng.random()
        if draw < 0.35:
            return f"{_case_article(gender, 'acc')} {_weak(adjective, gender, 'acc')} {singular}"
        if draw < 0.6:
            stem = adjective[:-1] if adjective.endswith("e") else adjective
            article, ending = {"m": ("einen", "en"), "f": ("eine", "e"), "n": ("ein", "es")}[gender]
            return f"{article} {stem}{ending} {singular}"
        if draw < 0.85:
            return f"{self.number()} {_strong_plural(adjective)} {plural}"
        return f"{_case_article(gender, 'acc')} {singular}"

    def location(self) -> str:
        """A place in the dative: ``neben dem Bahnhof``, ``im Museum``, ``an der Brücke``."""
        gender, place = self.pick(_PLACES)
        preposition = self.pick(_LOCATIONS)
        if preposition in ("in", "an") and gender != "f":
            return f"{'im' if preposition == 'in' else 'am'} {place}"
        return f"{preposition} {_case_article(gender, 'dat')} {place}"

    def destination(self) -> str:
        gender, place = self.pick(_PLACES)
        return f"{'zur' if gender == 'f' else 'zum'} {place}"

    def thing_nominative(self) -> str:
        gender, singular, _ = self.pick(_THINGS)
        return f"{_case_article(gender, 'nom')} {singular}"

    def hour(self) -> str:
        return f"um {self.rng.randint(1, 23)} Uhr"


def _perfect(p: _Picker) -> str:
    """``Der alte Bäcker hat gestern den roten Koffer neben dem Bahnhof gefunden.``"""
    (subject, person), verb = p.subject(), p.pick(_OBJECT_VERBS)
    return f"{subject} {_HABEN[person]} {p.pick(_PAST_TIMES)} {p.thing_object()} {p.location()} {verb.participle}."


def _motion_perfect(p: _Picker) -> str:
    (subject, person), verb = p.subject(), p.pick(_MOTION_VERBS)
    return f"{subject} {_SEIN[person]} {p.pick(_PAST_TIMES)} {p.destination()} {verb.participle}."


def _inverted_present(p: _Picker) -> str:
    """Time first, the verb second: ``Morgen kauft Anna drei Äpfel.``"""
    (subject, person), verb = p.subject(), p.pick(_OBJECT_VERBS)
    return f"{p.pick(_FUTURE_TIMES)} {verb.present[person]} {subject} {p.thing_object()}."


def _yes_no_question(p: _Picker) -> str:
    (subject, person), verb = p.subject(), p.pick(_OBJECT_VERBS)
    return f"{_HABEN[person]} {subject} {p.thing_object()} {p.pick(_PAST_TIMES)} {verb.participle}?"


def _why_question(p: _Picker) -> str:
    (subject, person), verb = p.subject(), p.pick(_MOTION_VERBS)
    return f"Warum {_SEIN[person]} {subject} {p.pick(_PAST_TIMES)} {p.destination()} {verb.participle}?"


def _when_question(p: _Picker) -> str:
    verb = p.pick(_MOTION_VERBS)
    person = p.pick(("du", "ihr"))
    return f"Wann {verb.present[person]} {person} {p.destination()}?"


def _exclamation(p: _Picker) -> str:
    return f"{p.pick(_INTERJECTIONS)}, {p.thing_nominative()} ist so {p.pick(_THING_ADJECTIVES)}!"


def _we_go(p: _Picker) -> str:
    return f"Wir {p.pick(_MOTION_VERBS).present['wir']} {p.pick(_FUTURE_TIMES)} {p.destination()}, {p.pick(_NAMES)}."


def _imperative(p: _Picker) -> str:
    return f"Bitte {p.pick(_OBJECT_VERBS).imperative} {p.thing_object()}, {p.pick(_NAMES)}!"


def _there_are(p: _Picker) -> str:
    _, _, plural = p.pick(_THINGS)
    return f"Es gibt {p.number()} {_strong_plural(p.pick(_INFLECTABLE_THING_ADJECTIVES))} {plural} {p.location()}."


def _how_many(p: _Picker) -> str:
    _, _, plural = p.pick(_THINGS)
    verb = p.pick(_OBJECT_VERBS)
    return f"Wie viele {plural} hat {p.pick(_NAMES)} {p.pick(_PAST_TIMES)} {verb.participle}?"


def _says_that(p: _Picker) -> str:
    """A subordinate clause, its verb last: ``Paul sagt, dass die Lampe kaputt ist.``"""
    return f"{p.pick(_NAMES)} sagt, dass {p.thing_nominative()} {p.pick(_THING_ADJECTIVES)} ist."


def _if_it_rains(p: _Picker) -> str:
    """The main clause after a subordinate one starts with its verb."""
    (subject, person), verb = p.subject(), p.pick(_MOTION_VERBS)
    return f"Wenn es regnet, {verb.present[person]} {subject} {p.destination()}."


def _opinion(p: _Picker) -> str:
    (subject, person), verb = p.subject(), p.pick(_MOTION_VERBS)
    return f"{p.pick(_OPINIONS)}, dass {subject} {p.pick(_FUTURE_TIMES)} {p.destination()} {verb.present[person]}."


def _at_hour(p: _Picker) -> str:
    (subject, person), verb = p.subject(), p.pick(_MOTION_VERBS)
    return f"{p.hour()} {verb.present[person]} {subject} {p.destination()}."


def _two_names(p: _Picker) -> str:
    first, second = p.rng.sample(_NAMES, 2)
    return f"{first} und {second} sind {p.pick(_PAST_TIMES)} {p.destination()} {p.pick(_MOTION_VERBS).participle}."


def _price(p: _Picker) -> str:
    price = p.rng.randint(2, 400)
    if p.rng.random() < 0.5:
        return f"{p.thing_nominative()} kostet {price} Euro."
    return f"Kostet {p.thing_nominative()} wirklich {price} Euro?"


def _careful(p: _Picker) -> str:
    return f"Sei vorsichtig, {p.thing_nominative()} ist sehr {p.pick(_THING_ADJECTIVES)}!"


def _where_found(p: _Picker) -> str:
    verb = p.pick(_OBJECT_VERBS)
    person = p.pick(("du", "ihr"))
    return f"Wo {_HABEN[person]} {person} {p.thing_object()} {verb.participle}?"


_TEMPLATES: tuple[Callable[[_Picker], str], ...] = (
    _perfect, _motion_perfect, _inverted_present, _yes_no_question, _why_question, _when_question,
    _exclamation, _we_go, _imperative, _there_are, _how_many, _says_that, _if_it_rains, _opinion,
    _at_hour, _two_names, _price, _careful, _where_found,
)  # fmt: skip

MAX_WORDS = 14


def german_sentences(n: int, seed: int, *, exclude: Sequence[str] = (), stream: str = "corpus") -> list[str]:
    """``n`` distinct German sentences, the same ones for the same arguments.

    Args:
        n: how many.
        seed: the generator's seed.
        exclude: sentences never returned (the corpus's, when drawing held-out ones).
        stream: names a generator of its own for the same seed (``"corpus"``, ``"heldout"``).
    """
    if n < 0:
        raise GstTtsError(f"number of sentences must be >= 0, got {n}")
    rng = random.Random(f"gst-tts-german-{stream}-{seed}")
    picker = _Picker(rng)
    seen, out = set(exclude), []
    attempts_left = 100 * n + 1000  # repeats are rare; this only stops a runaway loop
    while len(out) < n:
        if attempts_left == 0:
            raise GstTtsError(f"could not generate {n} distinct German sentences")
        attempts_left -= 1
        sentence = rng.choice(_TEMPLATES)(picker)
        sentence = sentence[0].upper() + sentence[1:]
        if sentence in seen or len(sentence.split()) > MAX_WORDS:
            continue
        seen.add(sentence)
        out.append(sentence)
    return out


# --------------------------------------------------------------------------------------
# The corpus
# --------------------------------------------------------------------------------------


def utterance_id(index: int) -> str:
    return f"DE-{index + 1:04d}"


def _readme(utterances: int, seed: int, held_out: int) -> str:
    held = (
        f"\n{HELDOUT_NAME}: {held_out} further sentences of the same generator, none in the corpus.\n"
        if held_out
        else ""
    )
    return (
        "gst-tts German corpus\n"
        "=====================\n\n"
        f"{utterances} German sentences from the template generator of benchmarks/make_german_corpus.py\n"
        f"(seed {seed}), rendered with espeak-ng voice {VOICE!r} at {SAMPLE_RATE} Hz, 16-bit mono, silence\n"
        "trimmed as in the gst-tts demo corpus. Format: LJSpeech (metadata.csv is id|text|text; numbers stay\n"
        "digits, espeak-ng reads them). Every utterance has its own variant (timbre), formant scale,\n"
        "pitch, intonation width, speaking rate and word gap, drawn as the demo corpus draws them;\n"
        f"{PROSODY_NAME} holds them, styles.csv a coarse label. Variants: {', '.join(VETTED_VARIANTS)}.\n" + held
    )


def _write(
    directory: Path, texts: list[str], settings: list[SpeechSettings], held_out: list[str], seed: int, progress: bool
) -> None:
    wav_dir = directory / "wavs"
    wav_dir.mkdir()
    metadata, styles, prosody = [], [], [",".join(PROSODY_COLUMNS) + "\n"]
    pairs = list(zip(texts, settings))
    for index, (text, utterance) in enumerate(
        progress_bar(pairs, desc="rendering German corpus", unit="utt", enabled=progress)
    ):
        name = utterance_id(index)
        sf.write(
            str(wav_dir / f"{name}.wav"), render_sentence(text, utterance), SAMPLE_RATE, subtype="PCM_16", format="WAV"
        )
        metadata.append(f"{name}|{text}|{text}\n")
        styles.append(f"{name}|{utterance.label}\n")
        prosody.append(",".join(prosody_row(name, utterance)) + "\n")
    for file_name, rows in (("metadata.csv", metadata), ("styles.csv", styles), (PROSODY_NAME, prosody)):
        (directory / file_name).write_text("".join(rows), encoding="utf-8", newline="")
    if held_out:
        (directory / HELDOUT_NAME).write_text("".join(f"{t}\n" for t in held_out), encoding="utf-8", newline="")
    (directory / "README.txt").write_text(_readme(len(texts), seed, len(held_out)), encoding="utf-8", newline="")


def make_german_corpus(
    out_dir: str | os.PathLike, *, utterances: int, seed: int = 0, held_out: int = 0, progress: bool = False
) -> Path:
    """Writes the German corpus (see the module's docstring) to ``out_dir`` and returns its path.

    Args:
        out_dir: a folder that does not exist or is empty.
        utterances: how many utterances (>= 1).
        seed: seeds the sentences and the settings.
        held_out: how many further sentences go to ``heldout.txt`` (none: no file).
        progress: show a progress bar.

    Raises:
        GstTtsError: a count out of range, ``out_dir`` not empty, espeak-ng unusable, or a write
            that failed (nothing is left behind).
    """
    if utterances < 1:
        raise GstTtsError(f"number of utterances must be at least 1, got {utterances}")
    if held_out < 0:
        raise GstTtsError(f"number of held-out sentences must be >= 0, got {held_out}")
    out_dir = Path(out_dir)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise GstTtsError(f"{out_dir} exists and is not empty; choose another directory or remove it")
    texts = german_sentences(utterances, seed)
    held = german_sentences(held_out, seed, exclude=texts, stream="heldout")
    settings = draw_settings(
        utterances, seed, variants=VETTED_VARIANTS, voices=(VOICE,), formant_scale_range=FORMANT_SCALE_RANGE
    )
    with atomic_directory(out_dir) as staging:  # the caller checked that out_dir is empty or missing
        _write(staging, texts, settings, held, seed, progress)
    return out_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to create (must not exist or be empty)")
    parser.add_argument("--utterances", type=int, default=600, help="number of utterances (default 600)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sentences and settings (default 0)")
    parser.add_argument("--held-out", type=int, default=0, help="further sentences written to heldout.txt (default 0)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        make_german_corpus(
            args.out, utterances=args.utterances, seed=args.seed, held_out=args.held_out, progress=not args.no_progress
        )
    except GstTtsError as error:
        print(f"make_german_corpus: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
