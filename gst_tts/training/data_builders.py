"""Config → the data of a training run: the audio settings, the corpus and its symbol table, the
feature cache, the checkpoint a run resumes from, the train/validation split, mel statistics,
prosody targets, the datasets and the training loader.

The acoustic :class:`~gst_tts.training.trainer.Trainer` uses all of them; the vocoder trainer the
resume point and the split. Each takes the config groups it reads and returns plain objects.
"""

from __future__ import annotations

from dataclasses import dataclass
import logging
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from omegaconf import DictConfig, ListConfig, OmegaConf
import torch

from gst_tts.audio.features import AudioConfig, MelStats
from gst_tts.data.batching import Collate, LengthBucketSampler, TTSDataset, corpus_symbol_table, encode_texts
from gst_tts.data.cache import FeatureCache, default_cache_dir
from gst_tts.data.corpus import Utterance, read_corpus
from gst_tts.data.prosody import PROSODY, ProsodyTargets, prosody_spec, read_prosody
from gst_tts.data.split import split_train_val
from gst_tts.errors import CheckpointError, GstTtsError
from gst_tts.text.frontends import TextFrontend, make_frontend
from gst_tts.text.symbols import SymbolTable
from gst_tts.checkpoints.acoustic import load_checkpoint
from gst_tts.training.config_args import constructor_kwargs, plain_dict
from gst_tts.training.distributed import DistributedContext
from gst_tts.training.loop import loader_workers

log = logging.getLogger("gst_tts.training.data_builders")


class ResumePoint(NamedTuple):
    """The checkpoint a run resumes from, and where it was read."""

    path: Path
    ckpt: dict[str, Any]


@dataclass(frozen=True)
class Corpus:
    """A corpus's utterances, their texts as symbol ids, and the symbol table that encoded them."""

    utterances: list[Utterance]
    texts: list[torch.Tensor]
    symbols: SymbolTable

    @property
    def ids(self) -> list[str]:
        return [u.id for u in self.utterances]


@dataclass(frozen=True)
class Split:
    train_ids: list[str]
    val_ids: list[str]


def build_audio_config(audio: DictConfig | Mapping[str, Any]) -> AudioConfig:
    """``data.audio`` → :class:`AudioConfig`."""
    return AudioConfig(**constructor_kwargs(AudioConfig, plain_dict(audio), "data.audio"))


def text_frontend(data: DictConfig) -> TextFrontend:
    """How ``data`` reads text: ``data.text`` (frontend, language) and ``data.cleaner``."""
    text = data.get("text") or {}
    return make_frontend(str(text.get("frontend", "characters")), text.get("language"), str(data.cleaner))


def build_corpus(data: DictConfig, symbols: SymbolTable | None = None) -> Corpus:
    """Reads and validates ``data.root`` and encodes its texts with the symbol table of
    ``data.text`` (frontend, language) and ``data.cleaner``; phonemes are cached beside the features.

    ``symbols``: the table to read with instead of the corpus's own (a fine-tuning run keeps its
    starting checkpoint's, whose embeddings it inherits); it must read text the same way."""
    if not data.root:
        raise GstTtsError("data.root is not set: give data.root=/path/to/corpus (LJSpeech format)")
    frontend = text_frontend(data)
    utterances = read_corpus(data.root)
    cache_dir = Path(data.cache_dir) if data.cache_dir else default_cache_dir(data.root)
    symbols = corpus_symbol_table(utterances, frontend, cache_dir, given=symbols)
    return Corpus(utterances, encode_texts(utterances, symbols), symbols)


def build_feature_cache(
    data: DictConfig, audio_config: AudioConfig, corpus: Corpus, dist: DistributedContext, *, progress: bool = True
) -> tuple[FeatureCache, dict[str, int]]:
    """The feature cache (``data.cache_dir`` or the default for ``data.root``), filled for the
    corpus; returns it and each utterance's frame count. ``progress``: a bar on rank 0. Default True."""
    cache_dir = Path(data.cache_dir) if data.cache_dir else default_cache_dir(data.root)
    cache = FeatureCache(cache_dir, audio_config)
    with dist.rank_zero_first():  # one process computes features, the others then read them
        n_frames = cache.prepare(corpus.utterances, progress=progress and dist.is_main)
    return cache, n_frames


