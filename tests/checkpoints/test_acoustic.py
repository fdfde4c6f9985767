"""The checkpoint schema: building, saving, loading (refusing code, other files and unknown
versions), version 1 compatibility, rebuilding the model."""

from dataclasses import asdict
import logging
import os
from pathlib import Path
import pickle
import random
import tempfile

from conftest import TINY_MODEL, write_tiny_checkpoint
import pytest
import torch

from gst_tts.audio.features import AudioConfig, MelStats
from gst_tts.cli import main
from gst_tts.errors import CheckpointError
from gst_tts.model import GSTTacotron
from gst_tts.text.symbols import SymbolTable
from gst_tts.checkpoints.acoustic import (
    VERSION,
    checkpoint_parts,
    checkpoint_payload,
    load_checkpoint,
    model_from_checkpoint,
    save_checkpoint,
)


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
    with pytest.raises(CheckpointError, match="do not fit the model config"):
        model_from_checkpoint(bad)
    bad = dict(ckpt, symbols={"symbols": ["_", "~", "a"], "cleaner": "english"})
    with pytest.raises(CheckpointError, match="symbol"):
        model_from_checkpoint(bad)


# ---------------------------------------------------------------------------------------------
# The schema: one builder, a version, version 1 kept loadable


def _parts(seed: int = 0) -> dict:
    torch.manual_seed(seed)
    symbols = SymbolTable()
    config = dict(TINY_MODEL, n_symbols=len(symbols), n_mels=80)
    return dict(
        model_state=GSTTacotron(**config).state_dict(),
        model_config=config,
        symbols=symbols,
        audio_config=AudioConfig(),
        mel_stats=MelStats(torch.zeros(80), torch.ones(80)),
    )


def test_payload_has_format_version_and_only_the_parts_given():
    payload = checkpoint_payload(**_parts(), step=7, train_ids=["b", "a"], val_ids=["z", "c"])
    assert payload["format"] == "gst-tts-checkpoint" and payload["version"] == VERSION
    assert payload["step"] == 7 and payload["train_ids"] == ["a", "b"] and payload["val_ids"] == ["z", "c"]
    assert isinstance(payload["model_config"]["gst_reference_channels"], list)
    for absent in ("optimizer", "scheduler", "scaler", "train_state", "rng", "config", "reference_frames"):
        assert absent not in payload
    assert checkpoint_payload(**_parts(), reference_frames=338)["reference_frames"] == 338
    assert payload["symbols"] == SymbolTable().to_dict() and payload["audio_config"]["sample_rate"] == 22050


def test_save_refuses_a_hand_assembled_payload(tmp_path):
    payload = checkpoint_payload(**_parts())
    with pytest.raises(ValueError, match="checkpoint_payload"):
        save_checkpoint(tmp_path / "a.pt", {k: v for k, v in payload.items() if k not in ("format", "version")})
    with pytest.raises(ValueError, match="mel_stats"):
        save_checkpoint(tmp_path / "a.pt", {k: v for k, v in payload.items() if k != "mel_stats"})
    assert not list(tmp_path.iterdir())


def test_a_newer_or_unknown_version_is_a_one_line_checkpoint_error(tmp_path):
    payload = checkpoint_payload(**_parts())
    for version, message in (
        (VERSION + 1, f"version {VERSION + 1} was written by a newer gst-tts"),
        (None, "unknown checkpoint version None"),
        ("1", "unknown checkpoint version '1'"),
        (0, "unknown checkpoint version 0"),
    ):
        path = tmp_path / f"v{version}.pt"
        torch.save(dict(payload, version=version), path)
        with pytest.raises(CheckpointError) as info:
            load_checkpoint(path)
        assert message in str(info.value) and str(path) in str(info.value) and "\n" not in str(info.value)


def test_a_version_1_checkpoint_as_written_before_the_schema_module_loads(tmp_path):
    # The dict that tests/conftest.py and the trainer assembled by hand (version 1), tuples and all.
    torch.manual_seed(0)
    symbols = SymbolTable()
    config = dict(TINY_MODEL, n_symbols=len(symbols), n_mels=80)
    model = GSTTacotron(**config)
    path = tmp_path / "v1.pt"
    torch.save(
        {
            "format": "gst-tts-checkpoint",
            "version": 1,
            "model": model.state_dict(),
            "model_config": config,
            "step": 0,
            "config": {},
            "symbols": symbols.to_dict(),
            "audio_config": asdict(AudioConfig()),
            "mel_stats": MelStats(torch.full((80,), -5.0), torch.full((80,), 2.0)).to_dict(),
        },
        path,
    )
    ckpt = load_checkpoint(path)
    rebuilt = model_from_checkpoint(ckpt, path)
    for name, value in model.state_dict().items():
        assert torch.equal(rebuilt.state_dict()[name], value), name
    symbols_back, audio, stats = checkpoint_parts(ckpt)
    assert len(symbols_back) == len(symbols) and audio == AudioConfig() and float(stats.mean[0]) == -5.0


