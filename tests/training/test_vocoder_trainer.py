"""Vocoder training: the GAN step learns, exact resume, checkpoints (full and generator-only, loadable
as --vocoder), TensorBoard audio, GTA mels, init_from, the packaged presets, one-line errors, and a
smoke run of the HiFi-GAN V2 preset (shrunk) on ljspeech-mini through the command; the same for the
spectral vocoder (``generator_kind: spectral``, the cpu_small preset, shrunk)."""

from __future__ import annotations

from dataclasses import asdict
import json
import os
from pathlib import Path
import shutil
import subprocess
import sys

from conftest import CONF_DIR, TINY_GENERATOR, vocoder_config, write_corpus
from hydra import compose, initialize_config_dir
import numpy as np
from omegaconf import OmegaConf
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.vocoders import load_vocoder
from gst_tts.audio.vocoders.checkpoint import save_vocoder_checkpoint, vocoder_payload
from gst_tts.audio.vocoders.discriminators import HiFiGANDiscriminator
from gst_tts.audio.vocoders.hifigan import HIFIGAN_CONFIGS, GENERATOR_CONFIG_KEYS, HiFiGANGenerator
from gst_tts.audio.vocoders.spectral import MagnitudeEstimator, SpectralVocoder
from gst_tts.cli import main as cli_main
from gst_tts.data.segments import collate_segments
from gst_tts.errors import DataError, GstTtsError
from gst_tts.training.vocoder_builders import build_generator
from gst_tts.training.vocoder_losses import HiFiGANLoss
from gst_tts.training.vocoder_trainer import PROGRESS_TERMS, VocoderTrainer, load_vocoder_checkpoint

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def small_corpus(tmp_path):
    return write_corpus(tmp_path / "corpus", n=5)


def spectral_config(root: Path, cache: Path, *overrides: str, **trainer):
    """The cpu_small preset (the spectral vocoder) with a 16-channel estimator, test-sized (see
    conftest's ``vocoder_config``: batches of 2 segments of 8 frames)."""
    return vocoder_config(
        root,
        cache,
        "vocoder=cpu_small",
        "generator.channels=16",
        "generator.kernel_size=3",
        *overrides,
        tiny=False,
        **trainer,
    )


def test_one_segment_is_learnt_and_the_discriminators_separate(make_vocoder_cfg, small_corpus, tmp_path):
    torch.manual_seed(0)
    trainer = VocoderTrainer(make_vocoder_cfg(small_corpus, tmp_path / "cache", learning_rate=3e-3), tmp_path / "run")
    batch = collate_segments([trainer.train_set[(0, 0)]])
    first = trainer._train_step(batch)
    for _ in range(30):
        last = trainer._train_step(batch)
    assert last["generator/mel_l1"] < 0.7 * first["generator/mel_l1"]
    assert last["discriminator/total"] < first["discriminator/total"]
    assert trainer.state.step == 31 and trainer.state.skipped_batches == 0


