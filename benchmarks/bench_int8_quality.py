"""``--int8`` on a trained checkpoint: mel difference under teacher forcing, alignment health, speed.

Usage::

    python benchmarks/bench_int8_quality.py [--checkpoint demo_out/checkpoints/last.pt]
        [--corpus demo_out/corpus] [--utterances 16] [--runs 3] [--held-out 12] [--references 4]

For ``--utterances`` sentences of the corpus (its first ones):

* teacher forcing: the postnet mel of fp32 vs int8 recurrent weights on the same inputs (eval
  mode, prenet dropout off, each clip its own reference), mean and max |Δ| in normalised-mel units
  over real frames, next to the mean |mel| for scale;
* free-running synthesis with the same seed of ``--held-out`` sentences the corpus does not hold
  (``gst_tts.analysis.style_transfer.held_out_sentences``, as ``demo-report`` draws them), each
  in the style of ``--references`` corpus clips: mean focus / coverage, the share aligned
  (``gst_tts.analysis.alignment.ALIGNED_CRITERIA``) and stop-token endings of each path; the share
  of syntheses that stop on the same decoder step in both, and the largest step difference; the
  mean |Δ| of the output mels over their common length;
* speed: ``Synthesizer.synthesize`` of all sentences one by one (Griffin-Lim excluded), fp32 vs
  int8 side by side, medians of ``--runs``.

Without the checkpoint (no ``make demo`` run yet) it prints why and exits 0, so ``make bench``
still runs. Last lines: ``int8_teacher_forced_mad=X``, ``int8_same_stop_step_rate=X`` and
``int8_synthesis_speedup=X``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
import statistics
import sys
import time

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gst_tts.analysis.alignment import mean_health  # noqa: E402
from gst_tts.analysis.style_transfer import held_out_sentences  # noqa: E402
from gst_tts.data.batching import Collate  # noqa: E402
from gst_tts.data.corpus import read_corpus  # noqa: E402
from gst_tts.inference.synthesizer import Synthesizer  # noqa: E402


def teacher_forced(
    synth: Synthesizer, texts: list[torch.Tensor], mels: list[torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Postnet mels ``(batch, frames, n_mels)`` and real lengths of one padded teacher-forced batch."""
    items = [{"id": str(i), "text": t, "mel": m, "style": None} for i, (t, m) in enumerate(zip(texts, mels))]
    batch = Collate(synth.model.reduction_factor, synth.symbols.pad_id)(items)
    model = synth.model.eval()
    prenet = model.decoder.prenet
    saved, prenet.dropout_at_inference = prenet.dropout_at_inference, False
    try:
        with torch.no_grad():
            out = model(batch["text"], batch["text_lengths"], batch["mel"], batch["mel_lengths"])
    finally:
        prenet.dropout_at_inference = saved
    return out.mel_postnet, batch["mel_lengths"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", type=Path, default=ROOT / "demo_out" / "checkpoints" / "last.pt")
    parser.add_argument("--corpus", type=Path, default=ROOT / "demo_out" / "corpus")
    parser.add_argument("--utterances", type=int, default=16)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--held-out", type=int, default=12, help="held-out sentences for free-running synthesis")
    parser.add_argument("--references", type=int, default=4, help="corpus clips used as references")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not args.checkpoint.is_file() or not (args.corpus / "metadata.csv").is_file():
        print(
            f"skipped: needs a trained checkpoint and its corpus ({args.checkpoint}, {args.corpus}); run `make "
            "demo` first"
        )
        return 0
    torch.set_num_threads(args.threads)

    fp32 = Synthesizer.from_checkpoint(args.checkpoint, device="cpu", int8=False)
    int8 = Synthesizer.from_checkpoint(args.checkpoint, device="cpu", int8=True)
    utterances = read_corpus(args.corpus)[: args.utterances]
    sentences = [u.text for u in utterances]
    texts = [fp32.symbols.encode(u.text) for u in utterances]
    mels = [fp32.styles.reference_mel(u.audio_path) for u in utterances]

    reference, lengths = teacher_forced(fp32, texts, mels)
    quantized, _ = teacher_forced(int8, texts, mels)
    valid = torch.arange(reference.shape[1])[None, :] < lengths[:, None]
    diff = (quantized - reference).abs()[valid]
    mad, worst, scale = float(diff.mean()), float(diff.max()), float(reference.abs()[valid].mean())

    held_out = held_out_sentences(args.held_out, exclude=[u.text for u in read_corpus(args.corpus)])
    references = [u.audio_path for u in utterances[: args.references]]
    results: dict[str, list] = {"fp32": [], "int8": [], "fp32, next seed": []}
    for name, synth, seed in (
        ("fp32", fp32, args.seed),
        ("int8", int8, args.seed),
        ("fp32, next seed", fp32, args.seed + 1),
    ):
        for reference in references:
            results[name] += synth.synthesize(
                held_out, reference=reference, seed=seed, vocode=False, transfer_tempo=False
            )
    steps = {name: np.array([res.health.decoder_steps for res in out]) for name, out in results.items()}

    def step_change(name: str) -> tuple[float, float, int, float]:
        """Against fp32: share on the same stop step, mean and largest |Δ steps|, mean Δ steps."""
        delta = steps[name] - steps["fp32"]
        return float(np.mean(delta == 0)), float(np.abs(delta).mean()), int(np.abs(delta).max()), float(delta.mean())

    same_steps = step_change("int8")[0]
    free_mad = float(
        np.mean(
            [
                np.abs(a.mel[: min(len(a.mel), len(b.mel))] - b.mel[: min(len(a.mel), len(b.mel))]).mean()
                for a, b in zip(results["fp32"], results["int8"])
            ]
        )
    )

    def one_by_one(synth: Synthesizer) -> float:
        t0 = time.perf_counter()
        for sentence in sentences:
            synth.synthesize(
                sentence, reference=utterances[0].audio_path, seed=args.seed, vocode=False, transfer_tempo=False
            )
        return time.perf_counter() - t0

    one_by_one(fp32), one_by_one(int8)  # warm-up
    times: dict[str, list[float]] = {"fp32": [], "int8": []}
    for run in range(args.runs):
        for name in ("fp32", "int8") if run % 2 == 0 else ("int8", "fp32"):
            times[name].append(one_by_one(fp32 if name == "fp32" else int8))
    median = {name: statistics.median(t) for name, t in times.items()}

    print(f"checkpoint: {args.checkpoint}  corpus: {args.corpus}  {len(sentences)} sentences  threads: {args.threads}")
    print(
        f"teacher forcing, postnet mel int8 vs fp32 (normalised units): mean |Δ| {mad:.2e}  max |Δ| {worst:.2e}"
        f"  (mean |mel| {scale:.3f})"
    )
    print(
        f"free-running: {len(held_out)} held-out sentences x {len(references)} corpus clips as references, seed "
        f"{args.seed}"
    )
    header = f"{'path':<6} {'focus':>7} {'coverage':>9} {'aligned':>8} {'on token':>9} {'one-by-one s':>13}"
    print(header)
    print("-" * len(header))
    for name in ("fp32", "int8"):  # the next seed's row would repeat fp32's
        health = mean_health([res.health for res in results[name]])
        on_token = np.mean([res.stop_reason == "stop_token" for res in results[name]])
        print(
            f"{name:<6} {health['focus']:7.3f} {health['coverage']:9.3f} {health['ok_rate']:8.0%} {on_token:9.0%}"
            f" {median[name]:13.3f}"
        )
    print(
        f"stop steps against fp32 (same seed) over {len(steps['fp32'])} syntheses; for scale, fp32 with the next seed:"
    )
    for name in ("int8", "fp32, next seed"):
        same, mean_abs, worst, bias = step_change(name)
        print(
            f"  {name:<16} same step {same:4.0%}   mean |Δ| {mean_abs:.2f}   largest |Δ| {worst}   mean Δ "
            f"{bias:+.2f} steps"
        )
    print(f"free-running mels (same seed), mean |Δ| over the common length: {free_mad:.2e}")
    print(f"int8_teacher_forced_mad={mad:.2e}")
    print(f"int8_same_stop_step_rate={same_steps:.3f}")
    print(f"int8_synthesis_speedup={median['fp32'] / median['int8']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
