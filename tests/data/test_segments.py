"""Vocoder segments: mel frames and samples line up (frame t ↔ samples [t·hop, (t+1)·hop) of the
trimmed recording), offsets follow the sampler's seeds, short utterances are padded, and the
given mels (GTA) mix with the recordings' own in the share asked, and the
sampler covers every utterance once per epoch, resumes mid-epoch and splits across ranks."""

from __future__ import annotations

from conftest import write_corpus
import numpy as np
import pytest
import torch

from gst_tts.audio.features import LOG_MEL_FLOOR, AudioConfig, MelExtractor
from gst_tts.data.cache import FeatureCache
from gst_tts.data.corpus import read_corpus
from gst_tts.data.segments import SegmentDataset, SegmentSampler, collate_segments
from gst_tts.errors import DataError

CFG = AudioConfig()


@pytest.fixture
def prepared(tmp_path):
    utterances = read_corpus(write_corpus(tmp_path / "corpus", n=4))
    cache = FeatureCache(tmp_path / "cache", CFG)
    cache.prepare(utterances, progress=False)
    return utterances, cache


def test_segment_mels_are_the_features_of_their_samples(prepared):
    utterances, cache = prepared
    data = SegmentDataset(utterances, cache, segment_frames=12)
    extractor = MelExtractor(CFG)
    for seed in (0, 1, 2):
        item = data[(1, seed)]
        assert item["mel"].shape == (12, 80) and item["audio"].shape == (12 * 256,)
        full = cache.load(utterances[1].id)
        start = next(s for s in range(len(full)) if np.array_equal(full[s : s + 12], item["mel"].numpy()))
        samples = cache.audio(utterances[1])
        np.testing.assert_array_equal(item["audio"].numpy(), samples[start * 256 : (start + 12) * 256])
        # Frame t of the cached mel is centred on sample t · hop of exactly these samples.
        recomputed = extractor(torch.from_numpy(samples)).numpy()
        np.testing.assert_allclose(recomputed[start : start + 12], item["mel"].numpy(), atol=1e-4)


def test_offsets_come_from_the_seed(prepared):
    utterances, cache = prepared
    data = SegmentDataset(utterances, cache, segment_frames=8)
    assert torch.equal(data[(2, 5)]["audio"], data[(2, 5)]["audio"])
    assert len({data[(2, seed)]["audio"][:4].sum().item() for seed in range(6)}) > 1


def test_short_utterances_are_padded_with_silence(prepared):
    utterances, cache = prepared
    frames = len(cache.load(utterances[0].id))
    item = SegmentDataset(utterances, cache, segment_frames=frames + 10)[(0, 0)]
    usable = len(cache.audio(utterances[0])) // 256
    assert item["mel"].shape == (frames + 10, 80)
    assert torch.all(item["mel"][usable:] == np.float32(np.log(LOG_MEL_FLOOR)))
    assert torch.all(item["audio"][usable * 256 :] == 0) and item["audio"][: usable * 256].abs().sum() > 0


def test_whole_utterances_and_collation(prepared):
    utterances, cache = prepared
    data = SegmentDataset(utterances, cache, segment_frames=8)
    whole = data.utterance(3)
    assert whole["audio"].shape == (whole["mel"].shape[0] * 256,)
    batch = collate_segments([data[(0, 0)], data[(1, 0)]])
    assert (
        batch["mel"].shape == (2, 80, 8)
        and batch["audio"].shape == (2, 1, 8 * 256)
        and batch["ids"] == [u.id for u in utterances[:2]]
    )


def test_mels_of_other_audio_are_refused(prepared):
    utterances, cache = prepared

    class TooLong:
        def load(self, utt_id):
            return np.zeros((10_000, 80), np.float32)

    with pytest.raises(DataError, match="mels of other audio or features"):
        SegmentDataset(utterances, cache, segment_frames=8, mels=TooLong())[(0, 0)]


def test_mels_share_mixes_the_given_mels_with_the_recordings_own(prepared):
    utterances, cache = prepared

    class Shifted:  # stands in for GTA mels: the cache's, recognisably offset
        def load(self, utt_id):
            return cache.load(utt_id) + 100.0

    def gta_share(share: float) -> float:
        data = SegmentDataset(utterances, cache, segment_frames=8, mels=Shifted(), mels_share=share)
        picks = [data[(i % 4, seed)]["mel"].mean().item() > 50 for i, seed in enumerate(range(200))]
        return sum(picks) / len(picks)

    assert gta_share(1.0) == 1.0 and gta_share(0.0) == 0.0
    assert 0.35 < gta_share(0.5) < 0.65
    data = SegmentDataset(utterances, cache, segment_frames=8, mels=Shifted(), mels_share=0.5)
    assert torch.equal(data[(1, 7)]["mel"], data[(1, 7)]["mel"])  # the draw follows the seed
    assert data.utterance(0)["mel"].mean().item() > 50  # whole utterances: always the given mels
    with pytest.raises(ValueError, match="mels_share"):
        SegmentDataset(utterances, cache, segment_frames=8, mels=Shifted(), mels_share=1.5)


def test_sampler_epochs_resume_and_ranks():
    sampler = SegmentSampler(7, 2, seed=3)
    sampler.set_epoch(0)
    epoch0 = list(sampler)
    assert sorted(i for batch in epoch0 for i, _ in batch) == list(range(7)) and len(epoch0) == 4
    sampler.set_epoch(0, start=2)
    assert list(sampler) == epoch0[2:]  # resuming mid-epoch: the same batches and seeds
    sampler.set_epoch(1)
    epoch1 = list(sampler)
    assert epoch1 != epoch0 and sorted(i for batch in epoch1 for i, _ in batch) == list(range(7))
    ranks = [SegmentSampler(8, 2, seed=3, num_replicas=2, rank=r) for r in (0, 1)]
    seen = [[i for batch in r for i, _ in batch] for r in ranks]
    assert not set(seen[0]) & set(seen[1]) and len(seen[0]) == len(seen[1]) == 4
