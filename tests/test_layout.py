"""The package's layering, read off the source: every import of every module, at module level, under
``if TYPE_CHECKING`` and inside functions, of the packages that must not reach upward.

Layers (ARCHITECTURE.md): ``checkpoints`` sits below ``inference`` and ``training``, which both load
models from it; ``analysis`` sits below ``inference`` (the synthesizer measures alignments with it);
``serve`` runs the synthesizer and never trains.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gst_tts.dependencies import torch_free

PACKAGE = Path(__file__).resolve().parents[1] / "gst_tts"

#: package -> the packages none of its modules may import, anywhere in the module.
FORBIDDEN = {
    "inference": ("gst_tts.training",),
    "analysis": ("gst_tts.training", "gst_tts.inference"),
    "serve": ("gst_tts.training",),
    "checkpoints": ("gst_tts.training", "gst_tts.inference"),
    "export": ("gst_tts.training",),
    # The torch-free runtime: nothing that imports torch (what it shares lives in torch-free modules).
    "runtime": (
        "torch",
        "torchaudio",
        "librosa",
        "gst_tts.model",
        "gst_tts.audio",
        "gst_tts.checkpoints",
        "gst_tts.data",
        "gst_tts.training",
        "gst_tts.export",
        "gst_tts.inference.synthesizer",
        "gst_tts.inference.style",
    ),
}

#: At most this many modules at the top of gst_tts/ (``__init__`` and ``__main__`` aside): the rest live in packages.
MAX_TOP_LEVEL_MODULES = 6


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every import in a file, wherever it stands; ``from gst_tts import x``
    counts as ``gst_tts.x`` and a relative import is resolved against the file's package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parent + ([base] if base else []))
            found += [(node.lineno, base)] + [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def violations(package: str, forbidden: tuple[str, ...]) -> list[str]:
    """``file:line imports module`` for each import of a forbidden package in ``gst_tts/<package>``."""
    root = PACKAGE / package
    return [
        f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}"
        for path in sorted(root.rglob("*.py"))
        for line, module in imported_modules(path)
        if any(module == f or module.startswith(f + ".") for f in forbidden)
        # The runtime may import the torch-free modules of a forbidden package (gst_tts.audio.vocoders.phase).
        and not (package == "runtime" and torch_free(_module_of(module)))
    ]


def _module_of(name: str) -> str:
    """The module an imported name lives in: ``name`` itself when it is a module or package of
    gst_tts, else (``from m import f`` lists ``m.f``) its parent."""
    path = PACKAGE.parent.joinpath(*name.split("."))
    return name if path.with_suffix(".py").is_file() or path.is_dir() else name.rpartition(".")[0]


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_lower_layers_do_not_import_upper_ones(package):
    assert (PACKAGE / package).is_dir()
    assert violations(package, FORBIDDEN[package]) == []


def test_the_walk_sees_imports_inside_functions_and_type_checking_blocks(tmp_path, monkeypatch):
    pkg = tmp_path / "gst_tts" / "analysis"
    pkg.mkdir(parents=True)
    (pkg / "m.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from gst_tts.inference.results import SynthesisResult\n"
        "def f():\n    from gst_tts import training\n    import gst_tts.inference.synthesizer\n"
        "def g():\n    from ..inference import style\n"
    )
    monkeypatch.setattr(f"{__name__}.PACKAGE", tmp_path / "gst_tts")
    found = violations("analysis", FORBIDDEN["analysis"])
    assert sorted({int(v.split(":")[1].split()[0]) for v in found}) == [3, 5, 6, 8]


def test_top_level_modules_are_few():
    modules = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert len(modules) <= MAX_TOP_LEVEL_MODULES, modules


def private_imports(path: Path) -> list[str]:
    """``line: name from module`` for each ``from gst_tts… import _name`` in a file: a private name
    belongs to its own module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        f"{node.lineno}: {alias.name} from {'.' * node.level}{node.module or ''}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == "gst_tts")
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]


def test_no_private_name_is_imported_across_modules():
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{hit}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for hit in private_imports(path)
    ]
    assert found == [], "\n".join(found)


def test_a_private_import_is_found(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from gst_tts.inference.style_spec import _hidden, public\nfrom .sibling import _other\n")
    assert private_imports(probe) == ["1: _hidden from gst_tts.inference.style_spec", "2: _other from .sibling"]


def test_the_inference_modules_import_no_circle():
    """Module-level and in-function imports among gst_tts/inference/*.py form no cycle."""
    graph = {}
    for path in sorted((PACKAGE / "inference").glob("*.py")):
        name = f"gst_tts.inference.{path.stem}"
        graph[name] = {m for _, m in imported_modules(path) if m.startswith("gst_tts.inference.") and m != name}
    graph = {k: {m for m in v if m in graph} for k, v in graph.items()}  # modules, not the names imported from them
    done, path_stack = set(), []

    def visit(node: str) -> None:
        if node in path_stack:
            raise AssertionError("import circle: " + " → ".join(path_stack[path_stack.index(node) :] + [node]))
        if node in done:
            return
        path_stack.append(node)
        for nxt in sorted(graph[node]):
            visit(nxt)
        path_stack.pop()
        done.add(node)

    for node in sorted(graph):
        visit(node)
