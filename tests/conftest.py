from __future__ import annotations

import itertools
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import model
from model import GPT, CharTokenizer, GPTConfig

CHARS = list("猫追狗的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可abcdefgh ,.")
TOKENIZER = CharTokenizer(CHARS)

VARIANTS = [
    dict(positional=pos, norm=norm, residual=residual, causal=causal)
    for pos, norm, residual, causal in itertools.product(
        ("sinusoidal", "learned", "rope", "none"), ("pre", "post", "none"), (True, False), (True, False)
    )
]


def variant_id(variant: dict) -> str:
    return "-".join(
        [
            variant["positional"],
            variant["norm"] + "norm",
            "res" if variant["residual"] else "nores",
            "causal" if variant["causal"] else "full",
        ]
    )


def small_config(**changes: object) -> GPTConfig:
    base = dict(vocab_size=TOKENIZER.vocab_size, n_ctx=16, d_model=16, n_heads=2, n_layers=2, d_mlp=32)
    return GPTConfig(**{**base, **changes})


def random_params(config: GPTConfig, seed: int = 0, scale: float = 0.3) -> dict[str, np.ndarray]:
    """Weights big enough that every sublayer changes the stream visibly (GPT-2's init barely does)."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in model.parameter_shapes(config).items():
        value = rng.normal(0.0, scale, shape)
        if name.endswith(".g"):
            value = 1.0 + value
        params[name] = value.astype(np.float32)
    return params


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


@pytest.fixture(scope="session")
def tiny() -> GPT:
    return model.load("tiny")


def run_tutor(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`tutor ARGS` as a learner runs it: a fresh process, in another folder, UTF-8 output."""
    return subprocess.run(
        [sys.executable, "-m", "tutor", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})},
    )
