"""What the training loops share (the acoustic :mod:`~gst_tts.training.trainer` and the
:mod:`~gst_tts.training.vocoder_trainer`): the loop's position (:class:`TrainState`), the parts of
a trainer around its steps (:class:`TrainingLoop`: skipped batches, Ctrl-C, the end of a run,
resuming), seeding, the AMP setting, moving batches to the device, periodic checkpoints with
rotation, clearing what killed checkpoint writes left."""

from __future__ import annotations

from dataclasses import asdict, dataclass
import logging
import os
from pathlib import Path
import random
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import torch

from gst_tts.errors import CheckpointError, GstTtsError
from gst_tts.files import remove_temporaries
from gst_tts.checkpoints.acoustic import restore_rng_state, rng_state
from gst_tts.checkpoints.weights import payload_digest

log = logging.getLogger(__name__)


@dataclass
class TrainState:
    """Where training is in the data; the checkpoint adds weights, optimizer and random states."""

    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0
    skipped_batches: int = 0


class TrainingLoop:
    """The parts of a trainer around its steps. A subclass sets ``cfg``, ``state``, ``dist``,
    ``device``, ``audio_config``, ``logger``, ``log`` (its module's logger) and ``networks`` (name →
    module, the weights being trained) and defines ``save(periodic, *, every_rank)`` and ``validate()``."""

    log: logging.Logger

    def _skip(self, reason: str) -> None:
        """Counts and reports a batch whose update was not applied; returns None (the step's result)."""
        self.state.skipped_batches += 1
        self.log.warning("step %d: skipped a batch: %s", self.state.step, reason)
        self.logger.log_skipped_batch(self.state.step, reason, self.state.skipped_batches)
        return None

    def _interrupted(self, bar) -> None:
        """Ctrl-C: saves ``last.pt`` and closes the event files (the caller re-raises)."""
        bar.close()
        path = self.save(periodic=False, every_rank=False)  # the other ranks need not be at this point
        exact = " (under DDP the ranks other than 0 will continue on fresh random streams)" if self.dist.enabled else ""
        self.log.warning(
            "interrupted at step %d; saved %s (resume by running the same command%s)", self.state.step, path, exact
        )
        self.logger.close()

    def _finish(self, bar, validated_at: int | None) -> TrainState:
        """The end of a run: a last validation unless this step had one, ``last.pt``, every rank done."""
        bar.close()
        if self.dist.is_main and validated_at != self.state.step:
            self.validate()
        self.save(periodic=False, every_rank=True)
        self.logger.close()
        if self.dist.enabled:
            # Ranks other than 0 save nothing: this line is how to see that they agree with it.
            self.log.info(
                "rank %d of %d finished at step %d: parameters %s",
                self.dist.rank,
                self.dist.world_size,
                self.state.step,
                parameter_digest(self.networks),
            )
        self.dist.barrier()
        return self.state

    def _check_resumable(self, path: Path, ckpt: Mapping[str, Any], parts: Sequence[str]) -> None:
        """Refuses a checkpoint of other feature settings, or one without the training ``parts``."""
        changed = [key for key, value in asdict(self.audio_config).items() if ckpt["audio_config"].get(key) != value]
        if changed:
            raise GstTtsError(
                f"{path}: data.audio differs from this run's ({', '.join(changed)}); use another hydra.run.dir"
            )
        missing = [k for k in parts if k not in ckpt]
        if missing:
            raise CheckpointError(
                f"{path}: holds no training state to resume ({', '.join(missing)} missing); "
                "use it as trainer.init_from in another hydra.run.dir"
            )

    def _checkpoint_rng(self, *, every_rank: bool) -> dict[str, Any]:
        """The checkpoint's ``rng``: this process's random streams (:func:`rng_state`) and, under DDP
        with ``every_rank``, every rank's in rank order under ``"ranks"``, so that each rank resumes
        its own dropout and reference draws. With ``every_rank`` every rank must call it together."""
        rng = rng_state()
        if not (self.dist.enabled and every_rank):
            return rng
        return {**rng, "ranks": self.dist.gather(dict(rng))}

    def _restore_position(self, path: Path, ckpt: Mapping[str, Any]) -> None:
        """The loop's position and every random stream from the checkpoint (see ``Trainer._resume``)."""
        self.state = TrainState(**ckpt["train_state"])
        ranks = ckpt["rng"].get("ranks")
        on_cuda = self.device.type == "cuda"
        if self.dist.enabled and isinstance(ranks, list) and len(ranks) == self.dist.world_size:
            restore_rng_state(ranks[self.dist.rank], path, on_cuda=on_cuda)
        else:
            restore_rng_state(ckpt["rng"], path, on_cuda=on_cuda)
            if self.dist.rank > 0:
                # Written by another number of ranks (or on Ctrl-C): no stream of this rank's own.
                # A fresh one keeps the ranks' dropout distinct.
                torch.manual_seed(int(self.cfg.seed) + 100003 * self.dist.rank + self.state.step)
                self.log.warning(
                    "rank %d: %s holds no random state of this rank's own (written by another number "
                    "of ranks, or on Ctrl-C); it continues on a fresh stream",
                    self.dist.rank,
                    path,
                )
        self.log.info("resumed from %s at step %d", path, self.state.step)


