import pytest

from gst_tts.errors import GstTtsError
from gst_tts.text.cleaners import CLEANERS, basic_cleaners, english_cleaners, get_cleaner, whitespace_cleaners


@pytest.mark.parametrize(
    "text, expected",
    [
        ("123", "one hundred twenty-three"),
        ("0", "zero"),
        ("I have 7 cats", "i have seven cats"),
        ("1,000 people", "one thousand people"),
        ("1,999 people", "one thousand nine hundred ninety-nine people"),
        ("1,234,567", "one million two hundred thirty-four thousand five hundred sixty-seven"),
        ("12345", "twelve thousand three hundred forty-five"),
    ],
)
def test_integers(text, expected):
    assert english_cleaners(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1st", "first"),
        ("2nd", "second"),
        ("3rd", "third"),
        ("22nd", "twenty-second"),
        ("the 101st time", "the one hundred first time"),
        ("4TH", "fourth"),
    ],
)
def test_ordinals(text, expected):
    assert english_cleaners(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("3.14", "three point one four"),
        ("0.5", "zero point five"),
        ("1,000.05", "one thousand point zero five"),
        ("2.0.", "two point zero."),
    ],
)
def test_decimals(text, expected):
    assert english_cleaners(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("$5", "five dollars"),
        ("$1", "one dollar"),
        ("$5.50", "five dollars, fifty cents"),
        ("$1.01", "one dollar, one cent"),
        ("$0.05", "five cents"),
        ("$5.00", "five dollars"),
        ("$0", "zero dollars"),
        ("$1,999", "one thousand nine hundred ninety-nine dollars"),
        ("£3", "three pounds"),
        ("£1.50", "one pound, fifty pence"),
        ("€2", "two euros"),
        ("$2.5 million", "two point five million dollars"),
        ("It costs $20.", "it costs twenty dollars."),
    ],
)
def test_currency(text, expected):
    assert english_cleaners(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1999", "nineteen ninety-nine"),
        ("2000", "two thousand"),
        ("2005", "two thousand five"),
        ("1905", "nineteen oh five"),
        ("1900", "nineteen hundred"),
        ("2024", "twenty twenty-four"),
        ("in 1066.", "in ten sixty-six."),
        ("3000", "three thousand"),
        ("999", "nine hundred ninety-nine"),
    ],
)
def test_years(text, expected):
    assert english_cleaners(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("50%", "fifty percent"),
        ("up 2.5 %", "up two point five percent"),
    ],
)
def test_percent(text, expected):
    assert english_cleaners(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Mr. Smith", "mister smith"),
        ("MRS. Smith", "misess smith"),
        ("Dr. Who and Drs. Jones", "doctor who and doctors jones"),
        ("St. Paul", "saint paul"),
        ("Acme Co. Ltd.", "acme company limited"),
        ("John Smith Jr.", "john smith junior"),
        ("Gen. Lee, Capt. Kirk, Sgt. Pepper", "general lee, captain kirk, sergeant pepper"),
        ("Ft. Knox", "fort knox"),
        # No word boundary before the abbreviation: left alone.
        ("taco. burst.", "taco. burst."),
    ],
)
def test_abbreviations(text, expected):
    assert english_cleaners(text) == expected


def test_unicode_to_ascii():
    assert english_cleaners("Café") == "cafe"
    assert english_cleaners("naïve “quotes”") == 'naive "quotes"'


def test_whitespace_and_punctuation():
    assert english_cleaners("  Hello,\t\n  World!  ") == "hello, world!"
    assert english_cleaners("Wait... what?!") == "wait... what?!"


def test_basic_cleaners_leaves_numbers():
    assert basic_cleaners("  Café  No. 5 \n") == "cafe no. 5"


def test_whitespace_cleaners_leave_case_letters_and_numbers_to_the_phonemizer():
    # "u" + combining diaeresis composes to "ü": espeak-ng and the symbol table see one code point.
    assert whitespace_cleaners("  Herr Dr. Mu\u0308ller\tkam um 3.000  Uhr. ") == "Herr Dr. Müller kam um 3.000 Uhr."


def test_get_cleaner():
    assert get_cleaner("english") is english_cleaners
    assert get_cleaner("basic") is basic_cleaners
    assert get_cleaner("whitespace") is whitespace_cleaners
    assert set(CLEANERS) == {"english", "basic", "whitespace"}


def test_get_cleaner_unknown_name_lists_valid_names():
    with pytest.raises(GstTtsError) as info:
        get_cleaner("klingon")
    message = str(info.value)
    assert "klingon" in message and "basic" in message and "english" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    "text, expected",
    [
        ("the 1990s", "the nineteen nineties"),
        ("the 80's", "the eighties"),
        ("1,000th", "one thousandth"),
        ("mp3 and 4x4", "mp three and four x four"),
        ("3.5mm", "three point five mm"),
        # Beyond inflect's named groups: read digit by digit instead of failing.
        ("1" * 40, " ".join(["one"] * 40)),
    ],
)
def test_number_edge_cases(text, expected):
    assert english_cleaners(text) == expected
