"""GPU training throughput of our GSTTacotron against torchaudio's Tacotron2 at equal sizes and real
LJSpeech utterance lengths, and the aten ops each teacher-forced decoder step costs (on the CPU).

Usage::

    python benchmarks/bench_gpu_train.py [--corpus DIR] [--batch-sizes 32 64 128] [--precisions bf16 tf32]
                                         [--repeats 5] [--warmup 2] [--device cuda|cpu] [--threads N] [--quick]

Models, as in ``bench_speed.py``: both built from ``conf/model/tacotron2.yaml`` (Tacotron 2 paper
sizes, r = 1, 80 mels) with random, seeded weights; ours keeps its GST module (reference encoder +
style tokens, the target mel as its reference), torchaudio's Tacotron2 has none. Both losses are
``gst_tts.training.losses.TacotronLoss`` with ``guided_attention_weight=0`` (torchaudio's outputs
transposed into a ``TacotronOutput``), so the loss work is identical.

Utterance lengths: from ``--corpus DIR``, an LJSpeech-format corpus (``metadata.csv`` with
``id|text|normalized text``, audio in ``wavs/``): each utterance's text length in symbol ids (its
text through ``SymbolTable.encode``, end-of-sequence included) and its mel frame count from the
WAV's duration (``soundfile.info``, no decoding: 1 + samples // 256 at 22050 Hz; untrimmed, so a
little longer than the feature cache's silence-trimmed targets). Without ``--corpus``, a built-in
approximation of LJSpeech's published statistics (see ``ljspeech_like_lengths``). Each batch draws
its utterances with a seeded RNG from these lengths (with replacement); its inputs are random
symbol ids and random normalised mels of those lengths, padded, longest text first (torchaudio's
encoder needs it). Every configuration of one batch size sees the same batches, and at each step
ours and torchaudio's train on the same batch.

Measured:

* aten ops per teacher-forced decoder step, forward + backward, always, on the CPU (on a GPU
  machine too, before the timing): ``torch.profiler`` (CPU activity) over a teacher-forced forward
  + loss + backward at batch 2, 20 symbols, with T1 = 20 and T2 = 40 target frames, after an
  unprofiled warm-up pass; per step = (ops(T2) − ops(T1)) / (T2 − T1), which cancels the encoder,
  postnet, loss and GST work (r = 1: decoder steps = frames). Counted: every profiler event whose
  name starts with ``aten::``, nested ones included (an ``aten::linear`` and the ``aten::addmm``
  it calls count twice): each is a trip through the dispatcher, CPU time that a GPU has to hide
  behind its kernels. The table also gives the top-level count (aten events not nested in another
  aten event). T1 and T2 stay ≤ 64 so that the GST reference encoder's GRU runs one step at both
  (its six stride-2 blocks: one GRU step per 64 frames) and cancels too.
* GPU training throughput, per batch size (``--batch-sizes``, default 32 64 128) and precision
  (``--precisions``, default bf16 tf32; also fp32): a training step (teacher-forced forward + loss
  + backward + Adam step, ``torch.cuda.synchronize()`` before and after) of each model, side by
  side in one process, alternating which goes first, ``--warmup`` (2) untimed steps, then
  ``--repeats`` (5) timed; medians. bf16: forward and loss under ``torch.autocast(bfloat16)``, TF32
  flags at PyTorch's defaults (what ``trainer.amp=bf16`` runs); tf32: fp32 with TF32 matmuls and
  convolutions (``torch.backends.cuda.matmul.allow_tf32`` and ``torch.backends.cudnn.allow_tf32``
  on); fp32: both off. Per configuration and model: mel frames/s (the batch's unpadded target
  frames / step seconds, median over steps), seconds per step, and peak GPU memory
  (``torch.cuda.max_memory_allocated`` over that model's steps, reset per configuration and step;
  it includes both models' weights and Adam states, about 0.7 GB). A model that runs out of memory
  shows ``OOM`` for that configuration; the run goes on.

Prints the op-count table and its lines, then the throughput table (ratio = ours / torchaudio) and,
for tools::

    train_ops_per_decoder_step_ours=X
    train_ops_per_decoder_step_torchaudio=Y
    train_ops_per_decoder_step_ratio_vs_torchaudio=X/Y   (< 1: ours dispatches fewer ops per step)
    gpu_train_frames_per_s=X            (ours, batch 128 (else the largest batch run), in the precision
                                         fastest for ours; OOM when ours ran out of memory there)
    gpu_train_ratio_vs_torchaudio=X     (ours / torchaudio frames/s at that configuration; > 1: ours is faster)

Without CUDA the op count still runs, then ``skipped: no CUDA``, exit status 0. ``--device cpu
--quick`` runs the whole timing path on the CPU instead (batch 2, lengths / 16, 1 warm-up and 1
repeat): a smoke test, its numbers are not meaningful.
"""

