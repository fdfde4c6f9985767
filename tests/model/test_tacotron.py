from conftest import tiny_model
import pytest
import torch

from gst_tts.audio.features import AudioConfig
from gst_tts.data.batching import Collate
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.model import GSTTacotron


def bounds(max_frames: int | None = None, **overrides) -> dict:
    """The model's required decoding keywords: the defaults at 22,050 Hz and hop 256, with
    ``overrides`` (``DecodingConfig`` fields) and the absolute bound ``max_frames`` when given."""
    arguments = DecodingConfig(**overrides).model_arguments(frames_per_second=AudioConfig().frames_per_second)
    return arguments if max_frames is None else {**arguments, "max_frames": max_frames}


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


def test_reference_time_strides_default_to_the_papers_and_are_configurable():
    def conv(model, i):
        return model.gst.reference_encoder.blocks[i][0]

    default = tiny_model(20, n_mels=10)
    assert all(conv(default, i).stride == (2, 2) for i in range(len(default.gst.reference_encoder.blocks)))
    strided = tiny_model(20, n_mels=10, gst_reference_time_strides=[2, 2, 1, 1, 1, 1])
    assert [conv(strided, i).stride for i in range(6)] == [(2, 2)] * 2 + [(1, 2)] * 4
    text, tl, mel, ml = _batch(strided)
    assert strided(text, tl, mel, ml).mel.shape == mel.shape
    with pytest.raises(ValueError, match="time_strides"):
        tiny_model(20, n_mels=10, gst_reference_time_strides=[2, 2])


