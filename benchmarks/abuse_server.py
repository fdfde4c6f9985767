"""``gst-tts serve`` against hostile clients: a real server on loopback, attacked, then checked.

Usage::

    python benchmarks/abuse_server.py [--flood-mb 400] [--concurrent 256] [--root DIR] [--legacy-server]

A random-weight ``conf/model/tiny.yaml`` checkpoint is served by ``python -m gst_tts.cli serve``
(started with an API key, in a process of its own so that its resident memory is its own) on a free
127.0.0.1 port, and attacked with raw sockets and ``http.client``:

* slow-loris clients: headers trickled a byte at a time, and (with the key) a body trickled;
* ``--concurrent`` synthesis requests at once (threads): each answer 200 or 503 (queue full);
* bodies past the limit: declared by Content-Length (with and without the key), and chunked
  (``Transfer-Encoding: chunked``, no length declared) with and without the key, one of them
  ``--flood-mb`` long: the client sends until the answer is readable or the server closes, and
  counts the bytes it got into the socket;
* malformed multipart, uploads that are not audio (random bytes, text named .wav, an MP3 header);
* texts at the length limit and one character past it;
* a client that closes its socket after the status line of a WAV answer.

Then ``/api/health`` must answer 200 and the process must be alive. Printed: a table of requests by
kind with the answers seen, the bytes each oversized body got in before the answer, and the
server's resident memory (``/proc/<pid>/status``: VmRSS after warm-up, VmHWM peak, VmRSS after).

``--root DIR`` serves the gst_tts package of another checkout (e.g. ``git worktree add
/tmp/serve_before HEAD~1``; add ``--legacy-server`` when that server predates ``--body-timeout``),
for a before/after comparison. ``tests/serve/test_abuse.py`` runs a smaller attack with this
module's pieces and asserts the bounds; this script only reports (exit 1 on a 5xx other than 503,
a dead server or a failed health check).
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from dataclasses import dataclass, field
import http.client
import io
import os
from pathlib import Path
import re
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
API_KEY = "abuse-test-key"
# The server's limits under attack: small enough that the bounded test stays cheap.
SERVER_OPTIONS = [
    "--max-seconds",
    "0.7",
    "--griffin-lim-iters",
    "4",
    "--max-queue",
    "16",
    "--max-text-chars",
    "200",
    "--max-upload-mb",
    "1",
]
BODY_TIMEOUT_S = 3.0  # --body-timeout: a trickled body is answered 408 after this
MAX_TEXT_CHARS = 200
MAX_UPLOAD_BYTES = 1024 * 1024
MAX_JSON_BYTES = 256 * 1024  # serve/limits.py's _MAX_JSON_BYTES
MULTIPART_OVERHEAD = 64 * 1024  # serve/limits.py's MULTIPART_OVERHEAD


# --------------------------------------------------------------------------- the server


class Server:
    """``gst-tts serve`` of ``checkpoint`` from the checkout ``root``, in a subprocess on a free loopback port.

    Args:
        checkpoint: the acoustic checkpoint.
        root: the checkout whose ``gst_tts`` runs (on PYTHONPATH, ahead of the installed one).
        options: more ``gst-tts serve`` options.
    """

    def __init__(self, checkpoint: Path, *, root: Path = ROOT, options: list[str] = ()) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": str(root),
            "GST_TTS_API_KEY": API_KEY,
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
        }
        self.workdir = tempfile.TemporaryDirectory()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gst_tts.cli",
                "serve",
                "--checkpoint",
                str(checkpoint),
                "--port",
                "0",
                "--device",
                "cpu",
                "--threads",
                "1",
                *options,
            ],
            cwd=self.workdir.name,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.log: list[str] = []
        deadline = time.monotonic() + 120
        while True:
            line = self.proc.stdout.readline()
            if not line or time.monotonic() > deadline:
                self.close()
                raise RuntimeError("the server did not start:\n" + "".join(self.log))
            self.log.append(line)
            match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
            if match:
                self.port = int(match.group(1))
                break
        # Keep reading its output so that a full pipe never blocks it.
        threading.Thread(target=lambda: self.log.extend(self.proc.stdout), daemon=True).start()

    def memory_mb(self) -> dict[str, float]:
        """``{"rss": VmRSS, "hwm": VmHWM}`` of the server process, in MiB."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return {
            key: int(re.search(rf"^{name}:\s+(\d+) kB", status, re.M).group(1)) / 1024
            for key, name in (("rss", "VmRSS"), ("hwm", "VmHWM"))
        }

    def body_bytes_read(self, since: int, *, status: int = 413, wait_s: float = 2.0) -> list[int]:
        """Body bytes the server says it had read when it cut a body (its log's "413 after N body bytes"
        lines, or ``status``'s), for the cuts after the first ``since``; waits up to ``wait_s`` for one to show."""
        deadline = time.monotonic() + wait_s
        while True:
            pattern = rf": {status} after (\d+) body bytes"
            counts = [int(m.group(1)) for line in list(self.log) for m in [re.search(pattern, line)] if m]
            if len(counts) > since or time.monotonic() > deadline:
                return counts[since:]
            time.sleep(0.05)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.workdir.cleanup()


