"""The espeak-ng library bundled in the ``espeakng-loader`` wheel, loaded through ctypes: no system
package and no espeak binary are needed.

espeak-ng keeps its state in global and function-level static variables. Each user in the process
therefore loads its own *private copy* of the library file (:func:`private_library`), so that the
demo's synthesizer (which reloads its copy for every clip) and the phonemizer (which keeps its copy
loaded) never share state, nor share it with another package's espeak-ng. The copies live in one
temporary folder per process, beside a private data folder of links to the bundled
``espeak-ng-data`` whose ``voices/!v`` folder is real, so that variant files can be added to it.

espeak-ng is GPL-3.0 software: it is loaded at run time, never linked or shipped by gst-tts.
"""

from __future__ import annotations

import _ctypes
import atexit
import ctypes
import os
import shutil
import tempfile
import threading

from gst_tts.errors import GstTtsError, first_line

VARIANT_DIR = os.path.join("voices", "!v")  # variant files, relative to the data folder

# Values from espeak-ng's speak_lib.h.
AUDIO_OUTPUT_SYNCHRONOUS = 0x02  # espeak_Synth returns once all audio went to the callback
AUDIO_OUTPUT_RETRIEVAL = 0x01  # no audio device; the phonemizer synthesizes nothing
INITIALIZE_DONT_EXIT = 0x8000  # report errors instead of calling exit()
EE_OK = 0

_lock = threading.Lock()
_folder: str | None = None  # the process's temporary folder: library copies and the data folder
_owner_pid = 0  # process that made it; a forked child makes its own


def _process_folder() -> str:
    """The process's private folder, made on first use; holds ``espeak-ng-data``. Caller holds ``_lock``."""
    global _folder, _owner_pid
    if _folder is None or _owner_pid != os.getpid():
        try:
            import espeakng_loader

            bundled_data = espeakng_loader.get_data_path()
            folder = tempfile.mkdtemp(prefix="gst-tts-espeak-")
            atexit.register(shutil.rmtree, folder, True)
            _link_tree(bundled_data, os.path.join(folder, "espeak-ng-data"), keep=VARIANT_DIR)
        except (ImportError, OSError, RuntimeError) as error:
            raise GstTtsError(f"cannot load espeak-ng from espeakng-loader: {first_line(error)}") from None
        _folder, _owner_pid = folder, os.getpid()
    return _folder


def data_path() -> str:
    """The process's private ``espeak-ng-data`` folder (links to the bundled one)."""
    with _lock:
        return os.path.join(_process_folder(), "espeak-ng-data")


def private_library(user: str) -> str:
    """The path of ``user``'s own copy of the bundled library file, made on first use in this
    process. Two users never get the same file, so loading one never maps the other's state.

    Raises:
        GstTtsError: espeakng-loader is missing or its library cannot be copied.
    """
    with _lock:
        folder = _process_folder()
        path = os.path.join(folder, f"{user}-libespeak-ng.so")
        if not os.path.exists(path):
            try:
                import espeakng_loader

                shutil.copyfile(espeakng_loader.get_library_path(), path)
            except (ImportError, OSError, RuntimeError) as error:
                raise GstTtsError(f"cannot load espeak-ng from espeakng-loader: {first_line(error)}") from None
        return path


def load_library(path: str, output: int) -> tuple[ctypes.CDLL, int]:
    """Loads the library file ``path`` and initialises it with the private data folder.

    Args:
        path: a file from :func:`private_library`.
        output: :data:`AUDIO_OUTPUT_SYNCHRONOUS` (synthesis through a callback) or
            :data:`AUDIO_OUTPUT_RETRIEVAL` (no audio: phonemes only).

    Returns:
        The library and its sample rate (Hz).

    Raises:
        GstTtsError: the file does not load or espeak-ng does not initialise.
    """
    data = data_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as error:
        raise GstTtsError(f"cannot load espeak-ng: {first_line(error)}") from None
    lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
    lib.espeak_Info.argtypes = [ctypes.c_void_p]
    lib.espeak_Info.restype = ctypes.c_char_p
    sample_rate = lib.espeak_Initialize(output, 0, data.encode("utf-8"), INITIALIZE_DONT_EXIT)
    if sample_rate <= 0:
        unload_library(lib)
        raise GstTtsError(f"cannot initialise espeak-ng with data at {data} (error {sample_rate})")
    return lib, sample_rate


def unload_library(lib: ctypes.CDLL) -> None:
    """Unmaps a library opened with ctypes, so that the next load starts from fresh statics
    (ctypes has no public close: pinned in tests/test_pinned_internals.py)."""
    close = getattr(_ctypes, "dlclose", None) or getattr(_ctypes, "FreeLibrary")
    close(lib._handle)


def library_version(lib: ctypes.CDLL) -> str:
    """The version espeak-ng reports (``"1.52.0"``)."""
    return (lib.espeak_Info(None) or b"unknown").decode("utf-8", "replace").strip()


def _link_tree(source: str, target: str, keep: str) -> None:
    """Makes ``target`` a folder of links to the entries of ``source``, except along the path
    ``keep`` (relative), which becomes real folders so that files can be added to it. Copies
    where the system refuses links."""
    os.makedirs(target)
    head, _, rest = keep.partition(os.sep)
    for entry in os.listdir(source):
        src, dst = os.path.join(source, entry), os.path.join(target, entry)
        if entry == head:
            if rest:
                _link_tree(src, dst, rest)
            else:  # the folder to add to: links to its files
                os.makedirs(dst)
                for name in os.listdir(src):
                    _link_or_copy(os.path.join(src, name), os.path.join(dst, name))
        else:
            _link_or_copy(src, dst)


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.symlink(src, dst)
    except OSError:
        (shutil.copytree if os.path.isdir(src) else shutil.copyfile)(src, dst)
