"""Argument groups the ``gst-tts`` commands share, and the objects built from them.

Command modules import from here (and from :mod:`gst_tts.cli.outputs`), never from each other,
so each command can change without touching the others. Defaults shown in ``--help`` come
from the objects the options build (``DecodingConfig``, ``GriffinLimVocoder``), not from here.
"""

from __future__ import annotations

import argparse
import contextlib
from dataclasses import fields
import inspect
from pathlib import Path
import logging
import math
import sys
from typing import Any, Iterator

import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.vocoders import GRIFFIN_LIM, Vocoder, load_vocoder
from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
from gst_tts.audio.vocoders.hifigan_io import DEFAULT_CONFIG_NAME
from gst_tts.errors import GstTtsError, VocoderError
from gst_tts.inference.decoding import UNSPLIT_MAX_SECONDS, DecodingConfig
from gst_tts.inference.style import Style
from gst_tts.inference.style_spec import MAX_STYLE_STRENGTH, ResolvedStyle, check_f0_range, check_style_strength
from gst_tts.inference.style_text import parse_style_mix, parse_style_weights
from gst_tts.inference.synthesizer import INT8_MIN_RNN_DIM, Synthesizer
from gst_tts.inference.tempo import GAIN_LIMITS as TEMPO_GAIN_LIMITS
from gst_tts.inference.vocoder_choice import AUTO, resolve_vocoder

# The text options need no torch, so they live apart for the commands that load none (phonemize).
from gst_tts.cli.text_input import STDIN, add_text_arguments, one_text, read_text_input
from gst_tts.text.split import DEFAULT_MAX_CHARS

__all__ = [
    "positive_int",
    "non_negative_float",
    "add_model_arguments",
    "load_synthesizer",
    "add_vocoder_arguments",
    "load_cli_vocoder",
    "add_style_arguments",
    "resolve_cli_style",
    "add_f0_range_argument",
    "f0_range_option",
    "TEMPO_REFERENCE",
    "TEMPO_DECODED",
    "add_tempo_argument",
    "add_decoding_arguments",
    "decoding_options",
    "check_transfer_counts",
    "DEFAULT_SEED",
    "DEFAULT_BATCH_SIZE",
    "add_seed_argument",
    "add_batch_size_argument",
    "add_progress_argument",
    "add_text_arguments",
    "read_text_input",
    "one_text",
    "STDIN",
    "deprecated_flag",
    "deprecated_positional",
    "removed_flag",
    "reference_files",
    "load_synthesizer_described",
    "post_processing",
]

log = logging.getLogger("gst_tts.cli")

#: ``--seed``'s default on every command that has one.
DEFAULT_SEED = 0
#: ``--batch-size``'s default on every command that has one.
DEFAULT_BATCH_SIZE = 16


def add_seed_argument(p: argparse.ArgumentParser, what: str) -> None:
    """``--seed N`` (default :data:`DEFAULT_SEED`); ``what``: what it seeds, for the help text."""
    p.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, metavar="N", help=f"seed of {what} (default {DEFAULT_SEED})"
    )


def add_batch_size_argument(p: argparse.ArgumentParser, what: str) -> None:
    """``--batch-size N`` (default :data:`DEFAULT_BATCH_SIZE`); ``what``: what a batch holds, for the help text."""
    p.add_argument(
        "--batch-size",
        type=int,
        default=DEFAULT_BATCH_SIZE,
        metavar="N",
        help=f"{what} decoded together (default {DEFAULT_BATCH_SIZE})",
    )


def add_progress_argument(p: argparse.ArgumentParser) -> None:
    """``--no-progress``: the command's progress bars show nothing."""
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


# ---------------------------------------------------------------- references


def reference_files(paths: list[Path], option: str = "--references") -> list[Path]:
    """``--references``' recordings: each file as given, each folder's ``.wav`` / ``.flac`` files by
    name (those of ``FOLDER/wavs`` when it holds none itself, as in an LJSpeech corpus).

    Raises:
        GstTtsError: a path that does not exist, or a folder without recordings.
    """
    from gst_tts.analysis.style_transfer import AUDIO_SUFFIXES

    def recordings(folder: Path) -> list[Path]:
        return sorted(f for f in folder.iterdir() if f.is_file() and f.suffix.lower() in AUDIO_SUFFIXES)

    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = recordings(path) or (recordings(path / "wavs") if (path / "wavs").is_dir() else [])
            if not found:
                raise GstTtsError(f"{option} {path}: the folder holds no {' or '.join(AUDIO_SUFFIXES)} files")
            files += found
        elif path.exists():
            files.append(path)
        else:
            raise GstTtsError(f"{option} {path}: no such file or folder")
    return files


