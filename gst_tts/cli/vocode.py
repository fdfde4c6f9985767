"""Copy synthesis: a recording → gst-tts log-mel → vocoder → wav; hear what a vocoder makes of real mels.

Examples::

    gst-tts vocode --vocoder hifigan/generator_v1 --reference LJ001-0001.wav --out copy.wav
    gst-tts vocode --vocoder g_02500000 --vocoder-config hifigan/config_v3.json --reference in.wav --out copy.wav
    gst-tts vocode --vocoder griffin-lim --reference in.wav --out copy_gl.wav

The recording is read at any rate and channel count, resampled to the gst-tts feature settings
(``AudioConfig()``: the ones the published LJSpeech HiFi-GAN models share) and not trimmed. With no
checkpoint to look beside, ``--vocoder auto`` is Griffin-Lim.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from gst_tts.audio.features import AudioConfig, MelExtractor
from gst_tts.audio.io import load_audio, write_wav
from gst_tts.audio.vocoders import GRIFFIN_LIM
from gst_tts.cli.args import add_progress_argument, add_vocoder_arguments, deprecated_flag, load_cli_vocoder
from gst_tts.cli.outputs import check_writable_location
from gst_tts.errors import AudioError, GstTtsError
from gst_tts.inference.vocoder_choice import AUTO


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument(
        "--reference",
        type=Path,
        metavar="FILE",
        help="the recording to copy (any format soundfile reads, any rate, stereo ok)",
    )
    deprecated_flag(g, "--wav", "--reference", dest="reference", type=Path)
    p.add_argument("--out", type=Path, required=True, help="the vocoded .wav")
    p.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: cuda when available, else cpu)")
    add_vocoder_arguments(p)
    add_progress_argument(p)  # accepted like every long command's; one vocoder pass shows no bar


def run(args: argparse.Namespace) -> int:
    # Everything is checked before the vocoder runs; the wav is written to a temporary name, then renamed.
    if args.out.suffix.lower() != ".wav":
        raise GstTtsError(f"--out must be a .wav file, got {args.out}")
    if args.out.is_dir():
        raise GstTtsError(f"--out {args.out} is a folder; give a .wav file name")
    check_writable_location(args.out, "--out")
    config = AudioConfig()
    vocoder = load_cli_vocoder(args, config, device=args.device)
    samples, _ = load_audio(args.reference, config.sample_rate)
    if samples.size < config.n_fft:
        raise AudioError(
            f"{args.reference}: too short to vocode ({samples.size} samples at {config.sample_rate} Hz; "
            f"at least {config.n_fft} needed)"
        )
    log_mel = MelExtractor(config)(torch.from_numpy(samples))  # (frames, n_mels)
    audio = vocoder(log_mel)
    write_wav(args.out, audio, vocoder.sample_rate)
    print(
        f"wrote {args.out} ({audio.size / vocoder.sample_rate:.2f} s from {log_mel.shape[0]} frames of "
        f"{args.reference}, "
        f"vocoder {GRIFFIN_LIM if args.vocoder == AUTO else args.vocoder})"
    )
    return 0
