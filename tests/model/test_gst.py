import pytest
import torch

from gst_tts.model.gst import GlobalStyleTokens, ReferenceEncoder, StyleTokenLayer


def test_token_weights_sum_to_one_per_head():
    torch.manual_seed(0)
    gst = GlobalStyleTokens(n_mels=20, reference_channels=(4, 4, 8), reference_dim=16, reference_time_strides=(2, 2, 2),
                            n_tokens=6, token_dim=24, n_heads=3)
    style, weights = gst(torch.randn(5, 40, 20))
    assert style.shape == (5, 24) and weights.shape == (5, 3, 6)
    assert torch.allclose(weights.sum(-1), torch.ones(5, 3), atol=1e-6)
    assert (weights >= 0).all()


@pytest.mark.parametrize("time_strides", [(2, 2, 2), (2, 1, 1), (1, 2, 1)])
def test_reference_encoder_padded_batch_matches_single(time_strides):
    torch.manual_seed(0)
    enc = ReferenceEncoder(n_mels=16, channels=(4, 8, 8), gru_dim=12, time_strides=time_strides).eval()
    short, long = torch.randn(1, 23, 16), torch.randn(1, 50, 16)
    batch = torch.zeros(2, 50, 16)
    batch[0, :23] = short[0]
    batch[0, 23:] = 100.0  # garbage in the padding must not matter
    batch[1] = long[0]
    out = enc(batch, torch.tensor([23, 50]))
    assert torch.allclose(out[0], enc(short)[0], atol=1e-5)
    assert torch.allclose(out[1], enc(long)[0], atol=1e-5)


def test_time_strides_set_how_many_steps_the_gru_takes():
    torch.manual_seed(0)
    steps = {}
    for strides in [(2, 2, 2), (2, 1, 1)]:
        enc = ReferenceEncoder(n_mels=16, channels=(4, 8, 8), gru_dim=12, time_strides=strides).eval()
        seen = []
        enc.gru.register_forward_hook(lambda module, args, out: seen.append(args[0]))
        enc(torch.randn(1, 48, 16))
        steps[strides] = int(seen[0].batch_sizes.numel())  # a packed sequence: one batch size per step
    assert steps == {(2, 2, 2): 6, (2, 1, 1): 24}


@pytest.mark.parametrize("time_strides", [(2, 2), (2, 2, 3), (0, 2, 2)])
def test_time_strides_must_be_one_or_two_per_block(time_strides):
    with pytest.raises(ValueError, match="time_strides"):
        ReferenceEncoder(n_mels=16, channels=(4, 8, 8), gru_dim=12, time_strides=time_strides)


def test_style_from_weights_matches_attention_output():
    torch.manual_seed(0)
    layer = StyleTokenLayer(query_dim=8, n_tokens=4, token_dim=8, n_heads=2)
    style, weights = layer(torch.randn(3, 8))
    assert torch.allclose(layer.style_from_weights(weights), style, atol=1e-6)
    # Same weights in every head from a (batch, n_tokens) tensor.
    flat = torch.tensor([[0.0, 1.0, 0.0, 0.0]])
    assert torch.allclose(layer.style_from_weights(flat), layer.style_from_weights(flat[:, None].expand(-1, 2, -1)))
    with pytest.raises(ValueError):
        layer.style_from_weights(torch.zeros(1, 3, 4))
