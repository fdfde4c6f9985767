"""``gst-tts phonemize``: the symbols the model reads for a text, one line per text, in any espeak-ng
language or as a checkpoint reads it (its frontend, language and symbol table); every bad input is
one line with exit code 2; without a checkpoint the command imports no torch."""

from __future__ import annotations

import os
from pathlib import Path
import subprocess
import sys

from conftest import TINY_MODEL
import pytest
import torch

from gst_tts.audio.features import AudioConfig, MelStats
from gst_tts.checkpoints.acoustic import checkpoint_payload, save_checkpoint
from gst_tts.cli import main
from gst_tts.model import GSTTacotron
from gst_tts.text.frontends import PhonemeFrontend
from gst_tts.text.phonemes import phonemize
from gst_tts.text.symbols import SymbolTable

CORPUS = ["Hello, world!", "The quick brown fox jumps over the lazy dog."]
CORPUS_SYMBOLS = [phonemize(text, "en-us") for text in CORPUS]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["phonemize", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(capsys, *argv: str) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "", (code, out, err)
    assert err.count("\n") == 1 and err.startswith("gst-tts phonemize: error: "), err
    return err


@pytest.fixture(scope="module")
def phoneme_checkpoint(tmp_path_factory) -> Path:
    """An untrained tiny model whose symbol table is en-us phonemes of :data:`CORPUS`."""
    symbols = SymbolTable.for_corpus(PhonemeFrontend("en-us"), CORPUS)
    config = dict(TINY_MODEL, n_symbols=len(symbols), n_mels=80)
    return save_checkpoint(
        tmp_path_factory.mktemp("phonemes") / "phonemes.pt",
        checkpoint_payload(
            model_state=GSTTacotron(**config).state_dict(),
            model_config=config,
            symbols=symbols,
            audio_config=AudioConfig(),
            mel_stats=MelStats(torch.full((80,), -5.0), torch.full((80,), 2.0)),
            step=0,
        ),
    )


def test_positional_text_in_english_and_german(capsys):
    assert run(capsys, "Hello, world!") == (0, "həlˈoʊ, wˈɜːld!\n", "")
    code, out, _ = run(capsys, "Guten Tag, Welt!", "--language", "de")
    assert code == 0 and out == phonemize("Guten Tag, Welt!", "de") + "\n"
    assert out.startswith("ɡˈuːtən tˈɑːk,")


def test_numbers_are_spelled_out_and_a_pronunciation_is_kept_as_written(capsys):
    code, out, _ = run(capsys, "--text", "I met {ɡˈʊðrʌn} at 5.")
    assert code == 0 and out == "ˈaɪ mˈɛt ɡˈʊðrʌn æt fˈaɪv.\n"


def test_a_text_file_gives_one_line_per_non_blank_line(capsys, tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("Hello.\n\n  Guten Tag.  \n", encoding="utf-8")
    code, out, _ = run(capsys, "--text-file", str(path), "--language", "en-gb")
    assert code == 0
    assert out.splitlines() == [phonemize("Hello.", "en-gb"), phonemize("Guten Tag.", "en-gb")]


def test_the_language_list_names_espeak_ng_voices(capsys):
    code, out, _ = run(capsys, "--list-languages")
    rows = dict(line.split(maxsplit=1) for line in out.splitlines())
    assert code == 0 and rows["de"] == "German" and rows["en-us"] == "English (America)"


@pytest.mark.parametrize(
    "argv, words",
    [
        (["Hi.", "--language", "xx-nowhere"], ["no language 'xx-nowhere'"]),
        (["a {b"], ["unmatched '{'"]),
        (["Hi.", "--text", "Ho."], ["TEXT and --text"]),
        (["   "], ["empty"]),
        ([], ["give a text"]),
        (["--text-file", "missing.txt"], ["missing.txt", "not found"]),
        (["Hi.", "--list-languages"], ["--list-languages takes no text"]),
    ],
)
def test_bad_input_is_one_line(capsys, argv, words):
    err = one_line_error(capsys, *argv)
    for word in words:
        assert word in err


def test_a_phoneme_checkpoint_reads_its_own_symbols(capsys, phoneme_checkpoint):
    code, out, err = run(capsys, "World, hello!", "--checkpoint", str(phoneme_checkpoint))
    assert (code, err) == (0, "") and out == phonemize("World, hello!", "en-us") + "\n"
    # "ʃ" is no symbol of this corpus: dropped and named, as synthesis drops and names it.
    assert "ʃ" in phonemize("shush", "en-us") and "ʃ" not in "".join(CORPUS_SYMBOLS)
    code, out, err = run(capsys, "shush", "--checkpoint", str(phoneme_checkpoint))
    assert code == 0 and out == phonemize("shush", "en-us").replace("ʃ", "") + "\n"
    assert "dropped characters not in the symbol table: 'ʃ'" in err


def test_a_checkpoint_refuses_an_unknown_phoneme_and_another_language(capsys, phoneme_checkpoint):
    err = one_line_error(capsys, "I met {ʃ}.", "--checkpoint", str(phoneme_checkpoint))
    assert "unknown phoneme 'ʃ' in {ʃ}" in err
    err = one_line_error(capsys, "Hallo.", "--language", "de", "--checkpoint", str(phoneme_checkpoint))
    assert "reads phonemes in en-us" in err
    assert run(capsys, "Hello.", "--language", "en-us", "--checkpoint", str(phoneme_checkpoint))[0] == 0


def test_a_characters_checkpoint_prints_the_cleaned_characters(capsys, tiny_checkpoint):
    code, out, _ = run(capsys, "Dr. Smith paid $5.", "--checkpoint", str(tiny_checkpoint))
    assert code == 0 and out == "doctor smith paid five dollars.\n"
    err = one_line_error(capsys, "Hi.", "--language", "en-us", "--checkpoint", str(tiny_checkpoint))
    assert "reads characters" in err


def test_without_a_checkpoint_no_torch_is_imported(tmp_path):
    # An exit hook on PYTHONPATH reports the modules the process held: -X importtime misses
    # modules imported through importlib.import_module.
    (tmp_path / "sitecustomize.py").write_text(
        "import atexit, sys\n"
        "atexit.register(lambda: print('MODULES ' + ' '.join(sorted(sys.modules)), file=sys.stderr))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, "-m", "gst_tts.cli", "phonemize", "Hello."],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 0 and result.stdout == "həlˈoʊ.\n", result.stderr
    modules = {m for line in result.stderr.splitlines() if line.startswith("MODULES ") for m in line.split()[1:]}
    assert "gst_tts.cli.phonemize" in modules and "gst_tts.text.phonemes" in modules
    assert "torch" not in modules and "gst_tts.cli.args" not in modules
