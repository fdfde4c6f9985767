"""HiFi-GAN: the generator, its weight norm, and loading files in the published format.

The published files are not downloaded: the module tree of the published generator is rebuilt
here from its description (github.com/jik876/hifi-gan, ``models.py``) with the old
``torch.nn.utils.weight_norm`` the public checkpoints were written with, filled with random
weights and saved as ``{"generator": state_dict}`` beside a ``config.json``, in both torch formats.
That tree is independent of gst-tts's generator: its keys and shapes are the check.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import pickle
import re
import warnings

import numpy as np
import pytest
import torch
from torch import nn

from gst_tts.audio.features import AudioConfig, MelExtractor
from gst_tts.audio.vocoders import GRIFFIN_LIM, load_vocoder
from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
from gst_tts.audio.vocoders.hifigan import GENERATOR_CONFIG_KEYS, HIFIGAN_CONFIGS, HiFiGANGenerator, fold_weight_norm
from gst_tts.audio.vocoders.hifigan_io import HiFiGANVocoder, load_hifigan
from gst_tts.errors import VocoderError

CFG = AudioConfig()
# What else the published config.json files hold (training settings the generator ignores).
TRAINING_KEYS = dict(
    num_gpus=0,
    batch_size=16,
    learning_rate=0.0002,
    adam_b1=0.8,
    adam_b2=0.99,
    lr_decay=0.999,
    seed=1234,
    segment_size=8192,
    num_freq=1025,
    fmax_for_loss=None,
    num_workers=4,
)
# A generator small enough for many tests, with the LJSpeech features.
SMALL = dict(
    HIFIGAN_CONFIGS["v3"],
    upsample_initial_channel=16,
    resblock_kernel_sizes=[3, 5],
    resblock_dilation_sizes=[[1, 2], [2, 6]],
)


def generator_kwargs(config: dict) -> dict:
    return {k: config[k] for k in GENERATOR_CONFIG_KEYS}


def published_generator(config: dict) -> nn.Module:
    """The module tree of the published generator, weight-normed as its files were written: only
    names and shapes (no forward). Weights are random, scaled so that the output is far from 0."""
    wn = torch.nn.utils.weight_norm
    c0 = config["upsample_initial_channel"]
    root = nn.Module()
    root.conv_pre = wn(nn.Conv1d(80, c0, 7, 1, padding=3))
    root.ups = nn.ModuleList(
        wn(nn.ConvTranspose1d(c0 // 2**i, c0 // 2 ** (i + 1), k, u, padding=(k - u) // 2))
        for i, (u, k) in enumerate(zip(config["upsample_rates"], config["upsample_kernel_sizes"]))
    )
    root.resblocks = nn.ModuleList()
    for i in range(len(root.ups)):
        ch = c0 // 2 ** (i + 1)
        for k, dilations in zip(config["resblock_kernel_sizes"], config["resblock_dilation_sizes"]):
            block = nn.Module()
            if config["resblock"] == "1":
                block.convs1 = nn.ModuleList(
                    wn(nn.Conv1d(ch, ch, k, 1, dilation=d, padding=(k * d - d) // 2)) for d in dilations
                )
                block.convs2 = nn.ModuleList(
                    wn(nn.Conv1d(ch, ch, k, 1, dilation=1, padding=(k - 1) // 2)) for _ in dilations
                )
            else:
                block.convs = nn.ModuleList(
                    wn(nn.Conv1d(ch, ch, k, 1, dilation=d, padding=(k * d - d) // 2)) for d in dilations
                )
            root.resblocks.append(block)
    root.conv_post = wn(nn.Conv1d(ch, 1, 7, 1, padding=3))
    with torch.no_grad():
        for name, p in root.named_parameters():
            if name.endswith("weight_g"):
                p.uniform_(0.8, 1.6)
            elif name.endswith("weight_v"):
                p.normal_()
            else:
                p.normal_(0.0, 0.1)
    return root


@pytest.fixture(autouse=True)
def _quiet_old_weight_norm():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*weight_norm.*deprecated.*")
        yield


def save_published(
    folder: Path, config: dict, *, legacy: bool, name: str = "g_02500000", seed: int = 0
) -> tuple[Path, dict]:
    """A generator file in the published format and its config.json in ``folder``; returns (path, state)."""
    torch.manual_seed(seed)
    folder.mkdir(parents=True, exist_ok=True)
    state = published_generator(config).state_dict()
    path = folder / name
    torch.save({"generator": state}, path, _use_new_zipfile_serialization=not legacy)
    (folder / "config.json").write_text(json.dumps({**config, **TRAINING_KEYS}, indent=4))
    return path, state


def unfolded_generator(config: dict, published_state: dict) -> HiFiGANGenerator:
    """gst-tts's generator with weight norm (torch's parametrization) holding the published g and v."""
    renamed = {
        k.replace("weight_g", "parametrizations.weight.original0").replace(
            "weight_v", "parametrizations.weight.original1"
        ): v
        for k, v in published_state.items()
    }
    generator = HiFiGANGenerator(**generator_kwargs(config)).apply_weight_norm()
    generator.load_state_dict(renamed)
    return generator.eval()


def log_mel(frames: int, seed: int = 1) -> torch.Tensor:
    """A speech-like ``(frames, 80)`` log-mel: a recording's, made by the project's features."""
    t = np.arange(frames * CFG.hop_length) / CFG.sample_rate
    rng = np.random.default_rng(seed)
    wave = 0.3 * np.sin(2 * np.pi * 180 * t) * (1 + 0.5 * np.sin(2 * np.pi * 4 * t)) + 0.01 * rng.standard_normal(
        t.size
    )
    return MelExtractor(CFG)(torch.from_numpy(wave.astype(np.float32)))[:frames]


# ------------------------------------------------------------------ the published layout


def test_v1_keys_and_shapes_are_those_of_the_public_files():
    """A hard-coded table from the published v1 generator: first and last layers, and counts."""
    torch.manual_seed(0)
    state = published_generator(HIFIGAN_CONFIGS["v1"]).state_dict()
    assert len(state) == 234  # 78 weight-normed convolutions × (bias, weight_g, weight_v)
    table = {
        "conv_pre.bias": (512,),
        "conv_pre.weight_g": (512, 1, 1),
        "conv_pre.weight_v": (512, 80, 7),
        "ups.0.weight_g": (512, 1, 1),
        "ups.0.weight_v": (512, 256, 16),
        "ups.0.bias": (256,),
        "ups.3.weight_v": (64, 32, 4),
        "ups.3.bias": (32,),
        "resblocks.0.convs1.0.weight_v": (256, 256, 3),
        "resblocks.2.convs2.2.weight_v": (256, 256, 11),
        "resblocks.11.convs1.2.weight_v": (32, 32, 11),
        "resblocks.11.convs2.2.bias": (32,),
        "conv_post.bias": (1,),
        "conv_post.weight_g": (1, 1, 1),
        "conv_post.weight_v": (1, 32, 7),
    }
    assert {k: tuple(state[k].shape) for k in table} == table
    assert sum(k.startswith("resblocks.") for k in state) == 12 * 6 * 3
    ours = HiFiGANGenerator(**generator_kwargs(HIFIGAN_CONFIGS["v1"]))
    assert sum(p.numel() for p in ours.parameters()) == 13_926_017  # the paper's 13.92 M


@pytest.mark.parametrize("version", ["v1", "v2", "v3"])
def test_state_dict_matches_the_published_tree_with_and_without_weight_norm(version):
    config = HIFIGAN_CONFIGS[version]
    torch.manual_seed(0)
    published = {k: tuple(v.shape) for k, v in published_generator(config).state_dict().items()}
    plain = HiFiGANGenerator(**generator_kwargs(config))
    assert {k: tuple(v.shape) for k, v in plain.state_dict().items()} == {
        k: tuple(v.shape) for k, v in fold_weight_norm({k: torch.empty(s) for k, s in published.items()}).items()
    }
    normed = plain.apply_weight_norm().state_dict()
    renamed = {
        k.replace("parametrizations.weight.original0", "weight_g").replace(
            "parametrizations.weight.original1", "weight_v"
        ): tuple(v.shape)
        for k, v in normed.items()
    }
    assert renamed == published


# ------------------------------------------------------------------ loading published files


@pytest.mark.parametrize("version", ["v1", "v2", "v3"])
@pytest.mark.parametrize("legacy", [True, False], ids=["legacy", "zip"])
def test_published_file_loads_runs_and_agrees_with_the_unfolded_generator(tmp_path, version, legacy):
    config = HIFIGAN_CONFIGS[version]
    path, state = save_published(tmp_path, config, legacy=legacy)
    if legacy:
        assert not path.read_bytes().startswith(b"PK")  # really the old, non-zip format
    vocoder = load_hifigan(path, audio_config=CFG, device="cpu")  # config.json beside it
    assert (
        isinstance(vocoder, HiFiGANVocoder) and vocoder.sample_rate == 22050 and vocoder.device == torch.device("cpu")
    )
    assert not vocoder.generator.training and not vocoder.generator.weight_normed
    assert all(not p.requires_grad for p in vocoder.generator.parameters())
    frames = 8 if version == "v1" else 12
    mel = log_mel(frames)
    audio = vocoder(mel)
    assert audio.dtype == np.float32 and audio.shape == (frames * 256,)
    with torch.no_grad():
        expected = unfolded_generator(config, state)(mel.T.unsqueeze(0)).reshape(-1).numpy()
    assert expected.std() > 0.05  # a meaningful comparison, not two near-silent signals
    np.testing.assert_allclose(audio, expected, atol=1e-5, rtol=0)


def test_numpy_input_and_empty_mel(tmp_path):
    path, _ = save_published(tmp_path, SMALL, legacy=False)
    vocoder = load_hifigan(path, audio_config=CFG, device="cpu")
    mel = log_mel(5)
    np.testing.assert_array_equal(vocoder(mel.numpy()), vocoder(mel))
    assert vocoder(np.zeros((0, 80), dtype=np.float32)).shape == (0,)
    with pytest.raises(VocoderError, match=r"\(frames, 80\) log-mel, got \(5, 100\)"):
        vocoder(np.zeros((5, 100), dtype=np.float32))


def test_named_config_path_and_load_vocoder(tmp_path):
    path, _ = save_published(tmp_path / "weights", SMALL, legacy=True, name="generator_v3")
    elsewhere = tmp_path / "configs" / "config_v3.json"
    elsewhere.parent.mkdir()
    (tmp_path / "weights" / "config.json").rename(elsewhere)
    with pytest.raises(VocoderError, match="config.json: HiFi-GAN config not found"):
        load_hifigan(path, audio_config=CFG)
    vocoder = load_vocoder(path, config_path=elsewhere, audio_config=CFG, device="cpu")
    assert isinstance(vocoder, HiFiGANVocoder) and vocoder(log_mel(3)).shape == (3 * 256,)
    assert isinstance(load_vocoder(GRIFFIN_LIM, audio_config=CFG, n_iter=4), GriffinLimVocoder)
    with pytest.raises(VocoderError, match="HiFi-GAN only"):
        load_vocoder(GRIFFIN_LIM, audio_config=CFG, config_path=elsewhere)


# ------------------------------------------------------------------ the generator itself


@pytest.mark.parametrize("frames", [1, 7, 20])
def test_output_is_hop_times_frames(frames):
    torch.manual_seed(0)
    generator = HiFiGANGenerator(**generator_kwargs(SMALL))
    assert generator.hop_length == 256
    out = generator(torch.randn(2, 80, frames))
    assert out.shape == (2, 1, frames * 256) and out.abs().max() <= 1.0


def test_weight_norm_trains_and_folds_to_the_same_function():
    torch.manual_seed(0)
    type1 = generator_kwargs(dict(SMALL, resblock="1", resblock_dilation_sizes=[[1, 3, 5], [1, 3, 5]]))
    generator = HiFiGANGenerator(**type1)
    generator.apply_weight_norm().apply_weight_norm()  # idempotent
    assert generator.weight_normed
    names = [n for n, _ in generator.named_parameters()]
    assert "conv_pre.parametrizations.weight.original0" in names and not any(n.endswith(".weight") for n in names)
    with torch.no_grad():  # far from the small initial weights, so the check means something
        for name, p in generator.named_parameters():
            if name.endswith("original0"):  # g
                p.uniform_(0.8, 1.6)
            else:  # v, biases
                p.normal_(0.0, 1.0 if name.endswith("original1") else 0.1)
    mel = torch.randn(1, 80, 10) - 4
    out = generator(mel)
    out.square().mean().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in generator.parameters())
    folded_state = fold_weight_norm(generator.state_dict())
    with torch.no_grad():
        before = generator(mel)
        generator.remove_weight_norm()
        assert not generator.weight_normed
        after = generator(mel)
        fresh = HiFiGANGenerator(**type1)
        fresh.load_state_dict(folded_state)
        via_state = fresh(mel)
    assert before.std() > 0.05
    torch.testing.assert_close(after, before, atol=1e-5, rtol=0)
    torch.testing.assert_close(via_state, before, atol=1e-5, rtol=0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(resblock="3"), "resblock must be '1' or '2'"),
        (dict(upsample_rates=[8, 8], upsample_kernel_sizes=[16]), "same length"),
        (dict(upsample_rates=[8], upsample_kernel_sizes=[15]), "even number"),
        (dict(resblock_kernel_sizes=[4], resblock_dilation_sizes=[[1]]), "odd"),
        (dict(upsample_initial_channel=2), "too small"),
    ],
)
def test_inconsistent_generator_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        HiFiGANGenerator(**kwargs)


# ------------------------------------------------------------------ the iSTFT head

ISTFT = dict(
    generator_kwargs(SMALL), upsample_rates=[8, 8], upsample_kernel_sizes=[16, 16], istft_n_fft=16, istft_hop_length=4
)


@pytest.mark.parametrize("frames", [1, 7])
def test_istft_head_makes_hop_times_frames_samples_and_trains(frames):
    torch.manual_seed(0)
    generator = HiFiGANGenerator(**ISTFT).apply_weight_norm()
    assert generator.hop_length == 8 * 8 * 4
    assert generator.conv_post.weight.shape[0] == 16 + 2  # 9 log-magnitudes, 9 phases
    assert "istft_window" not in generator.state_dict()  # rebuilt, not stored
    out = generator(torch.randn(2, 80, frames))
    assert out.shape == (2, 1, frames * 256) and torch.isfinite(out).all()
    out.square().mean().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in generator.parameters())


def test_istft_head_inverts_the_stft_with_frames_centred_like_the_features():
    # Log-magnitudes and phases of a signal's centred STFT (as conv_post would give them) come back
    # as the signal: step t of the head is centred on sample t · istft_hop_length.
    generator = HiFiGANGenerator(**ISTFT)
    steps, hop, n_fft = 50, 4, 16
    torch.manual_seed(1)
    signal = torch.randn(1, steps * hop)
    spectrum = torch.stft(signal, n_fft, hop, window=torch.hann_window(n_fft), center=True, return_complex=True)[
        ..., :steps
    ]
    phase = torch.angle(spectrum).clamp(-torch.pi + 1e-6, torch.pi - 1e-6)
    x = torch.cat([spectrum.abs().clamp_min(1e-9).log(), torch.asin(phase / torch.pi)], dim=1)
    out = generator._istft(x)
    assert out.shape == (1, 1, steps * hop)
    # The last n_fft / 2 samples also need the step after the last one.
    torch.testing.assert_close(out[0, 0, : -n_fft // 2], signal[0, : -n_fft // 2], atol=1e-4, rtol=0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(istft_n_fft=16), "go together"),
        (dict(istft_n_fft=15, istft_hop_length=4), "even"),
        (dict(istft_n_fft=16, istft_hop_length=9), "istft_n_fft/2"),
    ],
)
def test_inconsistent_istft_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        HiFiGANGenerator(**kwargs)


# ------------------------------------------------------------------ refused files and configs


def one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    "changes, named",
    [
        (dict(fmax=7600), ["fmax 7600 (acoustic model fmax 8000.0)"]),
        (
            dict(hop_size=300),
            [
                "hop_size 300 (acoustic model hop_length 256)",
                "upsample_rates [8, 8, 4] multiply to 256, not hop_size 300",
            ],
        ),
        (dict(num_mels=100), ["num_mels 100 (acoustic model n_mels 80)"]),
        (
            dict(sampling_rate=24000, n_fft=2048, win_size=2048, fmin=50),
            ["sampling_rate 24000", "n_fft 2048", "win_size 2048", "fmin 50"],
        ),
        (dict(upsample_rates=[8, 8, 2], upsample_kernel_sizes=[16, 16, 4]), ["multiply to 128, not hop_size 256"]),
    ],
)
def test_config_mismatch_names_every_key(tmp_path, changes, named):
    path, _ = save_published(tmp_path, dict(SMALL, **changes), legacy=False)
    with pytest.raises(VocoderError) as exc:
        load_hifigan(path, audio_config=CFG)
    message = one_line(exc)
    assert message.startswith(
        f"{tmp_path / 'config.json'}: HiFi-GAN config does not match the acoustic model's features"
    )
    for text in named:
        assert text in message
    assert message.count("(acoustic model") == sum(
        k in changes for k in ("sampling_rate", "n_fft", "hop_size", "win_size", "num_mels", "fmin", "fmax")
    )


def test_config_checked_against_other_feature_settings(tmp_path):
    path, _ = save_published(tmp_path, SMALL, legacy=False)
    with pytest.raises(VocoderError, match="fmax 8000 \\(acoustic model fmax 7600.0\\)") as exc:
        load_hifigan(path, audio_config=AudioConfig(fmax=7600.0))
    one_line(exc)


@pytest.mark.parametrize(
    "write, message",
    [
        (lambda p: p.unlink(), "HiFi-GAN config not found"),
        (lambda p: p.write_text("{not json"), "not a JSON HiFi-GAN config"),
        (lambda p: p.write_text("[1, 2]"), "a JSON list, not an object"),
        (
            lambda p: p.write_text(json.dumps({k: v for k, v in SMALL.items() if k not in ("resblock", "fmax")})),
            "missing resblock, fmax",
        ),
        (
            lambda p: p.write_text(json.dumps(dict(SMALL, upsample_kernel_sizes=[16, 16, 7]))),
            "unusable HiFi-GAN generator settings",
        ),
    ],
)
def test_bad_config_files(tmp_path, write, message):
    path, _ = save_published(tmp_path, SMALL, legacy=False)
    write(tmp_path / "config.json")
    with pytest.raises(VocoderError, match=message) as exc:
        load_hifigan(path, audio_config=CFG)
    assert one_line(exc).startswith(str(tmp_path / "config.json"))


@pytest.mark.parametrize("legacy", [True, False], ids=["legacy", "zip"])
def test_discriminator_file_is_refused(tmp_path, legacy):
    _, state = save_published(tmp_path, SMALL, legacy=legacy)
    do = tmp_path / "do_02500000"
    torch.save(
        {
            "mpd": state,
            "msd": state,
            "optim_g": {"state": {}, "param_groups": []},
            "optim_d": {"state": {}, "param_groups": []},
            "steps": 2500000,
            "epoch": 3,
        },
        do,
        _use_new_zipfile_serialization=not legacy,
    )
    with pytest.raises(VocoderError) as exc:
        load_hifigan(do, audio_config=CFG)
    message = one_line(exc)
    assert "discriminator" in message and "mpd, msd, optim_g, optim_d" in message and "g_XXXXXXXX" in message


def test_file_without_generator_is_refused(tmp_path):
    save_published(tmp_path, SMALL, legacy=False)
    for name, obj, text in [
        ("plain", {"model": {}}, "no 'generator' entry; keys model"),
        ("tensor", torch.zeros(3), "a Tensor"),
        ("nested", {"generator": {"conv_pre.weight": [1, 2]}}, "not a state dict of named tensors"),
    ]:
        torch.save(obj, tmp_path / name)
        with pytest.raises(VocoderError, match=text) as exc:
            load_hifigan(tmp_path / name, audio_config=CFG)
        one_line(exc)
    (tmp_path / "noise").write_bytes(os.urandom(2048))
    with pytest.raises(VocoderError, match="not a HiFi-GAN generator file") as exc:
        load_hifigan(tmp_path / "noise", audio_config=CFG)
    one_line(exc)
    with pytest.raises(VocoderError, match="HiFi-GAN generator file not found"):
        load_hifigan(tmp_path / "missing", audio_config=CFG)


def test_pickled_module_is_refused(tmp_path):
    save_published(tmp_path, SMALL, legacy=False)
    torch.save({"generator": HiFiGANGenerator(**generator_kwargs(SMALL))}, tmp_path / "module.pt")
    with pytest.raises(VocoderError, match="refused to load") as exc:
        load_hifigan(tmp_path / "module.pt", audio_config=CFG)
    assert "HiFiGANGenerator" in one_line(exc)


class _Payload:
    """Runs a shell command when unpickled, as a hostile vocoder file would."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("fmt", ["legacy", "zip", "raw pickle"])
