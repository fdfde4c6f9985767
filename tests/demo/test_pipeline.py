"""The demo's plan (gst-tts demo, make demo): budgets in steps, stages skipped when done, resumed when
interrupted, redone when what they were made from changed, refused when that cannot be right.

The stages here are stand-ins (a small script that writes each stage's outputs), so that the plan's
rules are tested in seconds; every real stage command has tests of its own."""

from __future__ import annotations

import json
from pathlib import Path
import sys

from conftest import write_tiny_checkpoint
import pytest

from gst_tts.cli import main as cli_main
from gst_tts.demo import pipeline
from gst_tts.demo.pipeline import DemoBudget, plan_demo, run_demo
from gst_tts.errors import GstTtsError

FAKE_STAGE = r"""
import json, os, pathlib, signal, sys, time
name, log, args = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3:]
with log.open("a") as f:
    f.write(name + "\n")
if os.environ.get("FAKE_FAIL") == name:
    print(f"{name}: error: broken on purpose", file=sys.stderr)
    sys.exit(2)
def opt(prefix):
    return next((a.split("=", 1)[1] for a in args if a.startswith(prefix)), None)
def after(flag):
    return pathlib.Path(args[args.index(flag) + 1])
def wait_for(path):
    for _ in range(600):
        if path.exists():
            return
        time.sleep(0.1)
    sys.exit(f"{name}: {path} never came")
if name in ("acoustic", "vocoder", "vocoder_gta"):
    ckpt = pathlib.Path(opt("hydra.run.dir=")) / "checkpoints"
    ckpt.mkdir(parents=True, exist_ok=True)
    last = ckpt / "last.pt"
    start = json.loads(last.read_text())["step"] if last.exists() else 0
    def stop(*_):  # Ctrl-C: the trainer saves where it is and exits 130
        last.write_text(json.dumps({"step": start + 40}))
        os._exit(130)
    signal.signal(signal.SIGINT, stop)
    steps = int(opt("trainer.max_steps="))
    reached = min(steps, start + 100) if opt("trainer.max_minutes=") not in (None, "null") else steps
    for step in range(250 * (start // 250 + 1), reached + 1, 250):
        (ckpt / f"step_{step:07d}.pt").write_text(json.dumps({"step": step}))
    if os.environ.get("FAKE_HOLD") == name:  # trains until interrupted
        (ckpt / "holding").write_text("")
        time.sleep(60)
        sys.exit(f"{name}: never interrupted")
    if os.environ.get("FAKE_INTERRUPT") == name:
        if os.environ.get("FAKE_INTERRUPT_AFTER"):
            wait_for(pathlib.Path(os.environ["FAKE_INTERRUPT_AFTER"]))
        stop()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # finished: a Ctrl-C from now on changes nothing
    last.write_text(json.dumps({"step": reached}))
    (ckpt / "generator.pt").write_text("{}")
elif name == "select":
    candidates = args[args.index("--checkpoints") + 1 : args.index("--vocoder")]
    after("--out").write_text(json.dumps({"from": candidates}))
elif name == "dials":  # probe-tokens --save-dials: NAME.dials.json beside the checkpoint
    checkpoint = after("--checkpoint")
    assert checkpoint.exists() and after("--vocoder").parent.exists()
    dials = checkpoint.with_suffix(".dials.json")
    assert not dials.exists(), f"{dials} was not cleared"
    dials.write_text("{}")
elif name in ("gta", "report"):
    folder = after("--out")
    assert not folder.exists(), f"{folder} was not cleared"
    folder.mkdir(parents=True)
    (folder / "done").write_text("")
else:  # corpus (make-demo-corpus --out DIR), features (prepare --corpus DIR)
    after("--out" if "--out" in args else "--corpus").mkdir(parents=True, exist_ok=True)
"""

SMALL = dict(steps=500, vocoder_steps=300, vocoder_gta_steps=200, utterances=12)


