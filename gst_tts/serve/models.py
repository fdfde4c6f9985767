"""The request models: the body of ``POST /api/synthesize``, the ``style_wav`` of ``GET /api/tts``,
and the one line a failed validation is answered with.

Their bounds are the server's :class:`~gst_tts.serve.limits.ServeLimits`, which the published
schema states, so the models are built per app (:func:`synthesize_request_model`). This module does
not use ``from __future__ import annotations``: pydantic reads the annotations at run time, and
those of the model name the limits' bounds, local to the function that builds it.

The schema also states what the model served reads (:class:`SchemaFacts`: its characters, its
tokens and heads, its vocoders, the form of the ids the server hands out), so that data the schema
allows is data the server takes. Those are schema-only: the server's own checks stay as they are,
with their one-line messages, and take more than the schema promises (digits spelled out, accented
letters transliterated, ``{…}`` pronunciations, leading zeros in token keys).
"""

import json
import math
import string
from dataclasses import dataclass
from typing import Annotated, Any, Iterable, Literal, Optional, Union

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
#: The ids the server hands out (references, syntheses): ``secrets.token_hex(8)`` in
#: :mod:`gst_tts.serve.service`. Published in the schema; the server itself takes any id up to 64
#: characters and answers an unknown one 422 (a reference) or 404 (a synthesis).
ID_PATTERN = "^[0-9a-f]{16}$"
_RefId = Annotated[str, StringConstraints(max_length=64), Field(json_schema_extra={"pattern": ID_PATTERN})]


#: What the schema says of a text (its pattern, when stated, is :func:`text_pattern`'s).
TEXT_DESCRIPTION = (
    "what to say. The pattern is what this model always reads (its letters, spaces and punctuation); "
    "the server also takes digits (spelled out), other letters (transliterated) and {…} pronunciations"
)


@dataclass(frozen=True)
class SchemaFacts:
    """What the published schema says about the model served, beyond the limits (schema only: the
    server's checks, and messages, stay its own). Each None or empty: not stated.

    Args:
        n_tokens: style tokens; the token keys of ``style_weights``, ``style_dials`` and
            ``style_wav`` name only these (and heads ``0..n_heads - 1``).
        n_heads: style attention heads.
        text_pattern: a regular expression every text it matches the model reads
            (:func:`text_pattern`).
        vocoders: the names ``vocoder`` may take.
    """

    n_tokens: int | None = None
    n_heads: int | None = None
    text_pattern: str | None = None
    vocoders: tuple[str, ...] = ()

    def token_key(self) -> str:
        """The token keys, unanchored: ``"3"`` or ``"1:3"`` (the model's tokens and heads when stated)."""
        token = _below(self.n_tokens) if self.n_tokens else "[0-9]{1,4}"
        head = _below(self.n_heads) if self.n_heads else "[0-9]{1,4}"
        return f"(?:{head}:)?{token}"


def schema_facts(synthesizer: Any, vocoders: Iterable[str]) -> SchemaFacts:
    """The facts of a :class:`~gst_tts.inference.synthesizer.Synthesizer` served with ``vocoders``."""
    table = synthesizer.symbols
    readable = table.symbols[2:]  # pad and eos are never read from text
    return SchemaFacts(
        n_tokens=synthesizer.n_tokens,
        n_heads=synthesizer.n_heads,
        text_pattern=text_pattern(readable, phonemes=table.language is not None),
        vocoders=tuple(vocoders),
    )


def text_pattern(readable: Iterable[str], *, phonemes: bool) -> str | None:
    """A regular expression for texts a model that reads ``readable`` takes: ASCII letters it reads
    (either case: the cleaners lowercase), digits (spelled out, which can lengthen a text past its
    limit: a 422), spaces and the punctuation it reads, at least one letter or digit. Braces (a
    pronunciation) and other characters the cleaners transliterate (accented letters) are left out,
    though the server takes them. A phoneme model reads what espeak-ng makes of the letters: all
    of them are allowed, though a word may still give a phoneme the model lacks (a 422 naming it).
    None when the model reads no ASCII letter."""
    readable = set(readable)
    lower = string.ascii_lowercase if phonemes else "".join(c for c in string.ascii_lowercase if c in readable)
    if not lower:
        return None
    letters = "a-zA-Z" if lower == string.ascii_lowercase else _char_class(lower + lower.upper())
    marks = "".join(sorted(c for c in readable if c in string.punctuation + " " and c not in "{}"))
    spoken = letters + "0-9"
    either = _char_class(marks) + spoken
    return f"^[{either}]*[{spoken}][{either}]*$"


def _char_class(chars: str) -> str:
    """``chars`` as the inside of a ``[...]`` class, escaped for Python and ECMA-262 regexes alike."""
    return "".join("\\" + c if c in "\\]^-[" else c for c in dict.fromkeys(chars))


def _below(n: int) -> str:
    """A regex for the whole numbers ``0 .. n - 1`` written without leading zeros."""
    if n <= 10:
        return f"[0-{n - 1}]"
    return "(?:" + "|".join(str(i) for i in range(n - 1, -1, -1)) + ")"


