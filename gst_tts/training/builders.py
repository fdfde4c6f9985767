"""Config → the pieces of a training run: corpus, split, features and statistics, datasets, loader,
model, loss, optimiser and schedule; for a vocoder run (``gst-tts-train-vocoder``), the generator
(HiFi-GAN's, or the spectral vocoder's magnitude estimator), discriminator, their loss, optimisers
and schedules.

``Trainer.__init__`` calls these in order. Each takes the config groups it reads and returns
plain objects. Constructor arguments come from config groups through :func:`constructor_kwargs`,
which names an unknown or misplaced key in one line; the constructors' own signatures hold the
defaults for keys a config leaves out.
"""

from __future__ import annotations

from dataclasses import dataclass
import difflib
import inspect
import logging
import math
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from hydra.errors import InstantiationException
from hydra.utils import get_class, instantiate
from omegaconf import DictConfig, ListConfig, OmegaConf
import torch
from torch import nn

from gst_tts.audio.features import AudioConfig, MelStats
from gst_tts.audio.vocoders.checkpoint import GENERATOR_KINDS, HIFIGAN_KIND, SPECTRAL_KIND
from gst_tts.audio.vocoders.discriminators import HiFiGANDiscriminator
from gst_tts.audio.vocoders.hifigan import HiFiGANGenerator
from gst_tts.audio.vocoders.spectral import MagnitudeEstimator, edge_frames
from gst_tts.data.batching import Collate, LengthBucketSampler, TTSDataset, corpus_symbol_table, encode_texts
from gst_tts.data.cache import FeatureCache, default_cache_dir
from gst_tts.data.corpus import Utterance, read_corpus
from gst_tts.data.prosody import PROSODY, ProsodyTargets, prosody_spec, read_prosody
from gst_tts.data.split import split_train_val
from gst_tts.errors import CheckpointError, GstTtsError, first_line
from gst_tts.model import GSTTacotron
from gst_tts.text.frontends import make_frontend
from gst_tts.text.symbols import SymbolTable
from gst_tts.checkpoints.acoustic import load_checkpoint
from gst_tts.training.distributed import DistributedContext
from gst_tts.training.loop import loader_workers
from gst_tts.training.vocoder_losses import HiFiGANLoss

log = logging.getLogger("gst_tts.training.builders")

# What a config group without ``_target_`` builds.
MODEL_TARGET = "gst_tts.model.GSTTacotron"
LOSS_TARGET = "gst_tts.training.losses.TacotronLoss"

# Model arguments that the data decides; a model config that sets them would contradict the data.
MODEL_FROM_DATA = {"n_symbols": "the symbol table (data.text, data.cleaner)", "n_mels": "data.audio.n_mels",
                   "pad_id": "the symbol table (data.text, data.cleaner)",
                   "style_prosody_dim": "the prosody measures (data.prosody)"}


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


# ---------------------------------------------------------------------------------------------
# Data


def build_audio_config(audio: DictConfig | Mapping[str, Any]) -> AudioConfig:
    """``data.audio`` → :class:`AudioConfig`."""
    return AudioConfig(**constructor_kwargs(AudioConfig, _plain(audio), "data.audio"))


def build_corpus(data: DictConfig, symbols: SymbolTable | None = None) -> Corpus:
    """Reads and validates ``data.root`` and encodes its texts with the symbol table of
    ``data.text`` (frontend, language) and ``data.cleaner``; phonemes are cached beside the features.

    ``symbols``: the table to read with instead of the corpus's own (a fine-tuning run keeps its
    starting checkpoint's, whose embeddings it inherits); it must read text the same way."""
    if not data.root:
        raise GstTtsError("data.root is not set: give data.root=/path/to/corpus (LJSpeech format)")
    text = data.get("text") or {}
    frontend = make_frontend(str(text.get("frontend", "characters")), text.get("language"), str(data.cleaner))
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


