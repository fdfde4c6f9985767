"""The work behind the endpoints: text and style checks, the queue's worker, and the stores.

:class:`Service` validates a request (422 naming the problem), resolves its style to token weights,
hands the synthesis (or a reference clip's decoding and encoding) to the queue's one worker, and
keeps references and recent syntheses in memory, the oldest dropped first. Only the worker calls
the model: reference clips are decoded and encoded there too (:class:`ReferenceJob`), one at a time.
"""

import asyncio
from concurrent.futures import Future
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
import functools
import io
import json
import logging
import secrets
import threading
from typing import Any, AsyncIterator, Mapping, Sequence

import numpy as np
import soundfile as sf
from starlette.concurrency import run_in_threadpool

from gst_tts.audio.io import streaming_wav_header, wav_bytes, wav_pcm16
from gst_tts.errors import AudioError, GstTtsError, TextError, first_line
from gst_tts.inference.dial_names import NamedDial
from gst_tts.inference.results import SynthesisResult
from gst_tts.inference.style_spec import (
    MAX_F0_RANGE_ST,
    MAX_STYLE_STRENGTH,
    ReferenceReading,
    ResolvedStyle,
    Style,
    check_f0_range,
)
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.inference.vocoder_choice import KIND_NAMES
from gst_tts.serve.batching import BatchingQueue, QueueClosed, QueueFull, ReferenceJob, StreamJob, SynthesisJob
from gst_tts.serve.errors import ApiError, quote
from gst_tts.serve.limits import MAX_UPLOAD_CHANNELS, MAX_UPLOAD_RATE, ServeLimits
from gst_tts.serve.models import DECODED, REFERENCE

log = logging.getLogger(__name__)

# How the JSON summary names an F0 range given in semitones (as the CLI's JSON does), and the model's own.
_GIVEN = "given"
DECODED_SOURCE = {"source": DECODED}


