"""Config → the acoustic model's training pieces: the model, its loss, the optimiser and schedule;
and :func:`check_config`, which checks a run's config before the corpus is read.

``Trainer.__init__`` calls these after the data builders (:mod:`~gst_tts.training.data_builders`).
Constructor arguments come from config groups through
:func:`~gst_tts.training.config_args.constructor_kwargs`, which names an unknown or misplaced key in
one line.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from omegaconf import DictConfig
import torch
from torch import nn

from gst_tts.data.prosody import prosody_spec
from gst_tts.errors import GstTtsError
from gst_tts.model import GSTTacotron
from gst_tts.training.config_args import (
    check_trainer,
    complete_kwargs,
    constructor_kwargs,
    instantiate_target,
    locate_class,
    plain_dict,
)
from gst_tts.training.data_builders import build_audio_config, reference_seconds

# What a config group without ``_target_`` builds.
MODEL_TARGET = "gst_tts.model.GSTTacotron"
LOSS_TARGET = "gst_tts.training.losses.TacotronLoss"

# Model arguments that the data decides; a model config that sets them would contradict the data.
MODEL_FROM_DATA = {
    "n_symbols": "the symbol table (data.text, data.cleaner)",
    "n_mels": "data.audio.n_mels",
    "pad_id": "the symbol table (data.text, data.cleaner)",
    "style_prosody_dim": "the prosody measures (data.prosody)",
}

# Trainer keys that divide or count: zero or less would crash the loop (or delete every periodic
# checkpoint) long after the corpus was prepared.
_POSITIVE_TRAINER_KEYS = (
    "max_steps",
    "lr_decay_steps",
    "log_every",
    "val_every",
    "checkpoint_every",
    "keep_checkpoints",
    "grad_accumulation",
)


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
        raise GstTtsError(
            f"trainer.weight_average_decay must be null or a number in [0, 1) such as 0.998, got {decay!r}"
        )
    return float(decay)


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
    kwargs = complete_model_config(
        {**kwargs, "n_symbols": n_symbols, "n_mels": n_mels, "pad_id": pad_id, "style_prosody_dim": style_prosody_dim}
    )
    return instantiate_target(target, kwargs, "model"), kwargs


def _model_arguments(model: DictConfig | Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The model group's ``_target_`` and its checked keys (without the data-derived ones)."""
    config = plain_dict(model)
    target = str(config.pop("_target_", MODEL_TARGET))
    if locate_class(target, "model") is not GSTTacotron:
        raise GstTtsError(f"model._target_ is {target}, but checkpoints are rebuilt as {MODEL_TARGET}; use that")
    return target, constructor_kwargs(GSTTacotron, config, "model", target=target, from_elsewhere=MODEL_FROM_DATA)


def complete_model_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with the constructor's defaults filled in (lists for tuples), so that two configs
    that build the same model compare equal, and a checkpoint does not depend on defaults that may
    change later."""
    return complete_kwargs(GSTTacotron, config)


def build_loss(loss: DictConfig | Mapping[str, Any], *, reduction_factor: int) -> nn.Module:
    """Instantiates the ``loss`` group's ``_target_`` with its keys and the model's ``reduction_factor``."""
    config = plain_dict(loss)
    target = str(config.pop("_target_", LOSS_TARGET))
    cls = locate_class(target, "loss")
    kwargs = constructor_kwargs(
        cls, config, "loss", target=target, from_elsewhere={"reduction_factor": "the model (model.reduction_factor)"}
    )
    return instantiate_target(target, {**kwargs, "reduction_factor": reduction_factor}, "loss")


def build_optimizer(
    model: nn.Module, trainer: DictConfig
) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.LambdaLR]:
    """Adam with the ``trainer`` group's settings and the :func:`lr_lambda` schedule."""
    optimizer = torch.optim.Adam(
        model.parameters(),
        lr=trainer.learning_rate,
        betas=tuple(trainer.adam_betas),
        eps=trainer.adam_eps,
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