def build_split(cfg: DictConfig, utterances: Sequence[Utterance], n_frames: Mapping[str, int], resume: ResumePoint | None) -> Split:
    """The train/validation split of the utterances within ``data.max_frames`` (when the data
    group has that key).

    A resumed run keeps the split it started with (see :func:`_stored_split`); a new one splits
    with ``data.val_size`` and ``seed``.
    """
    max_frames = cfg.data.get("max_frames")
    kept = [u.id for u in utterances if not max_frames or n_frames[u.id] <= max_frames]
    if len(kept) < len(utterances):
        log.info("left out %d utterances longer than %d frames", len(utterances) - len(kept), max_frames)
    if resume is None:
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
    corpus: Corpus, split: Split, n_frames: Mapping[str, int], cache: FeatureCache, stats: MelStats,
    prosody: Mapping[str, torch.Tensor] | None = None,
) -> tuple[TTSDataset, TTSDataset]:
    """The training and validation datasets, in the split's order; ``prosody``: each utterance's
    standardised targets (:func:`build_prosody_targets`), or None."""
    index = {utt_id: i for i, utt_id in enumerate(corpus.ids)}

    def subset(ids: list[str]) -> TTSDataset:
        picked = [index[i] for i in ids]
        return TTSDataset([corpus.utterances[i] for i in picked], [corpus.texts[i] for i in picked],
                          n_frames, cache, stats, prosody)

    return subset(split.train_ids), subset(split.val_ids)


def build_train_loader(
    train_set: TTSDataset, collate: Collate, data: DictConfig, *, seed: int, dist: DistributedContext,
    device: torch.device,
) -> tuple[LengthBucketSampler, torch.utils.data.DataLoader]:
    """Length-bucketed batches (this rank's share under DDP) and the loader that collates them."""
    sampler = LengthBucketSampler(
        train_set.lengths, int(data.batch_size), seed=seed, bucket_batches=int(data.bucket_batches),
        num_replicas=dist.world_size, rank=dist.rank,
    )
    workers = loader_workers(data.get("num_workers", "auto"), device)
    loader = torch.utils.data.DataLoader(
        # Workers pad; the training loop draws the references (collate.draw_references), in the
        # main process from the checkpointed global RNG, so workers and resuming change no draw.
        train_set, batch_sampler=sampler, collate_fn=collate.pad, num_workers=workers,
        pin_memory=device.type == "cuda", persistent_workers=workers > 0,
        # Its own generator: each new iterator draws a worker seed, which must not come from
        # the global stream that dropout uses (resuming would shift it).
        generator=torch.Generator().manual_seed(seed),
    )
    return sampler, loader


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
            log.warning("%s is %s but %s was trained with %s: keeping its validation split and mel statistics",
                        key, now, path, before)
    val = set(val_ids)
    train_ids = [i for i in kept_ids if i not in val]
    if ckpt.get("train_ids") is not None:
        stored_train = set(ckpt["train_ids"])
        added = sorted(set(train_ids) - stored_train)
        gone = sorted(stored_train - set(train_ids))
        if added or gone:
            log.warning(
                "the training set differs from %s's: %d utterances added%s, %d gone%s; "
                "normalisation keeps the checkpoint's mel statistics", path,
                len(added), f" ({', '.join(added[:3])}…)" if added else "",
                len(gone), f" ({', '.join(gone[:3])}…)" if gone else "",
            )
    return Split(train_ids, val_ids)


# ---------------------------------------------------------------------------------------------
# Model, loss, optimiser


