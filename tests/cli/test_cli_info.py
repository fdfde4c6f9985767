"""``gst-tts info``: what an acoustic checkpoint and a vocoder checkpoint hold, as aligned lines and
as JSON; which vocoders fit (Griffin-Lim, the recorded one, sibling runs' generators of the same
features); a missing, corrupt or foreign file is one line (a GstTtsError, which ``gst-tts`` prints
as one line with exit code 2), never a traceback. The module is driven through a parser built
with its own ``add_arguments``."""

from __future__ import annotations

import argparse
from dataclasses import replace
import json
from pathlib import Path

from conftest import TINY_GENERATOR, TINY_MODEL, write_tiny_checkpoint
import pytest
import torch

from gst_tts.audio.features import AudioConfig, MelStats
from gst_tts.audio.vocoders.checkpoint import save_vocoder_checkpoint, vocoder_payload
from gst_tts.audio.vocoders.hifigan import HiFiGANGenerator
from gst_tts.checkpoints.acoustic import checkpoint_payload, save_checkpoint
from gst_tts.cli import info
from gst_tts.errors import GstTtsError
from gst_tts.inference.vocoder_choice import record_vocoder
from gst_tts.model import GSTTacotron
from gst_tts.text.frontends import PhonemeFrontend
from gst_tts.text.phonemes import espeak_version
from gst_tts.text.symbols import SymbolTable


def run_info(capsys, *argv: str) -> str:
    parser = argparse.ArgumentParser(prog="gst-tts info")
    info.add_arguments(parser)
    assert info.run(parser.parse_args(list(argv))) == 0
    return capsys.readouterr().out


def fields(out: str) -> dict[str, str]:
    """The ``key: value`` lines; continuation lines (no key) join their key's value with " | "."""
    found: dict[str, str] = {}
    key = ""
    for line in out.splitlines():
        head, sep, value = line.partition(": ")
        if sep and head.strip() and not line.startswith(" "):
            key = head.strip()
            found[key] = value.strip()
        else:
            found[key] += " | " + line.strip()
    return found


def tiny_vocoder(path: Path, audio_config: AudioConfig = AudioConfig(), **parts) -> Path:
    torch.manual_seed(0)
    generator = HiFiGANGenerator(**TINY_GENERATOR)
    return save_vocoder_checkpoint(
        path,
        vocoder_payload(
            generator_state=generator.state_dict(),
            generator_config=TINY_GENERATOR,
            audio_config=audio_config,
            step=12,
            **parts,
        ),
    )


@pytest.fixture
def demo_like(tmp_path) -> dict[str, Path]:
    """A demo-like layout: run/checkpoints/best.pt, a fitting run/vocoder_gta generator and a
    16 kHz run/vocoder_16k one."""
    return {
        "checkpoint": write_tiny_checkpoint(tmp_path / "run" / "checkpoints" / "best.pt", step=7),
        "fits": tiny_vocoder(tmp_path / "run" / "vocoder_gta" / "checkpoints" / "generator.pt"),
        "other": tiny_vocoder(
            tmp_path / "run" / "vocoder_16k" / "checkpoints" / "generator.pt", replace(AudioConfig(), sample_rate=16000)
        ),
    }


def test_an_acoustic_checkpoint_in_aligned_lines(capsys, demo_like):
    out = run_info(capsys, str(demo_like["checkpoint"]))
    lines = out.splitlines()
    column = len(lines[0]) - len(lines[0].removeprefix("file:").lstrip())  # where the values start
    for line in lines:  # every value starts in that column, after its key or blanks
        key = line[:column].rstrip()
        assert line[column] != " " and (key == "" or (key.endswith(":") and ":" not in key[:-1])), line
    got = fields(out)
    n_symbols = len(SymbolTable())
    expected_parameters = sum(p.numel() for p in GSTTacotron(**TINY_MODEL, n_symbols=n_symbols, n_mels=80).parameters())
    assert got["model"] == f"GST-Tacotron, {expected_parameters:,} parameters"
    assert got["r (frames per step)"] == str(TINY_MODEL["reduction_factor"])
    assert got["embedding"] == str(TINY_MODEL["embedding_dim"]) and got["prenet"] == str(TINY_MODEL["prenet_dim"])
    assert got["attention"].startswith(
        "location_sensitive (dim 16, location False, location_filters 4, location_kernel_size 5"
    )
    assert got["audio"] == "22050 Hz, 80 mels, hop 256, window 1024, n_fft 1024, 0-8000 Hz"
    assert got["symbols"].startswith(f"{n_symbols} (english cleaner): pad '_', end '~'")
    assert got["text frontend"] == "characters"
    assert got["step"] == "7"
    assert got["style tokens"].startswith("5 per head, ids 0-4 (counted from 0)")
    assert got["style heads"].startswith("2, ids 0-1 (counted from 0)")
    assert got["mel normalisation"] == "present (80 channels)" and got["validation ids"] == "none"
    assert got["digest"].startswith("checked (crc32:") and got["resumable"].startswith("no")
    vocoders = got["vocoders that fit"].split(" | ")
    assert vocoders[0] == "griffin-lim (always)"
    assert f"{demo_like['fits']} (hifigan; sibling run folder)" in vocoders
    refused = [v for v in vocoders if str(demo_like["other"]) in v]
    assert len(refused) == 1 and refused[0] == (
        f"{demo_like['other']} does not fit (sibling run folder): the vocoder was "
        "trained on other features than the acoustic model's: sample_rate 16000 "
        "(acoustic model 22050)"
    )


