"""From utterances to padded batches: symbol encoding, the dataset, length-bucketed batches and
collation (targets trimmed to whole decoder steps)."""

from __future__ import annotations

import logging
import math
import os
import random
from typing import Iterator, Mapping, Sequence
import warnings

import torch
from torch.utils.data import Dataset, Sampler

from gst_tts.audio.features import MelStats
from gst_tts.data.cache import FeatureCache, PhonemeCache
from gst_tts.data.corpus import Utterance
from gst_tts.errors import DataError, GstTtsError, TextError
from gst_tts.text.frontends import PhonemeFrontend, TextFrontend, describe_frontend, reads_alike
from gst_tts.text.symbols import SymbolTable

log = logging.getLogger(__name__)


def corpus_symbol_table(
    utterances: Sequence[Utterance],
    frontend: TextFrontend,
    cache_dir: str | os.PathLike | None = None,
    *,
    given: SymbolTable | None = None,
) -> SymbolTable:
    """The symbol table for the corpus read with ``frontend`` (:meth:`SymbolTable.for_corpus`), or
    ``given`` (a fine-tuning run's starting checkpoint's), which must read text the same way.

    The phoneme frontend's output is cached in ``cache_dir`` (:class:`PhonemeCache`), when given.
    A transcript the frontend refuses (an unmatched brace) is a ``DataError`` naming its
    ``file:line``; an unknown language or a ``given`` table of another frontend, language or
    cleaner a one-line ``GstTtsError``. Symbols of the corpus that ``given`` lacks are dropped
    when the texts are encoded, with one warning (:func:`encode_texts`).
    """
    if given is not None and not reads_alike(given.frontend, frontend):
        raise GstTtsError(
            f"the starting checkpoint reads {describe_frontend(given.frontend)}; this run reads "
            f"{describe_frontend(frontend)} (data.text.frontend, data.text.language, data.cleaner)"
        )
    if not isinstance(frontend, PhonemeFrontend):
        return given or SymbolTable(frontend=frontend)
    frontend.check()
    cache = PhonemeCache(cache_dir, frontend) if cache_dir is not None else None
    if cache is not None:
        frontend.remember(cache.load())
    known = len(frontend.memo)
    for utt in utterances:  # each transcript once, so that an error names its line
        try:
            frontend.to_symbols(utt.text)
        except TextError as exc:
            raise DataError(f"{utt.where}: {exc}") from None
    if cache is not None and len(frontend.memo) != known:
        cache.save(frontend.memo)
    if given is not None:
        return given
    table = SymbolTable.for_corpus(frontend, [u.text for u in utterances])
    log.info("phonemes (%s, espeak-ng %s): %d symbols", frontend.language, frontend.espeak_version, len(table))
    return table


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
    """Pairs of encoded text and normalised log-mel, read from a :class:`FeatureCache`, with each
    utterance's standardised prosody targets when ``prosody`` (``{id: (n_measures,)}``, see
    :mod:`gst_tts.data.prosody`) is given."""

    def __init__(
        self,
        utterances: Sequence[Utterance],
        texts: Sequence[torch.Tensor],
        n_frames: dict[str, int],
        cache: FeatureCache,
        stats: MelStats,
        prosody: Mapping[str, torch.Tensor] | None = None,
    ) -> None:
        self.utterances = list(utterances)
        self.texts = list(texts)
        self.cache = cache
        self.stats = stats
        self.prosody = prosody
        self.lengths = [n_frames[u.id] for u in self.utterances]

    def __len__(self) -> int:
        return len(self.utterances)

    def __getitem__(self, index: int) -> dict:
        utt = self.utterances[index]
        mel = self.stats.normalize(torch.from_numpy(self.cache.load(utt.id)))
        item = {"id": utt.id, "text": self.texts[index], "mel": mel, "style": utt.style}
        if self.prosody is not None:
            item["prosody"] = self.prosody[utt.id]
        return item


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


#: Fewest frames a cropped style reference keeps (the reference encoder's six stride-2 blocks
#: reduce 64 frames to one).
MIN_REFERENCE_FRAMES = 64

