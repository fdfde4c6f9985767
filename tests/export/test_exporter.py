"""Parity of the exported graphs with the PyTorch model, for every attention kind: teacher-forced
decoder steps, free-running decoding with the same dropout masks, token weights of a reference; and
what the exporter refuses."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
import torch
from torch.nn import functional as F

from gst_tts.audio.features import AudioConfig, MelStats
from gst_tts.cli import main
from gst_tts.errors import ExportError
from gst_tts.export import export_synthesizer
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.model.attention import ATTENTION_KINDS, LocationSensitiveAttention
from gst_tts.model.gst import REFERENCE_NORMS
from gst_tts.runtime import OnnxSynthesizer
from gst_tts.text.symbols import SymbolTable

from conftest import seconds_for_steps, tiny_model, write_spectral_vocoder

pytestmark = pytest.mark.usefixtures("one_torch_thread")

KINDS = list(ATTENTION_KINDS)
STEPS = 8


def _synthesizer(kind: str) -> Synthesizer:
    """A tiny random model of ``kind`` whose stop logit swings widely from step to step, so that a
    threshold can make it stop on its token at a step no rounding difference could move."""
    torch.manual_seed(KINDS.index(kind) if kind in KINDS else 0)
    symbols = SymbolTable()
    stats = MelStats(torch.full((80,), -5.0), torch.full((80,), 2.0))
    model = tiny_model(len(symbols), attention=kind)
    with torch.no_grad():
        model.decoder.stop_projection.weight.mul_(30.0)
    return Synthesizer(model, symbols, AudioConfig(), stats, reference_window=48)


@pytest.fixture(scope="module", params=KINDS)
def exported(request, tmp_path_factory):
    """``(torch Synthesizer, OnnxSynthesizer)`` of one kind's tiny random model, exported once."""
    synth = _synthesizer(request.param)
    folder = export_synthesizer(synth, tmp_path_factory.mktemp(request.param) / "export")
    return synth, OnnxSynthesizer.from_dir(folder, threads=1)