# ---------------------------------------------------------------- deprecated spellings


class _DeprecatedFlag(argparse.Action):
    """A hidden old option: says it is deprecated (once per use, on stderr) and stores into the new one's dest."""

    def __init__(self, option_strings, dest, new: str, store_nargs=None, **kwargs):
        self.new = new
        super().__init__(option_strings, dest, nargs=store_nargs, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog}: '{option_string}' is deprecated; use '{self.new}'", file=sys.stderr)
        setattr(namespace, self.dest, values)


def deprecated_flag(
    target: argparse.ArgumentParser | argparse._ArgumentGroup,
    old: str,
    new: str,
    *,
    dest: str,
    nargs: str | None = None,
    type: Any = None,
) -> None:
    """Adds ``old``, hidden from --help, as another spelling of ``new`` (stored in ``dest``), with one
    deprecation line when used. ``target``: the parser, or the mutually exclusive group of ``new``, so
    that giving both is refused."""
    target.add_argument(
        old,
        action=_DeprecatedFlag,
        new=new,
        dest=dest,
        store_nargs=nargs,
        type=type,
        default=None if nargs is None else argparse.SUPPRESS,
        help=argparse.SUPPRESS,
    )


class _RemovedFlag(argparse.Action):
    """A hidden option that no longer exists: one line naming its replacement, exit 2 (argparse's
    own error), rather than argparse's "unrecognized arguments" that names nothing."""

    def __init__(self, option_strings, dest, new: str, why: str, **kwargs):
        self.new, self.why = new, why
        super().__init__(option_strings, dest, nargs="?", **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"{option_string} is gone; use {self.new} ({self.why})")


def removed_flag(target: argparse.ArgumentParser | argparse._ArgumentGroup, old: str, new: str, why: str) -> None:
    """Adds ``old``, hidden from --help, as an option that ends the command with one line naming ``new``."""
    target.add_argument(
        old,
        action=_RemovedFlag,
        new=new,
        why=why,
        dest=argparse.SUPPRESS,
        default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
    )


