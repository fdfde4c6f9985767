"""Figures for inspecting a model: alignments, stop tokens, mels, style weights.

All functions build a :class:`matplotlib.figure.Figure` directly (not through
``pyplot``), so they need no display, leave no global pyplot state behind and
work whatever backend an interactive user has chosen.  The caller saves the
figure with :func:`save_figure` or turns it into an image for TensorBoard with
:func:`figure_to_array`.  Nothing here calls ``plt.show``.

Inputs may be numpy arrays or torch tensors of any dtype or device.
"""

from __future__ import annotations

from collections.abc import Sequence
import io
import math
import os
from pathlib import Path
import sys
from typing import Any

import matplotlib

from gst_tts.files import atomic_write

if "matplotlib.pyplot" not in sys.modules:
    # Headless default for scripts and training.  Once pyplot has been
    # imported, a backend is in use (maybe an interactive one a user picked):
    # leave it alone -- these figures do not depend on it.
    try:
        matplotlib.use("Agg")
    except Exception:  # pragma: no cover - never fatal
        pass

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
import numpy as np

from gst_tts.analysis.alignment import AlignmentHealth, to_float_array

__all__ = [
    "plot_alignment",
    "plot_alignment_grid",
    "plot_inspection",
    "plot_mel_pair",
    "plot_style_weights",
    "save_figure",
    "figure_to_array",
    "figure_to_png",
]

#: Most input-symbol labels drawn on an axis; beyond it every k-th is shown.
MAX_SYMBOL_LABELS = 80
_SPACE = "\u2423"  # ␣


# ----------------------------------------------------------------- helpers


def _matrix(x: Any, name: str) -> np.ndarray:
    a = to_float_array(x)
    if a.ndim != 2 or 0 in a.shape:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {a.shape}")
    return a


def _title(title: str, health: AlignmentHealth | None) -> str:
    parts = [title] if title else []
    if health is not None:
        parts.append(health.summary())
    return "\n".join(parts)


def _time_unit(hop_seconds: float | None) -> tuple[float, str]:
    """Scale of one decoder step on the x-axis, and the axis label."""
    if hop_seconds is None:
        return 1.0, "decoder step"
    if not hop_seconds > 0:
        raise ValueError(f"hop_seconds must be > 0, got {hop_seconds}")
    return float(hop_seconds), "time (s)"


def _symbol_ticks(ax, labels: Sequence[str] | None, n: int, height_in: float) -> None:
    """Label the y-axis of an (x=time, y=symbol) image with the symbols."""
    if labels is None:
        ax.set_ylabel("input symbol")
        return
    labels = [str(s) for s in labels]
    if len(labels) != n:
        raise ValueError(
            f"{len(labels)} input labels for {n} input symbols; crop the alignment to the utterance's length first"
        )
    step = max(1, math.ceil(n / MAX_SYMBOL_LABELS))
    idx = np.arange(0, n, step)
    shown = [labels[i].replace(" ", _SPACE) or _SPACE for i in idx]
    # About 80 % of the axis height is spent on the image; fit the labels to it.
    pts_per_label = height_in * 72 * 0.8 / max(len(idx), 1)
    fontsize = float(np.clip(pts_per_label * 0.95, 4.5, 9.0))
    ax.set_yticks(idx)
    ax.set_yticklabels(shown, fontsize=fontsize)
    ax.tick_params(axis="y", length=2, pad=1)
    ax.set_ylabel("input symbol" + (f" (every {step})" if step > 1 else ""))


def _finite_limits(*arrays: np.ndarray) -> tuple[float, float]:
    vals = np.concatenate([a[np.isfinite(a)].ravel() for a in arrays])
    if vals.size == 0:
        return 0.0, 1.0
    lo, hi = float(vals.min()), float(vals.max())
    return (lo, hi) if hi > lo else (lo - 0.5, hi + 0.5)


