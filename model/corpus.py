"""The training text: the project's own lessons, topped up with the docstrings Python ships,
frozen as data in `model/data/corpus.jsonl.gz` so that it never moves.

The snapshot holds, nothing downloaded:

1. the lessons, `content/zh/*.md` and `content/en/*.md` as they were when it was taken, one document each;
2. the docstrings of Python 3.11.7's standard library, public top-level modules (`<stdlib>/*.py`,
   not `_private` ones, not `this.py`'s rot13), read with `ast` without importing anything: one
   document per module, its module, class and function docstrings joined by blank lines.

Editing a lesson changes nothing here, and another Python gives the same text: the shipped models
are what `tutor train` makes on any supported Python. `scripts/freeze_corpus.py` takes a new
snapshot (from `lesson_documents` and `stdlib_documents`), which means retraining every model.
`load_corpus(folder)` trains on another lessons folder instead, with the snapshot's docstrings.

Split: the first 90% of every document's characters trains, the last 10% validates, so both
halves see every source and no text is in both. Each half is one token stream: the documents'
parts in order, separated by `<|endoftext|>`. The vocabulary is every character of the corpus
(and printable ASCII, so anything typed on a keyboard is one token), most frequent first.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import json
import string
import sysconfig
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from model.tokenizer import CharTokenizer

VALIDATION_FRACTION = 0.1
LESSON_LANGUAGES = ("zh", "en")
FROZEN_CORPUS = Path(__file__).resolve().parent / "data" / "corpus.jsonl.gz"
STDLIB_PREFIX = "stdlib/"


class CorpusError(Exception):
    """A corpus that cannot be read or is too small to train on; the message says which file."""


@dataclass(frozen=True)
class Document:
    name: str
    text: str

    def split(self, validation_fraction: float = VALIDATION_FRACTION) -> tuple[str, str]:
        """(train, validation): the last `validation_fraction` of the characters validates."""
        cut = len(self.text) - round(len(self.text) * validation_fraction)
        return self.text[:cut], self.text[cut:]


@dataclass
class Corpus:
    """Documents, their tokenizer, and the train and validation token streams (int32)."""

    documents: list[Document]
    tokenizer: CharTokenizer
    train: np.ndarray
    validation: np.ndarray
    sources: list[str] = field(default_factory=list)

    def fingerprint(self) -> str:
        """A hash of both token streams and the vocabulary: a resumed run must see the same corpus."""
        digest = hashlib.sha256(self.tokenizer.to_json().encode())
        digest.update(self.train.tobytes())
        digest.update(self.validation.tobytes())
        return digest.hexdigest()[:16]

    def describe(self) -> dict[str, object]:
        return {
            "sources": self.sources,
            "documents": len(self.documents),
            "characters": sum(len(d.text) for d in self.documents),
            "vocab_size": self.tokenizer.vocab_size,
            "train_tokens": int(self.train.size),
            "validation_tokens": int(self.validation.size),
            "validation_split": f"last {VALIDATION_FRACTION:.0%} of each document",
            "fingerprint": self.fingerprint(),
        }


def lesson_documents(content_dir: Path) -> list[Document]:
    """Every lesson in `content_dir/zh` and `content_dir/en`, in a stable order."""
    if not content_dir.is_dir():
        raise CorpusError(f"{content_dir}: no such lessons folder")
    documents = []
    for lang in LESSON_LANGUAGES:
        for path in sorted((content_dir / lang).glob("*.md")):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
                raise CorpusError(f"{path}: cannot read: {reason}") from None
            if text.strip():
                documents.append(Document(f"{lang}/{path.name}", text))
    return documents


def stdlib_documents() -> list[Document]:
    """The docstrings of the running Python's standard library, public top-level modules, one document
    per module: what `scripts/freeze_corpus.py` puts in the snapshot (training never reads them live)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    documents = []
    for path in sorted(stdlib.glob("*.py")):
        if path.name.startswith("_") or path.name == "this.py":
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue  # a broken file in someone's Python is no reason to stop
        docstrings = [
            ast.get_docstring(node)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        text = "\n\n".join(d for d in docstrings if d)
        if text:
            documents.append(Document(f"stdlib/{path.stem}", text))
    return documents


def build_corpus(documents: list[Document], sources: list[str] | None = None) -> Corpus:
    """Split every document, build the vocabulary, and encode both halves into token streams."""
    if not documents:
        raise CorpusError("the corpus is empty: no lessons found and no other text allowed")
    tokenizer = CharTokenizer.from_corpus([string.printable, *(d.text for d in documents)])
    halves = [d.split() for d in documents]
    return Corpus(
        documents,
        tokenizer,
        _stream(tokenizer, [train for train, _ in halves]),
        _stream(tokenizer, [val for _, val in halves]),
        sources or [],
    )


def _stream(tokenizer: CharTokenizer, texts: list[str]) -> np.ndarray:
    ids: list[int] = []
    for text in texts:
        ids.extend(tokenizer.encode(text))
        ids.append(tokenizer.end_of_text)
    return np.asarray(ids, dtype=np.int32)


def frozen_documents(path: Path = FROZEN_CORPUS) -> tuple[list[Document], str]:
    """The snapshot's documents in their order (the lessons, then `stdlib/<module>` docstrings), and
    the version of the Python whose docstrings it holds (its first line says)."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            header, *rows = [json.loads(line) for line in lines]
        return [Document(row["name"], row["text"]) for row in rows], header["python"]
    except FileNotFoundError:
        raise CorpusError(f"{path}: the frozen corpus is missing (reinstall tutor)") from None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        raise CorpusError(f"{path}: the frozen corpus is damaged ({error})") from None


def load_corpus(content_dir: Path | None = None, *, stdlib_text: bool = True) -> Corpus:
    """The frozen snapshot (lessons, then with `stdlib_text` the docstrings); or, given `content_dir`,
    the lessons in that folder instead of the snapshot's, with the snapshot's docstrings."""
    snapshot, python = frozen_documents()
    docstrings = [d for d in snapshot if d.name.startswith(STDLIB_PREFIX)]
    if content_dir is None:
        lessons = [d for d in snapshot if not d.name.startswith(STDLIB_PREFIX)]
        sources = [f"lessons as frozen in model/data/{FROZEN_CORPUS.name}: {len(lessons)} files"]
    else:
        lessons = lesson_documents(content_dir)
        sources = [f"lessons ({content_dir}/{{zh,en}}/*.md): {len(lessons)} files"]
    documents = list(lessons)
    if stdlib_text:
        sources.append(f"Python {python} standard-library docstrings, frozen: {len(docstrings)} modules")
        documents += docstrings
    return build_corpus(documents, sources)


def validation_windows(stream: np.ndarray, n_ctx: int, max_windows: int) -> tuple[np.ndarray, np.ndarray]:
    """Fixed (inputs, targets) `[windows, n_ctx]` over the validation stream: back-to-back windows,
    each target predicted once; if there are more than `max_windows`, an evenly spaced subset.
    """
    count = (stream.size - 1) // n_ctx
    if count < 1:
        raise CorpusError(f"the validation text has {stream.size} tokens, fewer than a window of {n_ctx + 1}")
    chosen = np.linspace(0, count - 1, min(count, max_windows)).round().astype(np.int64)
    starts = chosen * n_ctx
    windows = stream[starts[:, None] + np.arange(n_ctx + 1)]
    return windows[:, :-1], windows[:, 1:]


def ngram_baselines(
    train: np.ndarray, inputs: np.ndarray, targets: np.ndarray, vocab_size: int, smoothing: float = 1.0
) -> dict[str, float]:
    """Validation cross-entropy (nats per token) of two models counted on the train stream,
    with add-k smoothing over the whole vocabulary (k = `smoothing`, add-one by default):

        unigram  p(t)     = (c(t) + k) / (N + k·V)
        bigram   p(t | s) = (c(s t) + k) / (c(s) + k·V)

    on the same (previous token, next token) pairs the model's validation loss uses.
    """
    v = vocab_size
    unigram_counts = np.bincount(train, minlength=v).astype(np.float64)
    p_unigram = (unigram_counts[targets] + smoothing) / (train.size + smoothing * v)

    pair_keys, pair_counts = np.unique(train[:-1].astype(np.int64) * v + train[1:], return_counts=True)
    wanted = inputs.astype(np.int64).reshape(-1) * v + targets.reshape(-1)
    where = np.clip(np.searchsorted(pair_keys, wanted), 0, pair_keys.size - 1)
    pair = np.where(pair_keys[where] == wanted, pair_counts[where], 0).astype(np.float64)
    previous = np.bincount(train[:-1], minlength=v).astype(np.float64)[inputs.reshape(-1)]
    p_bigram = (pair + smoothing) / (previous + smoothing * v)
    return {"unigram": float(-np.log(p_unigram).mean()), "bigram": float(-np.log(p_bigram).mean())}
