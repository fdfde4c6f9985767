"""The attention kinds side by side: how fast each aligns, how healthy it ends, how it copes with long input.

Usage::

    python benchmarks/bench_attention.py [--minutes 15] [--kinds location_sensitive,forward,...]
                                         [--out bench_out/attention] [--paragraphs 20] [--reuse]

For every kind in ``gst_tts.model.attention.ATTENTION_KINDS`` (or ``--kinds``) this trains
``model=tiny`` on the built-in demo corpus with the demo recipe (``data=demo trainer=demo loss=demo``), the
same seed, the same corpus and the same wall-clock budget (``--minutes``, the demo's 15 by
default), one kind after the other so that each has the whole machine. Then, in this process:

* **time to align**: minutes (since the training process started) and steps until the first
  validation with focus >= 0.5 and coverage >= 0.85 (the trainer validates every 250 steps on
  8 held-out sentences, free-running), read from the run's TensorBoard events;
* **held-out health**: every held-out sentence of the run (``val_ids`` in its checkpoint),
  synthesized free-running with its own recording as the reference: mean focus, coverage, share
  monotonic, share ending on the stop token, share aligned;
* **long-form robustness**: paragraphs of about 2x, 4x and 8x the longest training utterance (in
  symbols), built from demo-style sentences that are not in the corpus, each synthesized as ONE
  utterance (``max_chunk_chars=None``, the API form of ``synthesize --no-split``) with a held-out
  recording as reference and a step bound of 20 frames per symbol. Per length: share that reach
  the last symbol *and* end on the stop token; share with skipped symbols (coverage < 0.85 or a
  forward jump over 4 symbols); share with repeated symbols (a backward jump over 2 symbols).
* **4x clean**: share of the 4x paragraphs that reach the end, stop on the token, and neither skip
  nor repeat (content-only attention can jump to the end, skipping the middle, and still stop);
* **one figure**, ``OUT/alignments.png``: per kind (columns), the alignment of the same held-out
  sentence and of the same 4x paragraph (rows).

Results go to ``OUT/results.json`` (updated after every kind, so ``--reuse`` continues an
interrupted run without retraining or re-evaluating the kinds that finished; delete a kind's entry
there to run it again) and ``OUT/results.md`` (the table).
The last lines are ``key=value`` for tools: ``long4x_end_and_stop_<kind>=share`` per kind.

On 2 CPU cores the default run takes about 7 x (15 + 2) minutes; ``--minutes 2`` gives a quick
(unaligned) smoke run. Pass ``--device cuda`` on a GPU machine (the trainer then uses bf16 autocast).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
from pathlib import Path
import shutil
import subprocess
import sys
import time

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gst_tts.analysis.alignment import MAX_FORWARD_JUMP, MIN_COVERAGE, MIN_FOCUS, mean_health  # noqa: E402
from gst_tts.analysis.plots import plot_alignment_grid, save_figure  # noqa: E402
from gst_tts.data.corpus import read_corpus  # noqa: E402
from gst_tts.demo.sentences import generate_sentences  # noqa: E402
from gst_tts.files import write_json, write_text  # noqa: E402
from gst_tts.inference.decoding import DecodingConfig  # noqa: E402
from gst_tts.inference.style import Style  # noqa: E402
from gst_tts.inference.synthesizer import Synthesizer  # noqa: E402
from gst_tts.model.attention import ATTENTION_KINDS  # noqa: E402
from gst_tts.text.symbols import SymbolTable  # noqa: E402
from gst_tts.checkpoints.acoustic import load_checkpoint  # noqa: E402

LENGTHS = (2, 4, 8)  # paragraph length in multiples of the longest training utterance
#: Long-form decoding: the per-symbol bound governs (the absolute cap is lifted, as with --no-split).
LONG_FORM_DECODING = DecodingConfig(max_seconds=3600.0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=15.0, help="training budget per kind (default 15, the demo's)")
    p.add_argument("--kinds", default=",".join(ATTENTION_KINDS), help="comma-separated kinds (default: all)")
    p.add_argument("--out", type=Path, default=ROOT / "bench_out" / "attention")
    p.add_argument("--utterances", type=int, default=2400, help="demo corpus size (default 2400, the demo's)")
    p.add_argument("--paragraphs", type=int, default=20, help="paragraphs per length (default 20)")
    p.add_argument("--seed", type=int, default=1234, help="training seed, the same for every kind")
    p.add_argument("--device", default="cpu", help="training and synthesis device (default cpu)")
    p.add_argument("--reuse", action="store_true", help="keep the kinds already finished in OUT/results.json")
    p.add_argument(
        "--extra",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra Hydra override for every training run (repeatable)",
    )
    args = p.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in ATTENTION_KINDS]
    if unknown or not kinds:
        p.error(f"--kinds: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(ATTENTION_KINDS)}")
    if not args.minutes > 0 or args.paragraphs < 1:
        p.error("--minutes must be > 0 and --paragraphs >= 1")
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("gst_tts.inference.synthesizer").setLevel(logging.ERROR)  # problems are counted, not printed

    out: Path = args.out
    corpus, cache = out / "corpus", out / "feature_cache"
    _run(
        [
            sys.executable,
            "-m",
            "gst_tts.cli",
            "make-demo-corpus",
            "--out",
            str(corpus),
            "--utterances",
            str(args.utterances),
        ]
    )
    _run(
        [sys.executable, "-m", "gst_tts.cli", "prepare", "--corpus", str(corpus), "--cache-dir", str(cache)]
    )  # not inside a timed run

    results_path = out / "results.json"
    results: dict = json.loads(results_path.read_text()) if args.reuse and results_path.is_file() else {}
    budget = {
        "minutes": args.minutes,
        "utterances": args.utterances,
        "seed": args.seed,
        "device": args.device,
        "extra": args.extra,
    }
    if results.get("budget") not in (None, budget):
        sys.exit(f"bench_attention: {results_path} was made with {results['budget']}, not {budget}; drop --reuse")
    results["budget"] = budget
    results.setdefault("kinds", {})
    texts: dict | None = None
    figure_cells: dict[str, list] = {}
    for kind in kinds:
        run_dir = out / "runs" / kind
        if kind in results["kinds"] and (run_dir / "checkpoints" / "last.pt").is_file():
            print(f"== {kind}: reusing {run_dir}")
        else:
            results["kinds"][kind] = {"training": _train(kind, run_dir, corpus, cache, args)}
        checkpoint = run_dir / "checkpoints" / "last.pt"
        if texts is None:
            texts = _texts(checkpoint, corpus, args.paragraphs, args.seed)
            results["paragraph_symbols"] = {str(k): [len(t) + 1 for t in texts["paragraphs"][k]] for k in LENGTHS}
            results["longest_training_symbols"] = texts["longest"]
        saved = run_dir / "figure_alignments.npz"
        if args.reuse and "long_form" in results["kinds"][kind] and saved.is_file():
            with np.load(saved) as cells:  # evaluated before, with the same seeds: nothing would change
                figure_cells[kind] = [cells["sentence"], cells["paragraph_4x"]]
            continue
        print(f"== {kind}: synthesizing held-out sentences and {len(LENGTHS)} x {args.paragraphs} paragraphs")
        evaluation, cells = _evaluate(checkpoint, texts, args.device)
        results["kinds"][kind].update(evaluation)
        figure_cells[kind] = cells
        np.savez(saved, sentence=cells[0], paragraph_4x=cells[1])
        write_json(results_path, results)
        print(_table(results))

    table = _table(results)
    write_text(out / "results.md", _header(results) + table + "\n")
    shown = [k for k in kinds if k in figure_cells]
    fig = plot_alignment_grid(
        [[figure_cells[k][0] for k in shown], [figure_cells[k][1] for k in shown]],
        column_titles=shown,
        row_titles=["held-out sentence", "4x paragraph"],
        title=f"same inputs, {args.minutes:g} min of training per kind ({args.device})",
    )
    save_figure(fig, out / "alignments.png")
    print(f"\n{_header(results)}{table}\n\nfigure: {out / 'alignments.png'}; results: {results_path}")
    for kind in kinds:
        row = results["kinds"][kind]
        print(f"long4x_end_and_stop_{kind}={row['long_form']['4']['end_and_stop']:.3f}")
    return 0


def _run(cmd: list[str], log_path: Path | None = None) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if log_path is None:
        subprocess.run(cmd, check=True, env=env, cwd=ROOT)
        return
    with open(log_path, "w") as log:
        result = subprocess.run(cmd, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    if result.returncode:
        sys.exit(f"bench_attention: {' '.join(cmd[:4])} … failed (exit {result.returncode}); see {log_path}")


def _train(kind: str, run_dir: Path, corpus: Path, cache: Path, args: argparse.Namespace) -> dict:
    """One training run from scratch; returns its budget use and its validation history."""
    if run_dir.exists():
        shutil.rmtree(run_dir)  # the trainer would resume an old run
    run_dir.mkdir(parents=True)
    cmd = [
        sys.executable,
        "-m",
        "gst_tts.training.train",
        f"data.root={corpus}",
        f"data.cache_dir={cache}",
        "model=tiny",
        "data=demo",
        "trainer=demo",
        "loss=demo",
        f"trainer.max_minutes={args.minutes}",
        f"model.attention={kind}",
        f"seed={args.seed}",
        f"trainer.device={args.device}",
        "trainer.progress=false",
        f"hydra.run.dir={run_dir}",
        *args.extra,
    ]
    print(f"== {kind}: training for {args.minutes:g} min -> {run_dir}", flush=True)
    started = time.time()
    _run(cmd, run_dir / "bench_train.log")
    wall = time.time() - started
    history = _validation_history(run_dir / "tensorboard", started)
    reached = next((h for h in history if h["focus"] >= MIN_FOCUS and h["coverage"] >= MIN_COVERAGE), None)
    steps = int(load_checkpoint(run_dir / "checkpoints" / "last.pt")["step"])
    return {
        "steps": steps,
        "wall_minutes": wall / 60,
        "aligned_at_step": reached["step"] if reached else None,
        "aligned_at_minutes": reached["minutes"] if reached else None,
        "validation": history,
    }


def _validation_history(log_dir: Path, started: float) -> list[dict]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(log_dir), size_guidance={"scalars": 0})
    events.Reload()
    focus = {e.step: e for e in events.Scalars("val_alignment/focus")}
    coverage = {e.step: e.value for e in events.Scalars("val_alignment/coverage")}
    return [
        {
            "step": step,
            "minutes": (focus[step].wall_time - started) / 60,
            "focus": focus[step].value,
            "coverage": coverage.get(step, math.nan),
        }
        for step in sorted(focus)
    ]


def _texts(checkpoint: Path, corpus: Path, per_length: int, seed: int) -> dict:
    """Held-out sentences (with their recordings) and paragraphs of unseen demo-style sentences."""
    ckpt = load_checkpoint(checkpoint)
    val_ids = set(ckpt["val_ids"])
    utterances = read_corpus(corpus)
    symbols = SymbolTable.from_dict(ckpt["symbols"])  # the text front end only: no model needed here
    held_out = [u for u in utterances if u.id in val_ids]
    longest = max(len(symbols.encode(u.text)) for u in utterances if u.id not in val_ids)
    known = {u.text for u in utterances}
    pool = iter([s for s in generate_sentences(20 * per_length * sum(LENGTHS), seed + 7919) if s not in known])
    paragraphs: dict[int, list[str]] = {}
    for k in LENGTHS:
        paragraphs[k] = []
        for _ in range(per_length):
            sentences = [next(pool)]
            while len(symbols.encode(" ".join(sentences))) < k * longest:
                sentences.append(next(pool))
            paragraphs[k].append(" ".join(sentences))
    return {"held_out": held_out, "paragraphs": paragraphs, "longest": longest}


def _evaluate(checkpoint: Path, texts: dict, device: str) -> tuple[dict, list]:
    synth = Synthesizer.from_checkpoint(checkpoint, device=device)
    held_out = texts["held_out"]
    results = synth.synthesize(
        [u.text for u in held_out],
        styles=[Style(reference=u.audio_path) for u in held_out],
        seed=1,
        vocode=False,
        batch_size=8,
        transfer_tempo=False,
    )
    summary = mean_health([r.health for r in results])
    evaluation = {
        "held_out": {
            "sentences": len(results),
            "focus": summary["focus"],
            "coverage": summary["coverage"],
            "monotonic": summary["monotonic_rate"],
            "reached_end": summary["reached_end_rate"],
            "stop_token": float(np.mean([r.stop_reason == "stop_token" for r in results])),
            "aligned": summary["ok_rate"],
        }
    }
    cells = [results[0].alignment]
    long_form = {}
    for k, paragraphs in texts["paragraphs"].items():
        refs = [Style(reference=held_out[i % len(held_out)].audio_path) for i in range(len(paragraphs))]
        started = time.perf_counter()
        out = synth.synthesize(
            paragraphs,
            styles=refs,
            seed=2,
            vocode=False,
            batch_size=10,
            max_chunk_chars=None,
            decoding=LONG_FORM_DECODING,
            transfer_tempo=False,
        )
        seconds = time.perf_counter() - started
        rows = [
            {
                "end_and_stop": bool(r.health.reached_end and r.stop_reason == "stop_token"),
                "skipped": bool(r.health.coverage < MIN_COVERAGE or r.health.max_forward_jump > MAX_FORWARD_JUMP),
                "repeated": bool(r.health.backward_jumps > 0),
                "symbols": len(r.input_labels),
                "focus": r.health.focus,
                "coverage": r.health.coverage,
            }
            for r in out
        ]
        long_form[str(k)] = {
            "paragraphs": len(out),
            **{
                key: float(np.mean([row[key] for row in rows]))
                for key in ("end_and_stop", "skipped", "repeated", "focus")
            },
            # Reaching the end is not enough: content-only attention can jump there, skipping the middle.
            "clean": float(
                np.mean([row["end_and_stop"] and not row["skipped"] and not row["repeated"] for row in rows])
            ),
            "synthesis_seconds": seconds,
            "per_paragraph": rows,
        }
        if k == 4:
            cells.append(out[0].alignment)
    evaluation["long_form"] = long_form
    return evaluation, cells


def _header(results: dict) -> str:
    b = results["budget"]
    return (
        f"Training budget {b['minutes']:g} min per kind on {b['device']} ({torch.get_num_threads()} torch threads "
        f"here), demo corpus of {b['utterances']} utterances, seed {b['seed']}. Longest training utterance "
        f"{results.get('longest_training_symbols', '?')} symbols; paragraphs of about 2x / 4x / 8x that, "
        f"synthesized unsplit.\n\n"
    )


def _table(results: dict) -> str:
    lines = [
        "| kind | steps | aligned at (min / step) | held-out focus | coverage | monotonic | stop token | aligned "
        "| 2x end+stop | 4x end+stop | 8x end+stop | 4x skipped | 4x repeated | 4x clean |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, row in results["kinds"].items():
        if "held_out" not in row:
            continue
        t, h, lf = row["training"], row["held_out"], row["long_form"]
        aligned = (
            f"{t['aligned_at_minutes']:.1f} / {t['aligned_at_step']}"
            if t["aligned_at_step"] is not None
            else "not reached"
        )
        clean = f"{lf['4']['clean']:.0%}" if "clean" in lf["4"] else "–"  # results of older versions lack it
        lines.append(
            f"| {kind} | {t['steps']} | {aligned} | {h['focus']:.3f} | {h['coverage']:.3f} | {h['monotonic']:.0%} "
            f"| {h['stop_token']:.0%} | {h['aligned']:.0%} | {lf['2']['end_and_stop']:.0%} | "
            f"{lf['4']['end_and_stop']:.0%} "
            f"| {lf['8']['end_and_stop']:.0%} | {lf['4']['skipped']:.0%} | {lf['4']['repeated']:.0%} | {clean} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