from __future__ import annotations

import argparse
import contextlib
from dataclasses import dataclass, field
import gc
import os
from pathlib import Path
import re
import statistics
import sys
import tempfile
import time
from typing import Callable, ContextManager, Iterator
import warnings

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gst_tts.model import GSTTacotron  # noqa: E402
from gst_tts.text.symbols import SymbolTable  # noqa: E402
from gst_tts.compute import configure_threads  # noqa: E402
from gst_tts.training.loop import to_device  # noqa: E402
from gst_tts.training.losses import TacotronLoss  # noqa: E402

from common import (  # noqa: E402  (benchmarks/ is on the path)
    build_models,
    collate_longest_text_first,
    load_config,
    ours_train_step,
    peer_output,
    peer_train_step,
    random_item,
    synchronize,
)

SAMPLE_RATE = 22050
HOP_LENGTH = 256
PRECISIONS = ("bf16", "tf32", "fp32")
QUICK_SHRINK = 16  # --quick: text and frame lengths divided by this

# LJSpeech 1.1's published statistics (its README): 13,100 clips, 1.11–10.10 s, mean 6.57 s, total
# 23:55:17 and 1,308,674 characters (99.9 per clip, 15.2 per second of audio).
LJSPEECH_CLIPS = 13_100
LJSPEECH_MIN_S, LJSPEECH_MAX_S, LJSPEECH_MEAN_S = 1.11, 10.10, 6.57
LJSPEECH_CHARS_PER_S = 1_308_674 / (23 * 3600 + 55 * 60 + 17)


def ljspeech_like_lengths() -> list[tuple[int, int]]:
    """(symbol ids, mel frames) of 13,100 made-up utterances: an APPROXIMATION of LJSpeech from its
    published statistics, not its real lengths (``--corpus`` measures those).

    Durations: the 13,100 quantiles of a Beta(1.82, 1.18) on [1.11, 10.10] s, whose mean is
    LJSpeech's 6.57 s; skewed towards long clips (mode about 8.5 s), as LJSpeech's clips, cut at
    pauses up to 10 s, are. Text: LJSpeech's 15.2 characters per second of audio × a uniform ±15%
    spread (seeded), about 100 characters on average, plus the end-of-sequence id. The same table
    on every run."""
    from scipy.stats import beta

    a = 1.82
    b = a * (LJSPEECH_MAX_S - LJSPEECH_MEAN_S) / (LJSPEECH_MEAN_S - LJSPEECH_MIN_S)  # mean a / (a + b) ↔ 6.57 s
    quantiles = beta.ppf((np.arange(LJSPEECH_CLIPS) + 0.5) / LJSPEECH_CLIPS, a, b)
    seconds = LJSPEECH_MIN_S + (LJSPEECH_MAX_S - LJSPEECH_MIN_S) * quantiles
    spread = np.random.default_rng(20261127).uniform(0.85, 1.15, LJSPEECH_CLIPS)
    chars = np.maximum(1, np.rint(seconds * LJSPEECH_CHARS_PER_S * spread))
    return [(int(c) + 1, frames_of(int(s * SAMPLE_RATE))) for s, c in zip(seconds, chars)]