class _DeprecatedPositional(argparse.Action):
    """A hidden old positional argument standing for a new flag; settled once the line is parsed
    (``gst_tts.cli``'s parser calls :meth:`settle`), so that either order of the two is seen."""

    def __init__(self, option_strings, dest, new: str, new_dest: str, new_required: bool, **kwargs):
        self.new, self.new_dest, self.new_required = new, new_dest, new_required
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)

    def settle(self, namespace: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
        old = getattr(namespace, self.dest, None)
        if hasattr(namespace, self.dest):
            delattr(namespace, self.dest)
        given = old not in (None, [])
        if given:
            if getattr(namespace, self.new_dest) not in (None, []):
                parser.error(f"give {self.new} only (the positional {self.metavar} is its deprecated spelling)")
            print(f"{parser.prog}: positional '{self.metavar}' is deprecated; use '{self.new}'", file=sys.stderr)
            setattr(namespace, self.new_dest, old)
        elif self.new_required and getattr(namespace, self.new_dest) in (None, []):
            parser.error(f"the following arguments are required: {self.new}")


def deprecated_positional(
    p: argparse.ArgumentParser,
    *,
    new: str,
    new_dest: str,
    metavar: str,
    nargs: str = "?",
    type: Any = None,
    required: bool = True,
) -> None:
    """Accepts the old positional form of flag ``new`` (hidden from --help, one deprecation line).
    Declare ``new`` not required; ``required`` makes one of the two required."""
    p.add_argument(
        f"_deprecated_{new_dest}",
        action=_DeprecatedPositional,
        new=new,
        new_dest=new_dest,
        new_required=required,
        nargs=nargs,
        type=type,
        metavar=metavar,
        help=argparse.SUPPRESS,
    )


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def non_negative_float(text: str) -> float:
    """argparse type: a finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text!r}")
    return value


# ---------------------------------------------------------------- model / checkpoint / vocoder

_GRIFFIN_LIM = inspect.signature(GriffinLimVocoder).parameters


def add_model_arguments(p: argparse.ArgumentParser, *, checkpoint_required: bool = True, vocoder: bool = False) -> None:
    """``--checkpoint``, ``--device``, ``--int8``: what :func:`load_synthesizer` needs.

    Args:
        checkpoint_required: ``--checkpoint`` must be given. Default True.
        vocoder: also the vocoder group (:func:`add_vocoder_arguments`), for commands that make
            waveforms. Default False.
    """
    p.add_argument("--checkpoint", type=Path, required=checkpoint_required, help="trained gst-tts checkpoint (.pt)")
    p.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: cuda when available, else cpu)")
    p.add_argument(
        "--int8",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="CPU: int8 weights for the decoder's recurrent matrix products (faster, numerically close); "
        f"default: on for a CPU and decoder LSTMs of {INT8_MIN_RNN_DIM} units or more (Tacotron 2 "
        "sizes), off otherwise",
    )
    if vocoder:
        add_vocoder_arguments(p)


def add_vocoder_arguments(p: argparse.ArgumentParser) -> None:
    """The vocoder group: ``--vocoder auto|griffin-lim|PATH``, ``--vocoder-config``, ``--griffin-lim-iters``,
    ``--griffin-lim-momentum``; :func:`load_synthesizer` / :func:`load_cli_vocoder` build what they describe."""
    iters, momentum = _GRIFFIN_LIM["n_iter"].default, _GRIFFIN_LIM["momentum"].default
    g = p.add_argument_group("vocoder")
    g.add_argument(
        "--vocoder",
        default=AUTO,
        metavar=f"{AUTO}|{GRIFFIN_LIM}|PATH",
        help=f"{AUTO}: the vocoder recorded beside the checkpoint (vocoder.json, as make demo writes it), "
        f"else {GRIFFIN_LIM}; {GRIFFIN_LIM}; or a vocoder file: a gst-tts-train-vocoder checkpoint "
        "(generator.pt; HiFi-GAN, or the spectral vocoder of the cpu_small preset) or a published "
        f"HiFi-GAN g_XXXXXXXX / generator_v1 (default {AUTO})",
    )
    g.add_argument(
        "--vocoder-config",
        type=Path,
        default=None,
        metavar="PATH",
        help=f"a published HiFi-GAN file's config.json (default: {DEFAULT_CONFIG_NAME} beside the --vocoder file)",
    )
    g.add_argument("--griffin-lim-iters", type=int, default=iters, help=f"Griffin-Lim iterations (default {iters})")
    g.add_argument(
        "--griffin-lim-momentum",
        type=float,
        default=momentum,
        help=f"Griffin-Lim momentum, 0 ≤ m < 1 (default {momentum})",
    )


def load_synthesizer(args: argparse.Namespace, *, vocoder: bool = True) -> Synthesizer:
    """The checkpoint's :class:`Synthesizer`, with the vocoder the vocoder options describe when
    the command has them (logged in one line: which vocoder and why); see :func:`load_synthesizer_described`.
    ``vocoder=False`` leaves that to a later :func:`attach_vocoder`, once the inputs are checked."""
    return load_synthesizer_described(args, vocoder=vocoder)[0]


def load_synthesizer_described(args: argparse.Namespace, *, vocoder: bool = True) -> tuple[Synthesizer, str | None]:
    """The checkpoint's :class:`Synthesizer` and the line saying which vocoder speaks and why (None
    for a command without the vocoder options, or with ``vocoder=False``). The options are checked
    before the checkpoint is read; :func:`attach_vocoder` does the rest."""
    _vocoder_options(args)
    synth = Synthesizer.from_checkpoint(args.checkpoint, device=args.device, int8=args.int8)
    return synth, attach_vocoder(synth, args) if vocoder else None


def attach_vocoder(synth: Synthesizer, args: argparse.Namespace) -> str | None:
    """Gives ``synth`` the vocoder the options describe and logs the line saying which and why
    (returned; None for a command without the vocoder options). ``--vocoder auto`` takes the vocoder
    recorded beside the checkpoint, else Griffin-Lim; a vocoder file's features are checked
    against the checkpoint's."""
    options = _vocoder_options(args)
    if options is None:
        return None
    synth.vocoder, description = resolve_vocoder(
        args.vocoder, checkpoint=args.checkpoint, audio_config=synth.audio_config, device=synth.device, **options
    )
    log.info("vocoder: %s", description)
    return description


