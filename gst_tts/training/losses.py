"""Training losses: mel (before and after the postnet), stop token, guided attention, and the
style embedding's prosody read-out."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from gst_tts.model.tacotron import TacotronOutput


def guided_attention_weights(
    text_lengths: torch.Tensor, step_lengths: torch.Tensor, max_steps: int, max_symbols: int, sigma: float
) -> torch.Tensor:
    """Penalty map of Tachibana et al. 2017: ``1 - exp(-(n/N - t/T)^2 / (2 sigma^2))``.

    Returns ``(batch, max_steps, max_symbols)``, zero outside each item's lengths.
    """
    device = text_lengths.device
    t = torch.arange(max_steps, device=device)[None, :, None] / step_lengths[:, None, None].float()
    n = torch.arange(max_symbols, device=device)[None, None, :] / text_lengths[:, None, None].float()
    weights = 1.0 - torch.exp(-((n - t) ** 2) / (2 * sigma**2))
    valid = (torch.arange(max_steps, device=device)[None, :, None] < step_lengths[:, None, None]) & (
        torch.arange(max_symbols, device=device)[None, None, :] < text_lengths[:, None, None]
    )
    return weights * valid


class TacotronLoss(nn.Module):
    """Sum of masked loss terms; padding never counts.

    Args:
        reduction_factor: frames per decoder step of the model being trained, and of the
            :class:`gst_tts.data.batching.Collate` that made the batches. Given, not read off tensor
            shapes, so that a mismatch is an error. Default 1.
        mel_loss: ``"mse"`` or ``"l1"``, for the mel before and after the postnet. Default ``"mse"``.
        stop_pos_weight: BCE positive-class weight for the (rare) stop steps. Default 5.0.
        guided_attention_weight: initial weight of the guided attention loss; 0 disables it. Default 1.0.
        guided_attention_sigma: width of the allowed diagonal band. Default 0.2.
        guided_attention_decay_steps: the weight halves every this many steps. Default 4000.
        guided_attention_min_weight: floor for the decayed weight. Default 0.0.
        prosody_weight: weight of the mean squared error between the model's ``style_prosody``
            read-out and the batch's standardised ``prosody`` targets (both present only when the
            data has prosody targets: ``data.prosody``); 0 disables it. Default 1.0.
    """

    def __init__(
        self,
        reduction_factor: int = 1,
        mel_loss: str = "mse",
        stop_pos_weight: float = 5.0,
        guided_attention_weight: float = 1.0,
        guided_attention_sigma: float = 0.2,
        guided_attention_decay_steps: int = 4000,
        guided_attention_min_weight: float = 0.0,
        prosody_weight: float = 1.0,
    ) -> None:
        super().__init__()
        if not 1 <= reduction_factor <= 5:
            raise ValueError(f"reduction_factor must be 1–5, got {reduction_factor}")
        if mel_loss not in ("mse", "l1"):
            raise ValueError(f"mel_loss must be 'mse' or 'l1', got {mel_loss!r}")
        self.reduction_factor = reduction_factor
        self.mel_loss = F.mse_loss if mel_loss == "mse" else F.l1_loss
        self.stop_pos_weight = stop_pos_weight
        self.guided_attention_weight = guided_attention_weight
        self.guided_attention_sigma = guided_attention_sigma
        self.guided_attention_decay_steps = guided_attention_decay_steps
        self.guided_attention_min_weight = guided_attention_min_weight
        if prosody_weight < 0:
            raise ValueError(f"prosody_weight must be >= 0, got {prosody_weight}")
        self.prosody_weight = prosody_weight

    def guided_weight(self, step: int) -> float:
        w = self.guided_attention_weight * 0.5 ** (step / self.guided_attention_decay_steps)
        return max(w, self.guided_attention_min_weight) if self.guided_attention_weight > 0 else 0.0

    def forward(self, output: TacotronOutput, batch: dict, step: int = 0) -> dict[str, torch.Tensor]:
        """Loss terms for a collated batch (see :class:`gst_tts.data.batching.Collate`); ``total`` is their sum.

        Raises:
            ValueError: the output, the batch and ``reduction_factor`` disagree: frames that are
                not ``r`` per step, or target lengths that are not whole steps.
        """
        target = batch["mel"]
        r = self.reduction_factor
        _check_shapes(output, batch, r)
        frame_mask = torch.arange(target.shape[1], device=target.device)[None, :] < batch["mel_lengths"][:, None]
        step_lengths = batch["mel_lengths"] // r
        # The stop loss may count steps past the end too (Collate's stop_steps_past_end).
        stop_lengths = batch.get("stop_lengths", step_lengths)
        step_mask = torch.arange(output.stop_logits.shape[1], device=target.device)[None, :] < stop_lengths[:, None]
        mel_mask = frame_mask.unsqueeze(-1).expand_as(target)
        terms = {
            "mel": self.mel_loss(output.mel.float()[mel_mask], target[mel_mask]),
            "mel_postnet": self.mel_loss(output.mel_postnet.float()[mel_mask], target[mel_mask]),
            "stop": F.binary_cross_entropy_with_logits(
                output.stop_logits.float()[step_mask],
                batch["stop_targets"][step_mask],
                pos_weight=torch.tensor(self.stop_pos_weight, device=target.device),
            ),
        }
        weight = self.guided_weight(step)
        if weight > 0:
            alignments = output.alignments.float()
            penalty = guided_attention_weights(
                batch["text_lengths"],
                step_lengths,
                alignments.shape[1],
                alignments.shape[2],
                self.guided_attention_sigma,
            )
            # Expected penalty under each step's attention distribution, averaged over valid steps.
            terms["guided_attention"] = weight * (alignments * penalty).sum() / step_lengths.sum().clamp(min=1)
        if (output.style_prosody is None) != ("prosody" not in batch):
            raise ValueError(
                "the model's style_prosody read-out and the batch's prosody targets must come together"
                f" (model {'has' if output.style_prosody is not None else 'has no'} read-out, batch"
                f" {'has' if 'prosody' in batch else 'has no'} targets): build the model with style_prosody_dim "
                "from the data"
            )
        if output.style_prosody is not None and self.prosody_weight > 0:
            terms["prosody"] = self.prosody_weight * F.mse_loss(output.style_prosody.float(), batch["prosody"].float())
        terms["total"] = sum(terms.values())
        return terms


def _check_shapes(output: TacotronOutput, batch: dict, r: int) -> None:
    target, lengths = batch["mel"], batch["mel_lengths"]
    steps = output.stop_logits.shape[1]
    if output.mel.shape != target.shape or output.mel_postnet.shape != target.shape:
        raise ValueError(f"predicted mel {tuple(output.mel.shape)} does not match the target {tuple(target.shape)}")
    if target.shape[1] != steps * r or batch["stop_targets"].shape != output.stop_logits.shape:
        raise ValueError(
            f"{target.shape[1]} target frames and stop targets {tuple(batch['stop_targets'].shape)} do not fit"
            f" {steps} decoder steps of r={r} frames: was the batch collated or the model built with another r?"
        )
    if bool((lengths % r != 0).any()):
        raise ValueError(
            f"target lengths {lengths.tolist()} are not whole steps of r={r} frames"
            " (gst_tts.data.batching.Collate trims them so every emitted frame is trained)"
        )