# --------------------------------------------------------------------------- clients


@dataclass
class Tally:
    """Answers seen, by request kind: an HTTP status, or a word for no answer (``"reset"``, ``"closed"``,
    ``"held"``: the server still had the connection open when the client stopped)."""

    seen: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    sent_bytes: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    read_bytes: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))  # what the server says it read
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, kind: str, outcome: int | str, sent: int | None = None, read: list[int] = ()) -> None:
        with self._lock:
            self.seen[kind][outcome] += 1
            if sent is not None:
                self.sent_bytes[kind].append(sent)
            self.read_bytes[kind].extend(read)

    def statuses(self) -> set[int]:
        return {o for counts in self.seen.values() for o in counts if isinstance(o, int)}


def request(
    port: int,
    method: str,
    path: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    key: bool = True,
    timeout: float = 120.0,
) -> tuple[int | str, bytes]:
    """One request on a fresh connection → (status, body), or ("reset" | "closed", b"") when the server closed."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = dict(headers or {})
    if key:
        headers["X-API-Key"] = API_KEY
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    except (ConnectionResetError, BrokenPipeError):
        return "reset", b""
    except http.client.RemoteDisconnected:
        return "closed", b""
    finally:
        conn.close()


def _read_status(sock: socket.socket, timeout: float) -> int | str:
    """The status of the answer waiting on ``sock`` (``"reset"`` or ``"closed"`` when there is none)."""
    sock.setblocking(True)
    sock.settimeout(timeout)
    data = b""
    try:
        while b"\r\n" not in data:
            piece = sock.recv(4096)
            if not piece:
                break
            data += piece
    except (ConnectionResetError, BrokenPipeError):
        pass
    except socket.timeout:
        return "no answer"
    match = re.match(rb"HTTP/1\.[01] (\d{3}) ", data)
    return int(match.group(1)) if match else ("closed" if not data else "garbled")


def push_body(
    port: int,
    path: str,
    *,
    total: int,
    key: bool,
    chunked: bool,
    declared: int | None = None,
    content_type: str = "application/json",
    piece: int = 64 * 1024,
    timeout: float = 30.0,
) -> tuple[int | str, int]:
    """Send a body of ``total`` bytes (chunked, or with Content-Length ``declared``, default ``total``)
    until the server's answer is readable, the server closes, or all is sent.

    Returns (the answer's status, body bytes the socket took before that: whatever the server read
    plus what the two socket buffers hold). The client's send buffer is kept at 64 KiB so the count
    says little more than what the server took.
    """
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
    length = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {total if declared is None else declared}"
    auth = f"X-API-Key: {API_KEY}\r\n" if key else ""
    sock.sendall(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n{auth}{length}\r\n\r\n".encode()
    )
    block = (f"{piece:x}\r\n".encode() + b"x" * piece + b"\r\n") if chunked else b"x" * piece
    stream_end = -(-total // piece) * len(block)  # whole pieces
    sock.setblocking(False)
    sent = 0
    try:
        while sent < stream_end:
            readable, writable, _ = select.select([sock], [sock], [], timeout)
            if readable or not writable:  # the answer came, or the server stopped reading without one
                break
            start = sent % len(block)
            try:
                sent += sock.send(block[start : start + stream_end - sent])
            except (BrokenPipeError, ConnectionResetError):
                break
            except BlockingIOError:
                continue
        if chunked and sent == stream_end:  # all of it went in: end it, for the answer
            sock.setblocking(True)
            sock.sendall(b"0\r\n\r\n")
        return _read_status(sock, timeout), sent
    finally:
        sock.close()


def trickle(port: int, *, at_once: bytes, slowly: bytes, every_s: float, stop: threading.Event) -> int | str:
    """A slow-loris client: ``at_once``, then ``slowly`` one byte every ``every_s``, until ``stop`` or the
    server answers or closes. Returns the answer's status, or ``"held"`` when the client stopped first."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        sock.sendall(at_once)
        for byte in slowly:
            if select.select([sock], [], [], 0)[0]:  # the server answered (or closed) before all was sent
                return _read_status(sock, 5)
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                return _read_status(sock, 5)
            if stop.wait(every_s):
                return "held"
        return _read_status(sock, 30)
    finally:
        sock.close()