def load_cli_vocoder(
    args: argparse.Namespace,
    audio_config: AudioConfig,
    device: str | torch.device | None = None,
    *,
    checkpoint: Path | None = None,
) -> Vocoder:
    """The vocoder :func:`add_vocoder_arguments`' options describe, for ``audio_config``'s mels;
    ``--vocoder auto`` looks beside ``checkpoint`` (None: nothing recorded, Griffin-Lim)."""
    options = _vocoder_options(args)
    if args.vocoder == AUTO and checkpoint is None:  # nowhere to look for a record
        return load_vocoder(GRIFFIN_LIM, audio_config=audio_config, **options)
    vocoder, description = resolve_vocoder(
        args.vocoder, checkpoint=checkpoint or Path(), audio_config=audio_config, device=device, **options
    )
    log.info("vocoder: %s", description)
    return vocoder


def _vocoder_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """:func:`resolve_vocoder` keyword arguments from the vocoder group, checked; ``None`` without the group."""
    if getattr(args, "griffin_lim_iters", None) is None:
        return None
    if args.vocoder not in (GRIFFIN_LIM, AUTO):
        if not Path(args.vocoder).is_file():
            raise VocoderError(f"--vocoder {args.vocoder}: no such file (give {AUTO}, {GRIFFIN_LIM} or a vocoder file)")
        return dict(config_path=args.vocoder_config)
    if args.vocoder_config is not None:
        raise VocoderError(f"--vocoder-config applies to a HiFi-GAN --vocoder file, not to {args.vocoder}")
    if args.griffin_lim_iters < 1:
        raise GstTtsError(f"--griffin-lim-iters must be at least 1, got {args.griffin_lim_iters}")
    if not 0.0 <= args.griffin_lim_momentum < 1.0:
        raise GstTtsError(f"--griffin-lim-momentum must be in [0, 1), got {args.griffin_lim_momentum}")
    return dict(n_iter=args.griffin_lim_iters, momentum=args.griffin_lim_momentum)


# ---------------------------------------------------------------- style


def add_style_arguments(p: argparse.ArgumentParser) -> None:
    """``--reference``, ``--style-weights``, ``--style-dials``, ``--style-mix`` (at most one; none:
    the neutral style)."""
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--reference",
        type=Path,
        metavar="FILE",
        help="style transfer: speak in the style of this recording (any rate, stereo ok)",
    )
    g.add_argument(
        "--style-weights",
        metavar="SPEC",
        help='style control by token weights, e.g. "3=0.4,7=-0.2" (every head) or "1:3=0.4" (head 1 only);'
        " unnamed tokens get 0",
    )
    g.add_argument(
        "--style-dials",
        metavar="SPEC",
        help='style control relative to neutral, e.g. "1:6=0.5" (head 1 halfway from neutral to token 6)'
        ' or "4=-0.3" (every head); 0 is neutral, 1 the token alone. `probe-tokens` shows what each dial does',
    )
    g.add_argument("--style-mix", metavar="SPEC", help='weighted mix of references, e.g. "a.wav=0.5,b.wav=0.5"')
    p.add_argument(
        "--style-strength",
        type=style_strength,
        metavar="S",
        help=f"with --reference or --style-mix: how far the style moves from neutral toward the reference's"
        f" (0 neutral, 1 the reference (default), above 1 exaggerates; 0 to {MAX_STYLE_STRENGTH:g})",
    )


#: ``--f0-range`` words: the reference's spread, or the spread as decoded.
F0_RANGE_REFERENCE, F0_RANGE_DECODED = "reference", "decoded"


