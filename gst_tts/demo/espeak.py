"""espeak-ng through ctypes on the library bundled in the ``espeakng-loader`` wheel: no system
package and no espeak binary are needed.

Besides espeak's own voices and variants, :meth:`EspeakSynth.synthesize` takes the text of a
variant file (``pitch``, ``formant``, … lines, as in espeak-ng's ``voices/!v``) to render with:
the demo corpus uses it to give a variant's timbre any pitch level. :func:`builtin_variant` reads
the bundled variant files to start from.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading

import numpy as np

from gst_tts.errors import GstTtsError, first_line
from gst_tts.text import espeak as library
from gst_tts.text.espeak import EE_OK as _EE_OK

# Values from espeak-ng's speak_lib.h.
_CHARS_UTF8 = 1


_POS_CHARACTER = 1


_PARAM_RATE = 1


_PARAM_PITCH = 3


_PARAM_RANGE = 4


_PARAM_WORDGAP = 7  # extra pause between words, in units of 10 ms at the default rate

_CUSTOM_VARIANT = "gst-tts-variant"  # file-name stem of the variant synthesize(variant=...) writes


# int callback(short *wav, int numsamples, espeak_EVENT *events); return 0 to continue.
_SynthCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)


class EspeakSynth:
    """Renders text with the espeak-ng library bundled in ``espeakng-loader``.

    espeak-ng keeps synthesis state in function-level static variables (pitch-flutter phase,
    gain control, cycle counters) that ``espeak_Terminate`` does not reset, so a clip would
    depend on every clip rendered before it in the process. To make each clip a pure
    function of its text and settings, every :meth:`synthesize` loads a private copy of the
    library, initialises it, renders, and unloads it again (about a millisecond). The copy
    is made lazily, once per process (:func:`gst_tts.text.espeak.private_library`); being private,
    it shares no state with other users of espeak-ng in the process (the phonemizer, say). A lock
    serialises synthesis across threads.

    The data folder is the process's private one (:func:`gst_tts.text.espeak.data_path`), whose
    ``voices/!v`` folder also holds the variant given to :meth:`synthesize` as text.
    """

    _lock = threading.Lock()
    _owner_pid: int = 0  # process whose data folder holds the custom variant files counted below
    _custom_text: str | None = None  # what the custom variant file holds now
    _custom_count: int = 0  # custom variant files written so far; the last one is f"{_CUSTOM_VARIANT}-{count}"
    _sample_rate: int = 0
    _chunks: list[np.ndarray] = []

    @staticmethod
    def _collect(wav: ctypes.POINTER(ctypes.c_short), num_samples: int, events: int) -> int:
        # Copy: the buffer belongs to espeak and is reused for the next chunk.
        if wav and num_samples > 0:
            EspeakSynth._chunks.append(np.ctypeslib.as_array(wav, shape=(num_samples,)).copy())
        return 0

    _callback = _SynthCallback(_collect)  # one object for the process; ctypes must keep it alive

    @property
    def sample_rate(self) -> int:
        """Rate of the returned audio (Hz); prepares the library if needed."""
        with self._lock:
            if EspeakSynth._sample_rate == 0:
                self._close(self._open())
        return EspeakSynth._sample_rate

    def synthesize(
        self,
        text: str,
        voice: str,
        rate: int,
        pitch: int,
        pitch_range: int = 50,
        *,
        word_gap: int = 0,
        variant: str | None = None,
    ) -> np.ndarray:
        """Renders ``text`` and returns float32 mono samples in [-1, 1] at :attr:`sample_rate`.

        Args:
            text: plain text (no SSML).
            voice: espeak voice name, optionally with a variant, e.g. ``"en-us+m3"``.
            rate: speaking rate in words per minute (espeak accepts about 80-450).
            pitch: base pitch, 0-99 (50 is the voice's normal pitch).
            pitch_range: intonation range, 0-99 (0 is monotone, 50 normal).
            word_gap: extra pause between words, in units of 10 ms at the default rate
                (espeak scales it with the rate). Default 0.
            variant: the text of a variant file to apply to ``voice`` (which then names none),
                e.g. ``builtin_variant("m3") + "pitch 120 170\n"``. Default None.

        Raises:
            GstTtsError: the library cannot be loaded, the voice does not exist, or synthesis
                fails.
        """
        with self._lock:
            if variant is not None:
                voice = f"{voice}+{self._custom_variant(variant)}"
            lib = self._open()
            try:
                if lib.espeak_SetVoiceByName(voice.encode("utf-8")) != _EE_OK:
                    raise GstTtsError(f"espeak-ng has no voice {voice!r}")
                # Parameters after the voice: selecting a voice resets them.
                for parameter, value in (
                    (_PARAM_RATE, rate),
                    (_PARAM_PITCH, pitch),
                    (_PARAM_RANGE, pitch_range),
                    (_PARAM_WORDGAP, word_gap),
                ):
                    lib.espeak_SetParameter(parameter, int(value), 0)
                data = text.encode("utf-8") + b"\0"
                EspeakSynth._chunks = []
                status = lib.espeak_Synth(data, len(data), 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
                lib.espeak_Synchronize()
                chunks, EspeakSynth._chunks = EspeakSynth._chunks, []
            finally:
                self._close(lib)
        if status != _EE_OK:
            raise GstTtsError(f"espeak-ng failed to render {text!r} (error {status})")
        if not chunks:
            return np.zeros(0, dtype=np.float32)
        return np.concatenate(chunks).astype(np.float32) / 32768.0

    @classmethod
    def _custom_variant(cls, text: str) -> str:
        """Writes ``text`` as the one custom variant file of the private data folder and returns its
        name; the caller holds ``_lock``.

        One file at a time: espeak-ng lists every voice file on initialising and stops at 350,
        and the bundled ones are nearly that many. A new text goes to a new file and the old one
        is removed, rather than rewriting one file in place: a truncating rewrite makes ext4 flush
        it to disk on close (milliseconds per utterance), a new file does not.
        """
        if cls._owner_pid != os.getpid():  # a forked child has a data folder of its own
            cls._owner_pid, cls._custom_text, cls._custom_count = os.getpid(), None, 0
        if cls._custom_text != text:
            folder = os.path.join(library.data_path(), library.VARIANT_DIR)
            name = f"{_CUSTOM_VARIANT}-{cls._custom_count + 1}"
            try:
                with open(os.path.join(folder, name), "x", encoding="utf-8") as f:
                    f.write(text)
                if cls._custom_count:
                    os.unlink(os.path.join(folder, f"{_CUSTOM_VARIANT}-{cls._custom_count}"))
            except OSError as error:
                raise GstTtsError(f"cannot write an espeak-ng variant: {first_line(error)}") from None
            cls._custom_text, cls._custom_count = text, cls._custom_count + 1
        return f"{_CUSTOM_VARIANT}-{cls._custom_count}"

    @classmethod
    def _open(cls) -> ctypes.CDLL:
        """Loads a fresh instance of the private library and initialises it; the caller holds ``_lock``."""
        lib, sample_rate = library.load_library(library.private_library("synth"), library.AUDIO_OUTPUT_SYNCHRONOUS)
        lib.espeak_SetSynthCallback.argtypes = [_SynthCallback]
        lib.espeak_SetSynthCallback.restype = None
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_Synth.argtypes = [
            ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int,
            ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
        ]  # fmt: skip
        lib.espeak_SetSynthCallback(cls._callback)
        cls._sample_rate = sample_rate
        return lib

    @staticmethod
    def _close(lib: ctypes.CDLL) -> None:
        lib.espeak_Terminate()
        library.unload_library(lib)


@functools.lru_cache(maxsize=None)
def builtin_variant(name: str) -> str:
    """The text of espeak-ng's bundled variant file ``name`` (``"m3"``, ``"f1"``, …).

    Raises:
        GstTtsError: espeakng-loader is missing or has no such variant.
    """
    try:
        import espeakng_loader

        path = os.path.join(espeakng_loader.get_data_path(), library.VARIANT_DIR, name)
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (ImportError, OSError, RuntimeError, UnicodeDecodeError) as error:
        raise GstTtsError(f"no espeak-ng variant {name!r}: {first_line(error)}") from None


#: The process's synthesizer, shared: its private library is loaded once per process (see EspeakSynth).
SHARED_SYNTH = EspeakSynth()
