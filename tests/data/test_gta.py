"""GTA mel folders: the manifest is checked (marker, version, feature settings) and every file
against it; missing utterances are named."""

from __future__ import annotations

from dataclasses import replace
import json

import numpy as np
import pytest

from gst_tts.audio.features import AudioConfig
from gst_tts.data.gta import GTA_VERSION, GtaMels, write_gta_manifest
from gst_tts.errors import DataError
from gst_tts.files import write_npy


@pytest.fixture
def folder(tmp_path):
    gta = tmp_path / "gta"
    write_npy(gta / "a.npy", np.zeros((6, 80), np.float32))
    write_npy(gta / "b.npy", np.zeros((4, 80), np.float32))
    write_gta_manifest(
        gta, audio_config=AudioConfig(), checkpoint="ckpt.pt", step=7, reduction_factor=2, entries={"a": 6, "b": 5}
    )
    return gta


def test_reads_and_checks_each_file(folder):
    gta = GtaMels(folder, AudioConfig())
    assert gta.load("a").shape == (6, 80) and gta.manifest["step"] == 7
    with pytest.raises(DataError, match=r"shape \(4, 80\), the manifest says \(5, 80\)"):
        gta.load("b")
    with pytest.raises(DataError) as info:
        gta.check_covers(["a", "c", "d"])
    assert "2 utterances" in str(info.value) and "c, d" in str(info.value) and "\n" not in str(info.value)


def test_other_feature_settings_are_named(folder):
    with pytest.raises(DataError) as info:
        GtaMels(folder, replace(AudioConfig(), hop_length=200, trim_top_db=None))
    assert "hop_length 256 (this run 200)" in str(info.value) and "trim_top_db 40.0 (this run None)" in str(info.value)


@pytest.mark.parametrize(
    "change, message",
    [
        (None, "manifest not found"),
        ({"format": "other"}, "not a GTA mel manifest"),
        ({"version": GTA_VERSION + 1}, "written by a newer gst-tts"),
    ],
)
def test_refused_manifests(folder, change, message):
    path = folder / "manifest.json"
    if change is None:
        path.unlink()
    else:
        path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
    with pytest.raises(DataError, match=message):
        GtaMels(folder, AudioConfig())
