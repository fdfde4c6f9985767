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
bug gives a 5xx (and a full queue: 503 with ``Retry-After``). Each operation's schema lists every
status it can answer (:func:`_errors`), and its bounds are those the server checks: data the
schema allows is data the server takes, but for state (an id not kept) and what no schema can say
(a file that is not audio, a word whose phonemes the model lacks). Uploads are read into memory, at
most ``ServeLimits.max_upload_bytes``, and decoded from there: nothing a request sends is
written to disk. References and recent syntheses are kept in memory, the oldest dropped first.

Hostile clients are held off before the app runs (:class:`~gst_tts.serve.limits.Guard`: the API
key, each body's size and time). The routes here parse and answer; the work is
:class:`~gst_tts.serve.service.Service`'s, the body's model is in :mod:`gst_tts.serve.models`.

The output has the model's own tempo and F0 range unless a request asks for a reference's
(``tempo``, ``f0_range``: :data:`~gst_tts.serve.models.REFERENCE`): that is signal processing
after the model (the mel retimed, the vocoder's F0 track stretched), never done to a stream.

This module does not use ``from __future__ import annotations``: FastAPI reads the endpoint
annotations at run time.
"""

import contextlib
import logging
from pathlib import Path
from typing import Annotated, Any, AsyncIterator, Literal, Optional, Sequence

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from fastapi.security import APIKeyHeader
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.formparsers import MultiPartException, MultiPartParser

from gst_tts.errors import GstTtsError, first_line
from gst_tts.inference.dial_names import NamedDial
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.serve.batching import BatchingQueue
from gst_tts.serve.errors import ApiError, error_response, quote
from gst_tts.serve.limits import MULTIPART_OVERHEAD, Guard, ServeLimits
from gst_tts.serve.models import (
    DECODED,
    ID_PATTERN,
    TEXT_DESCRIPTION,
    schema_facts,
    style_wav_adapter,
    style_wav_pattern,
    style_wav_weights,
    synthesize_request_model,
    validation_message,
)
from gst_tts.serve.service import DECODED_SOURCE, Service, copy_headers

__all__ = ["create_app", "STATIC_DIR"]

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"

_STREAM_KEEPS = (
    "streams keep the model's tempo and F0 range (a retiming or an F0 stretch needs the whole output): "
    "leave out tempo and f0_range, or ask without stream=true"
)


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
    service = Service(queue.synthesizer, queue, limits, vocoder_description=vocoder_description, dials=dials)

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

    app.add_middleware(Guard, api_key=api_key, limits=limits)
    # The key is checked by Guard, before the body is read; the dependency documents it in the schema.
    key_header = APIKeyHeader(
        name="X-API-Key", auto_error=False, description="needed when the server runs with --api-key"
    )
    auth = [Depends(key_header)]
    facts = schema_facts(queue.synthesizer, queue.vocoders)
    SynthesizeRequest = synthesize_request_model(limits, facts)
    style_wav_type = style_wav_adapter(limits)
    # GET /api/tts's text may come in a header instead (Coqui's clients): the parameter is optional
    # to the server, but the schema asks for it, since without a header it is needed.
    tts_text = {
        "name": "text",
        "in": "query",
        "required": True,
        "description": f"{TEXT_DESCRIPTION}. Coqui's clients may send it in a header 'text' instead",
        "schema": {
            "type": "string",
            "minLength": 1,
            "maxLength": limits.max_text_chars,
            **({"pattern": facts.text_pattern} if facts.text_pattern else {}),
        },
    }

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
                "links": _SYNTHESIS_LINKS,
            },
            **_errors(401, 408, 413, 422, 503),
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
                headers={
                    "Cache-Control": "no-store",
                    "X-Stream": "true",
                    **copy_headers(DECODED_SOURCE, DECODED_SOURCE),
                },
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
        if format == "json":  # the id in a header too, as with WAV: the schema's links follow it
            return JSONResponse(service.summary(syn_id, entry), headers={"X-Synthesis-Id": syn_id})
        return Response(entry.wav, media_type="audio/wav", headers=service.headers(syn_id, entry))

    @app.get(
        "/api/tts",
        dependencies=auth,
        tags=["synthesis"],
        response_class=Response,
        responses={200: {"content": {"audio/wav": {}}}, **_errors(401, 408, 413, 422, 503)},
        openapi_extra={"parameters": [tts_text]},
    )
    async def tts(
        request: Request,
        text: Annotated[Optional[str], Query(max_length=limits.max_text_chars, include_in_schema=False)] = None,
        speaker_id: Annotated[str, Query(max_length=200)] = "",
        style_wav: Annotated[
            str,
            Query(
                max_length=2000,
                description='JSON token weights, {"0": 0.3, "1:3": -0.2}, as style_weights of POST /api/synthesize',
                json_schema_extra={"pattern": style_wav_pattern(limits, facts)},
            ),
        ] = "",
        language_id: Annotated[str, Query(max_length=200)] = "",
    ) -> Response:
        """Coqui ``tts-server``'s endpoint: ``GET /api/tts?text=…`` → WAV in the neutral style.

        ``speaker_id`` and ``language_id`` are accepted and ignored (one speaker, one language).
        ``style_wav`` is, as in Coqui, either JSON token weights, ``{"0": 0.3, "3": -0.2}`` (token,
        or ``"head:token"``, → weight), spoken as ``style_weights`` of ``POST /api/synthesize``
        with the same checks, or a file on the server, which this server never reads: upload the
        clip to ``POST /api/references`` and use ``POST /api/synthesize`` with its id.
        """
        style_weights = style_wav_weights(style_wav, style_wav_type)
        if text is None:  # Coqui also takes the text from a header
            text = request.headers.get("text")
        if text is None:
            raise ApiError(422, "text: missing (GET /api/tts?text=...)")
        if len(text) > limits.max_text_chars:
            raise ApiError(422, f"text is {len(text)} characters; the limit is {limits.max_text_chars}")
        syn_id, entry = await service.synthesize(text=text, style_weights=style_weights, weights_field="style_wav")
        return Response(entry.wav, media_type="audio/wav", headers=service.headers(syn_id, entry))

    @app.get("/api/syntheses/{syn_id}", dependencies=auth, tags=["synthesis"], responses=_errors(401, 404, 413, 422))
    async def synthesis_summary(syn_id: Annotated[str, _path_id()]) -> dict[str, Any]:
        """The JSON summary of a recent synthesis (the same as ``POST /api/synthesize?format=json``)."""
        return service.summary(syn_id, service.synthesis(syn_id))

    @app.get(
        "/api/syntheses/{syn_id}/audio.wav",
        dependencies=auth,
        tags=["synthesis"],
        response_class=Response,
        responses={200: {"content": {"audio/wav": {}}}, **_errors(401, 404, 413, 422)},
    )
    async def synthesis_audio(syn_id: Annotated[str, _path_id()]) -> Response:
        entry = service.synthesis(syn_id)
        return Response(entry.wav, media_type="audio/wav", headers=service.headers(syn_id, entry))

    @app.get(
        "/api/syntheses/{syn_id}/alignment.png",
        dependencies=auth,
        tags=["synthesis"],
        response_class=Response,
        responses={200: {"content": {"image/png": {}}}, **_errors(401, 404, 413, 422)},
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
        responses=_errors(401, 408, 413, 415, 422, 503),
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "multipart/form-data": {
                        "schema": {
                            "type": "object",
                            "required": ["file"],
                            "additionalProperties": False,  # a few more fields are read, and refused past 8
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

    @app.get("/api/references", dependencies=auth, tags=["references"], responses=_errors(401, 413))
    async def list_references() -> list[dict[str, Any]]:
        """The references kept, oldest first (the oldest is dropped beyond the server's limit)."""
        return [ref.to_dict(ref_id) for ref_id, ref in service.references.values()]

    # ------------------------------------------------------------------ about

    @app.get("/api/model", dependencies=auth, tags=["about"], responses=_errors(401, 413))
    async def model_info() -> dict[str, Any]:
        """Sample rate, style tokens and heads, the text frontend, the vocoders and the limits."""
        return service.model_info()

    @app.get("/api/health", tags=["about"], responses=_errors(413))
    async def health() -> dict[str, Any]:
        """Liveness and the queue's state (no key needed)."""
        return {"status": "ok", "queue": queue.stats()}

    # ------------------------------------------------------------------ the page

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


# ---------------------------------------------------------------- HTTP plumbing

_ERROR_BODY = {
    "application/json": {
        "schema": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}
    }
}
# Every refusal, and who gives it: the guard (401, 413, a body's 408) before the app, the app after.
_ERROR_ANSWERS: dict[int, dict[str, Any]] = {
    401: {
        "description": "missing or wrong API key (a server run with --api-key)",
        "headers": {"WWW-Authenticate": {"schema": {"type": "string"}}},
    },
    404: {"description": "not kept (only the most recent syntheses are)"},
    408: {"description": "the body arrived slower than --body-timeout, or the work took longer than --request-timeout"},
    413: {
        "description": "the request body is over its limit (the upload's plus its framing on POST /api/references, "
        "256 KiB elsewhere), or the upload is over --max-upload-mb"
    },
    415: {"description": "not multipart/form-data"},
    422: {"description": "bad input, named (a body that is not JSON included)"},
    503: {
        "description": "the queue is full, or the server is shutting down (see Retry-After)",
        "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "seconds to wait"}},
    },
}


# A whole synthesis (not a stream) is kept: its id leads to its summary, audio and plot.
_SYNTHESIS_LINKS = {
    name: {
        "operationRef": f"#/paths/~1api~1syntheses~1{{syn_id}}{tail}/get",
        "parameters": {"syn_id": "$response.header.X-Synthesis-Id"},
    }
    for name, tail in (("summary", ""), ("audio", "~1audio.wav"), ("alignment", "~1alignment.png"))
}

# What FastAPI answers 400 (not its 422) when a JSON body cannot be decoded at all.
_BODY_NOT_PARSED = "There was an error parsing the body"


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The schema's answers ``codes``, each ``{"error": ...}`` (the statuses an operation can answer)."""
    return {code: {**_ERROR_ANSWERS[code], "content": _ERROR_BODY} for code in codes}


def _path_id() -> Any:
    from fastapi import Path as PathParam

    # The pattern is the schema's (ids the server hands out); the server answers any other id 404.
    return PathParam(max_length=64, json_schema_extra={"pattern": ID_PATTERN})


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("gst-tts")
    except Exception:  # running from a checkout that is not installed
        return "0"


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, validation_message(list(exc.errors())))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = str(exc.detail)
        if exc.status_code == 400:  # bad input, which the schema lists as 422 everywhere
            if message == _BODY_NOT_PARSED and exc.__cause__ is not None:  # e.g. a body that is not UTF-8
                message = f"the body is not valid JSON ({first_line(exc.__cause__, 100)})"
            return error_response(422, message)
        if exc.status_code in (404, 405):  # the router's own "Not Found": say which request
            message = (
                f"{message}: {request.method} {quote(request.url.path, 80)} (the API is described at /openapi.json)"
            )
        return error_response(exc.status_code, message, getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def bug(_request: Request, exc: Exception) -> JSONResponse:
        log.error("internal error: %s", first_line(exc), exc_info=exc)
        return error_response(500, f"internal error ({type(exc).__name__}); see the server log")


async def _read_upload(request: Request, limits: ServeLimits) -> tuple[str, bytes]:
    """The multipart field ``file`` of ``request``, read into memory (its size bounded by :class:`Guard`).

    Starlette's own form parsing spools files over 1 MiB to a temporary file; here the parser is
    told to keep up to the upload limit in memory, so an upload never touches the disk.
    """
    content_type = request.headers.get("content-type", "")
    if not content_type.lower().startswith("multipart/form-data"):
        raise ApiError(415, "send the clip as multipart/form-data with the field 'file' (e.g. curl -F file=@clip.wav)")
    limit = limits.max_upload_bytes + MULTIPART_OVERHEAD
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
        raise ApiError(422, f"file {quote(name)} is empty")
    return name, data
