import torch

from conftest import tiny_model
from gst_tts.model import GSTTacotron


def _batch(model: GSTTacotron, batch=3, symbols=9, frames=12):
    text = torch.randint(2, 20, (batch, symbols))
    text_lengths = torch.tensor([symbols, symbols - 3, 4])[:batch]
    mel = torch.randn(batch, frames, model.n_mels)
    return text, text_lengths, mel, torch.tensor([frames, frames - 1, 5])[:batch]


def test_forward_shapes():
    torch.manual_seed(0)
    model = tiny_model(20, n_mels=10, reduction_factor=3)
    text, tl, mel, ml = _batch(model)
    out = model(text, tl, mel, ml)
    assert out.mel.shape == mel.shape and out.mel_postnet.shape == mel.shape
    assert out.stop_logits.shape == (3, 4) and out.alignments.shape == (3, 4, 9)
    assert out.style_weights.shape == (3, model.n_heads, model.n_tokens)
    # Attention never lands on padded symbols.
    assert torch.all(out.alignments[2, :, 4:] == 0)


def test_concat_style_combination():
    model = tiny_model(20, n_mels=10, style_combine="concat")
    text, tl, mel, ml = _batch(model, frames=8)
    assert model(text, tl, mel, ml).mel.shape == mel.shape


def test_inference_ends_at_the_bound_when_the_stop_token_never_fires():
    torch.manual_seed(0)
    model = tiny_model(20, n_mels=10, reduction_factor=2).eval()
    with torch.no_grad():
        model.decoder.stop_projection.bias.fill_(-50.0)  # never stop
    text = torch.randint(2, 20, (2, 6))
    out = model.infer(text, torch.tensor([6, 3]), max_frames_per_symbol=4.0, max_decoder_steps=100)
    assert not out.stopped_on_token.any()
    assert out.steps.tolist() == [12, 6]  # ceil(4 * symbols / r)
    assert out.mel_lengths.tolist() == [24, 12]
    capped = model.infer(text, torch.tensor([6, 3]), max_frames_per_symbol=4.0, max_decoder_steps=5)
    assert capped.steps.tolist() == [5, 5]


def test_inference_stops_on_the_token():
    model = tiny_model(20, n_mels=10).eval()
    with torch.no_grad():
        model.decoder.stop_projection.bias.fill_(50.0)  # stop at once
    out = model.infer(torch.randint(2, 20, (2, 6)), torch.tensor([6, 6]))
    assert out.stopped_on_token.all() and out.steps.tolist() == [1, 1]


def test_given_token_weights_and_neutral_style():
    model = tiny_model(20, n_mels=10).eval()
    text = torch.randint(2, 20, (1, 5))
    one_hot = torch.zeros(1, model.n_tokens)
    one_hot[0, 1] = 1.0
    style_a, weights = model.style(style_weights=one_hot)
    assert weights.shape == (1, model.n_heads, model.n_tokens)
    style_n, _ = model.style(batch_size=1)
    assert not torch.allclose(style_a, style_n)
    out = model.infer(text, torch.tensor([5]), style_weights=one_hot, max_decoder_steps=3)
    assert out.mel_postnet.shape[0] == 1


def test_prenet_dropout_stays_on_at_inference_unless_disabled():
    torch.manual_seed(0)
    text, tl = torch.randint(2, 20, (1, 6)), torch.tensor([6])
    model = tiny_model(20, n_mels=10).eval()
    a = model.infer(text, tl, max_decoder_steps=4).mel_postnet
    b = model.infer(text, tl, max_decoder_steps=4).mel_postnet
    assert not torch.allclose(a, b)
    model = tiny_model(20, n_mels=10, prenet_dropout_at_inference=False).eval()
    a = model.infer(text, tl, max_decoder_steps=4).mel_postnet
    b = model.infer(text, tl, max_decoder_steps=4).mel_postnet
    assert torch.allclose(a, b)
