"""The on-disk cache of a corpus: log-mel features, the per-channel normalisation statistics, and
the phonemes of its transcripts."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from gst_tts.audio.features import AudioConfig, MelExtractor, MelStats, wav_to_logmel
from gst_tts.audio.io import WAV_FORMATS, load_audio, read_audio_header, trim_silence
from gst_tts.data.corpus import Utterance, id_file
from gst_tts.errors import AudioError, DataError
from gst_tts.files import atomic_write, remove_temporaries, write_json, write_npy, write_text
from gst_tts.text.frontends import PhonemeFrontend
from gst_tts.text.phonemes import PHONEMIZER_REVISION
from gst_tts.progress import progress_bar

log = logging.getLogger(__name__)

# The longest recording a corpus may hold, checked from its header before a sample is read: a
# 2-hour file would otherwise be decoded, resampled and turned into one 30,000-frame "utterance".
# Six times LJSpeech's longest clip; training leaves out what is over data.max_frames anyway.
MAX_CLIP_SECONDS = 60.0
# A temporary file of an atomic write (gst_tts.files) this old belongs to a killed run, not to a
# writer at work (one feature takes milliseconds), and is removed.
STALE_TEMPORARY_SECONDS = 600.0


class FeatureCache:
    """Log-mels on disk, one ``.npy`` per utterance, under a folder keyed by the feature config.

    A changed :class:`AudioConfig` gives a new folder, so stale features are never read; a
    changed audio file (size or mtime) is recomputed. Each file is written atomically and the
    manifest after the features it lists, so a killed run leaves whole features (and perhaps a
    hidden ``.*.tmp`` file, never read, removed by a later run once stale).

    Audio must be WAV data (any sample format, rate or channel count: other rates are resampled,
    channels averaged, with one warning per run) of at most :data:`MAX_CLIP_SECONDS` and finite
    samples; anything else is a one-line ``DataError`` naming the utterance's ``file:line``.
    """

    def __init__(self, cache_dir: str | os.PathLike, config: AudioConfig) -> None:
        self.config = config
        self.dir = Path(cache_dir) / f"mels-{config.fingerprint()}"
        self.manifest_path = self.dir / "manifest.json"

    def _load_manifest(self) -> dict:
        if self.manifest_path.is_file():
            try:
                manifest = json.loads(self.manifest_path.read_text())
                if manifest.get("audio_config") == asdict(self.config):
                    return manifest
            except (OSError, json.JSONDecodeError):
                log.warning("%s: unreadable feature manifest, recomputing", self.manifest_path)
        return {"audio_config": asdict(self.config), "entries": {}}

    def path(self, utt_id: str) -> Path:
        """``<dir>/<id>.npy``; a DataError for an id that would name a file elsewhere."""
        return id_file(self.dir, utt_id, ".npy")

    def prepare(self, utterances: Sequence[Utterance], progress: bool = True) -> dict[str, int]:
        """Compute missing or stale features. Returns ``{id: n_frames}`` for every utterance."""
        self.dir.mkdir(parents=True, exist_ok=True)
        # Another run (prepare, a training) may be writing here too: its temporaries are young.
        remove_temporaries(self.dir, older_than=STALE_TEMPORARY_SECONDS)
        manifest = self._load_manifest()
        entries: dict = manifest["entries"]
        todo = [
            u
            for u in utterances
            if entries.get(u.id, {}).get("source") != _source_key(u.audio_path) or not self.path(u.id).is_file()
        ]
        if todo:
            extractor = MelExtractor(self.config)
            converted: Counter[str] = Counter()
            example: dict[str, Path] = {}
            bar = progress_bar(todo, desc="features", unit="utt", enabled=progress)
            for i, utt in enumerate(bar):
                samples, notes = self._read(utt)
                for note in notes:
                    converted[note] += 1
                    example.setdefault(note, utt.audio_path)
                if samples.size < self.config.win_length or float(np.max(np.abs(samples))) < 1e-4:
                    raise DataError(f"{utt.where}: {utt.audio_path}: audio is silent or too short")
                mel = wav_to_logmel(samples, self.config, extractor)
                write_npy(self.path(utt.id), mel)
                entries[utt.id] = {"frames": int(mel.shape[0]), "source": _source_key(utt.audio_path)}
                if (i + 1) % 200 == 0:  # keep progress if interrupted
                    write_text(self.manifest_path, json.dumps(manifest))
            write_text(self.manifest_path, json.dumps(manifest))
            if converted:  # one line for the run: a 44.1 kHz corpus would otherwise warn per file
                log.warning(
                    "audio converted on reading, to mono at %d Hz: %s",
                    self.config.sample_rate,
                    "; ".join(
                        f"{note} in {n} of {len(todo)} files (e.g. {example[note]})" for note, n in converted.items()
                    ),
                )
        return {u.id: int(entries[u.id]["frames"]) for u in utterances}

    def load(self, utt_id: str) -> np.ndarray:
        """``(frames, n_mels)`` float32 log-mel."""
        return np.load(self.path(utt_id))

    def audio(self, utt: Utterance) -> np.ndarray:
        """``(n_samples,)`` float32: the samples the utterance's features were computed from (read,
        resampled and trimmed as :meth:`prepare` does), so that frame ``t`` of :meth:`load` is
        centred on sample ``t · hop_length`` (vocoder training).

        Raises:
            DataError: ``file:line`` of the utterance and what is wrong with its audio.
        """
        return trim_silence(self._read(utt)[0], self.config.trim_top_db)

    def _read(self, utt: Utterance) -> tuple[np.ndarray, list[str]]:
        """``(samples, conversions)``: the utterance's samples at the feature rate, and what
        reading changed (channels averaged, resampled, 8-bit), for one warning per run.

        The header is checked before a sample is decoded: WAV data, at most MAX_CLIP_SECONDS.
        """
        try:
            header = read_audio_header(utt.audio_path)
            if header.format not in WAV_FORMATS:
                raise AudioError(f"{utt.audio_path}: {header.format} data, not WAV; convert it to WAV")
            if header.seconds > MAX_CLIP_SECONDS:
                raise AudioError(
                    f"{utt.audio_path}: {header.seconds:.1f} s long; clips are at most "
                    f"{MAX_CLIP_SECONDS:.0f} s (split or drop it)"
                )
            samples, _ = load_audio(utt.audio_path, self.config.sample_rate)
        except AudioError as exc:
            raise DataError(f"{utt.where}: {exc}") from None
        return samples, header.conversions(self.config.sample_rate)

    def stats(self, utt_ids: Sequence[str]) -> MelStats:
        """Per-channel mean/std over the given utterances, cached by the ids and their audio files' versions."""
        # Keyed on each wav's size:mtime too, as prepare() is: an edited wav must not keep old
        # statistics. Features that prepare() did not list are keyed on their own file.
        entries = self._load_manifest()["entries"]
        sources = sorted(f"{i}|{entries[i]['source'] if i in entries else _source_key(self.path(i))}" for i in utt_ids)
        key = hashlib.sha1("\n".join(sources).encode()).hexdigest()[:12]
        path = self.dir / f"stats-{key}.npz"
        if path.is_file():
            d = np.load(path)
            return MelStats(torch.from_numpy(d["mean"]), torch.from_numpy(d["std"]))
        total = np.zeros(self.config.n_mels, dtype=np.float64)
        total_sq = np.zeros_like(total)
        count = 0
        for utt_id in utt_ids:
            mel = self.load(utt_id).astype(np.float64)
            total += mel.sum(0)
            total_sq += (mel**2).sum(0)
            count += mel.shape[0]
        stats = MelStats.from_sums(total, total_sq, count)
        atomic_write(path, lambda f: np.savez(f, mean=stats.mean.numpy(), std=stats.std.numpy()))
        return stats


