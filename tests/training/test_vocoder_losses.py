"""HiFi-GAN's losses: least-squares terms at their known values, feature matching, the mel L1 and
its band, weights, and where gradients go."""

from __future__ import annotations

import pytest
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.audio.vocoders.discriminators import DiscriminatorOutput
from gst_tts.training.vocoder_losses import HiFiGANLoss, adversarial_loss, discriminator_loss, feature_matching_loss


def _judged(real: float, fake: float, features: tuple[float, float] = (0.0, 0.0)) -> DiscriminatorOutput:
    ones = torch.ones(2, 5)
    return DiscriminatorOutput(
        [real * ones] * 2, [fake * ones] * 2, [[features[0] * ones] * 3] * 2, [[features[1] * ones] * 3] * 2
    )


def test_least_squares_terms():
    perfect = _judged(real=1.0, fake=0.0)
    assert discriminator_loss(perfect.real_scores, perfect.fake_scores) == (0.0, 0.0)
    fooled = _judged(real=0.0, fake=1.0)
    real, fake = discriminator_loss(fooled.real_scores, fooled.fake_scores)
    assert float(real) == 2.0 and float(fake) == 2.0  # two sub-discriminators, each mean 1
    assert float(adversarial_loss(fooled.fake_scores)) == 0.0 and float(adversarial_loss(perfect.fake_scores)) == 2.0
    apart = _judged(0.0, 0.0, features=(1.0, 0.5))
    assert float(feature_matching_loss(apart.real_features, apart.fake_features)) == pytest.approx(2 * 3 * 0.5)


def test_mel_l1_and_weighted_total():
    loss = HiFiGANLoss(audio_config=AudioConfig(), mel_weight=10.0, feature_matching_weight=3.0, adversarial_weight=0.5)
    torch.manual_seed(0)
    real = 0.1 * torch.randn(2, 1, 2048)
    fake = (real + 0.05 * torch.randn_like(real)).requires_grad_(True)
    assert float(loss.mel_l1(real, real)) == 0.0
    terms = loss.generator_terms(real, fake, _judged(0.5, 0.2, features=(1.0, 0.0)))
    assert terms["mel_l1"] > 0
    expected = 10.0 * terms["mel_l1"] + 3.0 * terms["feature_matching"] + 0.5 * terms["adversarial"]
    torch.testing.assert_close(terms["total"], expected)
    terms["mel_l1"].backward()
    assert fake.grad is not None and fake.grad.abs().sum() > 0
    assert loss.mel(real).shape == (2, 1 + 2048 // 256, 80)


def test_the_loss_mel_reaches_nyquist_unless_told_otherwise():
    # A 10 kHz tone added to noise: above the features' 8 kHz, so only a full-band loss mel sees it.
    torch.manual_seed(0)
    t = torch.arange(4096) / 22050
    noise = 0.01 * torch.randn(1, 1, 4096)
    with_tone = noise + 0.5 * torch.sin(2 * torch.pi * 10_000 * t)
    full, band = HiFiGANLoss(audio_config=AudioConfig()), HiFiGANLoss(audio_config=AudioConfig(), mel_fmax=8000.0)

    def difference(loss: HiFiGANLoss) -> float:  # inner frames: the edges' padding spreads the tone
        return float((loss.mel(noise) - loss.mel(with_tone))[:, 2:-2].abs().mean())

    assert difference(full) > 0.05 and difference(band) < 0.005
    with pytest.raises(ValueError, match="Nyquist"):
        HiFiGANLoss(audio_config=AudioConfig(), mel_fmax=12_000.0)


def test_discriminator_terms_sum():
    terms = HiFiGANLoss(audio_config=AudioConfig()).discriminator_terms(_judged(0.5, 0.5))
    assert float(terms["real"]) == float(terms["fake"]) == 0.5 and float(terms["total"]) == 1.0
