"""The Python synthesis API (gst_tts.inference.synthesizer) on a tiny random-weight checkpoint.

The random model never stops on its token, so every call bounds decoding with a small
``max_seconds`` (``decoding=FAST``) to stay fast.
"""

from __future__ import annotations

import json
import logging

from conftest import seconds_for_steps, tiny_model, tone
import numpy as np
import pytest
import soundfile as sf
import torch

from gst_tts.errors import AudioError, CheckpointError, GstTtsError, TextError
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.results import SynthesisResult
from gst_tts.inference.style import Style
from gst_tts.inference.synthesizer import INT8_MIN_RNN_DIM, Synthesizer, int8_by_default
from gst_tts.audio.features import AudioConfig, MelStats
from gst_tts.model import int8_weight
from gst_tts.text.symbols import SymbolTable
from gst_tts.checkpoints.acoustic import load_checkpoint, save_checkpoint

STEPS = 12
FAST = DecodingConfig(max_seconds=seconds_for_steps(STEPS))


@pytest.fixture(scope="module")
def synth(tmp_path_factory) -> Synthesizer:
    from conftest import write_tiny_checkpoint

    path = write_tiny_checkpoint(tmp_path_factory.mktemp("synth") / "tiny.pt")
    return Synthesizer.from_checkpoint(path, device="cpu")


@pytest.fixture
def ref_wav(tmp_path):
    path = tmp_path / "ref.wav"
    sf.write(path, tone(1.0, 16000, 180.0), 16000, subtype="PCM_16")
    return path


def test_single_text_result_fields(synth):
    r = synth.synthesize("Hello world.", decoding=FAST, seed=0)
    assert isinstance(r, SynthesisResult)
    n_symbols = len(synth.symbols.encode("Hello world."))
    assert r.audio.dtype == np.float32 and r.audio.ndim == 1 and r.audio.size > 0
    assert r.sample_rate == synth.sample_rate
    assert r.alignment.shape == (STEPS, n_symbols)  # decoder steps × input symbols (eos included)
    assert r.mel.shape == (STEPS * synth.model.reduction_factor, 80)
    assert r.stop_probs.shape == (STEPS,)
    assert r.stop_reason == "max_steps"  # random weights never stop on the token
    assert r.style_weights.shape == (synth.n_heads, synth.n_tokens)
    np.testing.assert_allclose(r.style_weights, 1.0 / synth.n_tokens)  # the documented neutral default
    assert r.health.decoder_steps == STEPS and r.health.input_symbols == n_symbols
    assert "".join(r.input_labels) == "hello world.~"
    assert r.cleaned_text == "hello world."
    assert len(r.chunks) == 1 and r.chunks[0].stop_reason == "max_steps"
    assert "hit the step bound" in r.problems()
    json.dumps(r.to_dict())  # the sidecar content is JSON-ready


def test_list_keeps_input_order(synth):
    texts = ["A much longer sentence than the others here.", "Hi.", "Medium length one."]
    results = synth.synthesize(texts, decoding=FAST)
    assert [r.text for r in results] == texts
    assert [r.alignment.shape[1] for r in results] == [len(synth.symbols.encode(t)) for t in texts]
    assert synth.synthesize([], decoding=FAST) == []


def test_batched_equals_one_by_one_without_dropout(synth):
    """Padding and masking are right: with the prenet dropout off, a text decodes the same in a
    batch of different lengths as alone."""
    texts = ["Short.", "A rather longer sentence, with a clause.", "Mid size text."]
    prenet = synth.model.decoder.prenet
    prenet.dropout_at_inference = False
    try:
        batched = synth.synthesize(texts, decoding=FAST, vocode=False)
        single = [synth.synthesize(t, decoding=FAST, vocode=False) for t in texts]
    finally:
        prenet.dropout_at_inference = True
    for b, s in zip(batched, single):
        np.testing.assert_allclose(b.alignment, s.alignment, atol=1e-5)
        np.testing.assert_allclose(b.mel, s.mel, atol=1e-4)