def wav_bytes(seconds: float, rate: int = 22050) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    buffer = io.BytesIO()
    sf.write(buffer, (0.3 * np.sin(2 * np.pi * 180.0 * t)).astype(np.float32), rate, format="WAV", subtype="PCM_16")
    return buffer.getvalue()


def multipart(parts: list[tuple[str, str | None, bytes]], boundary: str = "abuse0boundary") -> tuple[bytes, str]:
    """A multipart/form-data body of (field, file name or None, data) parts → (body, content type)."""
    out = b""
    for name, filename, data in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        out += (
            f"--{boundary}\r\nContent-Disposition: {disposition}\r\nContent-Type: application/octet-stream\r\n\r\n"
        ).encode()
        out += data + b"\r\n"
    return out + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


# --------------------------------------------------------------------------- the attack


@dataclass
class AttackSize:
    """How hard to attack: ``slow_clients`` slow-loris sockets, ``concurrent`` synthesis requests at
    once, oversized bodies of ``oversize_bytes`` and one chunked unauthenticated body of ``flood_bytes``."""

    slow_clients: int = 8
    concurrent: int = 64
    oversize_bytes: int = 16 * 1024 * 1024
    flood_bytes: int = 32 * 1024 * 1024
    body_timeout: bool = True  # the server has --body-timeout (a trickled body is answered 408)


