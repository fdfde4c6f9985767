"""Kill a training run at random moments and restart it, again and again: does it resume each time?

Runs a training command, SIGKILLs it (its whole process group: DataLoader workers, torchrun ranks)
after a random number of seconds, restarts it with the same command, and repeats; after the last
kill it lets the command run to its end. After each kill it checks that every checkpoint in the
run's ``checkpoints/`` folder loads and matches its digest (no partial file ever became one), and
after each restart that the run resumed from the step ``last.pt`` held (the trainers' "resumed
from ... at step N" line), not from scratch. It reports each kill: when it landed (start-up, before
the trainer said it resumed or started; writing a checkpoint, when a write's temporary file was
there; training otherwise), the step saved then, and about how many steps it cost (the steps
trained since the last save, estimated from the time since it and the run's rate between saves).

It cannot compare the final weights with an uninterrupted run's (that would take a second run;
``tests/training/test_faults.py`` does it bit for bit on a tiny model); it checks that the run
finished (exit code 0) with ``last.pt`` at a step no lower than before any kill.

Usage::

    python benchmarks/kill_restart.py --times 20 --seed 0 --min-seconds 20 --max-seconds 120 -- \\
        gst-tts-train data.root=/data/LJSpeech-1.1 hydra.run.dir=runs/killed trainer.max_steps=3000

    python benchmarks/kill_restart.py --times 10 -- \\
        gst-tts-train-vocoder data.root=/data/LJSpeech-1.1 vocoder=cpu_small hydra.run.dir=runs/voc_killed

The run folder is the command's ``hydra.run.dir=...`` (required unless ``--run-dir`` names it).
Pick ``--min-seconds`` above the command's start-up time for kills that cost training, below it
for kills at start-up; ``trainer.checkpoint_every`` decides how much a kill costs. The command's
output goes to ``kill_restart.log`` in the run folder; the report to stdout, and with ``--json``
to a file. Exit code 0 when every restart resumed and the run finished, 1 otherwise.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass
import os
from pathlib import Path
import random
import re
import signal
import subprocess
import sys
import time

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from gst_tts.errors import GstTtsError  # noqa: E402
from gst_tts.files import TEMPORARY_GLOB, write_json  # noqa: E402
from gst_tts.checkpoints.weights import check_digest, load_weights_only  # noqa: E402

RESUMED = re.compile(r"resumed from (\S+) at step (\d+)")
STARTED = re.compile(r"resumed from |training [\d,]+ parameters|training the |nothing to train")


@dataclass
class Kill:
    """One kill: when (seconds after its start), in which phase, the steps saved before and after."""

    seconds: float
    phase: str
    saved_step: int | None
    resumed_at: int | None
    steps_lost: float | None


def saved_step(ckpt_dir: Path) -> int | None:
    """``last.pt``'s step (None without one), after checking that every checkpoint in ``ckpt_dir``
    loads and matches its digest: a kill must never leave a partial file under a checkpoint's name."""
    for path in sorted(ckpt_dir.glob("*.pt")):
        stored = load_weights_only(path, error=GstTtsError, what="checkpoint")
        check_digest(stored, path, error=GstTtsError, kind="checkpoint")
    last = ckpt_dir / "last.pt"
    return int(load_weights_only(last, error=GstTtsError, what="checkpoint")["step"]) if last.is_file() else None


def save_rate(ckpt_dir: Path) -> float | None:
    """Steps per second between the two newest checkpoints (periodic ones and last.pt), from their
    steps and modification times; None with fewer than two."""
    points = sorted(
        {
            (p.stat().st_mtime, int(m.group(1)))
            for p in ckpt_dir.glob("step_*.pt")
            if (m := re.match(r"step_(\d+)\.pt$", p.name))
        }
    )
    if len(points) < 2 or points[-1][0] <= points[-2][0]:
        return None
    (t0, s0), (t1, s1) = points[-2], points[-1]
    return (s1 - s0) / (t1 - t0)


def wait_noting_start(process: subprocess.Popen, timeout: float | None, log_path: Path, offset: int) -> float | None:
    """Waits for ``process`` up to ``timeout`` seconds (None: to its end), reading its log from
    ``offset``; returns the wall-clock time at which it said it started training (None if it did
    not). Past the timeout, raises ``subprocess.TimeoutExpired`` carrying that time as ``training_since``."""
    deadline = None if timeout is None else time.monotonic() + timeout
    training_since = None
    while process.poll() is None:
        if training_since is None and STARTED.search(log_path.read_text(errors="replace")[offset:]):
            training_since = time.time()
        if deadline is not None and time.monotonic() >= deadline:
            expired = subprocess.TimeoutExpired(process.args, timeout)
            expired.training_since = training_since
            raise expired
        time.sleep(0.2)
    return training_since


