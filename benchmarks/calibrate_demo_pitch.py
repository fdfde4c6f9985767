"""Measure the demo corpus's pitch calibration: median F0 per espeak variant and pitch line.

Usage::

    python benchmarks/calibrate_demo_pitch.py [--variants m3,f1] [--sentences 3]

For every variant (default: ``CORPUS_VARIANTS`` and ``UNSEEN_VARIANTS`` of
``gst_tts.demo.corpus``), each pitch line ``pitch BASE BASE*RATIO`` of the calibration grid
(the corpus's ``_CALIBRATION_BASES_HZ`` x ``_CALIBRATION_RATIOS``) renders ``--sentences``
generated sentences (seed 777) at 175 wpm, espeak pitch and range parameters 50, no word gap and
no formant scaling; ``librosa.pyin`` (40-600 Hz) gives the median F0 over the voiced frames of
the clips together. Prints each variant's table, then the geometric mean over the variants (the
table the corpus stores) and each variant's largest deviation from it. Not run by ``make bench``
(its name does not start with ``bench_``): it takes a few minutes and measures espeak, not us.
"""

from __future__ import annotations

import argparse
from pathlib import Path
import sys

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gst_tts.analysis.prosody import median_f0  # noqa: E402
from gst_tts.demo import corpus  # noqa: E402
from gst_tts.demo.espeak import SHARED_SYNTH, builtin_variant  # noqa: E402
from gst_tts.demo.sentences import generate_sentences  # noqa: E402

TEXT_SEED = 777
RATE_WPM = 175
F0_SEARCH_HZ = (40.0, 600.0)


def measure(variant: str, texts: list[str]) -> np.ndarray:
    """``(bases, ratios)`` median F0 (Hz) of ``variant`` over the calibration grid."""
    table = np.zeros((len(corpus._CALIBRATION_BASES_HZ), len(corpus._CALIBRATION_RATIOS)))
    for i, base in enumerate(corpus._CALIBRATION_BASES_HZ):
        for j, ratio in enumerate(corpus._CALIBRATION_RATIOS):
            text = builtin_variant(variant) + f"\npitch {int(base)} {int(round(base * ratio))}\n"
            clips = [SHARED_SYNTH.synthesize(t, corpus.CORPUS_VOICE, RATE_WPM, 50, 50, variant=text) for t in texts]
            table[i, j] = median_f0(np.concatenate(clips), corpus.SAMPLE_RATE, f0_range_hz=F0_SEARCH_HZ).median_hz
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variants", default=",".join(corpus.CORPUS_VARIANTS + corpus.UNSEEN_VARIANTS))
    parser.add_argument("--sentences", type=int, default=3)
    args = parser.parse_args()
    texts = generate_sentences(args.sentences, TEXT_SEED)
    tables = {}
    for variant in args.variants.split(","):
        tables[variant] = measure(variant, texts)
        print(
            f"{variant}: " + "  ".join("(" + ", ".join(f"{v:.1f}" for v in row) + ")" for row in tables[variant]),
            flush=True,
        )
    mean = np.exp(np.mean([np.log(t) for t in tables.values()], axis=0))
    print(f"bases {corpus._CALIBRATION_BASES_HZ} x ratios {corpus._CALIBRATION_RATIOS}, geometric mean over variants:")
    for row in mean:
        print("    (" + ", ".join(f"{v:.1f}" for v in row) + "),")
    for variant, table in tables.items():
        print(f"{variant}: largest deviation {100 * np.max(np.abs(table / mean - 1)):.1f} %")
    print(f"max_deviation_percent={100 * max(np.max(np.abs(t / mean - 1)) for t in tables.values()):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