def test_fit_writes_checkpoints_a_loadable_generator_and_tensorboard_audio(make_vocoder_cfg, small_corpus, tmp_path):
    run = tmp_path / "run"
    trainer = VocoderTrainer(
        make_vocoder_cfg(
            small_corpus, tmp_path / "cache", max_steps=2, val_every=2, checkpoint_every=2, keep_checkpoints=1
        ),
        run,
    )
    assert trainer.fit().step == 2
    names = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert names == ["generator.pt", "last.pt", "step_0000002.pt"]
    full = load_vocoder_checkpoint(run / "checkpoints" / "last.pt")
    for key in ("discriminator", "optimizer", "scheduler", "scaler", "train_state", "rng", "config", "val_ids"):
        assert key in full, key
    export = load_vocoder_checkpoint(run / "checkpoints" / "generator.pt")
    assert set(export) == {
        "format",
        "version",
        "generator",
        "generator_config",
        "audio_config",
        "step",
        "generator_kind",
        "digest",
    }
    assert export["generator_kind"] == full["generator_kind"] == "hifigan"
    assert not any("parametrizations" in k for k in export["generator"])  # weight norm folded

    # --vocoder PATH needs no config file: the checkpoint records its sizes and features.
    vocoder = load_vocoder(run / "checkpoints" / "generator.pt", audio_config=AudioConfig(), device="cpu")
    item = trainer.val_set.utterance(0)
    audio = vocoder(item["mel"])
    assert audio.shape == (item["mel"].shape[0] * 256,) and np.isfinite(audio).all()
    with torch.no_grad():
        trained = trainer.generator.eval()(item["mel"].T[None]).reshape(-1).numpy()
    np.testing.assert_allclose(audio, trained, atol=1e-5)

    events = EventAccumulator(str(run / "tensorboard"), size_guidance={"audio": 0, "images": 0})
    events.Reload()
    tags = events.Tags()
    assert {"val/audio_0", "val/target_audio_0"} <= set(tags["audio"])
    assert "val/mel_0" in tags["images"]
    for name in (
        "train/generator/mel_l1",
        "train/generator/feature_matching",
        "train/generator/adversarial",
        "train/discriminator/total",
        "train/grad_norm/generator",
        "train/learning_rate",
        "val/mel_l1",
    ):
        assert name in tags["scalars"], name


@pytest.mark.parametrize("kind", ["hifigan", "spectral"])
def test_resume_is_bit_identical_to_an_uninterrupted_run(make_vocoder_cfg, small_corpus, tmp_path, kind):
    make, cache = make_vocoder_cfg if kind == "hifigan" else spectral_config, tmp_path / "cache"
    full = VocoderTrainer(make(small_corpus, cache, max_steps=6, val_every=2), tmp_path / "full")
    full.fit()
    VocoderTrainer(make(small_corpus, cache, max_steps=3, val_every=2), tmp_path / "split").fit()
    resumed = VocoderTrainer(make(small_corpus, cache, max_steps=6, val_every=2), tmp_path / "split")
    assert resumed.state.step == 3
    resumed.fit()
    assert resumed.state == full.state
    assert set(full.networks) == ({"generator", "discriminator"} if kind == "hifigan" else {"generator"})
    for net in full.networks:
        a, b = full.networks[net].state_dict(), resumed.networks[net].state_dict()
        for name in a:  # weights and buffers (the spectral estimator's mel statistics)
            assert torch.equal(a[name], b[name]), f"{net}.{name}"
        assert (
            full.optimizers[net]
            .state_dict()["state"][0]["exp_avg"]
            .equal(resumed.optimizers[net].state_dict()["state"][0]["exp_avg"])
        )


def test_resume_refuses_another_generator(make_vocoder_cfg, small_corpus, tmp_path):
    cache, run = tmp_path / "cache", tmp_path / "run"
    VocoderTrainer(make_vocoder_cfg(small_corpus, cache, max_steps=1), run).fit()
    other = make_vocoder_cfg(small_corpus, cache, max_steps=2)
    other.generator.upsample_initial_channel = 32
    with pytest.raises(GstTtsError) as info:
        VocoderTrainer(other, run)
    assert "generator config differs" in str(info.value) and "\n" not in str(info.value)


def test_gta_mels_from_dump_gta_mels_are_trained_on(make_vocoder_cfg, small_corpus, tiny_checkpoint, tmp_path, capsys):
    cache, gta = tmp_path / "cache", tmp_path / "gta"
    assert (
        cli_main(
            [
                "dump-gta-mels",
                "--checkpoint",
                str(tiny_checkpoint),
                "--corpus",
                str(small_corpus),
                "--out",
                str(gta),
                "--cache-dir",
                str(cache),
                "--batch-size",
                "2",
            ]
        )
        == 0
    )
    trainer = VocoderTrainer(
        make_vocoder_cfg(small_corpus, cache, f"data.gta_dir={gta}", max_steps=2), tmp_path / "run"
    )
    item = trainer.train_set.utterance(0)
    np.testing.assert_array_equal(item["mel"].numpy(), np.load(gta / f"{item['id']}.npy"))
    assert trainer.fit().step == 2

    (gta / f"{item['id']}.npy").unlink()
    manifest = json.loads((gta / "manifest.json").read_text())
    del manifest["entries"][item["id"]]
    (gta / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DataError) as info:
        VocoderTrainer(make_vocoder_cfg(small_corpus, cache, f"data.gta_dir={gta}"), tmp_path / "other")
    assert item["id"] in str(info.value) and "dump-gta-mels" in str(info.value) and "\n" not in str(info.value)


