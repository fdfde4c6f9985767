"""``gst-tts vocode`` (copy synthesis) and ``--vocoder PATH`` for the synthesis commands and
``Synthesizer.from_checkpoint``: HiFi-GAN files and spectral vocoder checkpoints load, a mismatch or
a wrong file is one line, exit 2.

The HiFi-GAN file here is a small random generator saved with torch's weight-norm
parametrization (``*.parametrizations.weight.original0/1``); the published ``weight_g`` /
``weight_v`` form is tested in ``tests/audio/test_hifigan.py``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from conftest import seconds_for_steps, tone, write_corpus
import numpy as np
import pytest
import soundfile as sf
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.vocoders.checkpoint import save_vocoder_checkpoint, vocoder_payload
from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
from gst_tts.audio.vocoders.hifigan import GENERATOR_CONFIG_KEYS, HIFIGAN_CONFIGS, HiFiGANGenerator
from gst_tts.audio.vocoders.hifigan_io import HiFiGANVocoder
from gst_tts.audio.vocoders.spectral import MagnitudeEstimator
from gst_tts.cli import build_parser, main
from gst_tts.demo import corpus as demo_corpus
from gst_tts.errors import GstTtsError, VocoderError
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.checkpoints.acoustic import load_checkpoint, save_checkpoint

# A v3-like generator small enough to run in milliseconds, with the LJSpeech features.
SMALL = dict(
    HIFIGAN_CONFIGS["v3"], upsample_initial_channel=16, resblock_kernel_sizes=[3], resblock_dilation_sizes=[[1, 2]]
)


def write_hifigan(folder: Path, config: dict = SMALL, name: str = "g_00001000") -> Path:
    torch.manual_seed(0)
    folder.mkdir(parents=True, exist_ok=True)
    generator = HiFiGANGenerator(**{k: config[k] for k in GENERATOR_CONFIG_KEYS}).apply_weight_norm()
    torch.save({"generator": generator.state_dict()}, folder / name)
    (folder / "config.json").write_text(json.dumps(config))
    return folder / name


def run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def hifigan(tmp_path) -> Path:
    return write_hifigan(tmp_path / "hifigan")


@pytest.fixture
def recording(tmp_path) -> Path:
    path = tmp_path / "in.wav"
    sf.write(path, np.stack([tone(0.5, 16000), tone(0.5, 16000, 330.0)], 1), 16000)  # stereo, another rate
    return path


# ------------------------------------------------------------------ vocode


def test_vocode_with_hifigan_writes_hop_times_frames_samples(hifigan, recording, tmp_path, capsys):
    out = tmp_path / "out" / "copy.wav"
    rc, stdout, err = run(
        capsys, "vocode", "--vocoder", str(hifigan), "--reference", str(recording), "--out", str(out), "--device", "cpu"
    )
    assert rc == 0, err
    audio, rate = sf.read(out)
    frames = 1 + 11025 // 256  # 0.5 s at 22050 Hz, centred frames
    assert rate == 22050 and audio.size == frames * 256
    assert f"from {frames} frames" in stdout and str(hifigan) in stdout
    assert sorted(p.name for p in out.parent.iterdir()) == ["copy.wav"]  # no temporary file left


def test_vocode_with_griffin_lim_and_a_named_config(hifigan, recording, tmp_path, capsys):
    out = tmp_path / "gl.wav"
    rc, _, err = run(capsys, "vocode", "--reference", str(recording), "--out", str(out), "--griffin-lim-iters", "2")
    assert rc == 0, err
    assert sf.read(out)[1] == 22050
    moved = tmp_path / "elsewhere.json"
    (hifigan.parent / "config.json").rename(moved)
    rc, _, err = run(
        capsys,
        "vocode",
        "--vocoder",
        str(hifigan),
        "--vocoder-config",
        str(moved),
        "--reference",
        str(recording),
        "--out",
        str(tmp_path / "named.wav"),
        "--device",
        "cpu",
    )
    assert rc == 0, err


def test_vocode_with_a_gst_tts_vocoder_checkpoint_needs_no_config(recording, tmp_path, capsys):
    torch.manual_seed(0)
    config = {k: SMALL[k] for k in GENERATOR_CONFIG_KEYS}
    generator = HiFiGANGenerator(**config).apply_weight_norm()
    path = save_vocoder_checkpoint(
        tmp_path / "voc" / "generator.pt",
        vocoder_payload(generator_state=generator.state_dict(), generator_config=config, audio_config=AudioConfig()),
    )
    out = tmp_path / "copy.wav"
    rc, _, err = run(
        capsys, "vocode", "--vocoder", str(path), "--reference", str(recording), "--out", str(out), "--device", "cpu"
    )
    assert rc == 0, err
    assert sf.read(out)[0].size == (1 + 11025 // 256) * 256
    (tmp_path / "config.json").write_text("{}")
    rc, _, err = run(
        capsys,
        "vocode",
        "--vocoder",
        str(path),
        "--vocoder-config",
        str(tmp_path / "config.json"),
        "--reference",
        str(recording),
        "--out",
        str(tmp_path / "other.wav"),
        "--device",
        "cpu",
    )
    assert rc == 2 and err.count("\n") == 1 and "records its own settings" in err, err


def write_spectral(path: Path, audio_config: AudioConfig = AudioConfig()) -> Path:
    """A spectral vocoder checkpoint (what ``vocoder=cpu_small`` training exports) of a small estimator."""
    torch.manual_seed(0)
    config = dict(
        sample_rate=audio_config.sample_rate,
        n_fft=audio_config.n_fft,
        n_mels=audio_config.n_mels,
        fmin=audio_config.fmin,
        fmax=audio_config.fmax,
        channels=16,
        kernel_size=3,
        dilations=[1, 2],
    )
    estimator = MagnitudeEstimator(**config)
    estimator.set_mel_stats(torch.full((80,), -5.0), torch.full((80,), 2.0))
    return save_vocoder_checkpoint(
        path,
        vocoder_payload(
            generator_state=estimator.state_dict(),
            generator_config=config,
            audio_config=audio_config,
            generator_kind="spectral",
        ),
    )


def test_vocode_with_a_spectral_vocoder_checkpoint(recording, tmp_path, capsys):
    path = write_spectral(tmp_path / "spectral" / "generator.pt")
    out = tmp_path / "copy.wav"
    rc, stdout, err = run(
        capsys, "vocode", "--vocoder", str(path), "--reference", str(recording), "--out", str(out), "--device", "cpu"
    )
    assert rc == 0, err
    audio, rate = sf.read(out)
    frames = 1 + 11025 // 256
    assert rate == 22050 and audio.size == (frames - 1) * 256 and np.abs(audio).max() > 0.01
    assert f"from {frames} frames" in stdout and str(path) in stdout
    (tmp_path / "config.json").write_text("{}")
    rc, _, err = run(
        capsys,
        "vocode",
        "--vocoder",
        str(path),
        "--vocoder-config",
        str(tmp_path / "config.json"),
        "--reference",
        str(recording),
        "--out",
        str(tmp_path / "other.wav"),
        "--device",
        "cpu",
    )
    assert rc == 2 and err.count("\n") == 1 and "records its own settings" in err, err
    assert not (tmp_path / "other.wav").exists()


def test_synthesize_refuses_a_spectral_vocoder_of_other_features(tiny_checkpoint, tmp_path, capsys):
    path = write_spectral(tmp_path / "generator.pt", AudioConfig(fmax=7600.0))
    out = tmp_path / "out" / "hi.wav"
    rc, _, err = run(
        capsys,
        "synthesize",
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        "Hello.",
        "--out",
        str(out),
        "--vocoder",
        str(path),
        "--device",
        "cpu",
    )
    assert rc == 2 and err.count("\n") == 1 and "fmax 7600.0 (acoustic model 8000.0)" in err, err
    assert not out.parent.exists()


def _bad_vocode_cases(tmp_path: Path, hifigan: Path, recording: Path) -> dict[str, tuple[list[str], str]]:
    """name → (arguments, text expected in the message); ``--out`` is added unless given."""
    text, short = tmp_path / "text.wav", tmp_path / "short.wav"
    text.write_text("not audio\n")
    sf.write(short, tone(0.01), 22050)
    do = tmp_path / "do_00001000"
    torch.save({"mpd": {}, "msd": {}, "optim_g": {}, "optim_d": {}, "steps": 1000, "epoch": 1}, do)
    mismatch = write_hifigan(tmp_path / "mismatch", dict(SMALL, fmax=7600, hop_size=300))
    no_config = write_hifigan(tmp_path / "no_config")
    (no_config.parent / "config.json").unlink()
    voc = ["--vocoder", str(hifigan)]
    return {
        "missing wav": ([*voc, "--reference", str(tmp_path / "nope.wav")], "audio file not found"),
        "not audio": ([*voc, "--reference", str(text)], "not readable as audio"),
        "too short": ([*voc, "--reference", str(short)], "too short to vocode"),
        "out not a wav": (
            [*voc, "--reference", str(recording), "--out", str(tmp_path / "out" / "x.mp3")],
            "--out must be a .wav",
        ),
        "missing vocoder": (["--vocoder", str(tmp_path / "g_missing"), "--reference", str(recording)], "no such file"),
        "config with griffin-lim": (
            ["--vocoder-config", str(hifigan.parent / "config.json"), "--reference", str(recording)],
            "applies to a HiFi-GAN --vocoder file",
        ),
        "discriminator file": (["--vocoder", str(do), "--reference", str(recording)], "discriminator"),
        "mismatched config": (
            ["--vocoder", str(mismatch), "--reference", str(recording)],
            "fmax 7600 (acoustic model fmax 8000.0)",
        ),
        "missing config": (["--vocoder", str(no_config), "--reference", str(recording)], "HiFi-GAN config not found"),
    }


BAD_VOCODE = [
    "missing wav",
    "not audio",
    "too short",
    "out not a wav",
    "missing vocoder",
    "config with griffin-lim",
    "discriminator file",
    "mismatched config",
    "missing config",
]


@pytest.mark.parametrize("case", BAD_VOCODE)
def test_bad_vocode_input_is_one_line_exit_2_and_writes_nothing(case, hifigan, recording, tmp_path, capsys):
    args, expected = _bad_vocode_cases(tmp_path, hifigan, recording)[case]
    out_dir = tmp_path / "out"
    if "--out" not in args:
        args = [*args, "--out", str(out_dir / "x.wav")]
    rc, stdout, err = run(capsys, "vocode", "--device", "cpu", *args)
    assert rc == 2, (stdout, err)
    assert err.startswith("gst-tts vocode: error:") and err.count("\n") == 1 and "Traceback" not in err, err
    assert expected in err, err
    assert not out_dir.exists()


# ------------------------------------------------------------------ --vocoder PATH in synthesis


def test_synthesize_with_a_hifigan_file(tiny_checkpoint, hifigan, tmp_path, capsys):
    out = tmp_path / "hi.wav"
    rc, _, err = run(
        capsys,
        "synthesize",
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        "Hello.",
        "--out",
        str(out),
        "--max-seconds",
        str(seconds_for_steps(8)),
        "--vocoder",
        str(hifigan),
        "--device",
        "cpu",
        "--seed",
        "1",
    )
    assert rc == 0, err
    side = json.loads(out.with_suffix(".json").read_text())
    assert sf.read(out)[0].size == side["n_frames"] * 256  # HiFi-GAN: exactly a hop per frame


def test_synthesize_speaks_with_the_vocoder_recorded_beside_the_checkpoint_and_says_so_first(
    tiny_checkpoint, hifigan, tmp_path, capsys, caplog
):
    from gst_tts.inference.vocoder_choice import record_vocoder

    checkpoint = tmp_path / "run" / "checkpoints" / "best.pt"
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_bytes(tiny_checkpoint.read_bytes())
    out = tmp_path / "hi.wav"

    def speak(*extra: str) -> str:
        caplog.clear()
        rc, _, err = run(
            capsys,
            "synthesize",
            "--checkpoint",
            str(checkpoint),
            "--text",
            "Hello.",
            "--out",
            str(out),
            "--max-seconds",
            str(seconds_for_steps(8)),
            "--device",
            "cpu",
            "--griffin-lim-iters",
            "2",
            *extra,
        )
        assert rc == 0, err
        # The first log line, but for the notice that this old-format checkpoint's neutral is uniform.
        return [r.getMessage() for r in caplog.records if "stores no neutral style" not in r.getMessage()][0]

    caplog.set_level(logging.INFO)
    assert speak() == (
        "vocoder: Griffin-Lim (no vocoder recorded beside the checkpoint (vocoder.json); "
        "--vocoder PATH to use a trained one)"
    )
    record_vocoder(checkpoint.parent, hifigan)
    assert (
        speak()
        == f"vocoder: HiFi-GAN {hifigan} (recorded beside the checkpoint; --vocoder griffin-lim to use Griffin-Lim)"
    )
    side = json.loads(out.with_suffix(".json").read_text())
    assert sf.read(out)[0].size == side["n_frames"] * 256  # HiFi-GAN spoke: exactly a hop per frame
    assert speak("--vocoder", "griffin-lim") == "vocoder: Griffin-Lim (--vocoder griffin-lim)"


def test_synthesize_refuses_a_vocoder_that_does_not_match_the_checkpoint(tiny_checkpoint, tmp_path, capsys):
    mismatch = write_hifigan(tmp_path / "mismatch", dict(SMALL, num_mels=100))
    out = tmp_path / "out" / "hi.wav"
    rc, _, err = run(
        capsys,
        "synthesize",
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        "Hello.",
        "--out",
        str(out),
        "--vocoder",
        str(mismatch),
        "--device",
        "cpu",
    )
    assert rc == 2 and err.count("\n") == 1 and "num_mels 100 (acoustic model n_mels 80)" in err, err
    assert not out.parent.exists()


def test_every_waveform_command_has_the_vocoder_group():
    for command, extra in (
        ("synthesize", ["--text", "Hi.", "--out", "x.wav"]),
        ("serve", []),
        ("probe-tokens", []),
        ("demo-report", ["--corpus", "c", "--out", "o"]),
        ("check-alignment", ["--corpus", "c"]),
        ("measure-transfer", ["--out", "o"]),
    ):
        args = build_parser().parse_args([command, "--checkpoint", "c.pt", *extra])
        assert args.vocoder == "auto" and args.vocoder_config is None, (
            command
        )  # recorded beside the checkpoint, else Griffin-Lim
        args = build_parser().parse_args(
            [command, "--checkpoint", "c.pt", *extra, "--vocoder", "g_1", "--vocoder-config", "c.json"]
        )
        assert args.vocoder == "g_1" and args.vocoder_config == Path("c.json"), command


def test_from_checkpoint_takes_a_vocoder_name_or_path(tiny_checkpoint, hifigan):
    assert isinstance(Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu").vocoder, GriffinLimVocoder)
    assert isinstance(
        Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu", vocoder="griffin-lim").vocoder, GriffinLimVocoder
    )
    synth = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu", vocoder=hifigan)
    assert isinstance(synth.vocoder, HiFiGANVocoder) and synth.vocoder.device == torch.device("cpu")
    synth = Synthesizer.from_checkpoint(
        tiny_checkpoint, device="cpu", vocoder=str(hifigan), vocoder_config=hifigan.parent / "config.json"
    )
    result = synth.synthesize("Hi.", seed=0, decoding=DecodingConfig(max_seconds=seconds_for_steps(8)))
    assert result.audio.size == result.mel.shape[0] * 256
    with pytest.raises(VocoderError, match="vocoder file not found"):
        Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu", vocoder=hifigan.parent / "g_missing")
    with pytest.raises(GstTtsError, match="vocoder_config needs a vocoder given by name or path"):
        Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu", vocoder_config=hifigan.parent / "config.json")


# ------------------------------------------------------------------ --vocoder in every command that makes audio


@pytest.fixture
def checkpoint_with_val(tiny_checkpoint, tmp_path) -> Path:
    """The tiny checkpoint with two utterances of :func:`write_corpus` recorded as its validation split."""
    ckpt = load_checkpoint(tiny_checkpoint)
    ckpt["val_ids"] = ["UT-001", "UT-002"]
    return save_checkpoint(tmp_path / "with_val.pt", ckpt)


def _command_args(command: str, checkpoint: Path, tmp_path: Path) -> list[str]:
    """A quick run of ``command`` (a step bound of 8, one sentence or style where there is a choice)."""
    corpus = tmp_path / "corpus"
    if not corpus.exists():
        write_corpus(corpus, n=4)
    extra = {
        "synthesize": ["--text", "Hello.", "--out", str(tmp_path / "out" / "hi.wav")],
        "check-alignment": ["--corpus", str(corpus), "--split", "val", "--limit", "1", "--out", str(tmp_path / "out")],
        "demo-report": ["--corpus", str(corpus), "--out", str(tmp_path / "out"), "--espeak", "2", "--sentences", "1"],
        "probe-tokens": [
            "--tokens",
            "0",
            "--scales",
            "1",
            "--text",
            "A probe.",
            "--csv",
            str(tmp_path / "out" / "t.csv"),
        ],
    }[command]
    return [
        command,
        "--checkpoint",
        str(checkpoint),
        "--device",
        "cpu",
        "--max-seconds",
        str(seconds_for_steps(8)),
        *extra,
    ]


@pytest.fixture(autouse=True)
def no_asr(monkeypatch):
    """demo-report's intelligibility figures need no ASR here: these tests are about the vocoder."""
    from gst_tts.analysis import intelligibility

    monkeypatch.setattr(intelligibility, "asr_available", lambda: False)


