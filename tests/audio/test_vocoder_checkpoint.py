"""gst-tts's own vocoder checkpoints: the layout, loading as a vocoder without a config file (weight
norm folded or not; HiFi-GAN or spectral, by ``generator_kind``), the feature check, refused
versions and kinds, incomplete files and misfitting weights."""

from __future__ import annotations

from dataclasses import replace

from conftest import TINY_GENERATOR
import numpy as np
import pytest
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.vocoders import load_vocoder
from gst_tts.audio.vocoders.checkpoint import VOCODER_VERSION, save_vocoder_checkpoint, vocoder_payload
from gst_tts.audio.vocoders.hifigan import HiFiGANGenerator, fold_weight_norm
from gst_tts.audio.vocoders.hifigan_io import HiFiGANVocoder, load_hifigan
from gst_tts.audio.vocoders.spectral import MagnitudeEstimator, SpectralVocoder
from gst_tts.errors import VocoderError
from gst_tts.inference.synthesizer import Synthesizer


def _payload(weight_norm: bool = True, **parts) -> tuple[dict, HiFiGANGenerator]:
    torch.manual_seed(0)
    generator = HiFiGANGenerator(**TINY_GENERATOR)
    if weight_norm:
        generator.apply_weight_norm()
    return vocoder_payload(
        generator_state=generator.state_dict(),
        generator_config=TINY_GENERATOR,
        audio_config=AudioConfig(),
        step=12,
        **parts,
    ), generator


def _one_line(info: pytest.ExceptionInfo) -> str:
    assert "\n" not in str(info.value)
    return str(info.value)


def test_payload_layout():
    payload, _ = _payload(val_ids=["b", "a"], train_ids=["d", "c"])
    assert payload["format"] == "gst-tts-vocoder" and payload["version"] == VOCODER_VERSION and payload["step"] == 12
    assert payload["generator_config"]["resblock_dilation_sizes"] == [[1, 2]] and payload["train_ids"] == ["c", "d"]
    assert payload["audio_config"]["hop_length"] == 256 and payload["generator_kind"] == "hifigan"
    for absent in ("discriminator", "optimizer", "rng", "config"):
        assert absent not in payload


@pytest.mark.parametrize("weight_norm", [True, False])
def test_loads_as_a_vocoder_without_a_config_file(tmp_path, weight_norm):
    payload, generator = _payload(weight_norm)
    path = save_vocoder_checkpoint(tmp_path / "generator.pt", payload)
    assert not list(tmp_path.glob("*.tmp"))
    vocoder = load_vocoder(path, audio_config=AudioConfig(), device="cpu")
    mel = torch.randn(6, 80) - 4
    with torch.no_grad():
        expected = generator(mel.T[None]).reshape(-1).numpy()
    audio = vocoder(mel)
    assert audio.shape == (6 * 256,) and vocoder.sample_rate == 22050
    np.testing.assert_allclose(audio, expected, atol=1e-5)
    assert fold_weight_norm(payload["generator"]).keys() == vocoder.generator.state_dict().keys()


def test_a_file_without_generator_kind_is_hifigan_and_an_unknown_kind_is_refused(tmp_path):
    payload, generator = _payload(weight_norm=False)
    del payload["generator_kind"]  # as written before the key existed
    torch.save(payload, tmp_path / "old.pt")
    vocoder = load_vocoder(tmp_path / "old.pt", audio_config=AudioConfig(), device="cpu")
    assert isinstance(vocoder, HiFiGANVocoder)
    torch.save({**payload, "generator_kind": "wavenet"}, tmp_path / "new.pt")
    with pytest.raises(VocoderError) as info:
        load_vocoder(tmp_path / "new.pt", audio_config=AudioConfig())
    assert "unknown generator_kind 'wavenet'" in _one_line(info)
    with pytest.raises(ValueError, match="generator_kind"):
        vocoder_payload(
            generator_state=generator.state_dict(),
            generator_config=TINY_GENERATOR,
            audio_config=AudioConfig(),
            generator_kind="wavenet",
        )


def test_a_synthesizer_takes_it_as_its_vocoder(tiny_checkpoint, tmp_path):
    path = save_vocoder_checkpoint(tmp_path / "generator.pt", _payload()[0])
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, vocoder=path, device="cpu")
    assert synth.vocoder.hop_length == 256