class _Recent:
    """A thread-safe map that keeps the ``capacity`` most recently added entries."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: "OrderedDict[str, Any]" = OrderedDict()
        self._lock = threading.Lock()

    def add(self, value: Any) -> str:
        key = secrets.token_hex(8)
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return key

    def get(self, key: str) -> Any | None:
        with self._lock:
            return self._items.get(key)

    def values(self) -> list[tuple[str, Any]]:
        with self._lock:
            return list(self._items.items())


@dataclass
class _Reference:
    name: str
    duration_s: float
    weights: np.ndarray  # (n_heads, n_tokens)
    f0_range_st: float | None = None  # its F0 spread (YIN), which a spectral vocoder gives its outputs
    letters_per_s: float | None = None  # its estimated letter rate, which one-shot outputs are retimed to

    def to_dict(self, ref_id: str) -> dict[str, Any]:
        return {
            "id": ref_id,
            "name": self.name,
            "duration_s": round(self.duration_s, 3),
            "weights": np.round(self.weights.astype(float), 6).tolist(),
        }


@dataclass
class _Synthesis:
    result: SynthesisResult
    wav: bytes
    seed: int | None
    vocoder: str
    #: Which tempo and F0 range the output has, as the CLI's JSON says it (``{"source": "decoded"}`` …).
    tempo: dict[str, Any] = field(default_factory=lambda: dict(DECODED_SOURCE))
    f0_range: dict[str, Any] = field(default_factory=lambda: dict(DECODED_SOURCE))
    png: bytes | None = None


class Service:
    """Validation, style resolution and stores behind the endpoints (no web framework in here
    besides raising :class:`ApiError`)."""

    def __init__(
        self,
        synthesizer: Synthesizer,
        queue: BatchingQueue,
        limits: ServeLimits,
        *,
        vocoder_description: str | None = None,
        dials: Sequence[NamedDial] = (),
    ) -> None:
        self.synth = synthesizer
        self.dials = list(dials)
        self.queue = queue
        self.limits = limits
        self.vocoder_description = vocoder_description or KIND_NAMES.get(queue.default_vocoder, queue.default_vocoder)
        self.references = _Recent(limits.max_references)
        self.syntheses = _Recent(limits.max_syntheses)
        self._readable = set(synthesizer.symbols.symbols[2:])  # pad and eos are never read from text

    # ---------------------------------------------------------------- text and style

    def check_text(self, text: str) -> None:
        """422 for a text the model cannot speak: empty, too long, a malformed or unknown ``{…}``
        pronunciation, symbols the model lacks, punctuation only. The symbols judged are those the
        model reads (its frontend's: the cleaned characters, or the phonemes)."""
        if not text.strip():
            raise ApiError(422, "text is empty")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # JSON may carry lone surrogates ("\\ud800"), which no answer could echo
            raise ApiError(422, "text is not valid Unicode (it holds a lone surrogate)") from None
        if len(text) > self.limits.max_text_chars:
            raise ApiError(422, f"text is {len(text)} characters; the limit is {self.limits.max_text_chars}")
        table = self.synth.symbols
        cleaned = self._read(table.clean, text)
        # Numbers and abbreviations are spelled out: the spoken form is bounded too, since it sets the work
        # (and, for phonemes, espeak-ng's).
        if len(cleaned) > 4 * self.limits.max_text_chars:
            raise ApiError(
                422,
                f"text is {len(cleaned)} characters once numbers and abbreviations are spelled out; "
                f"the limit is {4 * self.limits.max_text_chars}",
            )
        segments = self._read(table.frontend.segments, text)
        for symbols, override in segments:
            unknown = [c for c in symbols if c not in self._readable] if override else []
            if unknown:  # a pronunciation is taken as written: no symbol of it may be dropped
                raise ApiError(
                    422,
                    f"unknown phoneme {unknown[0]!r} in {{{symbols if len(symbols) <= 40 else symbols[:40] + '…'}}}: "
                    f"this model reads {_reads(table)}",
                )
        symbols = "".join(piece for piece, _ in segments)
        unknown = list(dict.fromkeys(c for c in symbols if c not in self._readable))
        if unknown:
            shown = ", ".join(repr(c) for c in unknown[:10]) + (
                f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
            )
            what = "phonemes" if table.language else "characters"
            raise ApiError(422, f"text has {what} the model cannot read: {shown}")
        if not symbols.strip():
            raise ApiError(422, "text is empty after normalisation")
        if not any(c.isalnum() for c in symbols):
            raise ApiError(422, "text has nothing to speak (only punctuation)")

    @staticmethod
    def _read(step: Any, text: str) -> Any:
        """``step(text)`` (the frontend's cleaning or its symbols); a TextError (an unmatched brace) is a
        422 with its own line, anything else the libraries raise on odd input one naming its kind."""
        try:
            return step(text)
        except TextError as exc:
            raise ApiError(422, str(exc)) from None
        except Exception as exc:  # the cleaners' libraries (inflect, unidecode) raise assorted types on odd input
            raise ApiError(422, f"text could not be normalised ({first_line(exc, 100)})") from None

    def style(
        self,
        *,
        style_weights: Mapping[str, float] | None,
        reference_id: str | None,
        mix: Mapping[str, float] | None,
        style_dials: Mapping[str, float] | None = None,
        style_strength: float | None = None,
        weights_field: str = "style_weights",
        tempo: str = DECODED,
        f0_range: str | float = DECODED,
        vocoder: str | None = None,
    ) -> tuple[ResolvedStyle, dict[str, Any], dict[str, Any]]:
        """The request's style (neutral without one) resolved by the synthesizer's rules from the
        readings its uploaded clips got when they were encoded: ``(the resolved style, the tempo's
        JSON description, the F0 range's)``, the CLI's shape. ``style_strength`` scales a
        reference's or mix's from neutral (already range-checked); ``tempo`` and ``f0_range``:
        what is done after the model, the model's own (``"decoded"``, the default), the
        reference's (``"reference"``: one that could not be read leaves the model's, and the
        description says so) or, for the F0 range, a number of semitones (with a vocoder that
        can set one); ``weights_field``: the name ``style_weights`` came in (``style_wav`` of
        ``GET /api/tts``), for messages.

        Raises:
            ApiError: 422 naming the field: more than one style, an unknown reference id, a bad
                token weight or dial, ``"reference"`` without a reference or mix, a bad number.
        """
        given = [
            name
            for name, v in (
                ("style_weights", style_weights),
                ("style_dials", style_dials),
                ("reference_id", reference_id),
                ("mix", mix),
            )
            if v is not None
        ]
        if len(given) > 1:
            raise ApiError(
                422, f"give at most one of style_weights, style_dials, reference_id, mix (got {', '.join(given)})"
            )
        has_reference = reference_id is not None or mix is not None
        if style_strength is not None and not has_reference:
            raise ApiError(422, "style_strength needs reference_id or mix (it scales a reference's style)")
        for name, choice, what in (
            ("tempo", tempo, "it retimes the output to the reference's letter rate"),
            ("f0_range", f0_range, "a number of semitones works with any style"),
        ):
            if choice == REFERENCE and not has_reference:
                raise ApiError(422, f"{name}: {REFERENCE!r} needs reference_id or mix ({what})")
            if isinstance(choice, str) and choice not in (DECODED, REFERENCE):
                raise ApiError(422, f"{name}: {quote(choice)} is not {DECODED!r} or {REFERENCE!r}")
        semitones = None
        if not isinstance(f0_range, str):
            try:
                semitones = check_f0_range(f0_range)
            except GstTtsError as exc:
                raise ApiError(422, f"f0_range: {exc}") from None
        sets_f0_range = bool(
            getattr(self.queue.vocoders.get(vocoder or self.queue.default_vocoder), "sets_f0_range", False)
        )
        given_f0 = semitones if sets_f0_range else None
        field = given[0] if given else "style"
        if field == "style_weights":
            field = weights_field
        try:
            if reference_id is not None:
                self.reference("reference_id", reference_id)
                style = Style(reference=reference_id, strength=style_strength, f0_range=given_f0)
            elif mix is not None:
                for ref_id in mix:
                    self.reference("mix", ref_id)
                style = Style(mix=dict(mix), strength=style_strength, f0_range=given_f0)
            elif style_weights is not None:
                style = Style(weights=self._token_spec(weights_field, style_weights), f0_range=given_f0)
            elif style_dials is not None:
                style = Style(dials=self._token_spec("style_dials", style_dials), f0_range=given_f0)
            else:
                style = Style(f0_range=given_f0)
            (resolved,) = self.synth.styles.resolve_styles(
                [style],
                f0_range=sets_f0_range,
                reference_f0_range=sets_f0_range and f0_range == REFERENCE,
                reference_tempo=tempo == REFERENCE,
                read=self._stored_reading,
            )
        except GstTtsError as exc:
            raise ApiError(422, f"{field}: {exc}") from None
        resolved = resolved._replace(weights=self.synth.weights_array(resolved.weights))
        tempo_said, f0_said = dict(DECODED_SOURCE), dict(DECODED_SOURCE)
        if resolved.tempo_target is not None:
            target = resolved.tempo_target
            tempo_said = {
                "source": REFERENCE,
                "letters_per_s": round(target.letters_per_s, 2),
                "strength": target.strength,
            }
        if given_f0 is not None:
            f0_said = {"source": _GIVEN, "semitones": given_f0}
        elif resolved.f0_target is not None:
            target = resolved.f0_target
            f0_said = {"source": REFERENCE, "semitones": round(target.semitones, 2), "strength": target.strength}
        return resolved, tempo_said, f0_said

    def _token_spec(self, field_name: str, spec: Mapping[str, float]) -> dict[Any, float]:
        """``{"token" or "head:token": weight}`` (already pattern-checked) as a ``Style``'s weights."""
        parsed: dict[Any, float] = {}
        for key, w in spec.items():
            head, _, token = key.rpartition(":")
            parsed_key = (int(head), int(token)) if head else int(token)
            if parsed_key in parsed:  # "1" and "01"
                raise ApiError(422, f"{field_name}: token {key} is given twice")
            parsed[parsed_key] = w
        return parsed

    def _stored_reading(self, ref_id: str) -> ReferenceReading:
        """What an uploaded clip's reading gave when it was encoded."""
        ref = self.reference("reference_id", ref_id)
        return ReferenceReading(
            self.synth.styles.as_weights(np.asarray(ref.weights, dtype=np.float32)), ref.f0_range_st, ref.letters_per_s
        )

    def reference(self, field: str, ref_id: str) -> _Reference:
        ref = self.references.get(ref_id)
        if ref is None:
            raise ApiError(
                422,
                f"{field}: {quote(ref_id)} is not an uploaded reference (upload the clip to "
                "POST /api/references and use the id it returns; server paths are never read)",
            )
        return ref

    # ---------------------------------------------------------------- synthesis

    async def synthesize(
        self,
        *,
        text: str,
        style_weights: Mapping[str, float] | None = None,
        reference_id: str | None = None,
        mix: Mapping[str, float] | None = None,
        seed: int | None = None,
        vocoder: str | None = None,
        style_dials: Mapping[str, float] | None = None,
        style_strength: float | None = None,
        tempo: str = DECODED,
        f0_range: str | float = DECODED,
        weights_field: str = "style_weights",
    ) -> tuple[str, _Synthesis]:
        """A one-shot synthesis, kept: ``(its id, the entry)``; ``tempo`` and ``f0_range`` as
        :meth:`after_the_model` takes them (default: the model's own)."""
        style, tempo_said, f0_said = self.checked(
            text=text,
            style_weights=style_weights,
            reference_id=reference_id,
            mix=mix,
            vocoder=vocoder,
            style_dials=style_dials,
            style_strength=style_strength,
            weights_field=weights_field,
            tempo=tempo,
            f0_range=f0_range,
        )
        job = SynthesisJob(text=text, style=style, seed=seed, vocoder=vocoder)
        try:
            result = await self.on_worker(job, "synthesis")
        except GstTtsError as exc:
            raise ApiError(422, str(exc)) from None
        wav = await run_in_threadpool(wav_bytes, result.audio, result.sample_rate)
        entry = _Synthesis(
            result=result,
            wav=wav,
            seed=seed,
            vocoder=vocoder or self.queue.default_vocoder,
            tempo=tempo_said,
            f0_range=f0_said,
        )
        return self.syntheses.add(entry), entry

    def checked(
        self,
        *,
        text: str,
        style_weights: Mapping[str, float] | None,
        reference_id: str | None,
        mix: Mapping[str, float] | None,
        vocoder: str | None,
        style_dials: Mapping[str, float] | None,
        style_strength: float | None = None,
        weights_field: str = "style_weights",
        tempo: str = DECODED,
        f0_range: str | float = DECODED,
    ) -> tuple[ResolvedStyle, dict[str, Any], dict[str, Any]]:
        """The request's resolved style and the descriptions of what is done after the model
        (:meth:`style`), its text and vocoder checked (422 otherwise)."""
        self.check_text(text)
        resolved = self.style(
            style_weights=style_weights,
            style_dials=style_dials,
            reference_id=reference_id,
            mix=mix,
            style_strength=style_strength,
            weights_field=weights_field,
            tempo=tempo,
            f0_range=f0_range,
            vocoder=vocoder,
        )
        if vocoder is not None and vocoder not in self.queue.vocoders:
            raise ApiError(422, f"vocoder: {quote(vocoder)} is not one of {', '.join(self.queue.vocoders)}")
        return resolved

    async def stream(
        self,
        *,
        text: str,
        style_weights: Mapping[str, float] | None = None,
        reference_id: str | None = None,
        mix: Mapping[str, float] | None = None,
        seed: int | None = None,
        vocoder: str | None = None,
        style_dials: Mapping[str, float] | None = None,
        style_strength: float | None = None,
    ) -> AsyncIterator[bytes]:
        """A streamed synthesis's WAV bytes: the header, then 16-bit PCM as the worker makes it.

        A stream keeps the model's tempo and F0 range (:meth:`Synthesizer.stream`): nothing is
        done to it after the model. Waits for the first chunk before returning, so that whatever
        refuses the request before any audio (a text the synthesizer refuses, a full queue, the
        time limit) is an answer of its own and not a cut stream.

        Raises:
            ApiError: as :meth:`synthesize`.
        """
        style, _, _ = self.checked(
            text=text,
            style_weights=style_weights,
            reference_id=reference_id,
            mix=mix,
            vocoder=vocoder,
            style_dials=style_dials,
            style_strength=style_strength,
        )
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue = asyncio.Queue()
        job = StreamJob(
            text=text,
            style=style,
            seed=seed,
            vocoder=vocoder,
            emit=lambda item: loop.call_soon_threadsafe(inbox.put_nowait, item),
        )
        self.submit(job)
        try:
            first = await asyncio.wait_for(inbox.get(), timeout=self.limits.request_timeout_s)
        except asyncio.TimeoutError:
            job.cancelled.set()
            job.future.cancel()  # drops it if it has not started
            raise ApiError(
                408,
                f"streamed synthesis did not start within the request time limit of "
                f"{self.limits.request_timeout_s:g} s",
            ) from None
        if isinstance(first, QueueClosed):
            raise ApiError(503, str(first), headers={"Retry-After": "5"})
        if isinstance(first, GstTtsError):
            raise ApiError(422, str(first))
        if isinstance(first, BaseException):
            raise first
        return self._stream_bytes(first, inbox, job)

    async def _stream_bytes(
        self, first: np.ndarray | None, inbox: asyncio.Queue, job: StreamJob
    ) -> AsyncIterator[bytes]:
        try:
            yield streaming_wav_header(self.synth.sample_rate)
            item: Any = first
            while isinstance(item, np.ndarray):
                yield wav_pcm16(item)
                item = await inbox.get()
            if isinstance(item, BaseException):  # the header is sent: the stream can only end early
                log.warning("streamed synthesis ended early: %s", first_line(item))
        finally:
            job.cancelled.set()  # the client may have gone: the worker stops at its next chunk

    def submit(self, job: SynthesisJob | ReferenceJob | StreamJob) -> Future:
        """Queue ``job`` for the worker; its future.

        Raises:
            ApiError: 503 when the queue is full or closing.
        """
        self.queue.start()
        try:
            return self.queue.submit(job)
        except QueueFull as exc:
            raise ApiError(503, f"{exc}; retry later", headers={"Retry-After": str(exc.retry_after_s)}) from None
        except QueueClosed as exc:
            raise ApiError(503, str(exc), headers={"Retry-After": "5"}) from None

    async def on_worker(self, job: SynthesisJob | ReferenceJob, what: str) -> Any:
        """Queue ``job`` for the worker and wait for its outcome (its errors are raised here).

        Raises:
            ApiError: 503 when the queue is full or closing, 408 past the request time limit.
        """
        future = self.submit(job)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout=self.limits.request_timeout_s)
        except asyncio.TimeoutError:
            future.cancel()  # drops it if it has not started; a running batch finishes for its neighbours
            raise ApiError(
                408, f"{what} took longer than the request time limit of {self.limits.request_timeout_s:g} s"
            ) from None
        except QueueClosed as exc:
            raise ApiError(503, str(exc), headers={"Retry-After": "5"}) from None

    def synthesis(self, syn_id: str) -> _Synthesis:
        entry = self.syntheses.get(syn_id)
        if entry is None:
            raise ApiError(
                404, f"synthesis {quote(syn_id)} is not kept (only the {self.limits.max_syntheses} most recent are)"
            )
        return entry

    def summary(self, syn_id: str, entry: _Synthesis) -> dict[str, Any]:
        d = entry.result.to_dict()
        keys = (
            "text",
            "cleaned_text",
            "sample_rate",
            "duration_s",
            "n_frames",
            "decoder_steps",
            "stop_reason",
            "health",
            "problems",
            "style_weights",
        )
        return {
            "id": syn_id,
            **{k: d[k] for k in keys},
            "seed": entry.seed,
            "vocoder": entry.vocoder,
            "tempo": entry.tempo,
            "f0_range": entry.f0_range,  # the model's own, or what was done after it
            "audio_url": f"/api/syntheses/{syn_id}/audio.wav",
            "alignment_url": f"/api/syntheses/{syn_id}/alignment.png",
        }

    def headers(self, syn_id: str, entry: _Synthesis) -> dict[str, str]:
        d = entry.result.to_dict()
        compact = {"separators": (",", ":")}  # JSON is ASCII by default, as headers must be
        return {
            "X-Synthesis-Id": syn_id,
            "X-Stop-Reason": d["stop_reason"],
            "X-Alignment-Health": json.dumps(d["health"], **compact),
            "X-Alignment-Problems": json.dumps(d["problems"], **compact),
            "X-Style-Weights": json.dumps(np.round(np.asarray(d["style_weights"]), 4).tolist(), **compact),
            "X-Duration-S": f"{d['duration_s']:.3f}",
            **copy_headers(entry.tempo, entry.f0_range),
        }

    def alignment_png(self, entry: _Synthesis) -> bytes:
        from gst_tts.analysis.plots import figure_to_png  # matplotlib only when a plot is asked for

        r = entry.result
        title = r.text if len(r.text) <= 70 else r.text[:70] + "…"
        return figure_to_png(r.figure(title=title), dpi=80)

    # ---------------------------------------------------------------- references

    async def encode_reference(self, name: str, data: bytes) -> _Reference:
        """Token weights of an uploaded clip, decoded from memory and encoded on the queue's worker.

        Raises:
            ApiError: 422 for non-audio, silent, tiny or long clips; 503 with the queue full.
        """
        job = ReferenceJob(load=functools.partial(self.decode_reference, name, data))
        try:
            weights, duration_s, f0_range_st, letters_per_s = await self.on_worker(job, "encoding the reference")
        except GstTtsError as exc:
            raise ApiError(422, str(exc).replace("reference array", f"file {quote(name)}", 1)) from None
        return _Reference(
            name=name, duration_s=duration_s, weights=weights, f0_range_st=f0_range_st, letters_per_s=letters_per_s
        )

    def decode_reference(self, name: str, data: bytes) -> tuple[np.ndarray, int]:
        """``(samples (frames, channels) float32, rate)`` of an uploaded clip (run on the worker).

        Raises:
            AudioError: not audio, or audio past the limits (header checks come before decoding,
                which allocates what the header claims).
        """
        try:
            info = sf.info(io.BytesIO(data))
        except Exception as exc:  # libsndfile raises several types for data it cannot parse
            raise AudioError(f"file {quote(name)} is not readable as audio ({first_line(exc, 100)})") from None
        if not (
            0 < info.samplerate <= MAX_UPLOAD_RATE and 0 < info.channels <= MAX_UPLOAD_CHANNELS and info.frames > 0
        ):
            raise AudioError(
                f"file {quote(name)}: unusable audio ({info.frames} frames, {info.channels} channels, "
                f"{info.samplerate} Hz)"
            )
        duration = info.frames / info.samplerate
        if duration > self.limits.max_reference_s:
            raise AudioError(
                f"file {quote(name)} is {duration:.1f} s long; the limit is {self.limits.max_reference_s:g} s"
            )
        try:
            samples, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
        except Exception as exc:
            raise AudioError(f"file {quote(name)} is not readable as audio ({first_line(exc, 100)})") from None
        return samples, rate

    def model_info(self) -> dict[str, Any]:
        synth = self.synth
        return {
            "sample_rate": synth.sample_rate,
            "n_tokens": synth.n_tokens,
            "n_heads": synth.n_heads,
            "tokens": list(range(synth.n_tokens)),
            "heads": list(range(synth.n_heads)),
            "neutral_weight": 1.0
            / synth.n_tokens,  # uniform, kept for old clients; the neutral style is neutral_weights
            "neutral_weights": synth.styles.neutral().tolist(),  # (n_heads, n_tokens): the checkpoint's neutral style
            "max_style_strength": MAX_STYLE_STRENGTH,
            "max_f0_range_st": MAX_F0_RANGE_ST,  # the largest f0_range in semitones a request may give
            # named by what probe-tokens measured (strongest first; empty without a dials file)
            "dials": [{**asdict(d), "effect": d.effect} for d in self.dials],
            "frontend": {
                "cleaner": synth.symbols.cleaner,
                "characters": "".join(synth.symbols.symbols[2:]),
                "frontend": synth.symbols.frontend.name,
                "language": synth.symbols.language,
                # the version its phonemes were made with; None for characters
                "espeak_version": getattr(synth.symbols.frontend, "espeak_version", None),
            },
            "vocoders": list(self.queue.vocoders),
            "default_vocoder": self.queue.default_vocoder,
            "vocoder": self.vocoder_description,  # which speaks and why, in one line
            "decoding": self.queue.decoding.to_dict(),
            "limits": asdict(self.limits),
        }


def copy_headers(tempo: Mapping[str, Any], f0_range: Mapping[str, Any]) -> dict[str, str]:
    """``X-Tempo`` and ``X-F0-Range``: which tempo and F0 range an answer has (the summary's, compact JSON)."""
    compact = {"separators": (",", ":")}
    return {"X-Tempo": json.dumps(dict(tempo), **compact), "X-F0-Range": json.dumps(dict(f0_range), **compact)}


def _reads(table: Any) -> str:
    """What a symbol table's model reads, for a message: ``"phonemes (en-us)"`` or ``"characters"``."""
    return f"phonemes ({table.language})" if table.language else "characters"
