import pickle
import warnings

import pytest
import torch

from gst_tts.errors import GstTtsError, TextError
from gst_tts.text.symbols import DroppedCharacterWarning, SymbolTable


@pytest.fixture(scope="module")
def table():
    return SymbolTable()


def test_default_table_layout(table):
    assert table.pad_id == 0 and table.eos_id == 1
    assert table.symbols[:2] == ("_", "~")
    assert " " in table.symbols and "a" in table.symbols and "z" in table.symbols
    assert len(table) == 2 + len("!'\"(),-.:;? ") + 26


def test_encode_ends_with_eos(table):
    ids = table.encode("Hello world.")
    assert ids.dtype == torch.long and ids.dim() == 1
    assert ids[-1].item() == table.eos_id
    assert table.pad_id not in ids.tolist()[:-1]
    assert len(ids) == len("hello world.") + 1


def test_decode_round_trip(table):
    text = "Dr. Smith paid $5 (twice)!"
    assert table.decode(table.encode(text)) == table.clean(text)
    assert table.decode(table.encode(text)) == "doctor smith paid five dollars (twice)!"


def test_decode_skips_pad_and_eos(table):
    ids = table.encode("hi").tolist()
    assert table.decode([0, *ids, 0, 0]) == "hi"


def test_decode_out_of_range(table):
    with pytest.raises(ValueError):
        table.decode([len(table)])


def test_dropped_characters_warn_once(table):
    with pytest.warns(DroppedCharacterWarning) as record:
        ids = table.encode("a#b@c#d")
    assert len(record) == 1
    message = str(record[0].message)
    assert "'#'" in message and "'@'" in message
    assert table.decode(ids) == "abcd"


def test_pad_and_eos_characters_in_text_are_dropped(table):
    with pytest.warns(DroppedCharacterWarning, match="'_', '~'"):
        ids = table.encode("a_b~c")
    assert ids.tolist()[:-1] == table.encode("abc").tolist()[:-1]


def test_clean_text_does_not_warn(table):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table.encode("A perfectly ordinary sentence, isn't it?")


def test_warning_quotes_truncated_text(table):
    with pytest.warns(DroppedCharacterWarning) as record:
        table.encode("#" + "x" * 200)
    message = str(record[0].message)
    assert "…" in message and len(message) < 150


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_text_raises(table, text):
    with pytest.raises(TextError, match="empty"):
        table.encode(text)


def test_text_without_usable_symbols_raises(table):
    with pytest.raises(TextError) as info:
        table.encode("### @@@")
    assert "'#'" in str(info.value) and "\n" not in str(info.value)


def test_punctuation_only_is_allowed(table):
    ids = table.encode("?!")
    assert table.decode(ids) == "?!"


def test_to_dict_from_dict_round_trip(table):
    d = table.to_dict()
    assert d == {"symbols": list(table.symbols), "cleaner": "english"}
    assert all(type(s) is str for s in d["symbols"])
    restored = SymbolTable.from_dict(pickle.loads(pickle.dumps(d)))
    assert restored == table
    text = "On May 22nd, 1999, 50% of St. Louis paid $3.50."
    assert torch.equal(restored.encode(text), table.encode(text))


def test_to_dict_loads_with_weights_only(tmp_path, table):
    path = tmp_path / "table.pt"
    torch.save({"symbols": table.to_dict()}, path)
    loaded = torch.load(path, weights_only=True)
    assert SymbolTable.from_dict(loaded["symbols"]) == table


def test_from_dict_rejects_malformed():
    with pytest.raises(GstTtsError):
        SymbolTable.from_dict({"symbols": ["_", "~", "a"]})


def test_custom_symbol_list():
    table = SymbolTable(["<", ">", "a", "b", " "], cleaner="basic")
    assert len(table) == 5 and table.cleaner == "basic"
    assert table.encode("Ab ba").tolist() == [2, 3, 4, 3, 2, 1]
    assert table.decode([2, 4, 3, 1, 0]) == "a b"
    with pytest.warns(DroppedCharacterWarning, match="'c'"):
        assert table.encode("abc").tolist() == [2, 3, 1]


def test_basic_cleaner_keeps_digits_which_get_dropped():
    table = SymbolTable(cleaner="basic")
    with pytest.warns(DroppedCharacterWarning, match="'4', '2'"):
        assert table.decode(table.encode("42 apples")) == " apples"


@pytest.mark.parametrize(
    "symbols",
    [["_", "~"], ["_", "~", "ab"], ["_", "~", "a", "a"]],
)
def test_bad_symbol_lists_rejected(symbols):
    with pytest.raises(GstTtsError):
        SymbolTable(symbols)


def test_unknown_cleaner_rejected():
    with pytest.raises(GstTtsError, match="valid names"):
        SymbolTable(cleaner="nope")
