"""Compute and cache log-mel features of an LJSpeech-format corpus (training does this too).

With ``--frontend phonemes`` the transcripts' phonemes are checked and cached as well."""

from __future__ import annotations

import argparse
from pathlib import Path

from gst_tts.audio.features import AudioConfig
from gst_tts.cli.args import add_progress_argument, deprecated_positional
from gst_tts.data.batching import corpus_symbol_table, encode_texts
from gst_tts.data.cache import FeatureCache, default_cache_dir
from gst_tts.data.corpus import read_corpus
from gst_tts.text.frontends import DEFAULT_LANGUAGE, FRONTENDS, make_frontend


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--corpus",
        type=Path,
        default=None,
        metavar="FOLDER",
        help="corpus folder with metadata.csv and wavs/ (required)",
    )
    deprecated_positional(p, new="--corpus", new_dest="corpus", metavar="ROOT", type=Path)
    p.add_argument(
        "--cache-dir", type=Path, default=None, help="feature cache (default: ~/.cache/gst-tts/<corpus>-<hash>)"
    )
    p.add_argument(
        "--sample-rate",
        type=int,
        default=AudioConfig.sample_rate,
        help="sample rate the recordings are resampled to, Hz",
    )
    p.add_argument(
        "--trim-top-db", type=float, default=AudioConfig.trim_top_db, help="silence trim threshold; negative disables"
    )
    p.add_argument("--cleaner", default="english", help="text normalisation the symbols are read with")
    p.add_argument(
        "--frontend",
        choices=FRONTENDS,
        default="characters",
        help="what the model will read (data.text.frontend): characters, or espeak-ng phonemes (cached here)",
    )
    p.add_argument(
        "--language",
        default=DEFAULT_LANGUAGE,
        help="espeak-ng language of the phonemes (data.text.language): en-us, en-gb, de, es, fr, ...",
    )
    add_progress_argument(p)


def run(args: argparse.Namespace) -> int:
    config = AudioConfig(sample_rate=args.sample_rate, trim_top_db=None if args.trim_top_db < 0 else args.trim_top_db)
    frontend = make_frontend(args.frontend, args.language, args.cleaner)
    utterances = read_corpus(args.corpus)
    cache_dir = args.cache_dir or default_cache_dir(args.corpus)
    symbols = corpus_symbol_table(utterances, frontend, cache_dir)
    encode_texts(utterances, symbols)
    cache = FeatureCache(cache_dir, config)
    frames = cache.prepare(utterances, progress=not args.no_progress)
    total_s = sum(frames.values()) / config.frames_per_second
    read = f"{len(symbols) - 2} phoneme symbols ({symbols.language})" if args.frontend == "phonemes" else "characters"
    print(f"{len(frames)} utterances, {total_s / 60:.1f} min of speech, read as {read}; features in {cache.dir}")
    return 0
