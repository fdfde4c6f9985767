"""Distributed data parallel context for ``torchrun``; a no-op in a single process.

    torchrun --nproc_per_node=4 -m gst_tts.training.train data.root=… hydra.run.dir=runs/lj

torchrun sets WORLD_SIZE, RANK (global: across every node) and LOCAL_RANK (this node's process,
which picks the GPU); NCCL is used on CUDA, gloo on CPU. Only global rank 0 logs to TensorBoard and
writes checkpoints, and every rank resumes from them, so every rank needs the same ``hydra.run.dir``:
named the same (:func:`check_shared_run_dir`) and, across nodes, one folder on a shared file system
(:meth:`DistributedContext.check_shared_folder`).

    torchrun --nnodes=2 --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint=HOST:29500 --rdzv_id=lj \
        -m gst_tts.training.train data.root=/nfs/LJSpeech-1.1 hydra.run.dir=/nfs/runs/lj   # on each node
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
import logging
import os
from pathlib import Path
import secrets
import socket
from typing import Any, Iterator

import torch
from torch import nn
import torch.distributed as dist

from gst_tts.errors import GstTtsError
from gst_tts.files import write_text

log = logging.getLogger(__name__)


@dataclass
class DistributedContext:
    world_size: int = 1
    rank: int = 0
    local_rank: int = 0
    device: torch.device | None = None  # set when distributed: this rank's device

    @classmethod
    def from_environment(cls, device_name: str = "auto") -> "DistributedContext":
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
        if world_size <= 1:
            return cls()
        rank, local_rank = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
        use_cuda = torch.cuda.is_available() and device_name != "cpu"
        if use_cuda:
            if local_rank >= torch.cuda.device_count():
                raise GstTtsError(f"LOCAL_RANK {local_rank} but only {torch.cuda.device_count()} CUDA devices")
            torch.cuda.set_device(local_rank)
            device = torch.device("cuda", local_rank)
        else:
            device = torch.device("cpu")
        if not dist.is_initialized():
            dist.init_process_group(backend="nccl" if use_cuda else "gloo")
        log.info(
            "rank %d of %d (local rank %d on %s), %s on %s",
            rank,
            world_size,
            local_rank,
            socket.gethostname(),
            dist.get_backend(),
            device,
        )
        return cls(world_size, rank, local_rank, device)

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def wrap(self, model: nn.Module) -> nn.Module:
        if not self.enabled:
            return model
        ids = [self.local_rank] if self.device is not None and self.device.type == "cuda" else None
        return nn.parallel.DistributedDataParallel(model, device_ids=ids)

    def no_sync(self, model: nn.Module):
        return model.no_sync() if self.enabled else contextlib.nullcontext()

    def any(self, flag: bool) -> bool:
        """True on every rank if ``flag`` is true on any rank (keeps ranks in lock-step)."""
        if not self.enabled:
            return bool(flag)
        t = torch.tensor([1.0 if flag else 0.0], device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return bool(t.item() > 0)

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier()

    def check_shared_folder(self, folder: Path) -> None:
        """Refuse a run folder that is not one folder for every rank.

        Rank 0 alone writes the checkpoints, and every rank resumes from them: on nodes that each
        had their own folder of that name, the other nodes would start over while rank 0 resumed.
        Rank 0 writes a marker file of a random name into ``folder``; every other rank must find it.

        Raises:
            GstTtsError: on every rank, naming the first rank (and its host) that did not find it.
        """
        if not self.enabled:
            return
        marker = folder / f".shared-check-{self._broadcast_from_main(secrets.token_hex(8) if self.is_main else None)}"
        try:
            with self.rank_zero_first():
                if self.is_main:
                    write_text(marker, f"written by rank 0 on {socket.gethostname()}\n")
                elif not marker.is_file():
                    raise GstTtsError(
                        f"rank {self.rank} on {socket.gethostname()} does not see what rank 0 wrote into the run "
                        "folder "
                        f"{folder}: every node needs hydra.run.dir on one shared file system (rank 0 alone writes "
                        "checkpoints)"
                    )
        finally:
            self.barrier()  # every rank has looked before the marker goes
            if self.is_main:
                marker.unlink(missing_ok=True)

    @contextlib.contextmanager
    def rank_zero_first(self) -> Iterator[None]:
        """Rank 0 runs the block first (e.g. writing a cache); the others run it afterwards.

        A failure on any rank ends every rank with a GstTtsError carrying the same one-line
        message (the failing rank raises its own exception), rather than leaving the others
        waiting at a barrier, which only torchrun would clean up.
        """
        if not self.enabled:
            yield
            return
        if not self.is_main:
            first = self._broadcast_from_main(None)  # waits for rank 0's outcome
            if first is not None:
                raise GstTtsError(first)
        error: Exception | None = None
        try:
            yield
        except Exception as exc:
            error = exc
        message = None if error is None else _one_line(error, self.rank)
        if self.is_main:
            self._broadcast_from_main(message)  # releases the others, or tells them why not
            if error is not None:
                raise error
        # A failure in the other ranks' turn must reach every rank too, rank 0 included.
        failures = [m for m in self.gather(message) if m]
        if error is not None:
            raise error
        if failures:
            raise GstTtsError(failures[0])

    def _broadcast_from_main(self, message: str | None) -> str | None:
        box = [message]
        dist.broadcast_object_list(box, src=0, device=self._object_device())
        return box[0]

    def gather(self, obj: Any) -> list[Any]:
        """Every rank's ``obj`` (picklable), in rank order, on every rank; every rank must call it."""
        if not self.enabled:
            return [obj]
        objects: list[Any] = [None] * self.world_size
        dist.all_gather_object(objects, obj)
        return objects

    def _object_device(self) -> torch.device | None:
        # NCCL moves pickled objects through the GPU; gloo through the CPU.
        return self.device if self.device is not None and self.device.type == "cuda" else None


def check_shared_run_dir(run_dir_setting: str) -> None:
    """Refuse, under torchrun (``WORLD_SIZE`` > 1), a run folder named from the clock.

    Args:
        run_dir_setting: ``hydra.run.dir`` as configured, interpolations unresolved (the default
            is ``runs/${now:...}``).

    Raises:
        GstTtsError: the folder depends on ``${now:}``: each rank resolves it from its own clock,
            so ranks started a second apart would write checkpoints and logs to different
            folders and a resume would find only some of them.
    """
    try:
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        raise GstTtsError(f"WORLD_SIZE={os.environ['WORLD_SIZE']!r} is not a whole number") from None
    if world_size > 1 and "${now:" in run_dir_setting:
        raise GstTtsError(
            f"{world_size} processes (WORLD_SIZE) would each name the run folder {run_dir_setting} "
            "from their own clock; give them one: hydra.run.dir=PATH"
        )


def _one_line(error: Exception, rank: int) -> str:
    if isinstance(error, GstTtsError):
        return str(error)
    lines = str(error).strip().splitlines()
    return f"rank {rank} failed: {type(error).__name__}" + (f": {lines[0]}" if lines else "")
