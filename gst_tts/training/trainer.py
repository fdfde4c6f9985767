"""The training loop: ``Trainer`` takes a composed config and a run folder (the entry point is
:mod:`gst_tts.training.train`).

The run folder gets ``checkpoints/`` (``last.pt`` + periodic ones), TensorBoard event files and
Hydra's resolved config. Running again with the same ``hydra.run.dir`` resumes from ``last.pt``
(or, when that file is unreadable, the newest periodic checkpoint that loads), keeping the
validation split and mel statistics the run started with.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, replace
import logging
import math
from pathlib import Path
import time
from typing import Any, Mapping

from omegaconf import DictConfig, OmegaConf
import torch
from torch import nn

from gst_tts.analysis.alignment import alignment_health, mean_health
from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
from gst_tts.data.batching import Collate
from gst_tts.compute import resolve_device
from gst_tts.errors import GstTtsError
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.model import count_parameters
from gst_tts.progress import progress_bar
from gst_tts.compute import configure_threads
from gst_tts.training.builders import (
    build_loss,
    build_model,
    build_optimizer,
    check_average_decay,
    check_config,
    complete_model_config,
)
from gst_tts.training.data_builders import (
    ResumePoint,
    build_audio_config,
    build_corpus,
    build_datasets,
    build_feature_cache,
    build_mel_stats,
    build_prosody_targets,
    build_split,
    build_train_loader,
    find_resume_checkpoint,
    reference_seconds,
    text_frontend,
)
from gst_tts.text.frontends import reads_alike
from gst_tts.training.averaging import WeightAverage
from gst_tts.training.neutral import NeutralStyleMeter
from gst_tts.training.transfer_validation import TransferValidation
from gst_tts.checkpoints.acoustic import (
    checkpoint_parts,
    checkpoint_payload,
    load_checkpoint,
    rng_state,
    save_checkpoint,
)
from gst_tts.training.distributed import DistributedContext
from gst_tts.training.logger import NullLogger, TrainingLogger, symbol_labels
from gst_tts.training.loop import (
    TrainingLoop,
    TrainState,
    amp_dtype,
    remove_killed_writes,
    save_rotating,
    seed_everything,
    to_device,
)

log = logging.getLogger("gst_tts.training.trainer")

#: Validation's free-running syntheses stop at this many times the longest recording's length.
VALIDATION_LENGTH_FACTOR = 2.0

#: The prefix of the style-prosody read-out's weights, whose size follows the corpus's measures.
PROSODY_READ_OUT = "style_prosody."


def cuda_graphs_enabled(setting: object, device: torch.device) -> bool:
    """``trainer.cuda_graphs`` (auto | true | false) on ``device``: auto means on CUDA; off the GPU never.

    Raises:
        GstTtsError: another value.
    """
    if setting not in ("auto", True, False):
        raise GstTtsError(f"trainer.cuda_graphs must be auto, true or false, got {setting!r}")
    return device.type == "cuda" and setting in ("auto", True)


def validation_decoding(target_frames: int, frames_per_second: float) -> DecodingConfig:
    """Decoding for validation's free-running syntheses of recordings at most ``target_frames`` mel
    frames long, at ``frames_per_second`` (the run's ``sample_rate / hop_length``).

    The defaults' bound (20 frames a symbol) is several times a sentence's length, and an untrained
    model, which never stops on its own, ran every utterance to it: early validations cost the
    most. An output :data:`VALIDATION_LENGTH_FACTOR` times longer than its recording is not aligned
    whatever follows, so validation stops there; what it reports of aligned outputs is unchanged.
    """
    default = DecodingConfig()
    bound = VALIDATION_LENGTH_FACTOR * target_frames / frames_per_second
    return replace(default, max_seconds=min(default.max_seconds, bound))


class Trainer(TrainingLoop):
    """Builds everything from a resolved config (see :mod:`gst_tts.training.data_builders` and
    :mod:`gst_tts.training.builders`) and runs the loop. One process, one device."""

    log = log

    def __init__(self, cfg: DictConfig, run_dir: str | Path) -> None:
        check_config(cfg)
        self.cfg, tr, seed = cfg, cfg.trainer, int(cfg.seed)
        self.run_dir = Path(run_dir)
        self.ckpt_dir = self.run_dir / "checkpoints"
        self.dist = DistributedContext.from_environment(str(tr.device))
        self.device = self.dist.device or resolve_device(str(tr.device))
        self.threads = configure_threads(tr.get("threads"))
        # Each rank draws different dropout; the model itself is initialised identically below.
        seed_everything(seed)

        self.audio_config = build_audio_config(cfg.data.audio)
        self.dist.check_shared_folder(self.run_dir)
        if self.dist.is_main:
            remove_killed_writes(self.ckpt_dir, log)
        # A resumed run keeps the split and normalisation it started with.
        resume = find_resume_checkpoint(self.ckpt_dir, self.device) if tr.resume else None
        # A fine-tuning run reads text with its starting checkpoint's table: a phoneme table is the
        # corpus's own, and another corpus's set of phonemes would not fit the embeddings it inherits.
        # A resumed run reads with the table it stored (a fine-tuning run's is not its corpus's own).
        start = (
            None
            if resume is not None or not tr.init_from
            else (Path(str(tr.init_from)), load_checkpoint(Path(str(tr.init_from)), map_location=self.device))
        )
        table_from = resume or start
        symbols = None if table_from is None else checkpoint_parts(table_from[1], table_from[0])[0]
        if resume is not None and not reads_alike(symbols.frontend, text_frontend(cfg.data)):
            symbols = None  # read as configured: resuming then names the difference (_resume)
        corpus = build_corpus(cfg.data, symbols=symbols)
        self.symbols = corpus.symbols
        self.cache, n_frames = build_feature_cache(
            cfg.data, self.audio_config, corpus, self.dist, progress=bool(tr.progress)
        )
        split = build_split(cfg, corpus.utterances, n_frames, resume)
        # With data.reference_seconds no training reference is longer than its upper end, and inference
        # encodes longer ones in windows of that length (StyleResolver.reference_weights). A reference
        # that is a share of its utterance carries the utterance's length, which the encoder may use
        # as a rate cue: such a model reads every reference whole, as it learnt to.
        seconds = reference_seconds(cfg.data)
        reference_range = (
            None if seconds is None else tuple(max(1, round(x * self.audio_config.frames_per_second)) for x in seconds)
        )
        self.reference_frames = None if reference_range is None else reference_range[1]
        self.stats = build_mel_stats(self.cache, split, self.dist, resume)
        self.prosody_targets, prosody = build_prosody_targets(cfg.data, corpus, split)
        self.train_set, self.val_set = build_datasets(corpus, split, n_frames, self.cache, self.stats, prosody)

        self.model, self.model_config = build_model(
            cfg.model,
            n_symbols=len(self.symbols),
            n_mels=self.audio_config.n_mels,
            pad_id=self.symbols.pad_id,
            style_prosody_dim=len(self.prosody_targets.columns) if self.prosody_targets else 0,
        )
        self.model.to(self.device)
        # Validation and the checkpoints' weights: the average of the trained weights when asked for
        # (copied before the training pass gets its CUDA graphs: the average only synthesizes).
        decay = tr.get("weight_average_decay")
        self.average = None if decay is None else WeightAverage(self.model, decay=check_average_decay(decay))
        self.model.set_cuda_graphs(cuda_graphs_enabled(tr.get("cuda_graphs", "auto"), self.device))
        self.networks = {"model": self.model}
        # The neutral style: the mean token weights of the training references (read off each step's output).
        self.neutral = NeutralStyleMeter(n_heads=self.model.n_heads, n_tokens=self.model.n_tokens)
        torch.manual_seed(seed + self.dist.rank)
        self.train_model = self.dist.wrap(self.model)
        self.r = self.model.reduction_factor
        # Validation keeps each target as its own whole reference; training may crop, tilt and EQ it.
        self.collate = Collate(self.r, self.symbols.pad_id)
        self.train_collate = Collate(
            self.r,
            self.symbols.pad_id,
            reference_crop=float(cfg.data.get("reference_crop", 1.0)),
            reference_frames=reference_range,
            reference_tilt=float(cfg.data.get("reference_tilt", 0.0)),
            reference_eq=float(cfg.data.get("reference_eq", 0.0)),
            stop_steps_past_end=int(cfg.data.get("stop_steps_past_end", 0)),
        )
        self.sampler, self.loader = build_train_loader(
            self.train_set, self.train_collate, cfg.data, seed=seed, dist=self.dist, device=self.device
        )
        self.criterion = build_loss(cfg.loss, reduction_factor=self.r)
        self.optimizer, self.scheduler = build_optimizer(self.model, tr)
        self.amp_dtype = amp_dtype(str(tr.amp), self.device)
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.amp_dtype == torch.float16)
        self.state = TrainState()
        self.vocoder = GriffinLimVocoder(self.audio_config, n_iter=32)
        self.transfer = TransferValidation(self.audio_config, self.vocoder) if tr.get("val_transfer", True) else None

        if resume is not None:
            self._resume(resume)
        elif start is not None:
            self._init_from(*start)
        # Only rank 0 writes TensorBoard events and checkpoints.
        self.logger = (
            TrainingLogger(
                self.run_dir / "tensorboard",
                self.audio_config.sample_rate,
                self.audio_config.hop_length / self.audio_config.sample_rate,
                self.r,
            )
            if self.dist.is_main
            else NullLogger()
        )

    # ----------------------------------------------------------------------------------------
    def fit(self) -> TrainState:
        tr = self.cfg.trainer
        max_steps = int(tr.max_steps)
        deadline = time.monotonic() + 60 * float(tr.max_minutes) if tr.max_minutes else math.inf
        if self.state.step >= max_steps:
            log.info(
                "%s is at step %d, trainer.max_steps is %d: nothing to train (raise trainer.max_steps to train on)",
                self.run_dir,
                self.state.step,
                max_steps,
            )
            self.logger.close()
            return self.state
        log.info(
            "training %s parameters on %s (%d CPU thread%s): %d train / %d validation utterances, run dir %s",
            f"{count_parameters(self.model):,}",
            self.device,
            self.threads,
            "s" if self.threads != 1 else "",
            len(self.train_set),
            len(self.val_set),
            self.run_dir,
        )
        started, start_step = time.monotonic(), self.state.step
        bar = progress_bar(
            total=max_steps,
            initial=self.state.step,
            desc="train",
            unit="step",
            enabled=bool(tr.progress) and self.dist.is_main,
        )
        last_val: dict[str, float] = {}
        validated_at = None
        accumulation = max(1, int(tr.grad_accumulation))

        def update(batches: list[dict]) -> bool:
            """One optimizer step with its logging, validation and checkpoint; True when training should stop."""
            nonlocal last_val, validated_at
            terms = self._train_step(batches)
            if terms is None:
                return False
            bar.update(1)
            step = self.state.step
            if step % tr.log_every == 0:
                self.logger.log_training(step, terms, self.scheduler.get_last_lr()[0], terms.pop("grad_norm"))
            if self.dist.is_main and (step % tr.val_every == 0 or step == max_steps):
                last_val, validated_at = self.validate(), step
            bar.set_postfix(loss=f"{terms['total']:.3f}", **{k: f"{v:.2f}" for k, v in last_val.items()})
            if step % tr.checkpoint_every == 0:
                self.save(periodic=True, every_rank=True)
            return step >= max_steps or self.dist.any(time.monotonic() >= deadline)

        try:
            while self.state.step < max_steps and not self.dist.any(time.monotonic() >= deadline):
                self.sampler.set_epoch(self.state.epoch, start=self.state.batch_in_epoch)
                pending: list[dict] = []
                for batch in self.loader:
                    self.state.batch_in_epoch += 1
                    pending.append(self.train_collate.draw_references(batch))
                    if len(pending) == accumulation:
                        if update(pending):
                            break
                        pending = []
                else:
                    # An epoch's leftover micro-batches make one smaller update (the loss is averaged
                    # over the batches present) rather than being dropped: every utterance is used
                    # each epoch. Every rank has the same batch count, so they agree on it.
                    if pending:
                        update(pending)
                    self.state.epoch += 1
                    self.state.batch_in_epoch = 0
                    self.neutral.end_epoch()
        except KeyboardInterrupt:
            self._interrupted(bar)
            raise
        seconds = time.monotonic() - started
        log.info(
            "trained %d steps in %.0f s (%.1f steps a minute, validations and checkpoints included%s)",
            self.state.step - start_step,
            seconds,
            60 * (self.state.step - start_step) / max(seconds, 1e-9),
            f"; {self.model.captured_cuda_graphs} CUDA graphs captured" if self.model.cuda_graphs else "",
        )
        return self._finish(bar, validated_at)

    def _train_step(self, batches: list[dict]) -> dict[str, float] | None:
        """One optimizer update over ``batches`` (gradient accumulation); None when skipped.

        The loss terms stay on the device until the update is done: the host waits for the GPU once
        per update (one copy of every term and the gradient norm), not at each term or check.
        """
        self.model.train()
        # BatchNorm statistics move during the forward pass; a skipped batch must not move them.
        buffers = [b.detach().clone() for b in self.model.buffers()]
        self.optimizer.zero_grad(set_to_none=True)
        sums: dict[str, torch.Tensor] = {}
        style_weights = []  # each micro-batch's reference token weights, counted once the update is taken
        for i, batch in enumerate(batches):
            batch = to_device(batch, self.device)
            # Gradients are all-reduced once, on the last micro-batch.
            sync = self.dist.no_sync(self.train_model) if i < len(batches) - 1 else contextlib.nullcontext()
            with sync:
                terms, output = self._loss_terms(self.train_model, batch)
                style_weights.append(output.style_weights.detach())
                # A non-finite loss is backpropagated like any other and then refused below: its
                # gradients never reach the weights, and the check needs no wait for the GPU here.
                self.scaler.scale(terms["total"] / len(batches)).backward()
            for k, v in terms.items():
                sums[k] = sums.get(k, 0.0) + v.detach().float() / len(batches)
        self.scaler.unscale_(self.optimizer)
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.trainer.grad_clip)
        names = list(sums)
        values = dict(zip(names + ["grad_norm"], torch.stack([*sums.values(), grad_norm.float()]).tolist()))
        # Every rank must agree to skip, or the others would wait forever in the next all-reduce.
        if self.dist.any(not math.isfinite(values["total"])):
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.update()  # unscale_ ran: the scaler must close this update (it counts it as overflow)
            self._restore_buffers(buffers)
            return self._skip(f"non-finite loss in batch {batches[-1]['ids'][:3]}…")
        if not math.isfinite(values["grad_norm"]):  # gradients are all-reduced, so every rank sees the same norm
            self.optimizer.zero_grad(set_to_none=True)
            scale = self.scaler.get_scale()
            self.scaler.update()
            self._restore_buffers(buffers)
            if self.scaler.is_enabled():
                # fp16 loss scaling overflowed: routine while GradScaler finds its scale (update()
                # just lowered it), not a bad batch; the loss itself was checked above.
                log.debug(
                    "step %d: fp16 gradient overflow at loss scale %g, now %g; update skipped",
                    self.state.step,
                    scale,
                    self.scaler.get_scale(),
                )
                return None
            return self._skip(f"non-finite gradient norm in batch {batches[-1]['ids'][:3]}…")
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        self.state.step += 1
        if self.average is not None:
            self.average.update(self.model)
        for weights in style_weights:
            self.neutral.add(weights)
        return values

    def _loss_terms(self, model: nn.Module, batch: dict) -> tuple[dict[str, torch.Tensor], Any]:
        """Teacher-forced loss terms of a batch on the device, under the run's autocast setting, and
        the model's output; ``model`` is the DDP wrapper in training (its forward pass syncs
        gradients), the bare model in validation."""
        with torch.autocast(
            self.device.type, dtype=self.amp_dtype or torch.float32, enabled=self.amp_dtype is not None
        ):
            output = model(
                batch["text"],
                batch["text_lengths"],
                batch["mel"],
                batch["mel_lengths"],
                batch.get("reference_mel"),
                batch.get("reference_lengths"),
            )
            return self.criterion(output, batch, self.state.step), output

    def _restore_buffers(self, saved: list[torch.Tensor]) -> None:
        with torch.no_grad():
            for buffer, value in zip(self.model.buffers(), saved):
                buffer.copy_(value)

    def validate(self) -> dict[str, float]:
        """Teacher-forced validation loss, free-running alignment health and style transfer; returns a summary.

        Runs on a forked RNG with a fixed seed: validations are comparable across steps (same
        dropout draws) and do not shift the training run's random stream, so resuming is exact.
        """
        devices = [self.device] if self.device.type == "cuda" else []
        start = time.monotonic()
        with torch.random.fork_rng(devices=devices), torch.no_grad():
            torch.manual_seed(int(self.cfg.seed))
            summary = self._validate()
        log.info(
            "step %d: %s (validation %.1f s)",
            self.state.step,
            "  ".join(f"{k} {v:.3f}" for k, v in summary.items()),
            time.monotonic() - start,
        )
        return summary

    @property
    def inference_model(self) -> nn.Module:
        """The weights validation measures and checkpoints give synthesis: the average when kept."""
        return self.model if self.average is None else self.average.module

    def _validate(self) -> dict[str, float]:
        model = self.inference_model
        model.eval()
        step = self.state.step
        loader = torch.utils.data.DataLoader(
            self.val_set, batch_size=int(self.cfg.data.batch_size), collate_fn=self.collate
        )
        sums: dict[str, float] = {}
        n = 0
        for batch in loader:
            terms, _ = self._loss_terms(model, to_device(batch, self.device))
            for k, v in terms.items():
                sums[k] = sums.get(k, 0.0) + float(v) * len(batch["ids"])
            n += len(batch["ids"])
        val_terms = {k: v / max(1, n) for k, v in sums.items()}

        # Free-running synthesis of a few validation utterances, each with itself as style reference.
        count = min(len(self.val_set), int(self.cfg.trainer.val_inference_utterances))
        healths, sample, transfer = [], None, None
        if count:
            batch = to_device(self.collate([self.val_set[i] for i in range(count)]), self.device)
            fps = self.audio_config.frames_per_second
            decoding = validation_decoding(int(batch["mel_lengths"].max()), fps)
            out = model.infer(
                batch["text"],
                batch["text_lengths"],
                batch["mel"],
                batch["mel_lengths"],
                **decoding.model_arguments(frames_per_second=fps),
            )
            alignments = [
                out.alignments[i, : int(out.steps[i]), : int(batch["text_lengths"][i])].float().cpu()
                for i in range(count)
            ]
            healths = [alignment_health(alignment) for alignment in alignments]
            frames = int(out.mel_lengths[0])
            log_mel = self.stats.denormalize(out.mel_postnet[0, :frames].float().cpu())
            target_frames = int(batch["mel_lengths"][0])
            sample = {
                "alignment": alignments[0].numpy(),
                "mel": log_mel.numpy(),
                "target_mel": self.stats.denormalize(batch["mel"][0, :target_frames].cpu()).numpy(),
                "stop_probs": out.stop_probs[0, : int(out.steps[0])].cpu().numpy(),
                "labels": symbol_labels(
                    self.symbols.symbols, batch["text"][0, : int(batch["text_lengths"][0])].tolist()
                ),
                "style_weights": out.style_weights[0].float().cpu().numpy() if out.style_weights is not None else None,
                "audio": self.vocoder(log_mel),
                "health": healths[0],
            }
            stopped = float(out.stopped_on_token[:count].float().mean())
            transfer = self._transfer_figures(batch, out, count, first_audio=sample["audio"])
        health = mean_health(healths) if healths else {}
        if healths:
            health["stopped_on_token_rate"] = stopped
        self.logger.log_validation(step, val_terms, health, sample, transfer)
        self.logger.flush()
        summary = {"val": val_terms.get("mel_postnet", float("nan"))}
        if healths:
            summary.update(focus=health["focus"], cover=health["coverage"])
        if healths and transfer:
            summary.update(rate_slope=transfer["log_rate_slope"])
        return summary

    def _transfer_figures(self, batch: dict, out: Any, count: int, first_audio: Any) -> dict[str, float] | None:
        """r and slope of the free-running outputs' F0, F0 range and rate on their references'
        (:class:`~gst_tts.training.transfer_validation.TransferValidation`); None when off."""
        if self.transfer is None:
            return None
        references, outputs = [], []
        for i in range(count):
            utterance = self.val_set.utterances[i]
            target = self.stats.denormalize(batch["mel"][i, : int(batch["mel_lengths"][i])].float().cpu()).numpy()
            references.append(self.transfer.reference(utterance.id, target, utterance.text))
            log_mel = self.stats.denormalize(out.mel_postnet[i, : int(out.mel_lengths[i])].float().cpu()).numpy()
            outputs.append(self.transfer.measure(log_mel, utterance.text, audio=first_audio if i == 0 else None))
        return self.transfer.figures(references, outputs)

    # ----------------------------------------------------------------------------------------
    def checkpoint(self, rng: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """This run's checkpoint (the layout is :func:`gst_tts.checkpoints.acoustic.checkpoint_payload`'s);
        ``rng``: its random states (default: this process's, :func:`rng_state`)."""
        return checkpoint_payload(
            model_state=self.inference_model.state_dict(),
            model_config=self.model_config,
            symbols=self.symbols,
            audio_config=self.audio_config,
            mel_stats=self.stats,
            step=self.state.step,
            reference_frames=self.reference_frames,
            config=OmegaConf.to_container(self.cfg, resolve=True),
            val_ids=[u.id for u in self.val_set.utterances],
            train_ids=[u.id for u in self.train_set.utterances],
            optimizer=self.optimizer.state_dict(),
            scheduler=self.scheduler.state_dict(),
            scaler=self.scaler.state_dict(),
            train_state=asdict(self.state),
            rng=rng_state() if rng is None else rng,
            neutral_style=self.neutral.mean(),
            neutral_meter=self.neutral.state_dict(),
            training_model_state=None if self.average is None else self.model.state_dict(),
        )

    def save(self, periodic: bool, *, every_rank: bool) -> Path:
        """``last.pt`` (and a periodic checkpoint when ``periodic``), rank 0 only; ``every_rank``:
        every rank is saving at this step, and the checkpoint gets every rank's random states."""
        path = self.ckpt_dir / "last.pt"
        rng = self._checkpoint_rng(every_rank=every_rank)
        if not self.dist.is_main:
            return path
        return save_rotating(
            self.ckpt_dir,
            self.checkpoint(rng),
            step=self.state.step,
            periodic=periodic,
            keep=int(self.cfg.trainer.keep_checkpoints),
            save=save_checkpoint,
        )

    def _resume(self, resume: ResumePoint) -> None:
        """Continue a run from its checkpoint.

        The torch CPU, CUDA (every visible device), Python and numpy random states are restored,
        so the same batches and dropout masks follow. On CPU in one process the resumed run is
        bit-identical to an uninterrupted one. On CUDA it draws the same masks but may differ in
        the last bits (nondeterministic GPU kernels); the CUDA state is restored only with the same
        number of visible devices (otherwise a warning). Under DDP each rank restores its own
        streams, stored at every checkpoint all ranks wrote together; a checkpoint written by another
        number of ranks, or on Ctrl-C, holds rank 0's alone, and the other ranks continue on fresh ones.
        """
        path, ckpt = resume
        if complete_model_config(ckpt["model_config"]) != self.model_config:
            raise GstTtsError(
                f"{path}: the model config differs from this run's ({self._config_changes(ckpt)}); "
                "use another hydra.run.dir, or set model.KEY to the checkpoint's values"
            )
        # The stored statistics normalise features of the stored settings, and the embeddings index
        # the stored symbol table: resuming with other ones would train on mismatched inputs silently.
        if ckpt["symbols"] != self.symbols.to_dict():
            raise GstTtsError(
                f"{path}: the symbol table or text cleaner differs from this run's; use another hydra.run.dir"
            )
        self._check_resumable(path, ckpt, ("optimizer", "scheduler", "train_state", "rng"))
        # With an average, "model" holds it and "training_model" the weights being trained.
        self.model.load_state_dict(ckpt.get("training_model", ckpt["model"]))
        if self.average is not None:
            if "training_model" in ckpt:
                self.average.load(ckpt["model"], updates=int(ckpt["train_state"]["step"]))
            else:
                self.average.load(ckpt["model"], updates=0)
                log.info(
                    "%s holds no weight average: the average starts from its weights at step %d",
                    path,
                    int(ckpt["train_state"]["step"]),
                )
        self.optimizer.load_state_dict(ckpt["optimizer"])
        self.scheduler.load_state_dict(ckpt["scheduler"])
        if "scaler" in ckpt:
            self.scaler.load_state_dict(ckpt["scaler"])
        if "neutral_meter" in ckpt:  # absent in older checkpoints: the neutral style counts from here
            self.neutral.load_state_dict(ckpt["neutral_meter"])
        self._restore_position(path, ckpt)

    def _config_changes(self, ckpt: Mapping[str, Any]) -> str:
        """``KEY: STORED in the checkpoint, CURRENT here`` for each model setting that differs (four named at most)."""
        stored = complete_model_config(ckpt["model_config"])
        keys = sorted(k for k in stored.keys() | self.model_config.keys() if stored.get(k) != self.model_config.get(k))
        shown = [f"{k}: {stored.get(k)!r} in the checkpoint, {self.model_config.get(k)!r} here" for k in keys[:4]]
        return "; ".join(shown) + (f"; and {len(keys) - 4} more" if len(keys) > 4 else "")

    def _init_from(self, path: Path, ckpt: dict[str, Any]) -> None:
        """Starts from another run's model weights (``ckpt``, read from ``path``: fine-tuning);
        optimizer, schedule and step start fresh.

        The model configs must match except for ``style_prosody_dim``, which follows the corpus
        (its prosody measures): adapting a model trained with prosody supervision to a corpus
        without it (or with other measures) drops the checkpoint's prosody read-out and keeps
        this run's fresh one; the rest of the model is the checkpoint's."""
        stored = complete_model_config(ckpt["model_config"])
        if {**stored, "style_prosody_dim": 0} != {**self.model_config, "style_prosody_dim": 0}:
            raise GstTtsError(
                f"{path}: trainer.init_from needs the same model config as this run ({self._config_changes(ckpt)})"
            )
        if ckpt.get("symbols") != self.symbols.to_dict():
            raise GstTtsError(f"{path}: trainer.init_from needs the same symbol table and cleaner as this run")
        weights = dict(ckpt["model"])
        if stored.get("style_prosody_dim") != self.model_config.get("style_prosody_dim"):
            fresh = self.model.state_dict()
            weights = {k: v for k, v in weights.items() if not k.startswith(PROSODY_READ_OUT)}
            weights.update({k: v for k, v in fresh.items() if k.startswith(PROSODY_READ_OUT)})
            log.info(
                "%s: its prosody read-out (%s outputs) is not used; this run's (%s) starts fresh",
                path,
                stored.get("style_prosody_dim"),
                self.model_config.get("style_prosody_dim"),
            )
        self.model.load_state_dict(weights)
        if self.average is not None:
            self.average.load(weights, updates=0)
        log.info("initialised the model from %s (its step %s); training starts at step 0", path, ckpt.get("step"))
