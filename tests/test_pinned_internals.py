"""The three private interfaces of other projects that gst-tts leans on, each pinned against the
locked versions with the reason it is used: an upgrade that changes one fails here, by name,
rather than somewhere downstream."""

from __future__ import annotations

import importlib.abc
import sys

import pytest
import torch


def test_torch_vf_lstm_positional_signature_is_nn_lstms():
    """``model/decoder.py`` runs the decoder LSTM *cell*'s parameters as one LSTM layer over all
    teacher-forced steps (one cuDNN/oneDNN call) through ``torch._VF.lstm``, nn.LSTM's own kernel
    entry point: an nn.LSTM of its own would hold a second copy of the weights, and the checkpoint
    layout (an LSTMCell) would change. The positional arguments are (input, (h0, c0), flat weights,
    has_biases, num_layers, dropout, train, bidirectional, batch_first)."""
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(5, 7)
    x = torch.randn(4, 3, 5)
    zeros = torch.zeros(1, 3, 7)
    expected, _ = lstm(x, (zeros, zeros))
    output, h, c = torch._VF.lstm(
        x,
        (zeros, zeros),
        [lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0],
        True,
        1,
        0.0,
        False,
        False,
        False,
    )
    torch.testing.assert_close(output, expected)
    torch.testing.assert_close(h[0], expected[-1])


def test_ctypes_can_unmap_a_library():
    """``text/espeak.py`` unmaps espeak-ng after use (``_ctypes.dlclose``; ``FreeLibrary`` on
    Windows): its C statics keep the last voice's state, so a fresh load is the only way back to
    a clean synthesizer. ctypes has no public way to close a library."""
    import _ctypes
    import ctypes
    import ctypes.util

    close = getattr(_ctypes, "dlclose", None) or getattr(_ctypes, "FreeLibrary", None)
    assert callable(close)
    name = ctypes.util.find_library("m") or ctypes.util.find_library("c")
    if name is None:
        pytest.skip("no C library to load")
    lib = ctypes.CDLL(name)
    assert isinstance(lib._handle, int) and lib._handle
    close(lib._handle)  # raises OSError on a bad handle


class _Recorder(importlib.abc.MetaPathFinder):
    def __init__(self, wanted: str) -> None:
        self.wanted, self.seen = wanted, []

    def find_spec(self, fullname, path, target=None):
        if fullname == self.wanted:
            frame = sys._getframe(1)
            while frame is not None:
                if frame.f_code.co_name == "_find_and_load":
                    self.seen.append(frame.f_locals.get("name"))
                frame = frame.f_back
        return None


def test_the_import_systems_frames_name_the_module_asked_for():
    """``dependencies.py`` tells ``import gst_tts.runtime`` (which must work without torch) from
    ``import gst_tts`` by the frame of importlib's ``_find_and_load``, whose local ``name`` is the
    module asked for: the package's ``__init__`` runs before the submodule is looked up, and no
    public interface says which submodule that is."""
    recorder = _Recorder("gst_tts_pinned_probe_missing")
    sys.meta_path.insert(0, recorder)
    try:
        with pytest.raises(ModuleNotFoundError):
            __import__("gst_tts_pinned_probe_missing")
    finally:
        sys.meta_path.remove(recorder)
    assert "gst_tts_pinned_probe_missing" in recorder.seen
