import pytest
import torch

from conftest import tiny_model
from gst_tts.model.attention import ATTENTION_KINDS, DecoderAttention, build_attention
from gst_tts.model.attention.location_sensitive import MASK_VALUE, LocationSensitiveAttention
from gst_tts.training.losses import TacotronLoss

# Every kind, and the classic kinds also with their location term.
VARIANTS = [(kind, False) for kind in ATTENTION_KINDS] + [
    (kind, True) for kind, cls in ATTENTION_KINDS.items() if cls.takes_location
]
VARIANT_IDS = [f"{kind}{'+location' if location else ''}" for kind, location in VARIANTS]


def test_kind_names_that_scripts_depend_on():
    assert {"location_sensitive", "additive", "dot", "general", "scaled_dot", "forward", "dynamic_convolution"} <= set(
        ATTENTION_KINDS
    )
    assert all(issubclass(cls, DecoderAttention) for cls in ATTENTION_KINDS.values())


def test_unknown_kind_is_a_one_line_error_listing_the_known_ones():
    with pytest.raises(ValueError, match="unknown attention 'luong'") as info:
        tiny_model(20, attention="luong")
    assert "\n" not in str(info.value)
    assert all(kind in str(info.value) for kind in ATTENTION_KINDS)


def _attention(kind, location, query_dim=16, memory_dim=8):
    return build_attention(
        kind,
        query_dim=query_dim,
        memory_dim=memory_dim,
        attention_dim=12,
        location=location,
        location_filters=4,
        location_kernel_size=5,
    )


def _run_steps(att, dtype, n_steps=4, memory_scale=1.0):
    """Weights and contexts of a few steps on a batch whose first item is padded from symbol 4 on."""
    memory = torch.randn(2, 7, 8, dtype=dtype) * memory_scale
    mask = torch.zeros(2, 7, dtype=torch.bool)
    mask[0, 4:] = True
    prepared = att.prepare(memory, mask)
    state = att.initial_state(prepared)
    out = []
    for _ in range(n_steps):
        context, weights, state = att.step(torch.randn(2, 16, dtype=dtype), state, prepared)
        out.append((context, weights))
    return out


@pytest.mark.parametrize("kind,location", VARIANTS, ids=VARIANT_IDS)
def test_weights_are_a_distribution_over_real_symbols(kind, location):
    torch.manual_seed(0)
    for context, weights in _run_steps(_attention(kind, location), torch.float32):
        assert context.shape == (2, 8) and weights.shape == (2, 7)
        assert torch.all(weights[0, 4:] == 0)
        assert torch.all(weights >= 0)
        torch.testing.assert_close(weights.sum(-1), torch.ones(2))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("kind,location", VARIANTS, ids=VARIANT_IDS)
def test_half_precision_keeps_padding_at_zero_and_stays_finite(kind, location, dtype):
    torch.manual_seed(0)
    # Large memory values: big dot-product energies must not reach the mask value or overflow.
    for context, weights in _run_steps(_attention(kind, location).to(dtype), dtype, memory_scale=8.0):
        assert weights.dtype == dtype
        assert torch.isfinite(weights).all() and torch.isfinite(context).all()
        assert torch.all(weights[0, 4:] == 0)
        torch.testing.assert_close(weights.float().sum(-1), torch.ones(2), atol=1e-2, rtol=0)


@pytest.mark.parametrize("kind,location", VARIANTS, ids=VARIANT_IDS)
def test_bf16_autocast_on_cpu(kind, location):
    torch.manual_seed(0)
    att = _attention(kind, location)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for context, weights in _run_steps(att, torch.float32):
            assert torch.isfinite(weights).all() and torch.isfinite(context).all()
            assert torch.all(weights[0, 4:] == 0)
            torch.testing.assert_close(weights.float().sum(-1), torch.ones(2), atol=1e-2, rtol=0)


def test_location_term_changes_the_weights_and_is_optional():
    torch.manual_seed(0)
    plain, located = _attention("dot", False), _attention("dot", True)
    assert not any("location" in name for name, _ in plain.named_parameters())
    assert any("location" in name for name, _ in located.named_parameters())
    located.load_state_dict(plain.state_dict(), strict=False)  # same score weights: only the term differs
    torch.manual_seed(1)
    a = _run_steps(plain, torch.float32)
    torch.manual_seed(1)
    b = _run_steps(located, torch.float32)
    assert torch.equal(a[0][1], b[0][1])  # the first step: no previous weights, so no location energy
    assert not torch.allclose(a[-1][1], b[-1][1])


def test_dot_needs_no_projection_when_sizes_match():
    assert sum(p.numel() for p in _attention("dot", False, query_dim=8).parameters()) == 0
    assert sum(p.numel() for p in _attention("dot", False, query_dim=16).parameters()) == 16 * 8


