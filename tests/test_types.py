"""The type checker, as CI runs it: mypy on the files and with the settings of pyproject.toml's [tool.mypy]
(model/: every function typed, bodies checked, no `type: ignore` left that is no longer needed)."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from model.config import ConfigChanges, GPTConfig

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_finds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    api = pytest.importorskip("mypy.api", reason="mypy is not installed (it comes with the test extra: .[test])")
    monkeypatch.chdir(ROOT)  # mypy reads pyproject.toml, and keeps its cache in .mypy_cache, from here
    report, errors, status = api.run([])
    assert status == 0, f"mypy found problems (exit status {status}):\n{report}{errors}"


def test_the_config_changes_name_every_field_of_the_config_with_its_type() -> None:
    """`GPT.with_config(**changes)` is typed by ConfigChanges: a field added to GPTConfig belongs there too."""
    assert typing.get_type_hints(ConfigChanges) == typing.get_type_hints(GPTConfig)
    assert ConfigChanges.__optional_keys__ == set(typing.get_type_hints(GPTConfig))
