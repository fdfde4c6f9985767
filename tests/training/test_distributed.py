"""DDP on CPU: two gloo processes stay identical (acoustic model and vocoder), their checkpoint
resumes in one process, a failure on rank 0 ends every rank, torchrun without hydra.run.dir is
refused (each rank would name its folder from its own clock), and so are ranks whose run folders
are not one shared folder."""

import importlib
import os
from pathlib import Path
import socket
import sys
import time

from conftest import write_corpus
from hydra.core.global_hydra import GlobalHydra
import numpy as np
from omegaconf import OmegaConf
import pytest
import soundfile as sf
import torch
import torch.multiprocessing as mp

from gst_tts.errors import DataError, GstTtsError
from gst_tts.checkpoints.acoustic import load_checkpoint
from gst_tts.training.distributed import DistributedContext, check_shared_run_dir
from gst_tts.training.trainer import Trainer
from gst_tts.training.vocoder_trainer import VocoderTrainer


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world_size: int, port: int, cfg_dict: dict, run_dir: str, out_dir: str) -> None:
    os.environ.update(
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(world_size), RANK=str(rank), LOCAL_RANK=str(rank)
    )
    torch.set_num_threads(1)
    trainer = Trainer(OmegaConf.create(cfg_dict), run_dir)
    trainer.fit()
    # Parameters only: BatchNorm running statistics are per rank by design (rank 0's are saved).
    torch.save({k: v.detach().cpu() for k, v in trainer.model.named_parameters()}, Path(out_dir) / f"rank{rank}.pt")
    torch.distributed.destroy_process_group()


def test_ddp_ranks_stay_identical_and_checkpoint_resumes_on_one_process(make_cfg, tmp_path):
    corpus = write_corpus(tmp_path / "corpus", n=10)
    cfg = make_cfg(corpus, tmp_path / "cache", max_steps=3, val_every=1000, grad_accumulation=2)
    run_dir = tmp_path / "run"
    mp.spawn(
        _worker,
        args=(2, _free_port(), OmegaConf.to_container(cfg, resolve=True), str(run_dir), str(tmp_path)),
        nprocs=2,
        join=True,
    )
    rank0, rank1 = torch.load(tmp_path / "rank0.pt"), torch.load(tmp_path / "rank1.pt")
    initial = dict(
        Trainer(
            make_cfg(corpus, tmp_path / "cache", max_steps=3, resume=False), tmp_path / "fresh"
        ).model.named_parameters()
    )
    moved = 0
    for name, value in rank0.items():
        assert torch.equal(value, rank1[name]), name
        moved += not torch.equal(value, initial[name])
    assert moved > 0, "training changed no parameter"
    assert load_checkpoint(run_dir / "checkpoints" / "last.pt")["step"] == 3

    resumed = Trainer(make_cfg(corpus, tmp_path / "cache", max_steps=5), run_dir)
    assert resumed.state.step == 3
    for name, value in resumed.model.named_parameters():
        assert torch.equal(value, rank0[name]), name
    assert resumed.fit().step == 5


def test_ddp_resume_repeats_an_uninterrupted_run_on_every_rank(make_cfg, tmp_path):
    """Each rank resumes its own random streams: two ranks stopped at step 2 and resumed to step 4
    end with the parameters of two ranks that ran 4 steps (rank 1's dropout included)."""
    corpus = write_corpus(tmp_path / "corpus", n=10)

    def train(max_steps: int, run_dir: Path, out_dir: Path) -> dict[str, torch.Tensor]:
        out_dir.mkdir()
        cfg = OmegaConf.to_container(make_cfg(corpus, tmp_path / "cache", max_steps=max_steps), resolve=True)
        mp.spawn(_worker, args=(2, _free_port(), cfg, str(run_dir), str(out_dir)), nprocs=2, join=True)
        return torch.load(out_dir / "rank0.pt")

    uninterrupted = train(4, tmp_path / "whole", tmp_path / "whole_out")
    train(2, tmp_path / "split", tmp_path / "first_out")
    assert len(load_checkpoint(tmp_path / "split" / "checkpoints" / "last.pt")["rng"]["ranks"]) == 2
    resumed = train(4, tmp_path / "split", tmp_path / "second_out")
    for name, value in uninterrupted.items():
        assert torch.equal(resumed[name], value), name


