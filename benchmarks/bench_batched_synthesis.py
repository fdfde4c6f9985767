"""Batched vs one-by-one synthesis of 16 sentences: the speedup of ``Synthesizer.synthesize``'s batching.

Usage::

    python benchmarks/bench_batched_synthesis.py [--checkpoint demo_out/checkpoints/last.pt] [--runs 3]

Both modes go through ``Synthesizer.synthesize`` (text encoding, batching, ``GSTTacotron.infer``,
cropping, alignment health) with the same seed and bounds. Griffin-Lim is excluded from BOTH
(``vocode=False``): it costs the same per utterance either way and is not what batching speeds
up. The modes run side by side in one process, alternating which goes first, after one warm-up
each; the median of ``--runs`` runs is reported.

Without the checkpoint, a random-weight model of the ``conf/model/tiny.yaml`` config is built and
saved like ``tests/conftest.py`` does. Such a model never emits its stop token, so every
sentence runs to its length bound (``ceil(min(max_frames, max_frames_per_symbol * symbols) / r)`` steps) in both
modes: the same per-sentence work a trained model does, only longer.

Prints a table and a last line ``batched_synthesis_speedup=X``.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
import statistics
import sys
import tempfile
import time

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gst_tts.inference.decoding import DecodingConfig  # noqa: E402
from gst_tts.inference.synthesizer import Synthesizer  # noqa: E402

from common import SENTENCES, random_tiny_checkpoint  # noqa: E402  (benchmarks/ is on the path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint", type=Path, default=ROOT / "demo_out" / "checkpoints" / "last.pt")
    p.add_argument("--runs", type=int, default=3, help="timed runs per mode (median reported; more on a busy machine)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's default)")
    p.add_argument(
        "--max-seconds", type=float, default=DecodingConfig.max_seconds, help="bound on each sentence's audio"
    )
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    logging.getLogger("gst_tts.inference.synthesizer").setLevel(
        logging.ERROR
    )  # attention warnings are not the point here

    tmp = tempfile.TemporaryDirectory()
    checkpoint = args.checkpoint
    note = ""
    if not checkpoint.is_file():
        checkpoint = random_tiny_checkpoint(Path(tmp.name))
        note = (
            f"note: {args.checkpoint} not found; using a RANDOM-weight conf/model/tiny.yaml model. It never stops"
            " on its token, so every sentence runs to its length bound in both modes."
        )
    synth = Synthesizer.from_checkpoint(checkpoint, device=args.device)
    kw = dict(
        seed=args.seed, vocode=False, decoding=DecodingConfig(max_seconds=args.max_seconds), batch_size=len(SENTENCES)
    )

    def batched():
        return synth.synthesize(SENTENCES, **kw)

    def one_by_one():
        return [synth.synthesize(s, **kw) for s in SENTENCES]

    modes = {"batched (16)": batched, "one by one": one_by_one}
    times: dict[str, list[float]] = {m: [] for m in modes}
    info: dict[str, tuple[int, int]] = {}
    for fn in modes.values():  # warm-up (allocator, first-call overheads)
        fn()
    for run in range(args.runs):
        order = list(modes) if run % 2 == 0 else list(reversed(modes))  # alternate who goes first
        for name in order:
            t0 = time.perf_counter()
            results = modes[name]()
            times[name].append(time.perf_counter() - t0)
            info[name] = (sum(r.alignment.shape[0] for r in results), sum(r.stopped_on_bound for r in results))

    if note:
        print(note)
    print(
        f"checkpoint: {checkpoint}  device: {args.device}  torch threads: {torch.get_num_threads()}  runs: {args.runs}"
        f"  model: r={synth.model.reduction_factor}, "
        f"{sum(p.numel() for p in synth.model.parameters()) / 1e6:.2f} M params"
    )
    print("Griffin-Lim: excluded from both modes (vocode=False); timed: text → mel + alignment + health")
    header = (
        f"{'mode':<14} {'median s':>9} {'min s':>8} {'max s':>8} {'ms/utt':>8} {'decoder steps':>14} {'on bound':>9}"
    )
    print(header)
    print("-" * len(header))
    for name in modes:
        t = times[name]
        steps, bound = info[name]
        print(
            f"{name:<14} {statistics.median(t):9.3f} {min(t):8.3f} {max(t):8.3f} "
            f"{statistics.median(t) / len(SENTENCES) * 1e3:8.1f}"
            f" {steps:14d} {bound:6d}/{len(SENTENCES)}"
        )
    speedup = statistics.median(times["one by one"]) / statistics.median(times["batched (16)"])
    # The best run of each mode is the least disturbed by other load on the machine.
    print(f"speedup of the fastest runs: {min(times['one by one']) / min(times['batched (16)']):.2f}")
    print(f"batched_synthesis_speedup={speedup:.2f}")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