def test_the_recorded_vocoder_is_named_and_the_option_form_works(capsys, demo_like):
    record_vocoder(demo_like["checkpoint"].parent, demo_like["fits"])
    got = fields(run_info(capsys, "--checkpoint", str(demo_like["checkpoint"])))
    vocoders = got["vocoders that fit"].split(" | ")
    assert vocoders[1].startswith(f"{demo_like['fits']} (hifigan; recorded beside the checkpoint (vocoder.json)")
    assert len(vocoders) == 3  # the recorded generator is not listed again as a sibling


def test_json_holds_the_same(capsys, demo_like):
    data = json.loads(run_info(capsys, str(demo_like["checkpoint"]), "--json"))
    assert data["kind"] == "acoustic" and data["reduction_factor"] == TINY_MODEL["reduction_factor"]
    assert data["style"] == {"tokens": 5, "heads": 2, "count_from": 0, "token_ids": "0-4", "head_ids": "0-1"}
    assert data["audio"]["n_mels"] == 80 and data["symbols"]["count"] == len(SymbolTable())
    assert (data["symbols"]["frontend"], data["symbols"]["language"], data["symbols"]["espeak_version"]) == (
        "characters",
        None,
        None,
    )
    assert {v["vocoder"]: v["fits"] for v in data["vocoders"]} == {
        "griffin-lim": True,
        str(demo_like["fits"]): True,
        str(demo_like["other"]): False,
    }


def test_a_phoneme_checkpoint_shows_its_language_and_espeak_versions(capsys, tmp_path):
    # Made with an older espeak-ng than the installed one, as a checkpoint from another machine may be.
    symbols = SymbolTable.for_corpus(PhonemeFrontend("de", espeak_version="1.48.0"), ["Guten Tag, Welt!"])
    config = dict(TINY_MODEL, n_symbols=len(symbols), n_mels=80)
    path = save_checkpoint(
        tmp_path / "de.pt",
        checkpoint_payload(
            model_state=GSTTacotron(**config).state_dict(),
            model_config=config,
            symbols=symbols,
            audio_config=AudioConfig(),
            mel_stats=MelStats(torch.full((80,), -5.0), torch.full((80,), 2.0)),
            step=3,
        ),
    )
    installed = espeak_version()
    assert installed != "1.48.0"
    got = fields(run_info(capsys, str(path)))
    assert got["text frontend"] == f"phonemes (de), made with espeak-ng 1.48.0; installed: {installed}"
    assert got["symbols"].startswith(f"{len(symbols)} (whitespace cleaner)") and "ɡ" in got["symbols"]
    data = json.loads(run_info(capsys, str(path), "--json"))["symbols"]
    assert (data["frontend"], data["language"]) == ("phonemes", "de")
    assert data["espeak_version"] == {"recorded": "1.48.0", "installed": installed}


def test_a_vocoder_checkpoint(capsys, tmp_path):
    path = tiny_vocoder(tmp_path / "generator.pt")
    got = fields(run_info(capsys, str(path)))
    assert got["vocoder"] == "hifigan" and got["step"] == "12"
    assert got["parameters"] == f"{sum(p.numel() for p in HiFiGANGenerator(**TINY_GENERATOR).parameters()):,}"
    assert "upsample_rates 8,8,4" in got["sizes"] and got["contents"] == "generator only (for inference)"
    assert got["audio"].startswith("22050 Hz, 80 mels, hop 256")
    data = json.loads(run_info(capsys, str(path), "--json"))
    assert (
        data["kind"] == "vocoder"
        and data["sizes"]["upsample_rates"] == [8, 8, 4]
        and data["audio"]["sample_rate"] == 22050
    )


def _corrupted(path: Path) -> Path:
    stored = torch.load(path, weights_only=True)
    stored["step"] = 8  # the digest no longer matches
    torch.save(stored, path)
    return path


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda d: d / "missing.pt", "not found"),
        (lambda d: (d / "noise.pt").write_bytes(b"\x00garbage" * 20) and d / "noise.pt", "not a gst-tts checkpoint"),
        (lambda d: torch.save({"a": 1}, d / "dict.pt") or d / "dict.pt", "not a gst-tts checkpoint"),
        (lambda d: _corrupted(write_tiny_checkpoint(d / "bad.pt")), "corrupted checkpoint"),
        (lambda d: _corrupted(tiny_vocoder(d / "generator.pt")), "corrupted vocoder checkpoint"),
        (lambda d: d, "is a folder"),
    ],
)
def test_bad_files_are_one_line_errors(capsys, tmp_path, make, words):
    path = make(tmp_path)
    parser = argparse.ArgumentParser(prog="gst-tts info")
    info.add_arguments(parser)
    with pytest.raises(GstTtsError) as error:
        info.run(parser.parse_args([str(path)]))
    assert words in str(error.value) and "\n" not in str(error.value)
    assert capsys.readouterr().out == ""


def test_no_checkpoint_or_two_different_ones_are_refused(tmp_path):
    parser = argparse.ArgumentParser(prog="gst-tts info")
    info.add_arguments(parser)
    with pytest.raises(GstTtsError, match="give a checkpoint"):
        info.run(parser.parse_args([]))
    with pytest.raises(GstTtsError, match="two checkpoints"):
        info.run(parser.parse_args(["a.pt", "--checkpoint", "b.pt"]))
