"""Config groups → constructor arguments, for the builders of both runs
(:mod:`~gst_tts.training.data_builders`, :mod:`~gst_tts.training.builders`,
:mod:`~gst_tts.training.vocoder_builders`): a group's keys checked against a constructor, completed
with its defaults, instantiated; and the check of the trainer group's numbers that both runs make.

A config mistake becomes a one-line :class:`GstTtsError` that names the key; the constructors' own
signatures hold the defaults for keys a config leaves out.
"""

from __future__ import annotations

import difflib
import inspect
from typing import Any, Mapping, Sequence

from hydra.errors import InstantiationException
from hydra.utils import get_class, instantiate
from omegaconf import DictConfig, OmegaConf

from gst_tts.errors import GstTtsError, first_line


def constructor_kwargs(
    cls: type,
    config: Mapping[str, Any],
    group: str,
    *,
    target: str | None = None,
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
    missing = [
        n
        for n, p in params.items()
        if p.default is p.empty
        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        and n not in config
        and n not in from_elsewhere
    ]
    if missing:
        raise GstTtsError(f"{group} config: missing {', '.join(missing)} (required by {target})")
    return dict(config)


def complete_kwargs(cls: type, config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with ``cls``'s constructor defaults filled in, tuples as lists (nested ones too)."""
    defaults = {
        name: p.default
        for name, p in inspect.signature(cls).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
    return {k: _as_lists(v) for k, v in {**defaults, **config}.items()}


def _as_lists(value: Any) -> Any:
    return [_as_lists(v) for v in value] if isinstance(value, (list, tuple)) else value


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


def plain_dict(node: DictConfig | Mapping[str, Any]) -> dict[str, Any]:
    """A config group as a plain dict, interpolations resolved."""
    return OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else dict(node)


def locate_class(target: str, group: str) -> type:
    """The class ``target`` names; ``group`` names the config group in the error."""
    try:
        return get_class(target)
    except Exception:  # Hydra's message spans lines and suggests HYDRA_FULL_ERROR
        raise GstTtsError(f"{group}._target_: cannot import the class {target!r}") from None


def instantiate_target(target: str, kwargs: Mapping[str, Any], group: str) -> Any:
    """``target(**kwargs)`` through Hydra; a refusal becomes a one-line error naming ``group``."""
    try:
        # _convert_="all": plain lists and dicts reach the constructor, not OmegaConf containers.
        return instantiate({"_target_": target, **kwargs}, _convert_="all")
    except InstantiationException as exc:
        raise GstTtsError(f"{group} config: {target} refused it: {first_line(exc.__cause__ or exc)}") from None
