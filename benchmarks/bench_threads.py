"""CPU thread settings under contention: a demo training step and a synthesis, on an idle machine
and with another process holding one core.

Usage::

    python benchmarks/bench_threads.py [--repeats 5] [--budget 40] [--configs default,passive,1thread,...]

Each configuration runs in its own process (the OpenMP runtime reads ``OMP_WAIT_POLICY`` when it
starts, before anything can change it), twice: once on an idle machine, once while a busy-loop
process holds one core (what a user's other work does: a second training, the client of
``gst-tts serve``, a compile). The workloads, with random seeded weights and inputs:

* training step: the demo's ``conf/model/tiny.yaml`` model on a batch shaped like the demo's
  (12 utterances, 51 symbols, 216 mel frames, 181-frame references), the demo's L1 loss,
  forward + backward + Adam step;
* synthesis: one 45-symbol sentence decoded for exactly 100 steps (300 frames, about 3.5 s of
  audio) with prenet dropout on, as ``gst-tts synthesize`` and ``gst-tts serve`` decode, then
  Griffin-Lim (32 iterations) on the result.

Configurations (``--configs``, comma-separated; default all):

* ``torch-default``: torch's defaults (one thread per core, libgomp's default wait policy), and
  ``OMP_WAIT_POLICY`` cleared;
* ``passive``: the same threads with ``OMP_WAIT_POLICY=PASSIVE`` (threads sleep at once when they
  wait, instead of spinning);
* ``1-thread``: ``torch.set_num_threads(1)``;
* ``interop-1``: torch's default threads with ``torch.set_num_interop_threads(1)``;
* ``gst-tts``: what ``gst_tts.compute.configure_threads`` sets by default (the CLI and the trainers
  call it);
* ``spin-N`` (not in the default set): torch's threads with ``GOMP_SPINCOUNT=N``, how long a
  waiting libgomp thread spins before it sleeps.

Each measurement is the median of ``--repeats`` timed runs after one warm-up, stopping early when
a configuration has used ``--budget`` seconds (at least one timed run). Prints a table
(milliseconds; ``slowdown`` = busy / idle) and ``key=value`` lines.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import statistics
import subprocess
import sys
import time

ROOT = Path(__file__).resolve().parents[1]

#: Configuration → (environment changes, torch threads or None, interop threads or None, use gst-tts's default).
_CLEAR = {"OMP_NUM_THREADS": None, "OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": None}
CONFIGS: dict[str, tuple[dict[str, str | None], int | None, int | None, bool]] = {
    "torch-default": (_CLEAR, None, None, False),
    "passive": ({**_CLEAR, "OMP_WAIT_POLICY": "PASSIVE"}, None, None, False),
    "1-thread": (_CLEAR, 1, None, False),
    "interop-1": (_CLEAR, None, 1, False),
    "gst-tts": (_CLEAR, None, None, True),
}
#: The default set; ``spin-N`` (libgomp's ``GOMP_SPINCOUNT=N``: how long a waiting thread spins before it
#: sleeps) may be asked for by name.
DEFAULT_CONFIGS = list(CONFIGS)
for _spin in (1000, 10000, 100000):
    CONFIGS[f"spin-{_spin}"] = ({**_CLEAR, "GOMP_SPINCOUNT": str(_spin)}, None, None, False)
WORKLOADS = ("train", "synthesize")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5, help="timed runs per measurement, median reported (default 5)")
    p.add_argument(
        "--budget", type=float, default=40.0, help="seconds a configuration may spend per workload (default 40)"
    )
    p.add_argument(
        "--configs",
        default=",".join(DEFAULT_CONFIGS),
        help=f"comma-separated, of {', '.join(CONFIGS)} (default: all but spin-N)",
    )
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return _child(args.child, args.repeats, args.budget)

    configs = [c for c in args.configs.split(",") if c]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        p.error(f"unknown configuration(s) {', '.join(unknown)}; known: {', '.join(CONFIGS)}")
    print(
        f"cores: {os.cpu_count()}; each configuration in its own process; medians of up to {args.repeats} runs",
        flush=True,
    )
    results: dict[str, dict[str, dict[str, float]]] = {}
    for condition in ("idle", "busy"):
        hog = _busy_process() if condition == "busy" else None
        try:
            for name in configs:
                results.setdefault(name, {})[condition] = _measure(name, args)
                print(
                    f"  {condition:>4}  {name:<14} "
                    + "  ".join(f"{w} {results[name][condition][w]:8.1f} ms" for w in WORKLOADS),
                    flush=True,
                )
        finally:
            if hog is not None:
                hog.kill()
                hog.wait()

    print()
    print(
        f"{'configuration':<14} | {'threads':>7} | "
        + " | ".join(f"{w + ' idle':>15} | {w + ' busy':>15} | {'slowdown':>8}" for w in WORKLOADS)
    )
    for name in configs:
        r = results[name]
        cells = []
        for w in WORKLOADS:
            cells.append(f"{r['idle'][w]:>12.1f} ms | {r['busy'][w]:>12.1f} ms | {r['busy'][w] / r['idle'][w]:>7.2f}x")
        print(f"{name:<14} | {int(r['idle']['threads']):>7} | " + " | ".join(cells))
    print()
    for name in configs:
        for condition in ("idle", "busy"):
            for w in WORKLOADS:
                print(f"{w}_{condition}_ms_{name.replace('-', '_')}={results[name][condition][w]:.1f}")
    return 0


def _busy_process() -> subprocess.Popen:
    """A process that keeps one core busy until killed."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    time.sleep(1.0)
    return hog


