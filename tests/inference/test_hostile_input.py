"""Hostile texts and styles through the Synthesizer and ``gst-tts synthesize``.

The tiny checkpoint is untrained: it never stops on its token, so every chunk runs to its step
bound, which is what these tests check holds. For any input, synthesis either succeeds, each chunk
within ``DecodingConfig``'s bound and every output finite, or ends in a ``GstTtsError`` whose
message is one line; nothing else. Inputs: random Unicode texts (hypothesis, 1,000 of them batched),
texts past the length limits, token weights and dials (NaN, inf, 1e30, wrong shapes, heads and
tokens, not numbers), reference audio (silence, noise, NaN, 1 and 0 samples, 10 minutes at 8 kHz,
full-scale int16, 6 channels, 96 kHz, odd rates) and the command line on a few of them.
"""

from __future__ import annotations

from collections import Counter
import math
import os
from pathlib import Path
import subprocess
import sys
import warnings

from conftest import seconds_for_steps, tone
from hypothesis import HealthCheck, given, settings, strategies as st
import numpy as np
import pytest
import soundfile as sf
import torch

from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
from gst_tts.cli import main
from gst_tts.errors import AudioError, GstTtsError, TextError
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.results import SynthesisResult
from gst_tts.inference.style import MAX_REFERENCE_SECONDS, MAX_STYLE_WEIGHT, Style
from gst_tts.inference.synthesizer import MAX_CLEANED_CHARS, MAX_TEXT_CHARS, Synthesizer
from gst_tts.text.symbols import DroppedCharacterWarning
from gst_tts.compute import configure_threads

STEPS = 3
BOUND = DecodingConfig(max_seconds=seconds_for_steps(STEPS))
RATE = 22050


@pytest.fixture(scope="module", autouse=True)
def default_threads():
    """torch's threads as the commands set them (every core but one): with every core, each of the
    hundreds of small decodings here waits on a core another process holds (4x slower on 2 busy cores)."""
    before = torch.get_num_threads()
    configure_threads(None)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def synth(tiny_checkpoint) -> Synthesizer:
    s = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    s.vocoder = GriffinLimVocoder(s.audio_config, n_iter=2)
    return s


def one_line(exc: BaseException) -> str:
    message = str(exc)
    assert message.strip() and len(message.splitlines()) == 1 and "\n" not in message, repr(message)
    return message


def check_result(synth: Synthesizer, r: SynthesisResult, decoding: DecodingConfig = BOUND) -> int:
    """Every chunk within its step bound (decoded, and after any retiming to a reference's tempo),
    the whole the sum of its chunks, everything finite; the most frames of a chunk."""
    rf = synth.model.reduction_factor
    assert 1 <= len(r.chunks) <= len(r.cleaned_text)
    for c in r.chunks:
        symbols = c.health.input_symbols
        frames = min(
            decoding.max_frames(frames_per_second=synth.audio_config.frames_per_second),
            math.ceil(decoding.max_frames_per_symbol * symbols),
        )
        steps = -(-frames // rf)
        decoded = c.n_frames if c.decoded_frames is None else c.decoded_frames
        assert 0 < decoded <= steps * rf and decoded % rf == 0, (c.text, decoded, steps)
        assert 0 < c.n_frames <= steps * rf, (c.text, c.n_frames, steps)
    assert r.mel.shape == (sum(c.n_frames for c in r.chunks), synth.model.n_mels)
    assert np.isfinite(r.mel).all() and np.isfinite(r.audio).all() and np.isfinite(r.alignment).all()
    assert np.isfinite(r.style_weights).all()
    return max(c.n_frames for c in r.chunks)


# ------------------------------------------------------------------ texts

HOSTILE_PIECES = [
    "1",
    "0",
    "12",
    "1,000",
    "1,00",
    ",",
    ".",
    "$",
    "£",
    "%",
    "'s",
    "1st",
    "1990s",
    "$1.50",
    " million",
    "Mr.",
    "St.",
    " ",
    "\t",
    "\n",
    "\u2028",
    "\x00",
    "\x1b",
    "\u200b",
    "\u200d",
    "\ufeff",
    "\u0301",
    "\u202e",
    "שלום",
    "مرحبا",
    "١٢٣",
    "½",
    "⣿",
    "👍🏽",
    "👨‍👩‍👧",
    "é",
    "ß",
    "!",
    "?",
    "...",
    "—",
    "-",
    '"',
    "(",
    "~",
    "_",
    "abc",
    "Hello",
    "WORLD",
]
hostile_text = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=120),
    st.text(st.characters(categories=("Mn", "Cc", "Cf", "Zl", "Zs", "So", "Nd", "Po")), max_size=60),
    st.lists(st.sampled_from(HOSTILE_PIECES), max_size=40).map("".join),
    st.lists(st.sampled_from(HOSTILE_PIECES[-4:] + [" ", ". ", ", "]), min_size=40, max_size=120).map("".join),  # split
)


