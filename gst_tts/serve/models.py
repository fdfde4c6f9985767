"""The request models: the body of ``POST /api/synthesize``, the ``style_wav`` of ``GET /api/tts``,
and the one line a failed validation is answered with.

Their bounds are the server's :class:`~gst_tts.serve.limits.ServeLimits`, which the published
schema states, so the models are built per app (:func:`synthesize_request_model`). This module does
not use ``from __future__ import annotations``: pydantic reads the annotations at run time, and
those of the model name the limits' bounds, local to the function that builds it.
"""

import json
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from gst_tts.errors import GstTtsError
from gst_tts.inference.style_spec import MAX_F0_RANGE_ST, MAX_STYLE_STRENGTH, check_f0_range
from gst_tts.serve.errors import ApiError, quote
from gst_tts.serve.limits import ServeLimits

#: ``tempo`` and ``f0_range`` words: the model's own (the default), or the reference's (signal
#: processing after the model). The CLI's ``--tempo`` / ``--f0-range`` words
#: (``gst_tts.cli.args.TEMPO_DECODED`` …), spelled here because serve sits beside cli, not above it
#: (imports point down only, ARCHITECTURE.md); tests/serve checks that the two agree.
DECODED, REFERENCE = "decoded", "reference"

_TokenKey = Annotated[str, StringConstraints(pattern=r"^[0-9]{1,4}(:[0-9]{1,4})?$")]
_RefId = Annotated[str, StringConstraints(max_length=64)]


def _weight(limits: ServeLimits) -> Any:
    return Annotated[float, Field(ge=-limits.max_abs_weight, le=limits.max_abs_weight, allow_inf_nan=False)]


def synthesize_request_model(limits: ServeLimits) -> type[BaseModel]:
    """``SynthesizeRequest``, the body of ``POST /api/synthesize``, bounded by ``limits``."""
    weight = _weight(limits)
    mix_weight = Annotated[float, Field(ge=0, le=limits.max_abs_weight, allow_inf_nan=False)]

    class SynthesizeRequest(BaseModel):
        """A text and at most one style: ``style_weights``, ``style_dials``, ``reference_id`` or ``mix`` (none: neutral)."""  # noqa: E501 (pydantic publishes it as the schema's description: one line)

        model_config = ConfigDict(extra="forbid")
        text: Annotated[str, Field(min_length=1, max_length=limits.max_text_chars, description="what to say")]
        style_weights: Optional[Annotated[dict[_TokenKey, weight], Field(max_length=limits.max_style_weights)]] = Field(
            None, description='token index ("3", every head) or "head:token" ("1:3") → weight; unnamed tokens get 0'
        )
        style_dials: Optional[Annotated[dict[_TokenKey, weight], Field(max_length=limits.max_style_weights)]] = Field(
            None,
            description='token index or "head:token" → amount: that head\'s weights moved from neutral toward'
            " the token (0 neutral, 1 the token alone); several dials add up",
        )
        reference_id: Optional[_RefId] = Field(None, description="an id from POST /api/references: speak in its style")
        mix: Optional[Annotated[dict[_RefId, mix_weight], Field(min_length=1, max_length=limits.max_mix)]] = Field(
            None, description="reference id → weight (>= 0, normalised to sum 1): their token weights averaged"
        )
        style_strength: Optional[Annotated[float, Field(ge=0, le=MAX_STYLE_STRENGTH, allow_inf_nan=False)]] = Field(
            None,
            description=f"with reference_id or mix: how far the style moves from neutral toward the reference's"
            f" (0 neutral, 1 the reference (default), above 1 exaggerates; 0 to {MAX_STYLE_STRENGTH:g})",
        )
        tempo: Literal["decoded", "reference"] = Field(
            DECODED,
            description="'decoded' (default): the model's own tempo; 'reference' (with reference_id or mix): the"
            " output retimed after the model so its letters per second follow the reference's (a mix: its references'"
            " geometric mean), moved by style_strength. Not with stream=true",
        )
        f0_range: Union[Literal["decoded", "reference"], Annotated[float, Field(ge=0, le=MAX_F0_RANGE_ST)]] = Field(
            DECODED,
            description="intonation width: 'decoded' (default): the model's own F0 spread; 'reference' (with"
            " reference_id or mix): the reference's spread, moved by style_strength; a number: that spread in semitones"
            f" (10th to 90th percentile, 0 to {MAX_F0_RANGE_ST:g}), with any style. Set after the model, by a "
            "vocoder that"
            " can (the spectral vocoder with a pitch head; others keep the model's: the summary says which was used)."
            " Not with stream=true",
        )
        seed: Optional[Annotated[int, Field(ge=0, le=2**31 - 1)]] = Field(
            None, description="repeatable output (decoded alone)"
        )
        vocoder: Optional[Annotated[str, Field(max_length=64)]] = Field(
            None, description="one of GET /api/model's vocoders"
        )

        @field_validator("f0_range", mode="before")
        @classmethod
        def _f0_range(cls, value: Any) -> Any:
            """The words, or a number of semitones that :func:`check_f0_range` takes (its one line otherwise)."""
            if isinstance(value, str) and value in (DECODED, REFERENCE):
                return value
            if isinstance(value, str) or not isinstance(value, (int, float)) or isinstance(value, bool):
                raise PydanticCustomError(
                    "f0_range",
                    "{problem}",
                    {
                        "problem": (
                            f"{quote(str(value)) if isinstance(value, str) else type(value).__name__} is not "
                            f"{DECODED!r}, {REFERENCE!r} or a number of semitones"
                        )
                    },
                )
            try:
                return check_f0_range(value)
            except GstTtsError as exc:
                raise PydanticCustomError("f0_range", "{problem}", {"problem": str(exc)}) from None

    return SynthesizeRequest