def _draw_matrix(ax, cax, matrix_t: np.ndarray, *, cmap: str, vmin, vmax, x_extent: float, colorbar: bool = True):
    """``(rows, columns)`` drawn with row 0 at the bottom and the columns spread over ``[0, x_extent]``.

    Returns the image and its colorbar (drawn in ``cax`` when given; None with ``colorbar=False``).
    """
    rows, _ = matrix_t.shape
    im = ax.imshow(
        matrix_t,
        origin="lower",
        aspect="auto",
        interpolation="none",
        cmap=cmap,
        vmin=vmin,
        vmax=vmax,
        extent=(0.0, x_extent, -0.5, rows - 0.5),
    )
    if not colorbar:
        return im, None
    cb = ax.figure.colorbar(im, cax=cax) if cax is not None else ax.figure.colorbar(im, ax=ax)
    cb.ax.tick_params(labelsize=7)
    return im, cb


def _draw_alignment(ax, cax, a: np.ndarray, unit: float, labels, height_in: float):
    steps, symbols = a.shape
    vmax = max(1e-6, float(np.nanmax(a))) if np.isfinite(a).any() else 1.0
    im, cb = _draw_matrix(ax, cax, a.T, cmap="viridis", vmin=0.0, vmax=vmax, x_extent=steps * unit)
    _symbol_ticks(ax, labels, symbols, height_in)
    cb.set_label("attention", fontsize=8)
    return im


def _draw_mel(ax, cax, mel: np.ndarray, x_per_frame: float, vmin=None, vmax=None, colorbar: bool = True):
    """Mel image with its channel axis; ``colorbar=False`` when a caller draws one shared colorbar."""
    im, _ = _draw_matrix(
        ax, cax, mel.T, cmap="magma", vmin=vmin, vmax=vmax, x_extent=mel.shape[0] * x_per_frame, colorbar=colorbar
    )
    ax.set_ylabel("mel channel")
    return im


def _alignment_height(symbols: int) -> float:
    return float(np.clip(2.0 + 0.09 * min(symbols, MAX_SYMBOL_LABELS), 3.5, 9.0))


# ----------------------------------------------------------------- figures


def plot_alignment(
    alignment: Any,
    *,
    input_labels: Sequence[str] | None = None,
    hop_seconds: float | None = None,
    title: str = "",
    health: AlignmentHealth | None = None,
) -> Figure:
    """Attention map of one utterance.

    Args:
        alignment: shape ``(decoder_steps, input_symbols)``, cropped to the
            utterance (no batch padding).
        input_labels: ``input_symbols`` strings (characters or phonemes) for the
            y-axis; spaces are drawn as "␣", and only every k-th label is drawn
            beyond ``MAX_SYMBOL_LABELS``.
        hop_seconds: seconds per decoder step (frame hop × frames per step);
            the x-axis is then in seconds, otherwise in decoder steps.
        title: first title line.
        health: its one-line summary is added to the title.

    Returns:
        The figure: x = decoder time, y = input symbol (origin lower), colorbar.
    """
    a = _matrix(alignment, "alignment")
    unit, xlabel = _time_unit(hop_seconds)
    height = _alignment_height(a.shape[1])
    fig = Figure(figsize=(10.0, height), layout="constrained")
    ax = fig.add_subplot()
    _draw_alignment(ax, None, a, unit, input_labels, height)
    ax.set_xlabel(xlabel)
    t = _title(title, health)
    if t:
        ax.set_title(t, fontsize=10)
    return fig


#: Longest side of a grid cell's image: longer alignments are max-pooled down to it, so that a
#: sharp path over thousands of steps stays visible instead of being averaged into the background.
_GRID_CELL_PIXELS = 400


