"""``gst-tts serve`` under load: N concurrent clients on loopback, batched vs one-at-a-time serving.

Usage::

    python benchmarks/bench_serve.py [--checkpoint demo_out/checkpoints/last.pt] [--clients 8] [--requests 4]

Each mode starts a real server (``python -m gst_tts.cli serve --port 0``) in its own process:
``batched`` with ``--batch-size`` = the number of clients, ``one-at-a-time`` with ``--batch-size 1``.
N client threads then each send ``--requests`` ``POST /api/synthesize`` one after the other (a
closed loop: a client sends its next request when the last one is answered), every request with
its own style (token weights that differ per client), so a batch always mixes styles. Before the
timed round, one untimed warm-up round. The modes alternate which goes first over ``--runs``
rounds; medians are reported.

Reported per mode: requests per second, p50 / p95 latency (seconds from sending a request to
having its whole WAV), errors (any answer but 200: must be 0), mean requests per batch (from
``/api/health``). The vocoder (Griffin-Lim) runs per request in both modes: batching speeds up the
model, not the vocoder.

Without the checkpoint, a random-weight model of ``conf/model/tiny.yaml`` is saved (as
``bench_batched_synthesis.py`` does); it never emits its stop token, so ``--max-frames-per-symbol``
(default 6, about LJSpeech's speaking rate) sets every sentence's length, the same in both modes.

Prints a table, then ``serve_rps_batched=X``, ``serve_rps_one_at_a_time=X``,
``serve_batched_speedup=X``, ``serve_errors=N``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import httpx2 as httpx  # Starlette's test client's HTTP library (httpx's successor), from the dev extra

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


from common import SENTENCES, random_tiny_checkpoint  # noqa: E402  (benchmarks/ is on the path)


class Server:
    """``gst-tts serve`` in a subprocess on a free loopback port."""

    def __init__(self, checkpoint: Path, *, batch_size: int, threads: int, extra: list[str]) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
        env.pop("GST_TTS_API_KEY", None)
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
                "--batch-size",
                str(batch_size),
                "--max-queue",
                "256",
                *extra,
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        seen = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("the server did not start:\n" + "".join(seen))
            seen.append(line)
            match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
            if match:
                self.url = f"http://127.0.0.1:{match.group(1)}"
                break
        # Keep reading its output so a full pipe never blocks it.
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)


def load(url: str, *, clients: int, requests: int, n_tokens: int, round_no: int) -> dict:
    """N closed-loop clients; returns wall time, latencies and errors."""
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(clients + 1)

    def client(c: int) -> None:
        with httpx.Client(base_url=url, timeout=300) as http:
            barrier.wait()
            for k in range(requests):
                text = SENTENCES[(c * requests + k + round_no) % len(SENTENCES)]
                weights = {str(t): round(0.5 * ((c + t) % 3) - 0.2, 2) for t in range(n_tokens)}
                started = time.perf_counter()
                try:
                    r = http.post("/api/synthesize", json={"text": text, "style_weights": weights})
                    ok = r.status_code == 200 and r.headers.get("content-type") == "audio/wav"
                    problem = None if ok else f"{r.status_code}: {r.text[:120]}"
                except httpx.HTTPError as exc:
                    problem = f"{type(exc).__name__}: {exc}"
                elapsed = time.perf_counter() - started
                with lock:
                    latencies.append(elapsed)
                    if problem:
                        errors.append(problem)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    return {"wall": wall, "latencies": latencies, "errors": errors}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint", type=Path, default=ROOT / "demo_out" / "checkpoints" / "last.pt")
    p.add_argument("--clients", type=int, default=8, help="concurrent clients (and the batched server's --batch-size)")
    p.add_argument("--requests", type=int, default=4, help="requests per client per round")
    p.add_argument("--runs", type=int, default=2, help="timed rounds per mode (median reported)")
    p.add_argument("--threads", type=int, default=2, help="the server's torch threads")
    p.add_argument("--griffin-lim-iters", type=int, default=32)
    p.add_argument(
        "--max-frames-per-symbol",
        type=float,
        default=6.0,
        help="length bound per symbol (sets the length of a random model's sentences; default 6)",
    )
    args = p.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        checkpoint = args.checkpoint
        if not checkpoint.is_file():
            print(
                f"{checkpoint} not found: using a random-weight conf/model/tiny.yaml model (runs to its length bound)"
            )
            checkpoint = random_tiny_checkpoint(Path(tmp))
        extra = [
            "--griffin-lim-iters",
            str(args.griffin_lim_iters),
            "--max-frames-per-symbol",
            str(args.max_frames_per_symbol),
        ]
        modes = {"batched": args.clients, "one-at-a-time": 1}
        results: dict[str, list[dict]] = {m: [] for m in modes}
        batches: dict[str, list[float]] = {m: [] for m in modes}
        busy: dict[str, list[float]] = {m: [] for m in modes}  # worker's synthesis time / wall time
        for run in range(args.runs):
            order = list(modes) if run % 2 == 0 else list(reversed(modes))
            for mode in order:
                server = Server(checkpoint, batch_size=modes[mode], threads=args.threads, extra=extra)
                try:
                    n_tokens = httpx.get(server.url + "/api/model", timeout=60).json()["n_tokens"]
                    load(server.url, clients=args.clients, requests=1, n_tokens=n_tokens, round_no=99)  # warm-up
                    before = httpx.get(server.url + "/api/health").json()["queue"]
                    results[mode].append(
                        load(server.url, clients=args.clients, requests=args.requests, n_tokens=n_tokens, round_no=run)
                    )
                    after = httpx.get(server.url + "/api/health").json()["queue"]
                    batches[mode].append(
                        (after["requests"] - before["requests"]) / max(1, after["batches"] - before["batches"])
                    )
                    busy[mode].append((after["busy_s"] - before["busy_s"]) / results[mode][-1]["wall"])
                finally:
                    server.close()
                r = results[mode][-1]
                print(
                    f"  run {run + 1} {mode:>13}: {len(r['latencies']) / r['wall']:.2f} req/s, "
                    f"{len(r['errors'])} errors",
                    flush=True,
                )

    n = args.clients * args.requests
    print(
        f"\n{args.clients} clients x {args.requests} requests, torch threads {args.threads}, Griffin-Lim "
        f"{args.griffin_lim_iters} it, "
        f"median of {args.runs} runs\n"
    )
    print(
        f"{'mode':>14} | {'req/s':>6} | {'p50 s':>6} | {'p95 s':>6} | {'errors':>6} | {'req/batch':>9} | "
        f"{'worker busy':>11}"
    )
    summary = {}
    for mode, runs in results.items():
        rps = statistics.median(n / r["wall"] for r in runs)
        p50 = statistics.median(percentile(r["latencies"], 0.5) for r in runs)
        p95 = statistics.median(percentile(r["latencies"], 0.95) for r in runs)
        errors = sum(len(r["errors"]) for r in runs)
        summary[mode] = rps
        print(
            f"{mode:>14} | {rps:6.2f} | {p50:6.3f} | {p95:6.3f} | {errors:6d} | "
            f"{statistics.median(batches[mode]):9.2f} | "
            f"{statistics.median(busy[mode]):11.0%}"
        )
        for problem in sorted({e for r in runs for e in r["errors"]})[:5]:
            print(f"{'':>14}   error: {problem}")
    total_errors = sum(len(r["errors"]) for runs in results.values() for r in runs)
    print()
    print(f"serve_rps_batched={summary['batched']:.3f}")
    print(f"serve_rps_one_at_a_time={summary['one-at-a-time']:.3f}")
    print(f"serve_batched_speedup={summary['batched'] / summary['one-at-a-time']:.2f}")
    print(f"serve_errors={total_errors}")
    return 1 if total_errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