def _batch(model, *, seed: int) -> tuple[torch.Generator, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A generator seeded with ``seed`` and what it drew: three texts of 11, 8 and 5 symbols (not the
    exported sample's shape) padded with 0, their lengths, and token weights ``(3, n_heads, n_tokens)``."""
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([11, 8, 5])
    text = torch.randint(2, len(SymbolTable()), (3, 11), generator=generator)
    text[torch.arange(11)[None, :] >= lengths[:, None]] = 0
    weights = torch.softmax(torch.randn(3, model.n_heads, model.n_tokens, generator=generator), -1)
    return generator, text, lengths, weights


def _masks(generator: torch.Generator, steps: int, batch: int, dim: int, p: float) -> list[torch.Tensor]:
    """Scaled keep-masks ``(steps, batch, dim)`` as dropout draws them."""
    return (torch.rand(steps, batch, dim, generator=generator) >= p).float() / (1 - p)


def test_teacher_forced_steps_match_torch(exported):
    synth, runtime = exported
    model, decoder = synth.model, synth.model.decoder
    g, text, lengths, weights = _batch(model, seed=1)
    target = torch.randn(3, STEPS * model.reduction_factor, model.n_mels, generator=g)
    prenet = [_masks(g, STEPS, 3, decoder.prenet.layers[0].out_features, 0.5) for _ in range(2)]
    step_masks = [_masks(g, STEPS, 3, dim, 0.1) for dim in (decoder.attention_rnn_dim, decoder.decoder_rnn_dim)]
    m = runtime.manifest
    session = runtime._sessions["decoder_step"]
    with torch.no_grad():
        style = model.gst.style_from_weights(weights)
        memory = model._memory(text, lengths, style)
        padding = torch.arange(11)[None, :] >= lengths[:, None]
        prepared = decoder.attention.prepare(memory, padding)
        state = decoder.initial_state(memory, prepared)
        encoded = runtime._sessions["encoder"].run(
            None,
            {"text": text.numpy(), "text_lengths": lengths.numpy(), "style": runtime.style_embedding(weights.numpy())},
        )
        np.testing.assert_allclose(encoded[0], memory.numpy(), atol=1e-5)
        n = len(m["step_graph"]["prepared"])
        onnx_state = {
            "attention_hidden": np.zeros((3, decoder.attention_rnn_dim), np.float32),
            "attention_cell": np.zeros((3, decoder.attention_rnn_dim), np.float32),
            "decoder_hidden": np.zeros((3, decoder.decoder_rnn_dim), np.float32),
            "decoder_cell": np.zeros((3, decoder.decoder_rnn_dim), np.float32),
            "attention_weights": np.zeros((3, 11), np.float32),
            "context": np.zeros((3, m["memory_dim"]), np.float32),
            **dict(zip(m["step_graph"]["prepared"], encoded[1 : 1 + n])),
            **{f"attention_state_{i}": a for i, a in enumerate(encoded[1 + n :])},
        }
        frame = torch.zeros(3, model.n_mels)
        worst = 0.0
        for s in range(STEPS):
            x = frame
            for layer, mask in zip(decoder.prenet.layers, (prenet[0][s], prenet[1][s])):
                x = F.relu(layer(x)) * mask
            cells = decoder.training_cells()
            out, stop, state = decoder.step(
                cells.prenet_gates(x), state, prepared, cells, (step_masks[0][s], step_masks[1][s])
            )
            feeds = {
                "frame": frame.numpy(),
                "prenet_mask_0": prenet[0][s].numpy(),
                "prenet_mask_1": prenet[1][s].numpy(),
                "attention_mask": step_masks[0][s].numpy(),
                "decoder_mask": step_masks[1][s].numpy(),
                "memory": encoded[0],
                "padding_mask": padding.numpy(),
                **onnx_state,
            }
            got = session.run(None, {k: v for k, v in feeds.items() if k in m["step_graph"]["inputs"]})
            onnx_state.update(
                zip(
                    [
                        "attention_hidden",
                        "attention_cell",
                        "decoder_hidden",
                        "decoder_cell",
                        "attention_weights",
                        "context",
                    ],
                    got[2:8],
                )
            )
            onnx_state.update({f"attention_state_{i}": a for i, a in enumerate(got[8:])})
            for mine, theirs in [
                (got[0], out),
                (got[1], stop),
                (got[6], state.attention_weights),
                (got[7], state.context),
            ]:
                worst = max(worst, float(np.abs(mine - theirs.numpy()).max()))
            # Teacher forcing: both sides read the target's last frame of this step next.
            frame = target.view(3, STEPS, model.reduction_factor, model.n_mels)[:, s, -1]
    assert worst < 1e-4
    assert float(state.attention_weights[2, 5:].abs().max()) == 0.0  # padding got no weight: the masks were real


def test_free_running_decoding_with_the_same_masks_matches_torch(exported):
    synth, runtime = exported
    model, decoder = synth.model, synth.model.decoder
    g, text, lengths, weights = _batch(model, seed=2)
    prenet_dim = decoder.prenet.layers[0].out_features
    masks = [_masks(g, STEPS, 3, prenet_dim, 0.5) for _ in range(2)]
    calls = []

    def masked_prenet(frame: torch.Tensor) -> torch.Tensor:  # the torch prenet, with this step's masks
        s = len(calls)
        calls.append(s)
        for layer, mask in zip(decoder.prenet.layers, (masks[0][s], masks[1][s])):
            frame = F.relu(layer(frame)) * mask
        return frame

    def decode_torch(decoding: DecodingConfig):
        calls.clear()
        original = decoder.prenet.forward
        decoder.prenet.forward = masked_prenet
        try:
            return model.infer(
                text, lengths, style_weights=weights, **decoding.model_arguments(frames_per_second=22050 / 256)
            )
        finally:
            decoder.prenet.forward = original

    bound = DecodingConfig(
        stop_threshold=1.0, max_seconds=seconds_for_steps(STEPS), stop_end_tolerance=None, attention_window=(2, 4)
    )
    probs = decode_torch(bound).stop_probs[0].numpy()
    # A threshold in the widest gap between item 0's stop logits: item 0 stops on its token (at the
    # first step above it), and a difference of 1e-4 between the paths cannot move that step.
    logits = np.sort(np.log(probs.astype(np.float64) / (1 - probs)))[::-1]
    gaps = logits[:-1] - logits[1:]
    k = int(np.argmax(gaps))
    assert gaps[k] > 1e-2
    threshold = 1 / (1 + np.exp(-(logits[k] + logits[k + 1]) / 2))
    decoding = DecodingConfig(
        stop_threshold=float(threshold),
        max_seconds=seconds_for_steps(STEPS),
        stop_end_tolerance=None,
        attention_window=(2, 4),
    )
    expected = decode_torch(decoding)
    got = runtime.decode(
        text.numpy(),
        lengths.numpy(),
        weights.numpy(),
        decoding=decoding,
        prenet_masks=lambda s, batch: (masks[0][s].numpy(), masks[1][s].numpy()),
    )
    assert bool(expected.stopped_on_token[0])
    np.testing.assert_array_equal(got.steps, expected.steps.numpy())
    np.testing.assert_array_equal(got.stopped_on_token, expected.stopped_on_token.numpy())
    for row in range(3):
        frames = int(expected.mel_lengths[row])
        assert np.abs(got.mel_postnet[row, :frames] - expected.mel_postnet[row, :frames].numpy()).max() < 1e-3


# The style graphs do not depend on the attention kind: one kind checks them.
@pytest.mark.parametrize("exported", ["location_sensitive"], indirect=True)
def test_token_weights_of_a_reference_match_torch(exported):
    synth, runtime = exported
    rate = 22050
    t = np.arange(int(1.5 * rate)) / rate
    wave = (0.3 * np.sin(2 * np.pi * (180 + 60 * t) * t) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))).astype(np.float32)
    # 1.5 s is 130 frames: past the window of 48, so the windowed path (embeddings averaged) runs too.
    expected = synth.styles.reference_weights((wave, rate)).numpy()
    np.testing.assert_allclose(runtime.reference_weights((wave, rate)), expected, atol=1e-5)
    # The graph alone, on a batch of references of other lengths, against the model's own encoder.
    g = torch.Generator().manual_seed(3)
    mel, mel_lengths = torch.randn(2, 61, 80, generator=g), torch.tensor([61, 37])
    with torch.no_grad():
        style, weights = synth.model.gst(mel, mel_lengths)
    _, got_weights, got_style = runtime._sessions["style_reference"].run(
        None, {"reference_mel": mel.numpy(), "reference_lengths": mel_lengths.numpy()}
    )
    np.testing.assert_allclose(got_weights, weights.numpy(), atol=1e-5)
    np.testing.assert_allclose(got_style, style.numpy(), atol=1e-5)