def add_f0_range_argument(p: argparse.ArgumentParser, *, numbers: bool = True) -> None:
    """``--f0-range``: whose F0 spread the spectral vocoder gives the output (``numbers``: a
    spread in semitones may be given too)."""
    choices = f"{F0_RANGE_REFERENCE}, {F0_RANGE_DECODED}" + (" or semitones" if numbers else "")
    p.add_argument(
        "--f0-range",
        type=f0_range_option if numbers else str,
        default=F0_RANGE_DECODED,
        metavar="ST" if numbers else "WHOSE",
        choices=None if numbers else [F0_RANGE_REFERENCE, F0_RANGE_DECODED],
        help=f"intonation width ({choices}): '{F0_RANGE_DECODED}' (default) keeps the model's own;"
        f" '{F0_RANGE_REFERENCE}' copies the reference's F0 spread (10th to 90th percentile) onto the output after the"
        " model, where the vocoder can (the spectral vocoder with a pitch head): signal processing, not the "
        "model's style"
        + (
            "; a number sets that spread in semitones, with any style (within a factor of 0.5 to 3 of the model's)"
            if numbers
            else ""
        ),
    )


def f0_range_option(text: str) -> str | float:
    """argparse type: ``reference``, ``decoded`` or an F0 spread in semitones
    (:func:`~gst_tts.inference.style_spec.check_f0_range`)."""
    if text in (F0_RANGE_REFERENCE, F0_RANGE_DECODED):
        return text
    try:
        return check_f0_range(text)
    except GstTtsError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (or '{F0_RANGE_REFERENCE}', '{F0_RANGE_DECODED}')") from None


#: ``--tempo`` words: the reference's tempo, or the tempo as decoded.
TEMPO_REFERENCE, TEMPO_DECODED = "reference", "decoded"


def add_tempo_argument(p: argparse.ArgumentParser) -> None:
    """``--tempo``: whose speaking rate the output has (default the model's own)."""
    low, high = TEMPO_GAIN_LIMITS
    p.add_argument(
        "--tempo",
        default=TEMPO_DECODED,
        choices=[TEMPO_REFERENCE, TEMPO_DECODED],
        metavar="WHOSE",
        help=f"speaking rate ({TEMPO_DECODED} or {TEMPO_REFERENCE}): '{TEMPO_DECODED}' (default) keeps the model's own;"
        f" '{TEMPO_REFERENCE}' retimes the output after the model so its letters per second of speech follow the"
        " reference's (estimated from its syllable nuclei; moved by any style strength, by a factor of"
        f" {low:g} to {high:g} at most): signal processing, not the model's style",
    )


def post_processing(synth: Synthesizer, *, tempo: bool, f0_range: bool) -> tuple[dict[str, bool], str]:
    """The copies after the model a figure-taking command was asked for: ``synthesize``'s
    ``transfer_tempo`` / ``transfer_f0_range`` (the F0 range only where the vocoder can set one),
    and their label for the report ("tempo and F0 range", "tempo", …; "" for none)."""
    f0_range = f0_range and synth.transfers_f0_range
    label = " and ".join(what for what, on in (("tempo", tempo), ("F0 range", f0_range)) if on)
    return {"transfer_tempo": tempo, "transfer_f0_range": f0_range}, label


