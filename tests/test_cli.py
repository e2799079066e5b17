"""`tutor trace` and friends, run as a learner runs them: a subprocess, from another folder."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import run_tutor

import model
from tutor.step_words import step_label


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
        assert entry["index"] == step.index and entry["number"] == step.index + 1  # the app counts from 1
        assert entry["kind"] == step.kind and entry["hook"] == step.out_hook
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
    from helpers import TOKENIZER, random_params, small_config

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


@pytest.mark.parametrize("text", ["\x07\x1b[2J", "👩‍👩‍👧‍👦 مرحبا", " ", "x" * 10_000])
def test_trace_survives_awkward_prompts(tmp_path: Path, text: str) -> None:
    result = run_tutor("trace", text, "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert len(doc["tokens"]) <= 64
    if len(text) > 64:
        assert doc["dropped_tokens"] > 0 and "kept the last 64 tokens" in result.stderr


def run_main(capsys: pytest.CaptureFixture[str], *args: str, terminal: bool = False) -> tuple[int, str, str]:
    """`tutor ARGS` in this process, stdout piped (as pytest captures it) or a terminal."""
    from tutor.cli import main

    if not terminal:
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    class Terminal(io.StringIO):
        encoding = "utf-8"

        def isatty(self) -> bool:
            return True

    screen = Terminal()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdout", screen)
        code = main(list(args))
    return code, screen.getvalue(), capsys.readouterr().err


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["tiny", "deep-postnorm", "noresidual", "nope", "rope"])
def test_trace_at_80_columns_keeps_each_step_name_on_one_line(capsys, monkeypatch, lang, name) -> None:
    from rich.cells import cell_len

    monkeypatch.setenv("COLUMNS", "80")  # what a pipe gets; a terminal of 80 columns the same
    code, out, _ = run_main(capsys, "trace", "猫追狗的", "--model", name, "--lang", lang)
    assert code == 0
    lines = [line.rstrip() for line in out.splitlines()]
    assert max(cell_len(line) for line in lines) <= 80
    for step in model.load(name).steps:  # a line of its own, whole, numbered from 1 as the app's "Step 1/27"
        assert f"{step.index + 1} {step_label(step, lang)}" in lines, step_label(step, lang)
    rows = [line for line in lines if line.startswith("  0 猫")]
    assert len(rows) == len(model.load(name).steps)  # one row per step and token, the numbers beside it
    assert all(len(row.split()) == 2 + 6 for row in rows)


def test_trace_column_headers_speak_the_learners_language(capsys) -> None:
    _, zh, _ = run_main(capsys, "trace", "猫追狗", "--lang", "zh")
    header = next(line for line in zh.splitlines() if "μ" in line)
    assert "输入 μ" in header and "输出 ‖x‖" in header and "步骤" in header and "in μ" not in header
    _, en, _ = run_main(capsys, "trace", "猫追狗", "--lang", "en")
    header = next(line for line in en.splitlines() if "μ" in line)
    assert "in μ" in header and "out ‖x‖" in header and "输入" not in header


def test_trace_json_is_indented_on_a_terminal_and_one_line_in_a_pipe(capsys) -> None:
    code, piped, _ = run_main(capsys, "trace", "猫追狗", "--json")
    assert code == 0 and piped.count("\n") == 1
    code, shown, _ = run_main(capsys, "trace", "猫追狗", "--json", terminal=True)
    assert code == 0 and shown.count("\n") > 100 and shown.startswith('{\n  "model": "tiny"')
    assert json.loads(shown) == json.loads(piped)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_trace_notes_come_before_the_table(capsys, lang) -> None:
    from tutor.commands.trace import TRACE_WORDS

    code, out, err = run_main(capsys, "trace", "猫" * 70, "--lang", lang)
    note = TRACE_WORDS["dropped"][lang == "zh"].format(n=64, d=6)
    assert code == 0 and out.splitlines()[0] == note and out.count(note) == 1 and not err
    code, out, err = run_main(capsys, "trace", "猫" * 70, "--json", "--lang", lang)
    assert json.loads(out)["dropped_tokens"] == 6 and err.splitlines() == [note]  # stdout stays JSON


@pytest.mark.parametrize("args", [("trace", ""), ("trace", "", "--json"), ("trace", "", "--lang", "zh")])
def test_an_empty_prompt_is_one_line_and_nonzero(capsys, args) -> None:
    code, out, err = run_main(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("tutor: error: ")
    assert ("提示词是空的" in err) == ("zh" in args)


def test_help_says_which_model_trace_uses(capsys, tmp_path: Path) -> None:
    from tutor.cli import build_parser

    main_help = " ".join(build_parser().format_help().split())
    assert "the app resumes the last model you used, else tiny; trace's default is tiny" in main_help
    trace_help = run_tutor("trace", "--help", cwd=tmp_path).stdout
    assert "default: tiny, not the app's last model" in " ".join(trace_help.split())
    # and it is so: the app's saved last model (rope here) does not change what trace runs
    from tutor.progress import ProgressStore

    store = ProgressStore(tmp_path / "state" / "progress.json")
    progress, _ = store.load()
    progress.last["model"] = "rope"
    assert store.save(progress) is None
    env = {"TUTOR_STATE_DIR": str(tmp_path / "state")}
    assert json.loads(run_tutor("trace", "猫", "--json", cwd=tmp_path, env=env).stdout)["model"] == "tiny"


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


@pytest.mark.parametrize(("given", "expected"), [(None, "120"), ("30", "30")])
def test_the_app_draws_at_120_frames_a_second_unless_told(monkeypatch, given: str | None, expected: str) -> None:
    """A frame waits for the next tick of Textual's clock: at its default 60 a character typed just after the
    panels drew waited up to 17 ms. The learner's own TEXTUAL_FPS wins."""
    import os

    from tutor import cli

    if given is None:
        monkeypatch.delenv("TEXTUAL_FPS", raising=False)
    else:
        monkeypatch.setenv("TEXTUAL_FPS", given)
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert os.environ["TEXTUAL_FPS"] == expected
    probe = "import textual.constants as c; print(c.MAX_FPS)"
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=dict(os.environ))
    assert shown.stdout.strip() == expected  # what Textual itself reads from it
