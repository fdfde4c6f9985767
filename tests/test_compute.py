"""Thread settings: the default leaves a core free, an explicit count wins, OMP_NUM_THREADS is respected.
One device resolver: auto picks what exists; impossible requests are one-line errors."""

import pytest
import torch

from gst_tts.errors import GstTtsError
from gst_tts.compute import configure_threads, default_threads, resolve_device


@pytest.fixture(autouse=True)
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("cores, threads", [(1, 1), (2, 1), (3, 2), (16, 15)])
def test_the_default_leaves_one_core_to_everything_else(cores, threads):
    assert default_threads(cores) == threads


def test_an_explicit_count_is_set(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # an explicit count wins over the environment too
    assert configure_threads(1) == 1 and torch.get_num_threads() == 1


def test_the_default_is_set_when_the_environment_says_nothing(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr("gst_tts.compute.available_cores", lambda: 3)
    assert configure_threads(None) == 2 and torch.get_num_threads() == 2


def test_omp_num_threads_stands_for_the_default(monkeypatch):
    torch.set_num_threads(2)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    monkeypatch.setattr("gst_tts.compute.available_cores", lambda: 8)
    assert configure_threads(None) == 2 and torch.get_num_threads() == 2


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_a_bad_count_is_a_one_line_error(bad):
    with pytest.raises(GstTtsError, match="threads must be a whole number >= 1"):
        configure_threads(bad)


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
