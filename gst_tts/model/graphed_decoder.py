"""The teacher-forced decoder pass as CUDA graphs: the fast path of :meth:`Decoder.forward` in
training on a GPU.

The decoder runs one step per mel frame (r = 1), each a few dozen small kernels, so on a GPU its
pass is bound by kernel launches: the card idles while the host launches (an H200 was busy 15-17 %
of a step: docs/results/2026-11-27-gpu-training-baseline.md). A CUDA graph records the whole pass's
kernels once, forward and backward, and then launches them with one call. A graph holds fixed
shapes, so each batch is padded up to a *bucket* (symbols to a multiple of ``symbol_bucket``,
decoder steps to a multiple of ``step_bucket``) and one graph is captured per bucket, on first
sight. Padding changes nothing the caller sees: padded symbols are masked out of the attention,
padded steps come after the real ones (the recurrence is causal), and the outputs are cut back to
the batch's own lengths.

:class:`GraphedDecoder` wraps a :class:`~gst_tts.model.decoder.Decoder` and is called like it. It
runs the plain decoder wherever a graph does not apply (on the CPU, without autograd, in eval
mode), so a model can hold one always; a capture that fails turns the graphs off with one warning
(the plain decoder computes the same). The graphs read the decoder's parameters in place, so
optimizer updates are seen; they must not be replaced (``load_state_dict`` copies into them, which
is fine). Every graph shares one memory pool: replays run one at a time, each pass's backward
before the next pass.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
import math
from typing import Callable
import warnings

import torch
from torch.nn import functional as F

from gst_tts.model.decoder import Decoder, DecoderOutput

__all__ = ["GraphedDecoder"]


class _Recorder:
    """Records a closure once and replays it (one CUDA graph); :class:`_EagerRecorder` is its CPU stand-in."""

    def __init__(self, stream: "torch.cuda.Stream", pool: object) -> None:
        self.graph = torch.cuda.CUDAGraph()
        self.stream, self.pool = stream, pool

    def record(self, fn: Callable[[], tuple[torch.Tensor | None, ...]]) -> tuple[torch.Tensor | None, ...]:
        with torch.cuda.graph(self.graph, stream=self.stream, pool=self.pool):
            return fn()

    def replay(self) -> None:
        self.graph.replay()


class _EagerRecorder:
    """Runs the closure again at each replay and writes its results into the first run's tensors:
    what a graph replay does, without CUDA. Tests use it to check the plumbing around the graphs on
    the CPU."""

    def __init__(self, stream: object = None, pool: object = None) -> None:
        self.fn: Callable[[], tuple[torch.Tensor | None, ...]] | None = None
        self.results: tuple[torch.Tensor | None, ...] = ()

    def record(self, fn: Callable[[], tuple[torch.Tensor | None, ...]]) -> tuple[torch.Tensor | None, ...]:
        self.fn = fn
        self.results = fn()
        return self.results

    def replay(self) -> None:
        # A graph replay recomputes what the backward reads; here that is a fresh autograd graph.
        with torch.enable_grad():
            fresh = self.fn()
        with torch.no_grad():
            for static, value in zip(self.results, fresh):
                if static is not None:
                    static.copy_(value)


@dataclass
class _Pass:
    """One bucket's captured forward and backward, and the fixed tensors they read and write."""

    forward: _Recorder | _EagerRecorder
    backward: _Recorder | _EagerRecorder
    inputs: tuple[torch.Tensor, torch.Tensor, torch.Tensor]  # memory (needs grad), padding mask, mel
    params: tuple[torch.nn.Parameter, ...]  # the decoder's parameters that need a gradient
    outputs: list[torch.Tensor] = field(default_factory=list)  # the latest forward's (mel, stop logits, alignments)
    grad_outputs: tuple[torch.Tensor, ...] = ()  # gradients of the outputs, written before a backward replay
    grad_inputs: tuple[torch.Tensor | None, ...] = ()  # gradient of memory, then of each parameter
    generation: int = 0  # forwards replayed so far: a backward must belong to the latest


