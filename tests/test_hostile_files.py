"""Hostile model files: every number a file supplies is bounded and checked against the file's own tensors
before anything sized by it is built, and its text never reaches the terminal as control characters.

Each bad file is refused by `tutor trace --model F` and `tutor --model F` in a process that may not map more
than 1 GiB (an allocation sized by the file fails the test) within seconds, in one line, with exit code 1.
"""

from __future__ import annotations

import json
import os
import resource
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import safetensors.numpy
from helpers import TOKENIZER, random_params, small_config

import model
from model import save_checkpoint
from model.hf_gpt2 import gpt2_config, hf_names
from model.text import printable

MEMORY_LIMIT = 1 << 30
SECONDS = 15.0  # a refusal takes well under a second on a quiet machine; the suite runs beside other work
ESCAPES = "evil\x1b]0;pwned\x07\x1b]52;c;ZWNobyBoaQ==\x07\x1b[31mRED\x9b2J\u202eend"

Header = dict[str, Any]


def rewrite_header(path: Path, mutate: Callable[[Header], None]) -> None:
    """Change a safetensors file's JSON header in place; the tensor bytes after it stay as they are."""
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    mutate(header)
    text = json.dumps(header).encode()  # json.dumps writes Infinity and NaN, as a hostile writer can
    path.write_bytes(struct.pack("<Q", len(text)) + text + data[8 + length :])


def config_change(**changes: object) -> Callable[[Header], None]:
    def mutate(header: Header) -> None:
        config = json.loads(header["__metadata__"]["config"])
        config.update(changes)
        header["__metadata__"]["config"] = json.dumps(config)

    return mutate


def tensor_entry(name: str, **changes: object) -> Callable[[Header], None]:
    def mutate(header: Header) -> None:
        header[name].update(changes)

    return mutate


def hf_config(**changes: object) -> dict[str, object]:
    base = {"model_type": "gpt2", "n_embd": 16, "n_head": 2, "n_layer": 2, "vocab_size": 64, "n_positions": 16}
    return {**base, **changes}


# what the file is, how it is broken, a word the one line must hold
CHECKPOINTS: list[tuple[str, Callable[[Header], None], str]] = [
    ("n_layers 10⁹", config_change(n_layers=10**9), "n_layers"),
    ("n_layers 200, the file holds 2 blocks", config_change(n_layers=200), "n_layers 200"),
    ("n_ctx 10⁹", config_change(n_ctx=10**9), "n_ctx"),
    ("d_model 10⁹", config_change(d_model=10**9), "d_model"),
    ("vocab_size 10⁹", config_change(vocab_size=10**9), "vocab_size"),
    ("pos_base ∞", config_change(pos_base=float("inf")), "pos_base"),
    ("pos_base NaN", config_change(pos_base=float("nan")), "pos_base"),
    ("ln_eps ∞", config_change(ln_eps=float("inf")), "ln_eps"),
    ("ln_eps 10³", config_change(ln_eps=1e3), "ln_eps"),
    ("residual a string", config_change(residual="no"), "residual"),
    ("a config key of escapes", config_change(**{ESCAPES: 1}), "unknown config keys"),
    ("shape [2³², 2³²]", tensor_entry("wte", shape=[2**32, 2**32], data_offsets=[0, 0]), "wte"),
    ("shape of 100 dimensions", tensor_entry("wte", shape=[1] * 100), "dimensions"),
    ("dtype an object", tensor_entry("wte", dtype={}), "dtype"),
    ("a size of 1e999", tensor_entry("wte", shape=[float("inf"), 2]), "malformed"),
]