def _report(rank: int, world_size: int, out_dir: str, message: str) -> None:
    """Writes this rank's outcome, then stays up until every rank has reported: an exiting rank
    closes its gloo sockets, which would wake a waiting peer with a connection error rather than
    leave it hanging as NCCL does."""
    (Path(out_dir) / f"error{rank}.txt").write_text(message)
    deadline = time.monotonic() + 600
    while len(list(Path(out_dir).glob("error*.txt"))) < world_size and time.monotonic() < deadline:
        time.sleep(0.1)
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


def _trainer_error_worker(rank: int, world_size: int, port: int, cfg_dict: dict, out_dir: str) -> None:
    os.environ.update(
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(world_size), RANK=str(rank), LOCAL_RANK=str(rank)
    )
    torch.set_num_threads(1)
    try:
        Trainer(OmegaConf.create(cfg_dict), Path(out_dir) / "run")
        message = "no error"
    except GstTtsError as exc:
        message = str(exc)
    _report(rank, world_size, out_dir, message)


def _block_error_worker(rank: int, world_size: int, port: int, failing_rank: int, out_dir: str) -> None:
    os.environ.update(
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(world_size), RANK=str(rank), LOCAL_RANK=str(rank)
    )
    try:
        with DistributedContext.from_environment("cpu").rank_zero_first():
            if rank == failing_rank:
                raise DataError(f"metadata.csv:3: broken on rank {rank}")
        message = "no error"
    except GstTtsError as exc:
        message = str(exc)
    _report(rank, world_size, out_dir, message)


def _shared_folder_worker(rank: int, world_size: int, port: int, out_dir: str) -> None:
    """Each rank's own run folder, as on nodes without a shared file system."""
    os.environ.update(
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(world_size), RANK=str(rank), LOCAL_RANK=str(rank)
    )
    try:
        DistributedContext.from_environment("cpu").check_shared_folder(Path(out_dir) / f"node{rank}" / "run")
        message = "no error"
    except GstTtsError as exc:
        message = str(exc)
    _report(rank, world_size, out_dir, message)


def _reports_of_two_ranks(worker, args: tuple, out_dir: Path, timeout: float = 120) -> list[str]:
    context = mp.spawn(worker, args=(2, _free_port(), *args, str(out_dir)), nprocs=2, join=False)
    deadline = time.monotonic() + timeout
    while not context.join(timeout=1):
        if time.monotonic() > deadline:
            for process in context.processes:
                process.kill()
            reported = sorted(p.name for p in out_dir.glob("error*.txt"))
            pytest.fail(f"ranks still running after {timeout:.0f} s (reported: {reported}): one waits forever")
    return [(out_dir / f"error{rank}.txt").read_text() for rank in range(2)]


def test_a_corpus_error_on_rank_zero_ends_every_rank_with_the_same_error(make_cfg, tmp_path):
    corpus = write_corpus(tmp_path / "corpus", n=6)
    sf.write(corpus / "wavs" / "UT-003.wav", np.zeros(22050, dtype=np.float32), 22050, subtype="PCM_16")
    cfg = make_cfg(corpus, tmp_path / "cache", max_steps=1)
    messages = _reports_of_two_ranks(_trainer_error_worker, (OmegaConf.to_container(cfg, resolve=True),), tmp_path)
    assert messages[0] == messages[1]
    assert "UT-003" in messages[0] and "silent" in messages[0] and "\n" not in messages[0]


def test_an_error_in_the_other_ranks_turn_reaches_rank_zero(tmp_path):
    messages = _reports_of_two_ranks(_block_error_worker, (1,), tmp_path)
    assert messages == ["metadata.csv:3: broken on rank 1"] * 2


# ---------------------------------------------------------------------------------------------
# The run folder under torchrun: one for every rank


def test_a_run_folder_that_is_not_shared_ends_every_rank_in_one_line(tmp_path):
    messages = _reports_of_two_ranks(_shared_folder_worker, (), tmp_path)
    assert messages[0] == messages[1], messages
    assert messages[0].startswith("rank 1 on ") and "does not see what rank 0 wrote" in messages[0]
    assert str(tmp_path / "node1" / "run") in messages[0] and "\n" not in messages[0]
    assert not list((tmp_path / "node0" / "run").iterdir())  # rank 0 took its marker away