def check_config(cfg: DictConfig) -> None:
    """Checks the ``model``, ``loss`` and ``data.audio`` groups without building anything heavy, so
    that a config mistake surfaces before the corpus is read and its features computed."""
    _, model = _model_arguments(cfg.model)
    build_loss(cfg.loss, reduction_factor=complete_model_config(model)["reduction_factor"])
    build_audio_config(cfg.data.audio)
    prosody_spec(cfg.data.get("prosody"))
    crop = cfg.data.get("reference_crop", 1.0)
    if isinstance(crop, bool) or not isinstance(crop, (int, float)) or not 0.0 < crop <= 1.0:
        raise GstTtsError(f"data.reference_crop must be a number in (0, 1], got {crop!r}")
    reference_seconds(cfg.data)
    for key in ("reference_tilt", "reference_eq"):
        value = cfg.data.get(key, 0.0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise GstTtsError(f"data.{key} must be a number >= 0, got {value!r}")
    past_end = cfg.data.get("stop_steps_past_end", 0)
    if isinstance(past_end, bool) or not isinstance(past_end, int) or past_end < 0:
        raise GstTtsError(f"data.stop_steps_past_end must be an integer >= 0, got {past_end!r}")
    check_trainer(cfg.trainer, _POSITIVE_TRAINER_KEYS)
    if cfg.trainer.get("weight_average_decay") is not None:
        check_average_decay(cfg.trainer.weight_average_decay)


def check_average_decay(decay: object) -> float:
    """``trainer.weight_average_decay`` as a float in [0, 1).

    Raises:
        GstTtsError: another value.
    """
    if isinstance(decay, bool) or not isinstance(decay, (int, float)) or not 0.0 <= decay < 1.0:
        raise GstTtsError(f"trainer.weight_average_decay must be null or a number in [0, 1) such as 0.998, got {decay!r}")
    return float(decay)


def reference_seconds(data: DictConfig) -> tuple[float, float] | None:
    """``data.reference_seconds``: ``[shortest, longest]`` training reference length in seconds, or None.

    Raises:
        GstTtsError: not two numbers with 0 < shortest <= longest.
    """
    value = data.get("reference_seconds")
    if value is None:
        return None
    items = list(value) if isinstance(value, (list, tuple, ListConfig)) else None
    if (items is None or len(items) != 2 or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in items)
            or not 0 < items[0] <= items[1]):
        raise GstTtsError(f"data.reference_seconds must be [shortest, longest] in seconds with 0 < shortest <= longest,"
                          f" or null; got {value!r}")
    return float(items[0]), float(items[1])


# Trainer keys that divide or count: zero or less would crash the loop (or delete every periodic
# checkpoint) long after the corpus was prepared.
_POSITIVE_TRAINER_KEYS = ("max_steps", "lr_decay_steps", "log_every", "val_every", "checkpoint_every",
                          "keep_checkpoints", "grad_accumulation")


def check_trainer(trainer: DictConfig, positive: Sequence[str]) -> None:
    """The ``trainer`` group's ``positive`` keys are whole numbers >= 1, ``amp`` and ``max_minutes`` valid."""
    for key in positive:
        value = trainer[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise GstTtsError(f"trainer.{key} must be a whole number >= 1, got {value!r}")
    if str(trainer.amp) not in ("bf16", "fp16", "none"):
        raise GstTtsError(f"trainer.amp must be bf16, fp16 or none, got {trainer.amp!r}")
    if trainer.max_minutes is not None and not float(trainer.max_minutes) > 0:
        raise GstTtsError(f"trainer.max_minutes must be > 0 or null, got {trainer.max_minutes!r}")


def build_model(
    model: DictConfig | Mapping[str, Any], *, n_symbols: int, n_mels: int, pad_id: int, style_prosody_dim: int = 0
) -> tuple[GSTTacotron, dict[str, Any]]:
    """Instantiates the ``model`` group's ``_target_`` with its keys plus the data-derived sizes
    (``style_prosody_dim``: the number of prosody measures, 0 without).

    Returns the model and its complete constructor arguments (:func:`complete_model_config`),
    which the checkpoint stores so that inference rebuilds the model without Hydra.

    Raises:
        GstTtsError: a ``_target_`` other than :class:`GSTTacotron` (checkpoints rebuild that
            class), an unknown key, a key the data decides, or a value the model refuses.
    """
    target, kwargs = _model_arguments(model)
    kwargs = complete_model_config({**kwargs, "n_symbols": n_symbols, "n_mels": n_mels, "pad_id": pad_id,
                                    "style_prosody_dim": style_prosody_dim})
    return _instantiate(target, kwargs, "model"), kwargs


def _model_arguments(model: DictConfig | Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The model group's ``_target_`` and its checked keys (without the data-derived ones)."""
    config = _plain(model)
    target = str(config.pop("_target_", MODEL_TARGET))
    if _locate(target, "model") is not GSTTacotron:
        raise GstTtsError(f"model._target_ is {target}, but checkpoints are rebuilt as {MODEL_TARGET}; use that")
    return target, constructor_kwargs(GSTTacotron, config, "model", target=target, from_elsewhere=MODEL_FROM_DATA)


def complete_model_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with the constructor's defaults filled in (lists for tuples), so that two configs
    that build the same model compare equal, and a checkpoint does not depend on defaults that may
    change later."""
    return complete_kwargs(GSTTacotron, config)


def complete_kwargs(cls: type, config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with ``cls``'s constructor defaults filled in, tuples as lists (nested ones too)."""
    defaults = {name: p.default for name, p in inspect.signature(cls).parameters.items()
                if p.default is not inspect.Parameter.empty}
    return {k: _as_lists(v) for k, v in {**defaults, **config}.items()}


def _as_lists(value: Any) -> Any:
    return [_as_lists(v) for v in value] if isinstance(value, (list, tuple)) else value


def build_loss(loss: DictConfig | Mapping[str, Any], *, reduction_factor: int) -> nn.Module:
    """Instantiates the ``loss`` group's ``_target_`` with its keys and the model's ``reduction_factor``."""
    config = _plain(loss)
    target = str(config.pop("_target_", LOSS_TARGET))
    cls = _locate(target, "loss")
    kwargs = constructor_kwargs(cls, config, "loss", target=target,
                                from_elsewhere={"reduction_factor": "the model (model.reduction_factor)"})
    return _instantiate(target, {**kwargs, "reduction_factor": reduction_factor}, "loss")


def build_optimizer(model: nn.Module, trainer: DictConfig) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.LambdaLR]:
    """Adam with the ``trainer`` group's settings and the :func:`lr_lambda` schedule."""
    optimizer = torch.optim.Adam(
        model.parameters(), lr=trainer.learning_rate, betas=tuple(trainer.adam_betas), eps=trainer.adam_eps,
        weight_decay=trainer.weight_decay,
    )
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(trainer))