def seed_everything(seed: int) -> None:
    """Python's, numpy's and torch's random streams from ``seed``."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def amp_dtype(amp: str, device: torch.device) -> torch.dtype | None:
    """``trainer.amp`` (bf16 | fp16 | none) → the autocast dtype on ``device``; None off CUDA or with none."""
    if device.type != "cuda" or amp == "none":
        return None
    if amp not in ("bf16", "fp16"):
        raise GstTtsError(f"trainer.amp must be bf16, fp16 or none, got {amp!r}")
    return torch.bfloat16 if amp == "bf16" else torch.float16


def loader_workers(setting: object, device: torch.device) -> int:
    """``data.num_workers`` (auto or a whole number >= 0) on ``device``. auto: on CUDA, up to 4
    workers (one core left to the training process), so that padding batches overlaps the GPU's
    work; elsewhere none, since the CPU's cores are busy training.

    Raises:
        GstTtsError: another value.
    """
    if setting == "auto":
        return min(4, max(1, (os.cpu_count() or 2) - 1)) if device.type == "cuda" else 0
    if isinstance(setting, bool) or not isinstance(setting, int) or setting < 0:
        raise GstTtsError(f"data.num_workers must be auto or a whole number >= 0, got {setting!r}")
    return setting


def to_device(batch: dict, device: torch.device) -> dict:
    """The batch's tensors on ``device`` (other entries as they are)."""
    return {k: v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}


def parameter_digest(networks: Mapping[str, torch.nn.Module]) -> str:
    """``"crc32:<8 hex digits>"`` of every network's parameters (names, dtypes, shapes, values), not
    its buffers: BatchNorm's running statistics are per rank under DDP by design."""
    return payload_digest(
        {
            f"{name}.{key}": value.detach().cpu()
            for name, net in networks.items()
            for key, value in net.named_parameters()
        }
    )


def save_rotating(
    ckpt_dir: Path,
    payload: Mapping[str, Any],
    *,
    step: int,
    periodic: bool,
    keep: int,
    save: Callable[[Path, Mapping[str, Any]], Path],
) -> Path:
    """Writes ``last.pt`` with ``save`` and, when ``periodic``, ``step_<step>.pt`` too, keeping the
    newest ``keep`` periodic ones. Returns the path of ``last.pt``."""
    if periodic:
        save(ckpt_dir / f"step_{step:07d}.pt", payload)
        for stale in sorted(ckpt_dir.glob("step_*.pt"))[: -keep or None]:
            stale.unlink(missing_ok=True)
    path = save(ckpt_dir / "last.pt", payload)
    log.info("step %d: saved %s", step, path)
    return path


def remove_killed_writes(ckpt_dir: Path, log: logging.Logger) -> None:
    """Deletes the temporary files of checkpoint writes that a killed run left in ``ckpt_dir`` (each
    as large as a checkpoint; never read: a checkpoint appears only by rename, complete). Only the
    process that writes the checkpoints calls this, before it starts writing."""
    if ckpt_dir.is_dir() and (removed := remove_temporaries(ckpt_dir)):
        log.info(
            "removed %d temporary file%s of interrupted checkpoint writes from %s",
            removed,
            "s" if removed != 1 else "",
            ckpt_dir,
        )
