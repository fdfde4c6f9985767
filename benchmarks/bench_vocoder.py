"""A trained vocoder against Griffin-Lim: copy-synthesis quality, voicing of synthesized speech, speed.

Usage::

    python benchmarks/bench_vocoder.py [--vocoder demo_out/vocoder/checkpoints/last.pt]
        [--corpus demo_out/corpus] [--checkpoint demo_out/checkpoints/last.pt] [--clips 24]
        [--sentences 8] [--out bench_out/vocoder] [--threads N]

Both vocoders get the same log-mels (``gst_tts.audio.features.MelExtractor`` of the recording,
trimmed as the feature cache trims it) in the same process, side by side, alternating which goes
first, after an untimed warm-up. Griffin-Lim runs with the project's defaults
(``GriffinLimVocoder``: 32 iterations, momentum 0.99, power 1.3). Measures
(``gst_tts.analysis.vocoder_quality``): wide-band PESQ, MCD (dB; MFCC-style, from the project's
log-mels, not comparable to SPTK figures in papers), F0 RMSE (cents, frames voiced in both) and
voicing decision error, each against the recording; real-time factor = vocoding seconds / audio
seconds on the CPU with ``--threads`` torch threads (default: all the machine has), the median
over clips (``rtf_total`` in the JSON: all seconds over all audio).

(a) held-out clips of the demo corpus (``--corpus``): the vocoder checkpoint's recorded
    ``val_ids`` when present, else the acoustic checkpoint's validation split; at most
    ``--clips``. Reported overall and for the clips whose median F0 (``prosody.csv``'s ``f0_hz``)
    is under ``--low-f0`` (130 Hz): the ~100 Hz voices whose voicing Griffin-Lim loses.
(b) ``../shared/data/ljspeech-mini`` (``--ljspeech``; skipped with a note when absent): at most
    ``--clips`` clips, real speech the demo vocoder never heard.
(c) with the acoustic checkpoint (``--checkpoint``; skipped when absent): ``--sentences``
    held-out sentences synthesized once (each with its own recording as the style reference), the
    same predicted mels through both vocoders and, when there is one (``--tts-vocoder``), through
    the vocoder fine-tuned on the model's GTA mels: the voiced share of each, beside the recordings'.
(d) on CUDA, when available: the vocoder's real-time factor on the GPU, over the clips of (a).

``--vocoder griffin-lim`` runs the whole bench with Griffin-Lim on both sides: a sanity run whose
differences show Griffin-Lim's own run-to-run spread (its phases start random).
Writes ``OUT/results.json`` (every clip) and ``OUT/results.md`` (the tables), prints the tables and
then ``key=value`` lines. Without ``make demo``'s vocoder at the default paths it is skipped (exit
0, as under ``make bench``); a ``--vocoder`` or ``--corpus`` given and missing is one line, exit 2.
"""

from __future__ import annotations

import argparse
import csv
from dataclasses import asdict
from pathlib import Path
import sys
import time
import warnings

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gst_tts.analysis.vocoder_quality import (  # noqa: E402
    MEASURES,
    copy_synthesis,
    load_recording,
    summarize,
    vocoder_quality,
    voiced_share,
)
from gst_tts.audio.features import AudioConfig, MelExtractor  # noqa: E402
from gst_tts.audio.vocoders import GRIFFIN_LIM, load_vocoder  # noqa: E402
from gst_tts.data.corpus import read_corpus  # noqa: E402
from gst_tts.errors import GstTtsError, VocoderError  # noqa: E402
from gst_tts.files import write_json, write_text  # noqa: E402
from gst_tts.checkpoints.weights import load_weights_only  # noqa: E402

GL, VOC, TTS = "griffin-lim", "vocoder", "tts vocoder"


