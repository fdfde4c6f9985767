"""Training loop: the loss falls, exact resume (stored split, statistics and random states; a damaged
last.pt), non-finite batches and fp16 overflow, loop edges, outputs."""

import logging
import math
import random

from conftest import tone, write_corpus
import numpy as np
import pytest
import soundfile as sf
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.errors import GstTtsError
from gst_tts.checkpoints.acoustic import checkpoint_payload, load_checkpoint, restore_rng_state, save_checkpoint
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.training.loop import loader_workers
from gst_tts.training.trainer import PROSODY_READ_OUT, Trainer, cuda_graphs_enabled, validation_decoding


@pytest.fixture
def small_corpus(tmp_path):
    return write_corpus(tmp_path / "corpus", n=8, styles=True)


def test_loss_falls_when_overfitting(make_cfg, small_corpus, tmp_path):
    torch.manual_seed(0)
    trainer = Trainer(make_cfg(small_corpus, tmp_path / "cache", max_steps=40), tmp_path / "run")
    batch = trainer.collate([trainer.train_set[i] for i in range(2)])
    before = trainer._train_step([batch])["mel_postnet"]
    for _ in range(40):
        after = trainer._train_step([batch])["mel_postnet"]
    assert after < 0.5 * before


def test_fit_writes_checkpoints_and_tensorboard(make_cfg, small_corpus, tmp_path):
    run = tmp_path / "run"
    state = Trainer(
        make_cfg(small_corpus, tmp_path / "cache", max_steps=4, checkpoint_every=2, val_every=2, keep_checkpoints=1),
        run,
    ).fit()
    assert state.step == 4
    ckpts = sorted(p.name for p in (run / "checkpoints").glob("*.pt"))
    assert ckpts == ["last.pt", "step_0000004.pt"]
    ckpt = load_checkpoint(run / "checkpoints" / "last.pt")
    for key in ("model", "optimizer", "scheduler", "step", "config", "symbols", "mel_stats", "rng"):
        assert key in ckpt
    assert ckpt["step"] == 4 and ckpt["config"]["data"]["root"] == str(small_corpus)
    assert "reference_frames" not in ckpt  # references were shares of utterances: inference reads them whole
    assert list((run / "tensorboard").glob("events.out.tfevents.*"))
    assert not list((run / "checkpoints").glob("*.tmp"))


def test_resume_matches_an_uninterrupted_run(make_cfg, small_corpus, tmp_path):
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
    # The neutral style's running sums come back too (the split falls on an epoch's last batch).
    assert torch.equal(resumed.neutral.mean(), full.neutral.mean())
    assert resumed.neutral.state_dict()["count"] == full.neutral.state_dict()["count"] > 0


def test_resume_with_loader_workers_matches_an_uninterrupted_run_without_them(make_cfg, small_corpus, tmp_path):
    """Training references are random crops, tilts and EQs, drawn in the main process from the
    checkpointed RNG as each batch arrives, so neither the workers nor a resume in mid-epoch changes
    what is drawn."""
    cache = tmp_path / "cache"

    def cfg(max_steps, workers):
        c = make_cfg(small_corpus, cache, max_steps=max_steps)
        c.data.num_workers, c.data.reference_crop, c.data.reference_tilt, c.data.reference_eq = workers, 0.5, 1.0, 0.3
        return c

    full = Trainer(cfg(7, 0), tmp_path / "full")
    full.fit()
    Trainer(cfg(4, 2), tmp_path / "split").fit()  # 3 batches an epoch: stops in the middle of the second
    resumed = Trainer(cfg(7, 2), tmp_path / "split")
    assert resumed.state.step == 4
    resumed.fit()
    assert resumed.state == full.state
    for (name, a), (_, b) in zip(full.model.state_dict().items(), resumed.model.state_dict().items()):
        assert torch.equal(a, b), name


def test_non_finite_loss_is_skipped_not_applied(make_cfg, small_corpus, tmp_path):
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


def test_init_from_starts_a_new_run_from_another_runs_weights(make_cfg, small_corpus, tmp_path):
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
    with pytest.raises(GstTtsError, match="same model config .*decoder_rnn_dim: .* in the checkpoint, 24 here"):
        Trainer(other, tmp_path / "third")


