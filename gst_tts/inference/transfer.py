"""Style transfer, run: speak fixed sentences in the style of every reference clip and measure how
far the outputs follow each reference's pitch level, pitch range and speaking rate.

The reference sets, the measures and the fits are :mod:`gst_tts.analysis.style_transfer`'s; this
module is the part that runs a :class:`~gst_tts.inference.synthesizer.Synthesizer`, so it sits in
inference, above analysis. Used by ``gst-tts measure-transfer``, ``gst-tts demo-report`` and
``gst-tts select-checkpoint``.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from gst_tts.analysis import style_transfer
from gst_tts.analysis.alignment import AlignmentHealth
from gst_tts.analysis.style_transfer import (
    TRANSFER_F0_RANGE_HZ,
    ClipMeasures,
    ReferenceClip,
    StyleTransferReport,
)
from gst_tts.errors import GstTtsError
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.results import SynthesisResult
from gst_tts.inference.style import Style
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.progress import progress_bar
from gst_tts.text.split import DEFAULT_MAX_CHARS

__all__ = ["evaluate_style_transfer"]


def evaluate_style_transfer(
    synth: Synthesizer,
    references: Sequence[ReferenceClip],
    texts: Sequence[str],
    *,
    seed: int = 0,
    decoding: DecodingConfig | None = None,
    batch_size: int = 16,
    max_chunk_chars: int | None = DEFAULT_MAX_CHARS,
    f0_range_hz: tuple[float, float] = TRANSFER_F0_RANGE_HZ,
    progress: bool = True,
    on_output: Callable[[int, int, SynthesisResult], None] | None = None,
    style_strength: float | None = None,
    transfer_f0_range: bool = False,
    transfer_tempo: bool = False,
) -> StyleTransferReport:
    """Speaks every text in the style of every reference and compares the prosody.

    Every reference is encoded before anything is decoded, so a bad one fails at once.

    Args:
        synth: the model.
        references: at least two.
        texts: the sentences each reference's style is applied to (at least one).
        seed: synthesis seed, the same for every reference (prenet dropout), so outputs differ
            by style only. Default 0.
        decoding: stop threshold and length bounds. Default ``DecodingConfig()``.
        batch_size: texts decoded together (references are grouped to fill batches). Default 16.
        max_chunk_chars: longer texts are split (see ``Synthesizer.synthesize``; ``None``
            never splits). Default ``DEFAULT_MAX_CHARS``.
        f0_range_hz: pyin's search range. Default :data:`TRANSFER_F0_RANGE_HZ`.
        progress: show a progress bar. Default True.
        on_output: called as ``on_output(reference_index, text_index, result)`` for every
            output (to write it), before it is measured.
        style_strength: each reference's style moved from neutral toward it by this much
            (:class:`~gst_tts.inference.style_spec.Style`'s ``strength``: 0 neutral, 1 the
            reference, above 1 exaggerated). Default None: the reference's own style (1).
        transfer_f0_range: ``Synthesizer.synthesize``'s: each output's F0 spread set to its
            reference's where the vocoder can, after the model; the figures then measure that
            copy, not the model. Default False.
        transfer_tempo: ``Synthesizer.synthesize``'s: each output retimed to its reference's
            estimated letter rate, after the model; the rate figure then reads back the rate
            the retiming wrote. Default False.

    Raises:
        GstTtsError: fewer than two references, no text, duplicate reference names.
        AudioError: a reference that is silent or too short.
    """
    from tqdm.contrib.logging import logging_redirect_tqdm

    if len(references) < 2:
        raise GstTtsError(
            f"style transfer needs at least 2 references (a correlation needs two points), got {len(references)}"
        )
    if not texts:
        raise GstTtsError("style transfer needs at least one sentence to synthesize")
    names = [r.name for r in references]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise GstTtsError(f"reference names must be unique; repeated: {', '.join(duplicates)}")
    decoding = decoding or DecodingConfig()
    styles = [Style(reference=(r.audio, r.sample_rate), strength=style_strength) for r in references]
    synth.styles.resolve_all(styles)  # every reference checked before anything is decoded

    texts = list(texts)
    per_call = max(1, batch_size // len(texts))  # references per synthesize call
    rows: list[dict[str, Any]] = []
    measured: list[tuple[ClipMeasures, ClipMeasures]] = []
    results_health: list[tuple[AlignmentHealth, str]] = []
    with (
        logging_redirect_tqdm(),
        progress_bar(total=len(references), desc="style transfer", unit="ref", enabled=progress) as bar,
    ):
        for first in range(0, len(references), per_call):
            batch = list(range(first, min(first + per_call, len(references))))
            results = synth.synthesize(
                [t for _ in batch for t in texts],
                styles=[styles[i] for i in batch for _ in texts],
                transfer_f0_range=transfer_f0_range,
                transfer_tempo=transfer_tempo,
                seed=seed,
                batch_size=batch_size,
                decoding=decoding,
                max_chunk_chars=max_chunk_chars,
                names=[f"{references[i].name} / sentence {k + 1}" for i in batch for k in range(len(texts))],
            )
            for j, i in enumerate(batch):
                mine = results[j * len(texts) : (j + 1) * len(texts)]
                if on_output is not None:
                    for k, result in enumerate(mine):
                        on_output(i, k, result)
                row, pair = _reference_row(synth, references[i], mine, f0_range_hz)
                rows.append(row)
                measured.append(pair)
                results_health += [(r.health, r.stop_reason) for r in mine]
                bar.update(1)
    fits = {}
    for group in dict.fromkeys(g for row in rows for g in row["groups"]):  # in order of appearance
        mine = [pair for row, pair in zip(rows, measured) if group in row["groups"]]
        fits[group] = style_transfer.transfer_fits([m[0] for m in mine], [m[1] for m in mine])
    return StyleTransferReport(
        texts=texts,
        rows=rows,
        fits=fits,
        healths=[h for h, _ in results_health],
        stop_reasons=[r for _, r in results_health],
    )


def _reference_row(
    synth: Synthesizer, ref: ReferenceClip, results: Sequence[SynthesisResult], f0_range_hz: tuple[float, float]
) -> tuple[dict[str, Any], tuple[ClipMeasures, ClipMeasures]]:
    """The report row of one reference and its outputs, and (reference, median output) measures."""
    ref_text = synth.symbols.clean(ref.text) if ref.text else None
    ref_measures = style_transfer.measure_clip(
        ref.audio, ref.sample_rate, ref_text, synth.audio_config, f0_range_hz=f0_range_hz
    )
    outputs, output_rows = [], []
    for result in results:
        m = style_transfer.measure_clip(
            result.audio,
            result.sample_rate,
            result.cleaned_text,
            synth.audio_config,
            log_mel=result.mel,
            f0_range_hz=f0_range_hz,
        )
        outputs.append(m)
        output_rows.append(
            {
                "text": result.text,
                **m.to_dict(),
                "stop_reason": result.stop_reason,
                "focus": round(result.health.focus, 4),
                "coverage": round(result.health.coverage, 4),
                "aligned": result.ok,
            }
        )
    output = style_transfer.median_measures(outputs)
    row = {
        "name": ref.name,
        "groups": list(ref.groups),
        "text": ref.text,
        "path": None if ref.path is None else str(ref.path),
        "info": ref.info,
        "reference": ref_measures.to_dict(),
        "output": output.to_dict(),
        "outputs": output_rows,
        "aligned_share": float(np.mean([o["aligned"] for o in output_rows])),
    }
    return row, (ref_measures, output)
