"""Training under faults: SIGKILL at seeded moments (in a checkpoint write, a training step, a
validation, start-up) and restarts end with the parameters of an uninterrupted run, bit for bit; a
corrupted last.pt falls back to the newest periodic checkpoint that verifies; a full disk or a
read-only folder ends training with one line (exit code 2 from the command), the previous last.pt
intact and no temporary file left."""

from __future__ import annotations

import errno
import json
import logging
import os
from pathlib import Path
import random
import signal
import subprocess
import sys

from conftest import TINY_MODEL, write_corpus
from hydra import compose, initialize_config_module
import pytest
import torch

from gst_tts.errors import GstTtsError, OutputError
import gst_tts.files
import gst_tts.checkpoints.weights
from gst_tts.training.train import CONFIG_MODULE, main as train_main
from gst_tts.checkpoints.acoustic import load_checkpoint
from gst_tts.training.trainer import Trainer

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent

# The zygote imports once and forks a fresh training process per line it reads (the pause): each
# prints its pid, then each phase as it enters it; a checkpoint is written in two halves with a
# pause between (and start-up and validation begin with one), so that a kill timed on the marker
# lands inside. Forking saves each restart the imports (seconds); the trainer starts from disk.
ZYGOTE = r"""
import io, json, os, sys, time, traceback
run_dir, overrides = sys.argv[1], json.loads(sys.argv[2])
pause = 0.0
def mark(phase):
    print(phase, flush=True)
from hydra import compose, initialize_config_module
import gst_tts.training.trainer as trainer_module
import gst_tts.checkpoints.weights as weights
Trainer = trainer_module.Trainer
atomic_write, find_resume = weights.atomic_write, trainer_module.find_resume_checkpoint
def slow_atomic_write(path, write):
    def halves(f):
        buffer = io.BytesIO()
        write(buffer)
        data = buffer.getvalue()
        f.write(data[: len(data) // 2])
        f.flush()
        mark("writing checkpoint")
        time.sleep(pause)
        f.write(data[len(data) // 2:])
    return atomic_write(path, halves)
def slow_find_resume(*args, **kwargs):
    mark("start-up")
    time.sleep(pause)
    return find_resume(*args, **kwargs)
weights.atomic_write, trainer_module.find_resume_checkpoint = slow_atomic_write, slow_find_resume
train_step, validate = Trainer._train_step, Trainer.validate
def step(self, batches):
    mark("training step")
    return train_step(self, batches)
def validation(self):
    mark("validation")
    time.sleep(pause)
    return validate(self)
Trainer._train_step, Trainer.validate = step, validation
for line in sys.stdin:
    pause = float(line)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            mark(f"pid {os.getpid()}")
            with initialize_config_module(config_module="gst_tts.conf", version_base="1.3"):
                cfg = compose("config", overrides=overrides)
            Trainer(cfg, run_dir).fit()
            mark("finished")
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    mark(f"exit {status}")
"""

PHASES = ("start-up", "training step", "validation", "writing checkpoint")


@pytest.fixture
def small_corpus(tmp_path):
    return write_corpus(tmp_path / "corpus", n=8, styles=True)


def _overrides(corpus: Path, cache: Path, **trainer) -> list[str]:
    """The tiny model's run as Hydra overrides, which the child and this process compose alike;
    one thread (bit-equal runs need the same thread count), no loader workers."""
    model = [
        f"model.{k}=[{','.join(map(str, v))}]" if isinstance(v, (tuple, list)) else f"model.{k}={v}"
        for k, v in TINY_MODEL.items()
    ]
    settings = dict(
        {
            "device": "cpu",
            "threads": 1,
            "learning_rate": 3e-3,
            "warmup_steps": 1,
            "log_every": 1,
            "val_inference_utterances": 0,
        },
        **trainer,
    )
    return [
        "model=tiny",
        f"data.root={corpus}",
        f"data.cache_dir={cache}",
        "data.batch_size=2",
        "data.val_size=2",
        "data.num_workers=0",
        "trainer.progress=false",
        *model,
        *(f"trainer.{k}={v}" for k, v in settings.items()),
    ]


def _compose(overrides: list[str]):
    with initialize_config_module(config_module=CONFIG_MODULE, version_base="1.3"):
        return compose("config", overrides=overrides)


