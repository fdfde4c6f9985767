"""A seeded template generator of short English sentences for the demo corpus; no text is downloaded."""

from __future__ import annotations

import random
import re
from importlib import resources
from typing import Callable, Sequence

from gst_tts.errors import GstTtsError

MIN_WORDS, MAX_WORDS = 4, 12
MIN_CHARS, MAX_CHARS = 20, 80

_NAMES = (
    "Anna", "Ben", "Clara", "David", "Elena", "Frank", "Grace", "Henry", "Iris", "Jack",
    "Kate", "Leo", "Maya", "Noah", "Olive", "Paul", "Rosa", "Sam", "Tina", "Victor",
    "Wendy", "Oscar", "Lucy", "Martin", "Nora", "Peter", "Ruth", "Simon",
)  # fmt: skip


# Adjectives that suit things, and those that suit people and animals.
_THING_ADJECTIVES = (
    "old", "small", "large", "heavy", "narrow", "golden", "silver", "wooden", "strange",
    "empty", "warm", "cold", "red", "green", "blue", "yellow", "ancient", "old-fashioned",
    "brand-new", "dusty", "shiny", "little", "famous", "broken", "clean", "tiny", "enormous",
)  # fmt: skip


_BEING_ADJECTIVES = (
    "old", "young", "quiet", "gentle", "strange", "happy", "tired", "careful", "clever",
    "noisy", "polite", "curious", "lonely", "famous", "well-known", "friendly", "hungry",
    "proud", "sleepy", "little", "brave", "cheerful", "busy",
)  # fmt: skip


_BEINGS = (
    ("captain", "captains"), ("teacher", "teachers"), ("farmer", "farmers"),
    ("doctor", "doctors"), ("sailor", "sailors"), ("painter", "painters"),
    ("child", "children"), ("dog", "dogs"), ("cat", "cats"), ("horse", "horses"),
    ("baker", "bakers"), ("fox", "foxes"), ("neighbor", "neighbors"), ("student", "students"),
    ("musician", "musicians"), ("driver", "drivers"),
)  # fmt: skip


_THINGS = (
    ("box", "boxes"), ("letter", "letters"), ("lamp", "lamps"), ("basket", "baskets"),
    ("bicycle", "bicycles"), ("window", "windows"), ("clock", "clocks"), ("kettle", "kettles"),
    ("ladder", "ladders"), ("map", "maps"), ("piano", "pianos"), ("umbrella", "umbrellas"),
    ("boat", "boats"), ("apple", "apples"), ("cake", "cakes"), ("book", "books"),
    ("key", "keys"), ("candle", "candles"), ("blanket", "blankets"), ("coat", "coats"),
    ("chair", "chairs"), ("bottle", "bottles"), ("hat", "hats"), ("drum", "drums"),
    ("mirror", "mirrors"), ("suitcase", "suitcases"), ("envelope", "envelopes"),
)  # fmt: skip


# (base, past) of verbs that take a thing as object.
_THING_VERBS = (
    ("carry", "carried"), ("find", "found"), ("paint", "painted"), ("open", "opened"),
    ("clean", "cleaned"), ("lift", "lifted"), ("hide", "hid"), ("buy", "bought"),
    ("sell", "sold"), ("fix", "fixed"), ("drop", "dropped"), ("bring", "brought"),
    ("borrow", "borrowed"), ("wash", "washed"), ("move", "moved"), ("check", "checked"),
    ("pack", "packed"), ("keep", "kept"), ("lose", "lost"), ("mend", "mended"),
)  # fmt: skip


# (base, past) of verbs of motion, followed by a direction and a place.
_MOTION_VERBS = (
    ("walk", "walked"), ("run", "ran"), ("drive", "drove"), ("sail", "sailed"),
    ("hurry", "hurried"), ("travel", "traveled"), ("wander", "wandered"),
    ("return", "returned"), ("march", "marched"), ("ride", "rode"), ("cycle", "cycled"),
)  # fmt: skip


_DIRECTIONS = ("to", "toward", "past", "away from", "back to")


_PLACES = (
    "station", "harbor", "market", "library", "bakery", "river", "village", "museum",
    "castle", "school", "bridge", "forest", "hospital", "theater", "beach", "farm", "church",
    "kitchen", "office", "mountain", "island", "valley", "lighthouse", "garden", "park",
    "airport", "hotel", "square",
)  # fmt: skip


_LOCATIONS = ("near", "behind", "beside", "inside", "outside", "under", "next to")


