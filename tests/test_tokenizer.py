from __future__ import annotations

import pytest
from helpers import TOKENIZER
from hypothesis import given, settings
from hypothesis import strategies as st

from model import CharTokenizer, TokenizerError


def test_one_chinese_character_is_one_token() -> None:
    ids = TOKENIZER.encode("猫追狗")
    assert len(ids) == 3 and [TOKENIZER.piece(i) for i in ids] == ["猫", "追", "狗"]


def test_unknown_characters_fall_back_to_utf8_bytes() -> None:
    ids = TOKENIZER.encode("猫😀")
    assert len(ids) == 1 + 4
    assert [TOKENIZER.piece(i) for i in ids[1:]] == ["<0xF0>", "<0x9F>", "<0x98>", "<0x80>"]
    assert TOKENIZER.decode(ids) == "猫😀"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None), max_size=200))
def test_every_string_survives_encode_then_decode(text: str) -> None:
    assert TOKENIZER.decode(TOKENIZER.encode(text)) == text


@pytest.mark.parametrize(
    "text",
    ["", "\x00\x1b[31m", "e\u0301", "👩‍👩‍👧‍👦", "مرحبا بالعالم", "\ud800", "\udfff\ud800", "猫" * 10_000, "\r\n\t"],
)
def test_awkward_strings_round_trip(text: str) -> None:
    assert TOKENIZER.decode(TOKENIZER.encode(text)) == text


def test_bytes_that_are_no_utf8_decode_to_the_replacement_character() -> None:
    assert TOKENIZER.decode([1 + 0xFF, 1 + 0xFE]) == "\ufffd\ufffd"


def test_vocabulary_travels_as_json() -> None:
    again = CharTokenizer.from_json(TOKENIZER.to_json())
    assert again.chars == TOKENIZER.chars and again.vocab_size == TOKENIZER.vocab_size


def test_from_corpus_orders_by_frequency_and_skips_surrogates() -> None:
    tok = CharTokenizer.from_corpus(["aab", "b\ud800a"])
    assert tok.chars == ("a", "b")


@pytest.mark.parametrize("bad", [["ab"], ["a", "a"], [""]])
def test_bad_vocabularies_are_refused(bad: list[str]) -> None:
    with pytest.raises(TokenizerError):
        CharTokenizer(bad)


def test_unknown_ids_are_refused() -> None:
    with pytest.raises(TokenizerError, match="outside the vocabulary"):
        TOKENIZER.decode([TOKENIZER.vocab_size])
    with pytest.raises(TokenizerError):
        CharTokenizer.from_json("{not json")
