"""One device resolver: auto picks what exists; impossible requests are one-line errors."""

import pytest
import torch

from gst_tts.device import resolve_device
from gst_tts.errors import GstTtsError


def test_auto_and_none_pick_cuda_only_when_available():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device(None).type == expected and resolve_device("auto").type == expected
    assert resolve_device("cpu") == torch.device("cpu")


@pytest.mark.parametrize("name", ["gpu0", "cuda:x"])
def test_unknown_device_is_a_one_line_error(name):
    with pytest.raises(GstTtsError, match="unknown device"):
        resolve_device(name)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_without_cuda_is_a_one_line_error():
    with pytest.raises(GstTtsError, match="CUDA is not available"):
        resolve_device("cuda")
