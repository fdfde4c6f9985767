"""The batching queue without HTTP: batches, isolation of a bad request, seeded requests decoded
alone, the bound on waiting requests, shutdown."""

from __future__ import annotations


from conftest import seconds_for_steps
import numpy as np
import pytest

from gst_tts.audio.vocoders.griffin_lim import GriffinLimVocoder
from gst_tts.errors import GstTtsError, TextError
from gst_tts.inference.decoding import DecodingConfig
from gst_tts.inference.style_spec import ResolvedStyle, TempoTarget
from gst_tts.inference.synthesizer import Synthesizer
from gst_tts.serve.batching import BatchingQueue, QueueClosed, QueueFull, SynthesisJob

DECODING = DecodingConfig(max_seconds=seconds_for_steps(30))


@pytest.fixture(scope="module")
def synth(tiny_checkpoint) -> Synthesizer:
    s = Synthesizer.from_checkpoint(tiny_checkpoint, device="cpu")
    s.vocoder = GriffinLimVocoder(s.audio_config, n_iter=4)
    return s


@pytest.fixture
def calls(synth, monkeypatch) -> list[tuple[list[str], int | None]]:
    """Every ``synthesize`` call the worker makes: its texts and seed."""
    made, real = [], synth.synthesize

    def recorded(texts, **kwargs):
        made.append((list(texts), kwargs.get("seed")))
        return real(texts, **kwargs)

    monkeypatch.setattr(synth, "synthesize", recorded)
    return made


def job(synth: Synthesizer, text: str, *, seed: int | None = None, token: int | None = None) -> SynthesisJob:
    weights = synth.styles.neutral().numpy()
    if token is not None:
        weights = np.zeros_like(weights)
        weights[:, token] = 1.0
    return SynthesisJob(text, ResolvedStyle(weights), seed=seed)


def test_jobs_waiting_together_are_one_call_with_their_own_styles(synth, calls):
    queue = BatchingQueue(synth, max_batch=8, batch_window_s=0.0, decoding=DECODING)
    jobs = [job(synth, f"Sentence number {w}.", token=t) for t, w in enumerate(["one", "two", "three"])]
    for j in jobs:  # queued before the worker starts: they are waiting together
        queue.submit(j)
    with queue:
        results = [j.future.result(30) for j in jobs]
    assert calls == [([j.text for j in jobs], None)]
    for t, r in enumerate(results):  # each text kept its own style inside the batch
        assert r.text == jobs[t].text and np.argmax(r.style_weights[0]) == t
    assert queue.stats()["largest_batch"] == 3 and queue.stats()["batches"] == 1


def test_max_batch_splits_and_seeded_jobs_run_alone(synth, calls):
    queue = BatchingQueue(synth, max_batch=2, batch_window_s=0.0, decoding=DECODING)
    jobs = [job(synth, "A one."), job(synth, "A two.", seed=5), job(synth, "A three."), job(synth, "A four.")]
    for j in jobs:
        queue.submit(j)
    with queue:
        for j in jobs:
            j.future.result(30)
    # Batches of at most 2 in arrival order; the seeded job is decoded on its own, with its seed.
    assert calls == [(["A one."], None), (["A two."], 5), (["A three.", "A four."], None)]


def test_each_job_gets_its_own_tempo_and_f0_targets_and_none_is_the_models_own(synth, monkeypatch):
    made, real = [], synth.synthesize
    monkeypatch.setattr(synth, "synthesize", lambda texts, **k: made.append(k) or real(texts, **k))
    queue = BatchingQueue(synth, max_batch=4, batch_window_s=0.0, decoding=DECODING)
    plain, retimed = job(synth, "Its own tempo."), job(synth, "A reference's tempo.")
    retimed.style = retimed.style._replace(
        tempo_target=TempoTarget(30.0, 1.0)
    )  # a fast reader: squeezed after the model
    alone = job(synth, "Alone and plain.")
    queue.submit(plain), queue.submit(retimed)
    with queue:
        results = [plain.future.result(30), retimed.future.result(30)]
        queue.submit(alone)
        alone.future.result(30)
    both, single = made
    assert [style.tempo_target for style in both["styles"]] == [None, retimed.style.tempo_target]
    assert [style.f0_target for style in both["styles"] + single["styles"]] == [None, None, None]
    assert single["styles"][0].tempo_target is None
    # the retimed job is squeezed; its neighbour keeps the model's tempo
    assert results[1].chunks[0].tempo_gain > 1.0 and results[0].chunks[0].tempo_gain == 1.0
    assert results[0].style_weights is not None and results[1].audio.size > 0


def test_one_bad_text_does_not_fail_its_batch(synth, calls):
    good, bad = job(synth, "Fine text."), job(synth, "...")  # the app refuses such text before queueing it
    queue = BatchingQueue(synth, max_batch=4, batch_window_s=0.0, decoding=DECODING)
    queue.submit(good), queue.submit(bad)
    with queue:
        assert good.future.result(30).audio.size > 0
        with pytest.raises(TextError, match="nothing to speak"):
            bad.future.result(30)
    assert calls[0][0] == ["Fine text.", "..."] and sorted(c[0][0] for c in calls[1:]) == ["...", "Fine text."]


def test_full_queue_refuses_and_close_fails_the_waiting(synth):
    queue = BatchingQueue(synth, max_queue=2, decoding=DECODING)  # never started: nothing leaves the queue
    waiting = [job(synth, "First."), job(synth, "Second.")]
    for j in waiting:
        queue.submit(j)
    with pytest.raises(QueueFull, match="2 requests waiting") as refused:
        queue.submit(job(synth, "Third."))
    assert refused.value.retry_after_s >= 1
    queue.close()
    for j in waiting:
        with pytest.raises(QueueClosed):
            j.future.result(1)
    with pytest.raises(QueueClosed):
        queue.submit(job(synth, "Late."))


def test_a_cancelled_job_is_skipped(synth, calls):
    queue = BatchingQueue(synth, batch_window_s=0.0, decoding=DECODING)
    dropped, kept = job(synth, "Dropped."), job(synth, "Kept.")
    queue.submit(dropped), queue.submit(kept)
    assert dropped.future.cancel()  # its caller gave up before it started
    with queue:
        kept.future.result(30)
    assert calls == [(["Kept."], None)]


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(max_batch=0), "max_batch"),
        (dict(max_queue=True), "max_queue"),
        (dict(batch_window_s=float("nan")), "batch_window_s"),
        (dict(vocoders={"x": None}, max_batch=1.5), "max_batch"),
    ],
)
def test_bad_options(synth, options, message):
    with pytest.raises(GstTtsError, match=message):
        BatchingQueue(synth, **options)


def test_unknown_vocoder_is_refused_at_submit(synth):
    queue = BatchingQueue(synth)
    with pytest.raises(GstTtsError, match="not one of griffin-lim"):
        queue.submit(SynthesisJob("Hi.", ResolvedStyle(synth.styles.neutral().numpy()), vocoder="wavenet"))