def test_init_from_a_published_generator_file_or_a_run(make_vocoder_cfg, small_corpus, tmp_path):
    cache = tmp_path / "cache"
    # A generator saved as the authors' training script does, beside its config.json.
    torch.manual_seed(3)
    published = HiFiGANGenerator(**{k: TINY_GENERATOR[k] for k in GENERATOR_CONFIG_KEYS}).apply_weight_norm()
    folder = tmp_path / "published"
    folder.mkdir()
    torch.save({"generator": published.state_dict()}, folder / "g_00000100")
    features = {
        k: HIFIGAN_CONFIGS["v1"][k]
        for k in ("sampling_rate", "n_fft", "hop_size", "win_size", "num_mels", "fmin", "fmax")
    }
    (folder / "config.json").write_text(
        json.dumps({**{k: TINY_GENERATOR[k] for k in GENERATOR_CONFIG_KEYS}, **features})
    )
    tuned = VocoderTrainer(
        make_vocoder_cfg(small_corpus, cache, init_from=str(folder / "g_00000100")), tmp_path / "tuned"
    )
    mel = torch.randn(1, 80, 5)
    with torch.no_grad():
        torch.testing.assert_close(tuned.generator(mel), published(mel), atol=1e-5, rtol=1e-4)
    assert tuned.state.step == 0

    # A run's checkpoint brings its discriminators too.
    tuned.save(periodic=False, every_rank=True)
    again = VocoderTrainer(
        make_vocoder_cfg(small_corpus, cache, init_from=str(tmp_path / "tuned" / "checkpoints" / "last.pt")),
        tmp_path / "again",
    )
    for name, value in tuned.discriminator.state_dict().items():
        assert torch.equal(value, again.discriminator.state_dict()[name]), name


# ---------------------------------------------------------------------------------------------
# The spectral vocoder (generator_kind: spectral)


def test_spectral_steps_learn_with_one_network_and_the_training_mel_statistics(small_corpus, tmp_path):
    torch.manual_seed(0)
    trainer = VocoderTrainer(spectral_config(small_corpus, tmp_path / "cache", learning_rate=3e-3), tmp_path / "run")
    assert isinstance(trainer.generator, MagnitudeEstimator) and trainer.discriminator is None
    assert (
        set(trainer.networks)
        == set(trainer.optimizers)
        == set(trainer.schedulers)
        == set(trainer.scalers)
        == {"generator"}
    )
    stats = trainer.cache.stats([u.id for u in trainer.train_set.utterances])
    assert torch.equal(trainer.generator.mel_mean, stats.mean) and torch.allclose(trainer.generator.mel_std, stats.std)
    batch = collate_segments([trainer.train_set[(i, 0)] for i in range(2)])
    first = trainer._train_step(batch)
    for _ in range(20):
        last = trainer._train_step(batch)
    assert last["generator/total"] < 0.8 * first["generator/total"], (first, last)
    assert set(PROGRESS_TERMS["spectral"].values()) | {"generator/grad_norm"} <= set(first)
    # The preset's pitch head learns the recordings' F0 (the corpus's tones, 150–250 Hz) along with the magnitude.
    assert trainer.generator.pitch_head and last["generator/log_f0_l1"] < 0.8 * first["generator/log_f0_l1"], (
        first,
        last,
    )
    assert not any(k.startswith("discriminator/") for k in first)
    assert trainer.state.step == 21 and trainer.state.skipped_batches == 0
    trainer.amp_dtype = torch.bfloat16  # the CUDA default (amp: bf16) runs on the CPU too
    terms = trainer._train_step(batch)
    assert terms is not None and all(np.isfinite(v) for v in terms.values()) and trainer.state.step == 22


