"""The HTTP API and the page: :func:`create_app` turns a :class:`Synthesizer` into a FastAPI app.

Endpoints (their schema is served at ``/openapi.json``):

* ``POST /api/synthesize``: JSON ``{"text", "style_weights", "style_dials", "reference_id", "mix",
  "style_strength", "tempo", "f0_range", "seed", "vocoder"}`` → WAV (``?format=json``: a JSON summary
  with links to the audio and the plot);
* ``GET /api/tts?text=…``: Coqui ``tts-server``'s endpoint, so its clients work unchanged (a
  ``style_wav`` of JSON token weights, ``{"0": 0.3}``, is taken as ``style_weights``);
* ``POST /api/references`` (multipart field ``file``) → id, duration and per-head token weights;
  ``GET /api/references`` lists them;
* ``GET /api/syntheses/{id}/audio.wav``, ``…/alignment.png``, ``GET /api/syntheses/{id}``;
* ``GET /api/model`` (including which vocoder speaks and why), ``GET /api/health``; the page at
  ``/`` (``static/``, no external resource).

Every problem a client can cause is a 4xx answer ``{"error": "<one line naming it>"}``; only a
bug gives a 5xx (and a full queue: 503 with ``Retry-After``). Uploads are read into memory, at
most ``ServeLimits.max_upload_bytes``, and decoded from there: nothing a request sends is
written to disk. References and recent syntheses are kept in memory, the oldest dropped first.

Hostile clients: :class:`_Guard`, a pure ASGI middleware in front of everything, checks the API
key from the headers before a byte of the body is read (401), counts the body as it arrives
whatever Content-Length says (413 past the limit: a chunked body is cut there), and answers 408
when a body trickles in slower than ``ServeLimits.body_timeout_s`` allows; those answers close the
connection, so the rest of such a body is never read. Only the queue's worker calls the model:
reference clips are decoded and encoded there too (:class:`ReferenceJob`), one at a time.

The output has the model's own tempo and F0 range unless a request asks for a reference's
(``tempo``, ``f0_range``: :data:`REFERENCE`): that is signal processing after the model (the mel
retimed, the vocoder's F0 track stretched), never done to a stream.

This module does not use ``from __future__ import annotations``: FastAPI reads the endpoint
annotations at run time, and the request model is built here with the limits it documents.
"""

import asyncio
from concurrent.futures import Future
import contextlib
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, fields
import functools
import hmac
import io
import json
import logging
import math
from pathlib import Path
import secrets
import threading
from typing import Annotated, Any, AsyncIterator, Callable, Literal, Mapping, Optional, Sequence, Union

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from fastapi.security import APIKeyHeader
from fastapi.staticfiles import StaticFiles
import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError, field_validator
from pydantic_core import PydanticCustomError
import soundfile as sf
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gst_tts.audio.io import streaming_wav_header, wav_bytes, wav_pcm16
from gst_tts.errors import AudioError, GstTtsError, TextError, first_line
from gst_tts.inference.dial_names import NamedDial
from gst_tts.inference.results import SynthesisResult
from gst_tts.inference.style_spec import (
    MAX_F0_RANGE_ST,
    MAX_STYLE_STRENGTH,
    F0Target,
    Style,
    TempoTarget,
    check_f0_range,
    style_f0_range,
    style_tempo,
)
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.inference.vocoder_choice import KIND_NAMES
from gst_tts.serve.batching import BatchingQueue, QueueClosed, QueueFull, ReferenceJob, StreamJob, SynthesisJob

__all__ = ["ServeLimits", "create_app", "STATIC_DIR", "DECODED", "REFERENCE"]

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"
# Audio any client may plausibly send; a header claiming more is a broken or hostile file, and the
# decoder would allocate its claimed length up front.
_MAX_UPLOAD_RATE = 192_000
_MAX_UPLOAD_CHANNELS = 8
# Room for the multipart framing around the file itself.
_MULTIPART_OVERHEAD = 64 * 1024
# A synthesis request is a text and a few numbers.
_MAX_JSON_BYTES = 256 * 1024
# The /api/ endpoints a client may call without the key.
_PUBLIC_API = frozenset({"/api/health"})

#: ``tempo`` and ``f0_range`` words: the model's own (the default), or the reference's (signal
#: processing after the model). The CLI's ``--tempo`` / ``--f0-range`` words
#: (``gst_tts.cli.args.TEMPO_DECODED`` …), spelled here because serve sits beside cli, not above it
#: (imports point down only, ARCHITECTURE.md); tests/serve checks that the two agree.
DECODED, REFERENCE = "decoded", "reference"
# How the JSON summary names an F0 range given in semitones (as the CLI's JSON does), and the model's own.
_GIVEN = "given"
_DECODED = {"source": DECODED}
_STREAM_KEEPS = (
    "streams keep the model's tempo and F0 range (a retiming or an F0 stretch needs the whole output): "
    "leave out tempo and f0_range, or ask without stream=true"
)


@dataclass(frozen=True)
class ServeLimits:
    """What one request may ask for; each limit, when crossed, is a 4xx answer that names it.

    Args:
        max_text_chars: characters of text (as sent). Default 500.
        max_upload_bytes: size of an uploaded reference. Default 10 MiB.
        max_reference_s: length of an uploaded reference in seconds. Default 30.
        max_abs_weight: largest |token weight| in ``style_weights`` and largest mix weight. Default 4.
        max_style_weights: entries in ``style_weights``. Default 64.
        max_mix: references in ``mix``. Default 8.
        request_timeout_s: time a synthesis (or a reference's encoding) may wait and run before the
            request is answered 408. Default 60.
        body_timeout_s: time a request's body may take to arrive, from the first read of it; a
            slower one is answered 408 and its connection closed (a client trickling a body
            holds a connection no longer). Default 60 (10 MiB then needs 1.4 Mbit/s).
        max_references: uploaded references kept (the oldest is dropped). Default 64.
        max_syntheses: recent syntheses kept for their audio and plot links. Default 32.

    Raises:
        GstTtsError: a limit that is not a positive number.
    """

    max_text_chars: int = 500
    max_upload_bytes: int = 10 * 1024 * 1024
    max_reference_s: float = 30.0
    max_abs_weight: float = 4.0
    max_style_weights: int = 64
    max_mix: int = 8
    request_timeout_s: float = 60.0
    body_timeout_s: float = 60.0
    max_references: int = 64
    max_syntheses: int = 32

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            whole = f.type in (int, "int")
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
            if not ok or (whole and not isinstance(value, int)):
                raise GstTtsError(f"{f.name} must be a positive {'whole ' if whole else ''}number, got {value!r}")