class _Zygote:
    """The zygote process; :meth:`run` starts one training process from it and says how it ended."""

    def __init__(self, run: Path, overrides: list[str], stderr: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
        self.stderr = stderr
        with stderr.open("w") as err:
            self.process = subprocess.Popen(
                [sys.executable, "-c", ZYGOTE, str(run), json.dumps(overrides)],
                text=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
                cwd=REPO,
            )

    def run(self, pause: float, kill_at: tuple[str, int] | None = None) -> str:
        """Trains until the run ends or enters phase ``kill_at[0]`` for the ``kill_at[1]``-th time,
        then SIGKILLs it; returns the last phase it printed ("finished" when it completed)."""
        self.process.stdin.write(f"{pause}\n")
        self.process.stdin.flush()
        seen, last, pid = 0, None, None
        for line in self.process.stdout:
            line = line.strip()
            if line.startswith("exit "):
                assert kill_at is not None or line == "exit 0", self.stderr.read_text()[-3000:]
                return last
            if line.startswith("pid "):
                pid = int(line.split()[1])
                continue
            last = line
            if kill_at is not None and line == kill_at[0]:
                seen += 1
                if seen == kill_at[1]:
                    os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"the zygote ended: {self.stderr.read_text()[-3000:]}")

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=60)


def _every_checkpoint_loads(ckpt_dir: Path) -> None:
    """No partial file ever became a checkpoint: each one there loads and matches its digest."""
    for path in ckpt_dir.glob("*.pt"):
        load_checkpoint(path)


def _kill_and_restart(
    tmp_path, corpus, plan: list[tuple[str, int]], pause: float, max_steps: int, val_every: int
) -> dict[str, int]:
    """Runs the plan of kills, restarting after each, then to ``max_steps``; checks the final
    parameters against an uninterrupted run; returns the kills per phase they landed in."""
    cache, run = tmp_path / "cache", tmp_path / "killed"
    overrides = _overrides(
        corpus, cache, max_steps=max_steps, checkpoint_every=2, val_every=val_every, keep_checkpoints=2
    )
    reference = Trainer(_compose(overrides), tmp_path / "uninterrupted")  # also fills the feature cache
    reference.fit()
    landed: dict[str, int] = {}
    zygote = _Zygote(run, overrides, tmp_path / "zygote.err")
    try:
        for phase, occurrence in plan:
            died_in = zygote.run(pause, kill_at=(phase, occurrence))
            landed[died_in] = landed.get(died_in, 0) + 1
            _every_checkpoint_loads(run / "checkpoints")
        assert zygote.run(0.0) == "finished"
    finally:
        zygote.close()
    assert "resuming from" not in (tmp_path / "zygote.err").read_text()  # last.pt itself loaded: never a fallback
    assert not list((run / "checkpoints").glob(".*.tmp"))  # the restarts removed what the kills left
    ours, theirs = (
        load_checkpoint(run / "checkpoints" / "last.pt"),
        load_checkpoint(tmp_path / "uninterrupted" / "checkpoints" / "last.pt"),
    )
    assert ours["step"] == theirs["step"] == max_steps and ours["train_state"] == theirs["train_state"]
    for part in ("model", "optimizer"):
        for name, value in _tensors(theirs[part]):
            assert torch.equal(value, dict(_tensors(ours[part]))[name]), f"{part} {name}"
    return landed


def _tensors(tree, prefix: str = ""):
    """(dotted name, tensor) of every tensor in a nested state dict."""
    if isinstance(tree, torch.Tensor):
        yield prefix, tree
    elif isinstance(tree, dict):
        for k, v in tree.items():
            yield from _tensors(v, f"{prefix}.{k}")
    elif isinstance(tree, (list, tuple)):
        for i, v in enumerate(tree):
            yield from _tensors(v, f"{prefix}.{i}")


def test_kills_in_a_checkpoint_write_and_a_step_then_restarts_end_bit_equal_to_an_uninterrupted_run(
    tmp_path, small_corpus
):
    rng = random.Random(28)
    # At seeded occurrences; a write's pause holds the kill inside the file.
    plan = [("writing checkpoint", rng.randint(1, 2)), ("training step", rng.randint(2, 3))]
    landed = _kill_and_restart(tmp_path, small_corpus, plan, pause=0.3, max_steps=4, val_every=1000)
    assert landed == {"writing checkpoint": 1, "training step": 1}, landed


@pytest.mark.slow(reason="the kill test above, with 16 kills in every phase over a longer run (minutes)")
def test_many_seeded_kills_in_every_phase_and_restarts_end_bit_equal_to_an_uninterrupted_run(tmp_path, small_corpus):
    rng = random.Random(2028)
    phases = rng.sample(PHASES * 4, 16)  # four kills a phase, in a seeded order
    plan = [(phase, 1 if phase == "start-up" else rng.randint(1, 3)) for phase in phases]  # one start-up a process
    landed = _kill_and_restart(tmp_path, small_corpus, plan, pause=0.3, max_steps=40, val_every=3)
    print("kills by the phase they landed in:", landed)
    assert landed == {phase: 4 for phase in PHASES}, landed


