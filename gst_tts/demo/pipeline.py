"""``make demo`` as one plan: its stages in order, each budgeted in steps or items, none in minutes.

A budget in minutes let a machine's speed decide which model a user got: on a slow machine the
demo stopped its training early and the model did not align. Training is deterministic, so a
budget in steps gives every machine the same weights and the same figures; only the time differs.
The thread count is part of that (other counts sum in other orders), so every stage runs with the
budget's ``threads``; so is the CPU's instruction set, so on x86-64 every stage runs torch's, MKL's
and oneDNN's AVX2 kernels (:data:`PINNED_ISA`), which every x86-64 server of the last decade has,
rather than AVX-512 where the CPU has it.

The stages are the commands a user could run by hand (``gst-tts …``, ``gst-tts-train …``), each
in its own process. What each finished stage was made from is recorded in ``<out>/demo.json``;
running the plan again skips what is done, resumes what was interrupted, and redoes a stage only
when something it was made from changed. A training budget can be raised (training resumes and
the stages after it are redone); lowering it, or changing the recipe under a trained model, is
refused with one line.

At its start the plan prints its stages with a time estimate: the reference machine's measured
seconds for each stage, scaled by how long a few training steps of the demo's model take here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
import json
import os
from pathlib import Path
import platform
import shlex
import signal
import subprocess
import sys
import time
from typing import Any, Callable, Mapping, Sequence

from gst_tts.errors import GstTtsError
from gst_tts.files import write_json
from gst_tts.compute import available_cores
from gst_tts.demo.sentences import READ_SHARE

__all__ = ["DemoBudget", "Stage", "DemoPlan", "plan_demo", "run_demo", "STATE_NAME"]

#: The record of finished stages, in the demo folder.
STATE_NAME = "demo.json"
#: Its layout; a record of another version is not trusted.
STATE_VERSION = 1

#: The reference machine's figures: seconds per unit of each stage in a clean-clone `make demo` (2
#: cores, AMD EPYC, 1 thread, subprocess start-up included; the second core partly busy, so a little
#: slow: docs/results/2026-12-03-demo-3500-steps.md), and that run's probe (seconds per demo training
#: step, :func:`probe_step_seconds`), which scales them to other machines. The probe's random batch
#: runs faster than the corpus's batches, so the figures are per unit of the real stage.
REFERENCE_PROBE_S = 0.40
REFERENCE_SECONDS = {
    "corpus": 0.0108,  # per utterance rendered
    "features": 0.0139,  # per utterance
    "acoustic": 0.848,  # per training step, validations and checkpoints included
    "vocoder": 0.197,  # per step (alongside the acoustic model, so not in the total)
    "select": 98.5,  # per candidate checkpoint, its outputs transcribed included
    "gta": 0.0222,  # per utterance
    "vocoder_gta": 0.181,  # per step
    "report": 1.60,  # per synthesis
    "dials": 0.93,  # per synthesis (one core of two)
}
#: The instruction set every stage computes with on x86-64. torch (ATen), MKL and oneDNN otherwise
#: pick the widest the CPU has, and AVX-512 kernels round differently from AVX2 ones: the demo's
#: training amplifies that, so an AVX-512 machine trained another model (weights apart by 0.47
#: after 50 steps: docs/results/2026-11-28-weight-average.md). A variable the user set is kept.
PINNED_ISA = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}


def stage_environment(environ: Mapping[str, str] | None = None, machine: str | None = None) -> dict[str, str]:
    """The environment every stage runs in: ``environ`` (default this process's) with
    :data:`PINNED_ISA` added on x86-64 (``machine``: default ``platform.machine()``)."""
    env = dict(os.environ if environ is None else environ)
    if (machine or platform.machine()).lower() in ("x86_64", "amd64"):
        for key, value in PINNED_ISA.items():
            env.setdefault(key, value)
    return env


#: Periodic checkpoints the demo keeps (conf/trainer/demo.yaml: keep_checkpoints, checkpoint_every),
#: all candidates of the selection with last.pt.
DEMO_KEEP_CHECKPOINTS = 3
DEMO_CHECKPOINT_EVERY = 250
#: The report's syntheses: demo-report's defaults, 12 references × 4 sentences twice (the model alone, then
#: with the references' tempo and F0 range copied after it), then its intelligibility
#: figures: the 28 new-word sentences neutral and in 3 styles, and 24 held-out utterances teacher-forced
#: (each clip then transcribed, about as long again; 24 recordings and espeak-ng's 28 readings of the new
#: sentences are only transcribed, counted as one synthesis each).
REPORT_SYNTHESES = 48 * 2 + 28 * 4 + 24 + 28
#: probe-tokens' syntheses that name the dials: neutral, then every head's every token at its
#: default three amounts (the tiny model's 4 heads × 10 tokens).
DIALS_SYNTHESES = 1 + 4 * 10 * 3


@dataclass(frozen=True)
class DemoBudget:
    """What the demo trains and with how many threads: the same values give the same outputs.

    Args:
        steps: acoustic model training steps. Default 3500.
        vocoder_steps: steps of the vocoder trained on the recordings' mels. Default 1500.
        vocoder_gta_steps: steps of its fine-tuning on the model's GTA mels. Default 1000.
        utterances: demo corpus size. Default 2400.
        threads: torch CPU threads of every stage. Default 1: a step takes 1.2 times as long as
            with two on an idle 2-core machine, but the vocoder trains alongside on the other core,
            and it is hardly slower when another process holds a core, where two threads take
            several times as long (``benchmarks/bench_threads.py``).
        minutes: an optional cap on the acoustic model's training time; a run it stops early
            is finished by running the plan again. Default None.
        train_args: extra Hydra overrides for the acoustic model. Default none.
    """

    steps: int = 3500
    vocoder_steps: int = 1500
    vocoder_gta_steps: int = 1000
    utterances: int = 2400
    threads: int = 1
    minutes: float | None = None
    train_args: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("steps", "vocoder_steps", "vocoder_gta_steps", "utterances", "threads"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise GstTtsError(f"demo {name} must be a whole number >= 1, got {value!r}")
        if self.minutes is not None and not self.minutes > 0:
            raise GstTtsError(f"demo minutes must be positive (or unset), got {self.minutes!r}")


@dataclass
class Stage:
    """One step of the plan: a command, what its outputs are made from, and where they are."""

    name: str
    title: str
    budget: str
    program: str  # gst-tts | gst-tts-train | gst-tts-train-vocoder
    args: list[str]
    key: dict[str, Any]  # what the outputs are made from; a change redoes the stage
    units: float  # how many of REFERENCE_SECONDS[name]'s units it runs
    outputs: list[Path] = field(default_factory=list)  # removed before the stage is redone
    steps: int | None = None  # a training stage's step budget (training resumes toward it)
    checkpoint: Path | None = None  # a training stage's last.pt
    alongside: str | None = None  # runs at the same time as this stage (both single-threaded)
    status: str = "to do"
    note: str = ""
    estimate_s: float = 0.0

    def command(self) -> list[str]:
        """argv as this Python runs it."""
        module = {
            "gst-tts": "gst_tts.cli",
            "gst-tts-train": "gst_tts.training.train",
            "gst-tts-train-vocoder": "gst_tts.training.train_vocoder",
        }
        return [sys.executable, "-m", module[self.program], *self.args]

    def shown(self) -> str:
        """The command as a user would type it."""
        return " ".join([self.program, *map(shlex.quote, self.args)])


@dataclass
class DemoPlan:
    out: Path
    budget: DemoBudget
    stages: list[Stage]
    state: dict[str, Any]

    @property
    def pending(self) -> list[Stage]:
        return [s for s in self.stages if s.status != "done"]


#: Seeds and batch size the stages ran with before their commands' defaults became 0 and 16; given
#: explicitly, so that the demo trains and reports the same numbers (the selection's seed is
#: ``SELECTION_SEED``, apart from the report's).
GTA_SEED, REPORT_SEED, CORPUS_SEED, BATCH_SIZE = 1, 1, 0, 16


def _stages(out: Path, b: DemoBudget, cores: int, progress: bool = True) -> list[Stage]:
    """The demo's stages in order. With cores for both, the vocoder of the recordings trains
    alongside the acoustic model (it needs only the features); with fewer, after it, so that their
    threads do not wait on each other. ``progress``: False silences every stage's progress bars."""
    corpus, cache = out / "corpus", out / "feature_cache"
    threads = ["--threads", str(b.threads)] + ([] if progress else ["--no-progress"])
    common = [f"data.root={corpus}", f"data.cache_dir={cache}", f"trainer.threads={b.threads}"]
    common += [] if progress else ["trainer.progress=false"]
    batch = ["--batch-size", str(BATCH_SIZE)]
    from gst_tts.analysis.style_transfer import SELECTION_SEED
    from gst_tts.inference.dial_names import dials_path

    acoustic_fixed = {"utterances": b.utterances, "threads": b.threads, "train_args": list(b.train_args)}
    vocoder_fixed = {"utterances": b.utterances, "threads": b.threads}
    # The kept periodic checkpoints, and last.pt where it is not one of them.
    candidates = max(
        1, min(DEMO_KEEP_CHECKPOINTS, b.steps // DEMO_CHECKPOINT_EVERY) + bool(b.steps % DEMO_CHECKPOINT_EVERY)
    )
    best = out / "checkpoints" / "best.pt"
    vocoder = out / "vocoder" / "checkpoints"
    vocoder_gta = out / "vocoder_gta" / "checkpoints"
    stages = [
        Stage(
            "corpus",
            "demo corpus",
            f"{b.utterances:,} utterances",
            "gst-tts",
            [
                "make-demo-corpus",
                "--out",
                str(corpus),
                "--utterances",
                str(b.utterances),
                "--seed",
                str(CORPUS_SEED),
                "--read-share",
                f"{READ_SHARE:g}",
                *threads,
            ],
            {"utterances": b.utterances, "read_share": READ_SHARE},
            b.utterances,
        ),
        Stage(
            "features",
            "log-mel features",
            f"{b.utterances:,} utterances",
            "gst-tts",
            ["prepare", "--corpus", str(corpus), "--cache-dir", str(cache), *threads],
            {"utterances": b.utterances},
            b.utterances,
        ),
        Stage(
            "acoustic",
            "acoustic model",
            f"{b.steps:,} steps",
            "gst-tts-train",
            [
                *common,
                "model=tiny",
                "data=demo",
                "trainer=demo",
                "loss=demo",
                f"trainer.max_steps={b.steps}",
                f"trainer.max_minutes={f'{b.minutes:g}' if b.minutes else 'null'}",
                f"hydra.run.dir={out}",
                *b.train_args,
            ],
            acoustic_fixed,
            b.steps,
            steps=b.steps,
            checkpoint=out / "checkpoints" / "last.pt",
        ),
        Stage(
            "vocoder",
            "vocoder of the recordings",
            f"{b.vocoder_steps:,} steps",
            "gst-tts-train-vocoder",
            [
                "vocoder=cpu_small",
                "generator.pitch_head=false",
                *common,
                "data.val_size=24",
                f"trainer.max_steps={b.vocoder_steps}",
                "trainer.max_minutes=null",
                f"hydra.run.dir={out / 'vocoder'}",
            ],
            vocoder_fixed,
            b.vocoder_steps,
            steps=b.vocoder_steps,
            checkpoint=vocoder / "last.pt",
            alongside="acoustic" if cores >= 2 * b.threads else None,
        ),
        Stage(
            "select",
            "checkpoint selection",
            f"{candidates} candidate{'s' if candidates != 1 else ''}",
            "gst-tts",
            [
                "select-checkpoint",
                "--checkpoints",
                "CANDIDATES",
                "--vocoder",
                str(vocoder / "last.pt"),
                "--corpus",
                str(corpus),
                "--out",
                str(best),
                "--seed",
                str(SELECTION_SEED),
                *batch,
                *threads,
            ],
            {},
            candidates,
            outputs=[best, best.with_suffix(".json")],
        ),
        Stage(
            "gta",
            "GTA mels",
            f"{b.utterances:,} utterances",
            "gst-tts",
            [
                "dump-gta-mels",
                "--checkpoint",
                str(best),
                "--corpus",
                str(corpus),
                "--cache-dir",
                str(cache),
                "--out",
                str(out / "gta_mels"),
                "--seed",
                str(GTA_SEED),
                *batch,
                *threads,
            ],
            {},
            b.utterances,
            outputs=[out / "gta_mels"],
        ),
        Stage(
            "vocoder_gta",
            "vocoder tuned on GTA mels",
            f"{b.vocoder_gta_steps:,} steps",
            "gst-tts-train-vocoder",
            [
                "vocoder=cpu_small",
                *common,
                "data.val_size=24",
                f"data.gta_dir={out / 'gta_mels'}",
                f"trainer.init_from={vocoder / 'generator.pt'}",
                f"trainer.max_steps={b.vocoder_gta_steps}",
                "trainer.max_minutes=null",
                f"hydra.run.dir={out / 'vocoder_gta'}",
            ],
            {},
            b.vocoder_gta_steps,
            outputs=[out / "vocoder_gta"],
            steps=b.vocoder_gta_steps,
            checkpoint=vocoder_gta / "last.pt",
        ),
        Stage(
            "report",
            "held-out report",
            f"{REPORT_SYNTHESES} syntheses",
            "gst-tts",
            [
                "demo-report",
                "--checkpoint",
                str(best),
                "--corpus",
                str(corpus),
                "--vocoder",
                str(vocoder_gta / "last.pt"),
                "--out",
                str(out / "samples"),
                "--cache-dir",
                str(cache),
                "--seed",
                str(REPORT_SEED),
                *batch,
                *threads,
            ],
            {},
            REPORT_SYNTHESES,
            outputs=[out / "samples"],
        ),
        Stage(
            "dials",
            "style dials named",
            f"{DIALS_SYNTHESES} syntheses",
            "gst-tts",
            [
                "probe-tokens",
                "--checkpoint",
                str(best),
                "--vocoder",
                str(vocoder_gta / "generator.pt"),
                "--save-dials",
                "--seed",
                str(REPORT_SEED),
                *batch,
                *threads,
            ],
            {},
            DIALS_SYNTHESES,
            outputs=[dials_path(best)],
        ),
    ]
    return stages


#: Each stage's outputs are made from its own settings and from what these stages made.
UPSTREAM = {
    "features": ["corpus"],
    "acoustic": ["features"],
    "vocoder": ["features"],
    "select": ["acoustic", "vocoder"],
    "gta": ["select"],
    "vocoder_gta": ["vocoder", "gta"],
    "report": ["select", "vocoder_gta"],
    "dials": ["select", "vocoder_gta"],
}


def read_state(out: Path) -> dict[str, Any]:
    """``<out>/demo.json``'s finished stages, or none when it is missing or of another version."""
    path = out / STATE_NAME
    try:
        state = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, json.JSONDecodeError) as exc:
        raise GstTtsError(f"{path}: unreadable ({exc}); remove it to redo the demo's stages") from None
    if (
        not isinstance(state, dict)
        or state.get("version") != STATE_VERSION
        or not isinstance(state.get("stages"), dict)
    ):
        return {}
    return state["stages"]


def plan_demo(out: str | os.PathLike, budget: DemoBudget, *, progress: bool = True) -> DemoPlan:
    """The stages of a demo in ``out`` and what each needs: ``done``, ``to do``, ``resume`` or
    ``redo``, with a note saying why. Stages after one that will run are judged as if it had
    reached its budget. ``progress``: False gives every stage its ``--no-progress``.

    Raises:
        GstTtsError: ``out`` holds a model trained with other settings, or further than the budget.
    """
    out = Path(out)
    plan = DemoPlan(out, budget, _stages(out, budget, available_cores(), progress), read_state(out))
    expected = dict(plan.state)
    for stage in plan.stages:
        judge(stage, expected)
        if stage.status != "done":
            expected[stage.name] = {"key": stage.key, "done": True, **({"step": stage.steps} if stage.steps else {})}
    return plan


def judge(stage: Stage, records: Mapping[str, Any]) -> None:
    """Sets ``stage.key`` (its own settings and what its upstream stages made, from ``records``)
    and ``stage.status`` and ``stage.note`` (from its own record in ``records``)."""
    own = {k: v for k, v in stage.key.items() if k != "from"}
    made = {}
    for name in UPSTREAM.get(stage.name, []):
        record = records.get(name) or {}
        made[name] = {"key": record.get("key"), "step": record.get("step")}
    stage.key = {**own, "from": made}
    stage.status, stage.note = _status(stage, records.get(stage.name))


def _status(stage: Stage, record: Mapping[str, Any] | None) -> tuple[str, str]:
    derived = bool(stage.outputs)  # redone from scratch when its inputs change; the others only resume
    if stage.steps is None:
        if record is None or not record.get("done"):
            return "to do", ""
        return ("done", "") if record.get("key") == stage.key else ("redo", "its inputs changed")
    folder = stage.checkpoint.parent.parent
    if record is None:
        reached = _checkpoint_step(stage)
        if reached is None:
            return "to do", ""
        if derived:
            return "redo", "not made by this plan"
        if reached > stage.steps:
            raise GstTtsError(
                f"{stage.checkpoint}: the {stage.title} is at step {reached:,}, past the budget of "
                f"{stage.steps:,}; give at least {reached:,} steps, or remove {folder} (make clean-demo)"
            )
        return "resume", f"from step {reached:,}"
    if record.get("key") != stage.key:
        if derived:
            return "redo", "its inputs changed"
        raise GstTtsError(
            f"{folder}: its {stage.title} was trained with other settings "
            f"({_changed(record.get('key'), stage.key)}); remove it (make clean-demo) or choose another folder"
        )
    # An interrupted stage's checkpoint says where it stopped; a finished one's record says where it ended.
    reached = int(record.get("step") or 0) if record.get("done") else (_checkpoint_step(stage) or 0)
    if reached > stage.steps:
        if derived:
            return "redo", f"at step {reached:,}, past the budget"
        raise GstTtsError(
            f"{stage.checkpoint}: the {stage.title} is at step {reached:,}, past the budget of "
            f"{stage.steps:,}; give at least {reached:,} steps, or remove {folder} (make clean-demo)"
        )
    if reached == stage.steps and record.get("done"):
        return "done", f"step {reached:,}"
    return ("resume", f"from step {reached:,}") if reached else ("to do", "")


def _changed(recorded: Any, current: Mapping[str, Any]) -> str:
    if not isinstance(recorded, dict):
        return "unrecorded"
    keys = sorted((set(recorded) | set(current)) - {"from"})
    parts = [f"{k} {recorded.get(k)!r} -> {current.get(k)!r}" for k in keys if recorded.get(k) != current.get(k)]
    if recorded.get("from") != current.get("from"):
        parts.append("the corpus or its features")
    return ", ".join(parts)


# ------------------------------------------------------------------------------------------ estimate


def probe_step_seconds(threads: int, steps: int = 3) -> float:
    """Seconds of one training step of the demo's model on this machine: the median of ``steps``
    steps after one untimed warm-up, on a random batch shaped like the demo's (12 utterances of 51
    symbols and 216 mel frames, 181-frame references), with ``threads`` torch threads."""
    import statistics

    from hydra import compose, initialize_config_module
    import torch

    from gst_tts.data.batching import Collate
    from gst_tts.training.builders import build_loss, build_model, build_optimizer

    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with initialize_config_module(config_module="gst_tts.conf", version_base="1.3"):
            cfg = compose("config", overrides=["model=tiny", "data=demo", "trainer=demo", "loss=demo"])
        with torch.random.fork_rng():
            torch.manual_seed(0)
            model, _ = build_model(
                cfg.model, n_symbols=60, n_mels=80, pad_id=0, style_prosody_dim=len(cfg.data.prosody)
            )
            loss_fn = build_loss(cfg.loss, reduction_factor=model.reduction_factor)
            optimizer, _ = build_optimizer(model, cfg.trainer)
            items = []
            for i in range(int(cfg.data.batch_size)):
                text = torch.randint(2, 60, (51,))
                text[-1] = 1
                items.append(
                    {
                        "text": text,
                        "mel": torch.randn(216, 80),
                        "id": str(i),
                        "style": "x",
                        "prosody": torch.zeros(len(cfg.data.prosody)),
                    }
                )
            batch = Collate(model.reduction_factor, 0)(items)
            reference = torch.randn(len(items), 181, 80)
            lengths = torch.full((len(items),), 181)
            model.train()
            times = []
            for i in range(steps + 1):
                start = time.perf_counter()
                optimizer.zero_grad(set_to_none=True)
                out = model(
                    batch["text"], batch["text_lengths"], batch["mel"], batch["mel_lengths"], reference, lengths
                )
                loss_fn(out, batch, 0)["total"].backward()
                optimizer.step()
                if i:
                    times.append(time.perf_counter() - start)
        return statistics.median(times)
    finally:
        torch.set_num_threads(previous)


def estimate(plan: DemoPlan, probe_s: float) -> float:
    """Sets each pending stage's ``estimate_s`` from the reference figures scaled by ``probe_s``
    (this machine's seconds per probe step); returns the plan's total, stages run alongside others
    counted only where they outlast them."""
    scale = probe_s / REFERENCE_PROBE_S
    for stage in plan.stages:
        units = stage.units
        if stage.status == "resume" and stage.steps:
            units = max(0, stage.steps - _reached(plan, stage))
        stage.estimate_s = 0.0 if stage.status == "done" else REFERENCE_SECONDS[stage.name] * units * scale
    return _total(plan.stages)


def _total(stages: Sequence[Stage]) -> float:
    """Estimated seconds of ``stages`` in order, a stage run alongside another counting only where it outlasts it."""
    by_name = {s.name: s for s in stages}
    total = 0.0
    for stage in stages:
        partner = by_name.get(stage.alongside or "")
        total += max(0.0, stage.estimate_s - partner.estimate_s) if partner is not None else stage.estimate_s
    return total


def _reached(plan: DemoPlan, stage: Stage) -> int:
    record = plan.state.get(stage.name) or {}
    if "step" in record:
        return int(record["step"])
    return _checkpoint_step(stage) or 0


def _checkpoint_step(stage: Stage) -> int | None:
    """The step of a training stage's ``last.pt``, or None when there is none that loads."""
    if stage.checkpoint is None or not stage.checkpoint.exists():
        return None
    from gst_tts.checkpoints.weights import load_weights_only

    try:
        ckpt = load_weights_only(stage.checkpoint, error=GstTtsError, what="checkpoint", map_location="cpu")
    except GstTtsError:
        return None
    step = ckpt.get("step") if isinstance(ckpt, dict) else None
    if step is None and isinstance(ckpt, dict):
        step = (ckpt.get("train_state") or {}).get("step")
    return int(step) if step is not None else None


def format_plan(plan: DemoPlan, total_s: float | None, probe_s: float | None) -> str:
    b = plan.budget
    lines = [
        f"gst-tts demo in {plan.out}/: budgets in steps, so a slower machine takes longer but trains the same model "
        f"({b.threads} CPU thread{'s' if b.threads != 1 else ''} in every stage)"
    ]
    cores = available_cores()
    if cores < b.threads:
        lines.append(
            f"  note: this machine has {cores} core{'s' if cores != 1 else ''} for {b.threads} threads, which wait "
            "on each other: expect it to be much slower than the estimate (a thread count of its own, "
            "DEMO_THREADS, trains another model than the README's)"
        )
    width = max(len(s.title) for s in plan.stages)
    for i, stage in enumerate(plan.stages, 1):
        when = [] if stage.status == "done" or total_s is None else [_minutes(stage.estimate_s)]
        if stage.alongside and stage.status != "done":
            when.append(f"(alongside the {next(s.title for s in plan.stages if s.name == stage.alongside)})")
        status = stage.status + (f": {stage.note}" if stage.note else "")
        lines.append(f"  {i}. {stage.title:<{width}}  {stage.budget:>18}  {status:<24} {' '.join(when)}".rstrip())
    if total_s is not None and probe_s is not None:
        lines.append(
            f"  estimated total: {_minutes(total_s)}, from timing {b.threads}-thread training steps of "
            f"the demo's model here ({probe_s:.2f} s a step; the reference machine: {REFERENCE_PROBE_S:.2f} s)"
        )
    return "\n".join(lines)


def _minutes(seconds: float) -> str:
    if seconds < 60:
        return f"~{max(1, round(seconds))} s"
    return f"~{seconds / 60:.0f} min"


# ------------------------------------------------------------------------------------------ run


def run_demo(
    out: str | os.PathLike,
    budget: DemoBudget,
    *,
    probe: Callable[[int], float] = probe_step_seconds,
    say: Callable[[str], None] = print,
    progress: bool = True,
) -> int:
    """Plans the demo in ``out`` (:func:`plan_demo`), prints the plan, then runs every stage that is
    not done, each judged again just before it runs (from what the stages before it really made).
    Returns 0, or the exit code of the stage that failed (130 when interrupted).

    Raises:
        GstTtsError: see :func:`plan_demo`.
    """
    plan = plan_demo(out, budget, progress=progress)
    if not plan.pending:
        _record_gta_vocoder(plan.out)
        say(format_plan(plan, None, None))
        say(
            f"Nothing to do: {plan.out}/ is complete. To train on, give more steps (make demo DEMO_STEPS=N, now "
            f"{budget.steps:,}): training resumes where it stopped and the stages after it are redone."
        )
        say(outputs_listing(plan.out))
        return 0
    probe_s = probe(budget.threads)
    total = estimate(plan, probe_s)
    say(format_plan(plan, total, probe_s))
    started = time.monotonic()
    titles = {s.name: s.title for s in plan.stages}
    alongside: dict[str, tuple[Stage, subprocess.Popen, Path, float]] = {}
    for index, stage in enumerate(plan.stages, 1):
        if stage.name in alongside:
            continue
        judge(stage, plan.state)
        if stage.status == "done":
            if stage.name == "vocoder_gta":
                _record_gta_vocoder(plan.out)
            continue
        for follower in plan.stages:
            if follower.alongside == stage.name:
                judge(follower, plan.state)
                if follower.status != "done":
                    alongside[follower.name] = (follower, *_start_alongside(plan, follower, say))
        code = _run_stage(plan, stage, index, _total(plan.stages[index - 1 :]), say)
        for name, (follower, process, log, start) in list(alongside.items()):
            if code:
                process.send_signal(signal.SIGINT)  # it saves its checkpoint and stops
            follower_code = _wait(process)
            if follower_code == 0:
                _record(plan, follower, time.monotonic() - start)
            elif not code:
                _print_log_tail(log, say)
                say(
                    f"gst-tts demo: the {titles[name]} failed (exit {follower_code}; its log: {log}); what finished "
                    "is kept, and running the demo again goes on from there"
                )
                return follower_code
        alongside.clear()
        if code:
            if code != 130:
                say(
                    f"gst-tts demo: the {stage.title} failed (exit {code}); what finished is kept, and running the "
                    "demo again goes on from there"
                )
            return code
        if stage.name == "vocoder_gta":
            _record_gta_vocoder(plan.out)
    say(f"\ndemo finished in {(time.monotonic() - started) / 60:.1f} min")
    unfinished = [s for s in plan.stages if s.steps and not (plan.state.get(s.name) or {}).get("done")]
    for stage in unfinished:
        say(
            f"note: the {stage.title} stopped at step {_reached(plan, stage):,} of {stage.steps:,} (the minutes cap); "
            "running the demo again trains it on and redoes the stages after it"
        )
    say(outputs_listing(plan.out))
    return 0


def _record_gta_vocoder(out: Path) -> None:
    """Records the GTA-tuned vocoder beside the acoustic checkpoints (``checkpoints/vocoder.json``), so
    that ``synthesize`` and ``serve`` of ``best.pt`` speak with it by default (``--vocoder auto``)."""
    from gst_tts.inference.vocoder_choice import record_vocoder

    generator = out / "vocoder_gta" / "checkpoints" / "generator.pt"
    if generator.is_file() and (out / "checkpoints").is_dir():
        record_vocoder(out / "checkpoints", generator)


def _wait(process: subprocess.Popen) -> int:
    """The stage's exit code (130 when interrupted). Ctrl-C reaches the stage too: it saves its
    checkpoint and exits, so it is waited for, never killed."""
    while True:
        try:
            code = process.wait()
        except KeyboardInterrupt:
            continue
        return 130 if code in (130, -signal.SIGINT) else code


def _prepare(plan: DemoPlan, stage: Stage) -> None:
    """Clears what a redone stage replaces, and fills in the selection's candidates."""
    import shutil

    if stage.status == "redo" or (stage.status == "to do" and stage.outputs):
        for path in stage.outputs:
            try:
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
            except OSError as exc:
                raise GstTtsError(f"cannot remove {path} to redo the {stage.title}: {exc.strerror or exc}") from None
    if "CANDIDATES" in stage.args:
        ckpt_dir = plan.out / "checkpoints"
        candidates = sorted(str(p) for p in ckpt_dir.glob("step_*.pt")) + [str(ckpt_dir / "last.pt")]
        i = stage.args.index("CANDIDATES")
        stage.args[i : i + 1] = candidates


def _run_stage(plan: DemoPlan, stage: Stage, index: int, left_s: float, say: Callable[[str], None]) -> int:
    _prepare(plan, stage)
    _record(plan, stage, None)
    finish = time.strftime("%H:%M", time.localtime(time.time() + left_s))
    say(
        f"\n== {index}/{len(plan.stages)} {stage.title} ({stage.budget}, {_minutes(stage.estimate_s)}; "
        f"the demo's {_minutes(left_s)} left by the estimate: done about {finish})"
    )
    say(f"$ {stage.shown()}")
    sys.stdout.flush()
    start = time.monotonic()
    code = _wait(subprocess.Popen(stage.command(), env=stage_environment()))
    if code == 0:
        _record(plan, stage, time.monotonic() - start)
    return code


def _start_alongside(plan: DemoPlan, stage: Stage, say: Callable[[str], None]) -> tuple[subprocess.Popen, Path, float]:
    _prepare(plan, stage)
    _record(plan, stage, None)
    log = plan.out / f"{stage.name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    say(f"\n== {stage.title} ({stage.budget}) runs alongside, on a core of its own; its progress goes to {log}")
    say(f"$ {stage.shown()}")
    handle = open(log, "w")
    process = subprocess.Popen(stage.command(), stdout=handle, stderr=subprocess.STDOUT, env=stage_environment())
    handle.close()
    return process, log, time.monotonic()


def _print_log_tail(log: Path, say: Callable[[str], None], lines: int = 5) -> None:
    try:
        tail = log.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return
    for line in tail:
        say(f"  | {line}")


def _record(plan: DemoPlan, stage: Stage, seconds: float | None) -> None:
    """Writes what ``stage`` is made from into the state file: when it starts (``seconds`` None: not
    done, so that an interrupted stage is resumed with the same settings or refused with others)
    and when it ends. A training stage records the step it reached; a minutes cap may stop it
    short of its budget, and then it is not done."""
    reached = _checkpoint_step(stage) if stage.steps is not None else None
    done = seconds is not None and (reached is None or reached >= (stage.steps or 0))
    plan.state[stage.name] = {
        "key": stage.key,
        "done": done,
        **({"seconds": round(seconds, 1)} if seconds is not None else {}),
        **({"step": reached} if reached is not None else {}),
    }
    path = plan.out / STATE_NAME
    try:
        write_json(path, {"version": STATE_VERSION, "budget": asdict(plan.budget), "stages": plan.state})
    except OSError as exc:
        raise GstTtsError(f"cannot write {path}: {exc.strerror or exc}") from None


def outputs_listing(out: Path) -> str:
    return "\n".join(
        [
            f"Demo outputs in {out}/:",
            f"  checkpoint        {out}/checkpoints/best.pt (chosen among the last ones: best.json; last.pt is "
            "the last step)",
            f"  vocoders          {out}/vocoder/checkpoints/last.pt (recordings: gst-tts vocode), "
            f"{out}/vocoder_gta/checkpoints/generator.pt (this model's mels: recorded in "
            "checkpoints/vocoder.json, so synthesize "
            "and serve of best.pt speak with it; --vocoder griffin-lim to compare)",
            f"  TensorBoard       tensorboard --logdir {out}/tensorboard",
            f"  held-out samples  {out}/samples/<reference>/NN.wav (+ .alignment.png)",
            f"  references        {out}/samples/references/<reference>.wav (voices the corpus never used)",
            f"  summary           {out}/samples/summary.txt (alignment health, style-transfer r and slope; "
            "summary.json)",
            f"  style dials       {out}/checkpoints/best.dials.json (what each head's token does, measured by "
            "probe-tokens: "
            "gst-tts serve's page offers the dials by these names)",
        ]
    )
