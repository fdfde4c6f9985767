from pathlib import Path

from conftest import write_tiny_checkpoint
import pytest
import torch

from gst_tts.errors import CheckpointError
from gst_tts.training.checkpoint import load_checkpoint, model_from_checkpoint


def test_round_trip(tmp_path):
    path = write_tiny_checkpoint(tmp_path / "a.pt")
    ckpt = load_checkpoint(path)
    model = model_from_checkpoint(ckpt)
    assert model.n_tokens == ckpt["model_config"]["gst_n_tokens"]
    assert not list(tmp_path.glob("*.tmp"))


def test_random_bytes_are_refused(tmp_path):
    path = tmp_path / "random.pt"
    path.write_bytes(bytes(range(256)) * 40)
    with pytest.raises(CheckpointError, match="not a gst-tts checkpoint"):
        load_checkpoint(path)


class _Payload:
    marker: Path

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_pickle_with_code_is_refused_and_never_run(tmp_path):
    marker = tmp_path / "pwned"
    payload = _Payload()
    payload.marker = marker
    path = tmp_path / "evil.pt"
    torch.save({"format": "gst-tts-checkpoint", "x": payload}, path)
    assert not marker.exists()
    with pytest.raises(CheckpointError, match="refused"):
        load_checkpoint(path)
    assert not marker.exists()


def test_other_objects_are_not_checkpoints(tmp_path):
    path = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(2)}, path)
    with pytest.raises(CheckpointError, match="marker"):
        load_checkpoint(path)
    with pytest.raises(CheckpointError, match="not found"):
        load_checkpoint(tmp_path / "missing.pt")


def test_mismatched_weights_or_symbols(tmp_path):
    ckpt = load_checkpoint(write_tiny_checkpoint(tmp_path / "a.pt"))
    bad = dict(ckpt, model_config=dict(ckpt["model_config"], decoder_rnn_dim=64))
    with pytest.raises(CheckpointError, match="do not match"):
        model_from_checkpoint(bad)
    bad = dict(ckpt, symbols={"symbols": ["_", "~", "a"], "cleaner": "english"})
    with pytest.raises(CheckpointError, match="symbol"):
        model_from_checkpoint(bad)
