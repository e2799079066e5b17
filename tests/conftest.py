"""The tests' fixtures; the helpers they import are in helpers.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import TOKENIZER, random_params, small_config

import model
import tutor
from model import GPT
from tutor.progress import ProgressStore

# tutor/bench/ (python -m tutor.bench) is a checkout's: the wheel leaves it out. Where the suite tests an install,
# the checkout's tutor/ is appended to the package's path, after the install's, so that only what the install
# lacks (the benchmark) comes from the checkout and every other module is still the installed one
_CHECKOUT_TUTOR = str(Path(__file__).resolve().parent.parent / "tutor")
if _CHECKOUT_TUTOR not in tutor.__path__:
    tutor.__path__.append(_CHECKOUT_TUTOR)


@pytest.fixture
def make_gpt() -> Callable[..., GPT]:
    def make(seed: int = 0, scale: float = 0.3, **changes: object) -> GPT:
        config = small_config(**changes)
        return GPT(config, random_params(config, seed, scale), TOKENIZER, name="test")

    return make


@pytest.fixture(autouse=True)
def exercises_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test's exercise screens and `tutor exercises` write here, never into the learner's own folder."""
    folder = tmp_path / "exercises-home"
    monkeypatch.setenv("TUTOR_EXERCISES_DIR", str(folder))
    return folder


@pytest.fixture(autouse=True)
def no_terminal_size_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest-xdist's workers (`pytest -n 2`) start with COLUMNS=80 and LINES=24 set: a `tutor` spawned in a
    pseudo-terminal of 120×40 would take its size from them, not from its terminal. Tests see no such variables."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(autouse=True)
def no_teacher_lessons(monkeypatch: pytest.MonkeyPatch) -> None:
    """A TUTOR_LESSONS in the shell that runs the suite must not change the lessons every test expects."""
    monkeypatch.delenv("TUTOR_LESSONS", raising=False)


@pytest.fixture(scope="session")
def tiny() -> GPT:
    return model.load("tiny")


@pytest.fixture
def store(tmp_path: Path) -> ProgressStore:
    """A progress file of the test's own (the learner's is never touched)."""
    return ProgressStore(tmp_path / "state" / "progress.json")