#: Half-cosines over the mel channels whose random sum is a reference's EQ curve: up to about
#: 13 channels a bump at 80 mels, the scale of a formant or a voice's bass and treble.
EQ_COMPONENTS = 6


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
    ``stop_lengths (B,)`` the steps the stop loss counts, ``ids``, ``styles``; ``prosody (B,
    n_measures)`` when the items carry prosody targets.

    The stop loss may also count steps past each utterance's end (``stop_steps_past_end``; the
    batch is padded so that every utterance has them), where the target stays 1: the stop token
    then learns that a decoder whose attention has passed the end must stop, the state a free
    run is in when it misses the last step (NVIDIA's Tacotron 2 counts all the padding).

    Training may also give the style reference its own view of each target (``reference_mel
    (B, T', n_mels)``, ``reference_lengths (B,)``): a random stretch of the utterance, a random
    spectral tilt and a random smooth EQ. Pitch level, intonation and tempo hold over any stretch
    of an utterance and survive an EQ, but its exact frames and timbre do not, so the reference
    encoder cannot shortcut through recognising a training utterance or its voice. The draws use
    torch's global RNG, which checkpoints save: calling ``collate(items)`` pads and draws in one go;
    a training loader with workers calls :meth:`pad` instead, which keeps each item's mel under
    ``"reference_source"``, and the training loop calls :meth:`draw_references` on each batch as
    it arrives in the main process. The draws then do not depend on the workers, and a resumed run
    draws what an uninterrupted one would.

    Args:
        reduction_factor: frames per decoder step.
        pad_id: padding symbol id. Default 0.
        reference_crop: shortest share of an utterance a reference stretch keeps, drawn uniformly
            in ``[reference_crop, 1]`` (never under :data:`MIN_REFERENCE_FRAMES` frames unless the
            utterance is shorter); 1 keeps it whole. Default 1.0.
        reference_frames: ``(shortest, longest)``: instead of a share, a reference stretch is a
            length drawn uniformly in this range, whatever the utterance's length (the whole
            utterance when it is shorter). A share of the utterance would tell the reference
            encoder the utterance's length, which in a corpus of similar sentences says how slowly
            they are spoken: a cue that fails on references of any other length. Default ``None``
            (the share).
        reference_tilt: largest spectral tilt added to a reference, in normalised log-mel units
            from the lowest to the highest channel (``±reference_tilt / 2`` at the ends, a line in
            between, drawn uniformly); 0 adds none. Default 0.0.
        reference_eq: largest amplitude of each of the :data:`EQ_COMPONENTS` half-cosines
            ``cos(pi k c / (n_mels - 1))``, ``k = 1..EQ_COMPONENTS``, whose sum is added to a
            reference, in normalised log-mel units (each drawn uniformly in ``±reference_eq``):
            a smooth random curve over the channels, like a voice's own bass, treble and formant
            strengths, so that no spectral envelope tells a speaking rate; 0 adds none. Default 0.0.
        stop_steps_past_end: decoder steps after each utterance's last one that the stop loss
            counts, with target 1 (the mel loss never counts them). Default 0.

    Raises:
        DataError: an item with fewer than ``reduction_factor`` frames (nothing left to train).
    """

    def __init__(
        self,
        reduction_factor: int,
        pad_id: int = 0,
        *,
        reference_crop: float = 1.0,
        reference_frames: tuple[int, int] | None = None,
        reference_tilt: float = 0.0,
        reference_eq: float = 0.0,
        stop_steps_past_end: int = 0,
    ) -> None:
        if not 0.0 < reference_crop <= 1.0:
            raise ValueError(f"reference_crop must be in (0, 1], got {reference_crop}")
        if reference_frames is not None and not (1 <= reference_frames[0] <= reference_frames[1]):
            raise ValueError(
                f"reference_frames must be (shortest, longest) with 1 <= shortest <= longest, got {reference_frames}"
            )
        if reference_tilt < 0:
            raise ValueError(f"reference_tilt must be >= 0, got {reference_tilt}")
        if reference_eq < 0:
            raise ValueError(f"reference_eq must be >= 0, got {reference_eq}")
        if (
            isinstance(stop_steps_past_end, bool)
            or int(stop_steps_past_end) != stop_steps_past_end
            or stop_steps_past_end < 0
        ):
            raise ValueError(f"stop_steps_past_end must be an integer >= 0, got {stop_steps_past_end}")
        self.r = reduction_factor
        self.pad_id = pad_id
        self.reference_crop = reference_crop
        self.reference_frames = (
            None if reference_frames is None else (int(reference_frames[0]), int(reference_frames[1]))
        )
        self.reference_tilt = reference_tilt
        self.reference_eq = reference_eq
        self.stop_steps_past_end = int(stop_steps_past_end)

    @property
    def augments_references(self) -> bool:
        """Whether the batch gets a drawn style reference of its own (``reference_mel``)."""
        return (
            self.reference_crop < 1.0
            or bool(self.reference_frames)
            or self.reference_tilt > 0.0
            or self.reference_eq > 0.0
        )

    def __call__(self, items: Sequence[dict]) -> dict:
        return self.draw_references(self.pad(items))

    def draw_references(self, batch: dict) -> dict:
        """``batch`` from :meth:`pad` with its training references drawn (``reference_mel``,
        ``reference_lengths``) from torch's global RNG, in place of ``reference_source``."""
        if "reference_source" in batch:
            batch["reference_mel"], batch["reference_lengths"] = self._references(batch.pop("reference_source"))
        return batch

    def pad(self, items: Sequence[dict]) -> dict:
        """The padded batch, nothing drawn: with reference augmentation, the items' mels under
        ``reference_source`` for :meth:`draw_references`."""
        text_lengths = torch.tensor([len(x["text"]) for x in items], dtype=torch.long)
        full_lengths = torch.tensor([x["mel"].shape[0] for x in items], dtype=torch.long)
        mel_lengths = full_lengths - full_lengths % self.r
        if bool((mel_lengths == 0).any()):
            short = items[int(torch.nonzero(mel_lengths == 0)[0])]
            raise DataError(
                f"{short['id']}: {short['mel'].shape[0]} mel frames, fewer than one decoder step ({self.r} frames)"
            )
        n_mels = items[0]["mel"].shape[1]
        max_frames = int(mel_lengths.max()) + self.stop_steps_past_end * self.r
        text = torch.full((len(items), int(text_lengths.max())), self.pad_id, dtype=torch.long)
        mel = torch.zeros(len(items), max_frames, n_mels)
        for i, (x, n) in enumerate(zip(items, mel_lengths.tolist())):
            text[i, : len(x["text"])] = x["text"]
            mel[i, :n] = x["mel"][:n]
        steps = torch.arange(max_frames // self.r)
        last_step = mel_lengths // self.r - 1
        stop_targets = (steps[None, :] >= last_step[:, None]).float()
        batch = {
            "text": text,
            "text_lengths": text_lengths,
            "mel": mel,
            "mel_lengths": mel_lengths,
            "stop_targets": stop_targets,
            "stop_lengths": last_step + 1 + self.stop_steps_past_end,
            "ids": [x["id"] for x in items],
            "styles": [x["style"] for x in items],
        }
        if "prosody" in items[0]:
            batch["prosody"] = torch.stack([x["prosody"] for x in items])
        if self.augments_references:
            batch["reference_source"] = [x["mel"] for x in items]
        return batch

    def _references(self, mels: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """A random stretch of each mel with a random tilt and EQ, padded: ``(B, T', n_mels)``, ``(B,)``."""
        views = []
        eq_basis = _eq_basis(mels[0].shape[1]) if self.reference_eq > 0.0 else None
        for mel in mels:
            frames, n_mels = mel.shape
            if self.reference_frames is not None:
                shortest, longest = self.reference_frames
                keep = min(frames, int(torch.randint(shortest, longest + 1, ())))
            else:
                share = self.reference_crop + (1.0 - self.reference_crop) * float(torch.rand(()))
                keep = min(frames, max(MIN_REFERENCE_FRAMES, round(share * frames)))
            start = int(torch.randint(frames - keep + 1, ()))
            view = mel[start : start + keep]
            if self.reference_tilt > 0.0:
                slope = self.reference_tilt * (float(torch.rand(())) - 0.5)
                view = view + slope * torch.linspace(-1.0, 1.0, n_mels)
            if eq_basis is not None:
                gains = self.reference_eq * (2.0 * torch.rand(EQ_COMPONENTS) - 1.0)
                view = view + gains @ eq_basis
            views.append(view)
        lengths = torch.tensor([len(v) for v in views], dtype=torch.long)
        padded = torch.zeros(len(views), int(lengths.max()), mels[0].shape[1])
        for i, view in enumerate(views):
            padded[i, : len(view)] = view
        return padded, lengths


def _eq_basis(n_mels: int) -> torch.Tensor:
    """``(EQ_COMPONENTS, n_mels)``: row ``k - 1`` is ``cos(pi k c / (n_mels - 1))`` over channels ``c``."""
    channels = torch.linspace(0.0, math.pi, n_mels)
    return torch.cos(torch.arange(1, EQ_COMPONENTS + 1, dtype=torch.float32)[:, None] * channels[None, :])