def test_a_run_folder_named_from_the_clock_is_refused_under_torchrun(monkeypatch):
    default = "runs/${now:%Y-%m-%d_%H-%M-%S}"
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    check_shared_run_dir(default)  # one process: its own clock is the only one
    monkeypatch.setenv("WORLD_SIZE", "2")
    check_shared_run_dir("/data/runs/lj")
    with pytest.raises(GstTtsError) as info:
        check_shared_run_dir(default)
    assert "hydra.run.dir=PATH" in str(info.value) and default in str(info.value) and "\n" not in str(info.value)
    monkeypatch.setenv("WORLD_SIZE", "two")
    with pytest.raises(GstTtsError, match="WORLD_SIZE='two'"):
        check_shared_run_dir("/data/runs/lj")


@pytest.mark.parametrize("entry", ["gst_tts.training.train", "gst_tts.training.train_vocoder"])
def test_torchrun_without_hydra_run_dir_ends_each_rank_in_one_line_before_training(
    entry, tmp_path, monkeypatch, capsys
):
    """The entry points as torchrun starts them (WORLD_SIZE, RANK set), in this process: the
    default folder is refused before a trainer exists; a given one is passed on."""
    module = importlib.import_module(entry)
    started: list[str] = []
    monkeypatch.setattr(module, "run", lambda cfg, run_dir: started.append(str(run_dir)))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    quiet = ["hydra/job_logging=none", "hydra/hydra_logging=none"]  # leave pytest's logging alone
    try:
        monkeypatch.setattr(sys, "argv", [entry, "data.root=corpus", *quiet])
        with pytest.raises(SystemExit) as info:
            module.main()
        assert info.value.code == 2 and started == []
        err = capsys.readouterr().err
        assert (
            err.count("\n") == 1 and err.startswith("error: 2 processes (WORLD_SIZE)") and "hydra.run.dir=PATH" in err
        ), err

        monkeypatch.setattr(sys, "argv", [entry, "data.root=corpus", f"hydra.run.dir={tmp_path / 'run'}", *quiet])
        module.main()
        assert started == [str(tmp_path / "run")]
    finally:
        GlobalHydra.instance().clear()


# ---------------------------------------------------------------------------------------------
# The vocoder trainer: the same context, two networks


def _vocoder_worker(rank: int, world_size: int, port: int, cfg_dict: dict, run_dir: str, out_dir: str) -> None:
    os.environ.update(
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(world_size), RANK=str(rank), LOCAL_RANK=str(rank)
    )
    torch.set_num_threads(1)
    trainer = VocoderTrainer(OmegaConf.create(cfg_dict), run_dir)
    trainer.fit()
    torch.save(
        {f"{name}.{k}": v.detach().cpu() for name, net in trainer.networks.items() for k, v in net.named_parameters()},
        Path(out_dir) / f"rank{rank}.pt",
    )
    torch.distributed.destroy_process_group()


# HiFi-GAN (tiny), and the spectral vocoder (the generator alone) with a 16-channel estimator.
VOCODER_KINDS = {"hifigan": ((), {}), "spectral": (("vocoder=cpu_small", "generator.channels=16"), {"tiny": False})}


@pytest.mark.parametrize(
    "kind",
    [
        "hifigan",
        pytest.param(
            "spectral",
            marks=pytest.mark.slow(reason="the DDP loop is hifigan's too; the spectral step has its own tests"),
        ),
    ],
)
def test_vocoder_ddp_ranks_stay_identical_and_checkpoint_resumes_on_one_process(make_vocoder_cfg, tmp_path, kind):
    overrides, options = VOCODER_KINDS[kind]

    def make_vocoder_cfg_of_kind(*args, **trainer):
        return make_vocoder_cfg(*args, *overrides, **options, **trainer)

    corpus = write_corpus(tmp_path / "corpus", n=5)
    cfg = make_vocoder_cfg_of_kind(corpus, tmp_path / "cache", max_steps=2)
    run_dir = tmp_path / "run"
    mp.spawn(
        _vocoder_worker,
        args=(2, _free_port(), OmegaConf.to_container(cfg, resolve=True), str(run_dir), str(tmp_path)),
        nprocs=2,
        join=True,
    )
    rank0, rank1 = torch.load(tmp_path / "rank0.pt"), torch.load(tmp_path / "rank1.pt")
    for name, value in rank0.items():
        assert torch.equal(value, rank1[name]), name
    resumed = VocoderTrainer(make_vocoder_cfg_of_kind(corpus, tmp_path / "cache", max_steps=3), run_dir)
    assert resumed.state.step == 2 and resumed.kind == kind
    for name, value in resumed.generator.named_parameters():
        assert torch.equal(value, rank0[f"generator.{name}"]), name
    assert resumed.fit().step == 3