def test_an_early_stop_token_waits_until_the_attention_reaches_the_end():
    torch.manual_seed(0)
    model = tiny_model(20, n_mels=10).eval()
    model.decoder.stop_projection.bias.data.fill_(50.0)  # the token fires at every step
    text, lengths = torch.randint(2, 20, (2, 30)), torch.tensor([30, 17])
    anywhere = model.infer(text, lengths, **bounds(max_frames_per_symbol=6.0, stop_end_tolerance=None))
    assert anywhere.steps.tolist() == [1, 1] and bool(anywhere.stopped_on_token.all())
    for tolerance in (0, 3):
        gated = model.infer(text, lengths, **bounds(max_frames_per_symbol=6.0, stop_end_tolerance=tolerance))
        for i, n in enumerate(lengths.tolist()):
            steps = int(gated.steps[i])
            peaks = gated.alignments[i, :steps, :n].argmax(-1)
            if gated.stopped_on_token[i]:  # it stopped at the first step whose peak came near the end
                assert int(peaks[-1]) >= n - 1 - tolerance and bool((peaks[:-1] < n - 1 - tolerance).all())
            else:  # never near the end: it ran to its bound
                assert bool((peaks < n - 1 - tolerance).all()) and steps == -(-n * 6 // model.reduction_factor)
        assert bool((gated.steps > 1).any())  # this random model's attention stays mid-text: held back


def test_inference_ends_at_the_bound_when_the_stop_token_never_fires():
    torch.manual_seed(0)
    model = tiny_model(20, n_mels=10, reduction_factor=2).eval()
    with torch.no_grad():
        model.decoder.stop_projection.bias.fill_(-50.0)  # never stop
    text = torch.randint(2, 20, (2, 6))
    out = model.infer(text, torch.tensor([6, 3]), **bounds(max_frames_per_symbol=4.0, max_frames=200))
    assert not out.stopped_on_token.any()
    assert out.steps.tolist() == [12, 6]  # ceil(4 * symbols / r)
    assert out.mel_lengths.tolist() == [24, 12]
    capped = model.infer(text, torch.tensor([6, 3]), **bounds(max_frames_per_symbol=4.0, max_frames=10))
    assert capped.steps.tolist() == [5, 5]


def test_inference_stops_on_the_token():
    model = tiny_model(20, n_mels=10).eval()
    with torch.no_grad():
        model.decoder.stop_projection.bias.fill_(50.0)  # stop at once
    out = model.infer(torch.randint(2, 20, (2, 6)), torch.tensor([6, 6]), **bounds())
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
    out = model.infer(text, torch.tensor([5]), style_weights=one_hot, **bounds(max_frames=6))
    assert out.mel_postnet.shape[0] == 1


def test_prenet_dropout_stays_on_at_inference_unless_disabled():
    torch.manual_seed(0)
    text, tl = torch.randint(2, 20, (1, 6)), torch.tensor([6])
    model = tiny_model(20, n_mels=10).eval()
    a = model.infer(text, tl, **bounds(max_frames=8)).mel_postnet
    b = model.infer(text, tl, **bounds(max_frames=8)).mel_postnet
    assert not torch.allclose(a, b)
    model = tiny_model(20, n_mels=10, prenet_dropout_at_inference=False).eval()
    a = model.infer(text, tl, **bounds(max_frames=8)).mel_postnet
    b = model.infer(text, tl, **bounds(max_frames=8)).mel_postnet
    assert torch.allclose(a, b)


def _force_stops(model: GSTTacotron, stop_steps: list[int]):
    """Make row ``i`` of the next ``infer`` call stop on its token at step ``stop_steps[i]``.

    A random model never stops, so every item would end at the same bound; this gives items of
    different lengths. Returns the hook handle (remove it after the call).
    """
    counter = {"step": 0}
    stop_at = torch.tensor(stop_steps)

    def hook(module, inputs, output):
        counter["step"] += 1
        return torch.where(counter["step"] >= stop_at, 50.0, -50.0).to(output)[:, None]

    return model.decoder.stop_projection.register_forward_hook(hook)


@pytest.mark.parametrize("r", [1, 3])
def test_batched_inference_equals_one_by_one_when_items_stop_at_different_steps(r):
    torch.manual_seed(0)
    model = tiny_model(20, n_mels=10, reduction_factor=r, prenet_dropout_at_inference=False).eval()
    text_lengths = torch.tensor([8, 6, 7])
    text = torch.randint(2, 20, (3, 8)) * (torch.arange(8) < text_lengths[:, None])  # pad id 0
    stop_steps = [3, 9, 6]
    handle = _force_stops(model, stop_steps)
    try:
        batched = model.infer(text, text_lengths, **bounds())
    finally:
        handle.remove()
    singles = []
    for i, n in enumerate(stop_steps):
        handle = _force_stops(model, [n])
        try:
            singles.append(model.infer(text[i : i + 1, : text_lengths[i]], text_lengths[i : i + 1], **bounds()))
        finally:
            handle.remove()
    assert batched.stopped_on_token.all()
    assert batched.steps.tolist() == stop_steps
    assert batched.mel_lengths.tolist() == [n * r for n in stop_steps]
    for i, single in enumerate(singles):
        n = int(batched.mel_lengths[i])
        assert int(single.mel_lengths[0]) == n
        torch.testing.assert_close(batched.mel_postnet[i, :n], single.mel_postnet[0, :n], atol=1e-4, rtol=0)
        assert torch.all(batched.mel_postnet[i, n:] == 0)  # nothing past the item's end


def test_teacher_forced_postnet_does_not_see_padding():
    torch.manual_seed(0)
    r = 2
    # eval and no prenet dropout: the same numbers twice; BatchNorm uses its running statistics.
    model = tiny_model(20, n_mels=10, reduction_factor=r, prenet_dropout_at_inference=False).eval()
    text_lengths = torch.tensor([9, 6])
    text = torch.randint(2, 20, (2, 9)) * (torch.arange(9) < text_lengths[:, None])  # pad id 0
    mel = torch.randn(2, 16, model.n_mels)
    mel_lengths = torch.tensor([16, 6])
    reference = torch.randn(1, 12, model.n_mels).expand(2, -1, -1)  # one style for both
    with torch.no_grad():
        batched = model(text, text_lengths, mel, mel_lengths, reference)
        single = model(text[1:, :6], text_lengths[1:], mel[1:, :6], mel_lengths[1:], reference[1:])
    torch.testing.assert_close(batched.mel_postnet[1, :6], single.mel_postnet[0], atol=1e-5, rtol=0)
    assert torch.all(batched.mel_postnet[1, 6:] == 0) and torch.all(batched.mel[1, 6:] == 0)


def test_inference_emits_whole_trained_steps_only():
    """An item that stops where its stop label is emits exactly the frames its target trained."""
    r = 3
    items = [
        {"id": f"u{i}", "text": torch.arange(2, 2 + n_text), "mel": torch.randn(n_frames, 10), "style": None}
        for i, (n_text, n_frames) in enumerate([(8, 7), (5, 5), (7, 9)])
    ]
    batch = Collate(r)(items)
    # The target of the step holding the stop label is all real frames: a multiple of r.
    assert batch["mel_lengths"].tolist() == [6, 3, 9]
    label_steps = (batch["stop_targets"].argmax(1) + 1).tolist()  # steps up to the first stop label
    torch.manual_seed(0)
    model = tiny_model(20, n_mels=10, reduction_factor=r).eval()
    handle = _force_stops(model, label_steps)
    try:
        out = model.infer(batch["text"], batch["text_lengths"], **bounds())
    finally:
        handle.remove()
    assert out.mel_lengths.tolist() == batch["mel_lengths"].tolist()
    assert torch.equal(out.mel_lengths, out.steps * r)
    for i, n in enumerate(out.mel_lengths.tolist()):
        assert torch.all(out.mel_postnet[i, n:] == 0)


def test_building_blocks_take_keyword_arguments_only():
    from gst_tts.model import Decoder, Encoder, GlobalStyleTokens, Postnet
    from gst_tts.model.attention.location_sensitive import LocationSensitiveAttention

    for build in (
        lambda: Decoder(80, 2),
        lambda: GSTTacotron(40),
        lambda: Encoder(40),
        lambda: Postnet(80),
        lambda: GlobalStyleTokens(80),
        lambda: LocationSensitiveAttention(16, 8),
    ):
        with pytest.raises(TypeError, match="positional"):
            build()
    decoder = Decoder(
        n_mels=10,
        reduction_factor=2,
        memory_dim=8,
        prenet_dim=4,
        prenet_dropout=0.5,
        prenet_dropout_at_inference=True,
        attention_rnn_dim=6,
        decoder_rnn_dim=6,
        attention="location_sensitive",
        attention_location=False,
        attention_dim=5,
        location_filters=3,
        location_kernel_size=3,
        attention_dropout=0.1,
        decoder_dropout=0.1,
        decoder_dropout_recurrent=False,
    )
    assert decoder.mel_projection.out_features == 20 and decoder.attention_rnn.input_size == 4 + 8


def test_state_dict_names_that_checkpoints_hold():
    keys = set(tiny_model(20).state_dict())
    assert {
        "encoder.embedding.weight",
        "encoder.convs.0.0.weight",
        "encoder.lstm.weight_ih_l0",
        "gst.reference_encoder.blocks.0.0.weight",
        "gst.reference_encoder.gru.weight_ih_l0",
        "gst.token_layer.style_tokens",
        "decoder.prenet.layers.0.weight",
        "decoder.attention_rnn.weight_ih",
        "decoder.attention.location_conv.weight",
        "decoder.attention.memory_layer.weight",
        "decoder.decoder_rnn.weight_hh",
        "decoder.mel_projection.weight",
        "decoder.stop_projection.bias",
        "postnet.layers.0.0.weight",
    } <= keys


def test_style_prosody_read_out_is_linear_in_the_style_and_trains_the_reference_encoder():
    torch.manual_seed(0)
    model = tiny_model(20, n_mels=8, style_prosody_dim=3)
    text, mel = torch.randint(1, 20, (2, 5)), torch.randn(2, 6, 8)
    lengths = torch.tensor([5, 5]), torch.tensor([6, 6])
    out = model(text, lengths[0], mel, lengths[1])
    assert out.style_prosody.shape == (2, 3)
    out.style_prosody.sum().backward()
    assert model.gst.reference_encoder.gru.weight_ih_l0.grad.abs().sum() > 0
    assert tiny_model(20, n_mels=8)(text, lengths[0], mel, lengths[1]).style_prosody is None
    with pytest.raises(ValueError, match="style_prosody_dim must be >= 0"):
        tiny_model(20, n_mels=8, style_prosody_dim=-1)
