"""The wheel carries the lessons and the weights, and works installed anywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q", "-w", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode != 0 and "hatchling" in result.stderr:
        pytest.skip("hatchling is not installed (it comes with the test extra)")
    assert result.returncode == 0, result.stderr
    (built,) = out.glob("tutor-*.whl")
    return built


def test_wheel_carries_content_and_weights(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "tutor/content/README.md" in names
    assert "model/weights/tiny.safetensors" in names
    assert "model/data/corpus.jsonl.gz" in names  # tutor train reproduces the shipped models from an install
    assert "model/variants.toml" in names  # the variants: their recipes, and the names the catalogue reads
    assert all(f"model/weights/{name}.safetensors" in names for name in ("deep", "deep-postnorm", "base10"))
    assert "tutor/cli.py" in names and "model/gpt.py" in names
    assert not [n for n in names if n.startswith(("tests/", "scripts/", "tutor/bench/"))]  # the benchmark: a checkout's
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    declared = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "tutor = tutor.cli:main" in declared
    # the JupyterLab launcher's tile (tutor/jupyter.py): jupyter-server-proxy reads the entry point, shows the icon
    assert "[jupyter_serverproxy_servers]\ntutor = tutor.jupyter:server" in declared
    assert "tutor/tutor.svg" in names and "tutor/jupyter.py" in names


def test_installed_wheel_runs_from_another_folder(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONIOENCODING": "utf-8"}
    code = "import tutor, model, tutor.paths as p; print(tutor.__file__); print(model.__file__); print(p.content_dir())"
    where = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=env, capture_output=True, text=True)
    tutor_file, model_file, content = where.stdout.split()
    assert tutor_file.startswith(str(site)) and model_file.startswith(str(site))
    assert Path(content).is_dir() and content.startswith(str(site))
    result = subprocess.run(
        [sys.executable, "-m", "tutor", "trace", "猫追狗", "--json"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert [t["text"] for t in json.loads(result.stdout)["tokens"]] == ["猫", "追", "狗"]