def lr_lambda(trainer: DictConfig) -> Callable[[int], float]:
    """Linear warm-up, then halving every ``lr_decay_steps``, floored at ``min_learning_rate``."""
    floor = trainer.min_learning_rate / trainer.learning_rate

    def factor(step: int) -> float:
        warm = min(1.0, (step + 1) / max(1, trainer.warmup_steps))
        decay = 0.5 ** (max(0, step - trainer.warmup_steps) / trainer.lr_decay_steps)
        return max(floor, warm * decay)

    return factor


# ---------------------------------------------------------------------------------------------
# Vocoder (conf/vocoder_train.yaml: generator, discriminator, loss, trainer)

# Generator arguments that the data decides, by generator kind.
GENERATOR_FROM_DATA = {"n_mels": "data.audio.n_mels"}
ESTIMATOR_FROM_DATA = {k: f"data.audio.{k}" for k in ("sample_rate", "n_fft", "n_mels", "fmin", "fmax")}
# The class each generator kind builds.
GENERATOR_CLASSES = {HIFIGAN_KIND: HiFiGANGenerator, SPECTRAL_KIND: MagnitudeEstimator}
# Vocoder trainer keys that divide or count.
VOCODER_POSITIVE_TRAINER_KEYS = ("max_steps", "lr_decay_steps", "log_every", "val_every", "checkpoint_every",
                                 "keep_checkpoints")