DEFAULT_VOCODER = str(ROOT / "demo_out" / "vocoder" / "checkpoints" / "last.pt")
DEFAULT_CORPUS = ROOT / "demo_out" / "corpus"
DEFAULT_TTS_VOCODER = ROOT / "demo_out" / "vocoder_gta" / "checkpoints" / "last.pt"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--vocoder",
        default=DEFAULT_VOCODER,
        help="vocoder checkpoint (or a published HiFi-GAN file), or griffin-lim for a sanity run "
        "(default demo_out/vocoder/checkpoints/last.pt, which make demo trains)",
    )
    p.add_argument("--vocoder-config", type=Path, default=None, help="a published HiFi-GAN file's config.json")
    p.add_argument(
        "--tts-vocoder",
        type=Path,
        default=DEFAULT_TTS_VOCODER,
        help="(c) also: a vocoder fine-tuned on the acoustic model's GTA mels, skipped when absent "
        "(default demo_out/vocoder_gta/checkpoints/last.pt, which make demo trains)",
    )
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="the demo corpus (default demo_out/corpus)")
    p.add_argument(
        "--checkpoint",
        type=Path,
        default=ROOT / "demo_out" / "checkpoints" / "last.pt",
        help="acoustic checkpoint: its validation split, its feature settings, and (c) (default "
        "demo_out/checkpoints/last.pt)",
    )
    p.add_argument(
        "--ljspeech",
        type=Path,
        default=ROOT.parent / "shared" / "data" / "ljspeech-mini",
        help="LJSpeech-format clips for (b) (default ../shared/data/ljspeech-mini)",
    )
    p.add_argument("--clips", type=int, default=24, help="at most this many clips per set (default 24)")
    p.add_argument("--sentences", type=int, default=8, help="synthesized held-out sentences for (c) (default 8)")
    p.add_argument(
        "--low-f0", type=float, default=130.0, help="the low-voice subset: median F0 under this (Hz, default 130)"
    )
    p.add_argument(
        "--threads",
        type=int,
        default=torch.get_num_threads(),
        help=f"torch threads for the CPU timings (default {torch.get_num_threads()}, this machine's)",
    )
    p.add_argument("--out", type=Path, default=ROOT / "bench_out" / "vocoder")
    args = p.parse_args(argv)
    if args.clips < 1 or args.sentences < 0:
        p.error("--clips must be >= 1 and --sentences >= 0")
    try:
        return _run(args)
    except GstTtsError as exc:  # a vocoder that does not load or match, an unreadable corpus: one line
        print(f"bench_vocoder: error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    sanity = args.vocoder == GRIFFIN_LIM
    vocoder_path = None if sanity else Path(args.vocoder)
    if args.vocoder == DEFAULT_VOCODER and args.corpus == DEFAULT_CORPUS and not vocoder_path.is_file():
        # `make bench` on a machine without a demo run: skipped like the other benchmarks, not a failure.
        print(f"skipped: no demo vocoder at {vocoder_path}; run `make demo` first, or give --vocoder PATH")
        return 0
    if vocoder_path is not None and not vocoder_path.is_file():
        print(
            f"bench_vocoder: no vocoder at {vocoder_path}; run `make demo` first (it trains one into "
            f"DEMO_DIR/vocoder/), or give --vocoder PATH (griffin-lim for a sanity run)",
            file=sys.stderr,
        )
        return 2
    if not (args.corpus / "metadata.csv").is_file():
        print(
            f"bench_vocoder: no corpus at {args.corpus}; run `make demo` first, or give --corpus DIR", file=sys.stderr
        )
        return 2
    torch.set_num_threads(args.threads)
    acoustic = _acoustic_checkpoint(args.checkpoint)
    config = AudioConfig(**acoustic["audio_config"]) if acoustic else AudioConfig()
    vocoders = {
        GL: load_vocoder(GRIFFIN_LIM, audio_config=config),
        VOC: load_vocoder(GRIFFIN_LIM, audio_config=config)
        if sanity
        else load_vocoder(vocoder_path, audio_config=config, config_path=args.vocoder_config, device="cpu"),
    }
    results: dict = {
        "setup": {
            "vocoder": str(args.vocoder),
            "corpus": str(args.corpus),
            "checkpoint": str(args.checkpoint) if acoustic else None,
            "threads": args.threads,
            "clips": args.clips,
            "low_f0_hz": args.low_f0,
            "audio_config": asdict(config),
            "cuda": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
        },
        "sets": {},
        "notes": [],
    }
    notes = results["notes"]

    # (a) the demo corpus's held-out clips
    utterances = read_corpus(args.corpus)
    held_out, source = _held_out(utterances, vocoder_path, acoustic)
    if source is None:
        notes.append(
            f"no recorded validation split (neither checkpoint has val_ids): the last {args.clips} "
            f"utterances of the corpus, which the vocoder may have trained on"
        )
    f0 = _prosody_f0(args.corpus)
    clips = held_out[: args.clips]
    demo = _measure([(u.id, u.audio_path) for u in clips], vocoders, config, "demo corpus")
    label = "demo held-out" if source else "demo, last utterances"
    results["sets"]["demo"] = _summaries(demo, label)
    if f0:
        for row in demo:
            row["f0_hz"] = f0.get(row["id"])
        low = [row for row in demo if f0.get(row["id"], np.inf) < args.low_f0]
        if low:
            results["sets"]["demo_low_f0"] = _summaries(low, f"{label}, median F0 < {args.low_f0:g} Hz")
        else:
            notes.append(f"no measured clip has a median F0 under {args.low_f0:g} Hz")
    else:
        notes.append(f"{args.corpus / 'prosody.csv'} not found: no low-F0 subset")

    # (b) LJSpeech clips
    if (args.ljspeech / "metadata.csv").is_file():
        lj = read_corpus(args.ljspeech)[: args.clips]
        results["sets"]["ljspeech"] = _summaries(
            _measure([(u.id, u.audio_path) for u in lj], vocoders, config, "ljspeech"), args.ljspeech.name
        )
    else:
        notes.append(
            f"ljspeech section skipped: {args.ljspeech} not found (../shared/data sits beside the repo on dev machines)"
        )

    # (c) the acoustic model's own mels
    if acoustic and args.sentences:
        tts_vocoders = dict(vocoders)
        if args.tts_vocoder.is_file():
            tts_vocoders[TTS] = load_vocoder(args.tts_vocoder, audio_config=config, device="cpu")
            results["setup"]["tts_vocoder"] = str(args.tts_vocoder)
        else:
            notes.append(f"no GTA-tuned vocoder at {args.tts_vocoder}: (c) compares Griffin-Lim and --vocoder only")
        results["synthesized"] = _synthesized(args, acoustic, utterances, tts_vocoders, config)
    elif args.sentences:
        notes.append(f"synthesized-speech section skipped: no acoustic checkpoint at {args.checkpoint}")

    # (d) GPU speed
    if torch.cuda.is_available() and not sanity:
        gpu = load_vocoder(vocoder_path, audio_config=config, config_path=args.vocoder_config, device="cuda")
        results["gpu"] = _gpu_rtf(gpu, clips, config)

    write_json(args.out / "results.json", results)
    report = _report(results)
    write_text(args.out / "results.md", report + "\n")
    print(report)
    print(f"\nresults: {args.out / 'results.json'}, {args.out / 'results.md'}")
    for name, row in results["sets"].items():
        for side in (GL, VOC):
            for key in MEASURES:
                print(f"{side.replace('-', '_')}_{key}_{name}={row[side][key]:.4g}")
            print(f"{side.replace('-', '_')}_rtf_{name}={row[side]['rtf']:.4g}")
    for side, share in results.get("synthesized", {}).get("voiced_share", {}).items():
        print(f"voiced_share_{side.replace('-', '_').replace(' ', '_')}={share:.4g}")
    if "gpu" in results:
        print(f"vocoder_rtf_cuda={results['gpu']['rtf']:.4g}")
    return 0


# ---------------------------------------------------------------- inputs


def _acoustic_checkpoint(path: Path) -> dict | None:
    if not path.is_file():
        return None
    from gst_tts.checkpoints.acoustic import load_checkpoint

    return load_checkpoint(path)


def _held_out(utterances: list, vocoder_path: Path | None, acoustic: dict | None) -> tuple[list, str | None]:
    """The held-out utterances in corpus order and where their ids come from."""
    for source, stored in (
        ("the vocoder's val_ids", _vocoder_file(vocoder_path)),
        ("the acoustic checkpoint's val_ids", acoustic),
    ):
        ids = set((stored or {}).get("val_ids") or [])
        if ids:
            return [u for u in utterances if u.id in ids], source
    return utterances[::-1], None


def _vocoder_file(path: Path | None) -> dict | None:
    if path is None:
        return None
    stored = load_weights_only(path, error=VocoderError, what="vocoder file")
    return stored if isinstance(stored, dict) else None


def _prosody_f0(corpus: Path) -> dict[str, float]:
    """Utterance id → median F0 asked of espeak (``prosody.csv``), empty without the file."""
    path = corpus / "prosody.csv"
    if not path.is_file():
        return {}
    with path.open(newline="") as f:
        return {row["id"]: float(row["f0_hz"]) for row in csv.DictReader(f)}


# ---------------------------------------------------------------- measuring


def _measure(clips: list[tuple[str, Path]], vocoders: dict, config: AudioConfig, what: str) -> list[dict]:
    """Copy synthesis of every clip through every vocoder (alternating order), timed and measured."""
    from tqdm import tqdm

    extractor = MelExtractor(config)
    rows = []
    with warnings.catch_warnings(record=True) as caught:  # PESQ's unscored clips: counted in the table instead
        warnings.simplefilter("always")
        for i, (utt_id, path) in enumerate(tqdm(clips, desc=what, unit="clip")):
            recording = load_recording(path, config)
            log_mel = extractor(torch.from_numpy(recording))
            if i == 0:
                for vocoder in vocoders.values():  # untimed warm-up
                    vocoder(log_mel)
            row = {"id": utt_id, "seconds": len(recording) / config.sample_rate}
            for side in (GL, VOC) if i % 2 == 0 else (VOC, GL):
                started = time.perf_counter()
                audio = np.asarray(vocoders[side](log_mel), dtype=np.float32)
                row[f"{side}_vocoding_s"] = time.perf_counter() - started
                row[side] = vocoder_quality(
                    recording, audio, config.sample_rate, config, name=utt_id, extractor=extractor
                ).to_dict()
            rows.append(row)
    for w in caught:
        if not issubclass(w.category, RuntimeWarning) or "PESQ" not in str(w.message):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return rows


def _summaries(rows: list[dict], label: str) -> dict:
    """Per side: the means (``summarize``) and the real-time factor (median over clips; ``rtf_total``:
    all vocoding seconds / all audio seconds); vocoder vs Griffin-Lim."""
    from gst_tts.analysis.vocoder_quality import VocoderQuality

    out: dict = {"label": label, "clips": rows}
    audio_s = sum(r["seconds"] for r in rows)
    for side in (GL, VOC):
        summary = summarize(VocoderQuality(**r[side]) for r in rows).to_dict()
        per_clip = [r[f"{side}_vocoding_s"] / r["seconds"] for r in rows]
        summary["rtf"] = float(np.median(per_clip)) if per_clip else float("nan")  # robust to a busy moment
        summary["rtf_total"] = sum(r[f"{side}_vocoding_s"] for r in rows) / audio_s if audio_s else float("nan")
        out[side] = summary
    out["difference"] = {key: out[VOC][key] - out[GL][key] for key in MEASURES}
    out["rtf_ratio"] = out[VOC]["rtf"] / out[GL]["rtf"] if out[GL]["rtf"] else float("nan")
    return out


def _synthesized(
    args: argparse.Namespace, acoustic: dict, utterances: list, vocoders: dict, config: AudioConfig
) -> dict:
    """(c): held-out sentences synthesized once, their predicted mels through both vocoders."""
    from tqdm import tqdm

    from gst_tts.inference.style import Style
    from gst_tts.inference.synthesizer import Synthesizer

    val_ids = set(acoustic.get("val_ids") or [])
    chosen = [u for u in utterances if u.id in val_ids][: args.sentences]
    if not chosen:
        return {"skipped": f"{args.checkpoint} records no validation sentences of {args.corpus}"}
    synth = Synthesizer.from_checkpoint(args.checkpoint, device="cpu")
    results = synth.synthesize(
        [u.text for u in chosen],
        styles=[Style(reference=u.audio_path) for u in chosen],
        seed=1,
        vocode=False,
        batch_size=8,
        transfer_tempo=False,
    )
    rows = []
    for utt, res in zip(tqdm(chosen, desc="synthesized", unit="sentence"), results):
        row = {
            "id": utt.id,
            "stop_reason": res.stop_reason,
            "aligned": bool(res.health.ok),
            "recording": voiced_share(
                load_recording(utt.audio_path, config), config.sample_rate, hop_length=config.hop_length
            ),
        }
        for side, vocoder in vocoders.items():
            row[side] = voiced_share(vocoder(res.mel), vocoder.sample_rate, hop_length=config.hop_length)
        rows.append(row)
    means = {key: float(np.nanmean([r[key] for r in rows])) for key in ("recording", *vocoders)}
    return {"sentences": len(rows), "voiced_share": means, "rows": rows}


def _gpu_rtf(vocoder, clips: list, config: AudioConfig) -> dict:
    """(d): the vocoder's real-time factor on CUDA over the clips' mels (synchronised)."""
    extractor = MelExtractor(config)
    mels = [extractor(torch.from_numpy(load_recording(u.audio_path, config))) for u in clips]
    copy_synthesis(vocoder, load_recording(clips[0].audio_path, config), config)  # warm-up
    torch.cuda.synchronize()
    started = time.perf_counter()
    for mel in mels:
        vocoder(mel)  # returns numpy: waits for the GPU
    torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    audio_s = sum(len(m) for m in mels) * config.hop_length / config.sample_rate
    return {"device": torch.cuda.get_device_name(), "clips": len(mels), "rtf": seconds / audio_s}


# ---------------------------------------------------------------- report


def _report(results: dict) -> str:
    s = results["setup"]
    lines = [
        f"Vocoder `{s['vocoder']}` vs Griffin-Lim (project defaults), copy synthesis, "
        f"{s['threads']} torch threads (CPU RTF); corpus `{s['corpus']}`.",
        "",
        "| set | clips | vocoder | PESQ | MCD dB | F0 RMSE ct | VDE | RTF CPU |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in results["sets"].values():
        n = row[GL]["count"]
        for side in (GL, VOC):
            m = row[side]
            unscored = n - m["scored"]["pesq"]
            pesq = _num(m["pesq"], ".2f") + (f" ({unscored} unscored)" if unscored else "")
            lines.append(
                f"| {row['label']} | {n} | {side} | {pesq} | {_num(m['mcd_db'], '.2f')} "
                f"| {_num(m['f0_rmse_cents'], '.1f')} | {_num(m['vde'], '.3f')} | {_num(m['rtf'], '.3f')} |"
            )
        d = row["difference"]
        lines.append(
            f"| {row['label']} | {n} | vocoder − GL | {_num(d['pesq'], '+.2f')} | {_num(d['mcd_db'], '+.2f')} "
            f"| {_num(d['f0_rmse_cents'], '+.1f')} | {_num(d['vde'], '+.3f')} | ×{_num(row['rtf_ratio'], '.2f')} |"
        )
    synth = results.get("synthesized")
    if synth and "voiced_share" in synth:
        v = synth["voiced_share"]
        sides = [side for side in (GL, VOC, TTS) if side in v]
        lines += [
            "",
            f"Voiced share of {synth['sentences']} held-out sentences synthesized by `{s['checkpoint']}` "
            f"(the same predicted mels through each vocoder"
            + (f"; tts vocoder `{s['tts_vocoder']}`" if TTS in v else "")
            + "):",
            "",
            "| recordings | " + " | ".join(sides) + " |",
            "|---|" + "---|" * len(sides),
            f"| {v['recording']:.1%} | " + " | ".join(f"{v[side]:.1%}" for side in sides) + " |",
        ]
    elif synth:
        lines += ["", f"synthesized speech: {synth['skipped']}"]
    if "gpu" in results:
        g = results["gpu"]
        lines += ["", f"GPU ({g['device']}): vocoder RTF {g['rtf']:.4f} over {g['clips']} clips"]
    if results["notes"]:
        lines += ["", *(f"- note: {note}" for note in results["notes"])]
    return "\n".join(lines)


def _num(value: float, spec: str) -> str:
    """``value`` formatted, or a dash when it is not a number (a measure no clip could give)."""
    return format(value, spec) if np.isfinite(value) else "–"


if __name__ == "__main__":
    raise SystemExit(main())
