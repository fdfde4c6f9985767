"""The vocoder recorded beside a checkpoint (``vocoder.json``): writing and reading the record, a
record naming a missing file or malformed, and ``--vocoder auto``'s choice: the recorded vocoder
when it fits the checkpoint's features, else Griffin-Lim, with the line that says which and why."""

from __future__ import annotations

from dataclasses import replace
import json
import logging
from pathlib import Path
import shutil

from conftest import TINY_GENERATOR
import pytest
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.vocoders.checkpoint import save_vocoder_checkpoint, vocoder_payload
from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
from gst_tts.audio.vocoders.hifigan import HiFiGANGenerator
from gst_tts.audio.vocoders.hifigan_io import HiFiGANVocoder
from gst_tts.errors import VocoderError
from gst_tts.inference.vocoder_choice import RECORD_NAME, record_vocoder, recorded_vocoder, resolve_vocoder


def tiny_vocoder(path: Path, audio_config: AudioConfig = AudioConfig()) -> Path:
    """A tiny random HiFi-GAN generator.pt made for ``audio_config``'s mels."""
    torch.manual_seed(0)
    generator = HiFiGANGenerator(**TINY_GENERATOR)
    return save_vocoder_checkpoint(
        path,
        vocoder_payload(
            generator_state=generator.state_dict(), generator_config=TINY_GENERATOR, audio_config=audio_config, step=3
        ),
    )


@pytest.fixture
def run(tmp_path) -> tuple[Path, Path]:
    """An acoustic run's checkpoint folder (``run/checkpoints/best.pt``, an empty stand-in) and a
    sibling vocoder run's ``generator.pt``."""
    checkpoint = tmp_path / "run" / "checkpoints" / "best.pt"
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_bytes(b"")
    return checkpoint, tiny_vocoder(tmp_path / "run" / "vocoder_gta" / "checkpoints" / "generator.pt")


def test_the_record_holds_a_relative_path_and_survives_moving_the_run(run, tmp_path):
    checkpoint, generator = run
    record = record_vocoder(checkpoint.parent, generator)
    assert record == checkpoint.parent / RECORD_NAME
    assert json.loads(record.read_text()) == {"vocoder": "../vocoder_gta/checkpoints/generator.pt"}
    found = recorded_vocoder(checkpoint)
    assert found == tmp_path / "run" / "vocoder_gta" / "checkpoints" / "generator.pt"  # no "checkpoints/.." detour
    assert recorded_vocoder(checkpoint.parent) == found  # the folder names it too
    moved = shutil.move(tmp_path / "run", tmp_path / "elsewhere")
    assert recorded_vocoder(Path(moved) / "checkpoints" / "best.pt").samefile(
        Path(moved) / "vocoder_gta" / "checkpoints" / "generator.pt"
    )


def test_no_record_is_none_and_recording_a_missing_file_is_refused(run):
    checkpoint, generator = run
    assert recorded_vocoder(checkpoint) is None
    with pytest.raises(VocoderError, match="not found"):
        record_vocoder(checkpoint.parent, generator.with_name("missing.pt"))
    assert not (checkpoint.parent / RECORD_NAME).exists()


def test_a_record_naming_a_missing_file_is_a_warning_and_none(run, caplog):
    checkpoint, generator = run
    record_vocoder(checkpoint.parent, generator)
    generator.unlink()
    with caplog.at_level(logging.WARNING, logger="gst_tts.inference.vocoder_choice"):
        assert recorded_vocoder(checkpoint) is None
    assert any(RECORD_NAME in r.getMessage() and "not a file" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    "content, words",
    [
        ("{not json", "not a vocoder record"),
        ("[1, 2]", "a JSON list"),
        ('{"vocoder": 3}', "'vocoder' is 3"),
        ('{"other": "g.pt"}', "'vocoder' is None"),
        ('{"vocoder": "  "}', "'vocoder' is '  '"),
        (b"\xff\xfe\x00", "not a vocoder record"),
    ],
)
def test_a_malformed_record_is_one_line_naming_it(run, content, words):
    checkpoint, _ = run
    record = checkpoint.parent / RECORD_NAME
    record.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(VocoderError) as info:
        recorded_vocoder(checkpoint)
    message = str(info.value)
    assert message.startswith(str(record)) and words in message and "\n" not in message


def test_auto_speaks_with_the_recorded_vocoder_and_says_why(run):
    checkpoint, generator = run
    record_vocoder(checkpoint.parent, generator)
    vocoder, line = resolve_vocoder("auto", checkpoint=checkpoint, audio_config=AudioConfig(), device="cpu")
    assert isinstance(vocoder, HiFiGANVocoder)
    assert (
        line
        == f"HiFi-GAN {recorded_vocoder(checkpoint)} (recorded beside the checkpoint; --vocoder griffin-lim to use "
        "Griffin-Lim)"
    )


def test_auto_without_a_record_and_griffin_lim_asked_for_speak_with_griffin_lim(run):
    checkpoint, generator = run
    vocoder, line = resolve_vocoder("auto", checkpoint=checkpoint, audio_config=AudioConfig(), n_iter=4)
    assert isinstance(vocoder, GriffinLimVocoder) and line.startswith(
        "Griffin-Lim (no vocoder recorded beside the checkpoint"
    )
    record_vocoder(checkpoint.parent, generator)
    vocoder, line = resolve_vocoder("griffin-lim", checkpoint=checkpoint, audio_config=AudioConfig(), n_iter=4)
    assert isinstance(vocoder, GriffinLimVocoder) and line == "Griffin-Lim (--vocoder griffin-lim)"
    vocoder, line = resolve_vocoder(str(generator), checkpoint=checkpoint, audio_config=AudioConfig(), device="cpu")
    assert isinstance(vocoder, HiFiGANVocoder) and line == f"HiFi-GAN {generator} (--vocoder)"


def test_a_recorded_vocoder_of_other_features_falls_back_to_griffin_lim_with_a_warning(run, caplog):
    checkpoint, generator = run
    tiny_vocoder(generator, replace(AudioConfig(), sample_rate=16000))
    record_vocoder(checkpoint.parent, generator)
    with caplog.at_level(logging.WARNING, logger="gst_tts.inference.vocoder_choice"):
        vocoder, line = resolve_vocoder("auto", checkpoint=checkpoint, audio_config=AudioConfig(), n_iter=4)
    assert isinstance(vocoder, GriffinLimVocoder) and line.startswith("Griffin-Lim (") and "does not fit" in line
    warning = " ".join(r.getMessage() for r in caplog.records)
    assert "sample_rate 16000" in warning and "22050" in warning
    # Asked for by name, the same file is an error, not a fallback.
    with pytest.raises(VocoderError, match="sample_rate"):
        resolve_vocoder(str(generator), checkpoint=checkpoint, audio_config=AudioConfig())