def test_spectral_fit_writes_checkpoints_tensorboard_audio_and_a_loadable_vocoder(small_corpus, tmp_path):
    run = tmp_path / "run"
    trainer = VocoderTrainer(
        spectral_config(
            small_corpus, tmp_path / "cache", max_steps=2, val_every=2, checkpoint_every=2, keep_checkpoints=1
        ),
        run,
    )
    assert trainer.fit().step == 2
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["generator.pt", "last.pt", "step_0000002.pt"]
    full = load_vocoder_checkpoint(run / "checkpoints" / "last.pt")
    assert full["generator_kind"] == "spectral" and "discriminator" not in full and "discriminator_config" not in full
    assert set(full["optimizer"]) == set(full["scheduler"]) == set(full["scaler"]) == {"generator"}
    export = load_vocoder_checkpoint(run / "checkpoints" / "generator.pt")
    assert set(export) == {
        "format",
        "version",
        "generator",
        "generator_config",
        "audio_config",
        "step",
        "generator_kind",
        "digest",
    }
    assert torch.equal(export["generator"]["mel_mean"], trainer.generator.mel_mean)

    vocoder = load_vocoder(run / "checkpoints" / "generator.pt", audio_config=AudioConfig(), device="cpu")
    assert isinstance(vocoder, SpectralVocoder)
    item = trainer.val_set.utterance(0)
    audio = vocoder(item["mel"])
    assert audio.shape == ((item["mel"].shape[0] - 1) * 256,) and np.isfinite(audio).all()
    expected = SpectralVocoder(MagnitudeEstimator(**trainer.generator_config), audio_config=AudioConfig())
    expected.estimator.load_state_dict(trainer.generator.state_dict())
    np.testing.assert_array_equal(audio, expected(item["mel"]))
    assert all(p.requires_grad for p in trainer.generator.parameters())  # validation froze a copy, not the network

    events = EventAccumulator(str(run / "tensorboard"), size_guidance={"audio": 0, "images": 0})
    events.Reload()
    tags = events.Tags()
    assert {"val/audio_0", "val/target_audio_0"} <= set(tags["audio"]) and "val/mel_0" in tags["images"]
    for name in (
        "train/generator/log_magnitude_l1",
        "train/generator/spectral_convergence",
        "train/generator/total",
        "train/grad_norm/generator",
        "train/learning_rate",
        "val/mel_l1",
    ):
        assert name in tags["scalars"], name
    assert not any("discriminator" in name for name in tags["scalars"])