def find_resume_checkpoint(
    ckpt_dir: Path, device: torch.device, load: Callable[..., dict[str, Any]] = load_checkpoint
) -> ResumePoint | None:
    """``last.pt`` and its contents; the newest periodic checkpoint that loads if ``last.pt`` does
    not; None for a new run (no ``last.pt``). ``load(path, map_location=device)`` reads one and
    raises a GstTtsError when it cannot. Default: the acoustic model's :func:`load_checkpoint`."""
    last = ckpt_dir / "last.pt"
    if not last.is_file():
        return None
    try:
        return ResumePoint(last, load(last, map_location=device))
    except GstTtsError as exc:
        problem = exc
    for candidate in sorted(ckpt_dir.glob("step_*.pt"), reverse=True):
        try:
            ckpt = load(candidate, map_location=device)
        except GstTtsError as exc:
            log.warning("%s", exc)
            continue
        log.warning("%s; resuming from %s instead (the newest periodic checkpoint that loads)", problem, candidate)
        return ResumePoint(candidate, ckpt)
    raise CheckpointError(f"{problem}; no periodic checkpoint (step_*.pt) in {ckpt_dir} loads either")


def build_split(
    cfg: DictConfig, utterances: Sequence[Utterance], n_frames: Mapping[str, int], resume: ResumePoint | None
) -> Split:
    """The train/validation split of the utterances within ``data.max_frames`` (when the data
    group has that key).

    A resumed run keeps the split it started with (see :func:`_stored_split`); a new one holds out
    the ids listed in ``data.val_ids`` (a file, one id a line) when given, else splits with
    ``data.val_size`` and ``seed``.
    """
    max_frames = cfg.data.get("max_frames")
    kept = [u.id for u in utterances if not max_frames or n_frames[u.id] <= max_frames]
    if len(kept) < len(utterances):
        log.info("left out %d utterances longer than %d frames", len(utterances) - len(kept), max_frames)
    if resume is None:
        if cfg.data.get("val_ids"):
            val = set(read_val_ids(Path(str(cfg.data.val_ids)), kept))
            return Split([i for i in kept if i not in val], [i for i in kept if i in val])
        return Split(*split_train_val(kept, cfg.data.val_size, int(cfg.seed)))
    return _stored_split(cfg, resume, [u.id for u in utterances], kept)


def build_mel_stats(
    cache: FeatureCache, split: Split, dist: DistributedContext, resume: ResumePoint | None
) -> MelStats:
    """Normalisation statistics of the training utterances; a resumed run keeps its checkpoint's,
    so that a corpus edit since does not shift the targets the model has learnt."""
    if resume is not None:
        return MelStats.from_dict(resume.ckpt["mel_stats"])
    with dist.rank_zero_first():
        return cache.stats(split.train_ids)


def build_prosody_targets(
    data: DictConfig, corpus: Corpus, split: Split
) -> tuple[ProsodyTargets | None, dict[str, torch.Tensor] | None]:
    """``data.prosody``'s columns of ``prosody.csv`` in ``data.root``, standardised with the training
    utterances' statistics: the targets and each utterance's encoded row; ``(None, None)`` when
    ``data.prosody`` is empty or absent (no prosody supervision)."""
    columns, transforms = prosody_spec(data.get("prosody"))
    if not columns:
        return None, None
    used = split.train_ids + split.val_ids
    path = Path(str(data.root)) / PROSODY
    rows = read_prosody(path, used, columns)
    targets = ProsodyTargets.fit(columns, transforms, [rows[i] for i in split.train_ids], where=str(path))
    log.info("prosody targets: %s", ", ".join(f"{c} ({t})" for c, t in zip(columns, transforms)))
    return targets, {utt_id: targets.encode(rows[utt_id]) for utt_id in used}


def build_datasets(
    corpus: Corpus,
    split: Split,
    n_frames: Mapping[str, int],
    cache: FeatureCache,
    stats: MelStats,
    prosody: Mapping[str, torch.Tensor] | None = None,
) -> tuple[TTSDataset, TTSDataset]:
    """The training and validation datasets, in the split's order; ``prosody``: each utterance's
    standardised targets (:func:`build_prosody_targets`), or None."""
    index = {utt_id: i for i, utt_id in enumerate(corpus.ids)}

    def subset(ids: list[str]) -> TTSDataset:
        picked = [index[i] for i in ids]
        return TTSDataset(
            [corpus.utterances[i] for i in picked], [corpus.texts[i] for i in picked], n_frames, cache, stats, prosody
        )

    return subset(split.train_ids), subset(split.val_ids)