VOCODER_COMMANDS = ["synthesize", "check-alignment", "demo-report", "probe-tokens"]


@pytest.mark.parametrize("command", VOCODER_COMMANDS)
def test_a_missing_vocoder_file_is_one_line_exit_2(command, checkpoint_with_val, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(Synthesizer, "synthesize", lambda *a, **k: pytest.fail("decoded before checking --vocoder"))
    args = _command_args(command, checkpoint_with_val, tmp_path)
    rc, stdout, err = run(capsys, *args, "--vocoder", str(tmp_path / "g_missing"))
    assert rc == 2, (stdout, err)
    assert err.startswith(f"gst-tts {command}: error: --vocoder") and err.count("\n") == 1 and "no such file" in err, (
        err
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", VOCODER_COMMANDS)
def test_a_hifigan_file_is_the_vocoder_used(command, checkpoint_with_val, hifigan, tmp_path, capsys, monkeypatch):
    calls = []
    vocode = HiFiGANVocoder.__call__

    def counting(self, log_mel):
        calls.append(len(log_mel))
        return vocode(self, log_mel)

    monkeypatch.setattr(HiFiGANVocoder, "__call__", counting)
    monkeypatch.setattr(GriffinLimVocoder, "__call__", lambda *a: pytest.fail("Griffin-Lim used"))
    monkeypatch.setattr(
        demo_corpus, "render_sentence", lambda text, settings: tone(1.0, demo_corpus.SAMPLE_RATE, settings.f0_hz)
    )
    args = _command_args(command, checkpoint_with_val, tmp_path)
    if command == "check-alignment":
        args += ["--vocoder-quality", "1"]
    rc, _, err = run(capsys, *args, "--vocoder", str(hifigan))
    assert rc == 0, err
    assert calls and all(n > 0 for n in calls)


def test_check_alignment_measures_the_vocoder_on_held_out_recordings(checkpoint_with_val, hifigan, tmp_path, capsys):
    write_corpus(tmp_path / "corpus", n=4)
    out = tmp_path / "eval"
    rc, stdout, err = run(
        capsys,
        "check-alignment",
        "--checkpoint",
        str(checkpoint_with_val),
        "--corpus",
        str(tmp_path / "corpus"),
        "--split",
        "train",
        "--limit",
        "1",
        "--vocoder-quality",
        "5",
        "--vocoder",
        str(hifigan),
        "--device",
        "cpu",
        "--max-seconds",
        str(seconds_for_steps(8)),
        "--out",
        str(out),
    )
    assert rc == 0, err
    report = json.loads((out / "summary.json").read_text())["vocoder"]
    assert report["vocoder"] == f"HiFi-GAN {hifigan} (--vocoder)"  # which vocoder and why
    assert [r["id"] for r in report["utterances"]] == ["UT-001", "UT-002"]  # the held-out ones, at most N
    summary = report["summary"]
    assert summary["count"] == 2 and summary["mcd_db"] > 0 and 0 <= summary["vde"] <= 1
    for key in ("pesq", "f0_rmse_cents", "voiced_share_reference", "voiced_share_vocoded", "voiced_share_synthesized"):
        assert key in summary
    assert (
        "copy synthesis of 2 held-out recordings" in stdout and "MCD dB" in stdout and "synthesized sentences" in stdout
    )


def test_check_alignment_vocoder_quality_needs_validation_ids(tiny_checkpoint, tmp_path, capsys):
    write_corpus(tmp_path / "corpus", n=2)
    rc, _, err = run(
        capsys,
        "check-alignment",
        "--checkpoint",
        str(tiny_checkpoint),
        "--corpus",
        str(tmp_path / "corpus"),
        "--split",
        "train",
        "--vocoder-quality",
        "2",
        "--device",
        "cpu",
    )
    assert rc == 2 and err.count("\n") == 1 and "--vocoder-quality" in err, err
    rc, _, err = run(
        capsys,
        "check-alignment",
        "--checkpoint",
        str(tiny_checkpoint),
        "--corpus",
        str(tmp_path / "corpus"),
        "--split",
        "train",
        "--vocoder-quality",
        "-1",
        "--device",
        "cpu",
    )
    assert rc == 2 and "--vocoder-quality must be at least 0" in err, err
