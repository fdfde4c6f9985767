"""The neutral style training records (gst_tts.training.neutral): the mean token weights of the
references of the batches the model was updated on, per epoch, stored in every checkpoint."""

from __future__ import annotations

from conftest import write_corpus
import torch

from gst_tts.checkpoints.acoustic import load_checkpoint
from gst_tts.training.neutral import NeutralStyleMeter
from gst_tts.training.trainer import Trainer


def test_the_meter_averages_the_last_complete_epoch_and_restores_its_sums():
    meter = NeutralStyleMeter(n_heads=2, n_tokens=3)
    assert meter.mean() is None
    first = [torch.softmax(torch.randn(4, 2, 3), -1) for _ in range(3)]
    for batch in first:
        meter.add(batch)
    torch.testing.assert_close(meter.mean(), torch.cat(first).mean(0))  # the epoch so far
    meter.end_epoch()
    second = torch.softmax(torch.randn(5, 2, 3), -1)
    meter.add(second)
    torch.testing.assert_close(meter.mean(), torch.cat(first).mean(0))  # the last complete epoch
    again = NeutralStyleMeter(n_heads=2, n_tokens=3)
    again.load_state_dict(meter.state_dict())
    again.end_epoch()
    torch.testing.assert_close(again.mean(), second.mean(0))


def test_training_stores_the_mean_of_its_batches_token_weights(make_cfg, tmp_path):
    corpus = write_corpus(tmp_path / "corpus", n=8)  # 6 training utterances in batches of 2: 3 steps an epoch
    torch.manual_seed(0)
    trainer = Trainer(make_cfg(corpus, tmp_path / "cache", max_steps=4), tmp_path / "run")
    seen = []
    criterion = trainer.criterion

    def spy(output, batch, step):
        if output.style_weights.requires_grad:  # a training batch, not validation's
            seen.append(output.style_weights.detach().clone())
        return criterion(output, batch, step)

    trainer.criterion = spy
    trainer.fit()
    assert len(seen) == 4 and trainer.state.epoch == 1
    first_epoch = torch.cat(seen[:3]).double().mean(0).float()
    torch.testing.assert_close(trainer.neutral.mean(), first_epoch, rtol=0, atol=1e-7)
    assert not torch.allclose(first_epoch, torch.full_like(first_epoch, 1 / first_epoch.shape[1]), atol=1e-4)
    stored = load_checkpoint(tmp_path / "run" / "checkpoints" / "last.pt")
    torch.testing.assert_close(stored["neutral_style"], first_epoch, rtol=0, atol=1e-7)
    # What a resume continues from: the fourth step's batch counted in the open epoch.
    torch.testing.assert_close(stored["neutral_meter"]["sum"], seen[3].double().sum(0))
    assert stored["neutral_meter"]["count"] == seen[3].shape[0]
