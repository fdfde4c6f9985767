"""LJSpeech-format corpora: strict reading, the feature cache, the split, batching.

A corpus is a folder with ``metadata.csv`` (``id|raw|normalized`` or ``id|text``), audio at
``wavs/<id>.wav`` and optionally ``styles.csv`` (``id|style``). Every error names ``file:line``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import tempfile
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import torch
from torch.utils.data import Dataset, Sampler

from gst_tts.audio import AudioConfig, MelExtractor, MelStats, load_audio, wav_to_logmel
from gst_tts.errors import AudioError, DataError, TextError
from gst_tts.symbols import SymbolTable

log = logging.getLogger(__name__)

METADATA = "metadata.csv"
STYLES = "styles.csv"


@dataclass(frozen=True)
class Utterance:
    """One corpus entry. ``line`` is its 1-based line in metadata.csv, for error messages."""

    id: str
    text: str
    audio_path: Path
    line: int
    style: str | None = None

    @property
    def where(self) -> str:
        return f"{self.audio_path.parent.parent / METADATA}:{self.line}"


def read_corpus(root: str | os.PathLike) -> list[Utterance]:
    """Read and validate ``metadata.csv`` (and ``styles.csv`` when present) of an LJSpeech-style corpus.

    Raises:
        DataError: ``file:line: problem`` for a missing folder or metadata file, a wrong column
            count, a duplicate id, empty text, missing audio, or a bad styles.csv line.
    """
    root = Path(root)
    metadata = root / METADATA
    if not root.is_dir():
        raise DataError(f"{root}: corpus folder not found")
    if not metadata.is_file():
        raise DataError(f"{metadata}: metadata file not found (expected LJSpeech format id|raw|normalized)")
    utterances: list[Utterance] = []
    seen: dict[str, int] = {}
    for line_no, line in _read_lines(metadata):
        if not line.strip():
            continue
        fields = line.split("|")
        if len(fields) not in (2, 3):
            raise DataError(f"{metadata}:{line_no}: expected 2 or 3 '|'-separated columns, got {len(fields)}")
        utt_id = fields[0].strip()
        # LJSpeech's third column is the normalised text; fall back to the raw one when it is absent.
        text = (fields[2] if len(fields) == 3 and fields[2].strip() else fields[1]).strip()
        if not utt_id:
            raise DataError(f"{metadata}:{line_no}: empty id")
        if utt_id in seen:
            raise DataError(f"{metadata}:{line_no}: duplicate id {utt_id!r} (first on line {seen[utt_id]})")
        if not text:
            raise DataError(f"{metadata}:{line_no}: empty text for id {utt_id!r}")
        audio_path = root / "wavs" / f"{utt_id}.wav"
        if not audio_path.is_file():
            raise DataError(f"{metadata}:{line_no}: audio file not found: {audio_path}")
        seen[utt_id] = line_no
        utterances.append(Utterance(utt_id, text, audio_path, line_no))
    if not utterances:
        raise DataError(f"{metadata}: no utterances")
    styles = _read_styles(root / STYLES, seen) if (root / STYLES).is_file() else {}
    if styles:
        utterances = [
            Utterance(u.id, u.text, u.audio_path, u.line, styles.get(u.id)) for u in utterances
        ]
    return utterances


def _read_lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line_no = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise DataError(f"{path}:{line_no}: not valid UTF-8") from None
    # Split on newlines only: str.splitlines() also breaks at U+2028, form feeds etc. inside text.
    for line_no, line in enumerate(text.split("\n"), start=1):
        yield line_no, line.rstrip("\r")


def _read_styles(path: Path, ids: dict[str, int]) -> dict[str, str]:
    styles: dict[str, str] = {}
    for line_no, line in _read_lines(path):
        if not line.strip():
            continue
        fields = line.split("|")
        if len(fields) != 2 or not fields[1].strip():
            raise DataError(f"{path}:{line_no}: expected 'id|style', got {line.strip()!r}")
        utt_id = fields[0].strip()
        if utt_id not in ids:
            raise DataError(f"{path}:{line_no}: id {utt_id!r} is not in {METADATA}")
        if utt_id in styles:
            raise DataError(f"{path}:{line_no}: duplicate id {utt_id!r}")
        styles[utt_id] = fields[1].strip()
    return styles


def encode_texts(utterances: Sequence[Utterance], symbols: SymbolTable) -> list[torch.Tensor]:
    """Encode every transcript; dropped characters are reported once for the whole corpus."""
    encoded = []
    dropped: set[str] = set()
    for utt in utterances:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                encoded.append(symbols.encode(utt.text))
            except TextError as exc:
                raise DataError(f"{utt.where}: {exc}") from None
        for w in caught:
            dropped.add(str(w.message))
    if dropped:
        log.warning("%d transcripts had characters outside the symbol table; first: %s", len(dropped), min(dropped))
    return encoded


# ---------------------------------------------------------------------------------------------
# Feature cache


class FeatureCache:
    """Log-mels on disk, one ``.npy`` per utterance, under a folder keyed by the feature config.

    A changed :class:`AudioConfig` gives a new folder, so stale features are never read; a
    changed audio file (size or mtime) is recomputed.
    """

    def __init__(self, cache_dir: str | os.PathLike, config: AudioConfig) -> None:
        self.config = config
        self.dir = Path(cache_dir) / f"mels-{config.fingerprint()}"
        self.manifest_path = self.dir / "manifest.json"

    def _load_manifest(self) -> dict:
        if self.manifest_path.is_file():
            try:
                manifest = json.loads(self.manifest_path.read_text())
                if manifest.get("audio_config") == asdict(self.config):
                    return manifest
            except (OSError, json.JSONDecodeError):
                log.warning("%s: unreadable feature manifest, recomputing", self.manifest_path)
        return {"audio_config": asdict(self.config), "entries": {}}

    def path(self, utt_id: str) -> Path:
        return self.dir / f"{utt_id}.npy"

    def prepare(self, utterances: Sequence[Utterance], progress: bool = True) -> dict[str, int]:
        """Compute missing or stale features. Returns ``{id: n_frames}`` for every utterance."""
        from tqdm import tqdm

        self.dir.mkdir(parents=True, exist_ok=True)
        manifest = self._load_manifest()
        entries: dict = manifest["entries"]
        todo = [u for u in utterances if entries.get(u.id, {}).get("source") != _source_key(u.audio_path)
                or not self.path(u.id).is_file()]
        if todo:
            extractor = MelExtractor(self.config)
            bar = tqdm(todo, desc="features", unit="utt", disable=None if progress else True, dynamic_ncols=True)
            for i, utt in enumerate(bar):
                try:
                    samples, _ = load_audio(utt.audio_path, self.config.sample_rate)
                except AudioError as exc:
                    raise DataError(f"{utt.where}: {exc}") from None
                if samples.size < self.config.win_length or float(np.max(np.abs(samples))) < 1e-4:
                    raise DataError(f"{utt.where}: {utt.audio_path}: audio is silent or too short")
                mel = wav_to_logmel(samples, self.config, extractor)
                _atomic_save_npy(self.path(utt.id), mel)
                entries[utt.id] = {"frames": int(mel.shape[0]), "source": _source_key(utt.audio_path)}
                if (i + 1) % 200 == 0:  # keep progress if interrupted
                    _atomic_write_text(self.manifest_path, json.dumps(manifest))
            _atomic_write_text(self.manifest_path, json.dumps(manifest))
        return {u.id: int(entries[u.id]["frames"]) for u in utterances}

    def load(self, utt_id: str) -> np.ndarray:
        """``(frames, n_mels)`` float32 log-mel."""
        return np.load(self.path(utt_id))

    def stats(self, utt_ids: Sequence[str]) -> MelStats:
        """Per-channel mean/std over the given utterances, cached by the ids and their audio files' versions."""
        # Keyed on each wav's size:mtime too, as prepare() is: an edited wav must not keep old
        # statistics. Features that prepare() did not list are keyed on their own file.
        entries = self._load_manifest()["entries"]
        sources = sorted(f"{i}|{entries[i]['source'] if i in entries else _source_key(self.path(i))}" for i in utt_ids)
        key = hashlib.sha1("\n".join(sources).encode()).hexdigest()[:12]
        path = self.dir / f"stats-{key}.npz"
        if path.is_file():
            d = np.load(path)
            return MelStats(torch.from_numpy(d["mean"]), torch.from_numpy(d["std"]))
        total = np.zeros(self.config.n_mels, dtype=np.float64)
        total_sq = np.zeros_like(total)
        count = 0
        for utt_id in utt_ids:
            mel = self.load(utt_id).astype(np.float64)
            total += mel.sum(0)
            total_sq += (mel**2).sum(0)
            count += mel.shape[0]
        stats = MelStats.from_sums(total, total_sq, count)
        fd, tmp = tempfile.mkstemp(dir=self.dir, suffix=".npz")
        os.close(fd)
        np.savez(tmp, mean=stats.mean.numpy(), std=stats.std.numpy())
        os.replace(tmp, path)
        return stats