class _Replay(torch.autograd.Function):
    """A bucket's pass as one autograd node: forward and backward are graph replays."""

    @staticmethod
    def forward(ctx, graphed: _Pass, memory, padding_mask, mel, *params):  # noqa: ANN001, ANN205
        with torch.no_grad():
            for static, given in zip(graphed.inputs, (memory, padding_mask, mel)):
                static.copy_(given)
        graphed.forward.replay()
        graphed.generation += 1
        ctx.graphed, ctx.generation = graphed, graphed.generation
        # Copies: the static outputs are overwritten by the next replay, and a caller may keep these.
        return tuple(o.detach().clone() for o in graphed.outputs)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads):  # noqa: ANN001, ANN205
        graphed: _Pass = ctx.graphed
        if ctx.generation != graphed.generation:
            raise RuntimeError(
                "a CUDA-graphed decoder pass ran again before the backward of an earlier pass of the "
                "same shape; run each pass's backward before the next pass (or turn the graphs off)"
            )
        with torch.no_grad():
            for static, grad in zip(graphed.grad_outputs, grads):
                static.copy_(grad) if grad is not None else static.zero_()
        graphed.backward.replay()
        memory_grad, *param_grads = graphed.grad_inputs
        # Clones, for the same reason as the outputs' (and gradient accumulation adds into them).
        return (
            None,
            None if memory_grad is None else memory_grad.clone(),
            None,
            None,
            *(None if g is None else g.clone() for g in param_grads),
        )