def test_init_from_across_corpora_with_and_without_prosody_targets(make_cfg, small_corpus, tmp_path, caplog):
    """A model trained with prosody supervision adapts to a corpus without it (and back): the
    read-out, whose size follows the corpus, starts fresh; every other weight is the source's."""
    cache = tmp_path / "cache"
    rows = [f"UT-{i:03d},{100 + 20 * i}" for i in range(8)]
    (small_corpus / "prosody.csv").write_text("id,f0_hz\n" + "\n".join(rows) + "\n")
    with_prosody = make_cfg(small_corpus, cache, max_steps=2)
    with_prosody.data.prosody = {"f0_hz": "log"}
    Trainer(with_prosody, tmp_path / "first").fit()
    source = tmp_path / "first" / "checkpoints" / "last.pt"
    saved = load_checkpoint(source)["model"]
    assert any(name.startswith(PROSODY_READ_OUT) for name in saved)
    with caplog.at_level(logging.INFO, logger="gst_tts.training.trainer"):
        plain = Trainer(make_cfg(small_corpus, cache, max_steps=2, init_from=str(source)), tmp_path / "second")
    assert plain.model_config["style_prosody_dim"] == 0 and "prosody read-out" in caplog.text
    weights = plain.model.state_dict()
    assert not any(name.startswith(PROSODY_READ_OUT) for name in weights)
    assert set(weights) == {name for name in saved if not name.startswith(PROSODY_READ_OUT)}
    for name, value in weights.items():
        assert torch.equal(value, saved[name]), name
    plain.fit()
    back = make_cfg(small_corpus, cache, max_steps=2, init_from=str(tmp_path / "second" / "checkpoints" / "last.pt"))
    back.data.prosody = {"f0_hz": "log"}
    again = Trainer(back, tmp_path / "third")
    assert again.model.style_prosody is not None
    other = make_cfg(small_corpus, cache, max_steps=2, init_from=str(source))
    other.model.decoder_rnn_dim = 24
    with pytest.raises(GstTtsError, match="same model config .*decoder_rnn_dim"):
        Trainer(other, tmp_path / "fourth")


# ---------------------------------------------------------------------------------------------
# Resuming keeps what the run started with


def test_resume_after_changing_val_size_keeps_the_stored_split_and_statistics(make_cfg, small_corpus, tmp_path, caplog):
    cache, run = tmp_path / "cache", tmp_path / "run"
    Trainer(make_cfg(small_corpus, cache, max_steps=2), run).fit()
    saved = load_checkpoint(run / "checkpoints" / "last.pt")
    # A training utterance edited since: recomputed statistics would differ from the stored ones.
    edited = next(f"UT-{i:03d}" for i in range(8) if f"UT-{i:03d}" not in saved["val_ids"])
    sf.write(small_corpus / "wavs" / f"{edited}.wav", tone(1.0, 22050, 300.0, amplitude=0.02), 22050, subtype="PCM_16")
    cfg = make_cfg(small_corpus, cache, max_steps=4)
    cfg.data.val_size = 3
    with caplog.at_level(logging.WARNING, logger="gst_tts.training.data_builders"):
        resumed = Trainer(cfg, run)
    assert resumed.state.step == 2
    val_ids = [u.id for u in resumed.val_set.utterances]
    assert val_ids == saved["val_ids"] and len(val_ids) == 2
    assert sorted(u.id for u in resumed.train_set.utterances) == saved["train_ids"]
    assert torch.equal(resumed.stats.mean, saved["mel_stats"]["mean"])
    assert torch.equal(resumed.stats.std, saved["mel_stats"]["std"])
    assert resumed.train_set.stats is resumed.stats and resumed.val_set.stats is resumed.stats
    assert "data.val_size is 3" in caplog.text and "keeping its validation split" in caplog.text
    # Without a checkpoint the same config splits and normalises afresh.
    fresh = Trainer(cfg, tmp_path / "fresh")
    assert len(fresh.val_set) == 3
    assert not torch.equal(fresh.stats.mean, resumed.stats.mean)