def default_cache_dir(root: str | os.PathLike) -> Path:
    """``$XDG_CACHE_HOME/gst-tts/<corpus>-<hash>``: corpora may sit on read-only storage."""
    root = Path(root).resolve()
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gst-tts"
    return base / f"{root.name}-{hashlib.sha1(str(root).encode()).hexdigest()[:8]}"


def _source_key(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def _atomic_save_npy(path: Path, array: np.ndarray) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".npy")
    os.close(fd)
    np.save(tmp, array)
    os.replace(tmp, path)


def _atomic_write_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------
# Split, dataset, sampler, collate


def split_train_val(utt_ids: Sequence[str], val_size: int | float, seed: int) -> tuple[list[str], list[str]]:
    """Deterministic split: the same ids, size and seed always give the same validation set.

    Args:
        val_size: a count (int ≥ 1) or a fraction in (0, 1).
    """
    ids = sorted(utt_ids)
    n_val = int(round(val_size * len(ids))) if isinstance(val_size, float) and val_size < 1 else int(val_size)
    n_val = max(1, min(n_val, len(ids) - 1)) if len(ids) > 1 else 0
    order = ids[:]
    random.Random(seed).shuffle(order)
    val = set(order[:n_val])
    return [i for i in ids if i not in val], [i for i in ids if i in val]