def style_strength(text: str) -> float:
    """argparse type: a style strength (:func:`~gst_tts.inference.style_spec.check_style_strength`)."""
    try:
        return check_style_strength(text)
    except GstTtsError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def resolve_cli_style(
    synth: Synthesizer, args: argparse.Namespace, *, after_the_model: bool = False
) -> tuple[ResolvedStyle, dict[str, Any]]:
    """The style the options ask for, resolved once (one reading of each reference), and a JSON
    description of it. ``after_the_model``: also what ``--f0-range`` and ``--tempo`` ask done after
    the model (call once the vocoder is attached: only the spectral vocoder with a pitch head sets
    an F0 spread), described under ``f0_range`` and ``tempo``.

    Errors in a spec name its option (``--style-weights: token 7 is not in 0..4``).
    """
    strength = getattr(args, "style_strength", None)
    reference, mix = getattr(args, "reference", None), None
    if getattr(args, "style_mix", None) is not None:
        with _option_errors("--style-mix"):
            mix = parse_style_mix(args.style_mix)
    if strength is not None and reference is None and mix is None:
        raise GstTtsError("--style-strength needs --reference or --style-mix (it scales a reference's style)")
    f0_choice = getattr(args, "f0_range", F0_RANGE_DECODED) if after_the_model else F0_RANGE_DECODED
    tempo_choice = getattr(args, "tempo", TEMPO_DECODED) if after_the_model else TEMPO_DECODED
    sets_f0 = synth.transfers_f0_range
    if not sets_f0 and f0_choice not in (F0_RANGE_DECODED, F0_RANGE_REFERENCE):
        log.warning(
            "--f0-range %g: this vocoder keeps the model's F0 spread "
            "(only the spectral vocoder with a pitch head sets one)",
            f0_choice,
        )
    given_f0 = float(f0_choice) if sets_f0 and not isinstance(f0_choice, str) else None
    shown = {} if strength is None else {"strength": strength}
    option = None
    if reference is not None:
        style, info = (
            Style(reference=reference, strength=strength, f0_range=given_f0),
            {
                "source": "reference",
                "reference": str(reference),
                **shown,
            },
        )
    elif getattr(args, "style_weights", None) is not None:
        option, info = "--style-weights", {"source": "style_weights", "spec": args.style_weights}
        with _option_errors(option):
            style = Style(weights=parse_style_weights(args.style_weights), f0_range=given_f0)
    elif getattr(args, "style_dials", None) is not None:
        option, info = "--style-dials", {"source": "style_dials", "spec": args.style_dials}
        with _option_errors(option):
            style = Style(dials=parse_style_weights(args.style_dials), f0_range=given_f0)
    elif mix is not None:
        style = Style(mix=mix, strength=strength, f0_range=given_f0)
        info = {"source": "style_mix", "mix": {str(p): w for p, w in mix}, **shown}
    else:
        style = Style(f0_range=given_f0)
        described = (
            "uniform weights 1/n_tokens in every head"
            if synth.styles.neutral_weights is None
            else "the mean token weights of the training references"
        )
        info = {"source": "neutral", "description": described}
    has_reference = reference is not None or mix is not None
    with _option_errors(option) if option else contextlib.nullcontext():  # a bad reference names its file
        (resolved,) = synth.styles.resolve_styles(
            [style],
            f0_range=sets_f0,
            reference_f0_range=sets_f0 and has_reference and f0_choice == F0_RANGE_REFERENCE,
            reference_tempo=has_reference and tempo_choice == TEMPO_REFERENCE,
        )
    if after_the_model:
        f0, tempo = resolved.f0_target, resolved.tempo_target
        info["f0_range"] = (
            {"source": F0_RANGE_DECODED}
            if f0 is None
            else {"source": "given", "semitones": given_f0}
            if given_f0 is not None
            else {"source": F0_RANGE_REFERENCE, "semitones": round(f0.semitones, 2), "strength": f0.strength}
        )
        info["tempo"] = (
            {"source": TEMPO_DECODED}
            if tempo is None
            else {"source": TEMPO_REFERENCE, "letters_per_s": round(tempo.letters_per_s, 2), "strength": tempo.strength}
        )
    return resolved, info


@contextlib.contextmanager
def _option_errors(option: str) -> Iterator[None]:
    """Prefixes a GstTtsError raised in the block with the option its value came from."""
    try:
        yield
    except GstTtsError as exc:
        raise type(exc)(f"{option}: {exc}") from None


# ---------------------------------------------------------------- decoding