HF_FOLDERS: list[tuple[str, dict[str, object], str]] = [
    ("activation_function {}", hf_config(activation_function={}), "activation_function"),
    ("layer_norm_epsilon ∞", hf_config(layer_norm_epsilon=float("inf")), "ln_eps"),
    ("layer_norm_epsilon 10⁴⁰⁰", hf_config(layer_norm_epsilon=10**400), "bad config"),
    ("n_layer 10⁹", hf_config(n_layer=10**9), "n_layers"),
    ("n_layer 100, the file holds 2 blocks", hf_config(n_layer=100), "n_layers 100"),
    ("n_positions 10⁹", hf_config(n_positions=10**9), "n_ctx"),
]


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    config = small_config(n_layers=2)
    path = tmp_path / "hostile.safetensors"
    save_checkpoint(path, config, random_params(config), TOKENIZER, trained=True, metadata={"name": "hostile"})
    return path


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def tutor_limited(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    """`tutor ARGS` in a process that cannot map more than 1 GiB, and how long it took."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "OPENBLAS_NUM_THREADS": "1", "TUTOR_STATE_DIR": str(cwd)}
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "tutor", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        preexec_fn=_limited,
    )
    return result, time.monotonic() - start


def assert_refused_in_one_line(path: Path, word: str, cwd: Path) -> None:
    for args in (("trace", "--model", str(path), "猫追狗"), ("--model", str(path))):
        result, seconds = tutor_limited(*args, cwd=cwd)
        lines = result.stderr.splitlines()
        assert result.returncode == 1, (args, result.stderr[-2000:])
        assert len(lines) == 1 and lines[0].startswith("tutor: error: "), (args, result.stderr[-2000:])
        assert "internal error" not in lines[0] and word in lines[0], lines[0]
        assert lines[0] == printable(lines[0]), lines[0]  # no control character reaches the terminal
        assert result.stdout == ""
        assert seconds < SECONDS, (args, seconds)


def test_a_good_file_runs_under_the_same_limits(checkpoint: Path, tmp_path: Path) -> None:
    """The limit is not what refuses the hostile files: a good one runs under it."""
    result, _ = tutor_limited("trace", "--model", str(checkpoint), "猫追狗", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.parametrize(("mutate", "word"), [case[1:] for case in CHECKPOINTS], ids=[c[0] for c in CHECKPOINTS])
def test_a_hostile_checkpoint_is_refused_quickly_in_one_line(
    checkpoint: Path, tmp_path: Path, mutate: Callable[[Header], None], word: str
) -> None:
    rewrite_header(checkpoint, mutate)
    assert_refused_in_one_line(checkpoint, word, tmp_path)


@pytest.mark.parametrize(("config", "word"), [case[1:] for case in HF_FOLDERS], ids=[c[0] for c in HF_FOLDERS])
def test_a_hostile_hugging_face_config_is_refused_quickly_in_one_line(
    tmp_path: Path, config: dict[str, object], word: str
) -> None:
    folder = tmp_path / "gpt2-hostile"
    folder.mkdir()
    good = gpt2_config(folder / "config.json", hf_config())
    params = random_params(good)
    tensors = {hf: params[ours] for hf, ours in hf_names(good).items()}
    safetensors.numpy.save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps(config))
    assert_refused_in_one_line(folder, word, tmp_path)


def test_a_name_of_escape_sequences_reaches_no_terminal(checkpoint: Path, tmp_path: Path) -> None:
    """The name in the metadata retitled the window and wrote the clipboard (OSC 0, OSC 52) from `tutor trace`."""
    rewrite_header(checkpoint, lambda header: header["__metadata__"].update(name=ESCAPES))
    result, _ = tutor_limited("trace", "--model", str(checkpoint), "猫追狗", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "evil]0;pwned" in result.stdout
    assert not any(ch in result.stdout for ch in "\x1b\x07\x9b\u202e")
    assert model.load(checkpoint).name == "evil]0;pwned]52;c;ZWNobyBoaQ==[31mRED2Jend"


def test_printable_keeps_text_and_takes_out_controls() -> None:
    assert printable("猫追狗 tiny\u3000x") == "猫追狗 tiny\u3000x"
    assert printable("a\nb\tc\x1b[2Jd\u2028e\x00") == "a b c[2Jd e"
    assert printable("x" * 100, limit=10) == "x" * 9 + "…"