class TTSDataset(Dataset):
    """Pairs of encoded text and normalised log-mel, read from a :class:`FeatureCache`."""

    def __init__(
        self,
        utterances: Sequence[Utterance],
        texts: Sequence[torch.Tensor],
        n_frames: dict[str, int],
        cache: FeatureCache,
        stats: MelStats,
    ) -> None:
        self.utterances = list(utterances)
        self.texts = list(texts)
        self.cache = cache
        self.stats = stats
        self.lengths = [n_frames[u.id] for u in self.utterances]

    def __len__(self) -> int:
        return len(self.utterances)

    def __getitem__(self, index: int) -> dict:
        utt = self.utterances[index]
        mel = self.stats.normalize(torch.from_numpy(self.cache.load(utt.id)))
        return {"id": utt.id, "text": self.texts[index], "mel": mel, "style": utt.style}


class LengthBucketSampler(Sampler[list[int]]):
    """Batches of similar length (little padding) in a shuffled, reproducible order.

    Each epoch shuffles the indices with ``seed + epoch``, sorts them by length inside windows of
    ``batch_size * bucket_batches`` and shuffles the resulting batches. With ``num_replicas > 1``
    each rank takes every ``num_replicas``-th batch (the batch count is rounded down so all ranks
    run the same number of steps). ``set_epoch(epoch, start)`` skips ``start`` batches, for resuming.
    """

    def __init__(
        self,
        lengths: Sequence[int],
        batch_size: int,
        seed: int = 0,
        shuffle: bool = True,
        bucket_batches: int = 32,
        num_replicas: int = 1,
        rank: int = 0,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be ≥ 1")
        self.lengths = list(lengths)
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.bucket_batches = bucket_batches
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.start = 0

    def set_epoch(self, epoch: int, start: int = 0) -> None:
        self.epoch = epoch
        self.start = start

    def _all_batches(self) -> list[list[int]]:
        indices = list(range(len(self.lengths)))
        rng = random.Random(self.seed + self.epoch)
        if self.shuffle:
            rng.shuffle(indices)
        window = self.batch_size * self.bucket_batches
        batches = []
        for w in range(0, len(indices), window):
            chunk = sorted(indices[w : w + window], key=lambda i: self.lengths[i])
            batches += [chunk[b : b + self.batch_size] for b in range(0, len(chunk), self.batch_size)]
        if self.shuffle:
            rng.shuffle(batches)
        if len(batches) < self.num_replicas:  # tiny data: repeat batches so every rank gets one
            return (batches * self.num_replicas)[: self.num_replicas] if batches else []
        return batches[: len(batches) - len(batches) % self.num_replicas]

    def __iter__(self) -> Iterator[list[int]]:
        mine = self._all_batches()[self.rank :: self.num_replicas]
        yield from mine[self.start :]

    def __len__(self) -> int:
        return max(0, len(self._all_batches()) // self.num_replicas - self.start)


class Collate:
    """Pads a list of dataset items into a batch.

    Each target mel is trimmed to whole decoder steps (one step = ``reduction_factor`` frames):
    its last ``frames % r`` frames are dropped, and the stop target is 1 from the step holding
    the new last frame on. Padding a partial last step up to ``r`` frames instead would leave
    frames the loss never trains (it masks padding), which inference would still emit, since it
    always produces whole steps; with trimming, every frame of every step that inference emits
    is one that training supervised (ESPnet's choice too). The dropped frames are under
    ``r * hop_length`` samples at the end of an utterance, usually silence.

    Batch keys: ``text (B, L)``, ``text_lengths (B,)``, ``mel (B, T, n_mels)`` with ``T`` a
    multiple of r, ``mel_lengths (B,)`` trimmed lengths (multiples of r), ``stop_targets (B, T / r)``,
    ``ids``, ``styles``.

    Raises:
        DataError: an item with fewer than ``reduction_factor`` frames (nothing left to train).
    """

    def __init__(self, reduction_factor: int, pad_id: int = 0) -> None:
        self.r = reduction_factor
        self.pad_id = pad_id

    def __call__(self, items: Sequence[dict]) -> dict:
        text_lengths = torch.tensor([len(x["text"]) for x in items], dtype=torch.long)
        full_lengths = torch.tensor([x["mel"].shape[0] for x in items], dtype=torch.long)
        mel_lengths = full_lengths - full_lengths % self.r
        if bool((mel_lengths == 0).any()):
            short = items[int(torch.nonzero(mel_lengths == 0)[0])]
            raise DataError(
                f"{short['id']}: {short['mel'].shape[0]} mel frames, fewer than one decoder step ({self.r} frames)"
            )
        n_mels = items[0]["mel"].shape[1]
        max_frames = int(mel_lengths.max())
        text = torch.full((len(items), int(text_lengths.max())), self.pad_id, dtype=torch.long)
        mel = torch.zeros(len(items), max_frames, n_mels)
        for i, (x, n) in enumerate(zip(items, mel_lengths.tolist())):
            text[i, : len(x["text"])] = x["text"]
            mel[i, :n] = x["mel"][:n]
        steps = torch.arange(max_frames // self.r)
        last_step = mel_lengths // self.r - 1
        stop_targets = (steps[None, :] >= last_step[:, None]).float()
        return {
            "text": text,
            "text_lengths": text_lengths,
            "mel": mel,
            "mel_lengths": mel_lengths,
            "stop_targets": stop_targets,
            "ids": [x["id"] for x in items],
            "styles": [x["style"] for x in items],
        }