@pytest.mark.parametrize("location", [False, True])
def test_forward_attention_moves_at_most_one_symbol_per_step_and_never_back(location):
    torch.manual_seed(0)
    att = _attention("forward", location)
    memory = torch.randn(3, 12, 8) * 4
    prepared = att.prepare(memory, None)
    state = att.initial_state(prepared)
    reach = []
    for t in range(8):
        # Random queries: the content attention is free to point anywhere, also behind.
        _, weights, state = att.step(torch.randn(3, 16) * 4, state, prepared)
        assert torch.all(weights[:, t + 2 :] == 0)  # one symbol on per step at most (a_0 is on symbol 0)
        reach.append((weights > 0).float().cumsum(-1).argmax(-1))  # last symbol with weight
        torch.testing.assert_close(weights.sum(-1), torch.ones(3))
    assert all(torch.all(later >= earlier) for earlier, later in zip(reach, reach[1:]))


def test_forward_attention_advances_under_a_flat_content_and_with_the_agent():
    torch.manual_seed(0)
    att = _attention("forward", False)
    torch.nn.init.zeros_(att.energy.weight)  # flat content: only the transition model moves the attention
    torch.nn.init.constant_(att.transition_agent.bias, 10.0)  # the agent says: move on
    torch.nn.init.zeros_(att.transition_agent.weight)
    prepared = att.prepare(torch.randn(1, 10, 8), None)
    state = att.initial_state(prepared)
    positions = []
    for _ in range(6):
        _, weights, state = att.step(torch.randn(1, 16), state, prepared)
        positions.append(float((weights[0].detach() * torch.arange(10)).sum()))  # expected symbol
    # u_0 = 0.5 moves half the first step's mass; from then on all of it moves one symbol a step.
    torch.testing.assert_close(torch.tensor(positions), torch.arange(6) + 0.5, atol=1e-3, rtol=0)


def test_dynamic_convolution_prior_only_moves_forward():
    from gst_tts.model.attention.dynamic_convolution import _beta_binomial

    prior = _beta_binomial(10, 0.1, 0.9)
    torch.testing.assert_close(prior.sum(), torch.tensor(1.0))
    assert prior[0] == prior.max()  # staying put is the likeliest move
    torch.manual_seed(0)
    att = _attention("dynamic_convolution", False)
    prepared = att.prepare(torch.randn(3, 30, 8), None)
    _, cumulative = att.initial_state(prepared)
    for position in (0, 5, 12):
        previous = torch.zeros(3, 30)
        previous[:, position] = 1.0
        for _ in range(3):
            # Random queries: the dynamic filters may want anything, but the prior allows no step back
            # and no jump past the prior filter's reach.
            _, weights, _ = att.step(torch.randn(3, 16) * 4, (previous, cumulative), prepared)
            assert torch.all(weights[:, :position].sum(-1) < 1e-3)
            assert torch.all(weights[:, position + 11 :].sum(-1) < 1e-3)
            torch.testing.assert_close(weights.sum(-1), torch.ones(3))


def test_dynamic_convolution_advances_along_the_symbols():
    torch.manual_seed(0)
    att = _attention("dynamic_convolution", False)
    torch.nn.init.zeros_(att.energy.weight)  # the prior alone: it moves mass forward every step
    prepared = att.prepare(torch.randn(1, 40, 8), None)
    state = att.initial_state(prepared)
    positions = []
    for _ in range(10):
        _, weights, state = att.step(torch.randn(1, 16), state, prepared)
        positions.append(float((weights[0].detach() * torch.arange(40)).sum()))
    assert all(later > earlier for earlier, later in zip(positions, positions[1:]))


