"""Serve a checkpoint over HTTP: a JSON/WAV API and a web page with style controls.

Examples::

    gst-tts serve --checkpoint demo_out/checkpoints/best.pt            # http://127.0.0.1:5002/
    curl -o hi.wav 'http://127.0.0.1:5002/api/tts?text=Hello%20there.'
    GST_TTS_API_KEY=secret gst-tts serve --checkpoint last.pt --host 0.0.0.0

The server listens on the loopback interface unless ``--host`` says otherwise; any other host
needs an API key (``--api-key`` or the ``GST_TTS_API_KEY`` environment variable, which unlike an
option does not show in the process list). Needs the optional extra: ``pip install gst-tts[serve]``.
``--vocoder auto`` (the default) speaks with the vocoder recorded beside the checkpoint (``make demo``
records its GTA-tuned one), else Griffin-Lim; the first log line and the page say which and why.
Where ``probe-tokens --save-dials`` wrote dial names beside the checkpoint (``best.dials.json``),
the page offers those dials by name ("higher pitch, slower"), raw token weights folded away.

Against hostile clients the app checks the key before reading a body, cuts bodies at their limit
and times them out (``--body-timeout``); see ``gst_tts/serve/limits.py``. What it cannot bound is a
client trickling its request *headers* (uvicorn has no header timeout): each such client holds one
connection (a file descriptor) until it gives up, while the server keeps answering others. On an
exposed host put a reverse proxy with header timeouts and connection limits in front.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import socket

from gst_tts.cli.args import add_decoding_arguments, add_model_arguments, decoding_options, load_synthesizer_described
from gst_tts.errors import GstTtsError
from gst_tts.inference.dial_names import dials_path, read_dials

log = logging.getLogger("gst_tts.serve")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p, vocoder=True)  # --vocoder: the one vocoder requests get, named by its kind in the API
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=5002, help="port (default 5002, as Coqui's tts-server)")
    p.add_argument(
        "--api-key",
        default=None,
        help="require this key (X-API-Key header) on the API; needed for a non-loopback --host "
        "(default: $GST_TTS_API_KEY, else none)",
    )
    g = p.add_argument_group("serving")
    g.add_argument(
        "--max-queue", type=int, default=32, help="requests waiting before the server answers 503 (default 32)"
    )
    g.add_argument(
        "--batch-window-ms",
        type=float,
        default=5.0,
        help="how long an idle server waits for more requests to batch with the first (default 5)",
    )
    g.add_argument("--max-text-chars", type=int, default=500, help="longest text accepted (default 500)")
    g.add_argument("--max-upload-mb", type=float, default=10.0, help="largest reference upload (default 10)")
    g.add_argument("--max-reference-seconds", type=float, default=30.0, help="longest reference clip (default 30)")
    g.add_argument(
        "--request-timeout", type=float, default=60.0, help="seconds a synthesis may take before a 408 (default 60)"
    )
    g.add_argument(
        "--body-timeout",
        type=float,
        default=60.0,
        help="seconds a request body may take to arrive before a 408 and a closed connection (default 60)",
    )
    add_decoding_arguments(p, batch_what="requests")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(args: argparse.Namespace) -> int:
    try:  # before anything slow: the extra is missing on a plain install
        import fastapi  # noqa: F401
        import python_multipart  # noqa: F401  (uploads)
        import uvicorn
    except ImportError as exc:
        missing = {"python_multipart": "python-multipart"}.get(exc.name or "", exc.name or "fastapi")
        raise GstTtsError(
            f"serving needs the optional extra ({missing} is missing): pip install 'gst-tts[serve]'"
        ) from None
    from gst_tts.serve.app import create_app
    from gst_tts.serve.batching import BatchingQueue
    from gst_tts.serve.limits import ServeLimits

    api_key = args.api_key if args.api_key is not None else (os.environ.get("GST_TTS_API_KEY") or None)
    if api_key is not None and not api_key.strip():
        raise GstTtsError("--api-key must not be empty")
    if not _is_loopback(args.host) and api_key is None:
        raise GstTtsError(
            f"--host {args.host} is reachable from other machines: give --api-key (or GST_TTS_API_KEY), "
            "or keep the default 127.0.0.1"
        )
    if not 0 <= args.port <= 65535:
        raise GstTtsError(f"--port must be in 0..65535, got {args.port}")
    if not args.batch_window_ms >= 0:
        raise GstTtsError(f"--batch-window-ms must be >= 0, got {args.batch_window_ms}")
    if args.max_queue < 1:
        raise GstTtsError(f"--max-queue must be at least 1, got {args.max_queue}")
    options = decoding_options(args)
    try:
        limits = ServeLimits(
            max_text_chars=args.max_text_chars,
            max_upload_bytes=int(args.max_upload_mb * 1024 * 1024),
            max_reference_s=args.max_reference_seconds,
            request_timeout_s=args.request_timeout,
            body_timeout_s=args.body_timeout,
        )
    except GstTtsError as exc:
        raise GstTtsError(f"serving limits: {exc}") from None
    synth, vocoder_line = load_synthesizer_described(args)
    name = getattr(synth.vocoder, "kind", "custom")  # griffin-lim, hifigan or spectral
    queue = BatchingQueue(
        synth,
        vocoders={name: synth.vocoder},
        max_batch=options["batch_size"],
        max_queue=args.max_queue,
        batch_window_s=args.batch_window_ms / 1000.0,
        decoding=options["decoding"],
        max_chunk_chars=options["max_chunk_chars"],
    )
    dials_file = dials_path(args.checkpoint)
    dials = read_dials(dials_file, n_heads=synth.n_heads, n_tokens=synth.n_tokens) if dials_file.is_file() else []
    if dials:
        log.info("dial names: %s (%d dials; the page offers them by name)", dials_file, len(dials))
    app = create_app(queue, limits=limits, api_key=api_key, vocoder_description=vocoder_line, dials=dials)
    sock = _bind(args.host, args.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    log.info(
        "serving %s on http://%s:%d/ (API schema at /openapi.json%s)",
        args.checkpoint,
        shown,
        port,
        "; API key required" if api_key else "",
    )
    server = uvicorn.Server(uvicorn.Config(app, log_level="info", access_log=False))
    server.run(sockets=[sock])
    return 0


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket, bound here so that a taken port or a foreign address is one line, not a uvicorn log."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)  # clients queue from now on, while uvicorn starts; the "serving on" line is true
    except OSError as exc:
        sock.close()
        raise GstTtsError(f"cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    return sock
