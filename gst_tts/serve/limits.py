"""What a request may send, and the ASGI guard that enforces it before the app reads a body.

Hostile clients: :class:`Guard`, a pure ASGI middleware in front of everything, checks the API
key from the headers before a byte of the body is read (401), counts the body as it arrives
whatever Content-Length says (413 past the limit: a chunked body is cut there), and answers 408
when a body trickles in slower than ``ServeLimits.body_timeout_s`` allows; those answers close the
connection, so the rest of such a body is never read.
"""

import asyncio
from dataclasses import dataclass, fields
import hmac
import logging
import math
from typing import Mapping

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gst_tts.errors import GstTtsError
from gst_tts.serve.errors import error_response, quote

log = logging.getLogger(__name__)

# Audio any client may plausibly send; a header claiming more is a broken or hostile file, and the
# decoder would allocate its claimed length up front.
MAX_UPLOAD_RATE = 192_000
MAX_UPLOAD_CHANNELS = 8
# Room for the multipart framing around the file itself.
MULTIPART_OVERHEAD = 64 * 1024
# A synthesis request is a text and a few numbers.
_MAX_JSON_BYTES = 256 * 1024
# The /api/ endpoints a client may call without the key.
_PUBLIC_API = frozenset({"/api/health"})


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


class Guard:
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
        limit = self.limits.max_upload_bytes + MULTIPART_OVERHEAD if path == "/api/references" else _MAX_JSON_BYTES
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
        log.info("%s %s: %d after %d body bytes (%s)", scope["method"], quote(scope["path"], 80), status, read, message)

        async def nothing() -> Message:  # the answer never reads the body
            return {"type": "http.disconnect"}

        await error_response(status, message, {**(headers or {}), "Connection": "close"})(scope, nothing, send)
