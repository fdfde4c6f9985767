"""A checkpoint's teacher-forced (ground-truth-aligned) mels of corpus utterances.

Each utterance goes through the model as in training: its own recorded mel is the decoder's input
and the style reference. The model is in eval mode (dropout off; the prenet's as at inference),
so the mels are those synthesis would make given the right previous frames; their frames line up
with the recording's, trimmed to whole decoder steps. Used for vocoder fine-tuning
(``gst-tts dump-gta-mels``) and to hear what the model learned apart from its free-running
mistakes (``gst-tts measure-intelligibility --mode teacher-forced``).
"""

from __future__ import annotations

import os
from typing import Iterator, Sequence

import numpy as np
import torch

from gst_tts.data.batching import Collate, TTSDataset, encode_texts
from gst_tts.data.cache import FeatureCache
from gst_tts.data.corpus import Utterance
from gst_tts.inference.synthesizer import Synthesizer


def teacher_forced_mels(
    synth: Synthesizer,
    utterances: Sequence[Utterance],
    cache_dir: str | os.PathLike,
    *,
    batch_size: int = 16,
    seed: int = 0,
) -> Iterator[tuple[str, np.ndarray]]:
    """``(utterance id, (frames, n_mels) natural-log mel, not normalised)`` for each utterance, in
    batches of similar lengths (so not in the order given). Features come from (and are added to)
    the feature cache in ``cache_dir``. ``seed`` seeds the prenet's inference dropout."""
    model, symbols, stats = synth.model, synth.symbols, synth.mel_stats
    texts = encode_texts(utterances, symbols)
    cache = FeatureCache(cache_dir, synth.audio_config)
    n_frames = cache.prepare(utterances)
    dataset = TTSDataset(utterances, texts, n_frames, cache, stats)
    collate = Collate(model.reduction_factor, symbols.pad_id)
    order = sorted(range(len(dataset)), key=lambda i: dataset.lengths[i])  # similar lengths: little padding
    torch.manual_seed(seed)
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            batch = collate([dataset[i] for i in order[start : start + batch_size]])
            on_device = {k: batch[k].to(synth.device) for k in ("text", "text_lengths", "mel", "mel_lengths")}
            out = model(on_device["text"], on_device["text_lengths"], on_device["mel"], on_device["mel_lengths"])
            for j, utt_id in enumerate(batch["ids"]):
                frames = int(batch["mel_lengths"][j])
                yield utt_id, stats.denormalize(out.mel_postnet[j, :frames].float().cpu()).numpy()