class PhonemeCache:
    """The phonemes of a corpus's texts, in one JSON file per frontend setting beside the features.

    The file's name is keyed by everything the phonemes depend on (language, cleaner, espeak-ng
    version, gst-tts's own phonemizer revision), so a changed frontend or language reads another
    file and stale phonemes are never used. Written atomically; an unreadable file is ignored
    (phonemes are made again).
    """

    def __init__(self, cache_dir: str | os.PathLike, frontend: PhonemeFrontend) -> None:
        key = json.dumps({**frontend.to_dict(), "revision": PHONEMIZER_REVISION}, sort_keys=True)
        self.path = Path(cache_dir) / f"phonemes-{hashlib.sha1(key.encode()).hexdigest()[:12]}.json"

    def load(self) -> dict[str, str]:
        """``{cleaned text: phonemes}`` saved earlier; empty when there is none."""
        if not self.path.is_file():
            return {}
        try:
            entries = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(entries, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in entries.items()):
                return entries
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            pass
        log.warning("%s: unreadable phoneme cache, phonemizing again", self.path)
        return {}

    def save(self, entries: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json(self.path, dict(sorted(entries.items())))


def default_cache_dir(root: str | os.PathLike) -> Path:
    """``$XDG_CACHE_HOME/gst-tts/<corpus>-<hash>``: corpora may sit on read-only storage."""
    root = Path(root).resolve()
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gst-tts"
    return base / f"{root.name}-{hashlib.sha1(str(root).encode()).hexdigest()[:8]}"


def _source_key(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"
