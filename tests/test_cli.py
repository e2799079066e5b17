"""`tutor trace` and friends, run as a learner runs them: a subprocess, from another folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import run_tutor

import model


def test_trace_json_schema_and_numbers(tmp_path: Path) -> None:
    result = run_tutor("trace", "猫追狗", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert {"model", "tokens", "steps", "next_token"} <= set(doc)
    assert doc["model"] == "tiny"
    assert doc["tokens"] == [
        {"text": ch, "id": model.load("tiny").tokenizer.encode(ch)[0], "position": i} for i, ch in enumerate("猫追狗")
    ]
    gpt = model.load("tiny")
    trace = gpt.run("猫追狗")
    assert [s["name"] for s in doc["steps"]] == [s.name for s in gpt.steps]
    for entry, step in zip(doc["steps"], gpt.steps, strict=True):
        assert {"index", "name", "kind", "hook", "in", "out"} <= set(entry)
        assert entry["index"] == step.index and entry["kind"] == step.kind and entry["hook"] == step.out_hook
        for side, hook in (("in", step.in_hook), ("out", step.out_hook)):
            x = trace[hook].astype(np.float64)
            assert entry[side]["mean"] == pytest.approx(x.mean(-1).tolist(), abs=1e-6)
            assert entry[side]["std"] == pytest.approx(x.std(-1).tolist(), abs=1e-6)
            assert entry[side]["norm"] == pytest.approx(np.linalg.norm(x, axis=-1).tolist(), abs=1e-5)
    x_hat = trace["blocks.0.ln1.hook_xhat"].astype(np.float64)
    assert x_hat.std(-1) == pytest.approx([1.0] * 3, abs=1e-3)  # before γ and β, whatever the weights
    probs = [guess["prob"] for guess in doc["next_token"]]
    assert len(probs) == 5 and probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1
    assert doc["trained"] is True and "untrained" not in result.stderr


def test_trace_says_when_weights_are_untrained(tmp_path: Path) -> None:
    from conftest import TOKENIZER, random_params, small_config

    config = small_config()
    path = tmp_path / "random.safetensors"
    model.save_checkpoint(path, config, random_params(config), TOKENIZER, trained=False)
    result = run_tutor("trace", "猫追狗", "--json", "--model", str(path), cwd=tmp_path)
    assert result.returncode == 0 and json.loads(result.stdout)["trained"] is False
    assert "untrained (random) weights" in result.stderr


def test_trace_table_names_every_step(tmp_path: Path) -> None:
    result = run_tutor("trace", "猫追狗", cwd=tmp_path, env={"COLUMNS": "120"})
    assert result.returncode == 0, result.stderr
    for label in ("Token + position embedding", "Block 3 · LayerNorm 2", "Final LayerNorm", "Unembed"):
        assert label in result.stdout
    assert "next token:" in result.stdout
    zh = run_tutor("trace", "猫追狗", "--lang", "zh", cwd=tmp_path, env={"COLUMNS": "120"})
    assert "第 0 块 · 注意力" in zh.stdout and "下一个词元" in zh.stdout


@pytest.mark.parametrize("text", ["", "\x07\x1b[2J", "👩‍👩‍👧‍👦 مرحبا", "x" * 10_000])
def test_trace_survives_awkward_prompts(tmp_path: Path, text: str) -> None:
    result = run_tutor("trace", text, "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert len(doc["tokens"]) <= 64
    if len(text) > 64:
        assert doc["dropped_tokens"] > 0 and "kept the last 64 tokens" in result.stderr


def test_bad_model_is_one_line_and_nonzero(tmp_path: Path) -> None:
    broken = tmp_path / "broken.safetensors"
    broken.write_bytes(b"\x00" * 3)
    for name in ("no-such-model", str(broken)):
        result = run_tutor("trace", "猫", "--model", name, cwd=tmp_path)
        assert result.returncode == 1
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("tutor: error: ")
        assert "Traceback" not in result.stderr


def test_version_and_help(tmp_path: Path) -> None:
    from tutor import __version__

    assert run_tutor("--version", cwd=tmp_path).stdout.strip() == f"tutor {__version__}"
    assert "trace" in run_tutor("--help", cwd=tmp_path).stdout


def test_console_script_is_installed(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "tutor"
    assert script.exists()
    result = subprocess.run([str(script), "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("tutor ")
