"""The recipes' wiring, end to end on a few ljspeech-mini clips with CPU overrides and 2 steps; the
LJSpeech recipe's launch commands (one GPU, N GPUs, several nodes) through its dry run."""

import os
from pathlib import Path
import shlex
import shutil
import subprocess
import sys

from conftest import TINY_MODEL

REPO = Path(__file__).resolve().parents[1]
# The test-sized model: the recipes' wiring is under test, not the model, and its untrained
# decoding runs every sentence to its step bound.
MODEL_OVERRIDES = [
    f"model.{key}={list(value) if isinstance(value, tuple) else value}".replace(" ", "")
    for key, value in TINY_MODEL.items()
    if key != "reduction_factor"
]
OVERRIDES = [
    "model.reduction_factor=3",
    "trainer.max_steps=2",
    "trainer.val_every=1",
    "trainer.checkpoint_every=1",
    "trainer.device=cpu",
    "trainer.progress=false",
    "data.batch_size=2",
    "data.val_size=1",
    "trainer.val_inference_utterances=1",
    *MODEL_OVERRIDES,
]


def _small_copy(source: Path, dest: Path, n: int, styles: bool = False) -> Path:
    (dest / "wavs").mkdir(parents=True)
    lines = (source / "metadata.csv").read_text(encoding="utf-8").splitlines()[:n]
    for line in lines:
        shutil.copy(source / "wavs" / f"{line.split('|')[0]}.wav", dest / "wavs")
    (dest / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if styles:
        (dest / "styles.csv").write_text(
            "\n".join(f"{line.split('|')[0]}|{'a' if i % 2 else 'b'}" for i, line in enumerate(lines)) + "\n"
        )
    return dest


def _run(script: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "BIN": str(Path(sys.executable).parent), "OMP_NUM_THREADS": "2", **env}
    return subprocess.run(
        ["bash", str(REPO / "recipes" / script), *args], capture_output=True, text=True, env=environment, timeout=600
    )


def test_ljspeech_recipe_runs_end_to_end(shared_data, tmp_path):
    data = _small_copy(shared_data / "ljspeech-mini", tmp_path / "lj", 4)
    run = tmp_path / "run"
    # Without the vocoder stage (about 15 s more here; its commands are checked below, dry): synthesis
    # falls back to Griffin-Lim.
    result = _run(
        "ljspeech/run.sh",
        str(data),
        str(run),
        *OVERRIDES,
        MODEL="tiny",
        EVAL_LIMIT="1",
        STAGES="prepare train synthesize",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "deprecated" not in result.stderr  # the recipe uses today's command names and flags
    assert (run / "checkpoints" / "last.pt").is_file() and not (run / "vocoder").exists()
    assert (run / "evaluation" / "summary.json").is_file()
    assert (run / "samples" / "example.wav").is_file() and (run / "samples" / "example.alignment.png").is_file()


def test_multistyle_recipe_runs_end_to_end(shared_data, tmp_path):
    data = _small_copy(shared_data / "ljspeech-mini", tmp_path / "styled", 4, styles=True)
    run = tmp_path / "run"
    result = _run("multistyle/run.sh", str(data), str(run), *OVERRIDES, MODEL="tiny", TEXT="A short test.")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "deprecated" not in result.stderr
    assert (run / "samples" / "a.wav").is_file() and (run / "samples" / "b.wav").is_file()
    assert (run / "samples" / "style_weights.png").is_file()


def test_recipe_without_corpus_is_a_clear_error(tmp_path):
    result = _run("ljspeech/run.sh", str(tmp_path / "missing"), str(tmp_path / "run"))
    assert result.returncode == 2 and "metadata.csv not found" in result.stderr


# ---------------------------------------------------------------------------------------------
# The LJSpeech recipe's commands, printed by DRY_RUN=1 (nothing runs)


def _commands(tmp_path: Path, *args: str, **env: str) -> list[list[str]]:
    data = tmp_path / "LJSpeech-1.1"
    data.mkdir(exist_ok=True)
    (data / "metadata.csv").write_text("LJ001-0001|Printing.|Printing.\n")
    result = _run(
        "ljspeech/run.sh", str(data), str(tmp_path / "runs" / "lj"), *args, DRY_RUN="1", BIN="/opt/bin", **env
    )
    assert result.returncode == 0, result.stderr
    return [shlex.split(line) for line in result.stdout.splitlines()]


def test_the_ljspeech_recipe_parses():
    result = subprocess.run(
        ["bash", "-n", str(REPO / "recipes" / "ljspeech" / "run.sh")], capture_output=True, text=True
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_one_node_trains_both_models_in_one_process_or_with_torchrun_standalone(tmp_path):
    one = _commands(tmp_path, "trainer.max_steps=5")
    assert [c[0] for c in one] == [
        "/opt/bin/gst-tts",
        "/opt/bin/gst-tts-train",
        "/opt/bin/gst-tts-train-vocoder",
        "/opt/bin/gst-tts",
        "/opt/bin/gst-tts",
    ]
    assert "trainer.max_steps=5" in one[1] and "trainer.max_steps=5" not in one[2]  # overrides are the acoustic model's
    four = _commands(tmp_path, NGPU="4")
    for command, module in zip(four[1:3], ["gst_tts.training.train", "gst_tts.training.train_vocoder"]):
        assert command[:3] == ["/opt/bin/torchrun", "--standalone", "--nproc_per_node=4"] and command[3:5] == [
            "-m",
            module,
        ]


def test_several_nodes_meet_through_the_c10d_rendezvous_with_one_id_per_stage(tmp_path):
    env = dict(NNODES="2", NGPU="8", MASTER_ADDR="10.0.0.1", MASTER_PORT="29400")
    nodes = [_commands(tmp_path, "data.audio.fmax=7600", NODE_RANK=str(rank), **env) for rank in (0, 1)]
    for node in nodes:
        train, vocoder = node[1], node[2]
        for command, stage in ((train, "train"), (vocoder, "vocoder")):
            assert command[0] == "/opt/bin/torchrun" and "--standalone" not in command
            assert {
                "--nnodes=2",
                "--nproc_per_node=8",
                "--rdzv_backend=c10d",
                "--rdzv_endpoint=10.0.0.1:29400",
                f"--rdzv_id=lj-{stage}",
            } <= set(command)
        assert "hydra.run.dir=" + str(tmp_path / "runs" / "lj" / "vocoder") in vocoder
        assert "data.audio.fmax=7600" in vocoder  # the acoustic model's feature settings
    assert nodes[0][:3] == nodes[1][:3]  # the same commands on every node ...
    assert len(nodes[0]) == 5 and len(nodes[1]) == 3  # ... and node 0 alone synthesizes
    generator = str(tmp_path / "runs" / "lj" / "vocoder" / "checkpoints" / "generator.pt")
    assert all(command[command.index("--vocoder") + 1] == generator for command in nodes[0][3:])


def test_without_the_vocoder_stage_synthesis_uses_griffin_lim(tmp_path):
    commands = _commands(tmp_path, STAGES="synthesize")
    assert len(commands) == 2 and all(c[c.index("--vocoder") + 1] == "griffin-lim" for c in commands)


def test_several_nodes_without_master_addr_is_a_one_line_error(tmp_path):
    (tmp_path / "metadata.csv").write_text("LJ001-0001|Printing.|Printing.\n")
    for env, says in (
        (dict(NNODES="2"), "NNODES=2 needs MASTER_ADDR"),
        (dict(NNODES="2", MASTER_ADDR="10.0.0.1", NODE_RANK="2"), "NODE_RANK=2 is not a node of 0..1"),
        (dict(NGPU="0"), "NGPU=0 is not a positive whole number"),
        (dict(STAGES="prepare eval"), "unknown stage 'eval'"),
    ):
        result = _run("ljspeech/run.sh", str(tmp_path), str(tmp_path / "run"), DRY_RUN="1", **env)
        assert result.returncode == 2 and result.stdout == "", env
        assert result.stderr.startswith("run.sh: ") and says in result.stderr and result.stderr.count("\n") == 1, (
            result.stderr
        )


# ---------------------------------------------------------------------------------------------
# The adaptation recipe's commands, printed by DRY_RUN=1, and its one-line errors


def test_the_adapt_recipe_adapts_both_models_on_one_held_out_split_and_chooses_by_it(tmp_path):
    data = tmp_path / "voice"
    data.mkdir()
    (data / "metadata.csv").write_text("V-001|Hello.|Hello.\n")
    init = tmp_path / "start" / "checkpoints" / "best.pt"
    run = tmp_path / "runs" / "voice"

    def dry_run():
        return _run(
            "adapt/run.sh",
            str(data),
            str(run),
            "trainer.learning_rate=2e-4",
            DRY_RUN="1",
            BIN="/opt/bin",
            INIT=str(init),
            STEPS="30",
        )

    result = dry_run()
    assert result.returncode == 2 and f"INIT={init}: no such checkpoint" in result.stderr
    init.parent.mkdir(parents=True)
    init.write_bytes(b"")
    result = dry_run()
    assert result.returncode == 0, result.stderr
    commands = [shlex.split(line) for line in result.stdout.splitlines() if line.startswith("/opt/bin/")]
    by_program = {}
    for command in commands:
        by_program.setdefault(Path(command[0]).name, []).append(command)
    val_ids = f"data.val_ids={run / 'val_ids.txt'}"
    (vocoder,) = by_program["gst-tts-train-vocoder"]
    (acoustic,) = by_program["gst-tts-train"]
    assert val_ids in vocoder and val_ids in acoustic
    assert f"trainer.init_from={init.parent.parent / 'vocoder' / 'checkpoints' / 'generator.pt'}" in vocoder
    assert f"trainer.init_from={init}" in acoustic and "data.prosody=null" in acoustic
    assert "trainer.max_steps=30" in acoustic and acoustic[-1] == "trainer.learning_rate=2e-4"
    select = next(c for c in by_program["gst-tts"] if c[1] == "select-checkpoint")
    assert select[select.index("--held-out") + 1] == "24" and select[select.index("--corpus") + 1] == str(data)
    modes = [c[c.index("--mode") + 1] for c in by_program["gst-tts"] if "--mode" in c]
    assert modes == ["free-running", "teacher-forced"]
    prepare = next(c for c in by_program["gst-tts"] if c[1] == "prepare")
    assert prepare[prepare.index("--frontend") + 1] == "phonemes"  # what data=demo reads
    check = next(c for c in by_program["gst-tts"] if c[1] == "check-alignment")
    assert check[check.index("--vocoder-quality") + 1] == "24"
    assert any(c[1] == "measure-parallel" for c in by_program["gst-tts"])
    transfers = [c for c in by_program["gst-tts"] if c[1] == "measure-transfer"]
    assert len(transfers) == 1 and "--augment-real" in transfers[0]  # the held-out recordings alone
    references = tmp_path / "clips"
    result = _run(
        "adapt/run.sh", str(data), str(run), DRY_RUN="1", BIN="/opt/bin", INIT=str(init), REFERENCES=str(references)
    )
    transfers = [shlex.split(line) for line in result.stdout.splitlines() if " measure-transfer " in line]
    assert len(transfers) == 2 and transfers[1][transfers[1].index("--references") + 1] == str(references)
    for env, message in (
        (dict(STEPS="0"), "STEPS=0 is not a positive"),
        (dict(TRANSFER_CLIPS="x"), "TRANSFER_CLIPS=x is not a positive"),
        (dict(STAGES="train bogus"), "bogus"),
    ):
        result = _run("adapt/run.sh", str(data), str(run), DRY_RUN="1", INIT=str(init), **env)
        assert result.returncode == 2 and message in result.stderr and result.stderr.count("\n") == 1
    result = _run("adapt/run.sh", str(tmp_path / "missing"), str(run), INIT=str(init))
    assert result.returncode == 2 and "metadata.csv not found" in result.stderr