def _bounded_number(bound: float) -> str:
    """A regex for JSON numbers of at most three decimals within ``±bound`` (``-?0`` under 1)."""
    whole = min(math.floor(bound), 9)
    if whole < 1:
        return "-?0"
    below = f"[0-{whole - 1}](?:\\.[0-9]{{1,3}})?"
    return f"-?(?:{below}|{whole}(?:\\.0{{1,3}})?)"


def _keyed_schema(key_pattern: str, *, min_properties: int) -> Any:
    """``json_schema_extra`` of a map whose keys match ``key_pattern``, nothing else, at least
    ``min_properties`` of them (pydantic states the key pattern, but lets any other key through)."""

    def extra(schema: dict[str, Any]) -> None:
        value = next(iter(schema.pop("patternProperties", {}).values()), None)
        value = value or schema.pop("additionalProperties", None) or {"type": "number"}
        schema["patternProperties"] = {key_pattern: value}
        schema["additionalProperties"] = False
        schema["minProperties"] = max(min_properties, schema.get("minProperties", 0))

    return extra


_STYLES = ("style_weights", "style_dials", "reference_id", "mix")
_HAS_REFERENCE = {
    "anyOf": [{"required": [name], "properties": {name: {"not": {"type": "null"}}}} for name in ("reference_id", "mix")]
}
#: The rules between fields that the server checks (each a 422 naming it), as the schema states them:
#: at most one style (a style field present excludes the others), and style_strength, and tempo or
#: f0_range "reference", only with a reference or mix.
_BETWEEN_FIELDS = {
    "dependentSchemas": {
        **{name: {"properties": {other: {"type": "null"} for other in _STYLES if other != name}} for name in _STYLES},
        "style_strength": {"anyOf": [{"properties": {"style_strength": {"type": "null"}}}, _HAS_REFERENCE]},
        **{
            name: {"anyOf": [{"properties": {name: {"not": {"const": REFERENCE}}}}, _HAS_REFERENCE]}
            for name in ("tempo", "f0_range")
        },
    }
}


def style_wav_pattern(limits: ServeLimits, facts: SchemaFacts) -> str:
    """``GET /api/tts``'s ``style_wav`` as the schema states it: empty, or a JSON object of at most
    ``max_style_weights`` token keys → weights within ``±max_abs_weight`` (what
    :func:`style_wav_weights` takes; a file on the server, Coqui's other form, is refused here)."""
    entry = f'"{facts.token_key()}" ?: ?{_bounded_number(limits.max_abs_weight)}'
    more = limits.max_style_weights - 1
    return f"^(?:\\{{ ?{entry}(?: ?, ?{entry}){{0,{more}}} ?\\}})?$"


def _weight(limits: ServeLimits) -> Any:
    return Annotated[float, Field(ge=-limits.max_abs_weight, le=limits.max_abs_weight, allow_inf_nan=False)]


def synthesize_request_model(limits: ServeLimits, facts: SchemaFacts = SchemaFacts()) -> type[BaseModel]:
    """``SynthesizeRequest``, the body of ``POST /api/synthesize``, bounded by ``limits``; its
    schema also states ``facts`` (the model's text, tokens and vocoders)."""
    weight = _weight(limits)
    mix_weight = Annotated[float, Field(ge=0, le=limits.max_abs_weight, allow_inf_nan=False)]
    token_map = Annotated[
        dict[_TokenKey, weight],
        Field(
            max_length=limits.max_style_weights,
            json_schema_extra=_keyed_schema(f"^{facts.token_key()}$", min_properties=1),  # {}: "names no token"
        ),
    ]
    text_extra = {"pattern": facts.text_pattern} if facts.text_pattern else None
    vocoder_extra = {"enum": list(facts.vocoders)} if facts.vocoders else None

    class SynthesizeRequest(BaseModel):
        """A text and at most one style: ``style_weights``, ``style_dials``, ``reference_id`` or ``mix`` (none: neutral)."""  # noqa: E501 (pydantic publishes it as the schema's description: one line)

        model_config = ConfigDict(extra="forbid", json_schema_extra=_BETWEEN_FIELDS)
        text: Annotated[
            str,
            Field(
                min_length=1,
                max_length=limits.max_text_chars,
                description=TEXT_DESCRIPTION,
                json_schema_extra=text_extra,
            ),
        ]
        style_weights: Optional[token_map] = Field(
            None, description='token index ("3", every head) or "head:token" ("1:3") → weight; unnamed tokens get 0'
        )
        style_dials: Optional[token_map] = Field(
            None,
            description='token index or "head:token" → amount: that head\'s weights moved from neutral toward'
            " the token (0 neutral, 1 the token alone); several dials add up",
        )
        reference_id: Optional[_RefId] = Field(None, description="an id from POST /api/references: speak in its style")
        mix: Optional[
            Annotated[
                dict[_RefId, mix_weight],
                Field(
                    min_length=1,
                    max_length=limits.max_mix,
                    json_schema_extra=_keyed_schema(ID_PATTERN, min_properties=1),
                ),
            ]
        ] = Field(None, description="reference id → weight (>= 0, normalised to sum 1): their token weights averaged")
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
        vocoder: Optional[Annotated[str, Field(max_length=64, json_schema_extra=vocoder_extra)]] = Field(
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
