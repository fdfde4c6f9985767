"""The training loop: ``Trainer`` takes a composed config and a run folder (the entry point is
:mod:`gst_tts.train`).

The run folder gets ``checkpoints/`` (``last.pt`` + periodic ones), TensorBoard event files and
Hydra's resolved config. Running again with the same ``hydra.run.dir`` resumes from ``last.pt``
(or, when that file is unreadable, the newest periodic checkpoint that loads), keeping the
validation split and mel statistics the run started with.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass
import logging
import math
from pathlib import Path
import random
import sys
import time
from typing import Any

import numpy as np
from omegaconf import DictConfig, OmegaConf
import torch

from gst_tts.analysis.alignment import alignment_health, mean_health
from gst_tts.audio.features import AudioConfig, MelStats
from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
from gst_tts.data.batching import Collate, LengthBucketSampler, TTSDataset, encode_texts
from gst_tts.data.cache import FeatureCache, default_cache_dir
from gst_tts.data.corpus import read_corpus
from gst_tts.data.split import split_train_val
from gst_tts.device import resolve_device
from gst_tts.errors import CheckpointError, GstTtsError
from gst_tts.model import GSTTacotron, count_parameters
from gst_tts.text.symbols import SymbolTable
from gst_tts.training.checkpoint import load_checkpoint, save_checkpoint
from gst_tts.training.distributed import DistributedContext
from gst_tts.training.logger import NullLogger, TrainingLogger, symbol_labels
from gst_tts.training.losses import TacotronLoss

log = logging.getLogger("gst_tts.training.trainer")



@dataclass
class TrainState:
    """Where training is in the data; the checkpoint adds weights, optimizer and random states."""

    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0
    skipped_batches: int = 0



def model_config(cfg: DictConfig, n_symbols: int) -> dict[str, Any]:
    """Constructor arguments of the model: the ``model`` config group plus data-derived sizes."""
    config = OmegaConf.to_container(cfg.model, resolve=True)
    config.pop("_target_", None)
    config.update(n_symbols=n_symbols, n_mels=int(cfg.data.audio.n_mels))
    return config


def lr_lambda(trainer: DictConfig):
    """Linear warm-up, then halving every ``lr_decay_steps``, floored at ``min_learning_rate``."""
    floor = trainer.min_learning_rate / trainer.learning_rate

    def factor(step: int) -> float:
        warm = min(1.0, (step + 1) / max(1, trainer.warmup_steps))
        decay = 0.5 ** (max(0, step - trainer.warmup_steps) / trainer.lr_decay_steps)
        return max(floor, warm * decay)

    return factor


class Trainer:
    """Builds everything from a resolved config and runs the loop. One process, one device."""

    def __init__(self, cfg: DictConfig, run_dir: str | Path) -> None:
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.ckpt_dir = self.run_dir / "checkpoints"
        tr = cfg.trainer
        self.dist = DistributedContext.from_environment(str(tr.device))
        self.device = self.dist.device or resolve_device(str(tr.device))
        # Each rank draws different dropout; the model itself is initialised identically below.
        _seed_everything(int(cfg.seed))

        if not cfg.data.root:
            raise GstTtsError("data.root is not set: give data.root=/path/to/corpus (LJSpeech format)")
        self.audio_config = AudioConfig(**OmegaConf.to_container(cfg.data.audio, resolve=True))
        self.symbols = SymbolTable(cleaner=str(cfg.data.cleaner))
        utterances = read_corpus(cfg.data.root)
        texts = encode_texts(utterances, self.symbols)
        cache_dir = Path(cfg.data.cache_dir) if cfg.data.cache_dir else default_cache_dir(cfg.data.root)
        self.cache = FeatureCache(cache_dir, self.audio_config)
        with self.dist.rank_zero_first():  # one process computes features, the others then read them
            n_frames = self.cache.prepare(utterances, progress=bool(tr.progress) and self.dist.is_main)

        kept = [u.id for u in utterances if not cfg.data.max_frames or n_frames[u.id] <= cfg.data.max_frames]
        if len(kept) < len(utterances):
            log.info("left out %d utterances longer than %d frames", len(utterances) - len(kept), cfg.data.max_frames)
        # A resumed run keeps the split and normalisation it started with: recomputing them after a
        # corpus or config edit would move validation items into training and shift the targets.
        resume = self._find_resume_checkpoint() if bool(tr.resume) else None
        if resume is None:
            train_ids, val_ids = split_train_val(kept, cfg.data.val_size, int(cfg.seed))
            with self.dist.rank_zero_first():
                self.stats = self.cache.stats(train_ids)
        else:
            train_ids, val_ids = self._stored_split(*resume, [u.id for u in utterances], kept)
            self.stats = MelStats.from_dict(resume[1]["mel_stats"])
        by_id = {u.id: i for i, u in enumerate(utterances)}

        def subset(ids: list[str]) -> TTSDataset:
            idx = [by_id[i] for i in ids]
            return TTSDataset([utterances[i] for i in idx], [texts[i] for i in idx], n_frames, self.cache, self.stats)

        self.train_set, self.val_set = subset(train_ids), subset(val_ids)
        self.model_config = model_config(cfg, len(self.symbols))
        self.model = GSTTacotron(**self.model_config).to(self.device)
        torch.manual_seed(int(cfg.seed) + self.dist.rank)
        self.train_model = self.dist.wrap(self.model)
        self.r = self.model.reduction_factor
        self.collate = Collate(self.r, self.symbols.pad_id)
        self.sampler = LengthBucketSampler(
            self.train_set.lengths, int(cfg.data.batch_size), seed=int(cfg.seed), bucket_batches=int(cfg.data.bucket_batches),
            num_replicas=self.dist.world_size, rank=self.dist.rank,
        )
        self.loader = torch.utils.data.DataLoader(
            self.train_set, batch_sampler=self.sampler, collate_fn=self.collate,
            num_workers=int(cfg.data.num_workers), pin_memory=self.device.type == "cuda",
            # Its own generator: each new iterator draws a worker seed, which must not come from
            # the global stream that dropout uses (resuming would shift it).
            generator=torch.Generator().manual_seed(int(cfg.seed)),
        )
        loss_cfg = OmegaConf.to_container(cfg.loss, resolve=True)
        loss_cfg.pop("_target_", None)
        self.criterion = TacotronLoss(reduction_factor=self.r, **loss_cfg)
        self.optimizer = torch.optim.Adam(
            self.model.parameters(), lr=tr.learning_rate, betas=tuple(tr.adam_betas), eps=tr.adam_eps,
            weight_decay=tr.weight_decay,
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lr_lambda(tr))
        self.amp_dtype = _amp_dtype(str(tr.amp), self.device)
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.amp_dtype == torch.float16)
        self.state = TrainState()
        self.vocoder = GriffinLimVocoder(self.audio_config, n_iter=32)
        if resume is not None:
            self._resume(*resume)
        elif tr.get("init_from"):
            self._init_from(Path(str(tr.init_from)))
        # Only rank 0 writes TensorBoard events and checkpoints.
        self.logger = TrainingLogger(
            self.run_dir / "tensorboard", self.audio_config.sample_rate,
            self.audio_config.hop_length / self.audio_config.sample_rate, self.r,
        ) if self.dist.is_main else NullLogger()

    # ----------------------------------------------------------------------------------------
    def fit(self) -> TrainState:
        tr = self.cfg.trainer
        max_steps = int(tr.max_steps)
        deadline = time.monotonic() + 60 * float(tr.max_minutes) if tr.max_minutes else math.inf
        log.info(
            "training %s parameters on %s: %d train / %d validation utterances, run dir %s",
            f"{count_parameters(self.model):,}", self.device, len(self.train_set), len(self.val_set), self.run_dir,
        )
        from tqdm import tqdm

        show = None if tr.progress and self.dist.is_main else True
        bar = tqdm(total=max_steps, initial=self.state.step, desc="train", unit="step", disable=show,
                   dynamic_ncols=True, file=sys.stderr)
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
                self.save(periodic=True)
            return step >= max_steps or self.dist.any(time.monotonic() >= deadline)

        try:
            while self.state.step < max_steps and not self.dist.any(time.monotonic() >= deadline):
                self.sampler.set_epoch(self.state.epoch, start=self.state.batch_in_epoch)
                pending: list[dict] = []
                for batch in self.loader:
                    self.state.batch_in_epoch += 1
                    pending.append(batch)
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
        except KeyboardInterrupt:
            bar.close()
            path = self.save(periodic=False)
            log.warning("interrupted at step %d; saved %s (resume by running the same command)", self.state.step, path)
            self.logger.close()
            raise
        bar.close()
        if self.dist.is_main and validated_at != self.state.step:
            self.validate()
        self.save(periodic=False)
        self.logger.close()
        self.dist.barrier()
        return self.state

    def _train_step(self, batches: list[dict]) -> dict[str, float] | None:
        """One optimizer update over ``batches`` (gradient accumulation); None when skipped."""
        self.model.train()
        # BatchNorm statistics move during the forward pass; a skipped batch must not move them.
        buffers = [b.detach().clone() for b in self.model.buffers()]
        self.optimizer.zero_grad(set_to_none=True)
        sums: dict[str, float] = {}
        for i, batch in enumerate(batches):
            batch = _to_device(batch, self.device)
            # Gradients are all-reduced once, on the last micro-batch.
            sync = self.dist.no_sync(self.train_model) if i < len(batches) - 1 else contextlib.nullcontext()
            with sync:
                with torch.autocast(self.device.type, dtype=self.amp_dtype or torch.float32, enabled=self.amp_dtype is not None):
                    output = self.train_model(batch["text"], batch["text_lengths"], batch["mel"], batch["mel_lengths"])
                    terms = self.criterion(output, batch, self.state.step)
                # Every rank must agree to skip, or the others would wait forever in all-reduce.
                if self.dist.any(not torch.isfinite(terms["total"])):
                    self.optimizer.zero_grad(set_to_none=True)
                    self._restore_buffers(buffers)
                    return self._skip(f"non-finite loss in batch {batch['ids'][:3]}…")
                self.scaler.scale(terms["total"] / len(batches)).backward()
            for k, v in terms.items():
                sums[k] = sums.get(k, 0.0) + float(v.detach()) / len(batches)
        self.scaler.unscale_(self.optimizer)
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.trainer.grad_clip)
        if not torch.isfinite(grad_norm):  # gradients are all-reduced, so every rank sees the same norm
            self.optimizer.zero_grad(set_to_none=True)
            scale = self.scaler.get_scale()
            self.scaler.update()
            self._restore_buffers(buffers)
            if self.scaler.is_enabled():
                # fp16 loss scaling overflowed: routine while GradScaler finds its scale (update()
                # just lowered it), not a bad batch; the loss itself was checked above.
                log.debug("step %d: fp16 gradient overflow at loss scale %g, now %g; update skipped",
                          self.state.step, scale, self.scaler.get_scale())
                return None
            return self._skip(f"non-finite gradient norm in batch {batches[-1]['ids'][:3]}…")
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        self.state.step += 1
        sums["grad_norm"] = float(grad_norm)
        return sums

    def _restore_buffers(self, saved: list[torch.Tensor]) -> None:
        with torch.no_grad():
            for buffer, value in zip(self.model.buffers(), saved):
                buffer.copy_(value)

    def _skip(self, reason: str) -> None:
        self.state.skipped_batches += 1
        log.warning("step %d: skipped a batch: %s", self.state.step, reason)
        self.logger.log_skipped_batch(self.state.step, reason, self.state.skipped_batches)
        return None

    def validate(self) -> dict[str, float]:
        """Teacher-forced validation loss plus free-running alignment health; returns a summary.

        Runs on a forked RNG with a fixed seed: validations are comparable across steps (same
        dropout draws) and do not shift the training run's random stream, so resuming is exact.
        """
        devices = [self.device] if self.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices), torch.no_grad():
            torch.manual_seed(int(self.cfg.seed))
            return self._validate()

    def _validate(self) -> dict[str, float]:
        self.model.eval()
        step = self.state.step
        loader = torch.utils.data.DataLoader(self.val_set, batch_size=int(self.cfg.data.batch_size), collate_fn=self.collate)
        sums: dict[str, float] = {}
        n = 0
        for batch in loader:
            batch = _to_device(batch, self.device)
            with torch.autocast(self.device.type, dtype=self.amp_dtype or torch.float32, enabled=self.amp_dtype is not None):
                output = self.model(batch["text"], batch["text_lengths"], batch["mel"], batch["mel_lengths"])
                terms = self.criterion(output, batch, step)
            for k, v in terms.items():
                sums[k] = sums.get(k, 0.0) + float(v) * len(batch["ids"])
            n += len(batch["ids"])
        val_terms = {k: v / max(1, n) for k, v in sums.items()}

        # Free-running synthesis of a few validation utterances, each with itself as style reference.
        count = min(len(self.val_set), int(self.cfg.trainer.val_inference_utterances))
        healths, sample = [], None
        if count:
            batch = _to_device(self.collate([self.val_set[i] for i in range(count)]), self.device)
            out = self.model.infer(batch["text"], batch["text_lengths"], batch["mel"], batch["mel_lengths"])
            for i in range(count):
                steps, symbols = int(out.steps[i]), int(batch["text_lengths"][i])
                alignment = out.alignments[i, :steps, :symbols].float().cpu()
                healths.append(alignment_health(alignment))
            frames = int(out.mel_lengths[0])
            log_mel = self.stats.denormalize(out.mel_postnet[0, :frames].float().cpu())
            target_frames = int(batch["mel_lengths"][0])
            sample = {
                "alignment": out.alignments[0, : int(out.steps[0]), : int(batch["text_lengths"][0])].float().cpu().numpy(),
                "mel": log_mel.numpy(),
                "target_mel": self.stats.denormalize(batch["mel"][0, :target_frames].cpu()).numpy(),
                "stop_probs": out.stop_probs[0, : int(out.steps[0])].cpu().numpy(),
                "labels": symbol_labels(self.symbols.symbols, batch["text"][0, : int(batch["text_lengths"][0])].tolist()),
                "style_weights": out.style_weights[0].float().cpu().numpy() if out.style_weights is not None else None,
                "audio": self.vocoder(log_mel),
                "health": healths[0],
            }
            stopped = float(out.stopped_on_token[:count].float().mean())
        health = mean_health(healths) if healths else {}
        if healths:
            health["stopped_on_token_rate"] = stopped
        self.logger.log_validation(step, val_terms, health, sample)
        self.logger.flush()
        summary = {"val": val_terms.get("mel_postnet", float("nan"))}
        if healths:
            summary.update(focus=health["focus"], cover=health["coverage"])
        log.info("step %d: %s", step, "  ".join(f"{k} {v:.3f}" for k, v in summary.items()))
        return summary

    # ----------------------------------------------------------------------------------------
    def checkpoint_payload(self) -> dict[str, Any]:
        return {
            "model": self.model.state_dict(),
            "model_config": self.model_config,
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "train_state": asdict(self.state),
            "step": self.state.step,
            "config": OmegaConf.to_container(self.cfg, resolve=True),
            "symbols": self.symbols.to_dict(),
            "audio_config": asdict(self.audio_config),
            "mel_stats": self.stats.to_dict(),
            "val_ids": [u.id for u in self.val_set.utterances],
            "train_ids": sorted(u.id for u in self.train_set.utterances),
            "rng": _rng_state(),
        }

    def save(self, periodic: bool) -> Path:
        path = self.ckpt_dir / "last.pt"
        if not self.dist.is_main:
            return path
        payload = self.checkpoint_payload()
        if periodic:
            save_checkpoint(self.ckpt_dir / f"step_{self.state.step:07d}.pt", payload)
            old = sorted(self.ckpt_dir.glob("step_*.pt"))[: -int(self.cfg.trainer.keep_checkpoints) or None]
            for stale in old:
                stale.unlink(missing_ok=True)
        return save_checkpoint(path, payload)

    def _find_resume_checkpoint(self) -> tuple[Path, dict[str, Any]] | None:
        """``last.pt`` and its contents; the newest periodic checkpoint that loads if ``last.pt`` does not."""
        last = self.ckpt_dir / "last.pt"
        if not last.is_file():
            return None
        try:
            return last, load_checkpoint(last, map_location=self.device)
        except CheckpointError as exc:
            problem = exc
        for candidate in sorted(self.ckpt_dir.glob("step_*.pt"), reverse=True):
            try:
                ckpt = load_checkpoint(candidate, map_location=self.device)
            except CheckpointError as exc:
                log.warning("%s", exc)
                continue
            log.warning("%s; resuming from %s instead (the newest periodic checkpoint that loads)", problem, candidate)
            return candidate, ckpt
        raise CheckpointError(f"{problem}; no periodic checkpoint (step_*.pt) in {self.ckpt_dir} loads either")

    def _stored_split(self, path: Path, ckpt: dict[str, Any], corpus_ids: list[str], kept_ids: list[str]) -> tuple[list[str], list[str]]:
        """The checkpoint's validation ids; training gets the rest of the corpus within ``max_frames``."""
        if ckpt.get("val_ids") is None:
            log.warning("%s has no stored validation split; splitting the corpus afresh", path)
            return split_train_val(kept_ids, self.cfg.data.val_size, int(self.cfg.seed))
        val_ids = list(ckpt["val_ids"])
        present = set(corpus_ids)
        missing = [i for i in val_ids if i not in present]
        if missing:
            shown = ", ".join(missing[:5]) + (", …" if len(missing) > 5 else "")
            raise GstTtsError(
                f"{path}: {len(missing)} of its validation utterances are no longer in {self.cfg.data.root} ({shown}); "
                "restore them, or start a new run in another hydra.run.dir"
            )
        stored_cfg = OmegaConf.create(ckpt.get("config") or {})
        for key in ("data.val_size", "seed", "data.max_frames"):
            before, now = OmegaConf.select(stored_cfg, key), OmegaConf.select(self.cfg, key)
            if before is not None and before != now:
                log.warning("%s is %s but %s was trained with %s: keeping its validation split and mel statistics",
                            key, now, path, before)
        val = set(val_ids)
        train_ids = [i for i in kept_ids if i not in val]
        if ckpt.get("train_ids") is not None:
            stored_train = set(ckpt["train_ids"])
            added = sorted(set(train_ids) - stored_train)
            gone = sorted(stored_train - set(train_ids))
            if added or gone:
                log.warning(
                    "the training set differs from %s's: %d utterances added%s, %d gone%s; "
                    "normalisation keeps the checkpoint's mel statistics", path,
                    len(added), f" ({', '.join(added[:3])}…)" if added else "",
                    len(gone), f" ({', '.join(gone[:3])}…)" if gone else "",
                )
        return train_ids, val_ids

    def _resume(self, path: Path, ckpt: dict[str, Any]) -> None:
        """Continue a run from its checkpoint.

        The torch CPU, CUDA (every visible device), Python and numpy random states are restored,
        so the same batches and dropout masks follow. On CPU in one process the resumed run is
        bit-identical to an uninterrupted one. On CUDA it draws the same masks but may differ in
        the last bits (nondeterministic GPU kernels); the CUDA state is restored only with the same
        number of visible devices (otherwise a warning). Under DDP, ranks other than 0 continue
        with fresh dropout streams.
        """
        if ckpt["model_config"] != self.model_config:
            raise GstTtsError(f"{path}: the model config differs from this run's; use another hydra.run.dir")
        self.model.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        self.scheduler.load_state_dict(ckpt["scheduler"])
        if "scaler" in ckpt:
            self.scaler.load_state_dict(ckpt["scaler"])
        self.state = TrainState(**ckpt["train_state"])
        _restore_rng(ckpt["rng"], path, on_cuda=self.device.type == "cuda")
        if self.dist.rank > 0:  # the checkpoint holds rank 0's stream; keep ranks' dropout distinct
            torch.manual_seed(int(self.cfg.seed) + 100003 * self.dist.rank + self.state.step)
        log.info("resumed from %s at step %d", path, self.state.step)

    def _init_from(self, path: Path) -> None:
        """Starts from another run's model weights (fine-tuning); optimizer, schedule and step start fresh."""
        ckpt = load_checkpoint(path, map_location=self.device)
        if ckpt.get("model_config") != self.model_config:
            raise GstTtsError(f"{path}: trainer.init_from needs the same model config as this run (model=..., r, sizes)")
        if ckpt.get("symbols") != self.symbols.to_dict():
            raise GstTtsError(f"{path}: trainer.init_from needs the same symbol table and cleaner as this run")
        self.model.load_state_dict(ckpt["model"])
        log.info("initialised the model from %s (its step %s); training starts at step 0", path, ckpt.get("step"))


