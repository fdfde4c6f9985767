"""The environment check that ``import gst_tts`` runs first, so that every entry point
(``gst-tts …``, ``gst-tts-train``, ``python -m gst_tts.training.train``, ``import gst_tts``) ends a broken
install with one line and exit code 2 instead of a traceback from deep inside an import.

torch and torchaudio are separate binary builds that must match: a torchaudio built for another
torch (or another CUDA version) raises at import time. The line names the installed versions and
the pip command that installs the pair the tests ran with (the bounds in ``pyproject.toml``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.metadata as metadata
import importlib.util
from pathlib import Path
import re
import sys
import textwrap
import tomllib

DISTRIBUTION = "gst-tts"

# Imported for real: binary packages that can fail to load beside each other.
_IMPORTED = ("numpy", "torch", "torchaudio", "soundfile")
# Only looked for: importing them costs time on every start, and they have no binary pairing.
_PRESENT = (
    "librosa",
    "scipy",
    "numba",
    "pesq",
    "hydra",
    "omegaconf",
    "matplotlib",
    "tensorboard",
    "tqdm",
    "inflect",
    "unidecode",
    "espeakng_loader",
)
# Module name → distribution name, where they differ.
_DISTRIBUTIONS = {"hydra": "hydra-core", "espeakng_loader": "espeakng-loader"}


def _distribution(module: str) -> str:
    return _DISTRIBUTIONS.get(module, module)


def installed_version(distribution: str) -> str:
    """The installed version of a distribution, or ``"not installed"``."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def declared_requirements() -> dict[str, str]:
    """Distribution name (lower case) → requirement string, as this package declares them."""
    try:
        requires = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:  # a source tree on PYTHONPATH: read its pyproject.toml
        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        requires = tomllib.loads(pyproject.read_text())["project"]["dependencies"] if pyproject.is_file() else []
    specs = {}
    for requirement in requires:
        if "extra ==" in requirement:
            continue
        spec = requirement.split(";")[0].strip()
        name = re.match(r"[A-Za-z0-9_.\-]+", spec).group(0).lower().replace("_", "-")
        specs[name] = spec
    return specs


def _fix_command(distributions: list[str]) -> str:
    specs = declared_requirements()
    wanted = " ".join(f"'{specs.get(d.lower(), d)}'" for d in distributions)
    return f"{sys.executable} -m pip install {wanted}"


def find_problem() -> str | None:
    """One line describing why the hard dependencies cannot be used, or None when they can."""
    for module in _IMPORTED:
        try:
            importlib.import_module(module)
        except Exception as exc:  # a broken binary raises RuntimeError/OSError, not only ImportError
            reason = textwrap.shorten(" ".join(str(exc).split()) or type(exc).__name__, 160, placeholder=" …")
            if module in ("torch", "torchaudio"):
                pair = ["torch", "torchaudio"]
                versions = ", ".join(f"{d} {installed_version(d)}" for d in pair)
                return (
                    f"torch and torchaudio cannot be imported together ({versions}; {module}: {reason}); "
                    f"install the tested pair: {_fix_command(pair)}"
                )
            return (
                f"cannot import {module} {installed_version(_distribution(module))} ({reason}); "
                f"reinstall it: {_fix_command([_distribution(module)])}"
            )
    missing = [m for m in _PRESENT if importlib.util.find_spec(m) is None]
    if missing:
        names = [_distribution(m) for m in missing]
        return f"missing dependencies: {', '.join(names)}; install them: {_fix_command(names)}"
    return None


def require_dependencies() -> None:
    """Exit with one line on stderr and code 2 when the hard dependencies are unusable."""
    problem = find_problem()
    if problem is not None:
        print(f"gst-tts: error: {problem}", file=sys.stderr)
        raise SystemExit(2)


#: Modules that run without torch (the ONNX runtime and what it imports); the check waits until another one is imported.
TORCH_FREE_MODULES = (
    "gst_tts.runtime",
    "gst_tts.text",
    "gst_tts.errors",
    "gst_tts.files",
    "gst_tts.dependencies",
    "gst_tts.inference",
    "gst_tts.inference.decoding",
    "gst_tts.inference.requests",
    "gst_tts.inference.pipeline",
    "gst_tts.inference.results",
    "gst_tts.inference.style_spec",
    "gst_tts.inference.reference_audio",
    "gst_tts.inference.stream_windows",
    "gst_tts.analysis",
    "gst_tts.analysis.alignment",
    "gst_tts.analysis.prosody",
    "gst_tts.analysis.speech_rate",
    "gst_tts.inference.tempo",
    "gst_tts.inference.retiming",
    # The spectral vocoder's numpy half, which the runtime shares with the PyTorch vocoder.
    "gst_tts.audio",
    "gst_tts.audio.stft",
    "gst_tts.audio.vocoders",
    "gst_tts.audio.vocoders.phase",
    "gst_tts.audio.vocoders.harmonic",
    "gst_tts.audio.vocoders.intonation",
    "gst_tts.audio.vocoders.reconstruction",
)
# Packages whose every module is torch-free; of the others only the names listed are.
_TORCH_FREE_PACKAGES = ("gst_tts.runtime", "gst_tts.text")


def torch_free(module: str) -> bool:
    """Whether the gst_tts module named ``module`` imports no torch (see :data:`TORCH_FREE_MODULES`)."""
    return module in TORCH_FREE_MODULES or any(module.startswith(p + ".") for p in _TORCH_FREE_PACKAGES)


def _importing_torch_free_module() -> bool:
    """Whether the package is being imported on the way to a torch-free module (``import
    gst_tts.runtime``): the import system's frames hold the name of the module asked for (no
    public interface says it: pinned in tests/test_pinned_internals.py)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_find_and_load":
            name = frame.f_locals.get("name")
            if isinstance(name, str) and name != "gst_tts":
                return torch_free(name)
        frame = frame.f_back
    return False


class _CheckBeforeTorch(importlib.abc.MetaPathFinder):
    """Runs :func:`require_dependencies` once, before the first gst_tts module that needs torch."""

    def find_spec(self, fullname, path, target=None):
        if fullname.startswith("gst_tts.") and not torch_free(fullname):
            sys.meta_path.remove(self)
            require_dependencies()
        return None  # the ordinary finders import it


def require_dependencies_when_needed() -> None:
    """:func:`require_dependencies` now, or, when the package is imported for a torch-free module
    (the ONNX runtime), before the first module that needs torch: the runtime runs where torch
    is not installed at all."""
    if not _importing_torch_free_module():
        require_dependencies()
    elif not any(isinstance(finder, _CheckBeforeTorch) for finder in sys.meta_path):
        sys.meta_path.insert(0, _CheckBeforeTorch())