def _max_pool(a: np.ndarray, most: int) -> np.ndarray:
    """``a`` with each axis longer than ``most`` reduced by taking the maximum over equal blocks."""
    for axis in (0, 1):
        n = a.shape[axis]
        if n > most:
            k = math.ceil(n / most)
            pad = [(0, 0), (0, 0)]
            pad[axis] = (0, (-n) % k)
            a = np.pad(a, pad)
            shape = (a.shape[0] // k, k, a.shape[1]) if axis == 0 else (a.shape[0], a.shape[1] // k, k)
            a = a.reshape(shape).max(axis=axis + 1)
    return a


def plot_alignment_grid(
    alignments: Sequence[Sequence[Any]],
    *,
    column_titles: Sequence[str],
    row_titles: Sequence[str] = (),
    title: str = "",
) -> Figure:
    """Attention maps side by side: one column per model (e.g. per attention kind), one row per
    utterance, so that the same utterance reads across a row.

    Args:
        alignments: ``alignments[row][column]`` of shape ``(decoder_steps, input_symbols)``, or
            ``None`` for a missing cell (drawn empty).
        column_titles: one per column.
        row_titles: one per row (the y-axis label of its first cell); may be empty.
        title: figure title.

    Returns:
        The figure: x = decoder step, y = input symbol (origin lower), one shared 0–1 colour scale;
        cells longer than 400 steps or symbols are max-pooled for drawing (the axes still count
        steps and symbols).
    """
    rows = len(alignments)
    cols = len(column_titles)
    if rows == 0 or cols == 0 or any(len(row) != cols for row in alignments):
        raise ValueError(f"alignments must be rows of {cols} cells (one per column title)")
    if row_titles and len(row_titles) != rows:
        raise ValueError(f"{len(row_titles)} row titles for {rows} rows")
    fig = Figure(figsize=(2.6 * cols + 0.8, 2.4 * rows + 0.6), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    image = None
    for r, row in enumerate(alignments):
        for c, cell in enumerate(row):
            ax = axes[r][c]
            if cell is None:
                ax.set_axis_off()
                continue
            a = _matrix(cell, "alignment")
            steps, symbols = a.shape
            image = ax.imshow(
                _max_pool(a, _GRID_CELL_PIXELS).T,
                aspect="auto",
                origin="lower",
                interpolation="none",
                cmap="viridis",
                vmin=0.0,
                vmax=1.0,
                extent=(0, steps, 0, symbols),
            )
            ax.tick_params(labelsize=7)
            if r == 0:
                ax.set_title(column_titles[c], fontsize=9)
            if r == rows - 1:
                ax.set_xlabel("decoder step", fontsize=8)
            if c == 0:
                ax.set_ylabel((f"{row_titles[r]}\n" if row_titles else "") + "input symbol", fontsize=8)
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.6, label="attention weight")
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def plot_inspection(
    alignment: Any,
    mel: Any,
    stop_probs: Any,
    *,
    input_labels: Sequence[str] | None = None,
    hop_seconds: float | None = None,
    frames_per_step: int = 1,
    title: str = "",
    health: AlignmentHealth | None = None,
    stop_threshold: float,
) -> Figure:
    """Attention, stop token and mel of one utterance on a shared time axis.

    Args:
        alignment: shape ``(decoder_steps, input_symbols)``.
        mel: shape ``(frames, n_mels)``, ``frames`` normally
            ``decoder_steps * frames_per_step`` (may differ, e.g. when cropped
            at the stop).
        stop_probs: stop-token *probabilities* (sigmoid already applied), shape
            ``(decoder_steps,)`` (or ``(decoder_steps, 1)``).
        input_labels, title, health: as in :func:`plot_alignment`.
        hop_seconds: seconds per decoder step; the shared x-axis is in seconds
            when given, else in decoder steps.
        frames_per_step: mel frames per decoder step (reduction factor r).
        stop_threshold: the stop probability that ended decoding, drawn as a
            line (the caller's ``DecodingConfig.stop_threshold``: plots sit below
            inference and know no decoding default).

    Returns:
        A figure with three stacked panels: attention map, stop probability
        with the stop threshold (and the first step above it marked), mel
        spectrogram.
    """
    a = _matrix(alignment, "alignment")
    m = _matrix(mel, "mel")
    stop = to_float_array(stop_probs).reshape(-1)
    if frames_per_step < 1:
        raise ValueError(f"frames_per_step must be >= 1, got {frames_per_step}")
    unit, xlabel = _time_unit(hop_seconds)
    steps = a.shape[0]

    att_h = _alignment_height(a.shape[1])
    heights = [att_h, 1.4, 2.6]
    fig = Figure(figsize=(11.0, sum(heights) + 0.8), layout="constrained")
    gs = fig.add_gridspec(3, 2, height_ratios=heights, width_ratios=[1.0, 0.018])
    ax_att = fig.add_subplot(gs[0, 0])
    ax_stop = fig.add_subplot(gs[1, 0], sharex=ax_att)
    ax_mel = fig.add_subplot(gs[2, 0], sharex=ax_att)
    cax_att = fig.add_subplot(gs[0, 1])
    cax_mel = fig.add_subplot(gs[2, 1])
    fig.add_subplot(gs[1, 1]).set_axis_off()

    _draw_alignment(ax_att, cax_att, a, unit, input_labels, att_h)
    ax_att.set_title(_title(title, health) or "attention", fontsize=10)

    x = (np.arange(stop.size) + 0.5) * unit
    ax_stop.plot(x, stop, color="tab:blue", lw=1.2, drawstyle="steps-mid", label="stop prob.")
    threshold = float(stop_threshold)
    ax_stop.axhline(threshold, color="tab:red", ls="--", lw=0.9, label=f"threshold {threshold:g}")
    above = np.flatnonzero(stop > threshold)
    if above.size:
        ax_stop.axvline(x[above[0]], color="tab:red", ls=":", lw=0.9)
        ax_stop.annotate(
            f"stop at step {above[0]}",
            xy=(x[above[0]], threshold),
            xytext=(-4, 4),
            textcoords="offset points",
            ha="right",
            fontsize=7,
            color="tab:red",
        )
    ax_stop.set_ylim(-0.05, 1.05)
    ax_stop.set_yticks([0.0, 0.5, 1.0])
    ax_stop.set_ylabel("stop")
    ax_stop.grid(alpha=0.3)
    ax_stop.legend(loc="upper left", fontsize=7, frameon=False)

    _draw_mel(ax_mel, cax_mel, m, unit / frames_per_step)
    ax_mel.set_xlabel(xlabel)
    end = max(steps, stop.size, math.ceil(m.shape[0] / frames_per_step)) * unit
    ax_att.set_xlim(0.0, end)
    for ax in (ax_att, ax_stop):
        ax.tick_params(labelbottom=False)
    return fig


def plot_mel_pair(predicted: Any, target: Any, title: str = "") -> Figure:
    """Predicted and target mel spectrograms, one above the other.

    Args:
        predicted, target: shape ``(frames, n_mels)``; the frame counts may
            differ.  Both panels share the axes and the colour scale.
    """
    p = _matrix(predicted, "predicted")
    t = _matrix(target, "target")
    vmin, vmax = _finite_limits(p, t)
    fig = Figure(figsize=(10.0, 6.0), layout="constrained")
    axes = fig.subplots(2, 1, sharex=True, sharey=True)
    for ax, mel, name in zip(axes, (p, t), ("predicted", "target")):
        im = _draw_mel(ax, None, mel, 1.0, vmin, vmax, colorbar=False)
        ax.set_title(f"{name} ({mel.shape[0]} frames)", fontsize=9)
    axes[0].set_xlim(0.0, max(p.shape[0], t.shape[0]))
    axes[1].set_xlabel("frame")
    fig.colorbar(im, ax=list(axes), shrink=0.9).ax.tick_params(labelsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def plot_style_weights(weights: Any, labels: Sequence[str], *, title: str = "") -> Figure:
    """Heatmap of the style-token attention weights of several references.

    Args:
        weights: shape ``(n_references, n_heads, n_tokens)`` or
            ``(n_references, n_tokens)``.
        labels: one name per reference.
        title: figure title.

    Returns:
        A figure with one row per reference (× head) and one column per token;
        each cell is annotated with its weight when there are not too many.
    """
    w = to_float_array(weights)
    if w.ndim == 2:
        w = w[:, None, :]
    if w.ndim != 3 or 0 in w.shape:
        raise ValueError(
            "weights must have shape (n_references, n_heads, n_tokens) or "
            f"(n_references, n_tokens), got {to_float_array(weights).shape}"
        )
    refs, heads, tokens = w.shape
    labels = [str(s) for s in labels]
    if len(labels) != refs:
        raise ValueError(f"{len(labels)} labels for {refs} references")
    grid = w.reshape(refs * heads, tokens)
    rows = grid.shape[0]
    row_labels = [lab if heads == 1 else f"{lab} · h{h}" for lab in labels for h in range(heads)]

    fig = Figure(
        figsize=(float(np.clip(3.0 + 0.55 * tokens, 5.0, 14.0)), float(np.clip(1.6 + 0.32 * rows, 2.8, 14.0))),
        layout="constrained",
    )
    ax = fig.add_subplot()
    vmax = float(np.nanmax(grid)) if np.isfinite(grid).any() else 1.0
    im = ax.imshow(grid, aspect="auto", cmap="viridis", vmin=0.0, vmax=max(vmax, 1e-6), interpolation="none")
    ax.set_xticks(np.arange(tokens))
    ax.set_xticklabels([str(k) for k in range(tokens)], fontsize=8)
    ax.set_xlabel("style token")
    ax.set_yticks(np.arange(rows))
    ax.set_yticklabels(row_labels, fontsize=float(np.clip(220 / rows, 5, 9)))
    if heads > 1:
        for r in range(1, refs):
            ax.axhline(r * heads - 0.5, color="white", lw=1.5)
    if rows * tokens <= 600:
        size = float(np.clip(160 / max(tokens, rows), 5, 8))
        for (i, j), v in np.ndenumerate(grid):
            if np.isfinite(v):
                ax.text(
                    j,
                    i,
                    f"{v:.2f}",
                    ha="center",
                    va="center",
                    fontsize=size,
                    color="black" if v > 0.6 * vmax else "white",
                )
    fig.colorbar(im, ax=ax).ax.tick_params(labelsize=7)
    if title:
        ax.set_title(title, fontsize=10)
    return fig


# ----------------------------------------------------------------- output


def _canvas(fig: Figure) -> FigureCanvasAgg:
    if isinstance(fig.canvas, FigureCanvasAgg):
        return fig.canvas
    return FigureCanvasAgg(fig)


def figure_to_array(fig: Figure) -> np.ndarray:
    """Render ``fig`` to an RGB image, shape ``(H, W, 3)``, dtype uint8 (for
    ``SummaryWriter.add_image(..., dataformats="HWC")``).  The figure stays
    open."""
    canvas = _canvas(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def save_figure(fig: Figure, path: str | os.PathLike, *, dpi: int = 100) -> Path:
    """Write ``fig`` to ``path`` atomically, then close it.

    The image goes to a temporary file in the same directory, which then
    replaces ``path``, so a reader never sees a half-written file.  The format
    comes from the suffix (``.png`` if there is none).  Missing parent
    directories are created.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.
    """
    fmt = Path(path).suffix[1:].lower() or "png"
    try:
        return atomic_write(path, lambda f: fig.savefig(f, format=fmt, dpi=dpi))
    finally:
        _close(fig)


def figure_to_png(fig: Figure, *, dpi: int = 100) -> bytes:
    """``fig`` as PNG file contents (for answers sent over HTTP), then close it."""
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=dpi)
    finally:
        _close(fig)
    return buffer.getvalue()


def _close(fig: Figure) -> None:
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close(fig)  # no-op for figures not made through pyplot