class ApiError(Exception):
    """An answer ``{"error": message}`` with ``status`` (and extra headers)."""

    def __init__(self, status: int, message: str, *, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


class _Recent:
    """A thread-safe map that keeps the ``capacity`` most recently added entries."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: "OrderedDict[str, Any]" = OrderedDict()
        self._lock = threading.Lock()

    def add(self, value: Any) -> str:
        key = secrets.token_hex(8)
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return key

    def get(self, key: str) -> Any | None:
        with self._lock:
            return self._items.get(key)

    def values(self) -> list[tuple[str, Any]]:
        with self._lock:
            return list(self._items.items())


@dataclass
class _Reference:
    name: str
    duration_s: float
    weights: np.ndarray  # (n_heads, n_tokens)
    f0_range_st: float | None = None  # its F0 spread (YIN), which a spectral vocoder gives its outputs
    letters_per_s: float | None = None  # its estimated letter rate, which one-shot outputs are retimed to

    def to_dict(self, ref_id: str) -> dict[str, Any]:
        return {
            "id": ref_id,
            "name": self.name,
            "duration_s": round(self.duration_s, 3),
            "weights": np.round(self.weights.astype(float), 6).tolist(),
        }


@dataclass
class _Synthesis:
    result: SynthesisResult
    wav: bytes
    seed: int | None
    vocoder: str
    #: Which tempo and F0 range the output has, as the CLI's JSON says it (``{"source": "decoded"}`` …).
    tempo: dict[str, Any] = field(default_factory=lambda: dict(_DECODED))
    f0_range: dict[str, Any] = field(default_factory=lambda: dict(_DECODED))
    png: bytes | None = None


def create_app(
    queue: BatchingQueue | Synthesizer,
    *,
    limits: ServeLimits = ServeLimits(),
    api_key: str | None = None,
    vocoder_description: str | None = None,
    dials: Sequence[NamedDial] = (),
) -> FastAPI:
    """The FastAPI app serving ``synthesizer`` (see the module docstring for the endpoints).

    Args:
        queue: the batching queue that decodes with the model (its settings: batch size, queue
            length, decoding bounds, vocoders), or a bare synthesizer for a queue with the default
            settings. From the first request on, only the queue's worker decodes with the model.
        limits: what a request may ask for. Default ``ServeLimits()``.
        api_key: when given, every ``/api/`` endpoint but ``/api/health`` needs it in the
            ``X-API-Key`` header (or ``Authorization: Bearer …``). Default None (no key).
        vocoder_description: one line saying which vocoder speaks and why (what ``gst-tts serve``
            logs first, :func:`~gst_tts.inference.vocoder_choice.resolve_vocoder`'s), shown by
            ``/api/model`` (``"vocoder"``) and the page. Default: the name of the queue's default
            vocoder.
        dials: the checkpoint's named dials (``probe-tokens --save-dials``;
            :func:`~gst_tts.inference.dial_names.read_dials`), offered by ``/api/model``
            (``"dials"``) and the page. Default none.

    The queue's worker starts with the app (its lifespan) or at the first synthesis, and stops
    when the app shuts down.
    """
    if api_key is not None and not api_key.strip():
        raise GstTtsError("api_key must not be empty")
    if not isinstance(queue, BatchingQueue):
        queue = BatchingQueue(queue)
    service = _Service(queue.synthesizer, queue, limits, vocoder_description=vocoder_description, dials=dials)

    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        queue.start()
        try:
            yield
        finally:
            await run_in_threadpool(queue.close)

    app = FastAPI(
        title="gst-tts",
        version=_version(),
        description="Text to speech with Global Style Tokens: synthesis with token weights, reference "
        'styles and mixes; alignment health and plots. Errors are `{"error": "..."}`.',
        lifespan=contextlib.asynccontextmanager(lifespan),
        docs_url=None,
        redoc_url=None,  # their pages load from a CDN
    )
    app.state.queue = queue
    app.state.service = service
    app.state.limits = limits
    _add_error_handlers(app)

    app.add_middleware(_Guard, api_key=api_key, limits=limits)
    # The key is checked by _Guard, before the body is read; the dependency documents it in the schema.
    key_header = APIKeyHeader(
        name="X-API-Key", auto_error=False, description="needed when the server runs with --api-key"
    )
    auth = [Depends(key_header)]
    weight = Annotated[float, Field(ge=-limits.max_abs_weight, le=limits.max_abs_weight, allow_inf_nan=False)]
    mix_weight = Annotated[float, Field(ge=0, le=limits.max_abs_weight, allow_inf_nan=False)]
    token_key = Annotated[str, StringConstraints(pattern=r"^[0-9]{1,4}(:[0-9]{1,4})?$")]
    ref_id = Annotated[str, StringConstraints(max_length=64)]

    class SynthesizeRequest(BaseModel):
        """A text and at most one style: ``style_weights``, ``style_dials``, ``reference_id`` or ``mix`` (none: neutral)."""  # noqa: E501 (pydantic publishes it as the schema's description: one line)

        model_config = ConfigDict(extra="forbid")
        text: Annotated[str, Field(min_length=1, max_length=limits.max_text_chars, description="what to say")]
        style_weights: Optional[Annotated[dict[token_key, weight], Field(max_length=limits.max_style_weights)]] = Field(
            None, description='token index ("3", every head) or "head:token" ("1:3") → weight; unnamed tokens get 0'
        )
        style_dials: Optional[Annotated[dict[token_key, weight], Field(max_length=limits.max_style_weights)]] = Field(
            None,
            description='token index or "head:token" → amount: that head\'s weights moved from neutral toward'
            " the token (0 neutral, 1 the token alone); several dials add up",
        )
        reference_id: Optional[ref_id] = Field(None, description="an id from POST /api/references: speak in its style")
        mix: Optional[Annotated[dict[ref_id, mix_weight], Field(min_length=1, max_length=limits.max_mix)]] = Field(
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
                            f"{_quote(str(value)) if isinstance(value, str) else type(value).__name__} is not "
                            f"{DECODED!r}, {REFERENCE!r} or a number of semitones"
                        )
                    },
                )
            try:
                return check_f0_range(value)
            except GstTtsError as exc:
                raise PydanticCustomError("f0_range", "{problem}", {"problem": str(exc)}) from None

    # style_wav of GET /api/tts, as JSON token weights: checked as style_weights is.
    style_wav_weights = TypeAdapter(Annotated[dict[token_key, weight], Field(max_length=limits.max_style_weights)])

    # ------------------------------------------------------------------ synthesis

    @app.post(
        "/api/synthesize",
        dependencies=auth,
        tags=["synthesis"],
        response_class=Response,
        responses={
            200: {
                "content": {"audio/wav": {}, "application/json": {}},
                "description": "WAV (headers X-Synthesis-Id, X-Stop-Reason, X-Alignment-Health, X-Alignment-Problems, "
                "X-Style-Weights, X-Tempo, X-F0-Range), or with ?format=json a JSON summary",
            },
            **_ERRORS,
        },
    )
    async def synthesize(
        body: SynthesizeRequest, format: Literal["wav", "json"] = "wav", stream: bool = False
    ) -> Response:
        """Speak a text in a style; the alignment plot is then at ``/api/syntheses/{id}/alignment.png``.

        With ``?stream=true`` the WAV is sent as it is made (chunked): a header whose sizes say
        "unknown" (``0xFFFFFFFF``), then 16-bit PCM as each chunk of audio is synthesized, so a
        client can play it before synthesis ends. No synthesis id, plot or health headers then
        (they need the whole alignment); a problem found before the first chunk is the usual 4xx
        answer, one after it ends the stream early. A stream keeps the model's tempo and F0 range:
        ``tempo`` or ``f0_range`` other than ``"decoded"`` is refused with it.

        The output has the model's own tempo and F0 range unless ``tempo`` / ``f0_range`` ask for
        the reference's (or, ``f0_range``, a number of semitones): signal processing after the
        model. The summary's ``tempo`` and ``f0_range`` (and the headers ``X-Tempo``,
        ``X-F0-Range``) say which were used.
        """
        if stream:
            if format == "json":
                raise ApiError(422, "stream=true answers with WAV only: leave out format=json")
            if body.tempo != DECODED or body.f0_range != DECODED:
                raise ApiError(422, _STREAM_KEEPS)
            chunks = await service.stream(
                text=body.text,
                style_weights=body.style_weights,
                style_dials=body.style_dials,
                reference_id=body.reference_id,
                mix=body.mix,
                seed=body.seed,
                vocoder=body.vocoder,
                style_strength=body.style_strength,
            )
            return StreamingResponse(
                chunks,
                media_type="audio/wav",
                headers={"Cache-Control": "no-store", "X-Stream": "true", **_copy_headers(_DECODED, _DECODED)},
            )
        syn_id, entry = await service.synthesize(
            text=body.text,
            style_weights=body.style_weights,
            style_dials=body.style_dials,
            reference_id=body.reference_id,
            mix=body.mix,
            seed=body.seed,
            vocoder=body.vocoder,
            style_strength=body.style_strength,
            tempo=body.tempo,
            f0_range=body.f0_range,
        )
        if format == "json":
            return JSONResponse(service.summary(syn_id, entry))
        return Response(entry.wav, media_type="audio/wav", headers=service.headers(syn_id, entry))

    @app.get(
        "/api/tts",
        dependencies=auth,
        tags=["synthesis"],
        response_class=Response,
        responses={200: {"content": {"audio/wav": {}}}, **_ERRORS},
    )
    async def tts(
        request: Request,
        text: Annotated[Optional[str], Query(max_length=limits.max_text_chars)] = None,
        speaker_id: Annotated[str, Query(max_length=200)] = "",
        style_wav: Annotated[str, Query(max_length=2000)] = "",
        language_id: Annotated[str, Query(max_length=200)] = "",
    ) -> Response:
        """Coqui ``tts-server``'s endpoint: ``GET /api/tts?text=…`` → WAV in the neutral style.

        ``speaker_id`` and ``language_id`` are accepted and ignored (one speaker, one language).
        ``style_wav`` is, as in Coqui, either JSON token weights, ``{"0": 0.3, "3": -0.2}`` (token,
        or ``"head:token"``, → weight), spoken as ``style_weights`` of ``POST /api/synthesize``
        with the same checks, or a file on the server, which this server never reads: upload the
        clip to ``POST /api/references`` and use ``POST /api/synthesize`` with its id.
        """
        style_weights = _style_wav_weights(style_wav, style_wav_weights)
        if text is None:  # Coqui also takes the text from a header
            text = request.headers.get("text")
        if text is None:
            raise ApiError(422, "text: missing (GET /api/tts?text=...)")
        if len(text) > limits.max_text_chars:
            raise ApiError(422, f"text is {len(text)} characters; the limit is {limits.max_text_chars}")
        syn_id, entry = await service.synthesize(text=text, style_weights=style_weights, weights_field="style_wav")
        return Response(entry.wav, media_type="audio/wav", headers=service.headers(syn_id, entry))

    @app.get("/api/syntheses/{syn_id}", dependencies=auth, tags=["synthesis"], responses=_ERRORS)
    async def synthesis_summary(syn_id: Annotated[str, _path_id()]) -> dict[str, Any]:
        """The JSON summary of a recent synthesis (the same as ``POST /api/synthesize?format=json``)."""
        return service.summary(syn_id, service.synthesis(syn_id))

    @app.get(
        "/api/syntheses/{syn_id}/audio.wav",
        dependencies=auth,
        tags=["synthesis"],
        response_class=Response,
        responses={200: {"content": {"audio/wav": {}}}, **_ERRORS},
    )
    async def synthesis_audio(syn_id: Annotated[str, _path_id()]) -> Response:
        entry = service.synthesis(syn_id)
        return Response(entry.wav, media_type="audio/wav", headers=service.headers(syn_id, entry))

    @app.get(
        "/api/syntheses/{syn_id}/alignment.png",
        dependencies=auth,
        tags=["synthesis"],
        response_class=Response,
        responses={200: {"content": {"image/png": {}}}, **_ERRORS},
    )
    async def synthesis_alignment(syn_id: Annotated[str, _path_id()]) -> Response:
        """Attention map (symbols × time), stop-token curve and mel of a recent synthesis, with its health."""
        entry = service.synthesis(syn_id)
        if entry.png is None:
            entry.png = await run_in_threadpool(service.alignment_png, entry)
        return Response(entry.png, media_type="image/png")

    # ------------------------------------------------------------------ references

    @app.post(
        "/api/references",
        dependencies=auth,
        tags=["references"],
        responses=_ERRORS,
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "multipart/form-data": {
                        "schema": {
                            "type": "object",
                            "required": ["file"],
                            "properties": {
                                "file": {
                                    "type": "string",
                                    "format": "binary",
                                    "description": f"any audio libsndfile reads (WAV, FLAC, OGG, MP3), "
                                    f"at most {limits.max_upload_bytes} bytes and {limits.max_reference_s:g} s",
                                }
                            },
                        }
                    }
                },
            }
        },
    )
    async def upload_reference(request: Request) -> dict[str, Any]:
        """Upload a reference clip → its id, duration and per-head token weights ``[head][token]``."""
        name, data = await _read_upload(request, limits)
        ref = await service.encode_reference(name, data)
        ref_id = service.references.add(ref)
        return ref.to_dict(ref_id)

    @app.get("/api/references", dependencies=auth, tags=["references"], responses=_ERRORS)
    async def list_references() -> list[dict[str, Any]]:
        """The references kept, oldest first (the oldest is dropped beyond the server's limit)."""
        return [ref.to_dict(ref_id) for ref_id, ref in service.references.values()]

    # ------------------------------------------------------------------ about

    @app.get("/api/model", dependencies=auth, tags=["about"], responses=_ERRORS)
    async def model_info() -> dict[str, Any]:
        """Sample rate, style tokens and heads, the text frontend, the vocoders and the limits."""
        return service.model_info()

    @app.get("/api/health", tags=["about"])
    async def health() -> dict[str, Any]:
        """Liveness and the queue's state (no key needed)."""
        return {"status": "ok", "queue": queue.stats()}

    # ------------------------------------------------------------------ the page

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


# ---------------------------------------------------------------- the work behind the endpoints


class _Service:
    """Validation, style resolution and stores behind the endpoints (no web framework in here
    besides raising :class:`ApiError`)."""

    def __init__(
        self,
        synthesizer: Synthesizer,
        queue: BatchingQueue,
        limits: ServeLimits,
        *,
        vocoder_description: str | None = None,
        dials: Sequence[NamedDial] = (),
    ) -> None:
        self.synth = synthesizer
        self.dials = list(dials)
        self.queue = queue
        self.limits = limits
        self.vocoder_description = vocoder_description or KIND_NAMES.get(queue.default_vocoder, queue.default_vocoder)
        self.references = _Recent(limits.max_references)
        self.syntheses = _Recent(limits.max_syntheses)
        self._readable = set(synthesizer.symbols.symbols[2:])  # pad and eos are never read from text

    # ---------------------------------------------------------------- text and style

    def check_text(self, text: str) -> None:
        """422 for a text the model cannot speak: empty, too long, a malformed or unknown ``{…}``
        pronunciation, symbols the model lacks, punctuation only. The symbols judged are those the
        model reads (its frontend's: the cleaned characters, or the phonemes)."""
        if not text.strip():
            raise ApiError(422, "text is empty")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # JSON may carry lone surrogates ("\\ud800"), which no answer could echo
            raise ApiError(422, "text is not valid Unicode (it holds a lone surrogate)") from None
        if len(text) > self.limits.max_text_chars:
            raise ApiError(422, f"text is {len(text)} characters; the limit is {self.limits.max_text_chars}")
        table = self.synth.symbols
        cleaned = self._read(table.clean, text)
        # Numbers and abbreviations are spelled out: the spoken form is bounded too, since it sets the work
        # (and, for phonemes, espeak-ng's).
        if len(cleaned) > 4 * self.limits.max_text_chars:
            raise ApiError(
                422,
                f"text is {len(cleaned)} characters once numbers and abbreviations are spelled out; "
                f"the limit is {4 * self.limits.max_text_chars}",
            )
        segments = self._read(table.frontend.segments, text)
        for symbols, override in segments:
            unknown = [c for c in symbols if c not in self._readable] if override else []
            if unknown:  # a pronunciation is taken as written: no symbol of it may be dropped
                raise ApiError(
                    422,
                    f"unknown phoneme {unknown[0]!r} in {{{symbols if len(symbols) <= 40 else symbols[:40] + '…'}}}: "
                    f"this model reads {_reads(table)}",
                )
        symbols = "".join(piece for piece, _ in segments)
        unknown = list(dict.fromkeys(c for c in symbols if c not in self._readable))
        if unknown:
            shown = ", ".join(repr(c) for c in unknown[:10]) + (
                f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
            )
            what = "phonemes" if table.language else "characters"
            raise ApiError(422, f"text has {what} the model cannot read: {shown}")
        if not symbols.strip():
            raise ApiError(422, "text is empty after normalisation")
        if not any(c.isalnum() for c in symbols):
            raise ApiError(422, "text has nothing to speak (only punctuation)")

    @staticmethod
    def _read(step: Any, text: str) -> Any:
        """``step(text)`` (the frontend's cleaning or its symbols); a TextError (an unmatched brace) is a
        422 with its own line, anything else the libraries raise on odd input one naming its kind."""
        try:
            return step(text)
        except TextError as exc:
            raise ApiError(422, str(exc)) from None
        except Exception as exc:  # the cleaners' libraries (inflect, unidecode) raise assorted types on odd input
            raise ApiError(422, f"text could not be normalised ({first_line(exc, 100)})") from None

    def style(
        self,
        *,
        style_weights: Mapping[str, float] | None,
        reference_id: str | None,
        mix: Mapping[str, float] | None,
        style_dials: Mapping[str, float] | None = None,
        style_strength: float | None = None,
        weights_field: str = "style_weights",
    ) -> np.ndarray:
        """``(n_heads, n_tokens)`` token weights of the request's style (neutral without one);
        ``style_strength`` scales a reference's or mix's from neutral (already range-checked);
        ``weights_field``: the name ``style_weights`` came in (``style_wav`` of ``GET /api/tts``), for messages."""
        given = [
            name
            for name, v in (
                ("style_weights", style_weights),
                ("style_dials", style_dials),
                ("reference_id", reference_id),
                ("mix", mix),
            )
            if v is not None
        ]
        if len(given) > 1:
            raise ApiError(
                422, f"give at most one of style_weights, style_dials, reference_id, mix (got {', '.join(given)})"
            )
        if style_strength is not None and reference_id is None and mix is None:
            raise ApiError(422, "style_strength needs reference_id or mix (it scales a reference's style)")
        for field_name, spec, resolve in (
            (weights_field, style_weights, self.synth.styles.weights_tensor),
            ("style_dials", style_dials, self.synth.styles.dial_weights),
        ):
            if spec is None:
                continue
            parsed: dict[Any, float] = {}
            for key, w in spec.items():
                head, _, token = key.rpartition(":")
                parsed_key = (int(head), int(token)) if head else int(token)
                if parsed_key in parsed:  # "1" and "01"
                    raise ApiError(422, f"{field_name}: token {key} is given twice")
                parsed[parsed_key] = w
            try:
                return resolve(parsed).numpy()
            except GstTtsError as exc:
                raise ApiError(422, f"{field_name}: {exc}") from None
        if reference_id is not None:
            return self.strengthened(self.reference("reference_id", reference_id).weights, style_strength)
        if mix is not None:
            refs = [(self.reference("mix", ref_id), w) for ref_id, w in mix.items()]
            total = sum(w for _, w in refs)
            if total <= 0:
                raise ApiError(422, "mix: at least one reference needs a positive weight")
            return self.strengthened(sum(ref.weights * (w / total) for ref, w in refs), style_strength)
        return self.synth.styles.neutral().numpy()

    def f0_target(
        self, *, reference_id: str | None, mix: Mapping[str, float] | None, style_strength: float | None
    ) -> F0Target | None:
        """The F0 spread a reference or mix asks a vocoder for, from its uploaded clips'
        spreads (:func:`~gst_tts.inference.style_spec.style_f0_range`'s rule); None for other styles.
        Call after :meth:`style` has checked them."""
        return style_f0_range(
            self._reference_style(reference_id, mix, style_strength),
            lambda ref_id: self._uploaded(ref_id, lambda ref: ref.f0_range_st),
        )

    def tempo_target(
        self, *, reference_id: str | None, mix: Mapping[str, float] | None, style_strength: float | None
    ) -> TempoTarget | None:
        """The tempo a reference or mix retimes outputs to, from its uploaded clips' letter rates
        (:func:`~gst_tts.inference.style_spec.style_tempo`'s rule); None for other styles. Call
        after :meth:`style` has checked them."""
        return style_tempo(
            self._reference_style(reference_id, mix, style_strength),
            lambda ref_id: self._uploaded(ref_id, lambda ref: ref.letters_per_s),
        )

    def after_the_model(
        self,
        *,
        tempo: str,
        f0_range: str | float,
        reference_id: str | None,
        mix: Mapping[str, float] | None,
        style_strength: float | None,
        vocoder: str | None,
    ) -> tuple[TempoTarget | None, dict[str, Any], F0Target | None, dict[str, Any]]:
        """What a request asks done to its output after the model, each with its JSON description
        (the CLI's shape: ``cli_tempo_target``, ``cli_f0_target``): ``(tempo target, its
        description, F0 target, its description)``. ``None``: the model's own. ``"reference"``
        takes an uploaded reference's (a mix's) reading; one that could not be read, or an F0
        range with a vocoder that cannot set one, leaves the model's, and the description says so.
        Call after :meth:`checked`.

        Raises:
            ApiError: 422 for ``"reference"`` without ``reference_id`` or ``mix``, or a bad number.
        """
        has_reference = reference_id is not None or mix is not None
        for name, choice, what in (
            ("tempo", tempo, "it retimes the output to the reference's letter rate"),
            ("f0_range", f0_range, "a number of semitones works with any style"),
        ):
            if choice == REFERENCE and not has_reference:
                raise ApiError(422, f"{name}: {REFERENCE!r} needs reference_id or mix ({what})")
            if isinstance(choice, str) and choice not in (DECODED, REFERENCE):
                raise ApiError(422, f"{name}: {_quote(choice)} is not {DECODED!r} or {REFERENCE!r}")
        tempo_target, tempo_said = None, dict(_DECODED)
        if tempo == REFERENCE:
            tempo_target = self.tempo_target(reference_id=reference_id, mix=mix, style_strength=style_strength)
            if tempo_target is not None:
                tempo_said = {
                    "source": REFERENCE,
                    "letters_per_s": round(tempo_target.letters_per_s, 2),
                    "strength": tempo_target.strength,
                }
        f0, f0_said = None, dict(_DECODED)
        sets_f0_range = bool(
            getattr(self.queue.vocoders[vocoder or self.queue.default_vocoder], "sets_f0_range", False)
        )
        if f0_range == REFERENCE and sets_f0_range:
            f0 = self.f0_target(reference_id=reference_id, mix=mix, style_strength=style_strength)
            if f0 is not None:
                f0_said = {"source": REFERENCE, "semitones": round(f0.semitones, 2), "strength": f0.strength}
        elif not isinstance(f0_range, str):
            try:
                semitones = check_f0_range(f0_range)
            except GstTtsError as exc:
                raise ApiError(422, f"f0_range: {exc}") from None
            if sets_f0_range:
                f0, f0_said = F0Target(semitones, 1.0), {"source": _GIVEN, "semitones": semitones}
        return tempo_target, tempo_said, f0, f0_said

    @staticmethod
    def _reference_style(
        reference_id: str | None, mix: Mapping[str, float] | None, style_strength: float | None
    ) -> Style | None:
        if reference_id is not None:
            return Style(reference=reference_id, strength=style_strength)
        if mix is not None:
            return Style(mix=dict(mix), strength=style_strength)
        return None

    def _uploaded(self, ref_id: str, reading: Callable[[_Reference], float | None]) -> float | None:
        """What ``reading`` takes of an uploaded clip (read off it when it was encoded), or None."""
        ref = self.references.get(ref_id)
        return None if ref is None else reading(ref)

    def strengthened(self, weights: np.ndarray, strength: float | None) -> np.ndarray:
        """A reference's ``(n_heads, n_tokens)`` weights moved from neutral by ``strength`` (the resolver's rule)."""
        return self.synth.styles.strengthened(torch.from_numpy(np.asarray(weights, dtype=np.float32)), strength).numpy()

    def reference(self, field: str, ref_id: str) -> _Reference:
        ref = self.references.get(ref_id)
        if ref is None:
            raise ApiError(
                422,
                f"{field}: {_quote(ref_id)} is not an uploaded reference (upload the clip to "
                "POST /api/references and use the id it returns; server paths are never read)",
            )
        return ref

    # ---------------------------------------------------------------- synthesis

    async def synthesize(
        self,
        *,
        text: str,
        style_weights: Mapping[str, float] | None = None,
        reference_id: str | None = None,
        mix: Mapping[str, float] | None = None,
        seed: int | None = None,
        vocoder: str | None = None,
        style_dials: Mapping[str, float] | None = None,
        style_strength: float | None = None,
        tempo: str = DECODED,
        f0_range: str | float = DECODED,
        weights_field: str = "style_weights",
    ) -> tuple[str, _Synthesis]:
        """A one-shot synthesis, kept: ``(its id, the entry)``; ``tempo`` and ``f0_range`` as
        :meth:`after_the_model` takes them (default: the model's own)."""
        weights = self.checked(
            text=text,
            style_weights=style_weights,
            reference_id=reference_id,
            mix=mix,
            vocoder=vocoder,
            style_dials=style_dials,
            style_strength=style_strength,
            weights_field=weights_field,
        )
        tempo_target, tempo_said, f0_target, f0_said = self.after_the_model(
            tempo=tempo,
            f0_range=f0_range,
            reference_id=reference_id,
            mix=mix,
            style_strength=style_strength,
            vocoder=vocoder,
        )
        job = SynthesisJob(
            text=text, weights=weights, seed=seed, vocoder=vocoder, f0_target=f0_target, tempo_target=tempo_target
        )
        try:
            result = await self.on_worker(job, "synthesis")
        except GstTtsError as exc:
            raise ApiError(422, str(exc)) from None
        wav = await run_in_threadpool(wav_bytes, result.audio, result.sample_rate)
        entry = _Synthesis(
            result=result,
            wav=wav,
            seed=seed,
            vocoder=vocoder or self.queue.default_vocoder,
            tempo=tempo_said,
            f0_range=f0_said,
        )
        return self.syntheses.add(entry), entry

    def checked(
        self,
        *,
        text: str,
        style_weights: Mapping[str, float] | None,
        reference_id: str | None,
        mix: Mapping[str, float] | None,
        vocoder: str | None,
        style_dials: Mapping[str, float] | None,
        style_strength: float | None = None,
        weights_field: str = "style_weights",
    ) -> np.ndarray:
        """The request's ``(n_heads, n_tokens)`` token weights, its text and vocoder checked (422 otherwise)."""
        self.check_text(text)
        weights = self.style(
            style_weights=style_weights,
            style_dials=style_dials,
            reference_id=reference_id,
            mix=mix,
            style_strength=style_strength,
            weights_field=weights_field,
        )
        if vocoder is not None and vocoder not in self.queue.vocoders:
            raise ApiError(422, f"vocoder: {_quote(vocoder)} is not one of {', '.join(self.queue.vocoders)}")
        return weights

    async def stream(
        self,
        *,
        text: str,
        style_weights: Mapping[str, float] | None = None,
        reference_id: str | None = None,
        mix: Mapping[str, float] | None = None,
        seed: int | None = None,
        vocoder: str | None = None,
        style_dials: Mapping[str, float] | None = None,
        style_strength: float | None = None,
    ) -> AsyncIterator[bytes]:
        """A streamed synthesis's WAV bytes: the header, then 16-bit PCM as the worker makes it.

        A stream keeps the model's tempo and F0 range (:meth:`Synthesizer.stream`): nothing is
        done to it after the model. Waits for the first chunk before returning, so that whatever
        refuses the request before any audio (a text the synthesizer refuses, a full queue, the
        time limit) is an answer of its own and not a cut stream.

        Raises:
            ApiError: as :meth:`synthesize`.
        """
        weights = self.checked(
            text=text,
            style_weights=style_weights,
            reference_id=reference_id,
            mix=mix,
            vocoder=vocoder,
            style_dials=style_dials,
            style_strength=style_strength,
        )
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue = asyncio.Queue()
        job = StreamJob(
            text=text,
            weights=weights,
            seed=seed,
            vocoder=vocoder,
            emit=lambda item: loop.call_soon_threadsafe(inbox.put_nowait, item),
        )
        self.submit(job)
        try:
            first = await asyncio.wait_for(inbox.get(), timeout=self.limits.request_timeout_s)
        except asyncio.TimeoutError:
            job.cancelled.set()
            job.future.cancel()  # drops it if it has not started
            raise ApiError(
                408,
                f"streamed synthesis did not start within the request time limit of "
                f"{self.limits.request_timeout_s:g} s",
            ) from None
        if isinstance(first, QueueClosed):
            raise ApiError(503, str(first), headers={"Retry-After": "5"})
        if isinstance(first, GstTtsError):
            raise ApiError(422, str(first))
        if isinstance(first, BaseException):
            raise first
        return self._stream_bytes(first, inbox, job)

    async def _stream_bytes(
        self, first: np.ndarray | None, inbox: asyncio.Queue, job: StreamJob
    ) -> AsyncIterator[bytes]:
        try:
            yield streaming_wav_header(self.synth.sample_rate)
            item: Any = first
            while isinstance(item, np.ndarray):
                yield wav_pcm16(item)
                item = await inbox.get()
            if isinstance(item, BaseException):  # the header is sent: the stream can only end early
                log.warning("streamed synthesis ended early: %s", first_line(item))
        finally:
            job.cancelled.set()  # the client may have gone: the worker stops at its next chunk

    def submit(self, job: SynthesisJob | ReferenceJob | StreamJob) -> Future:
        """Queue ``job`` for the worker; its future.

        Raises:
            ApiError: 503 when the queue is full or closing.
        """
        self.queue.start()
        try:
            return self.queue.submit(job)
        except QueueFull as exc:
            raise ApiError(503, f"{exc}; retry later", headers={"Retry-After": str(exc.retry_after_s)}) from None
        except QueueClosed as exc:
            raise ApiError(503, str(exc), headers={"Retry-After": "5"}) from None

    async def on_worker(self, job: SynthesisJob | ReferenceJob, what: str) -> Any:
        """Queue ``job`` for the worker and wait for its outcome (its errors are raised here).

        Raises:
            ApiError: 503 when the queue is full or closing, 408 past the request time limit.
        """
        future = self.submit(job)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout=self.limits.request_timeout_s)
        except asyncio.TimeoutError:
            future.cancel()  # drops it if it has not started; a running batch finishes for its neighbours
            raise ApiError(
                408, f"{what} took longer than the request time limit of {self.limits.request_timeout_s:g} s"
            ) from None
        except QueueClosed as exc:
            raise ApiError(503, str(exc), headers={"Retry-After": "5"}) from None

    def synthesis(self, syn_id: str) -> _Synthesis:
        entry = self.syntheses.get(syn_id)
        if entry is None:
            raise ApiError(
                404, f"synthesis {_quote(syn_id)} is not kept (only the {self.limits.max_syntheses} most recent are)"
            )
        return entry

    def summary(self, syn_id: str, entry: _Synthesis) -> dict[str, Any]:
        d = entry.result.to_dict()
        keys = (
            "text",
            "cleaned_text",
            "sample_rate",
            "duration_s",
            "n_frames",
            "decoder_steps",
            "stop_reason",
            "health",
            "problems",
            "style_weights",
        )
        return {
            "id": syn_id,
            **{k: d[k] for k in keys},
            "seed": entry.seed,
            "vocoder": entry.vocoder,
            "tempo": entry.tempo,
            "f0_range": entry.f0_range,  # the model's own, or what was done after it
            "audio_url": f"/api/syntheses/{syn_id}/audio.wav",
            "alignment_url": f"/api/syntheses/{syn_id}/alignment.png",
        }

    def headers(self, syn_id: str, entry: _Synthesis) -> dict[str, str]:
        d = entry.result.to_dict()
        compact = {"separators": (",", ":")}  # JSON is ASCII by default, as headers must be
        return {
            "X-Synthesis-Id": syn_id,
            "X-Stop-Reason": d["stop_reason"],
            "X-Alignment-Health": json.dumps(d["health"], **compact),
            "X-Alignment-Problems": json.dumps(d["problems"], **compact),
            "X-Style-Weights": json.dumps(np.round(np.asarray(d["style_weights"]), 4).tolist(), **compact),
            "X-Duration-S": f"{d['duration_s']:.3f}",
            **_copy_headers(entry.tempo, entry.f0_range),
        }

    def alignment_png(self, entry: _Synthesis) -> bytes:
        from gst_tts.analysis.plots import figure_to_png  # matplotlib only when a plot is asked for

        r = entry.result
        title = r.text if len(r.text) <= 70 else r.text[:70] + "…"
        return figure_to_png(r.figure(title=title), dpi=80)

    # ---------------------------------------------------------------- references

    async def encode_reference(self, name: str, data: bytes) -> _Reference:
        """Token weights of an uploaded clip, decoded from memory and encoded on the queue's worker.

        Raises:
            ApiError: 422 for non-audio, silent, tiny or long clips; 503 with the queue full.
        """
        job = ReferenceJob(load=functools.partial(self.decode_reference, name, data))
        try:
            weights, duration_s, f0_range_st, letters_per_s = await self.on_worker(job, "encoding the reference")
        except GstTtsError as exc:
            raise ApiError(422, str(exc).replace("reference array", f"file {_quote(name)}", 1)) from None
        return _Reference(
            name=name, duration_s=duration_s, weights=weights, f0_range_st=f0_range_st, letters_per_s=letters_per_s
        )

    def decode_reference(self, name: str, data: bytes) -> tuple[np.ndarray, int]:
        """``(samples (frames, channels) float32, rate)`` of an uploaded clip (run on the worker).

        Raises:
            AudioError: not audio, or audio past the limits (header checks come before decoding,
                which allocates what the header claims).
        """
        try:
            info = sf.info(io.BytesIO(data))
        except Exception as exc:  # libsndfile raises several types for data it cannot parse
            raise AudioError(f"file {_quote(name)} is not readable as audio ({first_line(exc, 100)})") from None
        if not (
            0 < info.samplerate <= _MAX_UPLOAD_RATE and 0 < info.channels <= _MAX_UPLOAD_CHANNELS and info.frames > 0
        ):
            raise AudioError(
                f"file {_quote(name)}: unusable audio ({info.frames} frames, {info.channels} channels, "
                f"{info.samplerate} Hz)"
            )
        duration = info.frames / info.samplerate
        if duration > self.limits.max_reference_s:
            raise AudioError(
                f"file {_quote(name)} is {duration:.1f} s long; the limit is {self.limits.max_reference_s:g} s"
            )
        try:
            samples, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
        except Exception as exc:
            raise AudioError(f"file {_quote(name)} is not readable as audio ({first_line(exc, 100)})") from None
        return samples, rate

    def model_info(self) -> dict[str, Any]:
        synth = self.synth
        return {
            "sample_rate": synth.sample_rate,
            "n_tokens": synth.n_tokens,
            "n_heads": synth.n_heads,
            "tokens": list(range(synth.n_tokens)),
            "heads": list(range(synth.n_heads)),
            "neutral_weight": 1.0
            / synth.n_tokens,  # uniform, kept for old clients; the neutral style is neutral_weights
            "neutral_weights": synth.styles.neutral().tolist(),  # (n_heads, n_tokens): the checkpoint's neutral style
            "max_style_strength": MAX_STYLE_STRENGTH,
            "max_f0_range_st": MAX_F0_RANGE_ST,  # the largest f0_range in semitones a request may give
            # named by what probe-tokens measured (strongest first; empty without a dials file)
            "dials": [{**asdict(d), "effect": d.effect} for d in self.dials],
            "frontend": {
                "cleaner": synth.symbols.cleaner,
                "characters": "".join(synth.symbols.symbols[2:]),
                "frontend": synth.symbols.frontend.name,
                "language": synth.symbols.language,
                # the version its phonemes were made with; None for characters
                "espeak_version": getattr(synth.symbols.frontend, "espeak_version", None),
            },
            "vocoders": list(self.queue.vocoders),
            "default_vocoder": self.queue.default_vocoder,
            "vocoder": self.vocoder_description,  # which speaks and why, in one line
            "decoding": self.queue.decoding.to_dict(),
            "limits": asdict(self.limits),
        }