@pytest.fixture
def fake_stages(tmp_path, monkeypatch):
    """Runs the stand-in stages; returns the file that lists the stages run, one per line."""
    script, log = tmp_path / "fake_stage.py", tmp_path / "stages.log"
    script.write_text(FAKE_STAGE)
    log.write_text("")
    monkeypatch.setattr(
        pipeline.Stage, "command", lambda self: [sys.executable, str(script), self.name, str(log), *self.args]
    )
    monkeypatch.setattr(
        pipeline,
        "_checkpoint_step",
        lambda stage: json.loads(stage.checkpoint.read_text())["step"] if stage.checkpoint.exists() else None,
    )
    monkeypatch.setattr(pipeline, "available_cores", lambda: 4)
    return log


def run(out: Path, log: Path, **budget) -> tuple[int, list[str], str]:
    """Runs the plan; returns its exit code, the stages that ran and what it printed."""
    before = log.read_text().splitlines()
    printed: list[str] = []
    code = run_demo(out, DemoBudget(**{**SMALL, **budget}), probe=lambda threads: 0.4, say=printed.append)
    return code, log.read_text().splitlines()[len(before) :], "\n".join(printed)


def test_a_new_demo_prints_its_plan_then_runs_every_stage_once(fake_stages, tmp_path):
    out = tmp_path / "demo"
    code, ran, printed = run(out, fake_stages)
    assert code == 0
    assert sorted(ran) == sorted(
        ["corpus", "features", "acoustic", "vocoder", "select", "gta", "vocoder_gta", "report", "dials"]
    )
    assert ran.index("features") < min(ran.index("acoustic"), ran.index("vocoder")) and ran.index("select") > ran.index(
        "acoustic"
    )
    plan = printed.split("\n==")[0]
    assert "500 steps" in plan and "estimated total" in plan and "0.40 s a step" in plan
    assert "alongside the acoustic model" in plan and f"{out}/vocoder.log" in printed
    assert "gst-tts-train " in printed and "trainer.max_steps=500" in printed and "trainer.threads=1" in printed
    state = json.loads((out / pipeline.STATE_NAME).read_text())
    assert all(record["done"] for record in state["stages"].values()) and state["stages"]["acoustic"]["step"] == 500
    # The selection's candidates: the kept periodic checkpoints and last.pt.
    assert json.loads((out / "checkpoints" / "best.pt").read_text())["from"][-1].endswith("last.pt")


def test_running_it_again_does_nothing_and_says_how_to_train_on(fake_stages, tmp_path):
    out = tmp_path / "demo"
    run(out, fake_stages)
    code, ran, printed = run(out, fake_stages)
    assert code == 0 and ran == []
    assert "Nothing to do" in printed and "DEMO_STEPS" in printed


def test_more_steps_resume_training_and_redo_only_what_follows_it(fake_stages, tmp_path):
    out = tmp_path / "demo"
    run(out, fake_stages)
    plan = plan_demo(out, DemoBudget(**{**SMALL, "steps": 750}))
    status = {stage.name: stage.status for stage in plan.stages}
    assert status == {
        "corpus": "done",
        "features": "done",
        "acoustic": "resume",
        "vocoder": "done",
        "select": "redo",
        "gta": "redo",
        "vocoder_gta": "redo",
        "report": "redo",
        "dials": "redo",
    }
    code, ran, _ = run(out, fake_stages, steps=750)
    assert code == 0 and ran == ["acoustic", "select", "gta", "vocoder_gta", "report", "dials"]
    assert json.loads((out / "checkpoints" / "last.pt").read_text())["step"] == 750


def test_a_demo_finished_before_the_dials_stage_only_names_its_dials(fake_stages, tmp_path):
    out = tmp_path / "demo"
    run(out, fake_stages)
    state = json.loads((out / pipeline.STATE_NAME).read_text())
    del state["stages"]["dials"]
    (out / pipeline.STATE_NAME).write_text(json.dumps(state))
    (out / "checkpoints" / "best.dials.json").unlink()
    code, ran, printed = run(out, fake_stages)
    assert code == 0 and ran == ["dials"] and (out / "checkpoints" / "best.dials.json").exists()
    assert "best.dials.json" in printed


