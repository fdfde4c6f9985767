"""Speed of our GSTTacotron against torchaudio's Tacotron2 at identical (Tacotron 2 paper) sizes.

Usage::

    python benchmarks/bench_speed.py [--threads 2] [--repeats 5] [--device cpu|cuda] [--variants [LIST]] [--quick]
                                     [--vocoder PATH]

Both models are built from ``conf/model/tacotron2.yaml`` (embedding 512, encoder 512, attention
128, location 32 × 31, attention/decoder LSTM 1024, prenet 256, postnet 512 × 5, r = 1, 80 mels)
with random, seeded weights, and fed the same random, seeded inputs: batch 8, text 50–60
symbols, 250–300 mel frames (sorted longest text first, as torchaudio's encoder needs). Ours keeps
its GST module on (reference encoder + style tokens in training; neutral token weights at
inference); torchaudio's Tacotron2 has none. Everything runs side by side in one process,
alternating which model goes first, after one untimed warm-up each; medians are reported.

Measured:

* training step: teacher-forced forward + loss + backward + Adam step. Both losses are
  ``gst_tts.training.losses.TacotronLoss`` with ``guided_attention_weight=0``: masked MSE of the mel before
  and after the postnet + masked stop-token BCE (torchaudio's outputs are transposed into a
  ``TacotronOutput``), so the loss work is identical. Also reported as mel frames/s.
* inference: ``infer()`` wall time / frames at batch 1, ours on its default path (what
  ``Synthesizer`` picks when not told: on CPU at these sizes, int8 recurrent weights, see
  ``gst_tts.inference.synthesizer.int8_by_default``; on CUDA, fp32), beside our fp32 path, forced to
  run exactly ``--infer-frames`` decoder steps (ours: ``stop_threshold=1.0`` and step bounds =
  frames; torchaudio: ``decoder.gate_threshold = 1.0``, ``decoder.decoder_max_step = frames``). It
  includes the encoder and postnet once; prenet dropout stays on in both, as both do at inference.
* real-time factor: compute seconds / audio seconds for a 60-character sentence, text → mel →
  waveform, with ``--rtf-frames`` forced decoder steps (default 345 ≈ 4.0 s of audio, LJSpeech's
  ~15 characters/s; random weights never stop on their own). The headline (``rtf_cpu``) is ours
  (default path) with the project's CPU vocoder, the spectral vocoder (``conf/vocoder/cpu_small.yaml``: what
  ``make demo`` trains and ``--vocoder auto`` picks), untrained with seeded random weights unless
  ``--vocoder PATH`` names a trained one (PGHI's work depends on the magnitude it sees). Beside it,
  the same forced frames through ``gst_tts.audio.vocoders.griffin_lim.GriffinLimVocoder`` (32
  iterations, ``rtf_cpu_griffin_lim``); torchaudio's model, through the same Griffin-Lim, is in the
  table beside ours with Griffin-Lim.
* time to first audio: seconds from ``Synthesizer.stream`` of the same 60-character sentence (our
  model, neutral style, the project's CPU vocoder as for ``rtf_cpu``, the default chunks: a first
  one of 8 frames) to its first audio chunk, which needs those 8 frames, the vocoder's 8 frames of
  context and the postnet's reach (10 frames at paper sizes) decoded: 26 decoder steps at r = 1. The
  same measurement under ``--quick`` (one repeat). Ours only: torchaudio's Tacotron2 does not
  stream.
* ``--variants``: alternative numeric paths for OUR model's inference (bf16 autocast, int8
  dynamic quantization of Linear/LSTM modules, and ``int8-recurrent``: the merged recurrent and
  prenet-gate matmuls in int8, the model's own ``--int8`` path). For each: ms/frame as above, and the mean absolute
  difference (MAD, and max) of the teacher-forced postnet mel against the fp32 path on the
  benchmark batch (eval mode, prenet dropout off so both paths see the same numbers).

Prints a table (ours, torchaudio, ratio = ours / torchaudio) and then, for tools::

    train_step_ratio_vs_torchaudio=X     (< 1: ours is faster)
    infer_frame_ratio_vs_torchaudio=X    (< 1: ours is faster; ours on its default path)
    rtf_cpu=X                            (ours + the spectral vocoder; rtf_cuda=X with --device cuda:
                                          model on GPU, vocoder on CPU)
    rtf_cpu_griffin_lim=X                (ours + Griffin-Lim, the same forced frames)
    time_to_first_audio_s=X              (Synthesizer.stream of the 60-character sentence to its first chunk)
    onnx_infer_frame_ratio_vs_torch=X    (CPU only: the exported model in gst_tts.runtime vs ours in
                                          torch fp32, per frame)
    infer_frame_ratio_vs_torchaudio_fp32=X   (where the default path is int8: ours in fp32, --no-int8)
    rtf_cpu_fp32=X                       (where the default path is int8: ours in fp32 + the spectral vocoder)
    int8_mel_mad=X                       (where the default path is int8: teacher-forced postnet mel vs fp32, mean |Δ|)
    train_frames_per_s_ours=X
    train_frames_per_s_torchaudio=X

``--quick`` shrinks the shapes (batch 2, text 10–12, 12–16 frames, 16/32 forced frames, 1 repeat)
for a smoke run of every code path in seconds; its numbers are not meaningful.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
from pathlib import Path
import statistics
import sys
import time
from typing import Callable
import warnings

import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gst_tts.audio.features import AudioConfig, MelStats  # noqa: E402
from gst_tts.audio.vocoders import Vocoder  # noqa: E402
from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder  # noqa: E402
from gst_tts.inference.synthesizer import Synthesizer, int8_by_default  # noqa: E402
from gst_tts.model import GSTTacotron  # noqa: E402
from gst_tts.text.symbols import SymbolTable  # noqa: E402
from gst_tts.errors import GstTtsError  # noqa: E402
from gst_tts.training.losses import TacotronLoss  # noqa: E402

from common import (  # noqa: E402  (benchmarks/ is on the path)
    N_MELS,
    build_models,
    collate_longest_text_first,
    cpu_vocoder,
    load_config,
    ours_train_step,
    peer_train_step,
    random_item,
    synchronize,
)

# 60 characters (61 ids with the end-of-sequence symbol).
SENTENCE = "The quick brown fox jumped over the lazy dog near the river."
assert len(SENTENCE) == 60
ALL_VARIANTS = ("bf16-autocast", "int8-dynamic", "int8-recurrent")


# --------------------------------------------------------------------------- inputs


def random_batch(
    batch: int, text_range: tuple[int, int], frame_range: tuple[int, int], n_symbols: int, seed: int
) -> dict:
    """A collated batch (``gst_tts.data.batching.Collate``) of random ids and random normalised mels."""
    g = torch.Generator().manual_seed(seed)
    items = []
    for i in range(batch):
        n_text = int(torch.randint(text_range[0], text_range[1] + 1, (1,), generator=g))
        n_frames = int(torch.randint(frame_range[0], frame_range[1] + 1, (1,), generator=g))
        items.append(random_item(n_text, n_frames, n_symbols, g, str(i)))
    return collate_longest_text_first(items)


# --------------------------------------------------------------------------- timing


def time_side_by_side(
    fns: dict[str, Callable[[], object]], repeats: int, device: torch.device
) -> dict[str, list[float]]:
    """One untimed warm-up per function, then ``repeats`` rounds alternating who goes first."""
    for fn in fns.values():
        fn()
    synchronize(device)
    times: dict[str, list[float]] = {name: [] for name in fns}
    names = list(fns)
    for run in range(repeats):
        for name in names if run % 2 == 0 else reversed(names):
            synchronize(device)
            t0 = time.perf_counter()
            fns[name]()
            synchronize(device)
            times[name].append(time.perf_counter() - t0)
    return times


def median(values: list[float]) -> float:
    return statistics.median(values)


# --------------------------------------------------------------------------- the measured work


def ours_infer(model: GSTTacotron, text: torch.Tensor, lengths: torch.Tensor, frames: int) -> torch.Tensor:
    """Exactly ``frames`` decoder steps (r = 1): the stop probability never exceeds 1.0, the bounds are ``frames``."""
    out = model.infer(
        text,
        lengths,
        stop_threshold=1.0,
        max_frames_per_symbol=float(frames),
        max_frames=frames,
        attention_window=None,
        stop_end_tolerance=None,
    )
    assert out.mel_postnet.shape[1] == frames, out.mel_postnet.shape
    return out.mel_postnet  # (batch, frames, n_mels)


def peer_infer(model: nn.Module, text: torch.Tensor, lengths: torch.Tensor, frames: int) -> torch.Tensor:
    model.decoder.gate_threshold = 1.0  # sigmoid never exceeds it: never stops on its gate
    model.decoder.decoder_max_step = frames
    with torch.no_grad():
        mel_postnet, _, _ = model.infer(text, lengths)
    assert mel_postnet.shape[2] == frames, mel_postnet.shape
    return mel_postnet.transpose(1, 2)  # (batch, frames, n_mels)


def time_to_first_audio(
    model: GSTTacotron, vocoder: Vocoder, mel_stats: MelStats, repeats: int, device: torch.device, int8: bool
) -> tuple[float, int]:
    """Median seconds from ``Synthesizer.stream(SENTENCE)`` to its first audio chunk (style neutral,
    default chunk size), and the samples in that chunk. The stream is closed after its first
    chunk: only the decoder steps, postnet windows and vocoder window that chunk needs run."""
    synth = Synthesizer(model, SymbolTable(), vocoder.config, mel_stats, device=device, vocoder=vocoder, int8=int8)
    first: list[int] = []

    def first_chunk() -> None:
        stream = synth.stream(SENTENCE, seed=len(first))
        first.append(len(next(stream)))
        stream.close()

    return median(time_side_by_side({"ours": first_chunk}, repeats, device)["ours"]), first[-1]


def onnx_frame_ms(
    model: GSTTacotron, audio_config: AudioConfig, mel_stats: MelStats, frames: int, repeats: int
) -> dict[str, float] | None:
    """ms per decoder frame of the exported model in :class:`gst_tts.runtime.OnnxSynthesizer`
    (onnxruntime, as many threads as torch) against the same model's ``infer()``, side by side:
    batch 1, the RTF sentence, exactly ``frames`` steps each. None (with a note) when the export
    dependencies are not installed."""
    import tempfile

    import numpy as np

    try:
        from gst_tts.export.exporter import export_synthesizer
        from gst_tts.inference.decoding import DecodingConfig
        from gst_tts.runtime import OnnxSynthesizer
    except ImportError as error:
        print(f"note: ONNX row skipped: {error} (pip install -e '.[export,onnx]')")
        return None
    symbols = SymbolTable()
    ids = symbols.encode(SENTENCE).unsqueeze(0)
    lengths = torch.tensor([ids.shape[1]])
    with tempfile.TemporaryDirectory(prefix="bench-onnx-") as folder:
        export_synthesizer(
            Synthesizer(model, symbols, audio_config, mel_stats, device=torch.device("cpu"), int8=False), folder
        )
        runtime = OnnxSynthesizer.from_dir(folder, vocoder="griffin-lim", threads=torch.get_num_threads())
    # Never stops on its token; the frame bound is exactly `frames` (max_seconds a half frame short of frames + 1).
    decoding = DecodingConfig(
        stop_threshold=1.0,
        max_frames_per_symbol=float(frames),
        max_seconds=(frames - 0.5) * audio_config.hop_length / audio_config.sample_rate,
        attention_window=None,
        stop_end_tolerance=None,
    )
    weights = np.full((1, model.n_heads, model.n_tokens), 1.0 / model.n_tokens, dtype=np.float32)
    masks = runtime.prenet_masks(np.random.default_rng(0))  # the prenet dropout the runtime draws at synthesis

    def onnx_infer() -> None:
        out = runtime.decode(ids.numpy(), lengths.numpy(), weights, decoding=decoding, prenet_masks=masks)
        assert out.mel_postnet.shape[1] == frames, out.mel_postnet.shape

    times = time_side_by_side(
        {"torch": lambda: ours_infer(model, ids, lengths, frames), "onnx": onnx_infer}, repeats, torch.device("cpu")
    )
    return {name: median(t) / frames * 1e3 for name, t in times.items()}


# --------------------------------------------------------------------------- numeric variants (ours only)


def int8_dynamic(model: GSTTacotron) -> GSTTacotron:
    """``torch.ao.quantization.quantize_dynamic`` of every Linear and LSTM module that the model calls
    as a module. The decoder's two LSTM cells and the attention's location_dense are not: the model
    reads their weights directly (merged recurrent matmuls, merged location conv + dense)."""
    from torch.ao.quantization import default_dynamic_qconfig, quantize_dynamic

    spec = {
        nn.Linear: default_dynamic_qconfig,
        nn.LSTM: default_dynamic_qconfig,
        "decoder.attention.location_dense": None,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao.quantization deprecation notices
        return quantize_dynamic(copy.deepcopy(model), spec, dtype=torch.qint8)


def int8_recurrent(model: GSTTacotron) -> GSTTacotron:
    """A copy whose decoder runs its merged recurrent and prenet-gate weights (~90% of the per-frame
    multiply-adds) in int8: what ``Synthesizer`` runs on CPU at these sizes (``--int8``)."""
    q = copy.deepcopy(model)
    q.decoder.set_int8_inference(True)
    return q


def build_variants(
    model: GSTTacotron, names: list[str], device: torch.device
) -> dict[str, tuple[GSTTacotron, Callable]]:
    """name → (model, context factory to run it in). ``fp32`` is always first."""
    nullctx = contextlib.nullcontext
    variants = {"fp32": (model, nullctx)}
    for name in names:
        if name == "bf16-autocast":
            variants[name] = (model, lambda: torch.autocast(device.type, dtype=torch.bfloat16))
        elif name in ("int8-dynamic", "int8-recurrent"):
            if device.type != "cpu":
                print(f"note: variant {name} skipped: int8 dynamic quantization kernels are CPU only")
                continue
            if name == "int8-dynamic":
                variants[name] = (int8_dynamic(model), nullctx)
            else:
                variants[name] = (int8_recurrent(model), nullctx)
        else:
            raise SystemExit(f"unknown variant {name!r}; choose from {', '.join(ALL_VARIANTS)}")
    return variants


def teacher_forced_mel(model: GSTTacotron, context: Callable, batch: dict) -> torch.Tensor:
    """Postnet mel of a deterministic teacher-forced pass (eval mode, prenet dropout off)."""
    model.eval()
    saved = model.decoder.prenet.dropout_at_inference
    model.decoder.prenet.dropout_at_inference = False
    try:
        with torch.no_grad(), context():
            out = model(batch["text"], batch["text_lengths"], batch["mel"], batch["mel_lengths"])
    finally:
        model.decoder.prenet.dropout_at_inference = saved
    return out.mel_postnet.float()


def masked_abs_diff(a: torch.Tensor, b: torch.Tensor, lengths: torch.Tensor) -> tuple[float, float]:
    mask = torch.arange(a.shape[1], device=a.device)[None, :] < lengths[:, None]
    diff = (a - b).abs()[mask]
    return float(diff.mean()), float(diff.max())


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    p.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="timed runs per measurement, median reported (default 5; 1 with --quick)",
    )
    p.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    p.add_argument("--batch-size", type=int, default=None, help="training batch (default 8; 2 with --quick)")
    p.add_argument(
        "--infer-frames", type=int, default=None, help="forced decoder steps at batch 1 (default 200; 16 with --quick)"
    )
    p.add_argument(
        "--rtf-frames",
        type=int,
        default=None,
        help="forced decoder steps for the RTF sentence (default 345; 32 with --quick)",
    )
    p.add_argument("--griffin-lim-iters", type=int, default=32)
    p.add_argument(
        "--vocoder",
        type=Path,
        default=None,
        help="a trained vocoder file for rtf_cpu (default: the cpu_small spectral vocoder, untrained, seeded)",
    )
    p.add_argument(
        "--variants",
        nargs="?",
        const=",".join(ALL_VARIANTS),
        default="",
        help=f"also measure numeric variants of our inference; comma list from {', '.join(ALL_VARIANTS)} (bare flag: "
        "all)",
    )
    p.add_argument("--model-config", type=Path, default=ROOT / "conf" / "model" / "tacotron2.yaml")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--quick", action="store_true", help="small shapes and 1 repeat: a smoke run, numbers not meaningful"
    )
    args = p.parse_args(argv)

    quick = args.quick
    repeats = args.repeats if args.repeats is not None else (1 if quick else 5)
    batch_size = args.batch_size or (2 if quick else 8)
    text_range, frame_range = ((10, 12), (12, 16)) if quick else ((50, 60), (250, 300))
    infer_frames = args.infer_frames or (16 if quick else 200)
    rtf_frames = args.rtf_frames or (32 if quick else 345)
    variant_names = [v.strip() for v in args.variants.split(",") if v.strip()]
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: no CUDA device available")
    torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore", message="Reached max decoder steps")  # torchaudio, forced lengths
    audio_config = AudioConfig()
    try:  # before the models: a --vocoder that does not load or fit the features ends the run at once, in one line
        spectral, spectral_what = cpu_vocoder(args.vocoder, audio_config=audio_config, seed=args.seed)
    except GstTtsError as exc:
        print(f"bench_speed: error: {exc}", file=sys.stderr)
        return 2

    symbols = SymbolTable()
    n_symbols = len(symbols)
    config = load_config(args.model_config)
    ours, peer = build_models(config, n_symbols, args.seed)
    ours.to(device)
    peer.to(device)
    batch = random_batch(batch_size, text_range, frame_range, n_symbols, args.seed)
    batch = {
        k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()
    }  # mel_t: torchaudio's mels
    real_frames = int(batch["mel_lengths"].sum())

    print(
        f"device: {device}  torch threads: {torch.get_num_threads()}  torch {torch.__version__}"
        f"  repeats: {repeats} (median; 1 warm-up "
        f"excluded){'  QUICK (smoke run: numbers not meaningful)' if quick else ''}"
    )
    print(
        f"model: {args.model_config.relative_to(ROOT) if args.model_config.is_relative_to(ROOT) else args.model_config}"
        f" (r = 1, {N_MELS} mels); ours keeps its GST; random seeded weights and inputs"
    )
    print(
        f"train batch: {batch_size} × text {int(batch['text_lengths'].min())}–{int(batch['text_lengths'].max())} "
        "symbols"
        f" × {int(batch['mel_lengths'].min())}–{int(batch['mel_lengths'].max())} frames ({real_frames} real frames)"
    )

    # ---- training step
    loss_fn = TacotronLoss(guided_attention_weight=0.0)
    ours.train()
    peer.train()
    ours_opt = torch.optim.Adam(ours.parameters(), lr=1e-3)
    peer_opt = torch.optim.Adam(peer.parameters(), lr=1e-3)
    train = time_side_by_side(
        {
            "ours": lambda: ours_train_step(ours, ours_opt, loss_fn, batch),  # noqa: F821 (bound above; pyflakes misreads the del after the timing)
            "torchaudio": lambda: peer_train_step(peer, peer_opt, loss_fn, batch),  # noqa: F821 (bound above; pyflakes misreads the del after the timing)
        },
        repeats,
        device,
    )
    del ours_opt, peer_opt
    for model in (ours, peer):
        model.zero_grad(set_to_none=True)

    # ---- inference, batch 1, forced length
    ours.eval()
    peer.eval()
    text1, len1 = batch["text"][:1, : int(batch["text_lengths"][0])], batch["text_lengths"][:1]
    # "ours" is the path Synthesizer takes when not told (int8 recurrent weights on CPU at these
    # sizes); where that is int8, our fp32 path is measured beside it ("ours_fp32").
    default_int8 = int8_by_default(ours, device)
    ours_default = int8_recurrent(ours).eval() if default_int8 else ours
    torch.manual_seed(args.seed)
    infer_fns = {
        "ours": lambda: ours_infer(ours_default, text1, len1, infer_frames),
        "torchaudio": lambda: peer_infer(peer, text1, len1, infer_frames),
    }
    if default_int8:
        infer_fns["ours_fp32"] = lambda: ours_infer(ours, text1, len1, infer_frames)
    infer = time_side_by_side(infer_fns, repeats, device)

    # ---- end-to-end RTF: text → mel → waveform, by the project's CPU vocoder and by Griffin-Lim
    griffin_lim = GriffinLimVocoder(audio_config, n_iter=args.griffin_lim_iters)
    mel_stats = MelStats(torch.full((N_MELS,), -5.0), torch.full((N_MELS,), 2.0))  # plausible LJSpeech-like scale
    audio_seconds: dict[str, float] = {}

    def ours_synthesize(model: GSTTacotron, name: str, vocoder: Callable) -> None:
        ids = symbols.encode(SENTENCE).unsqueeze(0).to(device)
        mel = ours_infer(model, ids, torch.tensor([ids.shape[1]], device=device), rtf_frames)[0]
        audio = vocoder(mel_stats.denormalize(mel).cpu())
        audio_seconds[name] = len(audio) / audio_config.sample_rate

    def peer_synthesize() -> None:
        ids = symbols.encode(SENTENCE).unsqueeze(0).to(device)
        mel = peer_infer(peer, ids, torch.tensor([ids.shape[1]], device=device), rtf_frames)[0]
        audio = griffin_lim(mel.cpu())
        audio_seconds["torchaudio"] = len(audio) / audio_config.sample_rate

    rtf_fns = {
        "ours": lambda: ours_synthesize(ours_default, "ours", spectral),
        "ours_griffin_lim": lambda: ours_synthesize(ours_default, "ours_griffin_lim", griffin_lim),
        "torchaudio": peer_synthesize,
    }
    if default_int8:
        rtf_fns["ours_fp32"] = lambda: ours_synthesize(ours, "ours_fp32", spectral)
    rtf_times = time_side_by_side(rtf_fns, repeats, device)
    rtf = {name: median(t) / audio_seconds[name] for name, t in rtf_times.items()}
    first_audio_s, first_samples = time_to_first_audio(ours_default, spectral, mel_stats, repeats, device, default_int8)
    onnx_ms = onnx_frame_ms(ours, audio_config, mel_stats, infer_frames, repeats) if device.type == "cpu" else None

    # ---- table
    params = {
        "ours": sum(x.numel() for x in ours.parameters()),
        "torchaudio": sum(x.numel() for x in peer.parameters()),
    }
    train_s = {k: median(v) for k, v in train.items()}
    frames_per_s = {k: real_frames / v for k, v in train_s.items()}
    infer_ms = {k: median(v) / infer_frames * 1e3 for k, v in infer.items()}
    rows = [
        (f"train step, s (median of {repeats}; lower is better)", train_s, "{:.3f}"),
        ("train throughput, mel frames/s (higher is better)", frames_per_s, "{:.1f}"),
        (f"inference, ms / decoder frame (batch 1, {infer_frames} frames)", infer_ms, "{:.2f}"),
        (
            f"synthesis RTF incl. Griffin-Lim {args.griffin_lim_iters} it ({device.type})",
            {**rtf, "ours": rtf["ours_griffin_lim"]},
            "{:.3f}",
        ),
        ("parameters, M", {k: v / 1e6 for k, v in params.items()}, "{:.2f}"),
    ]
    if default_int8:  # ours in fp32 in the "ours" column, the same torchaudio figures
        rows.insert(
            3,
            (
                "inference, ms / decoder frame, ours in fp32 (--no-int8)",
                {**infer_ms, "ours": infer_ms["ours_fp32"]},
                "{:.2f}",
            ),
        )
    print()
    header = f"{'metric':<58} {'ours':>10} {'torchaudio':>11} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    for label, values, fmt in rows:
        print(
            f"{label:<58} {fmt.format(values['ours']):>10} {fmt.format(values['torchaudio']):>11}"
            f" {values['ours'] / values['torchaudio']:7.3f}"
        )
    print(
        f"(ratio = ours / torchaudio; RTF sentence: {len(SENTENCE)} characters, {rtf_frames} forced frames ="
        f" {audio_seconds['ours']:.2f} s of audio; RTF uses the model on {device.type}, Griffin-Lim on cpu)"
    )
    print(f"ours runs {'int8 recurrent weights (the default on CPU at these sizes)' if default_int8 else 'fp32'}")
    print(
        "end-to-end RTF of ours, the same sentence and forced frames, vocoders on cpu "
        f"({torch.get_num_threads()} threads):"
    )
    print(f"  {rtf['ours']:.3f}  with the project's CPU vocoder: {spectral_what}")
    print(f"  {rtf['ours_griffin_lim']:.3f}  with Griffin-Lim, {args.griffin_lim_iters} iterations")
    if default_int8:
        print(f"  {rtf['ours_fp32']:.3f}  ours in fp32 (--no-int8), with the project's CPU vocoder")
    print(
        f"(time to first audio, ours only (torchaudio's Tacotron2 does not stream): Synthesizer.stream of the"
        f" {len(SENTENCE)}-character sentence to its first chunk ({first_samples} samples, the project's"
        f" CPU vocoder): {first_audio_s:.3f} s)"
    )
    if onnx_ms is not None:
        print(
            f"(ONNX export of ours in the torch-free runtime (onnxruntime, {torch.get_num_threads()} threads), batch 1,"
            f" {infer_frames} frames: {onnx_ms['onnx']:.2f} ms / decoder frame against torch's {onnx_ms['torch']:.2f})"
        )
    int8_mad = None
    if default_int8:
        valid_lengths = batch["mel_lengths"]
        int8_mad, int8_worst = masked_abs_diff(
            teacher_forced_mel(ours_default, contextlib.nullcontext, batch),
            teacher_forced_mel(ours, contextlib.nullcontext, batch),
            valid_lengths,
        )
        print(
            f"(--int8: teacher-forced postnet mel vs fp32 on the train batch: mean |Δ| {int8_mad:.2e},"
            f" max |Δ| {int8_worst:.2e}, normalised-mel units; random weights: see README for a trained model)"
        )

    # ---- numeric variants of our inference
    if variant_names:
        variants = build_variants(ours, variant_names, device)
        reference = teacher_forced_mel(ours, contextlib.nullcontext, batch)

        def infer_fn(model: GSTTacotron, context: Callable) -> Callable[[], None]:
            def run() -> None:
                with context():
                    ours_infer(model, text1, len1, infer_frames)

            return run

        fns = {name: infer_fn(*v) for name, v in variants.items()}
        times = time_side_by_side(fns, repeats, device)
        print()
        print(
            f"numeric variants of OUR inference (batch 1, {infer_frames} frames); MAD = mean |Δ| of the teacher-forced"
            f" postnet mel vs fp32 on the train batch (eval, prenet dropout off; normalised-mel units)"
        )
        header = f"{'variant':<16} {'ms/frame':>9} {'speedup':>8} {'MAD':>10} {'max |Δ|':>10}"
        print(header)
        print("-" * len(header))
        fp32_ms = median(times["fp32"]) / infer_frames * 1e3
        for name, (model, context) in variants.items():
            ms = median(times[name]) / infer_frames * 1e3
            mad, worst = masked_abs_diff(teacher_forced_mel(model, context, batch), reference, batch["mel_lengths"])
            print(f"{name:<16} {ms:9.2f} {fp32_ms / ms:8.2f} {mad:10.2e} {worst:10.2e}")
        valid = torch.arange(reference.shape[1], device=reference.device)[None, :] < batch["mel_lengths"][:, None]
        print(
            f"(fp32 row: a rerun of the default path, so its MAD shows run-to-run determinism; for scale, the fp32"
            f" mean |mel| is {float(reference.abs()[valid].mean()):.3f} — random weights: recheck MAD on a "
            "trained model)"
        )

    # ---- lines for tools
    print()
    print(f"train_step_ratio_vs_torchaudio={train_s['ours'] / train_s['torchaudio']:.3f}")
    print(f"infer_frame_ratio_vs_torchaudio={infer_ms['ours'] / infer_ms['torchaudio']:.3f}")
    print(f"rtf_{device.type}={rtf['ours']:.3f}")
    print(f"time_to_first_audio_s={first_audio_s:.3f}")
    print(f"rtf_{device.type}_griffin_lim={rtf['ours_griffin_lim']:.3f}")
    if onnx_ms is not None:
        print(f"onnx_infer_frame_ratio_vs_torch={onnx_ms['onnx'] / onnx_ms['torch']:.3f}")
    if default_int8:
        print(f"infer_frame_ratio_vs_torchaudio_fp32={infer_ms['ours_fp32'] / infer_ms['torchaudio']:.3f}")
        print(f"rtf_cpu_fp32={rtf['ours_fp32']:.3f}")
        print(f"int8_mel_mad={int8_mad:.2e}")
    print(f"train_frames_per_s_ours={frames_per_s['ours']:.1f}")
    print(f"train_frames_per_s_torchaudio={frames_per_s['torchaudio']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
