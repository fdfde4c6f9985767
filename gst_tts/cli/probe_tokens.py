"""Measure what each style token does to pitch, speaking rate and energy: the map from tokens to style.

The measures are :func:`gst_tts.analysis.prosody.measure_prosody`'s. Example::

    gst-tts probe-tokens --checkpoint last.pt --scales 0.25,0.5,1,2 --repeats 3 --csv tokens.csv

A fixed sentence is synthesized in the neutral default style and with each token turned up at a
few scales, all in one batch. How a token is turned up (``--control``):

* ``dial`` (default): every head alone, as a token dial (``synthesize --style-dials
  HEAD:TOKEN=SCALE``: that head's weights moved from neutral toward the token by ``scale``; see
  :meth:`~gst_tts.inference.style.StyleResolver.dial_weights`);
* ``weight``: the token alone in every head (``--style-weights TOKEN=SCALE``: weight ``scale``,
  every other token 0), the control of Wang et al. 2018.

For each output:

* median F0 over voiced frames (``librosa.pyin``), and its change from neutral in semitones;
* speaking rate: letters per second of speech (leading/trailing silence excluded), and its
  ratio to neutral;
* energy: mean frame level of the predicted mel (dB) over non-silent frames, and its change
  from neutral. Measured on the mel because the Griffin-Lim output is peak-normalised.

With ``--repeats N`` every style is synthesized N times (seeds ``seed … seed+N-1``; prenet
dropout makes outputs vary) and the medians are reported. Rows whose output ran into the
decoder step bound are marked: their numbers describe a failure, not a style.

``--save-dials`` (with ``--control dial``) names every dial by what it did at amount 1 (or the
largest scale under it) and writes the names and figures beside the checkpoint (``best.pt`` →
``best.dials.json``; :mod:`gst_tts.inference.dial_names`), where ``gst-tts serve`` finds them: its
page then offers the dials by name.

Below the table, the most graded control of pitch and of rate: of the (head,) tokens whose F0
(rate) changes monotonically over the scales, the one whose smallest step between neighbouring
scales is largest. A switch (a jump at one scale, little change at the others) scores low.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.contrib.logging import logging_redirect_tqdm

from gst_tts.analysis.prosody import measure_prosody
from gst_tts.audio.io import write_wav
from gst_tts.cli.args import (
    add_decoding_arguments,
    add_model_arguments,
    add_progress_argument,
    add_seed_argument,
    add_text_arguments,
    decoding_options,
    deprecated_flag,
    load_synthesizer,
    one_text,
)
from gst_tts.cli.outputs import check_writable_location, write_csv
from gst_tts.errors import GstTtsError
from gst_tts.inference.dial_names import dials_path, named_dials, write_dials
from gst_tts.inference.results import SynthesisResult
from gst_tts.inference.style import Style
from gst_tts.progress import progress_bar

DEFAULT_SENTENCE = "The quick brown fox jumps over the lazy dog, and then it rests in the shade."

COLUMNS = [
    "head",
    "token",
    "scale",
    "f0_hz",
    "d_f0_semitones",
    "rate_letters_per_s",
    "rate_ratio",
    "energy_db",
    "d_energy_db",
    "duration_s",
    "stopped_on_bound",
]


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p, vocoder=True)
    text = add_text_arguments(
        p,
        default=DEFAULT_SENTENCE,
        text_help="the fixed sentence to speak (default: a pangram)",
        file_help="the fixed sentence to speak, its lines joined",
    )
    deprecated_flag(text, "--sentence", "--text", dest="text")
    p.add_argument(
        "--control",
        choices=("dial", "weight"),
        default="dial",
        help="dial: each head alone, moved from neutral toward the token (--style-dials);"
        " weight: the token alone in every head (--style-weights). Default dial",
    )
    p.add_argument(
        "--scales", default="0.5,1,2", help="dial amounts or weights tried, comma-separated (default 0.5,1,2)"
    )
    p.add_argument("--tokens", default=None, help="only these tokens, e.g. 0,3,7 (default: all)")
    p.add_argument("--repeats", type=int, default=1, help="syntheses per style, medians reported (default 1)")
    add_seed_argument(p, "the first repeat")
    p.add_argument("--csv", type=Path, default=None, help="also write the table as CSV")
    deprecated_flag(p, "--out", "--csv", dest="csv", type=Path)
    p.add_argument("--audio-dir", type=Path, default=None, help="also write every synthesized wav here")
    p.add_argument(
        "--save-dials",
        action="store_true",
        help="name every dial by what it did and write the names beside the checkpoint (NAME.dials.json),"
        " where gst-tts serve's page finds them (--control dial only)",
    )
    add_decoding_arguments(p, batch_what="styles")
    add_progress_argument(p)


def _number_list(spec: str, what: str, cast=float) -> list:
    try:
        values = [cast(s) for s in spec.split(",") if s.strip()]
    except ValueError:
        raise GstTtsError(f"{what}: {spec!r} is not a comma-separated list of numbers") from None
    if not values:
        raise GstTtsError(f"{what} is empty")
    if any(not math.isfinite(float(v)) for v in values):
        raise GstTtsError(f"{what}: values must be finite")
    return values


def measure(result: SynthesisResult) -> dict[str, float]:
    """The prosody of one output (see :func:`measure_prosody`), with its duration and whether it hit the bound."""
    p = measure_prosody(result.audio, result.sample_rate, result.mel, result.hop_length, result.cleaned_text)
    return {
        "f0_hz": p.f0_hz,
        "rate_letters_per_s": p.rate_letters_per_s,
        "energy_db": p.energy_db,
        "duration_s": result.duration_s,
        "stopped_on_bound": float(result.stopped_on_bound),
    }


def _median(rows: list[dict[str, float]]) -> dict[str, float]:
    out = {}
    for key in rows[0]:
        values = np.array([r[key] for r in rows], dtype=float)
        finite = values[np.isfinite(values)]
        out[key] = float(np.median(finite)) if finite.size else float("nan")
    return out


def _fmt(value: Any, digits: int = 2) -> str:
    if isinstance(value, float):
        return "-" if not math.isfinite(value) else f"{value:.{digits}f}"
    return str(value)


def run(args: argparse.Namespace) -> int:
    scales = _number_list(args.scales, "--scales")
    if args.repeats < 1:
        raise GstTtsError(f"--repeats must be at least 1, got {args.repeats}")
    options = decoding_options(args)
    sentence = one_text(args)
    for path, what in ((args.csv, "--csv"), (args.audio_dir, "--audio-dir")):
        if path is not None:
            check_writable_location(path if what == "--csv" else path / "x", what)
    dials_file = None
    if args.save_dials:
        if args.control != "dial":
            raise GstTtsError("--save-dials names dials: it needs --control dial (the default)")
        dials_file = dials_path(args.checkpoint)
        check_writable_location(dials_file, "--save-dials")
    synth = load_synthesizer(args)
    tokens = list(range(synth.n_tokens)) if args.tokens is None else _number_list(args.tokens, "--tokens", int)
    bad = [t for t in tokens if not 0 <= t < synth.n_tokens]
    if bad:
        raise GstTtsError(f"--tokens: {bad} not in 0..{synth.n_tokens - 1}")
    synth.symbols.encode(sentence)  # TextError before any work

    # Style 0 is neutral; then every control (a head's dial, or a token in every head) at every scale.
    heads: list[int | None] = list(range(synth.n_heads)) if args.control == "dial" else [None]
    controls = [(h, t) for h in heads for t in tokens]
    labels = [("", "neutral", "")] + [
        ("all" if h is None else str(h), str(t), f"{s:g}") for h, t in controls for s in scales
    ]
    styles = [None] + [_style(args.control, h, t, s) for h, t in controls for s in scales]
    names = ["neutral"] + [f"{'' if h is None else f'head {h} '}token {t} × {s:g}" for h, t in controls for s in scales]
    measured: list[list[dict[str, float]]] = [[] for _ in styles]
    with logging_redirect_tqdm():
        bar = progress_bar(
            total=len(styles) * args.repeats, desc="probe tokens", unit="clip", enabled=not args.no_progress
        )
        for r in range(args.repeats):
            results = synth.synthesize(
                [sentence] * len(styles), styles=styles, seed=args.seed + r, names=names, **options
            )
            for i, res in enumerate(results):
                measured[i].append(measure(res))  # pyin is the slow part
                if args.audio_dir is not None:
                    h, t, s = labels[i]
                    name = "neutral" if t == "neutral" else f"{'' if h == 'all' else f'head{h}_'}token{int(t):02d}_x{s}"
                    write_wav(args.audio_dir / f"{name}_r{r}.wav", res.audio, res.sample_rate)
                bar.update(1)
        bar.close()

    med = [_median(m) for m in measured]
    base = med[0]
    rows = []
    for (h, t, s), m in zip(labels, med):
        d_f0 = 12.0 * math.log2(m["f0_hz"] / base["f0_hz"]) if m["f0_hz"] > 0 and base["f0_hz"] > 0 else float("nan")
        rows.append(
            {
                "head": h,
                "token": t,
                "scale": s,
                "f0_hz": m["f0_hz"],
                "d_f0_semitones": d_f0,
                "rate_letters_per_s": m["rate_letters_per_s"],
                "rate_ratio": m["rate_letters_per_s"] / base["rate_letters_per_s"],
                "energy_db": m["energy_db"],
                "d_energy_db": m["energy_db"] - base["energy_db"],
                "duration_s": m["duration_s"],
                "stopped_on_bound": bool(m["stopped_on_bound"] >= 0.5),
            }
        )

    if args.csv is not None:
        write_csv(
            args.csv,
            COLUMNS,
            [
                [round(v, 4) if isinstance(v, float) and math.isfinite(v) else v for v in (row[c] for c in COLUMNS)]
                for row in rows
            ],
        )

    headers = [
        "head",
        "token",
        "scale",
        "F0 Hz",
        "ΔF0 st",
        "rate l/s",
        "rate ×",
        "energy dB",
        "Δenergy dB",
        "dur s",
        "stop",
    ]
    table = [
        [
            row["head"],
            row["token"],
            row["scale"],
            _fmt(row["f0_hz"], 1),
            _fmt(row["d_f0_semitones"], 2),
            _fmt(row["rate_letters_per_s"], 1),
            _fmt(row["rate_ratio"], 2),
            _fmt(row["energy_db"], 1),
            _fmt(row["d_energy_db"], 2),
            _fmt(row["duration_s"], 2),
            "bound!" if row["stopped_on_bound"] else "token",
        ]
        for row in rows
    ]
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(headers)]
    print("  ".join(h.rjust(w) for h, w in zip(headers, widths)))
    for r in table:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
    n_bound = sum(row["stopped_on_bound"] for row in rows)
    print(
        f"{len(rows)} styles × {args.repeats} repeat(s) of {sentence!r}; {n_bound} stopped on the step bound"
        + (" (their numbers describe a failure, not a style)" if n_bound else "")
        + (f"; table in {args.csv}" if args.csv is not None else "")
    )
    for line in graded_controls(rows, scales):
        print(line)
    if dials_file is not None:
        amount = dial_amount(scales)
        dials = named_dials(rows, amount)
        write_dials(
            dials_file, dials, checkpoint=args.checkpoint, sentence=sentence, repeats=args.repeats, seed=args.seed
        )
        effective = sum(d.effect >= 1.0 for d in dials)
        print(
            f"dial names (at amount {amount:g}): {dials_file}; {effective} of {len(dials)} dials change pitch, rate"
            " or energy noticeably"
        )
    return 0


def dial_amount(scales: list[float]) -> float:
    """The probed amount dials are named at: 1 where probed, else the largest under 1, else the smallest."""
    if 1.0 in scales:
        return 1.0
    under = [s for s in scales if s < 1.0]
    return max(under) if under else min(scales)


def _style(control: str, head: int | None, token: int, scale: float) -> Style:
    if control == "weight":
        return Style(weights={token: scale})
    return Style(dials={(head, token): scale})


def graded_controls(rows: list[dict[str, Any]], scales: list[float]) -> list[str]:
    """One line each for pitch and rate: of the controls whose measure is monotone over the scales,
    the one with the largest smallest step (semitones; log ratio for rate). Rows that hit the step
    bound disqualify their control."""
    order = np.argsort(scales)
    by_control: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows[1:]:
        by_control.setdefault((row["head"], row["token"]), []).append(row)
    lines = []
    for what, key, unit, fmt in (
        ("pitch", "d_f0_semitones", "semitones", "{:+.1f}"),
        ("rate", "rate_ratio", "× neutral", "{:.2f}"),
    ):
        best = None
        for (head, token), group in by_control.items():
            if len(group) != len(scales) or len(scales) < 2 or any(r["stopped_on_bound"] for r in group):
                continue
            values = np.array([group[i][key] for i in order], dtype=float)
            if not np.isfinite(values).all() or (key == "rate_ratio" and (values <= 0).any()):
                continue
            steps = np.diff(np.log(values) if key == "rate_ratio" else values)
            if not ((steps > 0).all() or (steps < 0).all()):
                continue
            smallest = float(np.min(np.abs(steps)))
            if best is None or smallest > best[0]:
                best = (smallest, head, token, values)
        scale_text = ", ".join(f"{scales[i]:g}" for i in order)
        if best is None:
            lines.append(f"{what}: no token changes it monotonically over the scales {scale_text}")
            continue
        _, head, token, values = best
        where = f"token {token}" if head == "all" else f"head {head} token {token}"
        lines.append(
            f"{what}: most graded control is {where}: {', '.join(fmt.format(v) for v in values)} {unit}"
            f" at scales {scale_text}"
        )
    return lines