def frames_of(samples: int) -> int:
    """Mel frames of ``samples`` at 22050 Hz with hop 256 (a centred STFT, as ``gst_tts.audio.features``)."""
    return 1 + samples // HOP_LENGTH


def corpus_lengths(root: Path) -> list[tuple[int, int]]:
    """(symbol ids, mel frames) of every utterance of an LJSpeech-format corpus, from its text and
    its WAV header (``soundfile.info``: no decoding)."""
    import soundfile as sf

    from gst_tts.data.corpus import read_corpus

    symbols = SymbolTable()
    lengths = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DroppedCharacterWarning: the dropped characters are not inputs
        for utterance in read_corpus(root):
            info = sf.info(str(utterance.audio_path))
            samples = round(info.frames * SAMPLE_RATE / info.samplerate)
            lengths.append((len(symbols.encode(utterance.text)), frames_of(samples)))
    return lengths


# --------------------------------------------------------------------------- aten ops per decoder step


@dataclass
class OpCount:
    """aten profiler events of one teacher-forced forward + loss + backward at T1 and T2 frames."""

    frames: tuple[int, int]
    all_ops: tuple[int, int]
    top_level_ops: tuple[int, int]

    @property
    def per_step(self) -> float:
        return (self.all_ops[1] - self.all_ops[0]) / (self.frames[1] - self.frames[0])

    @property
    def top_level_per_step(self) -> float:
        return (self.top_level_ops[1] - self.top_level_ops[0]) / (self.frames[1] - self.frames[0])


# libkineto's log lines ("USDT:2026-11-27 14:43:20 16855:16855 SyncActivityProfilerHandler.cpp:39] profiler_start")
KINETO_LOG_LINE = re.compile(r"^[A-Z]+:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \d+:\d+ \w+\.cpp:\d+\] ")