@pytest.mark.parametrize(
    "change, named", [(("audio", "hop_length", 200), "hop_length"), ((None, "cleaner", "basic"), "symbol table")]
)
def test_resume_refuses_other_features_or_symbols(make_cfg, small_corpus, tmp_path, change, named):
    cache, run = tmp_path / "cache", tmp_path / "run"
    Trainer(make_cfg(small_corpus, cache, max_steps=1), run).fit()
    cfg = make_cfg(small_corpus, cache, max_steps=2)
    group, key, value = change
    (cfg.data[group] if group else cfg.data)[key] = value
    with pytest.raises(GstTtsError) as info:
        Trainer(cfg, run)
    assert named in str(info.value) and "hydra.run.dir" in str(info.value) and "\n" not in str(info.value)


def test_resume_refuses_another_model_config_naming_the_setting(make_cfg, small_corpus, tmp_path):
    cache, run = tmp_path / "cache", tmp_path / "run"
    Trainer(make_cfg(small_corpus, cache, max_steps=1), run).fit()
    cfg = make_cfg(small_corpus, cache, max_steps=2)
    cfg.model.gst_reference_norm = "masked_batch" if cfg.model.gst_reference_norm != "masked_batch" else "layer"
    with pytest.raises(GstTtsError) as info:
        Trainer(cfg, run)
    message = str(info.value)
    assert (
        "gst_reference_norm: "
        f"{load_checkpoint(run / 'checkpoints' / 'last.pt')['model_config']['gst_reference_norm']!r}" in message
    )
    assert f"{cfg.model.gst_reference_norm!r} here" in message and "hydra.run.dir" in message and "\n" not in message


def test_val_ids_file_holds_out_the_listed_utterances(make_cfg, small_corpus, tmp_path):
    listed = tmp_path / "val_ids.txt"
    listed.write_text("# chosen by hand\nUT-005\n\nUT-002  # a comment\n")
    cfg = make_cfg(small_corpus, tmp_path / "cache", max_steps=1)
    cfg.data.val_ids = str(listed)
    trainer = Trainer(cfg, tmp_path / "run")
    assert [u.id for u in trainer.val_set.utterances] == ["UT-002", "UT-005"]
    assert not {"UT-002", "UT-005"} & {u.id for u in trainer.train_set.utterances}
    for text, message in (
        ("UT-002\nUT-099\n", r"val_ids.txt:2: 'UT-099' is not an utterance"),
        ("UT-002\nUT-002\n", r"val_ids.txt:2: 'UT-002' is listed twice"),
        ("# nothing\n", r"no utterance id in it"),
        ("\n".join(f"UT-{i:03d}" for i in range(8)), r"nothing is left to train on"),
    ):
        listed.write_text(text)
        with pytest.raises(GstTtsError, match=message):
            Trainer(cfg, tmp_path / "other")


def test_resume_names_validation_utterances_missing_from_the_corpus(make_cfg, small_corpus, tmp_path, caplog):
    cache, run = tmp_path / "cache", tmp_path / "run"
    Trainer(make_cfg(small_corpus, cache, max_steps=1), run).fit()
    val_ids = load_checkpoint(run / "checkpoints" / "last.pt")["val_ids"]
    train_id = next(f"UT-{i:03d}" for i in range(8) if f"UT-{i:03d}" not in val_ids)

    def drop(utt_id):
        for name in ("metadata.csv", "styles.csv"):
            path = small_corpus / name
            path.write_text(
                "".join(line + "\n" for line in path.read_text().splitlines() if not line.startswith(utt_id))
            )

    drop(train_id)
    with caplog.at_level(logging.WARNING, logger="gst_tts.training.data_builders"):
        resumed = Trainer(make_cfg(small_corpus, cache, max_steps=2), run)
    assert f"1 gone ({train_id}" in caplog.text
    assert [u.id for u in resumed.val_set.utterances] == val_ids
    drop(val_ids[0])
    with pytest.raises(GstTtsError) as info:
        Trainer(make_cfg(small_corpus, cache, max_steps=2), run)
    message = str(info.value)
    assert val_ids[0] in message and "validation" in message and "\n" not in message


def test_resume_accepts_a_model_config_recorded_before_its_defaults_were(make_cfg, small_corpus, tmp_path):
    cache, run = tmp_path / "cache", tmp_path / "run"
    Trainer(make_cfg(small_corpus, cache, max_steps=1), run).fit()
    last = run / "checkpoints" / "last.pt"
    ckpt = load_checkpoint(last)
    # Earlier checkpoints stored only the config's keys: no pad_id, none of the defaults.
    ckpt["model_config"] = {k: v for k, v in ckpt["model_config"].items() if k not in ("pad_id", "encoder_n_convs")}
    save_checkpoint(last, ckpt)
    resumed = Trainer(make_cfg(small_corpus, cache, max_steps=2), run)
    assert resumed.state.step == 1
    assert resumed.model_config["pad_id"] == 0 and resumed.model_config["encoder_n_convs"] == 3