# ---------------------------------------------------------------- HTTP plumbing

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {
        "description": what,
        "content": {
            "application/json": {
                "schema": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}
            }
        },
    }
    for code, what in (
        (401, "missing or wrong API key"),
        (404, "not kept"),
        (408, "took longer than the request limit"),
        (413, "upload too large"),
        (415, "not multipart/form-data"),
        (422, "bad input, named"),
        (503, "queue full (see Retry-After)"),
    )
}


def _copy_headers(tempo: Mapping[str, Any], f0_range: Mapping[str, Any]) -> dict[str, str]:
    """``X-Tempo`` and ``X-F0-Range``: which tempo and F0 range an answer has (the summary's, compact JSON)."""
    compact = {"separators": (",", ":")}
    return {"X-Tempo": json.dumps(dict(tempo), **compact), "X-F0-Range": json.dumps(dict(f0_range), **compact)}


def _style_wav_weights(style_wav: str, adapter: TypeAdapter) -> dict[str, float] | None:
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
        raise ApiError(422, _validation_message(errors)) from None


def _json_kind(value: Any) -> str:
    """How a JSON value is named in a message: ``a list``, ``a string``, ``null`` …"""
    if value is None:
        return "null"
    return {bool: "true or false", str: "a string", list: "a list", dict: "an object"}.get(type(value), "a number")