def run_dir_of(command: list[str]) -> Path | None:
    """The ``hydra.run.dir=...`` a training command names, if any."""
    for arg in command:
        if arg.startswith("hydra.run.dir="):
            return Path(arg.split("=", 1)[1])
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--times", type=int, default=10, help="kills before the run may finish (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the kill times (default 0)")
    parser.add_argument(
        "--min-seconds", type=float, default=10.0, help="shortest time from a start to its kill (default 10)"
    )
    parser.add_argument(
        "--max-seconds", type=float, default=60.0, help="longest time from a start to its kill (default 60)"
    )
    parser.add_argument("--run-dir", type=Path, help="the run folder; default: the command's hydra.run.dir")
    parser.add_argument("--json", type=Path, help="also write the report here")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the training command")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    run_dir = args.run_dir or run_dir_of(command)
    if not command or run_dir is None:
        parser.error("give the training command after --, with hydra.run.dir=... (or --run-dir)")
    if not 0 < args.min_seconds <= args.max_seconds:
        parser.error("need 0 < --min-seconds <= --max-seconds")
    ckpt_dir = run_dir / "checkpoints"
    run_dir.mkdir(parents=True, exist_ok=True)
    log_path = run_dir / "kill_restart.log"
    rng = random.Random(args.seed)
    kills: list[Kill] = []
    problems: list[str] = []
    highest = saved_step(ckpt_dir) if ckpt_dir.is_dir() else None

    for attempt in range(args.times + 1):
        before = saved_step(ckpt_dir) if ckpt_dir.is_dir() else None
        offset = log_path.stat().st_size if log_path.exists() else 0
        wait = None if attempt == args.times else rng.uniform(args.min_seconds, args.max_seconds)
        with log_path.open("a") as log:
            log.write(f"\n=== kill_restart: start {attempt + 1} (kill after {wait and round(wait, 1)} s) ===\n")
            log.flush()
            # Unbuffered: a killed process's last lines (how far it got) reach the log.
            process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=dict(os.environ, PYTHONUNBUFFERED="1"),
            )
            start = time.monotonic()
            try:
                training_since = wait_noting_start(process, wait, log_path, offset)
            except subprocess.TimeoutExpired as expired:
                training_since = expired.training_since
                writing = any(ckpt_dir.glob(TEMPORARY_GLOB)) if ckpt_dir.is_dir() else False
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                seconds = time.monotonic() - start
                output = log_path.read_text(errors="replace")[offset:]
                phase = (
                    "writing checkpoint"
                    if writing or any(ckpt_dir.glob(TEMPORARY_GLOB))
                    else "training"
                    if STARTED.search(output)
                    else "start-up"
                )
                resumed = RESUMED.findall(output)
                resumed_at = int(resumed[-1][1]) if resumed else None
                if before is not None and resumed_at is None and phase != "start-up":
                    problems.append(
                        f"start {attempt + 1}: last.pt held step {before} but the run did not say it resumed"
                    )
                try:
                    now = saved_step(ckpt_dir) if ckpt_dir.is_dir() else None
                except GstTtsError as exc:
                    problems.append(f"after kill {attempt + 1}: {exc}")
                    now = None
                last = ckpt_dir / "last.pt"
                rate = save_rate(ckpt_dir)
                # Steps trained since the later of the last save and this start's first step.
                since = max(last.stat().st_mtime, training_since) if last.is_file() and training_since else None
                lost = (
                    0.0
                    if training_since is None
                    else None
                    if rate is None or since is None
                    else rate * max(0.0, time.time() - since)
                )
                kills.append(Kill(round(seconds, 1), phase, now, resumed_at, None if lost is None else round(lost, 1)))
                if now is not None and highest is not None and now < highest:
                    problems.append(f"after kill {attempt + 1}: last.pt went back from step {highest} to {now}")
                highest = now if highest is None or (now is not None and now > highest) else highest
                print(
                    f"kill {len(kills)}/{args.times} after {seconds:.1f} s ({phase}): last.pt at step {now}, "
                    f"resumed at step {resumed_at}, about {'?' if lost is None else round(lost)} steps lost",
                    flush=True,
                )
                continue
        code = process.returncode
        final = saved_step(ckpt_dir) if ckpt_dir.is_dir() else None
        output = log_path.read_text(errors="replace")[offset:]
        if code != 0:
            problems.append(f"the command ended with exit code {code} before or after the kills (see {log_path})")
        if before is not None and not RESUMED.search(output) and "nothing to train" not in output:
            problems.append(f"the last start did not say it resumed from step {before}")
        if final is None or (highest is not None and final < highest):
            problems.append(f"last.pt ended at step {final}, below step {highest} reached before")
        print(f"{'finished' if code == 0 else 'ended'} after {len(kills)} kill(s): last.pt at step {final}")
        break

    phases: dict[str, int] = {}
    for kill in kills:
        phases[kill.phase] = phases.get(kill.phase, 0) + 1
    lost = [k.steps_lost for k in kills if k.steps_lost is not None]
    report = {
        "command": command,
        "run_dir": str(run_dir),
        "seed": args.seed,
        "kills": [asdict(k) for k in kills],
        "kills_by_phase": phases,
        "steps_lost_mean": round(sum(lost) / len(lost), 1) if lost else None,
        "final_step": final,
        "exit_code": code,
        "problems": problems,
    }
    print(f"kills by phase: {phases}; steps lost per kill: mean {report['steps_lost_mean']}")
    for problem in problems:
        print(f"PROBLEM: {problem}")
    if args.json:
        write_json(args.json, report)
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