def test_resume_from_a_checkpoint_without_training_state_is_a_clear_error(make_cfg, small_corpus, tmp_path):
    cache, run = tmp_path / "cache", tmp_path / "run"
    trainer = Trainer(make_cfg(small_corpus, cache, max_steps=1), run)
    ckpt = trainer.checkpoint()
    save_checkpoint(
        trainer.ckpt_dir / "last.pt",
        checkpoint_payload(
            model_state=ckpt["model"],
            model_config=ckpt["model_config"],
            symbols=trainer.symbols,
            audio_config=trainer.audio_config,
            mel_stats=trainer.stats,
            val_ids=ckpt["val_ids"],
        ),
    )
    with pytest.raises(GstTtsError) as info:
        Trainer(make_cfg(small_corpus, cache, max_steps=2), run)
    assert "no training state" in str(info.value) and "optimizer" in str(info.value) and "\n" not in str(info.value)


# ---------------------------------------------------------------------------------------------
# Random states in the checkpoint


def test_resume_restores_the_cuda_and_numpy_random_states(make_cfg, small_corpus, tmp_path, monkeypatch):
    cfg = make_cfg(small_corpus, tmp_path / "cache", max_steps=1)
    run = tmp_path / "run"
    trainer = Trainer(cfg, run)
    # A pretend two-GPU machine that has used CUDA: the checkpoint must carry both devices' states.
    gpu_states = [torch.randint(0, 256, (16,), dtype=torch.uint8) for _ in range(2)]
    restored = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", lambda: [s.clone() for s in gpu_states])
    monkeypatch.setattr(torch.cuda, "set_rng_state_all", restored.append)
    np.random.seed(7)
    trainer.save(periodic=False, every_rank=True)
    expected_numpy = np.random.random(3)
    np.random.seed(99)

    Trainer(cfg, run)
    assert len(restored) == 1 and len(restored[0]) == 2
    for got, want in zip(restored[0], gpu_states):
        assert torch.equal(got, want)
    np.testing.assert_array_equal(np.random.random(3), expected_numpy)


def test_cuda_random_state_that_cannot_be_restored_is_reported(tmp_path, monkeypatch, caplog):
    # Directly: a Trainer on CUDA cannot be built without a GPU.
    restored = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "set_rng_state_all", restored.append)
    rng = {"torch": torch.get_rng_state(), "python": random.getstate()}
    two_gpus = dict(rng, cuda=[torch.zeros(16, dtype=torch.uint8)] * 2)
    with caplog.at_level(logging.WARNING, logger="gst_tts.checkpoints.acoustic"):
        restore_rng_state(two_gpus, tmp_path / "a.pt", on_cuda=True)
        assert "2 CUDA devices but 1" in caplog.text
        caplog.clear()
        restore_rng_state(dict(rng, cuda=None), tmp_path / "b.pt", on_cuda=True)  # from a run without CUDA
        assert "b.pt holds no CUDA random state" in caplog.text
        caplog.clear()
        restore_rng_state(dict(rng, cuda=None), tmp_path / "c.pt", on_cuda=False)  # CPU training needs none
        assert caplog.text == ""
    assert restored == []
    restore_rng_state(dict(rng, cuda=[torch.zeros(16, dtype=torch.uint8)]), tmp_path / "d.pt", on_cuda=True)
    assert len(restored) == 1


# ---------------------------------------------------------------------------------------------
# Loop edges


def test_validation_runs_once_at_the_end(make_cfg, small_corpus, tmp_path, monkeypatch):
    trainer = Trainer(make_cfg(small_corpus, tmp_path / "cache", max_steps=3, val_every=2), tmp_path / "run")
    validated_at = []
    monkeypatch.setattr(trainer, "validate", lambda: validated_at.append(trainer.state.step) or {})
    trainer.fit()
    assert validated_at == [2, 3]