def attack(server: Server, size: AttackSize) -> tuple[Tally, dict[str, float]]:
    """Attack ``server``; returns the tally and the memory figures (MiB): rss_before (after warm-up),
    hwm (peak), rss_after."""
    tally = Tally()
    port = server.port
    text = "Hello there, this is a test."
    synth_body = ('{"text": "%s"}' % text).encode()
    json_headers = {"Content-Type": "application/json"}
    # Warm-up: the model, the vocoder and the reference path have run once before memory is read.
    for kind, (method, path, body, headers) in {
        "warm-up synthesis": ("POST", "/api/synthesize", synth_body, json_headers),
        "warm-up upload": ("POST", "/api/references", *_upload(wav_bytes(1.0), "tone.wav")),
    }.items():
        tally.add(kind, request(port, method, path, body=body, headers=headers)[0])
    memory = {"rss_before": server.memory_mb()["rss"]}

    stop = threading.Event()
    slow_clients = []  # (kind, sent at once, sent a byte at a time)
    for k in range(size.slow_clients):
        slow_clients.append(
            (
                "slow-loris headers",
                b"",
                b"POST /api/synthesize HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 64 + b"\r\n\r\n",
            )
        )
        if size.body_timeout:  # the head at once, then the body: answered 408 after the body timeout
            head = (
                f"POST /api/synthesize HTTP/1.1\r\nHost: x\r\nX-API-Key: {API_KEY}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(synth_body)}\r\n\r\n"
            ).encode()
            slow_clients.append(("slow-loris body", head, synth_body))
    slow = [
        threading.Thread(
            target=lambda kind=kind, head=head, body=body: tally.add(
                kind, trickle(port, at_once=head, slowly=body, every_s=0.2, stop=stop)
            )
        )
        for kind, head, body in slow_clients
    ]
    for t in slow:
        t.start()

    # Concurrent synthesis, while the slow clients hold their connections.
    barrier = threading.Barrier(size.concurrent)

    def synthesize(k: int) -> None:
        barrier.wait()
        tally.add(
            "concurrent synthesis", request(port, "POST", "/api/synthesize", body=synth_body, headers=json_headers)[0]
        )

    workers = [threading.Thread(target=synthesize, args=(k,)) for k in range(size.concurrent)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()

    # Oversized bodies: declared, chunked, and longer than declared; with and without the key.
    def push(kind: str, path: str, **how) -> None:
        cuts = {status: len(server.body_bytes_read(0, status=status, wait_s=0)) for status in (401, 413)}
        status, sent = push_body(port, path, **how)
        read = server.body_bytes_read(cuts[status], status=status) if status in cuts else []
        tally.add(kind, status, sent, read)

    for key in (False, True):
        who = "with key" if key else "no key"
        for path, content_type in (
            ("/api/synthesize", "application/json"),
            ("/api/references", "multipart/form-data; boundary=b"),
        ):
            for chunked in (False, True):
                push(
                    f"{'chunked' if chunked else 'declared'} {size.oversize_bytes >> 20} MiB {path} ({who})",
                    path,
                    total=size.oversize_bytes,
                    key=key,
                    chunked=chunked,
                    content_type=content_type,
                )
        push(
            f"body longer than declared ({who})",
            "/api/synthesize",
            total=MAX_JSON_BYTES * 4,
            declared=64,
            key=key,
            chunked=False,
        )
    push(
        f"chunked {size.flood_bytes >> 20} MiB flood (no key)",
        "/api/synthesize",
        total=size.flood_bytes,
        key=False,
        chunked=True,
    )

    # Malformed multipart and uploads that are not audio.
    rng = np.random.default_rng(0)
    good_part = [("file", "a.wav", wav_bytes(1.0))]
    for kind, (body, content_type) in {
        "multipart without boundary": (multipart(good_part)[0], "multipart/form-data"),
        "multipart wrong boundary": (multipart(good_part, "one")[0], "multipart/form-data; boundary=two"),
        "multipart truncated": (multipart(good_part)[0][:400], multipart(good_part)[1]),
        "multipart no file field": multipart([("other", None, b"x")]),
        "multipart 200 fields": multipart([(f"f{k}", None, b"x") for k in range(200)]),
        "multipart not multipart": (b'{"file": "/etc/passwd"}', "application/json"),
        "upload random bytes": multipart([("file", "noise.wav", rng.bytes(50_000))]),
        "upload text named .wav": multipart([("file", "notes.wav", b"just some text, not audio\n" * 100)]),
        "upload mp3 header": multipart(
            [("file", "song.mp3", b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x64" + rng.bytes(4000))]
        ),
        "upload wav header, no data": multipart([("file", "empty.wav", wav_bytes(1.0)[:44])]),
    }.items():
        tally.add(kind, request(port, "POST", "/api/references", body=body, headers={"Content-Type": content_type})[0])

    # Texts at the limit and one past it; a client gone mid-answer.
    for kind, n in (("text at the limit", MAX_TEXT_CHARS), ("text one past the limit", MAX_TEXT_CHARS + 1)):
        body = ('{"text": "%s"}' % ("ab " * n)[:n]).encode()
        tally.add(kind, request(port, "POST", "/api/synthesize", body=body, headers=json_headers)[0])
    tally.add("closed after the status line", _close_after_status(port, synth_body))

    for t, (kind, _, _) in zip(slow, slow_clients):  # a trickled body ends by itself: 408 after the body timeout
        if kind == "slow-loris body":
            t.join(BODY_TIMEOUT_S + 30)
    stop.set()
    for t in slow:
        t.join()
    tally.add("health after the attack", request(port, "GET", "/api/health", key=False)[0])
    tally.add(
        "synthesis after the attack", request(port, "POST", "/api/synthesize", body=synth_body, headers=json_headers)[0]
    )
    peak = server.memory_mb()
    memory.update(hwm=peak["hwm"], rss_after=peak["rss"])
    return tally, memory


def _upload(data: bytes, name: str) -> tuple[bytes, dict[str, str]]:
    body, content_type = multipart([("file", name, data)])
    return body, {"Content-Type": content_type}


def _close_after_status(port: int, synth_body: bytes) -> int | str:
    sock = socket.create_connection(("127.0.0.1", port), timeout=120)
    try:
        sock.sendall(
            f"POST /api/synthesize HTTP/1.1\r\nHost: x\r\nX-API-Key: {API_KEY}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(synth_body)}\r\n\r\n".encode()
            + synth_body
        )
        line = sock.makefile("rb").readline()
        match = re.match(rb"HTTP/1\.[01] (\d{3}) ", line)
        return int(match.group(1)) if match else "closed"
    finally:
        sock.close()


def report(tally: Tally, memory: dict[str, float]) -> str:
    """The table: requests by kind, the answers seen, body bytes the client got into its socket before
    the answer and those the server logged as read when it cut the body (largest of each), memory."""
    lines = [
        f"{'request kind':<46} | {'n':>3} | {'answers seen':<22} | {'client sent before answer':>25} | "
        f"{'server read':>11}"
    ]
    for kind, counts in tally.seen.items():
        answers = ", ".join(f"{o}x{c}" for o, c in sorted(counts.items(), key=lambda item: str(item[0])))
        sent, read = tally.sent_bytes.get(kind), tally.read_bytes.get(kind)
        lines.append(
            f"{kind:<46} | {sum(counts.values()):>3} | {answers:<22} | {f'{max(sent):,}' if sent else '':>25} | "
            f"{f'{max(read):,}' if read else '':>11}"
        )
    lines.append(f"statuses seen: {sorted(tally.statuses())}")
    lines.append(
        f"server memory (MiB): VmRSS before {memory['rss_before']:.0f}, VmHWM peak {memory['hwm']:.0f}, "
        f"VmRSS after {memory['rss_after']:.0f}; peak - before = {memory['hwm'] - memory['rss_before']:.0f}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--flood-mb", type=int, default=400, help="the chunked unauthenticated body, MiB (default 400)")
    p.add_argument("--concurrent", type=int, default=256, help="synthesis requests at once (default 256)")
    p.add_argument("--slow-clients", type=int, default=64, help="slow-loris clients of each kind (default 64)")
    p.add_argument("--root", type=Path, default=ROOT, help="the checkout whose server runs (default this one)")
    p.add_argument("--legacy-server", action="store_true", help="the server predates --body-timeout")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from common import random_tiny_checkpoint

    size = AttackSize(
        slow_clients=args.slow_clients,
        concurrent=args.concurrent,
        flood_bytes=args.flood_mb << 20,
        oversize_bytes=64 << 20,
        body_timeout=not args.legacy_server,
    )
    options = SERVER_OPTIONS + ([] if args.legacy_server else ["--body-timeout", str(BODY_TIMEOUT_S)])
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(random_tiny_checkpoint(Path(tmp)), root=args.root, options=options)
        try:
            started = time.monotonic()
            tally, memory = attack(server, size)
            alive = server.alive()
        finally:
            server.close()
    print(
        f"server: {args.root} ({'legacy' if args.legacy_server else 'current'} options), "
        f"{time.monotonic() - started:.0f} s"
    )
    print(report(tally, memory))
    bad = sorted(s for s in tally.statuses() if s >= 500 and s != 503)
    health = tally.seen["health after the attack"]
    print(
        f"abuse_5xx={len(bad)}  abuse_alive={int(alive)}  abuse_health_ok={int(health.get(200, 0) == 1)}  "
        f"abuse_peak_rss_growth_mb={memory['hwm'] - memory['rss_before']:.0f}"
    )
    return 1 if bad or not alive or health.get(200, 0) != 1 else 0


if __name__ == "__main__":
    raise SystemExit(main())