def style_wav_adapter(limits: ServeLimits) -> TypeAdapter:
    """The type of ``GET /api/tts``'s ``style_wav`` as JSON token weights: checked as ``style_weights`` is."""
    return TypeAdapter(Annotated[dict[_TokenKey, _weight(limits)], Field(max_length=limits.max_style_weights)])


def style_wav_weights(style_wav: str, adapter: TypeAdapter) -> dict[str, float] | None:
    """``GET /api/tts``'s ``style_wav`` as ``style_weights`` (None when empty): JSON token weights
    ``{"0": 0.3}``, as Coqui's server reads them, checked by ``adapter`` (``style_weights``' type).

    Raises:
        ApiError: 422 for a path (never read), JSON that is not an object of numbers, or weights
            that ``style_weights`` would refuse.
    """
    spec = style_wav.strip()
    if not spec:
        return None
    try:
        parsed = json.loads(spec)
    except ValueError:
        if spec[0] in "{[":
            raise ApiError(
                422, 'style_wav is not valid JSON: give token weights as a JSON object, e.g. {"0": 0.3}'
            ) from None
        raise ApiError(
            422,
            'style_wav: a file on the server is never read; give token weights as JSON (e.g. {"0": 0.3}), '
            "or upload the clip to POST /api/references and pass its id as reference_id to "
            "POST /api/synthesize",
        ) from None
    if not isinstance(parsed, dict):
        raise ApiError(
            422,
            f'style_wav: JSON token weights must be an object {{token: weight}} (e.g. {{"0": 0.3}}), '
            f"got {_json_kind(parsed)}",
        )
    for key, value in parsed.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            shown = key if len(key) <= 20 else key[:20] + "…"
            raise ApiError(422, f"style_wav.{shown}: the weight must be a number, got {_json_kind(value)}")
    try:
        return adapter.validate_python(parsed)
    except ValidationError as exc:
        errors = [{**e, "loc": ("query", "style_wav", *e.get("loc", ()))} for e in exc.errors()]
        raise ApiError(422, validation_message(errors)) from None


def _json_kind(value: Any) -> str:
    """How a JSON value is named in a message: ``a list``, ``a string``, ``null`` …"""
    if value is None:
        return "null"
    return {bool: "true or false", str: "a string", list: "a list", dict: "an object"}.get(type(value), "a number")


def validation_message(errors: list[dict[str, Any]]) -> str:
    """One line for the first problem: ``field: what is wrong``."""
    if not errors:
        return "invalid request"
    e = errors[0]
    loc = [str(p) for p in e.get("loc", ())]
    where = ".".join(loc[1:] if loc and loc[0] in ("body", "query", "path", "header") else loc)
    kind = e.get("type", "")
    if kind == "extra_forbidden":
        return (
            f"unknown field {where!r} (fields: text, style_weights, style_dials, reference_id, mix, style_strength, "
            "tempo, f0_range, seed, vocoder)"
        )
    if kind == "json_invalid":
        return "the body is not valid JSON"
    if kind == "missing" and not where:
        return "the body is missing (send JSON)"
    msg = str(e.get("msg", "invalid"))
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    return f"{where or 'body'}: {msg}{more}"
