import math
from pathlib import Path

import numpy as np
import pytest

from gst_tts.analysis import alignment
from gst_tts.analysis.alignment import AlignmentHealth, alignment_health, mean_health

README = Path(__file__).resolve().parents[2] / "README.md"


def path_alignment(path, symbols, sharpness=1.0):
    """One-hot (or softened) alignment following ``path``: row t peaks at path[t]."""
    a = np.full((len(path), symbols), (1.0 - sharpness) / symbols, dtype=np.float32)
    a[np.arange(len(path)), path] += sharpness
    return a


def diagonal(steps=60, symbols=20):
    return path_alignment(np.linspace(0, symbols - 1, steps).round().astype(int), symbols)


def test_diagonal_is_healthy():
    h = alignment_health(diagonal())
    assert h.focus == pytest.approx(1.0)
    assert h.coverage == 1.0
    assert h.monotonic and h.backward_jumps == 0
    assert h.reached_end
    assert h.max_forward_jump == 1
    assert h.problems() == [] and h.verdict == "ok" and h.ok
    assert (h.decoder_steps, h.input_symbols) == (60, 20)


def test_uniform_has_low_focus():
    h = alignment_health(np.full((50, 25), 1 / 25))
    assert h.focus == pytest.approx(1 / 25)
    assert any(p.startswith("low focus") for p in h.problems())


def test_backward_jump_flags_repeated():
    path = list(range(0, 15)) + list(range(5, 20))  # re-reads symbols 5..14
    h = alignment_health(path_alignment(path, 20))
    assert h.backward_jumps == 1 and not h.monotonic
    assert any(p.startswith("repeated") for p in h.problems())


def test_small_jitter_is_not_a_jump():
    path = [0, 1, 2, 3, 2, 3, 4, 5, 4, 6, 7, 8, 9]
    h = alignment_health(path_alignment(path, 10))
    assert h.monotonic and h.backward_jumps == 0
    assert alignment_health(path_alignment(path, 10), jitter=0).backward_jumps == 2


def test_stuck_in_the_middle():
    path = list(range(0, 10)) + [10] * 40
    h = alignment_health(path_alignment(path, 30))
    assert not h.reached_end
    assert h.coverage == pytest.approx(11 / 30)
    problems = h.problems()
    assert "did not reach the end" in problems
    assert any(p.startswith("skipped") for p in problems)


def test_large_forward_jump_flags_skipped():
    path = list(range(0, 5)) + list(range(15, 20))
    h = alignment_health(path_alignment(path, 20))
    assert h.max_forward_jump == 11
    assert any(p.startswith("skipped") and "jump of 11" in p for p in h.problems())


def test_end_tolerance():
    h = alignment_health(path_alignment(list(range(17)), 20))  # ends 3 short
    assert h.reached_end
    assert not alignment_health(path_alignment(list(range(17)), 20), end_tolerance=2).reached_end


def test_crop_to_lengths():
    padded = np.zeros((80, 32), dtype=np.float32)
    padded[:60, :20] = diagonal(60, 20)
    padded[60:, 0] = 1.0  # padding frames attend to symbol 0
    h = alignment_health(padded, input_length=20, output_length=60)
    assert (h.decoder_steps, h.input_symbols) == (60, 20)
    assert h.ok
    assert not alignment_health(padded).ok
    with pytest.raises(ValueError):
        alignment_health(padded, output_length=81)
    with pytest.raises(ValueError):
        alignment_health(padded, input_length=0)


def test_torch_bf16():
    torch = pytest.importorskip("torch")
    t = torch.tensor(diagonal(), dtype=torch.bfloat16, requires_grad=True)
    h = alignment_health(t, input_length=torch.tensor(20), output_length=60)
    assert h.focus == pytest.approx(1.0) and h.ok


def test_bad_shape_and_nan():
    with pytest.raises(ValueError):
        alignment_health(np.ones(5))
    with pytest.raises(ValueError):
        alignment_health(np.ones((0, 5)))
    a = diagonal()
    a[10:] = np.nan
    h = alignment_health(a)
    assert math.isfinite(h.focus) and h.focus < 0.5


def test_to_dict_and_mean_health():
    good = alignment_health(diagonal())
    bad = alignment_health(np.full((50, 25), 1 / 25))
    d = good.to_dict()
    assert d["coverage"] == 1.0 and d["reached_end"] is True
    assert isinstance(good, AlignmentHealth)
    m = mean_health([good, bad])
    assert m["count"] == 2
    assert m["focus"] == pytest.approx((1.0 + 1 / 25) / 2)
    assert m["ok"] == 1 and m["ok_rate"] == 0.5
    assert m["max_forward_jump"] == 1
    empty = mean_health([])
    assert empty["count"] == 0 and math.isnan(empty["focus"])


def test_return_after_repeat_is_not_a_skip():
    path = list(range(0, 12)) + list(range(4, 20))  # back 8, then onwards
    h = alignment_health(path_alignment(path, 20))
    assert h.max_forward_jump == 1 and h.backward_jumps == 1
    assert [p.split(" ")[0] for p in h.problems()] == ["repeated"]


def skipping_path(skipped, symbols=20, repeat=3):
    """A sharp monotone path through every symbol but ``skipped``, ``repeat`` steps on each."""
    return [s for s in range(symbols) if s not in skipped for _ in range(repeat)]


def test_coverage_under_085_is_not_aligned_even_with_good_focus():
    short = alignment_health(path_alignment(skipping_path({3, 7, 11, 15}), 20, sharpness=0.6))
    assert short.coverage == pytest.approx(0.80) and short.focus > 0.6
    assert short.monotonic and short.reached_end and short.max_forward_jump == 2
    assert short.problems() == ["skipped (coverage 80%)"] and not short.ok
    assert mean_health([short])["ok"] == 0
    enough = alignment_health(path_alignment(skipping_path({4, 9, 14}), 20, sharpness=0.6))
    assert enough.coverage == pytest.approx(0.85) and enough.ok


def test_aligned_definition_is_the_readmes_and_the_reports():
    assert (alignment.MIN_FOCUS, alignment.MIN_COVERAGE) == (0.5, 0.85)
    stated = f"focus ≥ {alignment.MIN_FOCUS:g}, coverage ≥ {alignment.MIN_COVERAGE:g}"
    readme = " ".join(README.read_text(encoding="utf-8").split())  # README lines wrap anywhere
    assert stated in readme and "gst_tts/analysis/alignment.py" in readme
    assert alignment.ALIGNED_CRITERIA.startswith(stated)
    assert f"forward jump over {alignment.MAX_FORWARD_JUMP} symbols" in alignment.ALIGNED_CRITERIA
    assert f"backward jump over {alignment.DEFAULT_JITTER} symbols" in alignment.ALIGNED_CRITERIA
    # At each threshold an alignment passes; just past any one of them it does not.
    at = dict(
        focus=alignment.MIN_FOCUS,
        coverage=alignment.MIN_COVERAGE,
        backward_jumps=0,
        max_forward_jump=alignment.MAX_FORWARD_JUMP,
        reached_end=True,
        monotonic=True,
        decoder_steps=60,
        input_symbols=20,
    )
    assert AlignmentHealth(**at).ok
    for past in (dict(focus=0.49), dict(coverage=0.84), dict(max_forward_jump=alignment.MAX_FORWARD_JUMP + 1)):
        assert not AlignmentHealth(**{**at, **past}).ok, past