def test_fewer_steps_or_other_settings_under_a_trained_model_are_refused(fake_stages, tmp_path):
    out = tmp_path / "demo"
    run(out, fake_stages)
    with pytest.raises(GstTtsError, match="at step 500, past the budget of 400"):
        plan_demo(out, DemoBudget(**{**SMALL, "steps": 400}))
    with pytest.raises(GstTtsError, match=r"other settings \(train_args \[\] -> \['loss.mel_loss=mse'\]\)"):
        plan_demo(out, DemoBudget(**{**SMALL, "train_args": ("loss.mel_loss=mse",)}))
    with pytest.raises(GstTtsError, match="threads 1 -> 2"):
        plan_demo(out, DemoBudget(**{**SMALL, "threads": 2}))


def test_a_failed_stage_stops_the_plan_and_the_next_run_goes_on_from_it(fake_stages, tmp_path, monkeypatch):
    out = tmp_path / "demo"
    monkeypatch.setenv("FAKE_FAIL", "gta")
    code, ran, printed = run(out, fake_stages)
    assert code == 2 and ran[-1] == "gta" and "report" not in ran
    assert "the GTA mels failed (exit 2)" in printed
    monkeypatch.delenv("FAKE_FAIL")
    code, ran, _ = run(out, fake_stages)
    assert code == 0 and ran == ["gta", "vocoder_gta", "report", "dials"]


def test_an_interrupted_training_resumes_where_it_stopped(fake_stages, tmp_path, monkeypatch):
    out = tmp_path / "demo"
    monkeypatch.setenv("FAKE_INTERRUPT", "acoustic")  # once the vocoder alongside has finished
    monkeypatch.setenv("FAKE_INTERRUPT_AFTER", str(out / "vocoder" / "checkpoints" / "generator.pt"))
    code, ran, printed = run(out, fake_stages)
    assert code == 130 and "failed" not in printed and "select" not in ran
    monkeypatch.delenv("FAKE_INTERRUPT")
    status = {stage.name: (stage.status, stage.note) for stage in plan_demo(out, DemoBudget(**SMALL)).stages}
    assert status["acoustic"] == ("resume", "from step 40") and status["vocoder"][0] == "done"
    code, ran, _ = run(out, fake_stages)
    assert code == 0 and ran == ["acoustic", "select", "gta", "vocoder_gta", "report", "dials"]


def test_an_interrupt_stops_the_vocoder_alongside_too_and_both_resume(fake_stages, tmp_path, monkeypatch):
    out = tmp_path / "demo"
    monkeypatch.setenv("FAKE_HOLD", "vocoder")
    monkeypatch.setenv("FAKE_INTERRUPT", "acoustic")
    monkeypatch.setenv("FAKE_INTERRUPT_AFTER", str(out / "vocoder" / "checkpoints" / "holding"))
    code, ran, printed = run(out, fake_stages)
    assert code == 130 and "failed" not in printed and "select" not in ran
    for name in ("FAKE_HOLD", "FAKE_INTERRUPT", "FAKE_INTERRUPT_AFTER"):
        monkeypatch.delenv(name)
    status = {stage.name: (stage.status, stage.note) for stage in plan_demo(out, DemoBudget(**SMALL)).stages}
    assert status["acoustic"] == ("resume", "from step 40") and status["vocoder"] == ("resume", "from step 40")
    code, ran, _ = run(out, fake_stages)
    assert code == 0 and sorted(ran) == sorted(
        ["acoustic", "vocoder", "select", "gta", "vocoder_gta", "report", "dials"]
    )


def test_a_failed_stage_alongside_is_reported_with_its_log(fake_stages, tmp_path, monkeypatch):
    out = tmp_path / "demo"
    monkeypatch.setenv("FAKE_FAIL", "vocoder")
    code, ran, printed = run(out, fake_stages)
    assert code == 2 and "select" not in ran
    assert "the vocoder of the recordings failed (exit 2" in printed and "broken on purpose" in printed


