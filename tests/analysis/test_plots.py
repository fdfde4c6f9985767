from matplotlib.figure import Figure
import numpy as np
import pytest

from gst_tts.analysis.alignment import alignment_health
from gst_tts.analysis.plots import (
    figure_to_array,
    plot_alignment,
    plot_alignment_grid,
    plot_inspection,
    plot_mel_pair,
    plot_style_weights,
    save_figure,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TEXT = "hi there."


def alignment(steps=30, symbols=len(TEXT)):
    a = np.full((steps, symbols), 0.01, dtype=np.float32)
    a[np.arange(steps), np.linspace(0, symbols - 1, steps).round().astype(int)] = 1.0
    return a / a.sum(1, keepdims=True)


def test_plot_alignment(tmp_path):
    a = alignment()
    fig = plot_alignment(a, input_labels=list(TEXT), hop_seconds=0.025, title="utt", health=alignment_health(a))
    assert isinstance(fig, Figure)
    assert "\u2423" in [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert isinstance(plot_alignment(a), Figure)
    with pytest.raises(ValueError):
        plot_alignment(a, input_labels=list("too short"[:3]))


def test_plot_alignment_grid_rows_columns_and_missing_cells():
    import torch

    cells = [[alignment(), torch.as_tensor(alignment(20, 5)), None], [alignment(40, 12), alignment(), alignment()]]
    fig = plot_alignment_grid(cells, column_titles=["a", "b", "c"], row_titles=["short", "long"], title="kinds")
    drawn = [ax for ax in fig.axes if ax.images]
    assert len(drawn) == 5  # the missing cell is left empty
    assert [ax.get_title() for ax in drawn[:2]] == ["a", "b"]
    assert drawn[0].images[0].get_array().shape == (len(TEXT), 30)  # symbols on y, steps on x
    assert figure_to_array(fig).ndim == 3
    path = np.zeros((3000, 900), dtype=np.float32)  # a one-pixel path far longer than the cell
    path[np.arange(3000), np.arange(3000) * 900 // 3000] = 1.0
    image = plot_alignment_grid([[path]], column_titles=["long"]).axes[0].images[0]
    assert image.get_array().shape == (300, 375)  # max-pooled for drawing ...
    assert image.get_array().max(axis=1).min() == 1.0  # ... without losing the path in any row
    assert image.get_extent() == [0, 3000, 0, 900]  # axes still in steps and symbols
    with pytest.raises(ValueError, match="rows of 3 cells"):
        plot_alignment_grid([[alignment()]], column_titles=["a", "b", "c"])
    with pytest.raises(ValueError, match="row titles"):
        plot_alignment_grid([[alignment()]], column_titles=["a"], row_titles=["x", "y"])


def test_plot_alignment_many_labels():
    a = alignment(50, 200)
    fig = plot_alignment(a, input_labels=["x"] * 200)
    assert len(fig.axes[0].get_yticks()) <= 80


def test_plot_inspection_torch_and_save(tmp_path):
    torch = pytest.importorskip("torch")
    a = torch.tensor(alignment(), dtype=torch.bfloat16)
    mel = torch.randn(60, 20)
    stop = torch.linspace(0, 1, 30)
    fig = plot_inspection(
        a,
        mel,
        stop,
        input_labels=TEXT,
        hop_seconds=0.025,
        frames_per_step=2,
        title="utt",
        health=alignment_health(a),
        stop_threshold=0.5,
    )
    assert isinstance(fig, Figure)
    out = save_figure(fig, tmp_path / "sub" / "insp.png")
    assert out.read_bytes()[:8] == PNG_MAGIC
    assert [p.name for p in out.parent.iterdir()] == ["insp.png"]


def _stop_panel_threshold(fig) -> tuple[float, str]:
    ax = fig.axes[1]  # attention, stop, mel
    line = next(candidate for candidate in ax.get_lines() if candidate.get_linestyle() == "--")
    return float(line.get_ydata()[0]), line.get_label()


def test_plot_inspection_draws_the_stop_threshold_it_decoded_with():
    a, mel, stop = alignment(), np.zeros((30, 8)), np.linspace(0, 1, 30)
    assert _stop_panel_threshold(plot_inspection(a, mel, stop, stop_threshold=0.5)) == (0.5, "threshold 0.5")
    assert _stop_panel_threshold(plot_inspection(a, mel, stop, stop_threshold=0.8)) == (0.8, "threshold 0.8")


def test_plot_mel_pair_and_array():
    rng = np.random.default_rng(0)
    fig = plot_mel_pair(rng.normal(size=(40, 16)), rng.normal(size=(45, 16)), title="x")
    assert isinstance(fig, Figure)
    img = figure_to_array(fig)
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    w, h = fig.get_size_inches() * fig.dpi
    assert img.shape[:2] == (round(h), round(w))


@pytest.mark.parametrize("shape", [(3, 4, 10), (3, 10)])
def test_plot_style_weights(shape):
    rng = np.random.default_rng(0)
    w = rng.random(shape)
    w /= w.sum(-1, keepdims=True)
    fig = plot_style_weights(w, ["a", "b", "c"], title="tokens")
    assert isinstance(fig, Figure)
    with pytest.raises(ValueError):
        plot_style_weights(w, ["a"])


def test_save_figure_replaces_and_cleans_up(tmp_path):
    target = tmp_path / "a.png"
    target.write_bytes(b"old")
    save_figure(plot_alignment(alignment()), target)
    assert target.read_bytes()[:8] == PNG_MAGIC
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png"]


def test_save_figure_failure_leaves_no_temp(tmp_path):
    with pytest.raises(ValueError):
        save_figure(plot_alignment(alignment()), tmp_path / "a.notaformat")
    assert list(tmp_path.iterdir()) == []