_PAST_TIMES = (
    "yesterday", "this morning", "last night", "last week", "on Sunday", "on Monday",
    "on Friday", "at noon", "before dinner", "after lunch", "in the evening", "at dawn",
)  # fmt: skip


_FUTURE_TIMES = (
    "tomorrow", "next week", "on Saturday", "on Tuesday", "tonight", "after breakfast",
    "at midnight", "next spring", "in an hour",
)  # fmt: skip


_NUMBERS = (
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "fifteen", "twenty", "thirty", "forty", "fifty", "a hundred",
)  # fmt: skip


_ADVERBS = ("slowly", "quickly", "quietly", "carefully", "happily", "suddenly", "finally", "gladly")


_INTERJECTIONS = ("Oh", "Well", "Look", "Wow", "Hey", "Listen")


_PLACE_STATES = ("open", "closed", "busy", "empty", "quiet", "crowded", "far away")


_OPINIONS = ("I think", "I doubt", "She said", "He believes", "They told me", "We know")


def _article(word: str) -> str:
    """``a`` or ``an`` for the word that follows."""
    return "an" if word[0] in "aeiou" else "a"


class _Picker:
    """Draws vocabulary items from a seeded random generator."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def pick(self, options: Sequence[str]) -> str:
        return self.rng.choice(options)

    def adjective(self, for_being: bool) -> str:
        return self.rng.choice(_BEING_ADJECTIVES if for_being else _THING_ADJECTIVES)

    def subject(self) -> str:
        """A name or a definite noun phrase for a person or animal."""
        if self.rng.random() < 0.45:
            return self.pick(_NAMES)
        noun = self.rng.choice(_BEINGS)[0]
        if self.rng.random() < 0.6:
            return f"the {self.adjective(True)} {noun}"
        return f"the {noun}"

    def thing_object(self) -> str:
        """An object phrase: ``the old lamp``, ``an empty box``, ``seven red apples``..."""
        singular, plural = self.rng.choice(_THINGS)
        kind = self.rng.random()
        if kind < 0.4:
            return f"the {self.adjective(False)} {singular}"
        if kind < 0.65:
            adjective = self.adjective(False)
            return f"{_article(adjective)} {adjective} {singular}"
        if kind < 0.85:
            return f"{self.pick(_NUMBERS)} {plural}"
        return f"the {singular}"

    def place_phrase(self, prepositions: Sequence[str]) -> str:
        return f"{self.pick(prepositions)} the {self.pick(_PLACES)}"


def _sentence_templates() -> tuple[Callable[[_Picker], str], ...]:
    """Sentence templates; each draws its words from a picker and returns one sentence."""
    return (
        lambda p: f"{p.subject()} {p.rng.choice(_THING_VERBS)[1]} {p.thing_object()} {p.place_phrase(_LOCATIONS)}.",
        lambda p: (
            f"{p.subject()} {p.rng.choice(_MOTION_VERBS)[1]} {p.place_phrase(_DIRECTIONS)} {p.pick(_PAST_TIMES)}."
        ),
        lambda p: f"Did {p.pick(_NAMES)} {p.rng.choice(_THING_VERBS)[0]} {p.thing_object()} {p.pick(_PAST_TIMES)}?",
        lambda p: f"Why did {p.subject()} {p.rng.choice(_MOTION_VERBS)[0]} {p.place_phrase(_DIRECTIONS)}?",
        lambda p: f"{p.pick(_INTERJECTIONS)}, the {p.rng.choice(_THINGS)[0]} is so {p.adjective(False)}!",
        lambda p: (
            f"We will {p.rng.choice(_MOTION_VERBS)[0]} {p.place_phrase(_DIRECTIONS)} {p.pick(_FUTURE_TIMES)}, "
            f"{p.pick(_NAMES)}."
        ),
        lambda p: f"{p.pick(_NAMES)} said that the {p.rng.choice(_THINGS)[0]} was {p.adjective(False)}.",
        lambda p: f"Please {p.rng.choice(_THING_VERBS)[0]} {p.thing_object()}, {p.pick(_NAMES)}.",
        lambda p: (
            f"There are {p.pick(_NUMBERS)} {p.adjective(False)} {p.rng.choice(_THINGS)[1]} "
            f"{p.place_phrase(_LOCATIONS)}."
        ),
        lambda p: (
            f"How many {p.rng.choice(_THINGS)[1]} did {p.pick(_NAMES)} {p.rng.choice(_THING_VERBS)[0]} "
            f"{p.pick(_PAST_TIMES)}?"
        ),
        lambda p: f"I can't believe the {p.rng.choice(_THINGS)[0]} is {p.adjective(False)}!",
        lambda p: f"{p.pick(_NAMES)}'s {p.rng.choice(_THINGS)[0]} is {p.place_phrase(_LOCATIONS)}.",
        lambda p: (
            f"After {p.pick(('lunch', 'dinner', 'breakfast', 'the concert', 'the storm', 'the match'))}, "
            f"{p.subject()} {p.rng.choice(_MOTION_VERBS)[1]} {p.place_phrase(_DIRECTIONS)}."
        ),
        lambda p: _pair_sentence(p),
        lambda p: f"Where did you {p.rng.choice(_THING_VERBS)[0]} the {p.adjective(False)} {p.rng.choice(_THINGS)[0]}?",
        lambda p: f"Never {p.rng.choice(_THING_VERBS)[0]} {p.thing_object()} {p.place_phrase(_LOCATIONS)}!",
        lambda p: f"{p.subject()} {p.pick(_ADVERBS)} {p.rng.choice(_THING_VERBS)[1]} {p.thing_object()}.",
        lambda p: f"Is the {p.pick(_PLACES)} {p.pick(_PLACE_STATES)} {p.pick(_FUTURE_TIMES)}?",
        lambda p: f"If it rains, {p.pick(_NAMES)} will {p.rng.choice(_MOTION_VERBS)[0]} {p.place_phrase(_DIRECTIONS)}.",
        lambda p: f"Who {p.rng.choice(_THING_VERBS)[1]} {p.thing_object()} {p.place_phrase(_LOCATIONS)}?",
        lambda p: (
            f"{p.pick(_NAMES)} and {p.pick(_NAMES)} {p.rng.choice(_MOTION_VERBS)[1]} "
            f"{p.place_phrase(_DIRECTIONS)} together."
        ),
        lambda p: f"Be careful, the {p.rng.choice(_THINGS)[0]} is very {p.adjective(False)}!",
        lambda p: f"{p.pick(_OPINIONS)} the {p.pick(_PLACES)} is {p.pick(_PLACE_STATES)} {p.pick(_FUTURE_TIMES)}.",
        lambda p: f"Hello {p.pick(_NAMES)}, did you {p.rng.choice(_MOTION_VERBS)[0]} {p.place_phrase(_DIRECTIONS)}?",
    )


def _pair_sentence(p: _Picker) -> str:
    """``The lamp and the clock are dusty.`` with two different things."""
    first, second = p.rng.sample(_THINGS, 2)
    return f"The {first[0]} and the {second[0]} are {p.adjective(False)}."


_TEMPLATES = _sentence_templates()


_ALLOWED_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ,.?!'-")


def is_corpus_sentence(sentence: str) -> bool:
    """True for a sentence the corpus may hold: 4-12 words, 20-80 characters of letters, spaces and
    ``,.?!'-``."""
    words = sentence.split()
    return (
        MIN_WORDS <= len(words) <= MAX_WORDS
        and MIN_CHARS <= len(sentence) <= MAX_CHARS
        and set(sentence) <= _ALLOWED_CHARACTERS
    )