@pytest.mark.parametrize("norm", REFERENCE_NORMS)
def test_every_reference_norm_exports_with_the_same_token_weights(norm, tmp_path):
    torch.manual_seed(0)
    model = tiny_model(len(SymbolTable()), gst_reference_norm=norm)
    synth = Synthesizer(model, SymbolTable(), AudioConfig(), MelStats(torch.full((80,), -5.0), torch.full((80,), 2.0)))
    runtime = OnnxSynthesizer.from_dir(export_synthesizer(synth, tmp_path / "export"), threads=1)
    mel, mel_lengths = torch.randn(2, 61, 80, generator=torch.Generator().manual_seed(3)), torch.tensor([61, 37])
    with torch.no_grad():
        _, weights = synth.model.gst(mel, mel_lengths)
    _, got_weights, _ = runtime._sessions["style_reference"].run(
        None, {"reference_mel": mel.numpy(), "reference_lengths": mel_lengths.numpy()}
    )
    np.testing.assert_allclose(got_weights, weights.numpy(), atol=1e-5)


class _UnlistedAttention(LocationSensitiveAttention):
    """A kind the exporter does not know (a user's own, say)."""


def test_a_kind_that_does_not_export_is_refused_in_one_line(tmp_path):
    synth = _synthesizer("location_sensitive")
    attention = synth.model.decoder.attention
    synth.model.decoder.attention = _UnlistedAttention(
        query_dim=32, memory_dim=32, attention_dim=16, location_filters=4, location_kernel_size=5
    )
    synth.model.decoder.attention.load_state_dict(attention.state_dict())
    with pytest.raises(ExportError) as caught:
        export_synthesizer(synth, tmp_path / "out")
    message = str(caught.value)
    assert "\n" not in message and "_UnlistedAttention does not export" in message
    assert all(kind in message for kind in KINDS)
    assert not (tmp_path / "out").exists()