def test_thousand_random_texts_end_within_the_bound_or_are_text_errors(synth):
    """1,000 random texts, 100 a batch: each either fails ``check_text`` and ``synthesize`` with a
    one-line TextError, or decodes (with the others that pass) within the step bound."""
    counts: Counter[str] = Counter()
    most_frames = [0]

    @settings(
        max_examples=10,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )
    @given(texts=st.lists(hostile_text, min_size=100, max_size=100))
    def run(texts):
        good = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DroppedCharacterWarning)
            for text in texts:
                try:
                    synth.check_text(text)
                except TextError as exc:
                    one_line(exc)
                    with pytest.raises(TextError):
                        synth.synthesize(text, decoding=BOUND)
                    counts["TextError"] += 1
                else:
                    good.append(text)
            # Short chunks in one big batch: the encoder's steps, not the batch, set the time.
            results = synth.synthesize(good, decoding=BOUND, batch_size=1024, max_chunk_chars=60, vocode=False, seed=0)
        for r in results:
            most_frames[0] = max(most_frames[0], check_result(synth, r))
        counts["succeeded"] += len(results)

    run()
    print(
        f"1,000 random texts: {dict(counts)}; most frames of a chunk {most_frames[0]}, "
        f"bound {STEPS * synth.model.reduction_factor}"
    )
    assert counts["succeeded"] + counts["TextError"] == 1000
    assert counts["succeeded"] > 100 and counts["TextError"] > 10  # both sides really exercised
    assert most_frames[0] == STEPS * synth.model.reduction_factor  # the untrained model runs to the bound


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "\u2028\u2029\t\n",
        "\x00" * 50,
        "\u200b\u200d\ufeff",
        "\u0301" * 20,
        "😀👍🏽",
        "?!...—;:",
        "@#^&*",
        "_~_~",
        "$$$",
        "%",
    ],
)
def test_nothing_to_speak_is_one_text_error(synth, text):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedCharacterWarning)
        with pytest.raises(TextError) as caught:
            synth.synthesize(["Fine.", text], decoding=BOUND)
    one_line(caught.value)


