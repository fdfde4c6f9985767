"""HiFi-GAN's training losses: mel-spectrogram L1, feature matching and least-squares adversarial
terms for the generator; least-squares real/fake terms for the discriminators.

The mel of the loss is a :class:`~gst_tts.audio.features.MelExtractor` (the features' own
transform, differentiable) with ``fmax`` at the Nyquist frequency by default, as published
(``fmax_for_loss: null``): the generator is judged on the whole band although it sees mels up to
``data.audio.fmax`` only.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import torch
from torch import nn

from gst_tts.audio.features import AudioConfig, MelExtractor
from gst_tts.audio.vocoders.discriminators import DiscriminatorOutput


def discriminator_loss(
    real_scores: Sequence[torch.Tensor], fake_scores: Sequence[torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor]:
    """LSGAN: ``Σ_d mean((1 - D(real))²)`` and ``Σ_d mean(D(fake)²)`` over the sub-discriminators."""
    real = sum(torch.mean((1 - r.float()) ** 2) for r in real_scores)
    fake = sum(torch.mean(f.float() ** 2) for f in fake_scores)
    return real, fake


def adversarial_loss(fake_scores: Sequence[torch.Tensor]) -> torch.Tensor:
    """LSGAN, the generator's side: ``Σ_d mean((1 - D(fake))²)``."""
    return sum(torch.mean((1 - f.float()) ** 2) for f in fake_scores)


def feature_matching_loss(
    real_features: Sequence[Sequence[torch.Tensor]], fake_features: Sequence[Sequence[torch.Tensor]]
) -> torch.Tensor:
    """``Σ_d Σ_layer mean|real - fake|`` of the discriminators' activations (the real ones are targets)."""
    return sum(
        torch.mean(torch.abs(r.detach().float() - f.float()))
        for rs, fs in zip(real_features, fake_features)
        for r, f in zip(rs, fs)
    )


class HiFiGANLoss(nn.Module):
    """The weighted HiFi-GAN objectives. The keys of the ``loss`` group of ``conf/vocoder_train.yaml``
    are its arguments (``audio_config`` comes from ``data.audio``).

    Args:
        audio_config: the feature settings; the loss mel uses them with ``mel_fmax`` as ``fmax``.
        mel_weight: weight of the mel L1 term. Default 45, as published.
        feature_matching_weight: weight of the feature matching term. Default 2, as published.
        adversarial_weight: weight of the generator's adversarial term. Default 1.
        mel_fmax: highest frequency of the loss mel (Hz); ``None``: the Nyquist frequency. Default None.
    """

    def __init__(
        self,
        *,
        audio_config: AudioConfig,
        mel_weight: float = 45.0,
        feature_matching_weight: float = 2.0,
        adversarial_weight: float = 1.0,
        mel_fmax: float | None = None,
    ) -> None:
        super().__init__()
        fmax = float(mel_fmax) if mel_fmax is not None else audio_config.sample_rate / 2
        if not audio_config.fmin < fmax <= audio_config.sample_rate / 2:
            raise ValueError(
                f"mel_fmax {mel_fmax} must lie above fmin {audio_config.fmin} and at most at "
                f"the Nyquist frequency {audio_config.sample_rate / 2}"
            )
        self.extractor = MelExtractor(dataclasses.replace(audio_config, fmax=fmax))
        self.mel_weight = float(mel_weight)
        self.feature_matching_weight = float(feature_matching_weight)
        self.adversarial_weight = float(adversarial_weight)

    def mel(self, audio: torch.Tensor) -> torch.Tensor:
        """``(batch, 1, samples)`` → ``(batch, frames, n_mels)`` loss log-mel, in float32, differentiable."""
        return self.extractor.log_mel(audio.float().squeeze(1))

    def mel_l1(self, real: torch.Tensor, fake: torch.Tensor) -> torch.Tensor:
        """Mean absolute difference of the loss mels of two ``(batch, 1, samples)`` waveforms (unweighted)."""
        with torch.no_grad():
            target = self.mel(real)
        return torch.nn.functional.l1_loss(self.mel(fake), target)

    def generator_terms(
        self, real: torch.Tensor, fake: torch.Tensor, judged: DiscriminatorOutput
    ) -> dict[str, torch.Tensor]:
        """The generator's terms (unweighted) and their weighted ``total``.

        Args:
            real, fake: ``(batch, 1, samples)`` waveforms: the recording and the generator's output.
            judged: the discriminators on both (gradients flow through ``fake`` only).
        """
        terms = {
            "mel_l1": self.mel_l1(real, fake),
            "feature_matching": feature_matching_loss(judged.real_features, judged.fake_features),
            "adversarial": adversarial_loss(judged.fake_scores),
        }
        terms["total"] = (
            self.mel_weight * terms["mel_l1"]
            + self.feature_matching_weight * terms["feature_matching"]
            + self.adversarial_weight * terms["adversarial"]
        )
        return terms

    def discriminator_terms(self, judged: DiscriminatorOutput) -> dict[str, torch.Tensor]:
        """The discriminators' terms on real and (detached) generated audio and their sum, ``total``."""
        real, fake = discriminator_loss(judged.real_scores, judged.fake_scores)
        return {"real": real, "fake": fake, "total": real + fake}