def test_other_features_or_a_config_file_are_one_line_errors(tmp_path):
    path = save_vocoder_checkpoint(tmp_path / "generator.pt", _payload()[0])
    with pytest.raises(VocoderError) as info:
        load_vocoder(path, audio_config=replace(AudioConfig(), fmax=7600.0, n_mels=80, sample_rate=24000))
    message = _one_line(info)
    assert "fmax 8000.0 (acoustic model 7600.0)" in message and "sample_rate 22050 (acoustic model 24000)" in message
    with pytest.raises(VocoderError) as info:
        load_vocoder(path, audio_config=AudioConfig(), config_path=tmp_path / "config.json")
    assert "records its own settings" in _one_line(info)


@pytest.mark.parametrize(
    "change, message",
    [
        (
            dict(version=VOCODER_VERSION + 1),
            f"vocoder checkpoint version {VOCODER_VERSION + 1} was written by a newer gst-tts",
        ),
        (dict(version="1"), "unknown vocoder checkpoint version '1'"),
        (dict(generator_config=None), "incomplete vocoder checkpoint, missing generator_config"),
        (
            dict(generator_config=dict(TINY_GENERATOR, upsample_initial_channel=32)),
            "weights do not fit its generator_config",
        ),
        (dict(generator_config=dict(TINY_GENERATOR, resblock="7")), "unusable generator settings"),
        (dict(generator={"conv_pre.weight": "not a tensor"}), "not a state dict of named tensors"),
    ],
)
def test_refused_files_name_the_problem(tmp_path, change, message):
    payload = {k: v for k, v in {**_payload()[0], **change}.items() if v is not None}
    path = tmp_path / "bad.pt"
    torch.save(payload, path)
    with pytest.raises(VocoderError) as info:
        load_vocoder(path, audio_config=AudioConfig())
    assert message in _one_line(info) and str(path) in str(info.value)


def test_save_refuses_a_hand_assembled_payload(tmp_path):
    payload, _ = _payload()
    with pytest.raises(ValueError, match="vocoder_payload"):
        save_vocoder_checkpoint(tmp_path / "a.pt", {k: v for k, v in payload.items() if k != "format"})
    with pytest.raises(ValueError, match="audio_config"):
        save_vocoder_checkpoint(tmp_path / "a.pt", {k: v for k, v in payload.items() if k != "audio_config"})
    assert not list(tmp_path.iterdir())


# ---------------------------------------------------------------------------------------------
# The spectral vocoder's checkpoints

SPECTRAL = dict(
    sample_rate=22050, n_fft=1024, n_mels=80, fmin=0.0, fmax=8000.0, channels=16, kernel_size=3, dilations=[1, 2]
)


def _spectral(tmp_path, audio_config: AudioConfig = AudioConfig(), **parts):
    """A spectral checkpoint of an estimator whose output is not the pseudo-inverse's, saved; (path, estimator)."""
    torch.manual_seed(0)
    estimator = MagnitudeEstimator(**SPECTRAL)
    torch.nn.init.normal_(estimator.output_conv.weight, std=0.05)
    estimator.set_mel_stats(torch.full((80,), -5.0), torch.full((80,), 2.0))
    path = save_vocoder_checkpoint(
        tmp_path / "spectral.pt",
        vocoder_payload(
            generator_state=estimator.state_dict(),
            generator_config=SPECTRAL,
            audio_config=audio_config,
            step=3,
            generator_kind="spectral",
            **parts,
        ),
    )
    return path, estimator


def test_a_spectral_checkpoint_loads_as_the_spectral_vocoder(tmp_path):
    path, estimator = _spectral(tmp_path)
    vocoder = load_vocoder(path, audio_config=AudioConfig(), device="cpu")
    assert isinstance(vocoder, SpectralVocoder) and vocoder.sample_rate == 22050
    for name, value in estimator.state_dict().items():  # weights and the mel statistics
        assert torch.equal(vocoder.estimator.state_dict()[name], value), name
    mel = torch.randn(20, 80) - 4
    expected = SpectralVocoder(estimator, audio_config=AudioConfig())(mel)
    audio = vocoder(mel)
    assert audio.shape == (19 * 256,) and audio.dtype == np.float32
    np.testing.assert_array_equal(audio, expected)


