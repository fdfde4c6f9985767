"""HiFi-GAN's discriminators: the published sizes, output shapes, real and generated audio judged in
one pass as each alone, the norms, and sizes that cannot work."""

from __future__ import annotations

from conftest import TINY_DISCRIMINATOR
import pytest
import torch
from torch.nn.utils import parametrize

from gst_tts.audio.vocoders.discriminators import HiFiGANDiscriminator, PeriodDiscriminator, ScaleDiscriminator


def test_default_sizes_are_the_published_ones():
    d = HiFiGANDiscriminator()
    assert sum(p.numel() for p in d.mpd.parameters()) == 41_105_770
    assert sum(p.numel() for p in d.msd.parameters()) == 29_618_821
    assert [m.period for m in d.mpd.discriminators] == [2, 3, 5, 7, 11] and len(d.msd.discriminators) == 3


@pytest.mark.parametrize("samples", [2048, 2047])  # any length: each period discriminator pads to whole periods
def test_scores_and_features_for_every_sub_discriminator(samples):
    torch.manual_seed(0)
    d = HiFiGANDiscriminator(**TINY_DISCRIMINATOR)
    real, fake = torch.randn(3, 1, samples), torch.randn(3, 1, samples)
    out = d(real, fake)
    n = len(TINY_DISCRIMINATOR["periods"]) + TINY_DISCRIMINATOR["n_scales"]
    assert len(out.real_scores) == len(out.fake_scores) == len(out.real_features) == len(out.fake_features) == n
    for real_score, fake_score in zip(out.real_scores, out.fake_scores):
        assert real_score.shape == fake_score.shape and real_score.shape[0] == 3 and real_score.dim() == 2
    layers = [len(TINY_DISCRIMINATOR["period_channels"]) + 1] * 2 + [len(TINY_DISCRIMINATOR["scale_channels"]) + 1] * 2
    assert [len(f) for f in out.real_features] == layers
    # Period p folds the waveform into p columns; scale 2 sees a waveform pooled by 2.
    assert out.real_features[1][0].shape[-1] == 3
    assert out.real_features[3][0].shape[-1] == samples // 2 + 1

    # One pass over both equals each judged alone (nothing mixes across the batch).
    d.eval()  # spectral norm's power iteration would move between the calls
    together = d(real, fake)
    alone_real, alone_fake = d(real, real), d(fake, fake)
    for i in range(n):
        torch.testing.assert_close(together.real_scores[i], alone_real.real_scores[i])
        torch.testing.assert_close(together.fake_scores[i], alone_fake.fake_scores[i])
        torch.testing.assert_close(together.fake_features[i][0], alone_fake.real_features[i][0])


def test_gradients_reach_the_generated_audio():
    d = HiFiGANDiscriminator(**TINY_DISCRIMINATOR)
    fake = torch.randn(2, 1, 1024, requires_grad=True)
    out = d(torch.randn(2, 1, 1024), fake)
    sum(s.sum() for s in out.fake_scores).backward()
    assert fake.grad is not None and fake.grad.abs().sum() > 0


def test_weight_norm_everywhere_and_spectral_norm_on_the_first_scale():
    d = HiFiGANDiscriminator(**TINY_DISCRIMINATOR)
    first, second = d.msd.discriminators
    assert "parametrizations.weight.0._u" in "".join(first.state_dict())  # spectral norm keeps power-iteration vectors
    assert all(parametrize.is_parametrized(c, "weight") for c in [*second.convs, second.conv_post])
    assert not any("_u" in k for k in second.state_dict())
    assert all(parametrize.is_parametrized(c, "weight") for p in d.mpd.discriminators for c in [*p.convs, p.conv_post])


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: ScaleDiscriminator(channels=[16] * 6, groups=[1] * 6), "seven|7 convolutions"),
        (lambda: ScaleDiscriminator(channels=[8] * 7, groups=[1, 4, 16, 16, 16, 16, 1]), "groups 16 do not divide"),
        (lambda: PeriodDiscriminator(period=0), "period"),
        (lambda: HiFiGANDiscriminator(periods=[], n_scales=0), "needs periods or n_scales"),
    ],
)
def test_impossible_sizes_are_refused(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_mismatched_inputs_are_refused():
    d = HiFiGANDiscriminator(**TINY_DISCRIMINATOR)
    with pytest.raises(ValueError, match="one shape"):
        d(torch.zeros(2, 1, 512), torch.zeros(2, 1, 256))