def test_a_run_at_its_step_budget_trains_validates_and_writes_nothing(make_cfg, small_corpus, tmp_path, monkeypatch):
    cfg = make_cfg(small_corpus, tmp_path / "cache", max_steps=2, checkpoint_every=1)
    Trainer(cfg, tmp_path / "run").fit()
    last = tmp_path / "run" / "checkpoints" / "last.pt"
    before = (last.read_bytes(), last.stat().st_mtime_ns)
    again = Trainer(cfg, tmp_path / "run")
    monkeypatch.setattr(again, "validate", lambda: pytest.fail("validated a finished run"))
    monkeypatch.setattr(again, "_train_step", lambda batches: pytest.fail("trained past the budget"))
    assert again.fit().step == 2
    assert (last.read_bytes(), last.stat().st_mtime_ns) == before


def test_validation_decodes_at_most_twice_the_longest_recording():
    fps = AudioConfig().frames_per_second
    assert validation_decoding(target_frames=300, frames_per_second=fps).max_frames(frames_per_second=fps) == 600
    assert validation_decoding(target_frames=5000, frames_per_second=fps).max_seconds == DecodingConfig().max_seconds
    assert (
        validation_decoding(target_frames=300, frames_per_second=fps).stop_threshold == DecodingConfig().stop_threshold
    )


def test_an_untrained_models_validation_stops_at_the_cap(make_cfg, small_corpus, tmp_path, monkeypatch):
    trainer = Trainer(make_cfg(small_corpus, tmp_path / "cache", max_steps=1), tmp_path / "run")
    steps = []
    infer = trainer.model.infer

    def spy(*args, **kwargs):
        out = infer(*args, **kwargs)
        steps.append((int(out.steps.max()), kwargs["max_frames"]))
        return out

    monkeypatch.setattr(trainer.model, "infer", spy)
    trainer.validate()
    count = min(len(trainer.val_set), trainer.cfg.trainer.val_inference_utterances)
    longest = int(trainer.collate([trainer.val_set[i] for i in range(count)])["mel_lengths"].max())
    ((ran, max_frames),) = steps
    assert max_frames == 2 * longest and ran <= math.ceil(max_frames / trainer.r)


def test_trainer_threads_sets_torch_threads(make_cfg, small_corpus, tmp_path):
    before = torch.get_num_threads()
    try:
        Trainer(make_cfg(small_corpus, tmp_path / "cache", max_steps=1, threads=1), tmp_path / "run")
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_leftover_micro_batches_make_a_smaller_step(make_cfg, small_corpus, tmp_path, monkeypatch):
    # 6 training utterances in batches of 2: 3 batches per epoch, 2 per step.
    trainer = Trainer(make_cfg(small_corpus, tmp_path / "cache", max_steps=2, grad_accumulation=2), tmp_path / "run")
    calls = []
    real = trainer._train_step

    def spy(batches):
        calls.append([i for b in batches for i in b["ids"]])
        return real(batches)

    monkeypatch.setattr(trainer, "_train_step", spy)
    state = trainer.fit()
    assert [len(ids) for ids in calls] == [4, 2]
    assert sorted(calls[0] + calls[1]) == sorted(u.id for u in trainer.train_set.utterances)
    assert state.step == 2 and state.epoch == 1 and state.batch_in_epoch == 0


def test_fp16_overflow_lowers_the_scale_without_counting_a_bad_batch(make_cfg, small_corpus, tmp_path, caplog):
    trainer = Trainer(make_cfg(small_corpus, tmp_path / "cache", max_steps=2), tmp_path / "run")
    batch = trainer.collate([trainer.train_set[i] for i in range(2)])
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    # A real GradScaler whose scale overflows float32 gradients, as fp16 overflows at smaller scales.
    trainer.scaler = torch.amp.GradScaler("cpu", init_scale=3e38)
    with caplog.at_level(logging.DEBUG, logger="gst_tts.training.trainer"):
        assert trainer._train_step([batch]) is None
    assert trainer.state.skipped_batches == 0 and trainer.state.step == 0
    assert trainer.scaler.get_scale() == pytest.approx(1.5e38)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any(r.levelno == logging.DEBUG and "overflow" in r.getMessage() for r in caplog.records)
    for k, v in trainer.model.state_dict().items():
        if v.dtype.is_floating_point:
            assert torch.equal(v, before[k]), k

    # Without loss scaling, a non-finite gradient under a finite loss is a bad batch.
    trainer.scaler = torch.amp.GradScaler("cpu", enabled=False)
    real_forward = trainer.criterion.forward
    weight = next(trainer.model.parameters())

    def nan_gradient(*args, **kwargs):
        terms = real_forward(*args, **kwargs)
        terms["total"] = terms["total"] + (weight * 0).abs().sqrt().sum()  # value 0, gradient 0 * inf
        return terms

    trainer.criterion.forward = nan_gradient
    caplog.clear()
    assert trainer._train_step([batch]) is None
    assert trainer.state.skipped_batches == 1
    assert "skipped a batch" in caplog.text


