import pytest
import torch

from gst_tts.model.attention.location_sensitive import MASK_VALUE, LocationSensitiveAttention


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_padding_gets_zero_weight_in_half_precision(dtype):
    torch.manual_seed(0)
    att = LocationSensitiveAttention(query_dim=16, memory_dim=8, attention_dim=12, location_filters=4, location_kernel_size=5).to(dtype)
    memory = torch.randn(2, 7, 8, dtype=dtype)
    mask = torch.zeros(2, 7, dtype=torch.bool)
    mask[0, 4:] = True
    prepared = att.prepare(memory, mask)
    prev = torch.zeros(2, 7, dtype=dtype)
    context, weights = att(torch.randn(2, 16, dtype=dtype), prepared, prev, prev)
    assert torch.isfinite(weights).all() and torch.isfinite(context).all()
    assert torch.all(weights[0, 4:] == 0)
    assert torch.allclose(weights.float().sum(-1), torch.ones(2), atol=1e-2)
    # The mask value itself must be representable (no -inf, which would give NaN rows).
    assert torch.tensor(MASK_VALUE, dtype=dtype).isfinite()


def test_merged_location_layer_equals_conv_then_dense():
    torch.manual_seed(0)
    att = LocationSensitiveAttention(query_dim=6, memory_dim=5, attention_dim=7, location_filters=3, location_kernel_size=5)
    weights = torch.softmax(torch.randn(2, 9), -1)
    stacked = torch.stack([weights, weights.cumsum(-1)], 1)
    reference = att.location_dense(att.location_conv(stacked).transpose(1, 2))
    merged = torch.nn.functional.conv1d(stacked, att.prepare(torch.randn(2, 9, 5), None).location_weight, padding=2)
    assert torch.allclose(reference, merged.transpose(1, 2), atol=1e-5)