@contextlib.contextmanager
def without_kineto_notes() -> Iterator[None]:
    """torch.profiler's C++ side writes a note to the process's stderr at every start and stop, and
    KINETO_LOG_LEVEL does not silence them: this holds stderr (fd 2) back while the block runs and
    then passes on every other line."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            kept = [
                line
                for line in held.read().decode(errors="replace").splitlines(keepends=True)
                if not KINETO_LOG_LINE.match(line)
            ]
            if kept:
                sys.stderr.write("".join(kept))


def count_aten_ops(fn: Callable[[], object]) -> tuple[int, int]:
    """(all, top-level) ``aten::`` events that ``torch.profiler`` records on the CPU while ``fn`` runs;
    top-level: not nested in another aten event."""
    from torch.profiler import ProfilerActivity, profile

    with without_kineto_notes(), profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    all_ops = top_level = 0
    for event in prof.events():
        if event.name.startswith("aten::"):
            all_ops += 1
            parent = event.cpu_parent
            top_level += parent is None or not parent.name.startswith("aten::")
    return all_ops, top_level


def ops_per_decoder_step(
    ours: GSTTacotron,
    peer: nn.Module,
    n_symbols: int,
    frames: tuple[int, int] = (20, 40),
    batch_size: int = 2,
    text_length: int = 20,
    seed: int = 0,
) -> dict[str, OpCount]:
    """aten ops of a teacher-forced forward + loss + backward of each model (on the CPU, training
    mode) at ``frames[0]`` and ``frames[1]`` target frames; see the module docstring. Gradients are
    cleared afterwards; the weights do not change."""
    if frames[0] == frames[1]:
        raise ValueError("frames: two different frame counts are needed")
    loss_fn = TacotronLoss(guided_attention_weight=0.0)

    def batch_of(n_frames: int) -> dict:
        g = torch.Generator().manual_seed(seed)
        return collate_longest_text_first(
            [random_item(text_length, n_frames, n_symbols, g, str(i)) for i in range(batch_size)]
        )

    passes = {
        "ours": lambda b: loss_fn(ours(b["text"], b["text_lengths"], b["mel"], b["mel_lengths"]), b)[
            "total"
        ].backward(),
        "torchaudio": lambda b: loss_fn(peer_output(peer, b), b)["total"].backward(),
    }
    counts = {}
    for (name, run), model in zip(passes.items(), (ours, peer)):
        model.train()
        batches = [batch_of(n) for n in frames]
        run(batches[0])  # untimed: first calls do one-time work (lazy initialisation) that would skew the count
        measured = [count_aten_ops(lambda b=b: run(b)) for b in batches]
        model.zero_grad(set_to_none=True)
        counts[name] = OpCount(tuple(frames), (measured[0][0], measured[1][0]), (measured[0][1], measured[1][1]))
    return counts


def print_op_counts(counts: dict[str, OpCount]) -> None:
    ours, peer = counts["ours"], counts["torchaudio"]
    t1, t2 = ours.frames
    print(
        f"aten ops per teacher-forced decoder step, forward + loss + backward (CPU, torch.profiler):"
        f" (ops at T2 = {t2} frames − ops at T1 = {t1}) / {t2 - t1}; all events at T1: ours {ours.all_ops[0]},"
        f" torchaudio {peer.all_ops[0]}"
    )
    header = f"{'ops per decoder step':<46} {'ours':>8} {'torchaudio':>11} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    print(
        f"{'all aten:: events (nested included)':<46} {ours.per_step:8.1f} {peer.per_step:11.1f}"
        f" {ours.per_step / peer.per_step:7.3f}"
    )
    print(
        f"{'top-level aten:: events':<46} {ours.top_level_per_step:8.1f} {peer.top_level_per_step:11.1f}"
        f" {ours.top_level_per_step / peer.top_level_per_step:7.3f}"
    )
    print()
    print(f"train_ops_per_decoder_step_ours={ours.per_step:.1f}")
    print(f"train_ops_per_decoder_step_torchaudio={peer.per_step:.1f}")
    print(f"train_ops_per_decoder_step_ratio_vs_torchaudio={ours.per_step / peer.per_step:.3f}")


# --------------------------------------------------------------------------- training throughput


@contextlib.contextmanager
def precision(name: str, device: torch.device) -> Iterator[Callable[[], ContextManager]]:
    """Sets the TF32 flags for ``name`` (restored on exit) and yields the context the forward pass and
    loss run in."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    if name == "tf32":
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    elif name == "fp32":
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        if name == "bf16":
            yield lambda: torch.autocast(device.type, dtype=torch.bfloat16)
        else:
            yield contextlib.nullcontext
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


@dataclass
class Side:
    """One model's steps in one configuration. ``graphs``: how many CUDA graphs the side holds (ours:
    one per padded shape, captured on first sight); a step that captured one is a warm-up step."""

    step: Callable[[dict], float]
    optimizer: torch.optim.Optimizer
    graphs: Callable[[], int] = lambda: 0
    seconds: list[float] = field(default_factory=list)
    frames: list[int] = field(default_factory=list)
    capture_seconds: list[float] = field(default_factory=list)
    peak_bytes: int = 0
    oom: bool = False

    @property
    def frames_per_s(self) -> float:
        return statistics.median(f / s for f, s in zip(self.frames, self.seconds))

    @property
    def step_s(self) -> float:
        return statistics.median(self.seconds)


def is_oom(exc: BaseException) -> bool:
    return isinstance(exc, torch.cuda.OutOfMemoryError) or (
        isinstance(exc, RuntimeError) and "out of memory" in str(exc)
    )


