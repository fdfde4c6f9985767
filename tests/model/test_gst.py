import pytest
import torch

from gst_tts.model.gst import REFERENCE_NORMS, GlobalStyleTokens, MaskedBatchNorm2d, ReferenceEncoder, StyleTokenLayer


def test_token_weights_sum_to_one_per_head():
    torch.manual_seed(0)
    gst = GlobalStyleTokens(
        n_mels=20,
        reference_channels=(4, 4, 8),
        reference_dim=16,
        reference_time_strides=(2, 2, 2),
        reference_norm="batch",
        n_tokens=6,
        token_dim=24,
        n_heads=3,
    )
    style, weights = gst(torch.randn(5, 40, 20))
    assert style.shape == (5, 24) and weights.shape == (5, 3, 6)
    assert torch.allclose(weights.sum(-1), torch.ones(5, 3), atol=1e-6)
    assert (weights >= 0).all()


def encoder(time_strides=(2, 2, 2), norm="batch") -> ReferenceEncoder:
    return ReferenceEncoder(n_mels=16, channels=(4, 8, 8), gru_dim=12, time_strides=time_strides, norm=norm)


@pytest.mark.parametrize("norm", REFERENCE_NORMS)
@pytest.mark.parametrize("time_strides", [(2, 2, 2), (2, 1, 1), (1, 2, 1)])
def test_reference_encoder_padded_batch_matches_single(time_strides, norm):
    torch.manual_seed(0)
    enc = encoder(time_strides, norm).eval()
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
        enc = encoder(strides).eval()
        seen = []
        enc.gru.register_forward_hook(lambda module, args, out: seen.append(args[0]))
        enc(torch.randn(1, 48, 16))
        steps[strides] = int(seen[0].batch_sizes.numel())  # a packed sequence: one batch size per step
    assert steps == {(2, 2, 2): 6, (2, 1, 1): 24}


@pytest.mark.parametrize("time_strides", [(2, 2), (2, 2, 3), (0, 2, 2)])
def test_time_strides_must_be_one_or_two_per_block(time_strides):
    with pytest.raises(ValueError, match="time_strides"):
        encoder(time_strides)


def test_unknown_norm_is_refused():
    with pytest.raises(ValueError, match="norm 'group'"):
        encoder(norm="group")


def padded_pair(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A 23-frame reference, and a batch of it (padded with garbage) beside a 50-frame one."""
    generator = torch.Generator().manual_seed(seed)
    short, long = torch.randn(1, 23, 16, generator=generator), torch.randn(1, 50, 16, generator=generator) * 3 + 1
    batch = torch.full((2, 50, 16), 100.0)
    batch[0, :23], batch[1] = short[0], long[0]
    return short, batch, torch.tensor([23, 50])


@pytest.mark.parametrize("time_strides", [(2, 2, 2), (2, 1, 1)])
def test_in_training_mode_layer_norm_encodes_a_reference_as_it_does_alone(time_strides):
    torch.manual_seed(0)
    enc = encoder(time_strides, "layer").train()
    short, batch, lengths = padded_pair()
    alone = enc(short)[0]
    torch.testing.assert_close(enc(batch, lengths)[0], alone, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(enc.eval()(short)[0], alone, rtol=0, atol=0)  # and as it does in eval mode


def test_in_training_mode_batch_norm_depends_on_the_batch_and_its_padding():
    """What "layer" fixes: BatchNorm's training statistics see the batch-mate and the padding; the
    masked statistics see no padding (the same reference padded further encodes the same)."""
    torch.manual_seed(0)
    short, batch, lengths = padded_pair()
    enc = encoder(norm="batch").train()
    assert (enc(batch, lengths)[0] - enc(short)[0]).abs().max() > 1e-2
    masked = encoder(norm="masked_batch")
    masked.load_state_dict(enc.state_dict())  # the same parameters and buffers as "batch"
    masked.train()
    assert (masked(batch, lengths)[0] - masked(short)[0]).abs().max() > 1e-2  # the batch-mate still counts
    padded = torch.cat([short, torch.full((1, 30, 16), 100.0)], 1)
    torch.testing.assert_close(masked(padded, torch.tensor([23]))[0], masked(short)[0], rtol=1e-5, atol=1e-5)
    assert (enc(padded, torch.tensor([23]))[0] - enc(short)[0]).abs().max() > 1e-2  # BatchNorm counts the padding


def test_masked_batch_norm_equals_batch_norm_without_padding_and_tracks_the_same_statistics():
    torch.manual_seed(0)
    x = torch.randn(3, 4, 10, 6) * 2 + 0.5
    plain, masked = torch.nn.BatchNorm2d(4).train(), MaskedBatchNorm2d(4).train()
    torch.testing.assert_close(masked(x, torch.ones(3, 1, 10, 1)), plain(x), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(masked.running_mean, plain.running_mean)
    torch.testing.assert_close(masked.running_var, plain.running_var)
    assert int(masked.num_batches_tracked) == 1
    # With padding: the statistics are those of the real frames alone.
    mask = torch.ones(3, 1, 10, 1)
    mask[1, :, 4:] = 0
    real = torch.cat([x[0].flatten(1), x[1, :, :4].flatten(1), x[2].flatten(1)], 1)  # (channels, values)
    out = MaskedBatchNorm2d(4, affine=False).train()(x, mask)
    expected = (x - real.mean(1)[:, None, None]) / torch.sqrt(real.var(1, unbiased=False)[:, None, None] + 1e-5)
    torch.testing.assert_close(out * mask, expected * mask, rtol=1e-5, atol=1e-5)


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
