"""What the benchmarks share: a fixed sentence set and a random-weight tiny checkpoint."""

from __future__ import annotations

from pathlib import Path
import sys

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gst_tts.audio.features import AudioConfig, MelStats  # noqa: E402
from gst_tts.text.symbols import SymbolTable  # noqa: E402
from gst_tts.training.builders import build_model  # noqa: E402
from gst_tts.training.checkpoint import checkpoint_payload, save_checkpoint  # noqa: E402

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
    model, config = build_model(yaml.safe_load((ROOT / "conf" / "model" / "tiny.yaml").read_text()),
                                n_symbols=len(symbols), n_mels=80, pad_id=symbols.pad_id)
    return save_checkpoint(directory / "random_tiny.pt", checkpoint_payload(
        model_state=model.state_dict(), model_config=config, symbols=symbols, audio_config=AudioConfig(),
        mel_stats=MelStats(torch.full((80,), -5.0), torch.full((80,), 2.0)),
    ))
