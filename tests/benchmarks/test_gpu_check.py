"""benchmarks/gpu_check.sh without a GPU: the table that ends it, and the figures each row reads
from its step's log."""

from __future__ import annotations

from pathlib import Path
import re
import subprocess
import sys

from conftest import write_corpus

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_check.sh"


def _step_names() -> list[str]:
    return re.findall(r"^step (\w+) ", SCRIPT.read_text(), re.M)


def test_with_every_step_skipped_it_still_ends_with_one_row_a_step(tmp_path) -> None:
    names = _step_names()
    assert {"bench_gpu_train", "train_t2_bf16", "resume_tiny_fp16", "torchrun_nccl", "pytest_cuda"} <= set(names)
    corpus = write_corpus(tmp_path / "corpus", n=2)
    done = subprocess.run(
        ["bash", str(SCRIPT), str(corpus), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "SKIP": " ".join(names), "PYTHON": sys.executable},
    )
    assert done.returncode == 0, done.stderr
    table = done.stdout.split("== summary\n", 1)[1].splitlines()
    assert [row.split()[0] for row in table] == names
    assert all(row.split()[1] == "skipped" for row in table)


def test_a_row_shows_the_figures_of_its_steps_log(tmp_path) -> None:
    log = tmp_path / "step.log"
    log.write_text(
        "gpu_train_frames_per_s=31812.5\ngpu_train_ratio_vs_torchaudio=2.310\n"
        "[INFO] - trained 40 steps in 60 s (40.0 steps a minute, validations and checkpoints included)\n"
        "[INFO] - resumed from /tmp/run/checkpoints/last.pt at step 40\n"
        "[WARNING] - step 3: skipped a batch: non-finite loss\n[WARNING] - step 4: skipped a batch: non-finite loss\n"
        "12 passed, 2 skipped in 3.1s\n1 failed, 3 passed, 2 errors in 9.0s\nrtf_cpu=0.152\n"
    )
    figures = re.search(r"^figures\(\) \{.*?^\}", SCRIPT.read_text(), re.M | re.S).group(0)
    out = subprocess.run(
        ["bash", "-c", f'{figures}\nfigures "$1"', "bash", str(log)], capture_output=True, text=True, check=True
    ).stdout
    assert out.split("; ") == [
        "1 failed",
        "12 passed",
        "2 errors",
        "2 skipped",
        "3 passed",
        "40.0 steps a minute",
        "gpu_train_frames_per_s=31812.5",
        "gpu_train_ratio_vs_torchaudio=2.310",
        "resumed at step 40",
        "rtf_cpu=0.152",
        "skipped a batch (x2)",
    ]