def run_config(
    sides: dict[str, Side], batches: Iterator[dict], warmup: int, repeats: int, device: torch.device
) -> None:
    """``warmup`` untimed steps, then timed steps until every side has ``repeats``, of every side on
    the same batches, alternating which side goes first. A step in which a side captured a CUDA
    graph (a padded shape it had not seen) is not timed: its time goes to ``capture_seconds`` and
    the side needs another batch (at most ``3 * repeats`` more batches in all). A side that runs
    out of memory stops there (``oom``)."""
    cuda = device.type == "cuda"
    names = list(sides)
    for i in range(warmup + 3 * repeats):
        if i >= warmup and all(s.oom or len(s.seconds) >= repeats for s in sides.values()):
            break
        batch = to_device(next(batches), device)
        real_frames = int(batch["mel_lengths"].sum())
        for name in names if i % 2 == 0 else reversed(names):
            side = sides[name]
            if side.oom or (i >= warmup and len(side.seconds) >= repeats):
                continue
            if cuda:
                torch.cuda.reset_peak_memory_stats(device)
            graphs = side.graphs()
            try:
                synchronize(device)
                t0 = time.perf_counter()
                side.step(batch)
                synchronize(device)
                seconds = time.perf_counter() - t0
            except (torch.cuda.OutOfMemoryError, RuntimeError) as exc:
                if not is_oom(exc):
                    raise
                side.oom = True
            side.optimizer.zero_grad(set_to_none=True)  # so the other side's peak does not hold these gradients
            if side.oom:
                gc.collect()
                torch.cuda.empty_cache()
                continue
            if cuda:
                side.peak_bytes = max(side.peak_bytes, torch.cuda.max_memory_allocated(device))
            if side.graphs() > graphs:
                side.capture_seconds.append(seconds)
            elif i >= warmup:
                side.seconds.append(seconds)
                side.frames.append(real_frames)
        del batch