def check_vocoder_config(cfg: DictConfig) -> AudioConfig:
    """Checks the vocoder run's groups before anything heavy is built or read (``generator_kind``,
    the generator's keys and, for HiFi-GAN, its hop; HiFi-GAN's discriminator keys; the loss's keys,
    ``data.audio``, the trainer's numbers); returns the :class:`AudioConfig`."""
    audio_config = build_audio_config(cfg.data.audio)
    kind = vocoder_kind(cfg)
    generator_arguments(cfg.generator, audio_config=audio_config, kind=kind)
    if kind == HIFIGAN_KIND:
        constructor_kwargs(HiFiGANDiscriminator, _plain(cfg.discriminator), "discriminator")
    build_vocoder_loss(cfg.loss, audio_config=audio_config)
    check_trainer(cfg.trainer, VOCODER_POSITIVE_TRAINER_KEYS)
    if not 0 < float(cfg.trainer.lr_decay) <= 1:
        raise GstTtsError(f"trainer.lr_decay must be in (0, 1], got {cfg.trainer.lr_decay!r}")
    if cfg.trainer.grad_clip is not None and not float(cfg.trainer.grad_clip) > 0:
        raise GstTtsError(f"trainer.grad_clip must be > 0 or null, got {cfg.trainer.grad_clip!r}")
    for key in ("segment_frames", "batch_size"):
        value = cfg.data[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise GstTtsError(f"data.{key} must be a whole number >= 1, got {value!r}")
    share = cfg.data.get("gta_share", 1.0)
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
        raise GstTtsError(f"data.gta_share must be a number within [0, 1], got {share!r}")
    edges = edge_frames(audio_config)
    if kind == SPECTRAL_KIND and cfg.data.segment_frames <= 2 * edges:
        raise GstTtsError(f"data.segment_frames must exceed {2 * edges} for the spectral vocoder (the first and last "
                          f"{edges} frames of a segment are left out of its loss), got {cfg.data.segment_frames}")
    return audio_config


def vocoder_kind(cfg: DictConfig) -> str:
    """The run's ``generator_kind`` (``hifigan`` when the config has none), checked."""
    kind = cfg.get("generator_kind", HIFIGAN_KIND)
    if kind not in GENERATOR_KINDS:
        raise GstTtsError(f"generator_kind must be one of {', '.join(GENERATOR_KINDS)}, got {kind!r}")
    return kind


def generator_arguments(
    generator: DictConfig | Mapping[str, Any], *, audio_config: AudioConfig, kind: str = HIFIGAN_KIND
) -> dict[str, Any]:
    """The ``generator`` group's checked keys plus those ``data.audio`` decides, complete (defaults
    filled in: the checkpoint's ``generator_config``). ``kind``: ``hifigan`` (:class:`HiFiGANGenerator`)
    or ``spectral`` (:class:`MagnitudeEstimator`).

    Raises:
        GstTtsError: an unknown key, a key that ``data.audio`` decides, or (HiFi-GAN) an upsampling
            that does not make ``data.audio.hop_length``.
    """
    if kind == SPECTRAL_KIND:
        kwargs = constructor_kwargs(MagnitudeEstimator, _plain(generator), "generator", from_elsewhere=ESTIMATOR_FROM_DATA)
        return complete_kwargs(MagnitudeEstimator, {**kwargs, **{k: getattr(audio_config, k) for k in ESTIMATOR_FROM_DATA}})
    kwargs = constructor_kwargs(HiFiGANGenerator, _plain(generator), "generator", from_elsewhere=GENERATOR_FROM_DATA)
    kwargs = complete_kwargs(HiFiGANGenerator, {**kwargs, "n_mels": audio_config.n_mels})
    hop = math.prod(int(u) for u in kwargs["upsample_rates"]) * int(kwargs["istft_hop_length"] or 1)
    if hop != audio_config.hop_length:
        raise GstTtsError(f"generator: upsample_rates {kwargs['upsample_rates']}"
                          + (f" × istft_hop_length {kwargs['istft_hop_length']}" if kwargs["istft_hop_length"] else "")
                          + f" make {hop} samples per frame, but data.audio.hop_length is {audio_config.hop_length}")
    return kwargs


def build_generator(
    generator: DictConfig | Mapping[str, Any], *, audio_config: AudioConfig, kind: str = HIFIGAN_KIND
) -> tuple[nn.Module, dict[str, Any]]:
    """The ``generator`` group's network and its complete constructor arguments
    (:func:`generator_arguments`): a :class:`HiFiGANGenerator` with weight norm applied (training),
    or a :class:`MagnitudeEstimator`."""
    kwargs = generator_arguments(generator, audio_config=audio_config, kind=kind)
    cls = GENERATOR_CLASSES[kind]
    model = _instantiate(f"{cls.__module__}.{cls.__name__}", kwargs, "generator")
    return (model.apply_weight_norm() if kind == HIFIGAN_KIND else model), kwargs


def build_discriminator(discriminator: DictConfig | Mapping[str, Any]) -> tuple[HiFiGANDiscriminator, dict[str, Any]]:
    """The ``discriminator`` group's :class:`HiFiGANDiscriminator` and its complete constructor arguments."""
    kwargs = complete_kwargs(HiFiGANDiscriminator, constructor_kwargs(HiFiGANDiscriminator, _plain(discriminator), "discriminator"))
    return _instantiate(f"{HiFiGANDiscriminator.__module__}.HiFiGANDiscriminator", kwargs, "discriminator"), kwargs


def build_vocoder_loss(loss: DictConfig | Mapping[str, Any], *, audio_config: AudioConfig) -> HiFiGANLoss:
    """The ``loss`` group's :class:`HiFiGANLoss`, with the run's feature settings."""
    kwargs = constructor_kwargs(HiFiGANLoss, _plain(loss), "loss", from_elsewhere={"audio_config": "data.audio"})
    try:
        return HiFiGANLoss(**kwargs, audio_config=audio_config)
    except (TypeError, ValueError) as exc:
        raise GstTtsError(f"loss config: {first_line(exc)}") from None


def build_vocoder_optimizers(
    networks: Mapping[str, nn.Module], trainer: DictConfig
) -> tuple[dict[str, torch.optim.AdamW], dict[str, torch.optim.lr_scheduler.LambdaLR]]:
    """AdamW for each of ``networks`` (by name: ``"generator"`` and, for HiFi-GAN,
    ``"discriminator"``; ``trainer.learning_rate``, ``adam_betas``, ``weight_decay``) and a schedule
    multiplying the rate by ``lr_decay`` every ``lr_decay_steps`` steps (continuously), as
    HiFi-GAN's per-epoch decay. Both keyed by the networks' names."""
    optimizers = {
        name: torch.optim.AdamW(module.parameters(), lr=float(trainer.learning_rate), betas=tuple(trainer.adam_betas),
                                weight_decay=float(trainer.weight_decay))
        for name, module in networks.items()
    }
    decay, every = float(trainer.lr_decay), int(trainer.lr_decay_steps)
    schedulers = {name: torch.optim.lr_scheduler.LambdaLR(opt, lambda step: decay ** (step / every))
                  for name, opt in optimizers.items()}
    return optimizers, schedulers


# ---------------------------------------------------------------------------------------------
# Config groups → constructor arguments


def constructor_kwargs(
    cls: type, config: Mapping[str, Any], group: str, *, target: str | None = None,
    from_elsewhere: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``config`` checked against ``cls``'s constructor: every key must be one of its arguments.

    Args:
        cls: the class the keys are for.
        config: the config group, a plain mapping.
        group: its name in the config, for messages (``"model"``, ``"data.audio"``).
        target: how messages name ``cls``. Default: its module and name.
        from_elsewhere: arguments that the caller supplies, each with where its value comes from;
            a config that sets one is an error. Default: none.

    Raises:
        GstTtsError: one line naming an unknown key (with the closest argument), a key that comes
            from elsewhere, or a required argument that is missing.
    """
    target = target or f"{cls.__module__}.{cls.__qualname__}"
    from_elsewhere = from_elsewhere or {}
    params = inspect.signature(cls).parameters
    for key in config:
        if key in from_elsewhere:
            raise GstTtsError(f"{group}.{key} comes from {from_elsewhere[key]}; remove it from the {group} config")
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        named = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        unknown = [k for k in config if k not in named]
        if unknown:
            close = difflib.get_close_matches(str(unknown[0]), named, n=1, cutoff=0.5)
            raise GstTtsError(
                f"{group} config: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}: "
                f"not an argument of {target}" + (f" (did you mean {close[0]!r}?)" if close else "")
            )
    missing = [n for n, p in params.items() if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
               and n not in config and n not in from_elsewhere]
    if missing:
        raise GstTtsError(f"{group} config: missing {', '.join(missing)} (required by {target})")
    return dict(config)


def _plain(node: DictConfig | Mapping[str, Any]) -> dict[str, Any]:
    return OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else dict(node)


def _locate(target: str, group: str) -> type:
    try:
        return get_class(target)
    except Exception:  # Hydra's message spans lines and suggests HYDRA_FULL_ERROR
        raise GstTtsError(f"{group}._target_: cannot import the class {target!r}") from None


def _instantiate(target: str, kwargs: Mapping[str, Any], group: str) -> Any:
    try:
        # _convert_="all": plain lists and dicts reach the constructor, not OmegaConf containers.
        return instantiate({"_target_": target, **kwargs}, _convert_="all")
    except InstantiationException as exc:
        raise GstTtsError(f"{group} config: {target} refused it: {first_line(exc.__cause__ or exc)}") from None
