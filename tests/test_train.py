"""Training loop: a smoke test that the loss falls, exact resume, non-finite batches, outputs."""

from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

from conftest import TINY_MODEL, write_corpus
from gst_tts.checkpoint import load_checkpoint
from gst_tts.errors import GstTtsError
from gst_tts.train import CONFIG_MODULE, Trainer


def make_cfg(root: Path, cache: Path, **trainer):
    with initialize_config_module(config_module=CONFIG_MODULE, version_base="1.3"):
        cfg = compose("config", overrides=[f"data.root={root}", f"data.cache_dir={cache}", "data.batch_size=2",
                                           "data.val_size=2", "trainer.progress=false"])
    model = OmegaConf.merge(cfg.model, {k: list(v) if isinstance(v, tuple) else v for k, v in TINY_MODEL.items()})
    cfg.model = model
    cfg.trainer = OmegaConf.merge(cfg.trainer, dict(
        {"learning_rate": 3e-3, "warmup_steps": 1, "log_every": 1, "val_every": 1000, "checkpoint_every": 1000,
         "val_inference_utterances": 2}, **trainer))
    return cfg


@pytest.fixture
def small_corpus(tmp_path):
    return write_corpus(tmp_path / "corpus", n=8, styles=True)


def test_loss_falls_when_overfitting(small_corpus, tmp_path):
    torch.manual_seed(0)
    trainer = Trainer(make_cfg(small_corpus, tmp_path / "cache", max_steps=40), tmp_path / "run")
    batch = trainer.collate([trainer.train_set[i] for i in range(2)])
    before = trainer._train_step([batch])["mel_postnet"]
    for _ in range(40):
        after = trainer._train_step([batch])["mel_postnet"]
    assert after < 0.5 * before


def test_fit_writes_checkpoints_and_tensorboard(small_corpus, tmp_path):
    run = tmp_path / "run"
    state = Trainer(make_cfg(small_corpus, tmp_path / "cache", max_steps=4, checkpoint_every=2, val_every=2,
                             keep_checkpoints=1), run).fit()
    assert state.step == 4
    ckpts = sorted(p.name for p in (run / "checkpoints").glob("*.pt"))
    assert ckpts == ["last.pt", "step_0000004.pt"]
    ckpt = load_checkpoint(run / "checkpoints" / "last.pt")
    for key in ("model", "optimizer", "scheduler", "step", "config", "symbols", "mel_stats", "rng"):
        assert key in ckpt
    assert ckpt["step"] == 4 and ckpt["config"]["data"]["root"] == str(small_corpus)
    assert list((run / "tensorboard").glob("events.out.tfevents.*"))
    assert not list((run / "checkpoints").glob("*.tmp"))


def test_resume_matches_an_uninterrupted_run(small_corpus, tmp_path):
    cache = tmp_path / "cache"
    full = Trainer(make_cfg(small_corpus, cache, max_steps=6, val_every=2), tmp_path / "full")
    full.fit()
    Trainer(make_cfg(small_corpus, cache, max_steps=3, val_every=2), tmp_path / "split").fit()
    resumed = Trainer(make_cfg(small_corpus, cache, max_steps=6, val_every=2), tmp_path / "split")
    assert resumed.state.step == 3
    resumed.fit()
    assert resumed.state == full.state
    for (name, a), (_, b) in zip(full.model.state_dict().items(), resumed.model.state_dict().items()):
        assert torch.allclose(a.float(), b.float(), atol=1e-6), name
    assert resumed.optimizer.state_dict()["state"][0]["step"] == full.optimizer.state_dict()["state"][0]["step"]


def test_non_finite_loss_is_skipped_not_applied(small_corpus, tmp_path):
    trainer = Trainer(make_cfg(small_corpus, tmp_path / "cache", max_steps=2), tmp_path / "run")
    batch = trainer.collate([trainer.train_set[i] for i in range(2)])
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    real_forward = trainer.criterion.forward

    def nan_loss(*args, **kwargs):
        terms = real_forward(*args, **kwargs)
        terms["total"] = terms["total"] * float("nan")
        return terms

    trainer.criterion.forward = nan_loss
    assert trainer._train_step([batch]) is None
    assert trainer.state.skipped_batches == 1 and trainer.state.step == 0
    for k, v in trainer.model.state_dict().items():
        if v.dtype.is_floating_point:
            assert torch.equal(v, before[k]), k


def test_init_from_starts_a_new_run_from_another_runs_weights(small_corpus, tmp_path):
    cache = tmp_path / "cache"
    Trainer(make_cfg(small_corpus, cache, max_steps=2), tmp_path / "first").fit()
    source = tmp_path / "first" / "checkpoints" / "last.pt"
    tuned = Trainer(make_cfg(small_corpus, cache, max_steps=2, init_from=str(source)), tmp_path / "second")
    saved = load_checkpoint(source)["model"]
    for name, value in tuned.model.state_dict().items():
        assert torch.equal(value, saved[name]), name
    assert tuned.state.step == 0
    other = make_cfg(small_corpus, cache, max_steps=2, init_from=str(source))
    other.model.decoder_rnn_dim = 24
    with pytest.raises(GstTtsError, match="same model config"):
        Trainer(other, tmp_path / "third")
