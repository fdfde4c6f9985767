"""benchmarks/bench_gpu_train.py on the CPU, with a tiny model: the aten-op count per decoder step,
the corpus lengths, and the whole timing path (``--device cpu --quick``)."""

from __future__ import annotations

from pathlib import Path
import re
import sys

from conftest import TINY_MODEL, write_corpus
import pytest
import soundfile as sf
import torch
import yaml

from gst_tts.text.symbols import SymbolTable

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_gpu_train  # noqa: E402
from common import build_models, load_config  # noqa: E402


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread, as before afterwards: a second thread only waits on a busy machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def tiny_config(tmp_path) -> Path:
    """conf/model/tacotron2.yaml at the tests' tiny sizes, with r = 1 (torchaudio's Tacotron2 has only r = 1)."""
    config = yaml.safe_load((ROOT / "conf" / "model" / "tacotron2.yaml").read_text())
    config.update({k: list(v) if isinstance(v, tuple) else v for k, v in TINY_MODEL.items()}, reduction_factor=1)
    path = tmp_path / "tiny_r1.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_ops_per_decoder_step_is_positive_and_the_same_for_other_frame_counts(tiny_config):
    n_symbols = len(SymbolTable())
    ours, peer = build_models(load_config(tiny_config), n_symbols, seed=0)
    first = bench_gpu_train.ops_per_decoder_step(ours, peer, n_symbols, frames=(4, 8), text_length=8)
    second = bench_gpu_train.ops_per_decoder_step(ours, peer, n_symbols, frames=(6, 12), text_length=8)
    for name in ("ours", "torchaudio"):
        assert first[name].per_step > 0 and first[name].top_level_per_step > 0
        assert first[name].per_step == second[name].per_step  # linear in the decoder steps
        assert first[name].top_level_per_step == second[name].top_level_per_step
        assert first[name].top_level_per_step <= first[name].per_step
    assert all(p.grad is None for p in [*ours.parameters(), *peer.parameters()])


def test_corpus_lengths_reads_text_ids_and_frames_at_22050_hz(tmp_path):
    root = write_corpus(tmp_path / "corpus", n=3, rate=16000)
    lengths = bench_gpu_train.corpus_lengths(root)
    symbols = SymbolTable()
    for i, (n_text, n_frames) in enumerate(lengths):
        samples = sf.info(str(root / "wavs" / f"UT-{i:03d}.wav")).frames
        assert n_frames == 1 + round(samples * 22050 / 16000) // 256
        assert n_text == len(symbols.encode(f"sentence number {i}."))


def test_fallback_lengths_match_ljspeech_statistics():
    lengths = bench_gpu_train.ljspeech_like_lengths()
    seconds = [(frames - 1) * 256 / 22050 for _, frames in lengths]
    assert len(lengths) == 13_100
    assert 1.11 - 0.02 <= min(seconds) and max(seconds) <= 10.10
    assert sum(seconds) / len(seconds) == pytest.approx(6.57, abs=0.05)
    assert sum(t for t, _ in lengths) / len(lengths) == pytest.approx(101, abs=2)  # ~100 characters + end-of-sequence


def test_quick_cpu_run_prints_the_tool_lines(tiny_config, tmp_path, capsys):
    corpus = write_corpus(tmp_path / "corpus", n=4)
    assert (
        bench_gpu_train.main(
            [
                "--device",
                "cpu",
                "--quick",
                "--corpus",
                str(corpus),
                "--model-config",
                str(tiny_config),
                "--threads",
                "1",
                "--batch-sizes",
                "2",
                "3",
                "--precisions",
                "bf16",
                "tf32",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    lines = dict(re.findall(r"^(\w+)=(\S+)$", out, re.M))
    for key in (
        "train_ops_per_decoder_step_ours",
        "train_ops_per_decoder_step_torchaudio",
        "train_ops_per_decoder_step_ratio_vs_torchaudio",
        "gpu_train_frames_per_s",
        "gpu_train_ratio_vs_torchaudio",
    ):
        assert float(lines[key]) > 0, key
    assert out.rstrip().splitlines()[-1].startswith("gpu_train_ratio_vs_torchaudio=")
    assert "headline: batch 3," in out  # the largest batch run
    assert len(re.findall(r"^ +[23] (bf16|tf32) ", out, re.M)) == 4


def test_steps_that_capture_a_graph_are_not_timed():
    """A side's step that captured a CUDA graph (a new padded shape) is a warm-up: timed steps
    continue on further batches until each side has its repeats."""
    captured = {"n": 0}

    def capturing_step(batch):
        if batch["mel_lengths"][0] in (5, 7):  # the first sight of two shapes
            captured["n"] += 1

    def batches():
        for n in (5, 6, 7, 6, 6, 6, 6):
            yield {"mel_lengths": torch.tensor([n]), "text": torch.zeros(1, 2)}

    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    sides = {
        "ours": bench_gpu_train.Side(capturing_step, optimizer, graphs=lambda: captured["n"]),
        "torchaudio": bench_gpu_train.Side(lambda batch: None, optimizer),
    }
    bench_gpu_train.run_config(sides, batches(), warmup=1, repeats=2, device=torch.device("cpu"))
    assert len(sides["ours"].capture_seconds) == 2  # batches 1 (warm-up) and 3 captured
    assert sides["ours"].frames == [6, 6]  # batches 2 and 4: timed; batch 3 was not
    assert sides["torchaudio"].frames == [6, 7]  # timed from batch 2 on