def add_decoding_arguments(p: argparse.ArgumentParser, *, batch_what: str = "chunks") -> None:
    """The decoding group: ``DecodingConfig``'s fields, ``--max-chunk-chars`` or ``--no-split``,
    and ``--batch-size`` (:func:`add_batch_size_argument`).

    Args:
        batch_what: what a batch holds, for the help text. Default "chunks".
    """
    d = DecodingConfig()
    g = p.add_argument_group("decoding")
    g.add_argument(
        "--stop-threshold",
        type=float,
        default=d.stop_threshold,
        help=f"stop probability that ends a text (default {d.stop_threshold:g})",
    )
    g.add_argument(
        "--max-seconds",
        type=float,
        default=None,
        metavar="S",
        help=f"absolute bound on each chunk's audio, seconds (default {d.max_seconds:g}; "
        f"{UNSPLIT_MAX_SECONDS:g} with --no-split, so that the per-symbol bound governs)",
    )
    removed_flag(g, "--max-decoder-steps", "--max-seconds", "a bound in seconds of audio, not decoder steps")
    g.add_argument(
        "--max-frames-per-symbol",
        type=float,
        default=d.max_frames_per_symbol,
        help=f"length bound per input symbol (default {d.max_frames_per_symbol:g})",
    )
    g.add_argument(
        "--attention-window",
        default=_format_window(d.attention_window),
        metavar="BEHIND,AHEAD|none",
        help="each decoder step attends only to the symbols from BEHIND before to AHEAD after the "
        "previous step's most attended one, so the alignment cannot skip or repeat words; "
        f"none attends to every symbol (default {_format_window(d.attention_window)})",
    )
    g.add_argument(
        "--stop-end-tolerance",
        default=_format_count(d.stop_end_tolerance),
        metavar="N|none",
        help="the stop token ends a text only once the attention has come within N symbols of its end, "
        "so that an early stop cannot cut it short; none lets it end anywhere "
        f"(default {_format_count(d.stop_end_tolerance)})",
    )
    split = g.add_mutually_exclusive_group()
    split.add_argument(
        "--max-chunk-chars",
        type=int,
        default=DEFAULT_MAX_CHARS,
        help=f"longer texts are split at sentence, then clause boundaries (default {DEFAULT_MAX_CHARS})",
    )
    split.add_argument(
        "--no-split",
        action="store_true",
        help="read every text as one utterance however long: shows what the attention does on "
        "lengths it never saw in training",
    )
    add_batch_size_argument(g, batch_what)


def decoding_options(args: argparse.Namespace) -> dict[str, Any]:
    """``Synthesizer.synthesize`` keyword arguments from :func:`add_decoding_arguments`, validated:
    ``decoding`` (a :class:`DecodingConfig`), ``max_chunk_chars`` (None with ``--no-split``), ``batch_size``."""
    values = {f.name: getattr(args, f.name) for f in fields(DecodingConfig)}
    values["attention_window"] = _parse_window(args.attention_window)
    values["stop_end_tolerance"] = _parse_count(args.stop_end_tolerance, "--stop-end-tolerance")
    if values["max_seconds"] is None:
        values["max_seconds"] = UNSPLIT_MAX_SECONDS if args.no_split else DecodingConfig.max_seconds
    for name, value in values.items():
        problem = DecodingConfig.problem(name, value)
        if problem:
            raise GstTtsError(f"--{name.replace('_', '-')} {problem}")
    if args.max_chunk_chars < 1:
        raise GstTtsError(f"--max-chunk-chars must be at least 1, got {args.max_chunk_chars}")
    if args.batch_size < 1:
        raise GstTtsError(f"--batch-size must be at least 1, got {args.batch_size}")
    return dict(
        decoding=DecodingConfig(**values),
        max_chunk_chars=None if args.no_split else args.max_chunk_chars,
        batch_size=args.batch_size,
    )


def check_transfer_counts(espeak: int | None, sentences: int) -> None:
    """``--espeak`` (None: not given) and ``--sentences`` of the style-transfer commands.

    Raises:
        GstTtsError: under 2 espeak references (a correlation needs two) or under 1 sentence.
    """
    if espeak is not None and espeak < 2:
        raise GstTtsError(f"--espeak must be at least 2 (a correlation needs two references), got {espeak}")
    if sentences < 1:
        raise GstTtsError(f"--sentences must be at least 1, got {sentences}")


def _format_count(count: int | None) -> str:
    return "none" if count is None else str(count)


def _parse_count(text: str, option: str) -> int | None:
    """``none`` or a whole number (checked by ``DecodingConfig``)."""
    if text.strip().lower() == "none":
        return None
    try:
        return int(text)
    except ValueError:
        raise GstTtsError(f"{option} must be a whole number or none, got {text!r}") from None


def _format_window(window: tuple[int, int] | None) -> str:
    return "none" if window is None else f"{window[0]},{window[1]}"


def _parse_window(text: str) -> tuple[int, int] | None:
    """``--attention-window``'s value: ``none`` or ``BEHIND,AHEAD`` (checked by ``DecodingConfig``)."""
    if text.strip().lower() == "none":
        return None
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        return int(parts[0]), int(parts[1])
    except ValueError:
        raise GstTtsError(
            f"--attention-window must be BEHIND,AHEAD (two whole numbers) or none, got {text!r}"
        ) from None