def test_cli_refuses_an_out_that_is_not_an_export_in_one_line(tiny_checkpoint, tmp_path, capsys):
    taken = tmp_path / "notes"
    taken.mkdir()
    (taken / "keep.txt").write_text("mine")
    assert main(["export", "--checkpoint", str(tiny_checkpoint), "--out", str(taken)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"gst-tts export: error: {taken}: exists and is not an earlier export (nor an empty folder); choose "
        "another --out"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes"]  # no staging folder left behind
    assert (taken / "keep.txt").read_text() == "mine"


# One kind suffices: every graph of every kind is exported by the same code.
@pytest.mark.parametrize("exported", ["location_sensitive"], indirect=True)
def test_graphs_are_fp32_with_free_batch_and_lengths(exported):
    _, runtime = exported
    for role, session in runtime._sessions.items():
        for value in session.get_inputs():
            assert value.type in ("tensor(float)", "tensor(int64)", "tensor(bool)"), (role, value.name, value.type)
            if value.name in ("text", "reference_mel", "mel", "memory", "padding_mask"):
                assert all(isinstance(d, str) for d in value.shape[:2]), (role, value.name, value.shape)
    assert onnxruntime.get_available_providers()


def test_a_hifigan_vocoder_exports_and_a_griffin_lim_one_is_refused(tmp_path):
    from gst_tts.audio.vocoders.hifigan import HIFIGAN_CONFIGS, HiFiGANGenerator
    from gst_tts.audio.vocoders.hifigan_io import HiFiGANVocoder

    synth = _synthesizer("location_sensitive")
    with pytest.raises(
        ExportError, match="exports a HiFi-GAN generator or a spectral vocoder; this one is griffin-lim"
    ):
        export_synthesizer(synth, tmp_path / "gl", vocoder=True)
    torch.manual_seed(0)
    small = dict(
        HIFIGAN_CONFIGS["v3"], upsample_initial_channel=16, resblock_kernel_sizes=[3], resblock_dilation_sizes=[[1, 2]]
    )
    generator = HiFiGANGenerator(
        **{
            k: small[k]
            for k in (
                "resblock",
                "upsample_rates",
                "upsample_kernel_sizes",
                "upsample_initial_channel",
                "resblock_kernel_sizes",
                "resblock_dilation_sizes",
            )
        }
    )
    synth.vocoder = HiFiGANVocoder(generator, sample_rate=22050)
    runtime = OnnxSynthesizer.from_dir(export_synthesizer(synth, tmp_path / "hifigan", vocoder=True), threads=1)
    log_mel = torch.randn(37, 80) - 5.0  # another length than the exported sample's
    expected = synth.vocoder(log_mel)
    got = runtime.vocode(log_mel.numpy())
    assert got.shape == expected.shape == (37 * 256,)
    assert np.abs(got - expected).max() < 1e-4


def test_cli_exports_a_vocoder_file_the_runtime_then_uses(tiny_checkpoint, tmp_path, capsys):
    from gst_tts.audio.vocoders.checkpoint import save_vocoder_checkpoint, vocoder_payload
    from gst_tts.audio.vocoders.hifigan import GENERATOR_CONFIG_KEYS, HIFIGAN_CONFIGS, HiFiGANGenerator
    from gst_tts.audio.vocoders.hifigan_io import HiFiGANVocoder

    torch.manual_seed(0)
    small = dict(
        HIFIGAN_CONFIGS["v3"], upsample_initial_channel=16, resblock_kernel_sizes=[3], resblock_dilation_sizes=[[1, 2]]
    )
    config = {k: small[k] for k in GENERATOR_CONFIG_KEYS}
    generator = HiFiGANGenerator(**config).apply_weight_norm()
    path = save_vocoder_checkpoint(
        tmp_path / "voc" / "generator.pt",
        vocoder_payload(generator_state=generator.state_dict(), generator_config=config, audio_config=AudioConfig()),
    )
    out = tmp_path / "exported"
    assert main(["export", "--checkpoint", str(tiny_checkpoint), "--vocoder", str(path), "--out", str(out)]) == 0
    assert "with its vocoder" in capsys.readouterr().out
    runtime = OnnxSynthesizer.from_dir(out, threads=1)
    log_mel = torch.randn(23, 80) - 5.0
    expected = HiFiGANVocoder(generator.remove_weight_norm(), sample_rate=22050)(log_mel)
    assert np.abs(runtime.vocode(log_mel.numpy()) - expected).max() < 1e-4

    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    assert (
        main(
            [
                "export",
                "--checkpoint",
                str(tiny_checkpoint),
                "--vocoder",
                str(tmp_path / "junk.pt"),
                "--out",
                str(tmp_path / "other"),
            ]
        )
        == 2
    )
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "other").exists()


def _test_mel(frames: int) -> np.ndarray:
    """A ``(frames, n_mels)`` log-mel with some structure over time and frequency (seeded)."""
    rng = np.random.default_rng(frames)
    t = np.linspace(0.0, 1.0, frames)[:, None]
    return (rng.normal(-5.0, 0.5, (frames, 80)) + np.sin(40 * t) * np.linspace(2.0, 0.0, 80)).astype(np.float32)


@pytest.mark.parametrize("pitch_head", [False, True])
def test_a_spectral_vocoder_exports_and_the_runtime_vocodes_as_torch_does(pitch_head, tmp_path):
    # The runtime runs the estimator's graph and then the PyTorch vocoder's own numpy half
    # (harmonic restoration, PGHI, fast Griffin-Lim): only the graph's rounding differs, which PGHI
    # and the F0 refinement amplify a little. Measured on this 120-frame mel: log magnitudes within
    # 1.6e-4; samples within 2.4e-4 (no pitch head) and 9.4e-4 (pitch head) of a 0.08 peak, a
    # relative L2 error of 0.08 % and 0.5 %. Asserted: 1e-3, 5e-3 and 2 %.
    from gst_tts.audio.vocoders import load_vocoder

    synth = _synthesizer("location_sensitive")
    path = write_spectral_vocoder(tmp_path / "voc.pt", pitch_head=pitch_head)
    synth.vocoder = load_vocoder(path, audio_config=synth.audio_config, device="cpu")
    runtime = OnnxSynthesizer.from_dir(export_synthesizer(synth, tmp_path / "spectral", vocoder=True), threads=1)
    assert runtime.vocoder["kind"] == "spectral" and runtime.vocoder["pitch_head"] is pitch_head
    log_mel = _test_mel(120)  # another length than the exported sample's
    log_mag, pitch = synth.vocoder.estimate(log_mel)
    outputs = runtime._vocoder.run(None, {"log_mel": log_mel[None]})
    assert np.abs(outputs[0][0] - log_mag).max() < 1e-3
    assert (pitch is None) is (len(outputs) == 1)
    expected, got = synth.vocoder(log_mel), runtime.vocode(log_mel)
    assert got.shape == expected.shape == (119 * 256,) and got.dtype == np.float32
    assert np.abs(expected).max() > 0.01 and np.abs(got - expected).max() < 5e-3
    assert np.linalg.norm(got - expected) < 0.02 * np.linalg.norm(expected)


def test_cli_exports_a_spectral_vocoder_checkpoint_and_the_runtime_picks_it(tiny_checkpoint, tmp_path, capsys):
    import json

    from gst_tts.audio.vocoders import load_vocoder

    path = write_spectral_vocoder(tmp_path / "voc" / "generator.pt", pitch_head=True)
    out = tmp_path / "exported"
    assert main(["export", "--checkpoint", str(tiny_checkpoint), "--vocoder", str(path), "--out", str(out)]) == 0
    assert "with its vocoder" in capsys.readouterr().out
    entry = json.loads((out / "model.json").read_text())["vocoder"]
    assert entry == {"kind": "spectral", "pitch_head": True, "magnitude_power": 1.15, "n_iter": 16, "momentum": 0.99}
    runtime = OnnxSynthesizer.from_dir(out, threads=1)  # auto: the exported vocoder
    assert runtime.vocoder == entry
    log_mel = _test_mel(30)
    expected = load_vocoder(path, audio_config=AudioConfig(), device="cpu")(log_mel)
    assert np.linalg.norm(runtime.vocode(log_mel) - expected) < 0.02 * np.linalg.norm(expected)
    assert OnnxSynthesizer.from_dir(out, vocoder="griffin-lim", threads=1).vocoder is None
    with pytest.raises(ExportError, match="exported with a spectral vocoder, not hifigan"):
        OnnxSynthesizer.from_dir(out, vocoder="hifigan")