def test_spectral_init_from_and_the_kinds_kept_apart(make_vocoder_cfg, small_corpus, tmp_path):
    cache = tmp_path / "cache"
    source = VocoderTrainer(spectral_config(small_corpus, cache, max_steps=1), tmp_path / "source")
    source.fit()
    exported = tmp_path / "source" / "checkpoints" / "generator.pt"
    # Another corpus' statistics would differ: init_from keeps the source's, with its weights.
    tuned = VocoderTrainer(spectral_config(small_corpus, cache, init_from=str(exported)), tmp_path / "tuned")
    assert tuned.state.step == 0
    for name, value in source.generator.state_dict().items():
        assert torch.equal(value, tuned.generator.state_dict()[name]), name
    # An estimator without a pitch head starts one with a pitch head (make demo's recordings' vocoder
    # → its GTA vocoder), the head untrained; the other way round there is nothing to drop.
    plain = VocoderTrainer(
        spectral_config(small_corpus, cache, "generator.pitch_head=false", max_steps=1), tmp_path / "plain"
    )
    plain.fit()
    plain_export = tmp_path / "plain" / "checkpoints" / "generator.pt"
    headed = VocoderTrainer(spectral_config(small_corpus, cache, init_from=str(plain_export)), tmp_path / "headed")
    assert headed.generator.pitch_head and not torch.any(headed.generator.pitch_output.weight)
    for name, value in plain.generator.state_dict().items():
        assert torch.equal(value, headed.generator.state_dict()[name]), name

    torch.manual_seed(0)
    hifigan = save_vocoder_checkpoint(
        tmp_path / "hifigan.pt",
        vocoder_payload(
            generator_state=HiFiGANGenerator(**TINY_GENERATOR).state_dict(),
            generator_config=TINY_GENERATOR,
            audio_config=AudioConfig(),
        ),
    )
    cases = [
        (
            spectral_config(small_corpus, cache, init_from=str(hifigan)),
            "a hifigan vocoder checkpoint, not a spectral one",
        ),
        (
            make_vocoder_cfg(small_corpus, cache, init_from=str(exported)),
            "a spectral vocoder checkpoint, not a hifigan one",
        ),
        (
            spectral_config(small_corpus, cache, "generator.channels=8", init_from=str(exported)),
            "this run's generator config",
        ),
        (
            spectral_config(small_corpus, cache, "generator.pitch_head=false", init_from=str(exported)),
            "this run's generator config",
        ),
    ]
    for cfg, message in cases:
        with pytest.raises(GstTtsError) as info:
            VocoderTrainer(cfg, tmp_path / "other")
        assert message in str(info.value) and "\n" not in str(info.value), str(info.value)
    with pytest.raises(GstTtsError) as info:  # a HiFi-GAN run in the spectral run's folder
        VocoderTrainer(make_vocoder_cfg(small_corpus, cache), tmp_path / "source")
    assert "this run's generator_kind is hifigan" in str(info.value) and "\n" not in str(info.value)


def test_spectral_max_minutes_ends_the_run(small_corpus, tmp_path):
    trainer = VocoderTrainer(
        spectral_config(small_corpus, tmp_path / "cache", max_steps=100000, max_minutes=0.02), tmp_path / "run"
    )
    state = trainer.fit()
    assert 1 <= state.step < 100000 and (tmp_path / "run" / "checkpoints" / "last.pt").is_file()


def test_a_run_at_its_step_budget_trains_nothing_and_writes_nothing(small_corpus, tmp_path, monkeypatch):
    VocoderTrainer(spectral_config(small_corpus, tmp_path / "cache", max_steps=2), tmp_path / "run").fit()
    last = tmp_path / "run" / "checkpoints" / "last.pt"
    before = last.stat().st_mtime_ns
    again = VocoderTrainer(spectral_config(small_corpus, tmp_path / "cache", max_steps=2), tmp_path / "run")
    monkeypatch.setattr(again, "_train_step", lambda batch: pytest.fail("trained past the budget"))
    monkeypatch.setattr(again, "validate", lambda: pytest.fail("validated a finished run"))
    assert again.fit().step == 2 and last.stat().st_mtime_ns == before


# ---------------------------------------------------------------------------------------------
# Configs and errors


