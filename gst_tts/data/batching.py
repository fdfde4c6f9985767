"""From utterances to padded batches: symbol encoding, the dataset, length-bucketed batches and
collation (targets trimmed to whole decoder steps)."""

from __future__ import annotations

import logging
import random
from typing import Iterator, Sequence
import warnings

import torch
from torch.utils.data import Dataset, Sampler

from gst_tts.audio.features import MelStats
from gst_tts.data.cache import FeatureCache
from gst_tts.data.corpus import Utterance
from gst_tts.errors import DataError, TextError
from gst_tts.text.symbols import SymbolTable

log = logging.getLogger(__name__)


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
