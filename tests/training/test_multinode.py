"""Two nodes on one machine: two torchrun agents meeting through the c10d rendezvous on loopback,
one gloo training process each, as recipes/ljspeech/run.sh starts them with NNODES=2."""

import os
from pathlib import Path
import re
import socket
import subprocess
import sys

from conftest import write_corpus

from gst_tts.checkpoints.acoustic import load_checkpoint, model_from_checkpoint
from gst_tts.training.loop import parameter_digest

REPO = Path(__file__).resolve().parents[2]
# The packaged tiny model on the CPU, 2 steps; one validation synthesis at the end (rank 0's).
OVERRIDES = [
    "model=tiny",
    "trainer.max_steps=2",
    "trainer.device=cpu",
    "trainer.progress=false",
    "trainer.threads=1",
    "trainer.log_every=1",
    "trainer.val_inference_utterances=1",
    "data.batch_size=2",
    "data.val_size=2",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_nodes_through_the_c10d_rendezvous_train_one_model_that_only_rank_zero_saves(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", n=6)
    run_dir = tmp_path / "run"  # one folder for both "nodes", as a shared file system gives them
    port = _free_port()
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]), OMP_NUM_THREADS="1"
    )
    nodes = [
        subprocess.Popen(
            # No --node_rank: c10d hands out ranks in the order the agents join, ignoring it (torch
            # says so in a warning); node_rank is the static rendezvous's.
            [
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--nnodes=2",
                "--nproc_per_node=1",
                "--rdzv_backend=c10d",
                f"--rdzv_endpoint=127.0.0.1:{port}",
                "--rdzv_id=test-multinode",
                "-m",
                "gst_tts.training.train",
                f"data.root={corpus}",
                f"data.cache_dir={tmp_path / 'cache'}",
                f"hydra.run.dir={run_dir}",
                *OVERRIDES,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    outputs = []
    try:
        for node in nodes:
            outputs.append(node.communicate(timeout=300)[0])
    finally:
        for node in nodes:
            node.kill()
    for node, output in zip(nodes, outputs):
        assert node.returncode == 0, output[-3000:]

    # Each node's output is its one rank's: it says which rank that was.
    by_rank = {}
    for output in outputs:
        started = re.findall(r"rank (\d) of (\d) \(local rank 0 on .*\), gloo on cpu", output)
        finished = re.findall(r"rank (\d) of (\d) finished at step 2: parameters (crc32:[0-9a-f]{8})", output)
        assert len(started) == 1 and len(finished) == 1, output[-3000:]
        assert started[0][1] == finished[0][1] == "2"  # world size 2
        by_rank[int(finished[0][0])] = (finished[0][2], output)
    assert sorted(by_rank) == [0, 1]
    assert by_rank[0][0] == by_rank[1][0]  # the same parameters on both ranks
    # Only rank 0 writes checkpoints: its output names the save, the other's names none.
    assert f"step 2: saved {run_dir / 'checkpoints' / 'last.pt'}" in by_rank[0][1]
    assert "saved" not in by_rank[1][1]
    # ... and what it saved is what both ranks ended with, after the 2 steps.
    ckpt = load_checkpoint(run_dir / "checkpoints" / "last.pt")
    assert ckpt["step"] == 2
    assert parameter_digest({"model": model_from_checkpoint(ckpt)}) == by_rank[1][0]
    assert not list(run_dir.glob(".shared-check-*"))  # the shared-folder check's marker is gone
