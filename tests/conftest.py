"""The tests' fixtures; the helpers they import are in helpers.py."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
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


# The reference tests (marked `reference`) check the model against torch, transformers and TransformerLens, which
# the README's test command does not install; .ci/run then installs the test-ref extra and runs them alone with
# TUTOR_REFERENCE_TESTS=1. A test skipped for want of those libraries must be marked, or no phase would run it; in
# the reference phase, a reference test that skips fails: its libraries are there, so something else is wrong.
REFERENCE_LIBRARIES = re.compile(r"could not import '(torch|transformers|transformer_lens)\b")
REFERENCE_PHASE = os.environ.get("TUTOR_REFERENCE_TESTS") == "1"


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    return str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report)
    marked = item.get_closest_marker("reference") is not None
    if REFERENCE_PHASE and marked:
        report.outcome, report.longrepr = (
            "failed",
            f"a reference test skipped with the test-ref extra installed: {reason}",
        )
    elif not marked and REFERENCE_LIBRARIES.search(reason):
        report.outcome = "failed"
        report.longrepr = f"skipped ({reason}) but not marked @pytest.mark.reference: no CI phase would ever run it"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    outcome = yield
    report: pytest.CollectReport = outcome.get_result()  # type: ignore[attr-defined]
    if REFERENCE_PHASE and report.skipped and REFERENCE_LIBRARIES.search(_skip_reason(report)):
        report.outcome = "failed"
        report.longrepr = f"{collector.nodeid} skipped with the test-ref extra installed: {_skip_reason(report)}"


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
