"""GPT-2's byte-level BPE, through the `tokenizers` package (the extra `gpt2`), as a `Tokenizer`.

Byte-level BPE first writes every byte of the text as one printable character (a space becomes
`Ġ`, a newline `Ċ`), then merges frequent pairs: " the" is one token, spelt `Ġthe` in the
vocabulary. `piece` turns the spelling back into the text it stands for, so the app shows " the"
(and marks the space) instead of `Ġthe`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any

from model.tokenizer import END_OF_TEXT, TokenizerError

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@cache
def byte_decoder() -> dict[str, int]:
    """GPT-2's byte ↔ character table, reversed: `Ġ` → 0x20. Printable bytes stand for themselves;
    the others (controls, space, 0x7F–0xA0, 0xAD) take the characters from U+0100 on, in order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars = list(printable)
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


class BPETokenizer:
    """A byte-level BPE tokenizer (a `tokenizers.Tokenizer` inside) with the model's vocabulary size.

    `vocab_size` is the size of the model's embedding, which may be padded past the tokenizer's
    own vocabulary: those ids decode to nothing and show as `<unused:N>`.
    """

    def __init__(self, inner: Any, vocab_size: int | None = None, end_of_text: int | None = None) -> None:
        self.inner = inner  # a tokenizers.Tokenizer
        own = int(inner.get_vocab_size(with_added_tokens=True))
        self._own_size = own
        self._vocab_size = own if vocab_size is None else vocab_size
        if self._vocab_size < own:
            raise TokenizerError(f"the tokenizer has {own} tokens but the model only {self._vocab_size} embeddings")
        if end_of_text is None:
            end_of_text = inner.token_to_id(END_OF_TEXT)
        self._end_of_text = int(end_of_text) if end_of_text is not None else 0
        self._special = {int(i) for i, t in inner.get_added_tokens_decoder().items() if t.special}
        self._pieces: dict[int, str] = {}

    @property
    def vocab_size(self) -> int:
        return self._vocab_size

    @property
    def end_of_text(self) -> int:
        return self._end_of_text

    def encode(self, text: str) -> list[int]:
        # `tokenizers` takes only valid Unicode; a lone surrogate (a broken paste) has no UTF-8 bytes to
        # give GPT-2's byte alphabet, so it becomes U+FFFD, as a UTF-8 decoder would make it
        text = _LONE_SURROGATE.sub("\ufffd", text)
        return list(self.inner.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: Iterable[int]) -> str:
        known = [int(t) for t in ids if 0 <= int(t) < self._own_size]
        return self.inner.decode(known, skip_special_tokens=False)

    def spelling(self, token: int) -> str:
        """The token as the vocabulary spells it: `Ġthe`."""
        self._check(token)
        return self.inner.id_to_token(token) if token < self._own_size else f"<unused:{token}>"

    def piece(self, token: int) -> str:
        """The text the token stands for: `Ġthe` → " the"; bytes that are only part of a
        character (a Chinese character can take two or three tokens) show as `<0xE7>`."""
        token = int(token)
        cached = self._pieces.get(token)
        if cached is None:
            cached = self._pieces[token] = self._piece(token)
        return cached

    def _piece(self, token: int) -> str:
        spelling = self.spelling(token)
        if token >= self._own_size or token in self._special:
            return spelling
        table = byte_decoder()
        if not all(ch in table for ch in spelling):  # an added token that is not byte-level
            return spelling
        text = bytes(table[ch] for ch in spelling).decode("utf-8", "surrogateescape")
        # surrogateescape keeps each undecodable byte b as U+DC00+b: show those as <0xBB>
        return "".join(f"<0x{ord(ch) - 0xDC00:02X}>" if 0xDC80 <= ord(ch) <= 0xDCFF else ch for ch in text)

    def _check(self, token: int) -> None:
        if not 0 <= token < self._vocab_size:
            raise TokenizerError(f"token id {token} is outside the vocabulary (0..{self._vocab_size - 1})")