# ---------------------------------------------------------------------------------------------
# A corrupted last.pt


def test_a_corrupted_last_checkpoint_falls_back_to_the_newest_periodic_one_that_verifies(
    tmp_path, small_corpus, caplog
):
    overrides = _overrides(
        small_corpus, tmp_path / "cache", max_steps=4, checkpoint_every=2, keep_checkpoints=2, val_every=1000
    )
    run = tmp_path / "run"
    Trainer(_compose(overrides), run).fit()
    ckpts = run / "checkpoints"
    for name in ("last.pt", "step_0000004.pt"):  # one flipped bit in a tensor record: torch alone loads it
        data = bytearray((ckpts / name).read_bytes())
        data[len(data) // 2] ^= 0x04
        (ckpts / name).write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="gst_tts.training.data_builders"):
        resumed = Trainer(_compose(overrides), run)
    assert resumed.state.step == 2
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    fallback = [m for m in warnings if "resuming from" in m]
    assert len(fallback) == 1 and "\n" not in fallback[0], warnings
    assert f"{ckpts / 'last.pt'}: corrupted checkpoint" in fallback[0] and str(ckpts / "step_0000002.pt") in fallback[0]


# ---------------------------------------------------------------------------------------------
# A full disk, a read-only folder


def _refused_write(code: int):
    """``atomic_write`` on a file system that refuses a checkpoint with ``OSError(code)`` after its
    first kilobyte (a full disk takes some bytes first)."""

    def atomic_write(path, write):
        def refused(f):
            f.write(b"\0" * 1024)
            raise OSError(code, os.strerror(code))

        return gst_tts.files.atomic_write(path, refused)

    return atomic_write


@pytest.mark.parametrize(
    "code, reason", [(errno.ENOSPC, "no space left on device"), (errno.EROFS, "read-only file system")]
)
def test_a_refused_checkpoint_write_ends_training_in_one_line_and_keeps_last_pt(
    tmp_path, small_corpus, monkeypatch, code, reason
):
    overrides = _overrides(small_corpus, tmp_path / "cache", max_steps=1, val_every=1000)
    run = tmp_path / "run"
    Trainer(_compose(overrides), run).fit()
    last = run / "checkpoints" / "last.pt"
    before = last.read_bytes()
    overrides = _overrides(small_corpus, tmp_path / "cache", max_steps=2, val_every=1000)
    trainer = Trainer(_compose(overrides), run)
    monkeypatch.setattr(gst_tts.checkpoints.weights, "atomic_write", _refused_write(code))
    with pytest.raises(OutputError) as info:
        trainer.fit()
    assert str(info.value) == f"{last}: cannot write: {reason}"
    assert last.read_bytes() == before
    assert sorted(p.name for p in last.parent.iterdir()) == ["last.pt"]


def test_gst_tts_train_on_a_full_disk_exits_2_with_one_line(tmp_path, small_corpus, monkeypatch, capsys):
    run = tmp_path / "run"
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "gst-tts-train",
            *_overrides(small_corpus, tmp_path / "cache", max_steps=1, val_every=1000),
            f"hydra.run.dir={run}",
        ],
    )
    monkeypatch.setattr(gst_tts.checkpoints.weights, "atomic_write", _refused_write(errno.ENOSPC))  # checkpoints only
    with pytest.raises(SystemExit) as info:
        train_main()
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert (
        err.strip().splitlines()[-1]
        == f"error: {run / 'checkpoints' / 'last.pt'}: cannot write: no space left on device"
    )
    assert "Traceback" not in err
    assert not list((run / "checkpoints").iterdir())


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_a_read_only_run_folder_is_one_line(tmp_path, small_corpus):
    overrides = _overrides(small_corpus, tmp_path / "cache", max_steps=1, val_every=1000)
    run = tmp_path / "run"
    Trainer(_compose(overrides), run).fit()
    ckpts = run / "checkpoints"
    ckpts.chmod(0o555)
    try:
        trainer = Trainer(_compose(_overrides(small_corpus, tmp_path / "cache", max_steps=2, val_every=1000)), run)
        with pytest.raises(GstTtsError, match="cannot write: permission denied"):
            trainer.fit()
    finally:
        ckpts.chmod(0o755)
