"""Device choice: the one resolver that training, inference and every command use."""

from __future__ import annotations

import torch

from gst_tts.errors import GstTtsError


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
