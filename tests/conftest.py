"""Shared fixtures: a tiny random-weight checkpoint, a tiny synthetic corpus, the shared data path."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

from gst_tts.audio.features import AudioConfig, MelStats
from gst_tts.model import GSTTacotron
from gst_tts.text.symbols import SymbolTable
from gst_tts.training.checkpoint import save_checkpoint

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# A model small enough that a test builds and runs it in well under a second.
TINY_MODEL = dict(
    reduction_factor=2, embedding_dim=32, encoder_dim=32, attention_dim=16, attention_location_filters=4,
    attention_location_kernel_size=5, attention_rnn_dim=32, decoder_rnn_dim=32, prenet_dim=16, postnet_dim=16,
    postnet_n_convs=2, gst_reference_channels=(4, 4, 8, 8, 8, 8), gst_reference_dim=16, gst_n_tokens=5,
    gst_token_dim=16, gst_n_heads=2,
)


def tiny_model(n_symbols: int, n_mels: int = 80, **overrides) -> GSTTacotron:
    return GSTTacotron(n_symbols=n_symbols, n_mels=n_mels, **{**TINY_MODEL, **overrides})


def write_tiny_checkpoint(path: Path, seed: int = 0) -> Path:
    """A valid checkpoint of an untrained tiny model (good for wiring and error tests)."""
    torch.manual_seed(seed)
    symbols = SymbolTable()
    config = dict(TINY_MODEL, n_symbols=len(symbols), n_mels=80)
    model = GSTTacotron(**config)
    return save_checkpoint(path, {
        "model": model.state_dict(),
        "model_config": config,
        "step": 0,
        "config": {},
        "symbols": symbols.to_dict(),
        "audio_config": asdict(AudioConfig()),
        "mel_stats": MelStats(torch.full((80,), -5.0), torch.full((80,), 2.0)).to_dict(),
    })


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory) -> Path:
    return write_tiny_checkpoint(tmp_path_factory.mktemp("ckpt") / "tiny.pt")


def tone(seconds: float, rate: int = 22050, freq: float = 220.0, amplitude: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * freq * t) * (1 + 0.3 * np.sin(2 * np.pi * 3 * t))).astype(np.float32)


def write_corpus(root: Path, n: int = 6, rate: int = 22050, styles: bool = False) -> Path:
    """A small LJSpeech-format corpus of tones (valid audio, made-up text)."""
    (root / "wavs").mkdir(parents=True, exist_ok=True)
    lines, style_lines = [], []
    for i in range(n):
        utt = f"UT-{i:03d}"
        sf.write(root / "wavs" / f"{utt}.wav", tone(0.6 + 0.1 * i, rate, 150 + 20 * i), rate, subtype="PCM_16")
        lines.append(f"{utt}|Sentence number {i}.|sentence number {i}.")
        style_lines.append(f"{utt}|{'low' if i % 2 else 'high'}")
    (root / "metadata.csv").write_text("\n".join(lines) + "\n")
    if styles:
        (root / "styles.csv").write_text("\n".join(style_lines) + "\n")
    return root


@pytest.fixture
def corpus(tmp_path) -> Path:
    return write_corpus(tmp_path / "corpus")


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (it sits beside the repo in CI and dev machines)")
    return SHARED_DATA