@pytest.mark.parametrize("end", ["stop_token", "step_bound"])
def test_batched_equals_one_by_one_when_texts_end_at_different_steps(synth, monkeypatch, end):
    """A text that ends early in a batch keeps being decoded while the others run on; those
    frames are not speech and must not reach its mel through the postnet's context."""
    texts = ["Short.", "A rather longer sentence, with a clause.", "Mid size text."]
    decoder = synth.model.decoder
    monkeypatch.setattr(decoder.prenet, "dropout_at_inference", False)
    options = dict(
        decoding=DecodingConfig(max_frames_per_symbol=1.0)
    )  # the step bound: about half a step per symbol at r=2
    if end == "stop_token":
        # The random model never stops; make its stop token fire after a number of steps that
        # depends on the text (its symbol count, read off the padding mask).
        schedule = {}
        infer_steps = decoder.infer_steps

        def infer_with_schedule(
            memory, padding_mask, max_steps, *, stop_threshold, attention_window, stop_end_tolerance
        ):
            symbols = torch.full(memory.shape[:1], memory.shape[1]) if padding_mask is None else (~padding_mask).sum(1)
            schedule.update(step=0, stop_at=symbols.cpu() // 3 + 1)
            # The schedule alone decides when the token fires: the end tolerance would hold it back.
            return infer_steps(
                memory,
                padding_mask,
                max_steps,
                stop_threshold=stop_threshold,
                attention_window=attention_window,
                stop_end_tolerance=None,
            )

        def stop_hook(module, inputs, output):
            schedule["step"] += 1
            return torch.where(schedule["step"] >= schedule["stop_at"], 50.0, -50.0).to(output)[:, None]

        monkeypatch.setattr(decoder, "infer_steps", infer_with_schedule)
        handle = decoder.stop_projection.register_forward_hook(stop_hook)
        options = dict(decoding=DecodingConfig(max_seconds=seconds_for_steps(100)))
    try:
        batched = synth.synthesize(texts, vocode=False, **options)
        single = [synth.synthesize(t, vocode=False, **options) for t in texts]
    finally:
        if end == "stop_token":
            handle.remove()
    assert len({b.n_frames for b in batched}) == len(texts)  # every text ends at its own step
    assert all(b.stop_reason == ("stop_token" if end == "stop_token" else "max_steps") for b in batched)
    for b, s in zip(batched, single):
        assert b.n_frames == s.n_frames and b.n_frames % synth.model.reduction_factor == 0
        np.testing.assert_allclose(b.alignment, s.alignment, atol=1e-5)
        np.testing.assert_allclose(b.mel, s.mel, atol=1e-4)


def test_seed_is_repeatable_and_leaves_global_rng_alone(synth):
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    a = synth.synthesize("Seeded text.", decoding=FAST, seed=7)
    after = torch.rand(3)
    b = synth.synthesize("Seeded text.", decoding=FAST, seed=7)
    c = synth.synthesize("Seeded text.", decoding=FAST, seed=8)
    assert torch.equal(after, expected)
    np.testing.assert_array_equal(a.audio, b.audio)
    np.testing.assert_array_equal(a.mel, b.mel)
    assert not np.array_equal(a.mel, c.mel)  # the prenet dropout really is random


def test_style_weights_mapping_per_head_and_array(synth):
    w = synth.styles.weights_tensor({1: 0.5, (0, 2): -0.3})
    expected = torch.zeros(synth.n_heads, synth.n_tokens)
    expected[:, 1] = 0.5
    expected[0, 2] = -0.3
    assert torch.equal(w, expected)
    assert torch.equal(
        synth.styles.weights_tensor(np.arange(synth.n_tokens)),
        torch.arange(synth.n_tokens).float().expand(synth.n_heads, -1),
    )
    r = synth.synthesize("Styled.", style_weights={3: 1.0}, decoding=FAST)
    assert r.style_weights[:, 3].tolist() == [1.0] * synth.n_heads and r.style_weights.sum() == synth.n_heads
    # Different weights give a different output with the same seed.
    n = synth.synthesize("Styled.", decoding=FAST, seed=1, vocode=False)
    s = synth.synthesize("Styled.", style_weights={3: 1.0}, decoding=FAST, seed=1, vocode=False)
    assert not np.allclose(n.mel, s.mel)


@pytest.mark.parametrize(
    "bad", [{9: 1.0}, {-1: 1.0}, {(5, 0): 1.0}, {"x": 1.0}, {1: "abc"}, {1: float("nan")}, {}, np.zeros(3)]
)
@pytest.mark.parametrize("option", ["style_weights", "style_dials"])
def test_bad_style_weights_and_dials(synth, bad, option):
    with pytest.raises(GstTtsError):
        synth.synthesize("Hello.", **{option: bad}, decoding=FAST)


def test_style_dials_move_one_head_from_neutral_toward_the_token(synth):
    neutral = synth.styles.neutral()
    assert torch.equal(synth.styles.dial_weights({(1, 3): 0.0}), neutral)
    half = synth.styles.dial_weights({(1, 3): 0.5})
    assert torch.equal(half[0], neutral[0])  # other heads stay neutral
    onehot = torch.zeros(synth.n_tokens)
    onehot[3] = 1.0
    torch.testing.assert_close(half[1], 0.5 * neutral[1] + 0.5 * onehot)
    torch.testing.assert_close(synth.styles.dial_weights({(1, 3): 1.0})[1], onehot)
    torch.testing.assert_close(half.sum(-1), torch.ones(synth.n_heads))  # a dial keeps each head's total weight
    # Every head, and several dials adding their moves (here cancelling out).
    every = synth.styles.dial_weights({3: 1.0})
    torch.testing.assert_close(every, onehot.expand(synth.n_heads, -1))
    torch.testing.assert_close(
        synth.styles.dial_weights({3: 0.5, 2: 0.5})[0], 0.5 * torch.eye(synth.n_tokens)[[2, 3]].sum(0)
    )
    r = synth.synthesize("Dialled.", style_dials={(1, 3): 0.5}, decoding=FAST, vocode=False)
    np.testing.assert_allclose(r.style_weights, half.numpy())
    with pytest.raises(GstTtsError, match="at most one"):
        synth.synthesize("Dialled.", style_dials={3: 1.0}, style_weights={1: 1.0}, decoding=FAST)


def test_reference_path_and_stereo_array_at_any_rate(synth, ref_wav):
    from_path = synth.styles.reference_weights(ref_wav)
    assert from_path.shape == (synth.n_heads, synth.n_tokens)
    torch.testing.assert_close(from_path.sum(-1), torch.ones(synth.n_heads))  # softmax per head
    mono = tone(1.0, 44100, 180.0)
    stereo = np.stack([mono, mono], axis=1)
    torch.testing.assert_close(
        synth.styles.reference_weights((stereo, 44100)), synth.styles.reference_weights((mono, 44100))
    )
    torch.testing.assert_close(
        synth.styles.reference_weights((stereo.T, 44100)), synth.styles.reference_weights((mono, 44100))
    )
    r = synth.synthesize(["One.", "Two."], reference=ref_wav, decoding=FAST)
    for x in r:
        np.testing.assert_allclose(x.style_weights, from_path.numpy(), atol=1e-6)


def test_long_references_are_encoded_in_windows_of_the_checkpoints_length(tmp_path):
    from conftest import write_tiny_checkpoint

    path = write_tiny_checkpoint(tmp_path / "tiny.pt")
    ckpt = load_checkpoint(path)
    ckpt["reference_frames"] = 60
    save_checkpoint(tmp_path / "windowed.pt", ckpt)
    whole = Synthesizer.from_checkpoint(path, device="cpu")
    windowed = Synthesizer.from_checkpoint(tmp_path / "windowed.pt", device="cpu")
    assert whole.styles.reference_window is None and windowed.styles.reference_window == 60
    samples = tone(2.0, 22050, 150.0) * np.linspace(0.2, 1.0, 44100, dtype=np.float32)  # ~172 frames, changing
    mel = windowed.styles.reference_mel((samples, 22050))
    windows = windowed.styles.reference_windows(mel)
    # Half-overlapping windows of 60 frames from the start, the last one ending with the reference.
    starts = [*range(0, mel.shape[0] - 60 + 1, 30), mel.shape[0] - 60]
    assert len(starts) == 5
    torch.testing.assert_close(windows, torch.stack([mel[s : s + 60] for s in starts]))
    gst = windowed.model.gst
    with torch.no_grad():
        _, expected = gst.token_layer(gst.reference_encoder(windows).mean(0, keepdim=True))
        _, whole_expected = gst(mel[None])
    torch.testing.assert_close(windowed.styles.reference_weights((samples, 22050)), expected[0])
    torch.testing.assert_close(whole.styles.reference_weights((samples, 22050)), whole_expected[0])
    assert not torch.allclose(expected[0], whole_expected[0])
    # A reference no longer than the window is encoded whole either way.
    short = samples[: 55 * 256]
    torch.testing.assert_close(
        windowed.styles.reference_weights((short, 22050)), whole.styles.reference_weights((short, 22050))
    )
    ckpt["reference_frames"] = 0
    save_checkpoint(tmp_path / "bad.pt", ckpt)
    with pytest.raises(CheckpointError, match="reference_frames"):
        Synthesizer.from_checkpoint(tmp_path / "bad.pt", device="cpu")


def test_style_mix_is_the_weighted_average(synth, tmp_path):
    a, b = tmp_path / "a.wav", tmp_path / "b.wav"
    sf.write(a, tone(1.0, 22050, 120.0), 22050)
    sf.write(b, tone(1.0, 22050, 400.0, amplitude=0.8) * np.linspace(0, 1, 22050, dtype=np.float32), 22050)
    wa, wb = synth.styles.reference_weights(a), synth.styles.reference_weights(b)
    r = synth.synthesize("Mixed.", style_mix={a: 3.0, b: 1.0}, decoding=FAST, vocode=False)
    np.testing.assert_allclose(r.style_weights, (0.75 * wa + 0.25 * wb).numpy(), atol=1e-6)
    with pytest.raises(GstTtsError, match="negative"):
        synth.synthesize("Mixed.", style_mix={a: 1.0, b: -1.0}, decoding=FAST)
    with pytest.raises(GstTtsError, match="at most one"):
        synth.synthesize("Mixed.", reference=a, style_weights={1: 1.0}, decoding=FAST)


def test_bad_references(synth, tmp_path):
    silent, short, notaudio = tmp_path / "silent.wav", tmp_path / "short.wav", tmp_path / "text.wav"
    sf.write(silent, np.zeros(22050, dtype=np.float32), 22050)
    sf.write(short, tone(0.3), 22050)
    notaudio.write_text("not audio at all")
    for ref, message in [
        (silent, "silent"),
        (short, "at least 0.5 s"),
        (notaudio, "not readable as audio"),
        (tmp_path / "missing.wav", "not found"),
        ((np.zeros(8000), 16000), "silent"),
    ]:
        with pytest.raises(AudioError, match=message):
            synth.synthesize("Hello.", reference=ref, decoding=FAST)


@pytest.mark.parametrize("text", ["", "   ", "@@@ ###", "..."])
def test_unusable_text(synth, text):
    with pytest.raises(TextError):
        synth.synthesize(text, decoding=FAST)
    with pytest.raises(TextError):  # a bad text anywhere in a list fails the whole call, before decoding
        synth.synthesize(["Fine text.", text], decoding=FAST)


def test_long_text_is_split_batched_and_joined_whole(synth):
    sentence = "The old house on the hill, which nobody had visited for years, stood silent; its windows were dark. "
    paragraph = (sentence * 21)[:2000]
    r = synth.synthesize(
        paragraph, decoding=DecodingConfig(max_seconds=seconds_for_steps(4)), max_chunk_chars=150, pause_s=0.1
    )
    assert len(r.chunks) > 10
    assert all(len(c.text) <= 150 for c in r.chunks)
    assert " ".join(c.text for c in r.chunks) == r.cleaned_text  # nothing lost
    n_symbols = sum(len(c.text) + 1 for c in r.chunks)  # + eos per chunk
    assert r.alignment.shape == (4 * len(r.chunks), n_symbols)
    # Block-diagonal: the first chunk's steps never attend to the second chunk's symbols.
    first = len(r.chunks[0].text) + 1
    assert np.all(r.alignment[:4, first:] == 0) and np.all(r.alignment[4:8, :first] == 0)
    assert r.mel.shape[0] == sum(c.n_frames for c in r.chunks)
    # The audio holds every chunk, separated by runs of exact silence of the pause length.
    pause = round(0.1 * r.sample_rate)
    zero = np.concatenate([[0], (r.audio == 0).astype(np.int8), [0]])
    edges = np.flatnonzero(np.diff(zero))
    runs = edges[1::2] - edges[::2]
    assert int((runs >= pause).sum()) == len(r.chunks) - 1
    assert len(r.audio) > (len(r.chunks) - 1) * pause + (r.mel.shape[0] - len(r.chunks)) * r.hop_length * 0.99
    assert r.problems()[0].startswith("chunk 1/")
    assert len(r.to_dict()["chunks"]) == len(r.chunks)


def test_per_text_styles_batched_equal_one_by_one_without_dropout(synth, ref_wav, tmp_path, monkeypatch):
    """Each text in its own style, decoded in one batch, comes out as when synthesized alone in that style."""
    other = tmp_path / "other.wav"
    sf.write(other, tone(1.2, 22050, 300.0, amplitude=0.6), 22050)
    texts = ["Short.", "A rather longer sentence, with a clause.", "Mid size text.", "Four."]
    styles = [
        Style(reference=ref_wav),
        Style(weights={3: 1.0, (0, 1): -0.5}),
        None,
        Style(mix={ref_wav: 1.0, other: 3.0}),
    ]
    monkeypatch.setattr(synth.model.decoder.prenet, "dropout_at_inference", False)
    batched = synth.synthesize(texts, styles=styles, decoding=FAST, vocode=False)
    single = [synth.synthesize(t, styles=[s], decoding=FAST, vocode=False) for t, s in zip(texts, styles)]
    for b, s, style in zip(batched, single, styles):
        np.testing.assert_allclose(b.style_weights, s.style_weights, atol=1e-6)
        np.testing.assert_allclose(b.alignment, s.alignment, atol=1e-5)
        np.testing.assert_allclose(b.mel, s.mel, atol=1e-4)
    # The styles really differ, so a mix-up of which text got which style would show.
    assert len({b.style_weights.round(4).tobytes() for b in batched}) == len(texts)
    np.testing.assert_allclose(batched[0].style_weights, synth.styles.reference_weights(ref_wav).numpy(), atol=1e-6)
    np.testing.assert_allclose(batched[2].style_weights, 1.0 / synth.n_tokens)
    # The same as the one-style-for-all options give.
    alone = synth.synthesize(texts[1], style_weights={3: 1.0, (0, 1): -0.5}, decoding=FAST, vocode=False)
    np.testing.assert_allclose(batched[1].mel, alone.mel, atol=1e-4)


def test_a_request_reads_each_reference_file_once(synth, ref_wav, tmp_path, monkeypatch):
    """Token weights, the tempo and the F0 spread of a reference come from one decoding of its
    file, however many texts and styles name it."""
    import soundfile

    other = tmp_path / "other.wav"
    soundfile.write(other, *soundfile.read(ref_wav))
    decoded = []
    read = soundfile.read
    monkeypatch.setattr(soundfile, "read", lambda path, *a, **k: decoded.append(str(path)) or read(path, *a, **k))
    monkeypatch.setattr(synth.vocoder, "sets_f0_range", True, raising=False)  # the spread is read too
    monkeypatch.setattr(synth, "vocode_chunk", lambda log_mel, f0_target, rng: np.zeros(8, dtype=np.float32))
    styles = [Style(reference=ref_wav), Style(mix={ref_wav: 1.0, other: 1.0}), Style(reference=ref_wav, strength=2)]
    results = synth.synthesize(
        ["One.", "Two.", "Three."], styles=styles, transfer_tempo=True, transfer_f0_range=True, decoding=FAST
    )
    assert sorted(decoded) == sorted([str(ref_wav), str(other)]) and len(results) == 3
    decoded.clear()
    synth.synthesize(["One.", "Two."], reference=ref_wav, transfer_tempo=True, transfer_f0_range=True, decoding=FAST)
    assert decoded == [str(ref_wav)]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(styles=[None]), "one style per text: 1 for 2"),
        (dict(styles=Style()), "one style per text"),
        (dict(styles=[None, None], style_weights={1: 1.0}), "either styles"),
        (dict(styles=[None, {1: 1.0}]), "must be a Style, a ResolvedStyle or None"),
        (dict(names=["only one"]), "1 names for 2 texts"),
        (dict(decoding={"max_seconds": 3}), "DecodingConfig"),
    ],
)
def test_bad_per_text_styles_and_options(synth, kwargs, message):
    with pytest.raises(GstTtsError, match=message):
        synth.synthesize(["First.", "Second."], **{"decoding": FAST, **kwargs})