def _path_id() -> Any:
    from fastapi import Path as PathParam

    return PathParam(max_length=64)


def _reads(table: Any) -> str:
    """What a symbol table's model reads, for a message: ``"phonemes (en-us)"`` or ``"characters"``."""
    return f"phonemes ({table.language})" if table.language else "characters"


def _quote(value: str, limit: int = 40) -> str:
    return repr(value if len(value) <= limit else value[:limit] + "…")


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("gst-tts")
    except Exception:  # running from a checkout that is not installed
        return "0"


def _error(status: int, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    # One line whatever a client put in the names it sent (dict keys, file names, paths).
    message = message.replace("\r", "\\r").replace("\n", "\\n")
    return JSONResponse({"error": message}, status_code=status, headers=dict(headers or {}))


def _validation_message(errors: list[dict[str, Any]]) -> str:
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


def _key_problem(headers: Headers, api_key: str) -> str | None:
    """Why ``headers`` do not carry ``api_key`` (``X-API-Key``, or ``Authorization: Bearer``), or None when they do."""
    given = headers.get("x-api-key")
    auth = headers.get("authorization", "")
    if given is None and auth.lower().startswith("bearer "):
        given = auth[7:].strip()
    if given is None:
        return "an API key is needed: send it in the X-API-Key header"
    # Constant time: how much of a guess matches must not show in the answer's timing.
    if not hmac.compare_digest(given.encode("utf-8", "replace"), api_key.encode("utf-8")):
        return "the API key is wrong"
    return None


class _BodyRefused(Exception):
    """Raised from a guarded ``receive``: the body broke a limit (``status`` 413 or 408, ``message``)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _Guard:
    """Pure ASGI middleware: the API key and the body limits, enforced before the app reads the body.

    * an ``/api/`` request (but :data:`_PUBLIC_API`) without the key is answered 401 from its
      headers; ``receive`` is never called, so not a byte of its body is read;
    * a body declared (Content-Length) longer than its limit is answered 413, unread;
    * the body is counted as it arrives, so one longer than its limit (chunked: nothing declared)
      is cut, and answered 413, as soon as the count passes the limit: at most the limit plus one
      ``receive`` message (uvicorn's are a few hundred KiB at most) is ever read;
    * a body not all there ``body_timeout_s`` after the first read is answered 408.

    These answers carry ``Connection: close``: the server then closes the connection instead of
    reading (and discarding) the rest of the body. The limit is the upload's (plus its multipart
    framing) on ``POST /api/references``, 256 KiB elsewhere. Not BaseHTTPMiddleware: that one hands
    the endpoint a request whose body it cannot bound.

    Args:
        app: the app behind.
        api_key: the key ``/api/`` requests need; None: no key.
        limits: the server's limits (``max_upload_bytes``, ``body_timeout_s``).
    """

    def __init__(self, app: ASGIApp, *, api_key: str | None, limits: ServeLimits) -> None:
        self.app = app
        self.api_key = api_key
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        path = scope["path"]
        if self.api_key is not None and path.startswith("/api/") and path not in _PUBLIC_API:
            problem = _key_problem(headers, self.api_key)
            if problem is not None:
                await self._refuse(scope, send, 401, problem, read=0, headers={"WWW-Authenticate": "Bearer"})
                return
        limit = self.limits.max_upload_bytes + _MULTIPART_OVERHEAD if path == "/api/references" else _MAX_JSON_BYTES
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await self._refuse(
                scope, send, 413, f"the request body is {int(declared)} bytes; the limit here is {limit}", read=0
            )
            return

        loop = asyncio.get_running_loop()
        received, deadline, body_done = 0, None, False
        refused: _BodyRefused | None = None
        started = False

        async def guarded_receive() -> Message:
            nonlocal received, deadline, body_done, refused
            if refused is not None:
                raise refused
            if body_done:  # after the body only a disconnect comes: wait for it as long as it takes
                return await receive()
            if deadline is None:
                deadline = loop.time() + self.limits.body_timeout_s
            try:
                message = await asyncio.wait_for(receive(), timeout=max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                refused = _BodyRefused(408, f"the request body did not arrive within {self.limits.body_timeout_s:g} s")
                raise refused from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                body_done = not message.get("more_body", False)
                if received > limit:
                    refused = _BodyRefused(413, f"the request body is larger than the limit of {limit} bytes here")
                    raise refused
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if refused is not None:  # whatever the app makes of the cut body, the client gets the refusal
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, guarded_receive, guarded_send)
        except Exception:
            if refused is None:
                raise
        if refused is not None and not started:
            await self._refuse(scope, send, refused.status, refused.message, read=received)

    @staticmethod
    async def _refuse(
        scope: Scope, send: Send, status: int, message: str, *, read: int, headers: Mapping[str, str] | None = None
    ) -> None:
        """Answer ``status`` and close; logged with the body bytes ``read`` (a trace of abuse, and
        the proof of the bound)."""
        log.info(
            "%s %s: %d after %d body bytes (%s)", scope["method"], _quote(scope["path"], 80), status, read, message
        )

        async def nothing() -> Message:  # the answer never reads the body
            return {"type": "http.disconnect"}

        await _error(status, message, {**(headers or {}), "Connection": "close"})(scope, nothing, send)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return _error(exc.status, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, _validation_message(list(exc.errors())))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = str(exc.detail)
        if exc.status_code in (404, 405):  # the router's own "Not Found": say which request
            message = (
                f"{message}: {request.method} {_quote(request.url.path, 80)} (the API is described at /openapi.json)"
            )
        return _error(exc.status_code, message, getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def bug(_request: Request, exc: Exception) -> JSONResponse:
        log.error("internal error: %s", first_line(exc), exc_info=exc)
        return _error(500, f"internal error ({type(exc).__name__}); see the server log")


async def _read_upload(request: Request, limits: ServeLimits) -> tuple[str, bytes]:
    """The multipart field ``file`` of ``request``, read into memory (its size bounded by :class:`_Guard`).

    Starlette's own form parsing spools files over 1 MiB to a temporary file; here the parser is
    told to keep up to the upload limit in memory, so an upload never touches the disk.
    """
    content_type = request.headers.get("content-type", "")
    if not content_type.lower().startswith("multipart/form-data"):
        raise ApiError(415, "send the clip as multipart/form-data with the field 'file' (e.g. curl -F file=@clip.wav)")
    limit = limits.max_upload_bytes + _MULTIPART_OVERHEAD
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)

    async def once() -> AsyncIterator[bytes]:
        yield bytes(body)

    parser = MultiPartParser(request.headers, once(), max_files=1, max_fields=8, max_part_size=64 * 1024)
    parser.spool_max_size = limit + 1  # keep the file in memory
    try:
        form = await parser.parse()
    except MultiPartException as exc:
        raise ApiError(422, f"the upload is not valid multipart/form-data ({exc.message})") from None
    except (KeyError, ValueError, UnicodeError) as exc:  # e.g. no boundary in the header
        raise ApiError(
            422, f"the upload is not valid multipart/form-data ({type(exc).__name__}: {first_line(exc, 80)})"
        ) from None
    try:
        upload = form.get("file")
        if upload is None:
            raise ApiError(422, "file: missing (send the clip in the multipart field 'file')")
        if isinstance(upload, str):
            raise ApiError(
                422, "file: got text, not a file (a path on the server is never read; send the clip's contents)"
            )
        data = await upload.read()
        name = "".join(c if c.isprintable() else "?" for c in Path(upload.filename or "upload").name[:80]) or "upload"
    finally:
        await form.close()
    if len(data) > limits.max_upload_bytes:
        raise ApiError(413, f"the upload is {len(data)} bytes; the limit is {limits.max_upload_bytes}")
    if not data:
        raise ApiError(422, f"file {_quote(name)} is empty")
    return name, data
