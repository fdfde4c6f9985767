"""What the training loops share (the acoustic :mod:`~gst_tts.training.trainer` and the
:mod:`~gst_tts.training.vocoder_trainer`): seeding, the AMP setting, moving batches to the device,
periodic checkpoints with rotation, and the progress bar."""

from __future__ import annotations

from pathlib import Path
import random
import sys
from typing import Any, Callable, Mapping

import numpy as np
import torch

from gst_tts.errors import GstTtsError


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


def to_device(batch: dict, device: torch.device) -> dict:
    """The batch's tensors on ``device`` (other entries as they are)."""
    return {k: v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}


def save_rotating(
    ckpt_dir: Path, payload: Mapping[str, Any], *, step: int, periodic: bool, keep: int,
    save: Callable[[Path, Mapping[str, Any]], Path],
) -> Path:
    """Writes ``last.pt`` with ``save`` and, when ``periodic``, ``step_<step>.pt`` too, keeping the
    newest ``keep`` periodic ones. Returns the path of ``last.pt``."""
    if periodic:
        save(ckpt_dir / f"step_{step:07d}.pt", payload)
        for stale in sorted(ckpt_dir.glob("step_*.pt"))[: -keep or None]:
            stale.unlink(missing_ok=True)
    return save(ckpt_dir / "last.pt", payload)


def progress_bar(total: int, initial: int, *, enabled: bool):
    """The tqdm bar of a training loop, on stderr; ``enabled`` False hides it."""
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc="train", unit="step", disable=None if enabled else True,
                dynamic_ncols=True, file=sys.stderr)