def test_a_style_is_one_option_at_most():
    with pytest.raises(GstTtsError, match="at most one"):
        Style(reference="x.wav", weights={1: 1.0})


def test_decoding_config_bounds_the_output_and_is_recorded(synth):
    r = synth.synthesize("Bounded text here.", decoding=DecodingConfig(max_seconds=seconds_for_steps(5)), vocode=False)
    assert r.alignment.shape[0] == 5 and r.stop_reason == "max_steps"
    assert r.decoding == DecodingConfig(max_seconds=seconds_for_steps(5))
    assert r.to_dict()["decoding"] == {
        "stop_threshold": 0.5,
        "max_frames_per_symbol": 20.0,
        "max_seconds": seconds_for_steps(5),
        "attention_window": None,
        "stop_end_tolerance": 3,
    }
    # A per-symbol bound below the absolute cap wins: ceil(1.0 * symbols / r) steps.
    n_symbols = len(synth.symbols.encode("Bounded text here."))
    r = synth.synthesize("Bounded text here.", decoding=DecodingConfig(max_frames_per_symbol=1.0), vocode=False)
    assert r.alignment.shape[0] == -(-n_symbols // synth.model.reduction_factor)
    # A threshold the random model's stop probability always exceeds ends every text after one step,
    # where the stop token may count anywhere; by default it waits for the attention to near the end.
    r = synth.synthesize(
        "Bounded text here.", decoding=DecodingConfig(stop_threshold=1e-9, stop_end_tolerance=None), vocode=False
    )
    assert r.alignment.shape[0] == 1 and r.stop_reason == "stop_token"
    r = synth.synthesize("Bounded text here.", decoding=DecodingConfig(stop_threshold=1e-9), vocode=False)
    peaks = r.alignment.argmax(1)
    assert r.alignment.shape[0] > 1 and peaks[-1] >= n_symbols - 1 - 3 and (peaks[:-1] < n_symbols - 1 - 3).all()


def test_attention_problems_are_logged_with_the_utterance_name(synth, caplog):
    with caplog.at_level(logging.WARNING, logger="gst_tts.inference.synthesizer"):
        synth.synthesize(["First.", "Second."], decoding=FAST, names=["utt-A", "utt-B"], vocode=False)
    messages = [r.getMessage() for r in caplog.records]
    assert any("utt-A" in m and "hit the step bound" in m for m in messages)
    assert any("utt-B" in m for m in messages)


def test_cuda_requested_without_cuda(tiny_checkpoint):
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    with pytest.raises(GstTtsError, match="CUDA"):
        Synthesizer.from_checkpoint(tiny_checkpoint, device="cuda")


def test_int8_is_the_default_on_cpu_for_large_decoder_lstms_only(monkeypatch):
    symbols, stats = SymbolTable(), MelStats(torch.zeros(80), torch.ones(80))
    small = tiny_model(len(symbols))
    large = tiny_model(len(symbols), attention_rnn_dim=INT8_MIN_RNN_DIM, decoder_rnn_dim=64)
    assert not int8_by_default(small, torch.device("cpu"))
    assert int8_by_default(large, torch.device("cpu"))
    assert not int8_by_default(large, torch.device("cuda"))  # the int8 kernels are CPU only
    assert Synthesizer(large, symbols, AudioConfig(), stats).model.decoder.int8_inference
    assert not Synthesizer(large, symbols, AudioConfig(), stats, int8=False).model.decoder.int8_inference
    assert not Synthesizer(small, symbols, AudioConfig(), stats).model.decoder.int8_inference
    assert Synthesizer(small, symbols, AudioConfig(), stats, int8=True).model.decoder.int8_inference
    # Without a quantized engine the default quietly stays float; asking for int8 is an error.
    monkeypatch.setattr(int8_weight, "_quantized_engine", lambda: "none")
    assert not Synthesizer(large, symbols, AudioConfig(), stats).model.decoder.int8_inference
    with pytest.raises(GstTtsError, match="quantized"):
        Synthesizer(large, symbols, AudioConfig(), stats, int8=True)