def test_texts_past_the_length_limits_are_one_text_error_before_any_work(synth, monkeypatch):
    cleaned = []
    monkeypatch.setattr(synth.symbols.frontend, "_clean", lambda t: cleaned.append(len(t)) or t.lower())
    for text in ["a" * (MAX_TEXT_CHARS + 1), "word " * 1_000_000]:
        with pytest.raises(TextError, match="at most 10,000") as caught:
            synth.synthesize(text, decoding=BOUND)
        one_line(caught.value)
    assert cleaned == []  # refused before cleaning: a huge text costs nothing
    monkeypatch.undo()
    # Within the limit as given, past it spelled out: a Braille cell reads as an eight-digit number.
    with pytest.raises(TextError, match="once numbers") as caught, warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedCharacterWarning)
        synth.synthesize("⣿" * (MAX_CLEANED_CHARS // 70), decoding=BOUND)
    one_line(caught.value)


def test_a_text_at_the_length_limit_is_read_in_bounded_chunks(synth):
    text = ("Grand old 1,234 houses stood; the 3rd was dark. " * 300)[:MAX_TEXT_CHARS]
    r = synth.synthesize(text, decoding=DecodingConfig(max_seconds=seconds_for_steps(1)), batch_size=256, vocode=False)
    check_result(synth, r, DecodingConfig(max_seconds=seconds_for_steps(1)))
    assert len(r.cleaned_text) > MAX_TEXT_CHARS and all(len(c.text) <= 180 for c in r.chunks)
    assert r.mel.shape[0] == len(r.chunks) * synth.model.reduction_factor  # one step a chunk, the bound
    print(f"a {len(text):,}-character text: {len(r.cleaned_text):,} cleaned, {len(r.chunks)} chunks")


@pytest.mark.parametrize(
    "texts, kwargs",
    [
        (None, {}),
        (5, {}),
        ([b"bytes"], {}),
        (["Fine.", None], {}),
        ("Fine.", dict(pause_s=float("inf"))),
        ("Fine.", dict(pause_s=1e12)),
        ("Fine.", dict(pause_s=float("nan"))),
        ("Fine.", dict(pause_s=-1.0)),
        ("Fine.", dict(batch_size=2.5)),
        ("Fine.", dict(batch_size=0)),
        ("Fine.", dict(max_chunk_chars=1.5)),
        ("Fine.", dict(seed=2**64)),
        ("Fine.", dict(seed=-(2**63) - 1)),
        ("Fine.", dict(seed=1.5)),
        ("Fine.", dict(decoding="fast")),
    ],
)
def test_bad_texts_and_options_are_one_line_errors(synth, texts, kwargs):
    """Before: pause_s=inf raised OverflowError and 1e12 tried to allocate 88 TB; seed=2**64 a
    ValueError from torch; texts=None a TypeError."""
    with pytest.raises(GstTtsError) as caught:
        synth.synthesize(texts, **{"decoding": BOUND, **kwargs})
    one_line(caught.value)


# ------------------------------------------------------------------ token weights and dials

N_HEADS, N_TOKENS = 2, 5  # the tiny model's (conftest.TINY_MODEL)
BIG = 10**400  # past float's range: float() raises OverflowError


class MultiLine:
    """A token whose repr would break a message over two lines."""

    def __repr__(self) -> str:
        return "first line\nsecond line"


def weight_cases() -> dict[str, object]:
    return {
        "nan": {1: float("nan")},
        "inf": {1: float("inf")},
        "-inf": {1: -float("inf")},
        "1e30": {1: 1e30},
        "-1e30": {1: -1e30},
        "1e39 (inf as float32)": {(0, 1): 1e39},
        "int past float": {1: BIG},
        "just past the limit": {1: MAX_STYLE_WEIGHT * 1.0001},
        "the limit": {1: MAX_STYLE_WEIGHT},
        "minus the limit": {(1, 2): -MAX_STYLE_WEIGHT},
        "negative": {1: -0.7, 2: -0.3},
        "all zero": np.zeros(N_TOKENS),
        "all zero per head": np.zeros((N_HEADS, N_TOKENS)),
        "every token at the limit": np.full((N_HEADS, N_TOKENS), MAX_STYLE_WEIGHT),
        "array with nan": np.array([0.1, np.nan, 0, 0, 0]),
        "tensor 1e39": torch.tensor([1e39, 0, 0, 0, 0], dtype=torch.float64),
        "tensor with grad": torch.ones(N_TOKENS, requires_grad=True),
        "one head too many": np.zeros((N_HEADS + 1, N_TOKENS)),
        "one token too many": np.zeros(N_TOKENS + 1),
        "3-d": np.zeros((1, N_HEADS, N_TOKENS)),
        "scalar": np.float32(1.0),
        "empty": np.zeros(0),
        "empty mapping": {},
        "huge shape, never allocated": np.broadcast_to(np.float64(0), (10**6, 10**6)),
        "strings": np.array(["a"] * N_TOKENS),
        "ragged": [[1.0], [1.0, 2.0]],
        "a spec string": "1=0.4",
        "weight a string": {1: "abc"},
        "weight None": {1: None},
        "weight a list": {1: [1, 2]},
        "weight an object": {1: object()},
        "token out of range": {N_TOKENS: 1.0},
        "token -1": {-1: 1.0},
        "head out of range": {(N_HEADS, 0): 1.0},
        "3-tuple key": {(0, 0, 0): 1.0},
        "float token": {1.0: 1.0},
        "bool token": {True: 1.0},
        "str token": {"1": 1.0},
        "None token": {None: 1.0},
        "multi-line repr token": {MultiLine(): 1.0},
        "all dials at the limit": {t: MAX_STYLE_WEIGHT for t in range(N_TOKENS)},
    }


@pytest.mark.parametrize("option", ["style_weights", "style_dials"])
def test_hostile_token_weights_and_dials_succeed_finite_or_are_one_line_errors(synth, option):
    outcomes: Counter[str] = Counter()
    cases = weight_cases()
    texts = ["Hello there.", "A second text, longer than the first."]
    for name, weights in cases.items():
        try:
            results = synth.synthesize(texts, **{option: weights}, decoding=BOUND, seed=0)
        except GstTtsError as exc:
            one_line(exc)
            outcomes["error"] += 1
            continue
        for r in results:
            check_result(synth, r)
        outcomes["success"] += 1
    print(f"{option}: {len(cases)} cases: {dict(outcomes)}")
    # What is documented to pass: finite weights within the limit, in a valid form.
    assert outcomes["success"] == 8 and outcomes["error"] == len(cases) - 8


def test_non_finite_decoding_or_vocoding_is_one_error_not_nan_audio(tiny_checkpoint):
    """Whatever drives the model off its range (here a NaN weight, as in a broken checkpoint), the
    result is an error naming the text, never NaN samples handed on to a wav."""
    broken = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    with torch.no_grad():
        broken.model.decoder.mel_projection.bias[0] = float("nan")
    with pytest.raises(GstTtsError, match="NaN or infinite mel values for 'hello.'") as caught:
        broken.synthesize("Hello.", decoding=BOUND)
    one_line(caught.value)
    fine = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    fine.vocoder = lambda log_mel: np.full(100, np.inf, np.float32)
    with pytest.raises(GstTtsError, match="vocoder gave NaN or infinite samples") as caught:
        fine.synthesize("Hello.", decoding=BOUND)
    one_line(caught.value)
    assert np.isfinite(fine.synthesize("Hello.", decoding=BOUND, vocode=False).mel).all()


def test_per_text_styles_mix_good_and_bad(synth, tmp_path):
    ref = tmp_path / "ref.wav"
    sf.write(ref, tone(1.0), RATE)
    bad_styles = [
        ["not a style"],
        [Style(weights={1: float("nan")})],
        [Style(dials={9: 1.0})],
        [Style(mix={ref: float("inf")})],
        [Style(mix={ref: -1.0})],
        [Style(mix={ref: 0.0})],
        [Style(mix=[])],
        [Style(mix="a.wav=1")],
        [Style(mix={ref})],
        [Style(mix=[(ref, 1.0, 2.0)])],
        [Style(reference=np.zeros(100))],
        [Style(reference=(np.zeros(100),))],
        [Style(reference=12)],
    ]
    for styles in bad_styles:
        with pytest.raises(GstTtsError) as caught:
            synth.synthesize(["Only one."], styles=styles, decoding=BOUND)
        one_line(caught.value)
    # Mix weights near float's largest sum to inf; scaled first, they weigh equally.
    other = tmp_path / "other.wav"
    sf.write(other, tone(1.0, freq=400.0, amplitude=0.8), RATE)
    r = synth.synthesize("Mixed.", style_mix={ref: 1e308, other: 1e308}, decoding=BOUND, vocode=False)
    expected = (synth.styles.reference_weights(ref) + synth.styles.reference_weights(other)) / 2
    np.testing.assert_allclose(r.style_weights, expected.numpy(), atol=1e-6)


# ------------------------------------------------------------------ reference audio


def square(seconds: float, rate: int) -> np.ndarray:
    """A full-scale int16 square wave at 200 Hz."""
    t = np.arange(int(seconds * rate)) / rate
    return np.where(np.sin(2 * np.pi * 200 * t) >= 0, 32767, -32768).astype(np.int16)


def syllables(per_second: float, rate: int, seconds: float = 3.0) -> np.ndarray:
    """A voice swelling ``per_second`` times a second: a reference with a tempo to read (a slow one
    asks for the longest retiming, a fast one for the shortest)."""
    t = np.arange(int(seconds * rate)) / rate
    voice = sum(np.sin(2 * np.pi * 150.0 * k * t) / k for k in range(1, 16))
    return (0.2 * voice * (0.05 + 0.95 * (0.5 - 0.5 * np.cos(2 * np.pi * per_second * t)))).astype(np.float32)


def reference_cases(tmp_path: Path) -> dict[str, object]:
    rng = np.random.default_rng(0)
    noise = (0.3 * rng.standard_normal(RATE)).astype(np.float32)
    files = {
        "silence.wav": (np.zeros(RATE, np.float32), RATE),
        "noise.wav": (noise, RATE),
        "nan.wav": (np.full(RATE, np.nan, np.float32), RATE),
        "one sample.wav": (np.full(1, 0.5, np.float32), RATE),
        "no samples.wav": (np.zeros(0, np.float32), RATE),
        "square int16.wav": (square(1.0, RATE), RATE),
        "six channels.wav": ((0.2 * rng.standard_normal((RATE, 6))).astype(np.float32), RATE),
        "96 kHz.wav": ((0.3 * rng.standard_normal(96_000)).astype(np.float32), 96_000),
        "22051 Hz.wav": (noise, 22_051),
        "1 Hz.wav": (noise[:10], 1),
        "11 minutes at 1 kHz.wav": ((0.3 * rng.standard_normal(660_000)).astype(np.float32), 1_000),
        "syllables, slow.wav": (syllables(1.5, RATE), RATE),
        "syllables, fast.wav": (syllables(9.0, RATE), RATE),
        "nan, line\nbreak.wav": (np.full(RATE, np.nan, np.float32), RATE),
    }
    cases: dict[str, object] = {}
    for name, (samples, rate) in files.items():
        path = tmp_path / name
        sf.write(path, samples, rate, subtype="PCM_16" if samples.dtype == np.int16 else "FLOAT")
        cases[f"file {name!r}"] = path
    (tmp_path / "empty.wav").write_bytes(b"")
    (tmp_path / "text.wav").write_text("RIFF but not really\n")
    cases.update(
        {
            "file empty": tmp_path / "empty.wav",
            "file not audio": tmp_path / "text.wav",
            "a folder": tmp_path,
            "missing": tmp_path / "missing.wav",
            "missing, with a newline": tmp_path / "a\nb.wav",
            "NUL in the path": "a\x00b.wav",
            "silence": (np.zeros(RATE, np.float32), RATE),
            "noise": (noise, RATE),
            "noise 16 kHz": (noise, 16_000),
            "clipped float (x10)": (10 * noise, RATE),
            "nan samples": (np.r_[noise, np.nan], RATE),
            "inf samples": (np.r_[noise, np.inf], RATE),
            "1 sample": (np.ones(1, np.float32), RATE),
            "0 samples": (np.zeros(0, np.float32), RATE),
            "square int16": (square(1.0, RATE), RATE),
            "uint8": ((128 + 100 * np.sign(noise)).astype(np.uint8), RATE),
            "six channels": (rng.standard_normal((RATE, 6)) * 0.2, RATE),
            "six channels first": (rng.standard_normal((6, RATE)) * 0.2, RATE),
            "nine channels": (rng.standard_normal((RATE, 9)), RATE),
            "96 kHz": (rng.standard_normal(96_000) * 0.3, 96_000),
            "22051 Hz": (noise, 22_051),
            "44101 Hz": (noise, 44_101),
            "rate 0": (noise, 0),
            "rate -8000": (noise, -8000),
            "rate nan": (noise, float("nan")),
            "rate None": (noise, None),
            "rate '22050'": (noise, "22050"),
            "rate 22050.5": (noise, 22050.5),
            "rate 1e9": (noise, 10**9),
            "rate True": (noise, True),
            "rate 22050.0": (noise, 22050.0),
            "3-d": (np.zeros((2, 2, 2)), RATE),
            "strings": (np.array(["a", "b"]), RATE),
            "complex": (noise.astype(np.complex64), RATE),
            "bools": (noise > 0, RATE),
            "ragged": ([[0.1], [0.1, 0.2]], RATE),
            "a list": (noise.tolist(), RATE),
            "11 minutes at 1 kHz": (np.zeros(660_000, np.float32), 1_000),
        }
    )
    return cases


SUCCEEDS = {
    "file 'noise.wav'",
    "file 'square int16.wav'",
    "file 'six channels.wav'",
    "file '96 kHz.wav'",
    "file '22051 Hz.wav'",
    "noise",
    "noise 16 kHz",
    "clipped float (x10)",
    "square int16",
    "uint8",
    "six channels",
    "six channels first",
    "96 kHz",
    "22051 Hz",
    "44101 Hz",
    "rate 22050.0",
    "a list",
    "file 'syllables, slow.wav'",
    "file 'syllables, fast.wav'",
}


def test_hostile_reference_audio_succeeds_finite_or_is_one_audio_error(synth, tmp_path):
    outcomes: Counter[str] = Counter()
    succeeded = set()
    cases = reference_cases(tmp_path)
    for name, reference in cases.items():
        try:
            r = synth.synthesize("Read in this style.", reference=reference, decoding=BOUND, seed=0)
        except AudioError as exc:
            one_line(exc)
            outcomes["AudioError"] += 1
            continue
        check_result(synth, r)
        np.testing.assert_allclose(r.style_weights.sum(-1), 1.0, atol=1e-5)  # a softmax per head
        outcomes["success"] += 1
        succeeded.add(name)
    print(f"references: {len(cases)} cases: {dict(outcomes)}")
    assert succeeded == SUCCEEDS


def test_ten_minutes_at_8_khz_are_encoded_in_windows(synth, monkeypatch):
    """The longest reference: read, resampled and encoded in windows of the checkpoint's length,
    never as one 25,800-frame pass; work bounded by its windows."""
    seconds, rate = MAX_REFERENCE_SECONDS, 8_000
    samples = (0.3 * np.random.default_rng(1).standard_normal(int(seconds * rate))).astype(np.float32)
    monkeypatch.setattr(synth.styles, "reference_window", 200)
    shapes = []
    hook = synth.model.gst.reference_encoder.register_forward_pre_hook(
        lambda _, args: shapes.append(tuple(args[0].shape))
    )
    try:
        weights = synth.styles.reference_weights((samples, rate))
    finally:
        hook.remove()
    assert torch.isfinite(weights).all() and weights.shape == (N_HEADS, N_TOKENS)
    frames = math.ceil(seconds * RATE / synth.audio_config.hop_length)
    ((n_windows, window, n_mels),) = shapes
    assert window == 200 and n_mels == synth.model.n_mels
    assert 2 * (frames - 200) // 200 <= n_windows <= 2 * frames // 200 + 2  # half-overlapping windows
    with pytest.raises(AudioError, match="at most 600 s") as caught:
        synth.styles.reference_weights((np.zeros(int(seconds * rate) + 1, np.float32), rate))
    one_line(caught.value)


# ------------------------------------------------------------------ the command line

GST_TTS = Path(sys.executable).with_name("gst-tts")
CLI_FAST = ["--max-seconds", str(seconds_for_steps(3)), "--griffin-lim-iters", "2"]


def run_cli(checkpoint: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.run(
        [str(GST_TTS), "synthesize", "--checkpoint", str(checkpoint), "--out", str(out), *CLI_FAST, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def check_cli_error(result: subprocess.CompletedProcess, out_dir: Path) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("gst-tts synthesize: error:"), result.stderr
    assert not out_dir.exists() or not any(out_dir.iterdir())  # nothing written, not even a temporary file


# Each run starts a Python with torch (seconds); the other cases run in-process below.
@pytest.mark.parametrize("case", ["hostile but readable", "only punctuation"])
def test_cli_subprocess_hostile_text(case, tiny_checkpoint, tmp_path):
    out_dir = tmp_path / "out"
    text = {
        "hostile but readable": "Ｈｅｌｌｏ 👋🏽 שלום e\u0301\u200b 1,00\u2028$3.50 Mr.\tO'Neil\u202e! ⣿",
        "only punctuation": "?!...—;: «»",
    }[case]
    result = run_cli(tiny_checkpoint, out_dir / "x.wav", "--text", text)
    if case == "hostile but readable":
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
        assert sorted(p.name for p in out_dir.iterdir()) == ["x.json", "x.wav"]
        audio, rate = sf.read(out_dir / "x.wav")
        assert rate == RATE and audio.size and np.isfinite(audio).all()
    else:
        check_cli_error(result, out_dir)


def cli_in_process(capsys, *args: str) -> tuple[int, str]:
    rc = main(["synthesize", *CLI_FAST, *args])
    return rc, capsys.readouterr().err


@pytest.mark.parametrize(
    "case",
    [
        "nan reference",
        "weight 1e30",
        "dial nan",
        "dial past the limit",
        "empty text",
        "whitespace text",
        "past the length limit",
        "punctuation line 20",
        "invalid UTF-8",
        "1 Hz reference",
        "pause inf",
        "seed past 64 bits",
    ],
)
def test_cli_in_process_hostile_input_is_one_line_exit_2(case, tiny_checkpoint, tmp_path, capsys):
    out_dir = tmp_path / "out"
    nan_wav, slow_wav, lines = tmp_path / "nan.wav", tmp_path / "1hz.wav", tmp_path / "lines.txt"
    sf.write(nan_wav, np.full(RATE, np.nan, np.float32), RATE, subtype="FLOAT")
    sf.write(slow_wav, np.ones(10, np.float32) * 0.5, 1)
    lines.write_text("Fine line.\n" * 19 + "?!?\n")
    (tmp_path / "bad.txt").write_bytes(b"Fine.\n\xff\xfe bad bytes\n")
    args = {
        "nan reference": ["--text", "Hi.", "--reference", str(nan_wav)],
        "weight 1e30": ["--text", "Hi.", "--style-weights", "1=1e30"],
        "dial nan": ["--text", "Hi.", "--style-dials", "1:2=nan"],
        "past the length limit": ["--text", "a" * (MAX_TEXT_CHARS + 1)],
        "dial past the limit": ["--text", "Hi.", "--style-dials", "1:2=1000"],
        "empty text": ["--text", ""],
        "whitespace text": ["--text", " \u2028\t "],
        "punctuation line 20": ["--text-file", str(lines)],
        "invalid UTF-8": ["--text-file", str(tmp_path / "bad.txt")],
        "1 Hz reference": ["--text", "Hi.", "--reference", str(slow_wav)],
        "pause inf": ["--text", "Hi.", "--pause", "inf"],
        "seed past 64 bits": ["--text", "Hi.", "--seed", str(2**64)],
    }[case]
    out = out_dir if "--text-file" in args else out_dir / "x.wav"
    rc, err = cli_in_process(capsys, "--checkpoint", str(tiny_checkpoint), "--out", str(out), *args)
    assert (
        rc == 2 and err.count("\n") == 1 and err.startswith("gst-tts synthesize: error:") and "Traceback" not in err
    ), err
    if case == "punctuation line 20":
        assert "lines.txt:20:" in err  # refused up front: the 16 lines of the first batch were not written
    assert not out_dir.exists() or not any(out_dir.iterdir())


def test_cli_text_file_lines_are_newline_lines(tiny_checkpoint, tmp_path, capsys):
    """A form feed or U+2028 inside a line does not start a new utterance: wav N is line N."""
    lines = tmp_path / "lines.txt"
    lines.write_text("First\u2028still first.\r\nSecond\x0cstill second.\n\nFourth.\n")
    rc, err = cli_in_process(
        capsys, "--checkpoint", str(tiny_checkpoint), "--out", str(tmp_path / "out"), "--text-file", str(lines)
    )
    assert rc == 0, err
    assert sorted(p.name for p in (tmp_path / "out").glob("*.wav")) == ["0001.wav", "0002.wav", "0004.wav"]