def test_a_minutes_cap_leaves_training_to_finish_next_time(fake_stages, tmp_path):
    out = tmp_path / "demo"
    code, ran, printed = run(out, fake_stages, minutes=1.0)
    assert code == 0 and "report" in ran
    assert "stopped at step 100 of 500" in printed
    code, ran, _ = run(out, fake_stages, minutes=None)
    assert code == 0 and ran == ["acoustic", "select", "gta", "vocoder_gta", "report", "dials"]


def test_a_demo_made_before_the_plan_is_resumed_not_redone(fake_stages, tmp_path):
    out = tmp_path / "demo"
    (out / "checkpoints").mkdir(parents=True)
    (out / "checkpoints" / "last.pt").write_text(json.dumps({"step": 300}))
    (out / "samples").mkdir()
    (out / "samples" / "stale.wav").write_text("")
    status = {stage.name: (stage.status, stage.note) for stage in plan_demo(out, DemoBudget(**SMALL)).stages}
    assert status["acoustic"] == ("resume", "from step 300") and status["report"] == ("to do", "")
    code, ran, _ = run(out, fake_stages)
    assert code == 0 and not (out / "samples" / "stale.wav").exists()


def test_without_a_core_to_spare_the_vocoder_trains_after_the_acoustic_model(fake_stages, tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "available_cores", lambda: 1)
    code, ran, printed = run(tmp_path / "demo", fake_stages)
    assert code == 0 and ran.index("vocoder") == ran.index("acoustic") + 1 and "alongside" not in printed
    two = DemoBudget(**{**SMALL, "threads": 2})
    assert "this machine has 1 core for 2 threads" in pipeline.format_plan(plan_demo(tmp_path / "x", two), None, None)


def test_the_estimate_scales_the_reference_machine_by_the_probe(tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "available_cores", lambda: 4)
    plan = plan_demo(tmp_path / "demo", DemoBudget(**SMALL))
    here = pipeline.estimate(plan, pipeline.REFERENCE_PROBE_S)
    slower = pipeline.estimate(plan, 3 * pipeline.REFERENCE_PROBE_S)
    assert slower == pytest.approx(3 * here)
    acoustic = next(s for s in plan.stages if s.name == "acoustic")
    vocoder = next(s for s in plan.stages if s.name == "vocoder")
    assert acoustic.estimate_s == pytest.approx(3 * 500 * pipeline.REFERENCE_SECONDS["acoustic"])
    # The vocoder trains alongside the acoustic model: the total counts only what outlasts it.
    assert slower == pytest.approx(
        sum(s.estimate_s for s in plan.stages) - min(vocoder.estimate_s, acoustic.estimate_s)
    )


def test_the_probe_times_a_training_step_of_the_demo_model():
    seconds = pipeline.probe_step_seconds(1, steps=1)
    assert 0.01 < seconds < 60


def test_a_checkpoints_step_is_read_without_loading_the_model(tmp_path):
    stage = next(s for s in plan_demo(tmp_path, DemoBudget(**SMALL)).stages if s.name == "acoustic")
    assert pipeline._checkpoint_step(stage) is None
    write_tiny_checkpoint(stage.checkpoint, step=123)
    assert pipeline._checkpoint_step(stage) == 123


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--steps", "0"], "--steps: must be a whole number >= 1"),
        (["--threads", "x"], "--threads: must be a whole number >= 1"),
        (["--minutes", "-3"], "demo minutes must be positive"),
    ],
)
def test_bad_budgets_are_one_line_errors(argv, message, capsys, tmp_path):
    try:
        code = cli_main(["demo", "--out", str(tmp_path / "demo"), *argv])
    except SystemExit as exit:  # argparse's own errors
        code = exit.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_the_plan_knows_the_demo_configs_budget_and_checkpoint_cadence():
    from hydra import compose, initialize_config_module

    with initialize_config_module(config_module="gst_tts.conf", version_base="1.3"):
        cfg = compose("config", overrides=["trainer=demo"])
    assert cfg.trainer.max_steps == DemoBudget().steps and cfg.trainer.max_minutes is None
    assert cfg.trainer.checkpoint_every == pipeline.DEMO_CHECKPOINT_EVERY
    assert cfg.trainer.keep_checkpoints == pipeline.DEMO_KEEP_CHECKPOINTS