def generate_sentences(n: int, seed: int) -> list[str]:
    """Returns ``n`` distinct English sentences, the same ones for the same ``seed``.

    Sentences have 4-12 words and 20-80 characters of letters, spaces and ``,.?!'-``, and end
    with ``.``, ``?`` or ``!``. The template and vocabulary space holds far more than ten
    thousand sentences, so another seed gives mostly new ones (held-out text).
    """
    if n < 0:
        raise GstTtsError(f"number of sentences must be >= 0, got {n}")
    rng = random.Random(f"gst-tts-demo-sentences-{seed}")
    picker = _Picker(rng)
    sentences: list[str] = []
    seen: set[str] = set()
    attempts_left = 100 * n + 1000  # rejections are rare; this only stops a runaway loop
    while len(sentences) < n:
        if attempts_left == 0:
            raise GstTtsError(f"could not generate {n} distinct sentences")
        attempts_left -= 1
        sentence = rng.choice(_TEMPLATES)(picker)
        sentence = sentence[0].upper() + sentence[1:]
        if sentence in seen or not is_corpus_sentence(sentence):
            continue
        seen.add(sentence)
        sentences.append(sentence)
    return sentences


# Sentences for the intelligibility figures: their content words appear in no sentence the templates
# above can make (a test checks it), so a model that speaks them has learned to read, not to recall.
NEW_WORD_SENTENCES: tuple[str, ...] = (
    "Fresh snow covered every rooftop during January.",
    "Grandmother knitted thick woolen socks for winter.",
    "Thunder rumbled loudly across distant hills.",
    "Elephants drink water using their trunks.",
    "Martha repaired my rusty scooter chain on Thursday.",
    "Bright purple tulips bloom early each April.",
    "Scientists discovered peculiar fossils beneath desert sand.",
    "Jennifer plays violin with remarkable skill.",
    "Dense traffic delayed most commuters today.",
    "Penguins waddle clumsily along icy shores.",
    "Our landlord grows tomatoes, peppers and cucumbers.",
    "Lightning struck a gigantic oak during July.",
    "Firefighters rescued fourteen puppies from burning barns.",
    "Delicate hummingbirds hover around sweet flowers.",
    "Passengers waited patiently for overdue trains.",
    "Chocolate pudding tastes wonderful with whipped cream.",
    "Engineers designed stronger tunnels using steel cables.",
    "Wolves howled through foggy forests until sunrise.",
    "Samuel wrote poems about sailors and pirates.",
    "Mischievous monkeys grabbed bananas from tourists.",
    "Volunteers planted hundreds of pine saplings.",
    "Doctors recommend drinking plenty of fluids daily.",
    "Jupiter shines above southern horizons during October.",
    "Sharp knives make chopping vegetables much easier.",
    "Students celebrated graduation with joyful music.",
    "Autumn leaves drift gently onto silent lawns.",
    "Farmers harvested wheat and barley ahead of hailstorms.",
    "Dolphins leaped playfully alongside fishing vessels.",
)
"""Sentences whose content words the demo corpus never uses, for `demo-report`'s CER on new words."""