def batch_stream(
    lengths: list[tuple[int, int]], batch_size: int, n_symbols: int, seed: int, shrink: int = 1
) -> Iterator[dict]:
    """Endless collated batches of ``batch_size`` utterances drawn from ``lengths`` (with replacement),
    random content; the same stream for the same (seed, batch_size). ``shrink`` divides the lengths (--quick)."""
    rng = np.random.default_rng([seed, batch_size])
    g = torch.Generator().manual_seed(seed * 1_000_003 + batch_size)
    while True:
        picks = rng.integers(0, len(lengths), batch_size)
        items = []
        for i, k in enumerate(picks):
            n_text, n_frames = lengths[k]
            items.append(random_item(max(2, n_text // shrink), max(2, n_frames // shrink), n_symbols, g, str(i)))
        yield collate_longest_text_first(items)


def headline_config(results: dict[tuple[int, str], dict[str, Side]], batch_sizes: list[int]) -> tuple[int, str | None]:
    """(batch, precision) of the tool lines: batch 128 if run, else the largest; the precision with
    ours' most frames/s there (None when ours ran out of memory in every precision)."""
    batch = 128 if 128 in batch_sizes else max(batch_sizes)
    ran = [(sides["ours"].frames_per_s, p) for (b, p), sides in results.items() if b == batch and not sides["ours"].oom]
    return batch, max(ran)[1] if ran else None


def gib(n_bytes: int) -> str:
    return f"{n_bytes / 2**30:.2f}" if n_bytes else "-"


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--corpus",
        type=Path,
        default=None,
        help="an LJSpeech-format corpus whose utterance lengths to draw (default: a built-in approximation of "
        "LJSpeech)",
    )
    p.add_argument("--batch-sizes", type=int, nargs="+", default=None, help="default 32 64 128 (2 with --quick)")
    p.add_argument("--precisions", nargs="+", choices=PRECISIONS, default=["bf16", "tf32"], help="default bf16 tf32")
    p.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="timed steps per configuration, median reported (default 5; 1 with --quick)",
    )
    p.add_argument(
        "--warmup", type=int, default=None, help="untimed steps per configuration first (default 2; 1 with --quick)"
    )
    p.add_argument(
        "--device",
        default="cuda" if torch.cuda.is_available() else "cpu",
        help="cuda or cpu (default: cuda when available); the timing runs on cpu only with --quick",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch CPU threads (the op count, --quick on cpu; default: gst-tts's, every core but one)",
    )
    p.add_argument("--model-config", type=Path, default=ROOT / "conf" / "model" / "tacotron2.yaml")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--no-cuda-graphs",
        action="store_true",
        help="run ours' decoder eagerly on CUDA (trainer.cuda_graphs=false), as before the graphs",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="batch 2, lengths / 16, 1 warm-up and 1 repeat: a smoke run, numbers not meaningful",
    )
    args = p.parse_args(argv)

    quick = args.quick
    batch_sizes = args.batch_sizes or ([2] if quick else [32, 64, 128])
    repeats = args.repeats if args.repeats is not None else (1 if quick else 5)
    warmup = args.warmup if args.warmup is not None else (1 if quick else 2)
    if repeats < 1 or warmup < 0 or min(batch_sizes) < 1:
        raise SystemExit("--repeats and --batch-sizes must be at least 1, --warmup at least 0")
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: no CUDA device available")

    threads = configure_threads(args.threads)
    symbols = SymbolTable()
    n_symbols = len(symbols)
    config = load_config(args.model_config)
    ours, peer = build_models(config, n_symbols, args.seed)
    model_name = args.model_config.relative_to(ROOT) if args.model_config.is_relative_to(ROOT) else args.model_config
    print(
        f"torch {torch.__version__}, {threads} CPU thread(s); model: {model_name} (r = 1); ours keeps its GST; "
        "random seeded weights and inputs"
    )

    # ---- aten ops per decoder step, on the CPU, always
    print_op_counts(ops_per_decoder_step(ours, peer, n_symbols, seed=args.seed))

    # ---- training throughput
    print()
    if device.type != "cuda" and not quick:
        print(
            "skipped: no CUDA"
            if not torch.cuda.is_available()
            else "skipped: --device cpu (the throughput timing runs on CUDA; --quick for a CPU smoke run)"
        )
        return 0

    lengths = corpus_lengths(args.corpus) if args.corpus else ljspeech_like_lengths()
    if not lengths:
        raise SystemExit(f"{args.corpus}: no utterances")
    text_lengths = np.array([t for t, _ in lengths])
    frame_counts = np.array([f for _, f in lengths])
    source = "an LJSpeech-format corpus, " + str(args.corpus) if args.corpus else "built-in approximation of LJSpeech"
    print(
        f"lengths: {source}: {len(lengths)} utterances, text {text_lengths.min()}–{text_lengths.max()} symbol ids"
        f" (mean {text_lengths.mean():.1f}), {frame_counts.min()}–{frame_counts.max()} mel frames"
        f" (mean {frame_counts.mean():.1f} = {frame_counts.mean() * HOP_LENGTH / SAMPLE_RATE:.2f} s)"
    )
    shrink = QUICK_SHRINK if quick else 1
    device_name = f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else ""
    print(
        f"device: {device}{device_name}; steps per configuration: {warmup} warm-up + {repeats} timed (median)"
        f"{f'  QUICK (lengths / {shrink}; smoke run: numbers not meaningful)' if quick else ''}"
    )

    ours.to(device)
    peer.to(device)
    # Ours as gst-tts-train runs it on CUDA (trainer.cuda_graphs=auto): the decoder's pass as CUDA graphs.
    graphed = device.type == "cuda" and not args.no_cuda_graphs
    print(
        "ours: decoder training pass "
        f"{'as CUDA graphs (one per padded shape)' if graphed else 'eager (no CUDA graphs)'}"
    )
    loss_fn = TacotronLoss(guided_attention_weight=0.0)
    ours_opt = torch.optim.Adam(ours.parameters(), lr=1e-3)
    peer_opt = torch.optim.Adam(peer.parameters(), lr=1e-3)
    ours.train()
    peer.train()
    results: dict[tuple[int, str], dict[str, Side]] = {}
    for batch_size in batch_sizes:
        for name in args.precisions:
            ours.set_cuda_graphs(graphed)  # drops the last configuration's graphs and their memory
            gc.collect()
            if device.type == "cuda":
                torch.cuda.empty_cache()
            with precision(name, device) as context:
                sides = {
                    "ours": Side(
                        lambda b, c=context: ours_train_step(ours, ours_opt, loss_fn, b, c),
                        ours_opt,
                        graphs=lambda: ours.captured_cuda_graphs,
                    ),
                    "torchaudio": Side(lambda b, c=context: peer_train_step(peer, peer_opt, loss_fn, b, c), peer_opt),
                }
                run_config(
                    sides, batch_stream(lengths, batch_size, n_symbols, args.seed, shrink), warmup, repeats, device
                )
            results[batch_size, name] = sides
            cells = ["OOM" if s.oom else f"{s.frames_per_s:.0f} fr/s, {s.step_s:.3f} s" for s in sides.values()]
            o = sides["ours"]
            captured = (
                f" ({len(o.capture_seconds)} graph(s) captured, those steps {sum(o.capture_seconds):.1f} s, untimed)"
                if o.capture_seconds
                else ""
            )
            print(f"  batch {batch_size} {name}: ours {cells[0]}{captured}; torchaudio {cells[1]}", flush=True)

    print()
    header = (
        f"{'batch':>5} {'precision':<9} {'ours fr/s':>10} {'torchaudio fr/s':>15} {'ratio':>6}"
        f" {'ours s/step':>11} {'ta s/step':>9} {'ours GiB':>8} {'ta GiB':>7}"
    )
    print(header)
    print("-" * len(header))
    for (batch_size, name), sides in results.items():
        o, t = sides["ours"], sides["torchaudio"]
        ratio = "-" if o.oom or t.oom else f"{o.frames_per_s / t.frames_per_s:.3f}"
        print(
            f"{batch_size:>5} {name:<9} {'OOM' if o.oom else f'{o.frames_per_s:.0f}':>10}"
            f" {'OOM' if t.oom else f'{t.frames_per_s:.0f}':>15} {ratio:>6}"
            f" {'OOM' if o.oom else f'{o.step_s:.3f}':>11} {'OOM' if t.oom else f'{t.step_s:.3f}':>9}"
            f" {'OOM' if o.oom else gib(o.peak_bytes):>8} {'OOM' if t.oom else gib(t.peak_bytes):>7}"
        )
    print(
        "(fr/s: unpadded target mel frames per second of training step, median; ratio = ours / torchaudio,"
        " > 1: ours is faster; GiB: peak allocated over the model's steps, both models' weights and Adam states "
        "included)"
    )

    batch_size, best = headline_config(results, batch_sizes)
    print()
    if best is None:
        print(f"(headline: batch {batch_size}: ours ran out of memory in every precision)")
        print("gpu_train_frames_per_s=OOM")
        print("gpu_train_ratio_vs_torchaudio=OOM")
        return 0
    o, t = results[batch_size, best]["ours"], results[batch_size, best]["torchaudio"]
    print(
        f"(headline: batch {batch_size}, {best}: ours' fastest precision at that "
        f"batch{'; QUICK, not meaningful' if quick else ''})"
    )
    print(f"gpu_train_frames_per_s={o.frames_per_s:.1f}")
    print(f"gpu_train_ratio_vs_torchaudio={'OOM' if t.oom else f'{o.frames_per_s / t.frames_per_s:.3f}'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