# ---------------------------------------------------------------------------------------------
# A damaged last.pt


def test_truncated_last_checkpoint_resumes_from_the_newest_periodic_one_that_loads(
    make_cfg, small_corpus, tmp_path, caplog
):
    cache, run = tmp_path / "cache", tmp_path / "run"
    Trainer(make_cfg(small_corpus, cache, max_steps=4, checkpoint_every=2, keep_checkpoints=2), run).fit()
    ckpts = run / "checkpoints"
    assert sorted(p.name for p in ckpts.glob("*.pt")) == ["last.pt", "step_0000002.pt", "step_0000004.pt"]
    for name in ("last.pt", "step_0000004.pt"):
        data = (ckpts / name).read_bytes()
        (ckpts / name).write_bytes(data[: len(data) // 2])
    with caplog.at_level(logging.WARNING, logger="gst_tts.training.data_builders"):
        resumed = Trainer(make_cfg(small_corpus, cache, max_steps=6), run)
    assert resumed.state.step == 2
    saved = load_checkpoint(ckpts / "step_0000002.pt")["model"]
    for name, value in resumed.model.state_dict().items():
        assert torch.equal(value, saved[name]), name
    resumed_line = next(r.getMessage() for r in caplog.records if "resuming from" in r.getMessage())
    assert str(ckpts / "last.pt") in resumed_line and str(ckpts / "step_0000002.pt") in resumed_line

    (ckpts / "step_0000002.pt").write_bytes(b"")
    with pytest.raises(GstTtsError, match="no periodic checkpoint"):
        Trainer(make_cfg(small_corpus, cache, max_steps=6), run)


def test_prosody_targets_supervise_the_style_read_out(make_cfg, small_corpus, tmp_path):
    ids = [f"UT-{i:03d}" for i in range(8)]
    rows = [f"{utt},{100 + 20 * i},{3 + i % 3}" for i, utt in enumerate(ids)]
    (small_corpus / "prosody.csv").write_text("id,f0_hz,word_gap\n" + "\n".join(rows) + "\n")
    cfg = make_cfg(small_corpus, tmp_path / "cache", max_steps=2)
    cfg.data.prosody = {"f0_hz": "log", "word_gap": "linear"}
    trainer = Trainer(cfg, tmp_path / "run")
    assert trainer.model_config["style_prosody_dim"] == 2
    assert trainer.prosody_targets.columns == ("f0_hz", "word_gap")
    train = torch.stack([trainer.train_set[i]["prosody"] for i in range(len(trainer.train_set))])
    assert torch.allclose(train.mean(0), torch.zeros(2), atol=1e-5)
    batch = trainer.collate([trainer.train_set[i] for i in range(2)])
    assert batch["prosody"].shape == (2, 2)
    torch.manual_seed(0)
    before = trainer._train_step([batch])["prosody"]
    for _ in range(30):
        after = trainer._train_step([batch])["prosody"]
    assert after < 0.5 * before
    assert load_checkpoint(trainer.save(periodic=False, every_rank=True))["model_config"]["style_prosody_dim"] == 2


def test_a_bad_prosody_file_stops_before_training(make_cfg, small_corpus, tmp_path):
    (small_corpus / "prosody.csv").write_text("id,f0_hz\nUT-000,abc\n")
    cfg = make_cfg(small_corpus, tmp_path / "cache", max_steps=2)
    cfg.data.prosody = {"f0_hz": "log"}
    with pytest.raises(GstTtsError, match=r"prosody.csv:2: f0_hz must be a finite number, got 'abc'"):
        Trainer(cfg, tmp_path / "run")


def test_training_references_are_cropped_but_validation_keeps_them_whole(make_cfg, small_corpus, tmp_path, monkeypatch):
    cfg = make_cfg(small_corpus, tmp_path / "cache", max_steps=1)
    cfg.data.reference_crop, cfg.data.reference_tilt, cfg.data.reference_eq = 0.5, 1.0, 0.3
    cfg.data.stop_steps_past_end = 2
    trainer = Trainer(cfg, tmp_path / "run")
    assert trainer.train_collate.reference_eq == 0.3
    assert trainer.train_collate.stop_steps_past_end == 2 and trainer.collate.stop_steps_past_end == 0
    seen = []
    forward = trainer.model.forward

    def spy(text, text_lengths, mel, mel_lengths, reference_mel=None, reference_lengths=None):
        seen.append(reference_mel is not None)
        return forward(text, text_lengths, mel, mel_lengths, reference_mel, reference_lengths)

    monkeypatch.setattr(trainer.model, "forward", spy)
    batch = next(iter(trainer.loader))
    assert "reference_mel" not in batch  # the loader pads; the loop draws
    trainer._train_step([trainer.train_collate.draw_references(batch)])
    trainer.validate()
    assert seen[0] is True and not any(seen[1:])


def test_reference_seconds_set_the_training_reference_lengths_and_the_inference_window(
    make_cfg, small_corpus, tmp_path
):
    cfg = make_cfg(small_corpus, tmp_path / "cache", max_steps=1)
    cfg.data.reference_seconds = [0.5, 0.75]
    trainer = Trainer(cfg, tmp_path / "run")
    fps = trainer.audio_config.frames_per_second
    assert trainer.train_collate.reference_frames == (round(0.5 * fps), round(0.75 * fps))
    # Inference windows are no longer than the longest training reference.
    assert trainer.checkpoint()["reference_frames"] == round(0.75 * fps)


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("reference_crop", 0.0, r"data.reference_crop must be a number in \(0, 1\], got 0.0"),
        ("reference_tilt", -1.0, r"data.reference_tilt must be a number >= 0, got -1.0"),
        ("reference_eq", "loud", r"data.reference_eq must be a number >= 0, got 'loud'"),
        ("stop_steps_past_end", 1.5, r"data.stop_steps_past_end must be an integer >= 0, got 1.5"),
        ("reference_seconds", [2.0, 1.0], r"data.reference_seconds must be \[shortest, longest\] in seconds"),
        ("reference_seconds", [1.0], r"data.reference_seconds must be \[shortest, longest\] in seconds"),
        ("reference_seconds", "long", r"data.reference_seconds must be \[shortest, longest\] in seconds"),
        ("stop_steps_past_end", -2, r"data.stop_steps_past_end must be an integer >= 0, got -2"),
    ],
)
def test_bad_reference_augmentation_settings_are_one_line_errors(make_cfg, small_corpus, tmp_path, key, value, message):
    cfg = make_cfg(small_corpus, tmp_path / "cache", max_steps=1)
    cfg.data[key] = value
    with pytest.raises(GstTtsError, match=message):
        Trainer(cfg, tmp_path / "run")


