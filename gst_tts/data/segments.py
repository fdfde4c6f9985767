"""Vocoder training data: random fixed-length (mel, waveform) segments of a corpus's utterances.

The mels are the acoustic model's features from the :class:`~gst_tts.data.cache.FeatureCache` (or
GTA mels, :class:`~gst_tts.data.gta.GtaMels`); the samples are those the features were computed
from (read, resampled and trimmed the same way), so mel frame ``t`` goes with samples
``[t · hop, (t + 1) · hop)``, which is what the generator makes of it.

A segment's offset comes from a seed that the sampler hands out with each index: the same epoch
draws the same segments, with any number of loader workers and after a resume.
"""

from __future__ import annotations

import random
from typing import Iterator, Protocol, Sequence

import numpy as np
import torch
from torch.utils.data import Dataset

from gst_tts.audio.features import LOG_MEL_FLOOR
from gst_tts.data.batching import LengthBucketSampler
from gst_tts.data.cache import FeatureCache
from gst_tts.data.corpus import Utterance
from gst_tts.errors import DataError


class MelSource(Protocol):
    """Where the mels come from: the feature cache or a folder of GTA mels."""

    def load(self, utt_id: str) -> np.ndarray: ...


class SegmentDataset(Dataset):
    """Segments of ``segment_frames`` frames and ``segment_frames · hop_length`` samples.

    An utterance shorter than a segment is padded: its mel with silence (``log`` of the feature
    floor), its samples with zeros.

    Args:
        utterances: the utterances.
        cache: the feature cache, prepared for them (their samples and, by default, their mels).
        segment_frames: mel frames per segment.
        mels: where the mels come from instead of ``cache`` (GTA mels). Default: ``cache``.
        mels_share: with ``mels``, the share of training segments that take their mel from it; the
            others take the recording's own from ``cache`` (drawn per segment from its seed, so a
            vocoder fine-tuned on GTA mels keeps its copy synthesis). Whole utterances
            (:meth:`utterance`) always come from ``mels``. Default 1.

    Items: ``dataset[(index, seed)]`` → ``{"id", "mel": (segment_frames, n_mels), "audio":
    (segment_frames · hop_length,)}``, float32 tensors; the mel is a natural-log mel, not normalised.
    """

    def __init__(
        self,
        utterances: Sequence[Utterance],
        cache: FeatureCache,
        *,
        segment_frames: int,
        mels: MelSource | None = None,
        mels_share: float = 1.0,
    ) -> None:
        if segment_frames < 1:
            raise ValueError(f"segment_frames must be at least 1, got {segment_frames}")
        if not 0.0 <= mels_share <= 1.0:
            raise ValueError(f"mels_share must be within [0, 1], got {mels_share}")
        self.mels_share = float(mels_share)
        self.utterances = list(utterances)
        self.cache = cache
        self.mels = mels if mels is not None else cache
        self.segment_frames = int(segment_frames)
        self.hop = cache.config.hop_length

    def __len__(self) -> int:
        return len(self.utterances)

    def __getitem__(self, key: tuple[int, int]) -> dict:
        index, seed = key
        draw = random.Random(seed)
        own = self.mels is not self.cache and draw.random() >= self.mels_share
        utt, mel, audio, usable = self._aligned(index, self.cache if own else self.mels)
        frames = self.segment_frames
        if usable >= frames:
            start = draw.randrange(usable - frames + 1)
            mel, audio = mel[start : start + frames], audio[start * self.hop : (start + frames) * self.hop]
        else:
            mel = np.concatenate(
                [mel[:usable], np.full((frames - usable, mel.shape[1]), np.log(LOG_MEL_FLOOR), np.float32)]
            )
            audio = np.pad(audio[: usable * self.hop], (0, (frames - usable) * self.hop))
        return {"id": utt.id, "mel": torch.from_numpy(np.ascontiguousarray(mel)), "audio": torch.from_numpy(audio)}

    def utterance(self, index: int) -> dict:
        """A whole utterance: ``{"id", "mel": (frames, n_mels), "audio": (frames · hop_length,)}``, the
        samples past the recording's end zero (under ``hop_length`` of them)."""
        utt, mel, audio, _ = self._aligned(index)
        return {"id": utt.id, "mel": torch.from_numpy(mel), "audio": torch.from_numpy(audio)}

    def _aligned(self, index: int, mels: MelSource | None = None) -> tuple[Utterance, np.ndarray, np.ndarray, int]:
        """The utterance, its mel (from ``mels``, default the dataset's), its samples padded to
        ``frames · hop`` and how many frames have samples all from the recording."""
        utt = self.utterances[index]
        mel = (mels or self.mels).load(utt.id)
        samples = self.cache.audio(utt)
        # A centred STFT gives 1 + samples // hop frames; GTA mels drop a few at the end.
        if mel.shape[0] > 1 + samples.size // self.hop:
            raise DataError(
                f"{utt.where}: {mel.shape[0]} mel frames but {samples.size} samples "
                f"(at most {1 + samples.size // self.hop} frames): mels of other audio or features"
            )
        audio = np.zeros(mel.shape[0] * self.hop, np.float32)
        n = min(audio.size, samples.size)
        audio[:n] = samples[:n]
        return utt, mel, audio, min(mel.shape[0], samples.size // self.hop)


class SegmentSampler(LengthBucketSampler):
    """Shuffled batches of ``(utterance index, segment seed)``: every utterance once per epoch.

    The order comes from ``seed + epoch`` (as :class:`LengthBucketSampler`'s, of which this is the
    equal-length case) and each segment seed from ``seed``, the epoch and the index.
    ``set_epoch(epoch, start)`` skips ``start`` batches (resuming); with ``num_replicas > 1`` each
    rank takes every ``num_replicas``-th batch.

    Args:
        n_items: utterances in the dataset.
        batch_size: segments per batch.
        seed: the run's seed. Default 0.
        num_replicas, rank: the distributed layout. Default one process.
    """

    def __init__(self, n_items: int, batch_size: int, *, seed: int = 0, num_replicas: int = 1, rank: int = 0) -> None:
        super().__init__(
            [0] * n_items, batch_size, seed=seed, shuffle=True, bucket_batches=1, num_replicas=num_replicas, rank=rank
        )

    def __iter__(self) -> Iterator[list[tuple[int, int]]]:  # type: ignore[override]
        for batch in super().__iter__():
            yield [(i, random.Random(f"{self.seed}:{self.epoch}:{i}").randrange(2**31)) for i in batch]


def collate_segments(items: Sequence[dict]) -> dict:
    """Segments → ``{"ids", "mel": (batch, n_mels, frames), "audio": (batch, 1, samples)}`` (the generator's layout)."""
    return {
        "ids": [x["id"] for x in items],
        "mel": torch.stack([x["mel"] for x in items]).transpose(1, 2).contiguous(),
        "audio": torch.stack([x["audio"] for x in items]).unsqueeze(1),
    }