def test_malicious_pickle_is_not_executed(tmp_path, fmt):
    save_published(tmp_path, SMALL, legacy=False)
    pickle.loads(pickle.dumps(_Payload(tmp_path / "sanity")))  # the payload really runs when unpickled
    assert (tmp_path / "sanity").exists()
    marker, evil = tmp_path / "PWNED", tmp_path / "g_00000001"
    if fmt == "raw pickle":
        evil.write_bytes(pickle.dumps({"generator": _Payload(marker)}, protocol=2))  # what torch.load reads
    else:
        torch.save({"generator": _Payload(marker)}, evil, _use_new_zipfile_serialization=fmt == "zip")
    with pytest.raises(VocoderError, match="refused to load") as exc:
        load_hifigan(evil, audio_config=CFG)
    one_line(exc)
    assert not marker.exists()


def test_weights_that_do_not_fit_the_config_are_named(tmp_path):
    # v2-shaped weights (128 channels) under a v1 config: same names, other shapes.
    path, _ = save_published(tmp_path / "v2", HIFIGAN_CONFIGS["v2"], legacy=False)
    (tmp_path / "v2" / "config.json").write_text(json.dumps(HIFIGAN_CONFIGS["v1"]))
    with pytest.raises(VocoderError) as exc:
        load_hifigan(path, audio_config=CFG)
    message = one_line(exc)
    assert "weights do not fit" in message and "conv_pre.weight (128, 80, 7) vs (512, 80, 7)" in message
    assert re.search(r"and \d+ more", message)

    # Type-1 weights under a type-2 config: other names.
    path, _ = save_published(tmp_path / "t1", dict(SMALL, resblock="1"), legacy=False)
    (tmp_path / "t1" / "config.json").write_text(json.dumps(SMALL))
    with pytest.raises(VocoderError) as exc:
        load_hifigan(path, audio_config=CFG)
    message = one_line(exc)
    assert "missing resblocks.0.convs.0.weight" in message and "unexpected resblocks.0.convs1.0.bias" in message

    # A weight norm half: g without v.
    path, state = save_published(tmp_path / "half", SMALL, legacy=False)
    torch.save({"generator": {k: v for k, v in state.items() if k != "conv_post.weight_v"}}, path)
    with pytest.raises(VocoderError, match="conv_post.weight: weight norm needs both g and v, found only g") as exc:
        load_hifigan(path, audio_config=CFG)
    one_line(exc)


def test_fold_weight_norm_matches_torchs_own_removal():
    torch.manual_seed(0)
    conv = torch.nn.utils.weight_norm(nn.ConvTranspose1d(6, 3, 4, 2))
    with torch.no_grad():
        conv.weight_g.uniform_(0.5, 2.0)
    folded = fold_weight_norm(conv.state_dict())
    torch.nn.utils.remove_weight_norm(conv)
    assert set(folded) == {"weight", "bias"}
    torch.testing.assert_close(folded["weight"], conv.weight.detach(), atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(folded["bias"], conv.bias.detach())
