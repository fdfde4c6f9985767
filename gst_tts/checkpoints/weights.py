"""Reading torch files without running code: the one ``torch.load(weights_only=True)`` that every
reader of weights goes through (gst-tts checkpoints, vocoder weights), with one-line errors.

:func:`check_versioned` checks the marker, version and parts of gst-tts's own formats (acoustic
checkpoints, vocoder checkpoints); :func:`save_versioned` writes them, and :func:`run_parts`
assembles the parts both checkpoint layouts carry for resuming a run. :func:`named_tensor_state`
and :func:`load_fitting_state` check a stored state dict and load it into a module, naming what
does not fit in one line.

Weights-only loading unpickles containers, tensors and plain values only; a file that refers to a
class or a function (a pickled module, a malicious ``__reduce__``) is refused before anything in
it runs.

Integrity: torch does not check the CRCs of its zip files' tensor records, so a byte flipped on disk
loads as a different weight. :func:`save_versioned` therefore stores a ``digest`` of everything
else in the payload (:func:`payload_digest`: CRC-32 over each tensor's dtype, shape and bytes and
over every value, in order), and :func:`check_versioned` refuses a file whose contents no longer
match it. Files written before the digest load unverified. The digest guards against corruption
(disks, copies, truncation that still unzips), not against someone who edits the file and
recomputes it: refusing code is what guards against hostile files.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
import pickle
from typing import Any, Mapping, Sequence
import zlib

import torch
from torch import nn

from gst_tts.errors import GstTtsError, first_line
from gst_tts.files import atomic_write

log = logging.getLogger("gst_tts.checkpoints.weights")

#: The payload key holding :func:`payload_digest` of the rest.
DIGEST_KEY = "digest"
_DIGEST_PREFIX = "crc32:"


def load_weights_only(
    path: str | os.PathLike,
    *,
    error: type[GstTtsError],
    what: str,
    map_location: str | torch.device = "cpu",
) -> Any:
    """The object stored in ``path`` (legacy or zip torch format), read without running code.

    Args:
        path: the file.
        error: the :class:`GstTtsError` subclass raised.
        what: what the file should be, for the messages (``"gst-tts checkpoint"``).
        map_location: where tensors go. Default CPU.

    Raises:
        error: the file is missing, refers to code or objects (refused, never executed), or is not
            a torch file.
    """
    path = Path(path)
    if not path.is_file():
        raise error(f"{path}: {what} not found")
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as exc:
        detail = _weights_unpickler_detail(str(exc))
        if "global" in detail.lower():  # a class or function reference: code, refused unexecuted
            raise error(
                f"{path}: refused to load: the file references code or objects that weights-only loading does "
                f"not allow ({detail})"
            ) from None
        raise error(f"{path}: not a {what} (unreadable pickle: {detail})") from None
    except Exception as exc:  # zip/EOF/decode errors from random bytes
        raise error(f"{path}: not a {what} ({type(exc).__name__}: {first_line(exc, 120)})") from None


def check_versioned(
    stored: Any,
    path: str | os.PathLike,
    *,
    marker: str,
    version: int,
    required: Sequence[str],
    error: type[GstTtsError],
    what: str,
    kind: str,
) -> dict[str, Any]:
    """``stored`` itself when it is a dict of one of gst-tts's own file formats that this code reads:
    ``format`` is ``marker``, ``version`` a whole number from 1 to ``version``, every ``required``
    key present, the contents matching their digest where one is stored (:func:`check_digest`);
    otherwise a one-line ``error``.

    Args:
        what: the format's name, for "not a …" (``"gst-tts checkpoint"``).
        kind: its short name, for the version and completeness messages (``"checkpoint"``).
    """
    if not isinstance(stored, dict) or stored.get("format") != marker:
        raise error(f"{path}: not a {what} (no '{marker}' marker)")
    found = stored.get("version")
    if not isinstance(found, int) or isinstance(found, bool) or found < 1:
        raise error(f"{path}: unknown {kind} version {found!r} (this gst-tts reads versions 1 to {version})")
    if found > version:
        raise error(
            f"{path}: {kind} version {found} was written by a newer gst-tts (this one reads versions 1 to {version}); "
            "upgrade gst-tts to load it"
        )
    missing = [k for k in required if k not in stored]
    if missing:
        raise error(f"{path}: incomplete {kind}, missing {', '.join(missing)}")
    check_digest(stored, path, error=error, kind=kind)
    return stored


def check_digest(stored: Mapping[str, Any], path: str | os.PathLike, *, error: type[GstTtsError], kind: str) -> None:
    """A one-line ``error`` when ``stored`` carries a :data:`DIGEST_KEY` that its other entries no
    longer match (a corrupted file); a payload without one (written before digests) passes."""
    recorded = stored.get(DIGEST_KEY)
    if recorded is None:
        log.debug("%s: written without a digest (an older gst-tts); contents not verified", path)
        return
    if not isinstance(recorded, str) or not recorded.startswith(_DIGEST_PREFIX):
        raise error(f"{path}: corrupted {kind}: unreadable digest {str(recorded)[:40]!r}")
    found = payload_digest(stored)
    if found != recorded:
        raise error(
            f"{path}: corrupted {kind}: its contents do not match the digest stored with them "
            f"({found} vs {recorded}); use another copy"
        )


def payload_digest(payload: Mapping[str, Any]) -> str:
    """``"crc32:<8 hex digits>"`` of every entry of ``payload`` but :data:`DIGEST_KEY`, in order:
    keys, tensors' dtype, shape and bytes (as stored: a GPU tensor is copied to the CPU), values.
    A list and a tuple of the same items digest alike."""
    crc = 0
    for key, value in payload.items():
        if key != DIGEST_KEY:
            crc = _digest_value(value, _digest_value(key, crc))
    return f"{_DIGEST_PREFIX}{crc:08x}"


def _digest_value(value: Any, crc: int) -> int:
    """``crc`` continued over ``value``, each kind of value tagged so that e.g. 1 and "1" differ."""
    if isinstance(value, torch.Tensor):
        flat = value.detach().cpu().contiguous().reshape(-1)
        crc = zlib.crc32(f"T{value.dtype}{tuple(value.shape)}".encode(), crc)
        return zlib.crc32(flat.view(torch.uint8).numpy() if flat.numel() else b"", crc)
    if isinstance(value, Mapping):
        crc = zlib.crc32(f"D{len(value)}".encode(), crc)
        for k, v in value.items():
            crc = _digest_value(v, _digest_value(k, crc))
        metadata = getattr(value, "_metadata", None)  # a state dict's versions, which load_state_dict reads
        return crc if metadata is None else _digest_value(metadata, zlib.crc32(b"M", crc))
    if isinstance(value, (list, tuple)):
        crc = zlib.crc32(f"L{len(value)}".encode(), crc)
        for v in value:
            crc = _digest_value(v, crc)
        return crc
    if isinstance(value, (bytes, bytearray)):
        return zlib.crc32(bytes(value), zlib.crc32(f"Y{len(value)}".encode(), crc))
    if isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        return zlib.crc32(data, zlib.crc32(f"S{len(data)}".encode(), crc))
    # Tagged with the type, True and 1 differ; repr round-trips floats exactly; other stored values
    # (None, torch.dtype, ...) have fixed reprs.
    return zlib.crc32(f"{type(value).__name__}:{value!r};".encode(), crc)


def save_versioned(
    path: str | os.PathLike,
    payload: Mapping[str, Any],
    *,
    marker: str,
    required: Sequence[str],
    kind: str,
    builder: str,
) -> Path:
    """Writes ``payload`` (a dict of one of gst-tts's own formats) to ``path`` atomically, with its
    :func:`payload_digest` under :data:`DIGEST_KEY` (a loaded payload's old digest is replaced).

    Raises:
        ValueError: no ``marker`` or version (not made by ``builder``, the function that builds
            the format), or a ``required`` part missing: a programming error, not a user's.
    """
    if payload.get("format") != marker or "version" not in payload:
        raise ValueError(f"not a {kind} payload: build it with {builder}()")
    missing = [k for k in required if k not in payload]
    if missing:
        raise ValueError(f"{kind} payload lacks {', '.join(missing)}")
    body = {k: v for k, v in payload.items() if k != DIGEST_KEY}
    body[DIGEST_KEY] = payload_digest(body)
    return atomic_write(path, lambda f: torch.save(body, f))


def run_parts(
    *,
    config: Mapping[str, Any] | None = None,
    val_ids: Sequence[str] | None = None,
    train_ids: Sequence[str] | None = None,
    optimizer: Mapping[str, Any] | None = None,
    scheduler: Mapping[str, Any] | None = None,
    scaler: Mapping[str, Any] | None = None,
    train_state: Mapping[str, int] | None = None,
    rng: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The parts of a training run that a checkpoint may carry besides its weights, as stored:
    plain containers, the training ids sorted, a part not given left out."""
    parts = {
        "config": None if config is None else dict(config),
        "val_ids": None if val_ids is None else list(val_ids),
        "train_ids": None if train_ids is None else sorted(train_ids),
        "optimizer": optimizer,
        "scheduler": scheduler,
        "scaler": scaler,
        "train_state": None if train_state is None else dict(train_state),
        "rng": rng,
    }
    return {k: v for k, v in parts.items() if v is not None}


def named_tensor_state(
    stored: Mapping[str, Any], key: str, path: str | os.PathLike, *, error: type[GstTtsError]
) -> dict[str, torch.Tensor]:
    """``stored[key]``, checked to be a state dict (a dict of named tensors); otherwise a one-line ``error``."""
    state = stored[key]
    if not isinstance(state, dict) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()
    ):
        raise error(f"{path}: '{key}' is not a state dict of named tensors")
    return state


_SHOWN = 3  # mismatched weight names shown in an error


def load_fitting_state(
    module: nn.Module,
    state: Mapping[str, torch.Tensor],
    path: str | os.PathLike,
    *,
    built_from: str,
    error: type[GstTtsError],
) -> None:
    """Loads ``state`` into ``module`` when :func:`check_fitting_state` passes."""
    check_fitting_state(module, state, path, built_from=built_from, error=error)
    module.load_state_dict(state)


def check_fitting_state(
    module: nn.Module,
    state: Mapping[str, torch.Tensor],
    path: str | os.PathLike,
    *,
    built_from: str,
    error: type[GstTtsError],
) -> None:
    """A one-line ``error`` unless ``state``'s names and shapes are exactly ``module``'s (it names a
    few missing, unexpected and misshapen weights; ``built_from`` names what the module was built
    from, e.g. ``"its generator_config"``) and its floating-point weights are finite. ``module``
    may live on the meta device: checking allocates nothing."""
    expected = {k: tuple(v.shape) for k, v in module.state_dict().items()}
    missing = [k for k in expected if k not in state]
    unexpected = [k for k in state if k not in expected]
    misshapen = [
        f"{k} {tuple(state[k].shape)} vs {expected[k]}"
        for k in expected
        if k in state and tuple(state[k].shape) != expected[k]
    ]
    problems = [
        f"{label} {_few(names)}"
        for label, names in (("missing", missing), ("unexpected", unexpected), ("shape (file vs config)", misshapen))
        if names
    ]
    if problems:
        raise error(f"{path}: weights do not fit {built_from}: {'; '.join(problems)}")
    check_finite(state, path, error=error)


def check_finite(state: Mapping[str, torch.Tensor], path: str | os.PathLike, *, error: type[GstTtsError]) -> None:
    """A one-line ``error`` naming the first floating-point weight in ``state`` that holds NaN or
    infinity: such weights make every output NaN (a diverged run), so they are refused at load."""
    for name, value in state.items():
        if value.is_floating_point() and not bool(torch.isfinite(value).all()):
            raise error(f"{path}: weight {name} holds NaN or infinite values (saved from a diverged run?); refused")


def _few(names: list[str]) -> str:
    more = len(names) - _SHOWN
    return ", ".join(names[:_SHOWN]) + (f" and {more} more" if more > 0 else "")


def _weights_unpickler_detail(message: str) -> str:
    """The informative part of torch's long weights-only error, on one line: what follows
    "WeightsUnpickler error:" (zip files), else the line naming a refused global (legacy files)."""
    marker = "WeightsUnpickler error:"
    if marker in message:
        detail = message.split(marker, 1)[1]
    else:
        detail = next((line for line in message.splitlines() if "global" in line.lower()), message)
    detail = " ".join(detail.split())
    return detail.split(". ")[0][:160]