# ---------------------------------------------------------------------------------------------
# Integrity: the digest stored with the contents


def _identical(a, b) -> bool:
    """Bit for bit: tensors by dtype, shape and bytes; containers item by item."""
    if isinstance(a, torch.Tensor):
        return (
            isinstance(b, torch.Tensor)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and a.reshape(-1).view(torch.uint8).tolist() == b.reshape(-1).view(torch.uint8).tolist()
        )
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_identical(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_identical(x, y) for x, y in zip(a, b))
    return a == b


def test_flipped_bytes_are_refused_in_one_line_or_load_identical_weights(tmp_path):
    # torch does not check its zip records' CRCs: without the digest every one of these flips loaded
    # other weights silently. A flip in zip metadata torch ignores may still load, identical.
    path = write_tiny_checkpoint(tmp_path / "last.pt")
    reference = load_checkpoint(path)
    data = path.read_bytes()
    rng = random.Random(28)
    refused = 0
    for i in range(20):
        offset = rng.randrange(len(data) // 10, len(data) - len(data) // 10)
        damaged = bytearray(data)
        damaged[offset] ^= 1 << rng.randrange(8)
        flipped = tmp_path / f"flip{i}.pt"
        flipped.write_bytes(bytes(damaged))
        try:
            loaded = load_checkpoint(flipped)
        except CheckpointError as exc:
            assert str(flipped) in str(exc) and "\n" not in str(exc)
            refused += 1
            continue
        assert _identical(reference, loaded), f"byte {offset} flipped loaded other contents"
    assert refused >= 10  # the tensor records are most of the file


def test_the_digest_names_a_corrupted_file_and_a_resave_renews_it(tmp_path):
    path = write_tiny_checkpoint(tmp_path / "a.pt")
    stored = torch.load(path, weights_only=True)
    assert stored["digest"].startswith("crc32:")
    edited = dict(stored, step=5)
    torch.save(edited, tmp_path / "edited.pt")  # changed without the schema: the digest no longer matches
    with pytest.raises(CheckpointError, match="corrupted checkpoint: its contents do not match the digest"):
        load_checkpoint(tmp_path / "edited.pt")
    save_checkpoint(tmp_path / "resaved.pt", edited)  # through the schema: a fresh digest
    assert load_checkpoint(tmp_path / "resaved.pt")["step"] == 5
    torch.save(dict(stored, digest=torch.zeros(2)), tmp_path / "odd.pt")
    with pytest.raises(CheckpointError, match="unreadable digest"):
        load_checkpoint(tmp_path / "odd.pt")


def test_a_checkpoint_without_a_digest_loads_without_a_warning(tmp_path, caplog):
    stored = torch.load(write_tiny_checkpoint(tmp_path / "a.pt"), weights_only=True)
    del stored["digest"]  # as written before checkpoints carried one
    torch.save(stored, tmp_path / "old.pt")
    with caplog.at_level(logging.INFO):
        assert load_checkpoint(tmp_path / "old.pt")["step"] == 0
    assert not caplog.records


# ---------------------------------------------------------------------------------------------
# Hostile checkpoints: each refused in one line, nothing executed, nothing huge allocated


def _hostile(ckpt: dict) -> dict[str, tuple[dict, str]]:
    """name → (the checkpoint with one part replaced, what the one-line error says)."""
    config, weights = ckpt["model_config"], dict(ckpt["model"])
    first = next(iter(weights))
    nan, inf = dict(weights), dict(weights)
    nan[first] = torch.full_like(weights[first], float("nan"))
    inf[first] = weights[first].clone()
    inf[first].view(-1)[3] = float("inf")
    return {
        "a tensor among the symbols": (
            dict(ckpt, symbols=dict(ckpt["symbols"], symbols=[torch.zeros(1), *ckpt["symbols"]["symbols"][1:]])),
            "symbols",
        ),
        "the symbols a tensor": (dict(ckpt, symbols=dict(ckpt["symbols"], symbols=torch.zeros(5))), "symbols"),
        "a tensor in model_config": (
            dict(ckpt, model_config=dict(config, embedding_dim=torch.tensor(32))),
            "model_config 'embedding_dim' is a Tensor",
        ),
        "a string in model_config": (
            dict(ckpt, model_config=dict(config, embedding_dim="32")),
            "unusable model_config",
        ),
        "embedding_dim 10**9": (
            dict(ckpt, model_config=dict(config, embedding_dim=10**9)),
            "(40, 32) vs (40, 1000000000)",
        ),
        "decoder_rnn_dim 10**7": (
            dict(ckpt, model_config=dict(config, decoder_rnn_dim=10**7)),
            "do not fit the model config",
        ),
        "a negative size": (dict(ckpt, model_config=dict(config, encoder_dim=-4)), "unusable model_config"),
        "model_config a list": (dict(ckpt, model_config=[1, 2]), "model_config is not a dict"),
        "a tensor in audio_config": (
            dict(ckpt, audio_config=dict(ckpt["audio_config"], sample_rate=torch.tensor(22050))),
            "audio_config 'sample_rate' is a Tensor",
        ),
        "a string in audio_config": (
            dict(ckpt, audio_config=dict(ckpt["audio_config"], hop_length="256")),
            "audio_config hop_length is '256', not a whole number",
        ),
        "an unknown audio_config field": (
            dict(ckpt, audio_config=dict(ckpt["audio_config"], hop=3)),
            "unknown fields hop",
        ),
        "a string for the mel statistics": (
            dict(ckpt, mel_stats=dict(ckpt["mel_stats"], mean="zeros")),
            "unusable mel_stats",
        ),
        "a string for a weight": (
            dict(ckpt, model=dict(weights, **{first: "not a tensor"})),
            "not a state dict of named tensors",
        ),
        "a string for the weights": (dict(ckpt, model="weights"), "not a state dict of named tensors"),
        "a weight missing": (dict(ckpt, model={k: v for k, v in weights.items() if k != first}), f"missing {first}"),
        "a weight of another shape": (
            dict(ckpt, model=dict(weights, **{first: weights[first][:3]})),
            "shape (file vs config)",
        ),
        "NaN weights": (dict(ckpt, model=nan), f"weight {first} holds NaN or infinite values"),
        "an infinite weight": (dict(ckpt, model=inf), f"weight {first} holds NaN or infinite values"),
    }


HOSTILE = list(_hostile(load_checkpoint(write_tiny_checkpoint(Path(tempfile.mkdtemp()) / "a.pt"))))


@pytest.mark.parametrize("case", HOSTILE)
def test_a_hostile_checkpoint_is_refused_in_one_line_before_allocating(tmp_path, case):
    bad, message = _hostile(load_checkpoint(write_tiny_checkpoint(tmp_path / "a.pt")))[case]
    path = save_checkpoint(tmp_path / "bad.pt", bad)  # a well-formed file with a fresh digest: only the content is bad
    with pytest.raises(CheckpointError) as info:
        ckpt = load_checkpoint(path)
        model_from_checkpoint(ckpt, path)
        checkpoint_parts(ckpt, path)
    assert message in str(info.value) and str(path) in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "case", ["embedding_dim 10**9", "a tensor in audio_config", "NaN weights", "a string for the weights"]
)
def test_gst_tts_synthesize_refuses_a_hostile_checkpoint_with_exit_2_and_one_line(tmp_path, capsys, case):
    bad, message = _hostile(load_checkpoint(write_tiny_checkpoint(tmp_path / "a.pt")))[case]
    path = save_checkpoint(tmp_path / "bad.pt", bad)
    rc = main(["synthesize", "--checkpoint", str(path), "--text", "Hello.", "--out", str(tmp_path / "out" / "x.wav")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


class _System:
    """A pickle that runs a shell command when unpickled: what a hostile checkpoint would carry."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_pickle_that_would_run_a_shell_command_is_refused_and_never_run(tmp_path):
    marker = tmp_path / "PWNED"
    pickle.loads(pickle.dumps(_System(tmp_path / "sanity")))  # the payload does run when unpickled normally
    assert (tmp_path / "sanity").exists()
    payload = checkpoint_payload(**_parts())
    for where in ("model_config", "symbols", "step"):
        path = tmp_path / f"{where}.pt"
        torch.save(dict(payload, **{where: _System(marker)}), path)
        with pytest.raises(CheckpointError, match="refused"):
            load_checkpoint(path)
    assert not marker.exists()