def test_presets_restate_the_published_sizes_and_the_constructor_defaults():
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        v1, v2, small = (
            compose("vocoder_train", overrides=[f"vocoder={name}"])
            for name in ("hifigan_v1", "hifigan_v2", "cpu_small")
        )
    published = {name: {k: HIFIGAN_CONFIGS[name][k] for k in GENERATOR_CONFIG_KEYS} for name in ("v1", "v2")}
    for cfg, name in ((v1, "v1"), (v2, "v2")):
        assert OmegaConf.to_container(cfg.generator) == dict(published[name], istft_n_fft=None, istft_hop_length=None)
    assert (
        build_generator(v1.generator, audio_config=AudioConfig())[1]
        == build_generator({}, audio_config=AudioConfig())[1]
    )
    import inspect

    def defaults(cls, leave_out=()):
        return {
            n: [list(x) if isinstance(x, tuple) else x for x in p.default]
            if isinstance(p.default, tuple)
            else p.default
            for n, p in inspect.signature(cls).parameters.items()
            if n not in leave_out
        }

    assert OmegaConf.to_container(v1.discriminator) == defaults(HiFiGANDiscriminator)
    assert OmegaConf.to_container(v1.loss) == defaults(HiFiGANLoss, leave_out=("audio_config",))
    assert OmegaConf.to_container(v1.data.audio) == asdict(AudioConfig())
    # The CPU preset is the spectral vocoder: an estimator of a linear magnitude per frame.
    assert v1.generator_kind == "hifigan" and small.generator_kind == "spectral"
    estimator, config = build_generator(small.generator, audio_config=AudioConfig(), kind="spectral")
    assert isinstance(estimator, MagnitudeEstimator) and estimator(torch.zeros(1, 3, 80)).shape == (1, 3, 513)
    assert config == {
        "sample_rate": 22050,
        "n_fft": 1024,
        "n_mels": 80,
        "fmin": 0.0,
        "fmax": 8000.0,  # from data.audio
        "channels": 192,
        "kernel_size": 5,
        "dilations": [1, 2, 1, 2],
        "pitch_head": True,
    }
    assert (small.data.batch_size, small.data.segment_frames, small.data.num_workers) == (16, 64, 0)
    assert (
        small.trainer.learning_rate == 1e-3 and small.trainer.lr_decay ** (4000 / small.trainer.lr_decay_steps) == 0.25
    )
    assert (small.trainer.max_steps, small.trainer.max_minutes) == (3000, None) and v1.data.batch_size == 16


def test_config_mistakes_are_one_line_before_the_corpus_is_read(make_vocoder_cfg, tmp_path):
    missing = tmp_path / "no-corpus"
    cases = [
        ({"generator": {"upsample_rates": [8, 8, 2]}}, "make 128 samples per frame, but data.audio.hop_length is 256"),
        ({"generator": {"n_mels": 80}}, "generator.n_mels comes from data.audio.n_mels"),
        ({"discriminator": {"periodz": [2]}}, "did you mean 'periods'"),
        ({"loss": {"mel_fmax": 20000.0}}, "Nyquist"),
        ({"trainer": {"lr_decay": 0}}, "trainer.lr_decay"),
        ({"data": {"segment_frames": 0}}, "data.segment_frames"),
        ({"data": {"gta_share": 1.5}}, "data.gta_share must be a number within [0, 1], got 1.5"),
    ]
    for change, message in cases:
        cfg = OmegaConf.merge(make_vocoder_cfg(missing, tmp_path / "cache"), change)
        with pytest.raises(GstTtsError) as info:
            VocoderTrainer(cfg, tmp_path / "run")
        assert message in str(info.value) and "\n" not in str(info.value), (change, str(info.value))


def test_spectral_config_mistakes_are_one_line_before_the_corpus_is_read(tmp_path):
    missing = tmp_path / "no-corpus"
    cases = [
        (["generator_kind=wavenet"], "generator_kind must be one of hifigan, spectral, got 'wavenet'"),
        (["data.segment_frames=4"], "data.segment_frames must exceed 4 for the spectral vocoder"),
        (["+generator.upsample_rates=[8,8]"], "not an argument of gst_tts.audio.vocoders.spectral.MagnitudeEstimator"),
        (["+generator.n_fft=2048"], "generator.n_fft comes from data.audio.n_fft"),
    ]
    for overrides, message in cases:
        with pytest.raises(GstTtsError) as info:
            VocoderTrainer(spectral_config(missing, tmp_path / "cache", *overrides), tmp_path / "run")
        assert message in str(info.value) and "\n" not in str(info.value), (overrides, str(info.value))


