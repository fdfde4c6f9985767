"""What the benchmarks share: a fixed sentence set, a random-weight tiny checkpoint, and our
GSTTacotron and torchaudio's Tacotron2 built at equal sizes with their training steps
(``bench_speed.py``, ``bench_gpu_train.py``)."""

from __future__ import annotations

import contextlib
from pathlib import Path
import sys
from typing import Callable, ContextManager

import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gst_tts.audio.features import AudioConfig, MelStats  # noqa: E402
from gst_tts.data.batching import Collate  # noqa: E402
from gst_tts.model import GSTTacotron, TacotronOutput  # noqa: E402
from gst_tts.text.symbols import SymbolTable  # noqa: E402
from gst_tts.training.builders import build_model  # noqa: E402
from gst_tts.checkpoints.acoustic import checkpoint_payload, save_checkpoint  # noqa: E402
from gst_tts.training.losses import TacotronLoss  # noqa: E402

N_MELS = 80

SENTENCES = [
    "The birch canoe slid on the smooth planks.",
    "Glue the sheet to the dark blue background.",
    "It is easy to tell the depth of a well.",
    "These days a chicken leg is a rare dish.",
    "Rice is often served in round bowls.",
    "The juice of lemons makes fine punch.",
    "The box was thrown beside the parked truck.",
    "The hogs were fed chopped corn and garbage.",
    "Four hours of steady work faced us.",
    "A large size in stockings is hard to sell.",
    "The boy was there when the sun rose.",
    "A rod is used to catch pink salmon.",
    "The source of the huge river is the clear spring.",
    "Kick the ball straight and follow through.",
    "Help the woman get back to her feet.",
    "A pot of tea helps to pass the evening.",
]


def random_tiny_checkpoint(directory: Path) -> Path:
    """A random-weight checkpoint of the conf/model/tiny.yaml model (as tests/conftest.py builds one)."""
    import yaml

    symbols = SymbolTable()
    torch.manual_seed(0)
    model, config = build_model(
        yaml.safe_load((ROOT / "conf" / "model" / "tiny.yaml").read_text()),
        n_symbols=len(symbols),
        n_mels=80,
        pad_id=symbols.pad_id,
    )
    return save_checkpoint(
        directory / "random_tiny.pt",
        checkpoint_payload(
            model_state=model.state_dict(),
            model_config=config,
            symbols=symbols,
            audio_config=AudioConfig(),
            mel_stats=MelStats(torch.full((80,), -5.0), torch.full((80,), 2.0)),
        ),
    )


# --------------------------------------------------------------------------- the project's CPU vocoder


def cpu_vocoder(path: Path | None, *, audio_config: AudioConfig, seed: int):
    """The project's CPU vocoder and one line saying which it is.

    That is the spectral vocoder of ``conf/vocoder/cpu_small.yaml``: what ``make demo`` trains and
    ``--vocoder auto`` picks beside a demo checkpoint. ``path``: a trained vocoder file, loaded on
    the CPU as ``--vocoder PATH`` loads it. Without one, the estimator at that preset's sizes with
    seeded random weights: its output layers start at zero, so its magnitude is the mel
    pseudo-inverse and its pitch head says 150 Hz, half voiced. PGHI's work depends on the
    magnitude it gets (how much lies within its tolerance of the loudest), so a trained vocoder's
    time can differ: give ``path`` to measure one.
    """
    import yaml

    from gst_tts.audio.vocoders import load_vocoder
    from gst_tts.audio.vocoders.checkpoint import SPECTRAL_KIND
    from gst_tts.audio.vocoders.spectral import SpectralVocoder
    from gst_tts.training.vocoder_builders import build_generator

    if path is not None:
        vocoder = load_vocoder(path, audio_config=audio_config, device="cpu")
        return vocoder, f"{path} ({type(vocoder).__name__})"
    preset = yaml.safe_load((ROOT / "conf" / "vocoder" / "cpu_small.yaml").read_text())
    torch.manual_seed(seed)
    estimator, _ = build_generator(preset["generator"], audio_config=audio_config, kind=SPECTRAL_KIND)
    return (
        SpectralVocoder(estimator, audio_config=audio_config, device="cpu"),
        f"spectral vocoder, conf/vocoder/cpu_small.yaml sizes, UNTRAINED (seeded random weights, seed {seed});"
        f" give --vocoder PATH to time a trained one",
    )


# --------------------------------------------------------------------------- ours vs torchaudio's Tacotron2


