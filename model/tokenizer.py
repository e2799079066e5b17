"""Tokenizers: what every tokenizer offers the model (`Tokenizer`), and the shipped models' own,
one token per character with UTF-8 bytes as the fallback, so every string survives the trip.

GPT-2 checkpoints bring their byte-level BPE instead (`model.bpe.BPETokenizer`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

END_OF_TEXT = "<|endoftext|>"
N_BYTES = 256
_FIRST_CHAR_ID = 1 + N_BYTES  # id 0 is <|endoftext|>, ids 1..256 are the bytes 0x00..0xFF


class TokenizerError(ValueError):
    """A vocabulary or token id the tokenizer cannot use."""


@runtime_checkable
class Tokenizer(Protocol):
    """What the model, the trace and the app need from a tokenizer.

    `piece(id)` is the text one token stands for, readable on its own (a space is a space, a
    byte that is only part of a character shows as `<0xE7>`); `decode` joins pieces losslessly.
    """

    @property
    def vocab_size(self) -> int: ...

    @property
    def end_of_text(self) -> int: ...

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: Iterable[int]) -> str: ...

    def piece(self, token: int) -> str: ...


class CharTokenizer:
    """A character-level tokenizer: '猫追狗' is three tokens, one per character.

    Ids: 0 is `<|endoftext|>` (it separates documents in training), 1–256 are raw bytes,
    then one id per character of the vocabulary. A character outside the vocabulary is
    written as its UTF-8 bytes (lone surrogates included), so `decode(encode(s)) == s`
    for every Python string.
    """

    def __init__(self, chars: Sequence[str]) -> None:
        for ch in chars:
            if not isinstance(ch, str) or len(ch) != 1:
                raise TokenizerError(f"vocabulary entries must be single characters, got {ch!r}")
        if len(set(chars)) != len(chars):
            raise TokenizerError("vocabulary has repeated characters")
        self.chars: tuple[str, ...] = tuple(chars)
        self._char_to_id = {ch: _FIRST_CHAR_ID + i for i, ch in enumerate(self.chars)}
        # every token's piece, by id: a trace looks up one per token on every keystroke
        self._pieces = (END_OF_TEXT, *(f"<0x{byte:02X}>" for byte in range(N_BYTES)), *self.chars)

    @classmethod
    def from_corpus(cls, texts: Iterable[str], min_count: int = 1) -> CharTokenizer:
        """Every character seen at least `min_count` times, most frequent first."""
        counts = Counter(ch for text in texts for ch in text)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        return cls([ch for ch, n in ranked if n >= min_count and not _is_surrogate(ch)])

    @property
    def vocab_size(self) -> int:
        return _FIRST_CHAR_ID + len(self.chars)

    @property
    def end_of_text(self) -> int:
        return 0

    def encode(self, text: str) -> list[int]:
        ids: list[int] = []
        for ch in text:
            token = self._char_to_id.get(ch)
            if token is None:
                ids.extend(1 + byte for byte in ch.encode("utf-8", "surrogatepass"))
            else:
                ids.append(token)
        return ids

    def decode(self, ids: Iterable[int]) -> str:
        pieces: list[str] = []
        pending = bytearray()  # consecutive byte tokens decode together
        for token in ids:
            token = int(token)
            if 1 <= token <= N_BYTES:
                pending.append(token - 1)
                continue
            if pending:
                pieces.append(_decode_bytes(pending))
                pending.clear()
            pieces.append(self.piece(token))
        if pending:
            pieces.append(_decode_bytes(pending))
        return "".join(pieces)

    def piece(self, token: int) -> str:
        """The text one token stands for; a lone byte shows as `<0xE7>`."""
        if 0 <= token < len(self._pieces):
            return self._pieces[token]
        raise TokenizerError(f"token id {token} is outside the vocabulary (0..{self.vocab_size - 1})")

    def to_json(self) -> str:
        return json.dumps({"type": "char", "chars": "".join(self.chars)}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> CharTokenizer:
        try:
            data = json.loads(text)
            chars = data["chars"]
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise TokenizerError(f"tokenizer description is unreadable: {error}") from None
        if data.get("type") != "char" or not isinstance(chars, str):
            raise TokenizerError("tokenizer description is not a character vocabulary")
        return cls(list(chars))


def _is_surrogate(ch: str) -> bool:
    return 0xD800 <= ord(ch) <= 0xDFFF


def _decode_bytes(data: bytes | bytearray) -> str:
    """UTF-8 back to text; lone surrogates come back too; bytes that are no UTF-8 at all become �."""
    try:
        return bytes(data).decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return bytes(data).decode("utf-8", "replace")
