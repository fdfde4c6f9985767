"""Decoder paths that must agree with the plain float path: deferred weight gradients, int8 inference."""

from conftest import tiny_model
import torch

from gst_tts.model.shared_weight import SharedStepWeight


def _teacher_forced(model, seed=0):
    torch.manual_seed(seed)
    text = torch.randint(2, 20, (2, 9))
    text_lengths = torch.tensor([9, 6])
    mel = torch.randn(2, 12, model.n_mels)
    return model(text, text_lengths, mel, torch.tensor([12, 9]))


def test_training_gradients_match_plain_per_step_products(monkeypatch) -> None:
    torch.manual_seed(0)
    model = tiny_model(20, n_mels=10, reduction_factor=3).eval()  # eval: no dropout, same numbers twice
    grads = []
    for deferred in (True, False):
        if not deferred:  # every step's product through plain autograd instead
            monkeypatch.setattr(SharedStepWeight, "__init__", _plain_init)
        model.zero_grad()
        out = _teacher_forced(model)
        (out.mel_postnet.square().mean() + out.stop_logits.square().mean()).backward()
        grads.append({name: p.grad.clone() for name, p in model.decoder.named_parameters() if p.grad is not None})
    assert grads[0].keys() == grads[1].keys()
    for name in (
        "attention_rnn.weight_hh",
        "attention_rnn.weight_ih",
        "decoder_rnn.weight_ih",
        "decoder_rnn.weight_hh",
    ):
        torch.testing.assert_close(grads[0][name], grads[1][name], rtol=1e-4, atol=1e-6)
        assert grads[0][name].abs().sum() > 0


def _plain_init(self, weight):
    self.weight, self.inputs, self.grad_outputs, self._token = weight, [], [], None


def test_int8_inference_is_close_to_float_and_can_be_turned_off() -> None:
    torch.manual_seed(0)
    model = tiny_model(20, n_mels=10).eval()
    with torch.no_grad():
        float_mel = _teacher_forced(model).mel
        model.decoder.set_int8_inference(True)
        assert model.decoder.int8_inference
        int8_mel = _teacher_forced(model).mel
        model.decoder.set_int8_inference(False)
        again = _teacher_forced(model).mel
    difference = (int8_mel - float_mel).abs()
    assert 0 < difference.mean() < 0.02 * float_mel.abs().mean()
    assert torch.equal(again, float_mel)


def test_int8_weights_stay_out_of_training_passes() -> None:
    model = tiny_model(20, n_mels=10).eval()
    with torch.no_grad():
        float_mel = _teacher_forced(model).mel
    model.decoder.set_int8_inference(True)
    out = _teacher_forced(model)  # builds a graph: float weights, gradients flow
    # Not bit-equal: the decoder LSTM's kernel differs with and without autograd (int8 is ~1e-2 off).
    torch.testing.assert_close(out.mel.detach(), float_mel, rtol=1e-5, atol=1e-6)
    out.mel.sum().backward()
    assert model.decoder.decoder_rnn.weight_hh.grad is not None


def test_inference_cells_compute_the_training_cells_prenet_gates() -> None:
    torch.manual_seed(0)
    model = tiny_model(20, n_mels=10).eval()
    decoder = model.decoder
    prenet_out = torch.randn(3, 5, decoder.prenet.layers[-1].out_features)
    sliced = decoder.training_cells().prenet_gates(prenet_out)
    with torch.no_grad():
        # The inference cells' contiguous copy is the same product as the strided slice of the
        # cell's weight, to the bit.
        assert torch.equal(decoder.pass_cells(torch.zeros(1, 1, 1)).prenet_gates(prenet_out), sliced)
        decoder.set_int8_inference(True)
        int8 = decoder.pass_cells(torch.zeros(1, 1, 1)).prenet_gates(prenet_out)
    assert not torch.equal(int8, sliced)
    torch.testing.assert_close(int8, sliced, rtol=0, atol=0.02 * float(sliced.detach().abs().max()))
