"""espeak-ng through ctypes on the library bundled in the ``espeakng-loader`` wheel: no system
package and no espeak binary are needed."""

from __future__ import annotations

import _ctypes
import atexit
import ctypes
import os
import shutil
import tempfile
import threading

import numpy as np

from gst_tts.errors import GstTtsError, first_line

# Values from espeak-ng's speak_lib.h.
_AUDIO_OUTPUT_SYNCHRONOUS = 0x02  # espeak_Synth returns once all audio went to the callback


_INITIALIZE_DONT_EXIT = 0x8000  # report errors instead of calling exit()


_CHARS_UTF8 = 1


_POS_CHARACTER = 1


_EE_OK = 0


_PARAM_RATE = 1


_PARAM_PITCH = 3


_PARAM_RANGE = 4


# int callback(short *wav, int numsamples, espeak_EVENT *events); return 0 to continue.
_SynthCallback = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p
)


def _unload_library(handle: int) -> None:
    """Unmaps a library opened with ctypes, so that the next load starts from fresh statics."""
    close = getattr(_ctypes, "dlclose", None) or getattr(_ctypes, "FreeLibrary")
    close(handle)


class EspeakSynth:
    """Renders text with the espeak-ng library bundled in ``espeakng-loader``.

    espeak-ng keeps synthesis state in function-level static variables (pitch-flutter phase,
    gain control, cycle counters) that ``espeak_Terminate`` does not reset, so a clip would
    depend on every clip rendered before it in the process. To make each clip a pure
    function of its text and settings, every :meth:`synthesize` loads a private copy of the
    library, initialises it, renders, and unloads it again (about a millisecond). The copy
    is made lazily, once per process; being private, it shares no state with other users of
    espeak-ng in the process (a phonemizer, say). A lock serialises synthesis across threads.
    """

    _lock = threading.Lock()
    _library_path: str | None = None  # the private copy
    _data_path: str = ""
    _owner_pid: int = 0  # process that made the copy; a forked child makes its own
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

    def synthesize(self, text: str, voice: str, rate: int, pitch: int, pitch_range: int = 50) -> np.ndarray:
        """Renders ``text`` and returns float32 mono samples in [-1, 1] at :attr:`sample_rate`.

        Args:
            text: plain text (no SSML).
            voice: espeak voice name, optionally with a variant, e.g. ``"en-us+m3"``.
            rate: speaking rate in words per minute (espeak accepts about 80-450).
            pitch: base pitch, 0-99 (50 is the voice's normal pitch).
            pitch_range: intonation range, 0-99 (0 is monotone, 50 normal).

        Raises:
            GstTtsError: the library cannot be loaded, the voice does not exist, or synthesis
                fails.
        """
        with self._lock:
            lib = self._open()
            try:
                if lib.espeak_SetVoiceByName(voice.encode("utf-8")) != _EE_OK:
                    raise GstTtsError(f"espeak-ng has no voice {voice!r}")
                # Parameters after the voice: selecting a voice resets them.
                for parameter, value in ((_PARAM_RATE, rate), (_PARAM_PITCH, pitch), (_PARAM_RANGE, pitch_range)):
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
    def _prepare(cls) -> None:
        """Finds the bundled library and data and copies the library to a private file."""
        try:
            import espeakng_loader

            source = espeakng_loader.get_library_path()
            data_path = espeakng_loader.get_data_path()
            copy_dir = tempfile.mkdtemp(prefix="gst-tts-espeak-")
            atexit.register(shutil.rmtree, copy_dir, True)
            library_path = os.path.join(copy_dir, os.path.basename(source))
            shutil.copyfile(source, library_path)
        except (ImportError, OSError, RuntimeError) as error:
            raise GstTtsError(f"cannot load espeak-ng from espeakng-loader: {first_line(error)}") from None
        cls._library_path, cls._data_path, cls._owner_pid = library_path, data_path, os.getpid()

    @classmethod
    def _open(cls) -> ctypes.CDLL:
        """Loads a fresh instance of the library and initialises it; the caller holds ``_lock``."""
        if cls._library_path is None or cls._owner_pid != os.getpid():
            cls._prepare()
        try:
            lib = ctypes.CDLL(cls._library_path)
        except OSError as error:
            raise GstTtsError(f"cannot load espeak-ng: {first_line(error)}") from None
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_SetSynthCallback.argtypes = [_SynthCallback]
        lib.espeak_SetSynthCallback.restype = None
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_Synth.argtypes = [
            ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int,
            ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
        ]  # fmt: skip
        sample_rate = lib.espeak_Initialize(
            _AUDIO_OUTPUT_SYNCHRONOUS, 0, cls._data_path.encode("utf-8"), _INITIALIZE_DONT_EXIT
        )
        if sample_rate <= 0:
            _unload_library(lib._handle)
            raise GstTtsError(f"cannot initialise espeak-ng with data at {cls._data_path} (error {sample_rate})")
        lib.espeak_SetSynthCallback(cls._callback)
        cls._sample_rate = sample_rate
        return lib

    @staticmethod
    def _close(lib: ctypes.CDLL) -> None:
        lib.espeak_Terminate()
        _unload_library(lib._handle)


_SHARED_SYNTH = EspeakSynth()