def test_spectral_checkpoint_mistakes_are_one_line(tmp_path):
    path, _ = _spectral(tmp_path)
    with pytest.raises(VocoderError) as info:
        load_vocoder(path, audio_config=replace(AudioConfig(), fmax=7600.0, n_fft=2048))
    message = _one_line(info)
    assert "other features" in message and "fmax 8000.0 (acoustic model 7600.0)" in message
    assert "n_fft 1024 (acoustic model 2048)" in message
    with pytest.raises(VocoderError) as info:
        load_vocoder(path, audio_config=AudioConfig(), config_path=tmp_path / "config.json")
    assert "records its own settings" in _one_line(info)
    with pytest.raises(VocoderError) as info:  # the HiFi-GAN loader does not take it for a generator
        load_hifigan(path, audio_config=AudioConfig())
    assert "a spectral vocoder checkpoint, not a hifigan one" in _one_line(info)
    stored = torch.load(path, weights_only=True)
    # Saved through the schema (a fresh digest): a hand edit saved with torch.save reads as corruption.
    save_vocoder_checkpoint(tmp_path / "wider.pt", {**stored, "generator_config": dict(SPECTRAL, channels=32)})
    with pytest.raises(VocoderError) as info:
        load_vocoder(tmp_path / "wider.pt", audio_config=AudioConfig())
    assert "weights do not fit its generator_config" in _one_line(info)
    save_vocoder_checkpoint(tmp_path / "even.pt", {**stored, "generator_config": dict(SPECTRAL, kernel_size=4)})
    with pytest.raises(VocoderError) as info:
        load_vocoder(tmp_path / "even.pt", audio_config=AudioConfig())
    assert "unusable generator settings" in _one_line(info)


def test_a_synthesizer_takes_a_spectral_checkpoint(tiny_checkpoint, tmp_path):
    path, _ = _spectral(tmp_path)
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, vocoder=path, device="cpu")
    assert isinstance(synth.vocoder, SpectralVocoder)


def test_a_flipped_byte_in_a_vocoder_checkpoint_is_a_one_line_error(tmp_path):
    # torch loads a zip whose tensor record changed without complaint; the stored digest does not match.
    path = save_vocoder_checkpoint(tmp_path / "generator.pt", _payload()[0])
    data = bytearray(path.read_bytes())
    stored = torch.load(path, weights_only=True)
    assert stored["digest"].startswith("crc32:")
    weight = stored["generator"]["conv_post.parametrizations.weight.original1"].reshape(-1).view(torch.uint8).numpy()
    offset = bytes(data).find(weight.tobytes())  # a byte inside one tensor's record
    assert offset > 0
    data[offset + 5] ^= 0x10
    damaged = tmp_path / "damaged.pt"
    damaged.write_bytes(bytes(data))
    before = torch.load(path, weights_only=True)["generator"]
    after = torch.load(damaged, weights_only=True)["generator"]
    assert any(not torch.equal(before[k], after[k]) for k in before)  # what torch alone lets through
    with pytest.raises(VocoderError) as info:
        load_vocoder(damaged, audio_config=AudioConfig())
    assert "corrupted vocoder checkpoint" in _one_line(info) and str(damaged) in str(info.value)


@pytest.mark.parametrize(
    "change, message",
    [
        (
            dict(generator_config=dict(TINY_GENERATOR, upsample_initial_channel=10**7)),
            "weights do not fit its generator_config",
        ),
        (
            dict(generator_config=dict(TINY_GENERATOR, upsample_initial_channel=torch.tensor(16))),
            "not a dict of plain settings",
        ),
        (dict(generator_config=dict(TINY_GENERATOR, upsample_initial_channel=-16)), "unusable generator settings"),
    ],
)
def test_hostile_generator_settings_are_refused_before_allocating(tmp_path, change, message):
    # 10**7 channels would ask for terabytes: the generator is built on the meta device first.
    path = save_vocoder_checkpoint(tmp_path / "bad.pt", {**_payload()[0], **change})
    with pytest.raises(VocoderError) as info:
        load_vocoder(path, audio_config=AudioConfig())
    assert message in _one_line(info) and str(path) in str(info.value)


def test_nan_generator_weights_are_refused(tmp_path):
    payload, _ = _payload(weight_norm=False)
    state = dict(payload["generator"])
    state["conv_post.weight"] = torch.full_like(state["conv_post.weight"], float("nan"))
    path = save_vocoder_checkpoint(tmp_path / "nan.pt", {**payload, "generator": state})
    with pytest.raises(VocoderError) as info:
        load_vocoder(path, audio_config=AudioConfig())
    assert "weight conv_post.weight holds NaN or infinite values" in _one_line(info)
