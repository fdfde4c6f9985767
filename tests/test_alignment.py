import math

import numpy as np
import pytest

from gst_tts.alignment import AlignmentHealth, alignment_health, mean_health


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