def test_every_gst_tts_stage_parses_with_the_cli_and_passes_the_seeds_it_used_before(tmp_path):
    from gst_tts.analysis.style_transfer import SELECTION_SEED
    from gst_tts.cli import build_parser

    plan = plan_demo(tmp_path / "demo", DemoBudget(), progress=False)
    parsed = {s.name: build_parser().parse_args(s.args) for s in plan.stages if s.program == "gst-tts"}
    assert set(parsed) == {"corpus", "features", "select", "gta", "report", "dials"}
    assert all(args.no_progress for args in parsed.values())
    # The seeds and batch sizes the stages had as defaults before those became 0 and 16: the same demo.
    assert (parsed["corpus"].seed, parsed["select"].seed, parsed["gta"].seed, parsed["report"].seed) == (
        0,
        SELECTION_SEED,
        1,
        1,
    )
    assert parsed["select"].batch_size == parsed["gta"].batch_size == parsed["report"].batch_size == 16
    # The dials are named beside the chosen checkpoint, where serve finds them, with the vocoder serve speaks with.
    assert parsed["dials"].save_dials and parsed["dials"].checkpoint == tmp_path / "demo" / "checkpoints" / "best.pt"
    assert parsed["dials"].vocoder == str(tmp_path / "demo" / "vocoder_gta" / "checkpoints" / "generator.pt")
    assert parsed["features"].corpus == parsed["corpus"].out == tmp_path / "demo" / "corpus"
    trainers = [s.args for s in plan.stages if s.program != "gst-tts"]
    assert trainers and all("trainer.progress=false" in args for args in trainers)


def test_the_gta_vocoder_is_recorded_beside_the_checkpoints(fake_stages, tmp_path):
    from gst_tts.inference.vocoder_choice import recorded_vocoder

    out = tmp_path / "demo"
    generator = out / "vocoder_gta" / "checkpoints" / "generator.pt"
    assert run(out, fake_stages)[0] == 0
    if not generator.is_file():  # the stand-in trainer wrote no generator: nothing is recorded
        assert recorded_vocoder(out / "checkpoints" / "best.pt") is None
        generator.parent.mkdir(parents=True, exist_ok=True)
        generator.write_bytes(b"stand-in")
        assert run(out, fake_stages)[0] == 0  # nothing to do, and the record is written
    assert recorded_vocoder(out / "checkpoints" / "best.pt") == generator


# ---------------------------------------------------------------------------------------------
# The instruction set every stage computes with


def test_stages_run_avx2_kernels_on_x86_and_keep_what_the_user_set():
    env = pipeline.stage_environment({"PATH": "/bin", "ONEDNN_MAX_CPU_ISA": "SSE41"}, machine="x86_64")
    assert env["ATEN_CPU_CAPABILITY"] == "avx2" and env["MKL_ENABLE_INSTRUCTIONS"] == "AVX2"
    assert env["ONEDNN_MAX_CPU_ISA"] == "SSE41" and env["PATH"] == "/bin"
    assert pipeline.stage_environment({"PATH": "/bin"}, machine="aarch64") == {"PATH": "/bin"}


def test_torch_in_a_stage_computes_with_avx2_kernels():
    import os
    import platform
    import subprocess

    import torch

    if platform.machine().lower() not in ("x86_64", "amd64") or torch.backends.cpu.get_cpu_capability() not in (
        "AVX2",
        "AVX512",
    ):
        pytest.skip(f"not an x86-64 CPU with AVX2 ({platform.machine()}, {torch.backends.cpu.get_cpu_capability()})")
    env = pipeline.stage_environment({k: v for k, v in os.environ.items() if k not in pipeline.PINNED_ISA})
    shown = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert shown == "AVX2"