def test_loader_workers_auto_is_on_with_cuda_and_off_on_the_cpu() -> None:
    assert loader_workers("auto", torch.device("cpu")) == 0
    assert 1 <= loader_workers("auto", torch.device("cuda")) <= 4
    assert loader_workers(3, torch.device("cuda")) == 3 and loader_workers(0, torch.device("cpu")) == 0
    for bad in (-1, "two", True, 1.5):
        with pytest.raises(GstTtsError, match="data.num_workers"):
            loader_workers(bad, torch.device("cpu"))


def test_cuda_graphs_setting_is_on_only_with_cuda() -> None:
    assert cuda_graphs_enabled("auto", torch.device("cuda")) and cuda_graphs_enabled(True, torch.device("cuda"))
    assert not cuda_graphs_enabled("auto", torch.device("cpu")) and not cuda_graphs_enabled(True, torch.device("cpu"))
    assert not cuda_graphs_enabled(False, torch.device("cuda"))
    with pytest.raises(GstTtsError, match="trainer.cuda_graphs"):
        cuda_graphs_enabled("yes", torch.device("cuda"))


# ---------------------------------------------------------------------------------------------
# The weight average (trainer.weight_average_decay)


def test_weight_average_is_validated_and_saved_and_the_trained_weights_travel_beside_it(
    make_cfg, small_corpus, tmp_path
):
    cache = tmp_path / "cache"
    plain = Trainer(make_cfg(small_corpus, cache, max_steps=4, val_every=2), tmp_path / "plain")
    plain.fit()
    averaged = Trainer(
        make_cfg(small_corpus, cache, max_steps=4, val_every=2, weight_average_decay=0.5), tmp_path / "avg"
    )
    averaged.fit()
    # The average only watches: the weights being trained follow the same path as without it.
    for name, value in plain.model.state_dict().items():
        assert torch.equal(value, averaged.model.state_dict()[name]), name
    ckpt = load_checkpoint(tmp_path / "avg" / "checkpoints" / "last.pt")
    assert "training_model" not in load_checkpoint(tmp_path / "plain" / "checkpoints" / "last.pt")
    for name, value in averaged.model.state_dict().items():
        assert torch.equal(ckpt["training_model"][name], value), name
        assert torch.equal(ckpt["model"][name], averaged.average.module.state_dict()[name]), name
    moved = [n for n, p in averaged.model.named_parameters() if not torch.equal(p, ckpt["model"][n])]
    assert moved, "the average equals the trained weights"
    assert averaged.inference_model is averaged.average.module


