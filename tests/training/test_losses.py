import pytest
import torch

from gst_tts.data.batching import Collate
from gst_tts.model.tacotron import TacotronOutput
from gst_tts.training.losses import TacotronLoss, guided_attention_weights


def _batch_and_output(r=2, stop_steps_past_end=0):
    torch.manual_seed(0)
    items = [
        {"id": "a", "text": torch.tensor([3, 4, 5, 1]), "mel": torch.randn(7, 4), "style": None},
        {"id": "b", "text": torch.tensor([3, 1]), "mel": torch.randn(4, 4), "style": None},
    ]
    batch = Collate(r, stop_steps_past_end=stop_steps_past_end)(items)
    frames, steps = batch["mel"].shape[1], batch["mel"].shape[1] // r
    output = TacotronOutput(
        mel=torch.randn(2, frames, 4),
        mel_postnet=torch.randn(2, frames, 4),
        stop_logits=torch.randn(2, steps),
        alignments=torch.softmax(torch.randn(2, steps, 4), -1),
        style_weights=None,
    )
    return batch, output


def test_padding_does_not_change_any_term():
    batch, output = _batch_and_output()
    loss = TacotronLoss(reduction_factor=2)
    base = loss(output, batch)
    # Change predictions and targets only where they are padding.
    mel = output.mel.clone()
    mel[1, 4:] += 100
    post = output.mel_postnet.clone()
    post[1, 4:] -= 100
    stop = output.stop_logits.clone()
    stop[1, 2:] += 100
    align = output.alignments.clone()
    align[1, :, 2:] = 5.0
    changed = loss(output._replace(mel=mel, mel_postnet=post, stop_logits=stop, alignments=align), batch)
    for name in ("mel", "mel_postnet", "stop", "guided_attention", "total"):
        assert torch.allclose(base[name], changed[name]), name


def test_stop_loss_counts_the_steps_past_the_end_that_the_batch_gives_it():
    batch, output = _batch_and_output(stop_steps_past_end=2)  # steps: a 3 (+2), b 2 (+2) of 5
    loss = TacotronLoss(reduction_factor=2, stop_pos_weight=1.0)
    logits, targets = output.stop_logits, batch["stop_targets"]
    counted = torch.cat([logits[0, :5], logits[1, :4]]), torch.cat([targets[0, :5], targets[1, :4]])
    assert targets[1, 1:4].tolist() == [1.0, 1.0, 1.0]  # the last step and two past it
    expected = torch.nn.functional.binary_cross_entropy_with_logits(*counted)
    assert torch.allclose(loss(output, batch)["stop"], expected)
    # Steps past those still do not count; the mel terms never count past-end steps.
    stop = logits.clone()
    stop[1, 4] += 100
    mel = output.mel.clone()
    mel[:, 6:] += 100
    mel[1, 4:] += 100
    changed = loss(output._replace(stop_logits=stop, mel=mel), batch)
    base = loss(output, batch)
    for name in ("stop", "mel"):
        assert torch.allclose(changed[name], base[name]), name


def test_terms_react_to_real_frames_and_l1_option():
    batch, output = _batch_and_output()
    base = TacotronLoss(reduction_factor=2)(output, batch)
    mel = output.mel.clone()
    mel[0, 0] += 10
    assert TacotronLoss(reduction_factor=2)(output._replace(mel=mel), batch)["mel"] > base["mel"]
    l1 = TacotronLoss(reduction_factor=2, mel_loss="l1")(output, batch)
    assert not torch.allclose(l1["mel"], base["mel"])


def test_guided_attention_prefers_the_diagonal_and_decays():
    text_lengths, step_lengths = torch.tensor([10]), torch.tensor([10])
    w = guided_attention_weights(text_lengths, step_lengths, 10, 10, sigma=0.2)[0]
    diagonal, anti = torch.eye(10), torch.eye(10).flip(1)
    assert (w * diagonal).sum() < 0.05 * (w * anti).sum()
    loss = TacotronLoss(guided_attention_weight=2.0, guided_attention_decay_steps=100)
    assert loss.guided_weight(0) == 2.0 and abs(loss.guided_weight(100) - 1.0) < 1e-9
    batch, output = _batch_and_output()
    assert "guided_attention" not in TacotronLoss(reduction_factor=2, guided_attention_weight=0.0)(output, batch)


def test_guided_map_is_zero_outside_lengths():
    w = guided_attention_weights(torch.tensor([3, 5]), torch.tensor([2, 4]), 4, 5, sigma=0.2)
    assert torch.all(w[0, 2:] == 0) and torch.all(w[0, :, 3:] == 0)


@pytest.mark.parametrize("r", [2, 3])
def test_every_trained_step_is_trained_on_all_its_frames(r):
    """No frame of a step the model is trained to emit goes unsupervised (inference emits whole steps)."""
    batch, output = _batch_and_output(r)
    mel = output.mel.clone().requires_grad_()
    stop = output.stop_logits.clone().requires_grad_()
    terms = TacotronLoss(reduction_factor=r)(output._replace(mel=mel, stop_logits=stop), batch)
    (terms["mel"] + terms["stop"]).backward()
    mel_steps = (mel.grad.abs().sum(-1) > 0).view(mel.shape[0], -1, r)  # (batch, steps, r) frame trained
    stop_steps = stop.grad != 0  # (batch, steps) step trained
    assert stop_steps.any(1).all()
    for i in range(mel.shape[0]):
        for s in range(stop.shape[1]):
            assert mel_steps[i, s].tolist() == [bool(stop_steps[i, s])] * r, (i, s)


def test_reduction_factor_is_given_and_a_mismatch_is_an_error():
    batch, output = _batch_and_output(2)  # 6 frames, 3 decoder steps of 2 frames
    assert TacotronLoss(reduction_factor=2).reduction_factor == 2
    TacotronLoss(reduction_factor=2)(output, batch)
    with pytest.raises(ValueError, match="r=3"):
        TacotronLoss(reduction_factor=3)(output, batch)
    with pytest.raises(ValueError, match="r=1"):
        TacotronLoss()(output, batch)  # the default r=1 does not silently read r=2 off the shapes
    # Targets that are not whole steps were collated another way: refused, not half trained.
    with pytest.raises(ValueError, match="whole steps"):
        TacotronLoss(reduction_factor=2)(output, {**batch, "mel_lengths": batch["mel_lengths"] + 1})
    with pytest.raises(ValueError):
        TacotronLoss(reduction_factor=0)


def test_prosody_term_needs_the_read_out_and_the_targets_together():
    batch, output = _batch_and_output()
    targets = torch.tensor([[1.0, -1.0], [0.5, 0.0]])
    loss = TacotronLoss(reduction_factor=2, prosody_weight=2.0)
    terms = loss(output._replace(style_prosody=targets + 1.0), {**batch, "prosody": targets})
    assert torch.isclose(terms["prosody"], torch.tensor(2.0))
    assert torch.isclose(terms["total"], sum(v for k, v in terms.items() if k != "total"))
    assert "prosody" not in loss(output, batch)
    assert "prosody" not in TacotronLoss(reduction_factor=2, prosody_weight=0.0)(
        output._replace(style_prosody=targets), {**batch, "prosody": targets}
    )
    with pytest.raises(ValueError, match="must come together"):
        loss(output, {**batch, "prosody": targets})
    with pytest.raises(ValueError, match="must come together"):
        loss(output._replace(style_prosody=targets), batch)
