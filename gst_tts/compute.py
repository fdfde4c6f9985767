"""Where torch computes: the one device resolver (:func:`resolve_device`) that training, inference
and every command use, and the one place that sets how many CPU threads torch computes with.

torch's default, one thread per core, is the fastest setting on an idle machine and the slowest as
soon as anything else runs: every parallel operation waits for its slowest thread, and a thread
that shares its core with another process waits for the scheduler. Measured on 2 cores
(``benchmarks/bench_threads.py``, README there): a demo training step took 1.2x as long with one
thread as with two on an idle machine, but with another process holding one core two threads took
3.6-4.1x their idle time and one thread 1.0-1.1x. ``OMP_WAIT_POLICY=PASSIVE`` keeps two threads from
collapsing (0.9-1.07x) but costs 1.6x on an idle machine, more than one thread does; fewer inter-op
threads changed nothing. So the default leaves one core to everything else.

Thread count is also part of the numbers: the same training run gives other weights with one
thread than with two (other summation orders), which is why the demo pins its count.
"""

from __future__ import annotations

import os

import torch

from gst_tts.errors import GstTtsError

__all__ = ["available_cores", "configure_threads", "default_threads", "resolve_device"]


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the platform tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_threads(cores: int | None = None) -> int:
    """The default torch thread count: every core but one, at least one (``cores``: default
    :func:`available_cores`)."""
    cores = available_cores() if cores is None else cores
    return max(1, cores - 1)


def configure_threads(threads: int | None) -> int:
    """Sets torch's intra-op threads to ``threads`` (None: :func:`default_threads`) and returns it.

    An explicit ``OMP_NUM_THREADS`` in the environment stands for None: the user's own setting wins
    over the default, not over an explicit ``threads``.

    Raises:
        GstTtsError: ``threads`` is not a whole number >= 1.
    """
    if threads is None:
        env = os.environ.get("OMP_NUM_THREADS", "").strip()
        if env:
            return torch.get_num_threads()
        threads = default_threads()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise GstTtsError(f"threads must be a whole number >= 1 (or null for the default), got {threads!r}")
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """``None`` or ``"auto"`` → CUDA when available, else CPU; an unknown name, or a CUDA device
    on a machine without CUDA, is a one-line :class:`GstTtsError`."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise GstTtsError(f"unknown device {device!r} ({exc})") from None
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise GstTtsError(f"device {device!r} requested but CUDA is not available")
    return resolved