class GraphedDecoder:
    """Calls ``decoder`` (teacher forcing) through CUDA graphs captured per padded shape.

    Args:
        decoder: the decoder to run; its parameters are read in place.
        symbol_bucket: symbols are padded up to a multiple of this.
        step_bucket: decoder steps are padded up to a multiple of this (frames: ``step_bucket * r``).
        warmup: plain passes before a capture (lazy initialisation must not land in a graph).
        max_graphs: at most this many buckets get a graph; other shapes run the plain decoder.
        recorder: the graph recorder class; ``None`` = CUDA graphs (tests pass a CPU stand-in).

    Shapes as :meth:`Decoder.forward`: ``memory (batch, symbols, memory_dim)``, ``padding_mask
    (batch, symbols)`` (True at padding) or None, ``mel (batch, frames, n_mels)``.
    """

    def __init__(
        self,
        decoder: Decoder,
        *,
        symbol_bucket: int = 32,
        step_bucket: int = 64,
        warmup: int = 1,
        max_graphs: int = 32,
        recorder: type | None = None,
    ) -> None:
        if symbol_bucket < 1 or step_bucket < 1 or warmup < 0 or max_graphs < 0:
            raise ValueError("symbol_bucket and step_bucket must be >= 1, warmup and max_graphs >= 0")
        self.decoder = decoder
        self.symbol_bucket, self.step_bucket = symbol_bucket, step_bucket
        self.warmup, self.max_graphs = warmup, max_graphs
        self._recorder = recorder
        self._passes: dict[tuple, _Pass] = {}
        self._pool: object = None
        self._stream: object = None

    @property
    def graphs(self) -> int:
        """Buckets captured so far."""
        return len(self._passes)

    def clear(self) -> None:
        """Drops every graph and its memory (call ``torch.cuda.empty_cache()`` after to return it)."""
        self._passes.clear()
        self._pool = self._stream = None

    def applies(self, memory: torch.Tensor) -> bool:
        """Whether a pass over ``memory`` runs through a graph: a training pass that builds a graph,
        on CUDA (or with a CPU stand-in recorder)."""
        on_device = memory.is_cuda or self._recorder is not None
        return on_device and self.decoder.training and torch.is_grad_enabled() and memory.requires_grad

    def __call__(self, memory: torch.Tensor, padding_mask: torch.Tensor | None, mel: torch.Tensor) -> DecoderOutput:
        if not self.applies(memory):
            return self.decoder(memory, padding_mask, mel)
        batch, symbols, _ = memory.shape
        frames = mel.shape[1]
        r = self.decoder.reduction_factor
        steps = frames // r
        padded_symbols = _round_up(symbols, self.symbol_bucket)
        padded_frames = _round_up(steps, self.step_bucket) * r
        key = (
            batch,
            padded_symbols,
            memory.shape[2],
            padded_frames,
            mel.shape[2],
            memory.dtype,
            memory.device,
            _numerics_key(memory.device),
        )
        graphed = self._passes.get(key)
        if graphed is None and len(self._passes) >= self.max_graphs:
            return self.decoder(memory, padding_mask, mel)
        if padding_mask is None:
            padding_mask = torch.zeros(batch, symbols, dtype=torch.bool, device=memory.device)
        memory = F.pad(memory, (0, 0, 0, padded_symbols - symbols))
        padding_mask = F.pad(padding_mask, (0, padded_symbols - symbols), value=True)
        mel = F.pad(mel, (0, 0, 0, padded_frames - frames))
        if graphed is None:
            try:
                graphed = self._capture(memory, padding_mask, mel)
            except Exception as exc:  # noqa: BLE001 (any failure: the plain decoder computes the same)
                self.max_graphs = 0
                self.clear()
                warnings.warn(
                    f"CUDA graph capture failed ({type(exc).__name__}: "
                    f"{str(exc).splitlines()[0] if str(exc) else ''}); "
                    "the decoder's training pass runs without CUDA graphs from now on",
                    RuntimeWarning,
                    stacklevel=2,
                )
                return self.decoder(memory[:, :symbols], padding_mask[:, :symbols], mel[:, :frames])
            self._passes[key] = graphed
        out_mel, stop_logits, alignments = _Replay.apply(graphed, memory, padding_mask, mel, *graphed.params)
        return DecoderOutput(out_mel[:, :frames], stop_logits[:, :steps], alignments[:, :steps, :symbols])

    def _capture(self, memory: torch.Tensor, padding_mask: torch.Tensor, mel: torch.Tensor) -> _Pass:
        recorder = self._recorder or _Recorder
        if self._recorder is None and self._pool is None:
            self._pool, self._stream = torch.cuda.graph_pool_handle(), torch.cuda.Stream()
        params = tuple(p for p in self.decoder.parameters() if p.requires_grad)
        static_memory = memory.detach().clone().requires_grad_(True)
        inputs = (static_memory, padding_mask.clone(), mel.detach().clone())
        graphed = _Pass(recorder(self._stream, self._pool), recorder(self._stream, self._pool), inputs, params)
        # Autocast's cache of cast weights must stay off in a graph (the weights change every update):
        # the casts are recorded with the rest and redone by each replay.
        kind = memory.device.type
        dtype, enabled = torch.get_autocast_dtype(kind), torch.is_autocast_enabled(kind)

        def forward() -> tuple[torch.Tensor, ...]:
            with torch.autocast(kind, dtype=dtype, enabled=enabled, cache_enabled=False):
                decoded = self.decoder(*graphed.inputs)
            graphed.outputs = [decoded.mel, decoded.stop_logits, decoded.alignments]
            return tuple(graphed.outputs)

        def backward() -> tuple[torch.Tensor | None, ...]:
            differentiable = [(o, g) for o, g in zip(graphed.outputs, graphed.grad_outputs) if o.requires_grad]
            return torch.autograd.grad(
                [o for o, _ in differentiable],
                (static_memory, *params),
                [g for _, g in differentiable],
                allow_unused=True,
            )

        # Warm-up passes on the capture's side stream, as torch.cuda.make_graphed_callables does, so
        # that one-time work (cuBLAS handles, autotuning) happens before the capture, not in it.
        on_cuda = self._recorder is None
        main_stream = torch.cuda.current_stream() if on_cuda else None
        if on_cuda:
            self._stream.wait_stream(main_stream)
        with torch.cuda.stream(self._stream) if on_cuda else contextlib.nullcontext():
            for _ in range(self.warmup):
                forward()
                graphed.grad_outputs = tuple(torch.zeros_like(o) for o in graphed.outputs)
                backward()
        if on_cuda:
            main_stream.wait_stream(self._stream)
            graphed.outputs = []
            torch.cuda.empty_cache()  # the warm-up's memory, which the graph's own pool cannot reuse
        graphed.forward.record(forward)
        graphed.grad_outputs = tuple(torch.zeros_like(o) for o in graphed.outputs)
        graphed.grad_inputs = graphed.backward.record(backward)
        return graphed


def _round_up(n: int, multiple: int) -> int:
    return math.ceil(n / multiple) * multiple


def _numerics_key(device: torch.device) -> tuple:
    """What a captured graph fixes beside the shapes: the autocast setting and the TF32 switches."""
    kind = device.type
    return (
        torch.is_autocast_enabled(kind),
        torch.get_autocast_dtype(kind),
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
    )