def build_train_loader(
    train_set: TTSDataset,
    collate: Collate,
    data: DictConfig,
    *,
    seed: int,
    dist: DistributedContext,
    device: torch.device,
) -> tuple[LengthBucketSampler, torch.utils.data.DataLoader]:
    """Length-bucketed batches (this rank's share under DDP) and the loader that collates them."""
    sampler = LengthBucketSampler(
        train_set.lengths,
        int(data.batch_size),
        seed=seed,
        bucket_batches=int(data.bucket_batches),
        num_replicas=dist.world_size,
        rank=dist.rank,
    )
    workers = loader_workers(data.get("num_workers", "auto"), device)
    loader = torch.utils.data.DataLoader(
        # Workers pad; the training loop draws the references (collate.draw_references), in the
        # main process from the checkpointed global RNG, so workers and resuming change no draw.
        train_set,
        batch_sampler=sampler,
        collate_fn=collate.pad,
        num_workers=workers,
        pin_memory=device.type == "cuda",
        persistent_workers=workers > 0,
        # Its own generator: each new iterator draws a worker seed, which must not come from
        # the global stream that dropout uses (resuming would shift it).
        generator=torch.Generator().manual_seed(seed),
    )
    return sampler, loader


def read_val_ids(path: Path, kept_ids: Sequence[str]) -> list[str]:
    """The validation ids listed in ``path`` (one a line; blank lines and ``#`` comments skipped),
    each checked against ``kept_ids`` (the corpus's utterances within ``data.max_frames``).

    Raises:
        GstTtsError: the file is unreadable, names an id twice or one not among ``kept_ids``, or
            would leave nothing to train on.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise GstTtsError(f"data.val_ids {path}: cannot read it ({exc})") from None
    kept, ids = set(kept_ids), []
    for number, line in enumerate(lines, 1):
        utt = line.split("#", 1)[0].strip()
        if not utt:
            continue
        if utt not in kept:
            raise GstTtsError(f"{path}:{number}: {utt!r} is not an utterance of the corpus within data.max_frames")
        if utt in ids:
            raise GstTtsError(f"{path}:{number}: {utt!r} is listed twice")
        ids.append(utt)
    if not ids:
        raise GstTtsError(f"data.val_ids {path}: no utterance id in it")
    if len(ids) >= len(kept):
        raise GstTtsError(f"data.val_ids {path}: it holds out every utterance; nothing is left to train on")
    return ids


def _stored_split(cfg: DictConfig, resume: ResumePoint, corpus_ids: list[str], kept_ids: list[str]) -> Split:
    """The checkpoint's validation ids; training gets the rest of the corpus within ``max_frames``.

    Recomputing the split after a corpus or config edit would move validation items into training.
    """
    path, ckpt = resume
    if ckpt.get("val_ids") is None:
        log.warning("%s has no stored validation split; splitting the corpus afresh", path)
        return Split(*split_train_val(kept_ids, cfg.data.val_size, int(cfg.seed)))
    val_ids = list(ckpt["val_ids"])
    present = set(corpus_ids)
    missing = [i for i in val_ids if i not in present]
    if missing:
        shown = ", ".join(missing[:5]) + (", …" if len(missing) > 5 else "")
        raise GstTtsError(
            f"{path}: {len(missing)} of its validation utterances are no longer in {cfg.data.root} ({shown}); "
            "restore them, or start a new run in another hydra.run.dir"
        )
    stored_cfg = OmegaConf.create(ckpt.get("config") or {})
    for key in ("data.val_size", "seed", "data.max_frames"):
        before, now = OmegaConf.select(stored_cfg, key), OmegaConf.select(cfg, key)
        if before is not None and before != now:
            log.warning(
                "%s is %s but %s was trained with %s: keeping its validation split and mel statistics",
                key,
                now,
                path,
                before,
            )
    val = set(val_ids)
    train_ids = [i for i in kept_ids if i not in val]
    if ckpt.get("train_ids") is not None:
        stored_train = set(ckpt["train_ids"])
        added = sorted(set(train_ids) - stored_train)
        gone = sorted(stored_train - set(train_ids))
        if added or gone:
            log.warning(
                "the training set differs from %s's: %d utterances added%s, %d gone%s; "
                "normalisation keeps the checkpoint's mel statistics",
                path,
                len(added),
                f" ({', '.join(added[:3])}…)" if added else "",
                len(gone),
                f" ({', '.join(gone[:3])}…)" if gone else "",
            )
    return Split(train_ids, val_ids)


def reference_seconds(data: DictConfig) -> tuple[float, float] | None:
    """``data.reference_seconds``: ``[shortest, longest]`` training reference length in seconds, or None.

    Raises:
        GstTtsError: not two numbers with 0 < shortest <= longest.
    """
    value = data.get("reference_seconds")
    if value is None:
        return None
    items = list(value) if isinstance(value, (list, tuple, ListConfig)) else None
    if (
        items is None
        or len(items) != 2
        or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in items)
        or not 0 < items[0] <= items[1]
    ):
        raise GstTtsError(
            f"data.reference_seconds must be [shortest, longest] in seconds with 0 < shortest <= longest,"
            f" or null; got {value!r}"
        )
    return float(items[0]), float(items[1])