def _rng_state() -> dict[str, Any]:
    """Every random stream training draws from; CUDA's holds the GPU dropout masks."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    # A run that never touched CUDA has nothing to save there; asking would start it on the GPU.
    used_cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if used_cuda else None,
        "python": random.getstate(),
        # As a tensor and numbers: weights-only loading refuses numpy arrays.
        "numpy": [kind, torch.from_numpy(keys.astype(np.int64)), pos, has_gauss, gauss],
    }


def _restore_rng(rng: dict[str, Any], path: Path, on_cuda: bool) -> None:
    """Restores what :func:`_rng_state` saved; ``on_cuda``: this run draws dropout on the GPU."""
    torch.set_rng_state(rng["torch"].cpu())
    random.setstate(_as_tuple(rng["python"]))
    if rng.get("numpy") is not None:
        kind, keys, pos, has_gauss, gauss = rng["numpy"]
        np.random.set_state((kind, keys.cpu().numpy().astype(np.uint32), pos, has_gauss, gauss))
    cuda = rng.get("cuda")
    if not torch.cuda.is_available():
        return
    if cuda and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all([state.cpu() for state in cuda])
    elif on_cuda and not cuda:
        log.warning("%s holds no CUDA random state (written without CUDA): GPU dropout will not repeat an "
                    "uninterrupted run", path)
    elif on_cuda:
        log.warning("%s holds the random state of %d CUDA devices but %d are visible: GPU dropout will not "
                    "repeat an uninterrupted run", path, len(cuda), torch.cuda.device_count())


def _as_tuple(x):
    return tuple(_as_tuple(v) for v in x) if isinstance(x, (list, tuple)) else x


def _amp_dtype(amp: str, device: torch.device) -> torch.dtype | None:
    if device.type != "cuda" or amp == "none":
        return None
    if amp not in ("bf16", "fp16"):
        raise GstTtsError(f"trainer.amp must be bf16, fp16 or none, got {amp!r}")
    return torch.bfloat16 if amp == "bf16" else torch.float16


def _to_device(batch: dict, device: torch.device) -> dict:
    return {k: v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
