"""A bounded queue of synthesis requests and the one worker thread that decodes them in batches.

Requests that arrive while the worker is busy (or within ``batch_window_s`` of each other) are
decoded together in one :meth:`Synthesizer.synthesize` call, each with its own style through the
per-text ``styles`` API: on 2 CPU cores a batch of 8 costs little more than one text. The queue
holds at most ``max_queue`` requests that have not started; :meth:`BatchingQueue.submit` then
raises :class:`QueueFull` rather than letting waiting work grow without limit.

The worker thread owns the synthesizer: it is the only code that calls it (and sets its vocoder),
so nothing else needs a lock around the model. Reference clips to encode (:class:`ReferenceJob`)
wait in the same queue, under the same bound, and are decoded and encoded by the same worker, one
at a time: however many uploads arrive, one decoded clip is in memory and one thread runs the model.
Streamed requests (:class:`StreamJob`) run alone on the worker too, handing on each audio chunk as
:meth:`Synthesizer.stream` yields it; while one streams, the others wait.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field
import logging
import math
import queue
import threading
import time
from typing import Any, Callable, Mapping, Union

import numpy as np

from gst_tts.audio.vocoders import Vocoder
from gst_tts.errors import GstTtsError
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.results import SynthesisResult
from gst_tts.inference.style_spec import ResolvedStyle
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.text.split import DEFAULT_MAX_CHARS

__all__ = ["SynthesisJob", "ReferenceJob", "StreamJob", "BatchingQueue", "QueueFull", "QueueClosed"]

log = logging.getLogger(__name__)


class QueueFull(GstTtsError):
    """The queue holds ``max_queue`` waiting requests; ``retry_after_s`` estimates when to try again."""

    def __init__(self, message: str, *, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class QueueClosed(GstTtsError):
    """The queue was closed (the server is shutting down) before the request ran."""


@dataclass
class SynthesisJob:
    """One request: a text and its ``(n_heads, n_tokens)`` token weights, already validated.

    A job with a ``seed`` is decoded on its own: the prenet's dropout masks depend on the batch,
    so only a lone decode gives the same audio for the same seed.
    """

    text: str
    #: Its token weights ``(n_heads, n_tokens)`` and what is done after the model: the F0 spread a
    #: vocoder that can set one gives the output, the tempo it is retimed to (None: the model's own).
    style: ResolvedStyle
    seed: int | None = None
    vocoder: str | None = None  # a key of the queue's vocoders; None: the default one
    future: Future = field(default_factory=Future, repr=False)


@dataclass
class ReferenceJob:
    """One reference clip to encode into its token weights, on the worker.

    ``load`` gives the clip as ``(samples (frames, channels) float32, sample rate in Hz)``; it runs
    on the worker too, so a clip is decoded only when its turn comes. ``future`` gets
    ``(weights (n_heads, n_tokens) float32 array, duration in seconds, F0 spread in semitones or
    None, letter rate or None)``, all from one :meth:`StyleResolver.read_reference` (the F0 spread
    read only when a vocoder of the queue can set one), or the error of ``load`` or of the model
    (an ``AudioError`` for a silent or too short clip).
    """

    load: Callable[[], tuple[np.ndarray, int]]
    future: Future = field(default_factory=Future, repr=False)


@dataclass
class StreamJob:
    """One streamed request (``stream=true``): a text and its token weights, already validated,
    spoken by :meth:`Synthesizer.stream` on the worker, alone (not batched).

    ``emit`` is called on the worker with each float32 audio chunk as it comes, then once more with
    ``None`` (the end) or the error that ended the stream (a ``GstTtsError`` for a text or style the
    synthesizer refuses, before any chunk). The worker stops between chunks once ``cancelled`` is
    set (the client went away). ``future`` gets the number of samples sent, or the error.
    """

    text: str
    style: ResolvedStyle  # its token weights; a stream keeps the model's tempo and F0 spread
    emit: Callable[[np.ndarray | BaseException | None], None]
    seed: int | None = None
    vocoder: str | None = None  # a key of the queue's vocoders; None: the default one
    cancelled: threading.Event = field(default_factory=threading.Event, repr=False)
    future: Future = field(default_factory=Future, repr=False)


Job = Union[SynthesisJob, ReferenceJob, StreamJob]


class BatchingQueue:
    """Collects :class:`SynthesisJob` s and decodes the ones that arrive together as one batch.

    Args:
        synthesizer: the model; from :meth:`start` on, only the worker thread calls it.
        vocoders: name → vocoder a request may pick (the first is the default). Default: the
            synthesizer's own vocoder as ``"griffin-lim"``.
        max_batch: requests decoded together, >= 1 (1 serves one at a time). Default 8.
        max_queue: requests waiting (not yet started) before :meth:`submit` refuses, >= 1. Default 32.
        batch_window_s: how long the worker waits for company after a request arrives at an idle
            queue, >= 0. Default 0.005 (clients that send together arrive within a few ms).
        decoding: stop threshold and length bounds. Default ``DecodingConfig()``.
        max_chunk_chars: longer texts are split (see ``Synthesizer.synthesize``). Default as there.
        chunk_batch_size: chunks decoded together inside one call (long texts have several). Default 16.

    Raises:
        GstTtsError: a bound out of range.
    """

    def __init__(
        self,
        synthesizer: Synthesizer,
        *,
        vocoders: Mapping[str, Vocoder] | None = None,
        max_batch: int = 8,
        max_queue: int = 32,
        batch_window_s: float = 0.005,
        decoding: DecodingConfig = DecodingConfig(),
        max_chunk_chars: int | None = DEFAULT_MAX_CHARS,
        chunk_batch_size: int = 16,
    ) -> None:
        for name, value in (("max_batch", max_batch), ("max_queue", max_queue), ("chunk_batch_size", chunk_batch_size)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise GstTtsError(f"{name} must be a whole number >= 1, got {value!r}")
        if not (isinstance(batch_window_s, (int, float)) and math.isfinite(batch_window_s) and batch_window_s >= 0):
            raise GstTtsError(f"batch_window_s must be a finite number >= 0, got {batch_window_s!r}")
        self.synthesizer = synthesizer
        self.vocoders: dict[str, Vocoder] = dict(vocoders) if vocoders else {"griffin-lim": synthesizer.vocoder}
        if not self.vocoders:
            raise GstTtsError("vocoders must name at least one vocoder")
        self.default_vocoder = next(iter(self.vocoders))
        self.max_batch = max_batch
        self.max_queue = max_queue
        self.batch_window_s = float(batch_window_s)
        self.decoding = decoding
        self.max_chunk_chars = max_chunk_chars
        self.chunk_batch_size = chunk_batch_size
        self._queue: queue.Queue[Job] = queue.Queue(maxsize=max_queue)
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # guards the counters below
        self._batch_seconds = 0.5  # running estimate of one batch's time, for Retry-After
        self.batches = 0  # synthesize calls made
        self.requests = 0  # requests answered (result or error)
        self.largest_batch = 0
        self.references = 0  # reference clips encoded (or refused)
        self.streams = 0  # streamed syntheses run (or refused)
        self.busy_s = 0.0  # time spent synthesizing and encoding references

    # ------------------------------------------------------------------ life cycle

    def start(self) -> "BatchingQueue":
        """Start the worker (again, after :meth:`close`: an app's lifespan may run more than once)."""
        if self._thread is None:
            self._closed.clear()
            self._thread = threading.Thread(target=self._work, name="gst-tts-synthesis", daemon=True)
            self._thread.start()
        return self

    def close(self, *, timeout_s: float = 30.0) -> None:
        """Stop taking requests, let the running batch finish, fail the waiting ones with QueueClosed."""
        self._closed.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None
        while True:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                break
            if job.future.set_running_or_notify_cancel():
                job.future.set_exception(QueueClosed("the server is shutting down"))
                if isinstance(job, StreamJob):
                    job.emit(QueueClosed("the server is shutting down"))

    def __enter__(self) -> "BatchingQueue":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ submitting

    @property
    def pending(self) -> int:
        """Requests waiting to start."""
        return self._queue.qsize()

    def retry_after_s(self) -> int:
        """Seconds until the waiting requests are likely done: the queue's batches times the recent batch time."""
        with self._lock:
            per_batch = self._batch_seconds
        return max(1, math.ceil(per_batch * (self.pending / self.max_batch + 1)))

    def submit(self, job: Job) -> Future:
        """Queue ``job``; its future gets the :class:`SynthesisResult` (a reference's weights) or the error.

        Raises:
            QueueFull: ``max_queue`` requests are already waiting.
            QueueClosed: after :meth:`close`.
            GstTtsError: an unknown vocoder name.
        """
        if self._closed.is_set():
            raise QueueClosed("the server is shutting down")
        if isinstance(job, (SynthesisJob, StreamJob)) and job.vocoder is not None and job.vocoder not in self.vocoders:
            raise GstTtsError(f"vocoder {job.vocoder!r} is not one of {', '.join(self.vocoders)}")
        try:
            self._queue.put_nowait(job)
        except queue.Full:
            raise QueueFull(
                f"the synthesis queue is full ({self.max_queue} requests waiting)", retry_after_s=self.retry_after_s()
            ) from None
        return job.future

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "pending": self.pending,
                "max_queue": self.max_queue,
                "max_batch": self.max_batch,
                "batches": self.batches,
                "requests": self.requests,
                "largest_batch": self.largest_batch,
                "references": self.references,
                "streams": self.streams,
                "busy_s": round(self.busy_s, 3),
            }

    # ------------------------------------------------------------------ the worker

    def _take_batch(self) -> list[Job]:
        """Wait for one job, then take whatever else is waiting (up to ``max_batch``), giving
        latecomers ``batch_window_s`` to arrive."""
        while not self._closed.is_set():
            try:
                first = self._queue.get(timeout=0.1)
                break
            except queue.Empty:
                continue
        else:
            return []
        jobs = [first]
        deadline = time.monotonic() + self.batch_window_s
        while len(jobs) < self.max_batch:
            left = deadline - time.monotonic()
            try:
                jobs.append(self._queue.get(timeout=left) if left > 0 else self._queue.get_nowait())
            except queue.Empty:
                break
        # A job whose caller gave up (timed out) before it started is dropped here.
        return [j for j in jobs if j.future.set_running_or_notify_cancel()]

    def _work(self) -> None:
        while not self._closed.is_set():
            jobs = self._take_batch()
            groups: dict[Any, list[SynthesisJob]] = {}
            for job in jobs:
                if isinstance(job, ReferenceJob):
                    self._encode(job)
                    continue
                if isinstance(job, StreamJob):
                    self._stream(job)
                    continue
                name = job.vocoder or self.default_vocoder
                key = (name, None) if job.seed is None else (name, id(job))  # seeded: alone
                groups.setdefault(key, []).append(job)
            for (name, _), group in groups.items():
                self._run(group, name)

    def _run(self, jobs: list[SynthesisJob], vocoder: str) -> None:
        synth = self.synthesizer
        started = time.monotonic()
        try:
            synth.vocoder = self.vocoders[vocoder]
            results = synth.synthesize(
                [j.text for j in jobs],
                styles=[j.style for j in jobs],
                seed=jobs[0].seed,
                batch_size=self.chunk_batch_size,
                decoding=self.decoding,
                max_chunk_chars=self.max_chunk_chars,
            )
        except GstTtsError as exc:
            if len(jobs) > 1:
                # One bad request must not fail its batch neighbours: each runs alone to find it.
                for job in jobs:
                    self._run([job], vocoder)
                return
            self._finish(jobs, exc, started)
        except Exception as exc:  # a bug: the callers get it (an internal error) and the worker lives on
            log.exception("synthesis of a batch of %d failed", len(jobs))
            self._finish(jobs, exc, started)
        else:
            self._finish(jobs, results, started)

    def _stream(self, job: StreamJob) -> None:
        started = time.monotonic()
        sent = 0
        outcome: int | BaseException
        try:
            self.synthesizer.vocoder = self.vocoders[job.vocoder or self.default_vocoder]
            chunks = self.synthesizer.stream(
                job.text,
                style=job.style,
                seed=job.seed,
                decoding=self.decoding,
                max_chunk_chars=self.max_chunk_chars,
            )
            for chunk in chunks:
                if job.cancelled.is_set():
                    chunks.close()
                    break
                job.emit(chunk)
                sent += chunk.size
            outcome = sent
        except GstTtsError as exc:
            outcome = exc
        except Exception as exc:  # a bug: the caller gets it and the worker lives on
            log.exception("streamed synthesis failed")
            outcome = exc
        with self._lock:
            self.streams += 1
            self.busy_s += time.monotonic() - started
        job.emit(outcome if isinstance(outcome, BaseException) else None)
        if isinstance(outcome, BaseException):
            job.future.set_exception(outcome)
        else:
            job.future.set_result(outcome)

    def _encode(self, job: ReferenceJob) -> None:
        started = time.monotonic()
        outcome: tuple[np.ndarray, float, float | None, float | None] | BaseException
        try:
            samples, rate = job.load()
            reading = self.synthesizer.styles.read_reference(
                (samples, rate),
                f0_range=any(getattr(v, "sets_f0_range", False) for v in self.vocoders.values()),
                tempo=True,
            )
            outcome = (reading.weights.numpy(), len(samples) / rate, reading.f0_range_st, reading.letters_per_s)
        except GstTtsError as exc:
            outcome = exc
        except Exception as exc:  # a bug (or a loader's own error type): the caller gets it, the worker lives on
            log.exception("encoding a reference failed")
            outcome = exc
        with self._lock:  # counted before the caller hears, so its next look at stats() sees it
            self.references += 1
            self.busy_s += time.monotonic() - started
        if isinstance(outcome, BaseException):
            job.future.set_exception(outcome)
        else:
            job.future.set_result(outcome)

    def _finish(self, jobs: list[SynthesisJob], outcome: list[SynthesisResult] | BaseException, started: float) -> None:
        elapsed = time.monotonic() - started
        with self._lock:
            self.batches += 1
            self.requests += len(jobs)
            self.largest_batch = max(self.largest_batch, len(jobs))
            self.busy_s += elapsed
            self._batch_seconds = 0.8 * self._batch_seconds + 0.2 * elapsed
        for k, job in enumerate(jobs):
            if isinstance(outcome, BaseException):
                job.future.set_exception(outcome)
            else:
                job.future.set_result(outcome[k])
