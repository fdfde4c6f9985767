"""DDP on CPU: two gloo processes stay identical, and their checkpoint resumes in one process."""

import os
import socket
from pathlib import Path

import torch
import torch.multiprocessing as mp
from omegaconf import OmegaConf

from conftest import write_corpus
from gst_tts.checkpoint import load_checkpoint
from gst_tts.train import Trainer
from test_train import make_cfg


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world_size: int, port: int, cfg_dict: dict, run_dir: str, out_dir: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(world_size),
                      RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    trainer = Trainer(OmegaConf.create(cfg_dict), run_dir)
    trainer.fit()
    # Parameters only: BatchNorm running statistics are per rank by design (rank 0's are saved).
    torch.save({k: v.detach().cpu() for k, v in trainer.model.named_parameters()}, Path(out_dir) / f"rank{rank}.pt")
    torch.distributed.destroy_process_group()


def test_ddp_ranks_stay_identical_and_checkpoint_resumes_on_one_process(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", n=10)
    cfg = make_cfg(corpus, tmp_path / "cache", max_steps=3, val_every=1000, grad_accumulation=2)
    run_dir = tmp_path / "run"
    mp.spawn(_worker, args=(2, _free_port(), OmegaConf.to_container(cfg, resolve=True), str(run_dir), str(tmp_path)),
             nprocs=2, join=True)
    rank0, rank1 = torch.load(tmp_path / "rank0.pt"), torch.load(tmp_path / "rank1.pt")
    initial = dict(Trainer(make_cfg(corpus, tmp_path / "cache", max_steps=3, resume=False), tmp_path / "fresh").model.named_parameters())
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