def test_bad_corpus_ends_the_command_with_one_line_and_exit_2(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", n=3)
    (corpus / "metadata.csv").write_text("UT-000|one|one\nUT-001|two\nUT-002|x|y|z\n")
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gst_tts.training.train_vocoder",
            "--config-dir",
            str(CONF_DIR),
            f"data.root={corpus}",
            f"data.cache_dir={tmp_path / 'cache'}",
            "trainer.device=cpu",
            f"hydra.run.dir={tmp_path / 'run'}",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.strip().splitlines() == [
        f"error: {corpus / 'metadata.csv'}:3: expected 2 or 3 '|'-separated columns, got 4"
    ]


def test_hifigan_v2_preset_on_ljspeech_mini_runs_resumes_and_logs_audio(shared_data, make_vocoder_cfg, tmp_path):
    source = shared_data / "ljspeech-mini"
    corpus = tmp_path / "lj"
    (corpus / "wavs").mkdir(parents=True)
    lines = (source / "metadata.csv").read_text(encoding="utf-8").splitlines()[:3]
    for line in lines:
        shutil.copy(source / "wavs" / f"{line.split('|')[0]}.wav", corpus / "wavs")
    (corpus / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = tmp_path / "run"

    def config(steps: int):
        # The V2 generator with a quarter of its channels and tiny discriminators: CPU test sizes.
        cfg = make_vocoder_cfg(
            corpus,
            tmp_path / "cache",
            "vocoder=hifigan_v2",
            "generator.upsample_initial_channel=32",
            tiny=False,
            max_steps=steps,
            val_every=2,
        )
        return OmegaConf.merge(
            cfg,
            {
                "discriminator": {
                    "period_channels": [4, 8],
                    "periods": [2, 3],
                    "n_scales": 1,
                    "scale_channels": [16] * 7,
                }
            },
        )

    assert VocoderTrainer(config(2), run).fit().step == 2
    resumed = VocoderTrainer(config(3), run)
    assert resumed.state.step == 2 and resumed.generator_config["upsample_rates"] == [8, 8, 2, 2]
    assert resumed.fit().step == 3
    events = EventAccumulator(str(run / "tensorboard"), size_guidance={"audio": 0})
    events.Reload()
    assert sorted(e.step for e in events.Audio("val/audio_0")) == [2, 3]  # one event file per process
    vocoder = load_vocoder(run / "checkpoints" / "generator.pt", audio_config=AudioConfig())
    assert vocoder(np.zeros((4, 80), np.float32)).shape == (1024,)


def test_autocast_and_loss_scaling_paths(make_vocoder_cfg, small_corpus, tmp_path, caplog):
    # CUDA is not needed to run the AMP code: bf16 autocast and GradScalers exist on the CPU too.
    trainer = VocoderTrainer(make_vocoder_cfg(small_corpus, tmp_path / "cache"), tmp_path / "run")
    batch = collate_segments([trainer.train_set[(i, 0)] for i in range(2)])
    trainer.amp_dtype = torch.bfloat16
    trainer.scalers = {name: torch.amp.GradScaler("cpu", init_scale=2.0**8) for name in ("generator", "discriminator")}
    terms = trainer._train_step(batch)
    assert terms is not None and all(np.isfinite(v) for v in terms.values()) and trainer.state.step == 1
    # A scale that overflows: the update is skipped and the scale lowered, and no batch counts as bad.
    before = {k: v.clone() for k, v in trainer.discriminator.state_dict().items() if "_u" not in k and "_v" not in k}
    trainer.scalers["discriminator"] = torch.amp.GradScaler("cpu", init_scale=3e38)
    with caplog.at_level("DEBUG", logger="gst_tts.training.vocoder_trainer"):
        assert trainer._train_step(batch) is None
    assert trainer.state.step == 1 and trainer.state.skipped_batches == 0
    assert trainer.scalers["discriminator"].get_scale() == pytest.approx(1.5e38) and "overflow" in caplog.text
    for name, value in before.items():
        assert torch.equal(value, trainer.discriminator.state_dict()[name]), name