def _batch(n_mels=10, r=2):
    text = torch.randint(2, 20, (2, 9))
    text_lengths = torch.tensor([9, 6])
    mel_lengths = torch.tensor([12, 8])
    mel = torch.randn(2, 12, n_mels)
    mel[1, 8:] = 0
    steps = torch.arange(12 // r)[None, :]
    stop_targets = (steps >= (mel_lengths // r - 1)[:, None]).float()
    return dict(text=text, text_lengths=text_lengths, mel=mel, mel_lengths=mel_lengths, stop_targets=stop_targets)


@pytest.mark.parametrize("kind,location", VARIANTS, ids=VARIANT_IDS)
def test_every_kind_trains_and_synthesizes_within_the_bound(kind, location):
    torch.manual_seed(0)
    model = tiny_model(20, n_mels=10, attention=kind, attention_location=location)
    loss = TacotronLoss(reduction_factor=2, guided_attention_weight=1.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch = _batch()
    for _ in range(2):
        optimizer.zero_grad()
        output = model(batch["text"], batch["text_lengths"], batch["mel"], batch["mel_lengths"])
        terms = loss(output, batch)
        assert torch.isfinite(terms["total"]) and terms["guided_attention"] > 0
        assert torch.all(output.alignments[1, :, 6:] == 0)
        terms["total"].backward()
        attention_grads = [p.grad for p in model.decoder.attention.parameters()]
        assert all(g is not None and torch.isfinite(g).all() for g in attention_grads)
        assert all(g.abs().sum() > 0 for g in attention_grads)
        assert model.encoder.embedding.weight.grad.abs().sum() > 0  # through the attention's context
        optimizer.step()
    model.eval()
    out = model.infer(
        batch["text"],
        batch["text_lengths"],
        stop_threshold=0.99,
        max_frames_per_symbol=2.0,
        max_frames=100,
        attention_window=None,
        stop_end_tolerance=None,
    )
    bound = torch.ceil(batch["text_lengths"] * 2.0 / 2).long()
    assert torch.all(out.steps <= bound) and torch.all(out.steps >= 1)
    assert torch.isfinite(out.mel_postnet).all()
    assert torch.all(out.alignments[1, :, 6:] == 0)
    torch.testing.assert_close(out.alignments.sum(-1), torch.ones_like(out.alignments.sum(-1)))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_padding_gets_zero_weight_in_half_precision(dtype):
    torch.manual_seed(0)
    att = LocationSensitiveAttention(
        query_dim=16, memory_dim=8, attention_dim=12, location_filters=4, location_kernel_size=5
    ).to(dtype)
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


def test_location_sensitive_step_carries_previous_and_cumulative_weights():
    torch.manual_seed(0)
    att = LocationSensitiveAttention(
        query_dim=6, memory_dim=5, attention_dim=7, location_filters=3, location_kernel_size=5
    )
    prepared = att.prepare(torch.randn(2, 9, 5), None)
    state = att.initial_state(prepared)
    total = torch.zeros(2, 9)
    for _ in range(3):
        query = torch.randn(2, 6)
        context, weights, new_state = att.step(query, state, prepared)
        reference = att(query, prepared, *state)
        assert torch.equal(context, reference[0]) and torch.equal(weights, reference[1])
        total = total + weights
        assert torch.equal(new_state[0], weights) and torch.allclose(new_state[1], total)
        state = new_state


def test_merged_location_layer_equals_conv_then_dense():
    torch.manual_seed(0)
    att = LocationSensitiveAttention(
        query_dim=6, memory_dim=5, attention_dim=7, location_filters=3, location_kernel_size=5
    )
    weights = torch.softmax(torch.randn(2, 9), -1)
    stacked = torch.stack([weights, weights.cumsum(-1)], 1)
    reference = att.location_dense(att.location_conv(stacked).transpose(1, 2))
    merged = torch.nn.functional.conv1d(stacked, att.prepare(torch.randn(2, 9, 5), None).location_weight, padding=2)
    assert torch.allclose(reference, merged.transpose(1, 2), atol=1e-5)


@pytest.mark.parametrize("kind,location", VARIANTS, ids=VARIANT_IDS)
@pytest.mark.parametrize("window", [(0, 1), (1, 3)])
def test_attention_window_keeps_each_step_near_the_last_peak(kind, location, window):
    # An untrained model attends all over the text; with the window every step's weight lies
    # within (behind, ahead) of the previous step's peak, and the alignment only moves on.
    torch.manual_seed(0)
    model = tiny_model(20, n_mels=10, attention=kind, attention_location=location).eval()
    batch = _batch()
    free = model.infer(
        batch["text"],
        batch["text_lengths"],
        stop_threshold=1.0,
        max_frames_per_symbol=4.0,
        max_frames=60,
        attention_window=None,
        stop_end_tolerance=None,
    )
    out = model.infer(
        batch["text"],
        batch["text_lengths"],
        stop_threshold=1.0,
        max_frames_per_symbol=4.0,
        max_frames=60,
        attention_window=window,
        stop_end_tolerance=None,
    )
    behind, ahead = window
    symbols = batch["text"].shape[1]
    positions = torch.arange(symbols)
    spread = 0
    for item in range(out.alignments.shape[0]):
        steps, length = int(out.steps[item]), int(batch["text_lengths"][item])
        peak = 0
        for s in range(steps):
            weights = out.alignments[item, s]
            outside = (positions < peak - behind) | (positions > peak + ahead) | (positions >= length)
            assert torch.all(weights[outside] == 0), (item, s, peak)
            torch.testing.assert_close(weights.sum(), torch.tensor(1.0))
            peak = int(weights.argmax())
        peak = 0
        for weights in free.alignments[item, : int(free.steps[item])]:
            outside = (positions < peak - behind) | (positions > peak + ahead) | (positions >= length)
            spread += int(weights[outside].sum() > 1e-3)
            peak = int(weights.argmax())
    assert spread > 0  # without the window the same model attends outside it: the check above could fail
    assert torch.isfinite(out.mel_postnet).all()
