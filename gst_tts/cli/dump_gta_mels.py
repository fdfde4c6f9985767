"""Write ground-truth-aligned (GTA) mels of a corpus: a checkpoint's teacher-forced mels, for fine-tuning a vocoder on them.

Examples::

    gst-tts dump-gta-mels --checkpoint runs/lj/checkpoints/last.pt --corpus /data/LJSpeech-1.1 --out gta/
    gst-tts-train-vocoder data.root=/data/LJSpeech-1.1 data.gta_dir=gta \\
        trainer.init_from=runs/voc/checkpoints/last.pt hydra.run.dir=runs/voc_gta

Each utterance goes through the model teacher-forced (:mod:`gst_tts.inference.teacher_forcing`):
its frames line up with the recording's, trimmed to whole decoder steps. Written to ``--out``: one
``<id>.npy`` per utterance (``(frames, n_mels)`` float32 natural-log mel, not normalised) and then
``manifest.json`` (feature settings, checkpoint, frame counts), each file atomically.
"""  # noqa: E501 (line 1 is the command's --help description, gst_tts/cli/__init__.py: one line)

from __future__ import annotations

import argparse
from pathlib import Path

from gst_tts.cli.args import add_batch_size_argument, add_progress_argument, add_seed_argument
from gst_tts.cli.outputs import check_writable_location
from gst_tts.errors import GstTtsError
from gst_tts.progress import progress_bar


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", type=Path, required=True, help="trained gst-tts checkpoint (.pt)")
    p.add_argument("--corpus", type=Path, required=True, help="LJSpeech-format corpus (the vocoder's training corpus)")
    p.add_argument("--out", type=Path, required=True, help="folder for <id>.npy and manifest.json")
    p.add_argument(
        "--cache-dir", type=Path, default=None, help="feature cache (default: ~/.cache/gst-tts/<corpus>-<hash>)"
    )
    add_batch_size_argument(p, "utterances")
    p.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: cuda when available, else cpu)")
    add_seed_argument(p, "the prenet dropout")
    add_progress_argument(p)


def run(args: argparse.Namespace) -> int:
    from gst_tts.data.cache import default_cache_dir
    from gst_tts.data.corpus import id_file, read_corpus
    from gst_tts.data.gta import MANIFEST, write_gta_manifest
    from gst_tts.files import write_npy
    from gst_tts.inference.synthesizer import Synthesizer
    from gst_tts.inference.teacher_forcing import teacher_forced_mels
    from gst_tts.checkpoints.acoustic import load_checkpoint

    if args.batch_size < 1:
        raise GstTtsError(f"--batch-size must be at least 1, got {args.batch_size}")
    if args.out.exists() and not args.out.is_dir():
        raise GstTtsError(f"--out {args.out} is a file; give a folder")
    check_writable_location(args.out / MANIFEST, "--out")
    synth = Synthesizer.from_checkpoint(args.checkpoint, device=args.device)  # checks the checkpoint's parts
    step = int(load_checkpoint(args.checkpoint).get("step", 0))
    utterances = read_corpus(args.corpus)
    entries: dict[str, int] = {}
    bar = progress_bar(total=len(utterances), desc="GTA mels", unit="utt", enabled=not args.no_progress)
    for utt_id, mel in teacher_forced_mels(
        synth, utterances, args.cache_dir or default_cache_dir(args.corpus), batch_size=args.batch_size, seed=args.seed
    ):
        write_npy(id_file(args.out, utt_id, ".npy"), mel)
        entries[utt_id] = len(mel)
        bar.update(1)
    bar.close()
    write_gta_manifest(
        args.out,
        audio_config=synth.audio_config,
        checkpoint=args.checkpoint,
        step=step,
        reduction_factor=synth.model.reduction_factor,
        entries=entries,
    )
    print(
        f"wrote the GTA mels of {len(entries)} utterances ({sum(entries.values())} frames) to {args.out}; "
        f"train a vocoder on them with data.gta_dir={args.out}"
    )
    return 0
