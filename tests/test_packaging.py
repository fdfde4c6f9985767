"""The install contract: declared torch/torchaudio bounds hold, the wheel carries the Hydra configs,
and a non-editable install trains from an unrelated folder."""

from __future__ import annotations

import importlib.metadata as metadata
import os
from pathlib import Path
import shutil
import subprocess
import sys
import zipfile

from packaging.requirements import Requirement
from packaging.version import Version
import pytest

REPO = Path(__file__).resolve().parent.parent


def _declared(name: str) -> Requirement:
    for line in metadata.requires("gst-tts") or []:
        requirement = Requirement(line)
        if requirement.name == name and requirement.marker is None:
            return requirement
    raise AssertionError(f"gst-tts declares no requirement on {name}")


@pytest.mark.parametrize("name", ["torch", "torchaudio"])
def test_installed_binary_pair_satisfies_declared_bounds(name):
    requirement = _declared(name)
    assert any(spec.operator in ("<", "<=", "==", "~=") for spec in requirement.specifier), (
        f"{requirement} has no upper bound: a new release could break every fresh install"
    )
    installed = Version(metadata.version(name)).base_version  # 2.14.1+cu130 → 2.14.1
    assert requirement.specifier.contains(installed), f"{name} {installed} is outside {requirement}"


def test_lock_pins_the_installed_pair():
    lock = dict(
        line.split("==", 1)
        for line in (REPO / "requirements.lock").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    for name in ("torch", "torchaudio"):
        assert Version(lock[name]).base_version == Version(metadata.version(name)).base_version
        assert _declared(name).specifier.contains(Version(lock[name]).base_version)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # Built from a copy of what a source distribution holds: setuptools writes build/ into the tree.
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for name in ("gst_tts", "conf"):
        shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    (path,) = out.glob("gst_tts-*.whl")
    return path


def test_wheel_carries_every_config_and_every_package(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    configs = {f"gst_tts/conf/{p.relative_to(REPO / 'conf').as_posix()}" for p in (REPO / "conf").rglob("*.yaml")}
    assert configs and configs <= names, f"configs missing from the wheel: {sorted(configs - names)}"
    modules = {f"gst_tts/{p.relative_to(REPO / 'gst_tts').as_posix()}" for p in (REPO / "gst_tts").rglob("*.py")}
    assert modules <= names, (
        f"modules missing from the wheel (add their package to pyproject.toml): {sorted(modules - names)}"
    )
    page = {f"gst_tts/serve/static/{p.name}" for p in (REPO / "gst_tts" / "serve" / "static").iterdir()}
    assert "gst_tts/serve/static/index.html" in page and page <= names, (
        f"page files missing from the wheel: {sorted(page - names)}"
    )


def test_installed_wheel_composes_the_training_configs_from_any_folder(wheel, tmp_path):
    target, cwd = tmp_path / "site", tmp_path / "elsewhere"
    cwd.mkdir()
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    # The installed copy comes first on the path, so neither the checkout nor its conf/ is reachable.
    env = {**os.environ, "PYTHONPATH": str(target)}
    where = subprocess.run(
        [sys.executable, "-c", "import gst_tts, gst_tts.conf; print(gst_tts.__file__); print(gst_tts.conf.__file__)"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert all(path.startswith(str(target)) for path in where), where
    job = subprocess.run(
        [
            sys.executable,
            "-m",
            "gst_tts.training.train",
            "--cfg",
            "job",
            "model=tiny",
            "data=demo",
            "data.root=/nonexistent/corpus",
            f"hydra.run.dir={tmp_path / 'run'}",
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    assert job.returncode == 0, job.stderr
    assert "root: /nonexistent/corpus" in job.stdout
    assert "batch_size: 12" in job.stdout  # from conf/data/demo.yaml, read out of the wheel
    job = subprocess.run(
        [
            sys.executable,
            "-m",
            "gst_tts.training.train_vocoder",
            "--cfg",
            "job",
            "vocoder=cpu_small",
            "data.root=/nonexistent/corpus",
            f"hydra.run.dir={tmp_path / 'vocoder'}",
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    assert job.returncode == 0, job.stderr
    assert (
        "generator_kind: spectral" in job.stdout and "channels: 192" in job.stdout
    )  # conf/vocoder/cpu_small.yaml over conf/vocoder_train.yaml