def test_resume_with_a_weight_average_matches_an_uninterrupted_run(make_cfg, small_corpus, tmp_path):
    cache = tmp_path / "cache"
    full = Trainer(make_cfg(small_corpus, cache, max_steps=6, val_every=3, weight_average_decay=0.9), tmp_path / "full")
    full.fit()
    Trainer(make_cfg(small_corpus, cache, max_steps=3, val_every=3, weight_average_decay=0.9), tmp_path / "split").fit()
    resumed = Trainer(
        make_cfg(small_corpus, cache, max_steps=6, val_every=3, weight_average_decay=0.9), tmp_path / "split"
    )
    assert resumed.average.updates == 3
    resumed.fit()
    for mine, theirs in ((resumed.model, full.model), (resumed.average.module, full.average.module)):
        for (name, a), (_, b) in zip(mine.state_dict().items(), theirs.state_dict().items()):
            assert torch.allclose(a.float(), b.float(), atol=1e-6), name


def test_a_weight_average_turned_on_at_resume_starts_from_the_checkpoints_weights(
    make_cfg, small_corpus, tmp_path, caplog
):
    cache = tmp_path / "cache"
    Trainer(make_cfg(small_corpus, cache, max_steps=2), tmp_path / "run").fit()
    saved = load_checkpoint(tmp_path / "run" / "checkpoints" / "last.pt")["model"]
    with caplog.at_level(logging.INFO, logger="gst_tts.training.trainer"):
        resumed = Trainer(make_cfg(small_corpus, cache, max_steps=4, weight_average_decay=0.99), tmp_path / "run")
    assert "holds no weight average" in caplog.text
    for name, value in resumed.average.module.state_dict().items():
        assert torch.equal(value, saved[name]), name


@pytest.mark.parametrize("decay", [1.0, -0.1, "high", True])
def test_a_bad_weight_average_decay_is_a_one_line_error(make_cfg, small_corpus, tmp_path, decay):
    with pytest.raises(GstTtsError, match="weight_average_decay"):
        Trainer(make_cfg(small_corpus, tmp_path / "cache", max_steps=2, weight_average_decay=decay), tmp_path / "run")


def test_validation_measures_style_transfer_unless_turned_off(make_cfg, small_corpus, tmp_path, monkeypatch):
    seen = {}
    for on in (True, False):
        trainer = Trainer(
            make_cfg(small_corpus, tmp_path / "cache", max_steps=1, val_transfer=on), tmp_path / f"run{on}"
        )
        log_validation = trainer.logger.log_validation
        monkeypatch.setattr(
            trainer.logger,
            "log_validation",
            lambda *args, on=on, f=log_validation: seen.setdefault(on, args[4]) or f(*args),
        )
        trainer.validate()
    assert set(seen[True]) == {f"{m}_{k}" for m in ("log_f0", "f0_range", "log_rate") for k in ("r", "slope")}
    assert seen[False] is None