def _measure(name: str, args: argparse.Namespace) -> dict[str, float]:
    changes, _, _, _ = CONFIGS[name]
    env = dict(os.environ)
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    cmd = [sys.executable, __file__, "--child", name, "--repeats", str(args.repeats), "--budget", str(args.budget)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _child(name: str, repeats: int, budget: float) -> int:
    sys.path.insert(0, str(ROOT))
    import torch

    _, threads, interop, ours = CONFIGS[name]
    if ours:
        from gst_tts.compute import configure_threads

        configure_threads(None)
    if threads is not None:
        torch.set_num_threads(threads)
    if interop is not None:
        torch.set_num_interop_threads(interop)
    result = {"threads": float(torch.get_num_threads())}
    for workload, fn in _workloads().items():
        fn()  # warm-up
        times: list[float] = []
        start = time.perf_counter()
        while len(times) < repeats and (not times or time.perf_counter() - start < budget):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        result[workload] = 1e3 * statistics.median(times)
    print(json.dumps(result))
    return 0


def _workloads() -> dict:
    import torch
    import yaml

    from gst_tts.audio.features import AudioConfig
    from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
    from gst_tts.data.batching import Collate
    from gst_tts.training.builders import build_model
    from gst_tts.training.losses import TacotronLoss

    config = yaml.safe_load((ROOT / "conf" / "model" / "tiny.yaml").read_text())
    torch.manual_seed(0)
    model, _ = build_model(config, n_symbols=60, n_mels=80, pad_id=0)
    r = model.reduction_factor
    loss_fn = TacotronLoss(reduction_factor=r, mel_loss="l1")
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(0)
    items = []
    for i in range(12):
        text = torch.randint(2, 60, (51,), generator=g)
        text[-1] = 1
        items.append({"text": text, "mel": torch.randn(216, 80, generator=g), "id": str(i), "style": "x"})
    batch = Collate(r, 0)(items)
    reference = torch.randn(12, 181, 80, generator=g)
    reference_lengths = torch.full((12,), 181)
    sentence = torch.randint(2, 60, (1, 45), generator=g)
    sentence[0, -1] = 1
    vocoder = GriffinLimVocoder(AudioConfig(), n_iter=32)

    def train() -> None:
        model.train()
        optimizer.zero_grad(set_to_none=True)
        out = model(
            batch["text"], batch["text_lengths"], batch["mel"], batch["mel_lengths"], reference, reference_lengths
        )
        loss_fn(out, batch)["total"].backward()
        optimizer.step()

    def synthesize() -> None:
        model.eval()
        with torch.no_grad():
            out = model.infer(
                sentence,
                torch.tensor([45]),
                stop_threshold=1.0,
                max_frames_per_symbol=100.0,
                max_frames=100 * model.reduction_factor,
                attention_window=None,
                stop_end_tolerance=None,
            )
        vocoder(out.mel_postnet[0].float() * 2.0 - 5.0)

    return {"train": train, "synthesize": synthesize}


if __name__ == "__main__":
    sys.exit(main())
