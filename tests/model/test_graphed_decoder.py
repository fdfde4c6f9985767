"""The CUDA-graph path of the decoder against the plain decoder, on the CPU: the graphs are replaced by
a stand-in that reruns the recorded closure (``_EagerRecorder``), so what is tested here is everything
around them: bucket padding and cutting back, static inputs and outputs, gradients of the memory and
of every parameter, accumulation over passes, the fallbacks."""

import warnings

import pytest
import torch

from gst_tts.model.decoder import Decoder
from gst_tts.model.graphed_decoder import GraphedDecoder, _EagerRecorder


def _decoder(reduction_factor: int = 1) -> Decoder:
    torch.manual_seed(0)
    # No dropout: both paths must compute the same numbers in training mode.
    return Decoder(
        n_mels=6,
        reduction_factor=reduction_factor,
        memory_dim=12,
        prenet_dim=8,
        prenet_dropout=0.0,
        prenet_dropout_at_inference=False,
        attention_rnn_dim=16,
        decoder_rnn_dim=16,
        attention="location_sensitive",
        attention_location=True,
        attention_dim=8,
        location_filters=4,
        location_kernel_size=5,
        attention_dropout=0.0,
        decoder_dropout=0.0,
        decoder_dropout_recurrent=False,
    ).train()