SHARED_FUNCTION_WORDS = frozenset({"a", "and", "from", "on", "of", "the"})
"""The only words :data:`NEW_WORD_SENTENCES` may share with the corpus's sentences."""


def words_of(text: str) -> set[str]:
    """The lower-case words of ``text`` (letters and apostrophes)."""
    return set(re.findall(r"[a-z']+", text.lower()))


READ_SHARE = 0.5
"""Share of the demo corpus's sentences taken from :func:`read_sentences` rather than the templates:
the templates say a few hundred words hundreds of times each; the read sentences bring thousands
more, so that the model learns to read words it never heard (measured in
docs/results/2026-12-03-read-sentences.md)."""


def read_sentences() -> list[str]:
    """The bundled sentences the demo corpus reads besides its templates: LJ Speech transcripts
    (public domain) of 20-60 characters, none holding a content word of :data:`NEW_WORD_SENTENCES`,
    in a fixed shuffled order (``tools/select_read_sentences.py`` made the file)."""
    text = resources.files("gst_tts.demo").joinpath("read_sentences.txt").read_text(encoding="utf-8")
    return text.splitlines()


def demo_sentences(n: int, seed: int, read_share: float = READ_SHARE) -> list[str]:
    """The demo corpus's ``n`` sentences: the templates' (:func:`generate_sentences` with ``seed``),
    every ``1 / read_share``-th of them replaced by a bundled read sentence, drawn in order from
    :func:`read_sentences` shuffled by ``seed``. ``read_share`` 0 gives the templates alone.

    Raises:
        GstTtsError: ``read_share`` outside [0, 1], or more read sentences asked for than are bundled.
    """
    if not 0.0 <= read_share <= 1.0:
        raise GstTtsError(f"the share of read sentences must be between 0 and 1, got {read_share:g}")
    if n < 0:
        raise GstTtsError(f"number of sentences must be >= 0, got {n}")
    # position i is read where the running count of read sentences, floor((i + 1) * share), steps up
    is_read = [int((i + 1) * read_share) > int(i * read_share) for i in range(n)]
    n_read = sum(is_read)
    if n_read == 0:
        return generate_sentences(n, seed)
    bundled = read_sentences()
    if n_read > len(bundled):
        raise GstTtsError(
            f"{n} sentences at a read share of {read_share:g} need {n_read} read sentences; "
            f"{len(bundled)} are bundled (lower the share or the number of utterances)"
        )
    random.Random(f"gst-tts-demo-read-{seed}").shuffle(bundled)
    read, made = iter(bundled[:n_read]), iter(generate_sentences(n - n_read, seed))
    return [next(read) if r else next(made) for r in is_read]
