"""``gst-tts measure-parallel`` in-process on a tiny random model and a tiny tone corpus: figures, JSON, errors."""

from __future__ import annotations

import json

from conftest import seconds_for_steps, write_corpus
import pytest

from gst_tts.checkpoints.acoustic import load_checkpoint, save_checkpoint
from gst_tts.cli import main

pytestmark = pytest.mark.usefixtures("one_torch_thread")

# An untrained model rarely stops on its own; a short bound and few Griffin-Lim iterations keep it fast.
FAST = ["--device", "cpu", "--max-seconds", str(seconds_for_steps(8)), "--griffin-lim-iters", "2", "--no-progress"]


def run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["measure-parallel", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def assert_one_line_error(rc: int, err: str, contains: str) -> None:
    assert rc == 2, err
    assert err.startswith("gst-tts measure-parallel: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert contains in err, err


@pytest.fixture
def checkpoint_with_split(tiny_checkpoint, tmp_path):
    """The tiny checkpoint with a stored validation split, as training writes it."""
    ckpt = load_checkpoint(tiny_checkpoint)
    ckpt.pop("digest", None)
    ckpt["val_ids"] = ["UT-002", "UT-000", "UT-001"]
    return save_checkpoint(tmp_path / "split.pt", ckpt)


def test_measures_both_conditions_of_the_checkpoints_held_out_utterances(capsys, tmp_path, checkpoint_with_split):
    corpus = write_corpus(tmp_path / "corpus", n=4)
    out = tmp_path / "report" / "parallel.json"
    rc, stdout, err = run(
        capsys,
        "--checkpoint",
        str(checkpoint_with_split),
        "--corpus",
        str(corpus),
        "--utterances",
        "2",
        "--out",
        str(out),
        *FAST,
    )
    assert rc == 0, err
    report = json.loads(out.read_text())
    same, other = report["utterances"]["same_text"], report["utterances"]["other_text"]
    # the first two of the split, in split order; the other-text references are a derangement
    assert [r["id"] for r in same] == ["UT-002", "UT-000"] == [r["id"] for r in other]
    assert [r["reference"] for r in same] == ["UT-002", "UT-000"]
    assert [r["reference"] for r in other] == ["UT-000", "UT-002"]
    for condition in ("same_text", "other_text"):
        summary = report["summary"][condition]
        assert summary["n"] == 2
        assert summary["mcd_db"] > 0 and 0 <= summary["vde"] <= 1 and 0 <= summary["ffe"] <= 1
        assert condition in stdout
        assert "f0_rmse_cents" in summary  # None where no pair is voiced in both
    assert "F0 RMSE ct" in stdout
    assert report["pitch_tracker"] == "librosa.pyin"
    # The model's own tempo by default (as the literature measures it); Griffin-Lim keeps its F0 range.
    assert report["tempo"] == "decoded" and report["f0_range"] == "decoded"


def test_copies_after_the_model_are_measured_apart(capsys, tmp_path, checkpoint_with_split):
    corpus = write_corpus(tmp_path / "corpus", n=4)
    out = tmp_path / "parallel.json"
    rc, stdout, err = run(
        capsys,
        "--checkpoint",
        str(checkpoint_with_split),
        "--corpus",
        str(corpus),
        "--utterances",
        "2",
        "--out",
        str(out),
        "--tempo",
        "reference",
        *FAST,
    )
    assert rc == 0, err
    report = json.loads(out.read_text())
    # the headline figures stay the model's own; the retimed outputs are a section of their own
    assert report["tempo"] == "decoded" and report["post_processed"]["copied"] == "tempo"
    assert report["post_processed"]["summary"]["same_text"]["n"] == 2
    assert stdout.index("The model alone:") < stdout.index("Post-processed (the reference's tempo copied")


def test_utterances_from_a_list(capsys, tmp_path, tiny_checkpoint):
    corpus = write_corpus(tmp_path / "corpus", n=3)
    ids = tmp_path / "ids.txt"
    ids.write_text("UT-001\n\nUT-002\n")
    rc, stdout, err = run(
        capsys, "--checkpoint", str(tiny_checkpoint), "--corpus", str(corpus), "--utterances-from", str(ids), *FAST
    )
    assert rc == 0, err
    assert "same_text" in stdout and "other_text" in stdout


def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, tiny_checkpoint):
    corpus = write_corpus(tmp_path / "corpus", n=3)
    # the fixture checkpoint stores no split
    assert_one_line_error(
        *run(capsys, "--checkpoint", str(tiny_checkpoint), "--corpus", str(corpus), *FAST)[::2], "val_ids"
    )
    ids = tmp_path / "ids.txt"
    ids.write_text("UT-001\nNOPE\n")
    assert_one_line_error(
        *run(
            capsys, "--checkpoint", str(tiny_checkpoint), "--corpus", str(corpus), "--utterances-from", str(ids), *FAST
        )[::2],
        "NOPE",
    )
    ids.write_text("UT-001\n")
    assert_one_line_error(
        *run(
            capsys, "--checkpoint", str(tiny_checkpoint), "--corpus", str(corpus), "--utterances-from", str(ids), *FAST
        )[::2],
        "at least 2",
    )
    assert_one_line_error(
        *run(capsys, "--checkpoint", str(tiny_checkpoint), "--corpus", str(corpus), "--utterances", "1", *FAST)[::2],
        "--utterances",
    )