def _inputs(symbols: int, frames: int, masked: bool, seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    memory = torch.randn(3, symbols, 12, generator=g).requires_grad_(True)
    mask = torch.arange(symbols)[None, :] >= torch.tensor([symbols, symbols - 2, 3])[:, None] if masked else None
    return memory, mask, torch.randn(3, frames, 6, generator=g)


def _loss(out) -> torch.Tensor:
    return (
        out.mel.square().mean()
        + out.stop_logits.sin().mean()
        + (out.alignments * torch.linspace(0, 1, out.alignments.shape[-1])).sum()
    )


@pytest.mark.parametrize(
    "reduction_factor,symbols,frames,masked", [(1, 7, 11, True), (2, 8, 12, False), (3, 5, 9, True)]
)
def test_graphed_pass_matches_the_plain_decoder(reduction_factor, symbols, frames, masked) -> None:
    decoder = _decoder(reduction_factor)
    graphed = GraphedDecoder(decoder, symbol_bucket=4, step_bucket=4, recorder=_EagerRecorder)
    results = []
    for run in (decoder, graphed):
        decoder.zero_grad(set_to_none=True)
        memory, mask, mel = _inputs(symbols, frames, masked)
        out = run(memory, mask, mel)
        _loss(out).backward()
        results.append((out, memory.grad, {n: p.grad for n, p in decoder.named_parameters()}))
    (plain, plain_memory_grad, plain_grads), (fast, fast_memory_grad, fast_grads) = results
    assert graphed.graphs == 1
    # Cut back to the batch's own lengths: the padding is invisible.
    assert fast.mel.shape == plain.mel.shape and fast.alignments.shape == plain.alignments.shape
    for a, b in zip(plain, fast):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(fast_memory_grad, plain_memory_grad, rtol=1e-4, atol=1e-6)
    for name, grad in plain_grads.items():
        assert grad is not None and grad.abs().sum() > 0, name
        torch.testing.assert_close(fast_grads[name], grad, rtol=1e-4, atol=1e-6, msg=name)


def test_one_graph_per_bucket_and_gradients_accumulate_over_passes() -> None:
    decoder = _decoder()
    graphed = GraphedDecoder(decoder, symbol_bucket=4, step_bucket=8, recorder=_EagerRecorder)
    shapes = [(7, 11), (8, 16), (5, 9), (6, 12)]  # buckets (8, 16), (8, 16), (8, 16), (8, 16)
    sums = []
    for run in (decoder, graphed):
        decoder.zero_grad(set_to_none=True)
        for seed, (symbols, frames) in enumerate(shapes):
            _loss(run(*_inputs(symbols, frames, masked=True, seed=seed))).backward()  # accumulates into .grad
        sums.append({n: p.grad.clone() for n, p in decoder.named_parameters()})
    assert graphed.graphs == 1
    for name, grad in sums[0].items():
        torch.testing.assert_close(sums[1][name], grad, rtol=1e-4, atol=1e-6, msg=name)
    _loss(graphed(*_inputs(13, 11, masked=True))).backward()
    assert graphed.graphs == 2


def test_a_second_pass_before_the_first_ones_backward_is_refused() -> None:
    graphed = GraphedDecoder(_decoder(), symbol_bucket=4, step_bucket=4, recorder=_EagerRecorder)
    first = graphed(*_inputs(7, 11, masked=True))
    graphed(*_inputs(7, 11, masked=True, seed=2))
    with pytest.raises(RuntimeError, match="ran again before the backward"):
        _loss(first).backward()


def test_plain_decoder_where_no_graph_applies() -> None:
    decoder = _decoder()
    graphed = GraphedDecoder(decoder, max_graphs=1)  # real CUDA graphs: never on a CPU tensor
    memory, mask, mel = _inputs(7, 11, masked=True)
    torch.testing.assert_close(graphed(memory, mask, mel).mel, decoder(memory, mask, mel).mel)
    assert graphed.graphs == 0
    stand_in = GraphedDecoder(decoder, max_graphs=1, recorder=_EagerRecorder)
    with torch.no_grad():
        stand_in(*_inputs(7, 11, masked=True))
    decoder.eval()
    stand_in(*_inputs(7, 11, masked=True))
    decoder.train()
    assert stand_in.graphs == 0  # neither without autograd nor in eval mode
    _loss(stand_in(*_inputs(7, 11, masked=True))).backward()
    _loss(stand_in(*_inputs(40, 11, masked=True))).backward()  # a second bucket is over max_graphs: plain
    assert stand_in.graphs == 1


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: real CUDA graphs")
@pytest.mark.parametrize("autocast", [False, True])
def test_real_cuda_graphs_match_the_plain_decoder_on_a_gpu(autocast) -> None:
    decoder = _decoder(reduction_factor=1).cuda()
    graphed = GraphedDecoder(decoder, symbol_bucket=8, step_bucket=8)
    results = []
    for run in (decoder, graphed, graphed):  # the graph's second pass is a replay of the first capture
        decoder.zero_grad(set_to_none=True)
        memory, mask, mel = (t.cuda() if t is not None else None for t in _inputs(7, 11, masked=True))
        memory = memory.detach().requires_grad_(True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            out = run(memory, mask, mel)
            loss = _loss(out)
        loss.backward()
        results.append((out, memory.grad, {n: p.grad for n, p in decoder.named_parameters()}))
    assert graphed.graphs == 1
    tolerance = dict(rtol=2e-2, atol=2e-2) if autocast else dict(rtol=1e-4, atol=1e-5)
    plain = results[0]
    for fast in results[1:]:
        for a, b in zip(plain[0], fast[0]):
            torch.testing.assert_close(b.float(), a.float(), **tolerance)
        torch.testing.assert_close(fast[1], plain[1], **tolerance)
        for name, grad in plain[2].items():
            torch.testing.assert_close(fast[2][name], grad, **tolerance, msg=name)


def test_a_failed_capture_falls_back_to_the_plain_decoder_with_one_warning() -> None:
    class Broken(_EagerRecorder):
        def record(self, fn):
            raise RuntimeError("operation not permitted when stream is capturing\nmore detail")

    decoder = _decoder()
    graphed = GraphedDecoder(decoder, symbol_bucket=4, step_bucket=4, recorder=Broken)
    memory, mask, mel = _inputs(7, 11, masked=True)
    with pytest.warns(RuntimeWarning, match="capture failed .*stream is capturing\\); .* without CUDA graphs"):
        out = graphed(memory, mask, mel)
    torch.testing.assert_close(out.mel, decoder(memory, mask, mel).mel)
    assert out.mel.shape == mel.shape and graphed.graphs == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no second warning: the graphs stay off
        _loss(graphed(*_inputs(7, 11, masked=True))).backward()
    assert graphed.graphs == 0