def load_config(path: Path) -> dict:
    """A model yaml (``conf/model/*.yaml``) that torchaudio's Tacotron2 can match: r = 1,
    embedding_dim == encoder_dim."""
    import yaml

    config = yaml.safe_load(path.read_text())
    config.pop("_target_", None)
    if config.get("reduction_factor", 1) != 1:
        raise SystemExit(f"{path}: reduction_factor must be 1 (torchaudio's Tacotron2 supports only r = 1)")
    if config["embedding_dim"] != config["encoder_dim"]:
        raise SystemExit(f"{path}: torchaudio's Tacotron2 needs embedding_dim == encoder_dim")
    return config


def build_models(config: dict, n_symbols: int, seed: int) -> tuple[GSTTacotron, nn.Module]:
    """Ours from the yaml keys; torchaudio's Tacotron2 with the same sizes and dropouts."""
    from torchaudio.models import Tacotron2

    torch.manual_seed(seed)
    ours = GSTTacotron(n_symbols=n_symbols, n_mels=N_MELS, **config)
    torch.manual_seed(seed)
    peer = Tacotron2(
        mask_padding=False,
        n_mels=N_MELS,
        n_symbol=n_symbols,
        n_frames_per_step=1,
        symbol_embedding_dim=config["embedding_dim"],
        encoder_embedding_dim=config["encoder_dim"],
        encoder_n_convolution=config["encoder_n_convs"],
        encoder_kernel_size=config["encoder_kernel_size"],
        decoder_rnn_dim=config["decoder_rnn_dim"],
        decoder_dropout=config["decoder_dropout"],
        attention_rnn_dim=config["attention_rnn_dim"],
        attention_hidden_dim=config["attention_dim"],
        attention_location_n_filter=config["attention_location_filters"],
        attention_location_kernel_size=config["attention_location_kernel_size"],
        attention_dropout=config["attention_dropout"],
        prenet_dim=config["prenet_dim"],
        postnet_n_convolution=config["postnet_n_convs"],
        postnet_kernel_size=config["postnet_kernel_size"],
        postnet_embedding_dim=config["postnet_dim"],
    )
    return ours, peer


def random_item(n_text: int, n_frames: int, n_symbols: int, generator: torch.Generator, item_id: str) -> dict:
    """A dataset item of ``n_text`` random symbol ids (the last one end-of-sequence) and ``n_frames``
    random normalised mel frames."""
    text = torch.randint(2, n_symbols, (n_text,), generator=generator)
    text[-1] = 1  # end-of-sequence, as SymbolTable.encode ends every text
    return {"text": text, "mel": torch.randn(n_frames, N_MELS, generator=generator), "id": item_id, "style": "x"}


def collate_longest_text_first(items: list[dict]) -> dict:
    """``gst_tts.data.batching.Collate`` (r = 1) of the items sorted longest text first (torchaudio
    packs its encoder input with ``enforce_sorted=True``), plus ``mel_t``: the mels as torchaudio
    takes them, ``(batch, n_mels, frames)``."""
    batch = Collate(reduction_factor=1)(sorted(items, key=lambda x: len(x["text"]), reverse=True))
    batch["mel_t"] = batch["mel"].transpose(1, 2).contiguous()
    return batch


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def ours_train_step(
    model: GSTTacotron,
    optimizer: torch.optim.Optimizer,
    loss_fn: TacotronLoss,
    batch: dict,
    precision: Callable[[], ContextManager] = contextlib.nullcontext,
) -> float:
    """Teacher-forced forward + loss (under ``precision()``, e.g. an autocast) + backward + optimizer step."""
    optimizer.zero_grad(set_to_none=True)
    with precision():
        out = model(batch["text"], batch["text_lengths"], batch["mel"], batch["mel_lengths"])
        loss = loss_fn(out, batch)["total"]
    loss.backward()
    optimizer.step()
    return float(loss.detach())


def peer_train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: TacotronLoss,
    batch: dict,
    precision: Callable[[], ContextManager] = contextlib.nullcontext,
) -> float:
    """The same for torchaudio's Tacotron2: its outputs transposed into a ``TacotronOutput`` so that
    the same loss does the same work."""
    optimizer.zero_grad(set_to_none=True)
    with precision():
        loss = loss_fn(peer_output(model, batch), batch)["total"]
    loss.backward()
    optimizer.step()
    return float(loss.detach())


def peer_output(model: nn.Module, batch: dict) -> TacotronOutput:
    """torchaudio's teacher-forced pass (``batch["mel_t"]``), as a ``TacotronOutput``."""
    mel, mel_postnet, gate, alignments = model(
        batch["text"], batch["text_lengths"], batch["mel_t"], batch["mel_lengths"]
    )
    return TacotronOutput(mel.transpose(1, 2), mel_postnet.transpose(1, 2), gate, alignments, None)
