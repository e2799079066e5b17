"""The three rooms and their one-way doors: tutor/ imports model/, model/ imports NumPy, content/ is data;
and inside tutor/, screens → panels → widgets, with lessons/ below them all."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODEL_MAY_IMPORT = {"numpy", "safetensors", "tokenizers", "model"}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def full_imports_of(path: Path) -> set[str]:
    """Every module a file imports, by its full dotted name (a relative import counts from tutor/ or model/)."""
    package = ".".join(path.relative_to(ROOT).parent.parts)
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]) if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("path", sorted((ROOT / "model").rglob("*.py")), ids=lambda p: p.name)
def test_model_imports_only_numpy_and_the_standard_library(path: Path) -> None:
    foreign = imports_of(path) - MODEL_MAY_IMPORT - set(sys.stdlib_module_names)
    assert not foreign, f"{path.name} imports {foreign}"


def test_the_app_and_the_model_never_import_the_benchmark() -> None:
    """tutor/bench/ is a checkout's (the wheel leaves it out): an import of it from the app or the model would
    break every install."""
    importers = [
        path.relative_to(ROOT).as_posix()
        for room in ("tutor", "model")
        for path in sorted((ROOT / room).rglob("*.py"))
        if "bench" not in path.relative_to(ROOT).parts
        and any(name == "tutor.bench" or name.startswith("tutor.bench.") for name in full_imports_of(path))
    ]
    assert not importers, f"these import tutor.bench, which no install has: {importers}"


def test_model_holds_no_words_for_the_learner() -> None:
    """model/ is language-neutral: Chinese in its code is an example prompt, never a label (tutor/step_words.py)."""
    for path in sorted((ROOT / "model").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if any("\u4e00" <= ch <= "\u9fff" for ch in line):
                assert "猫追狗" in line, f"{path.name}:{number}: {line.strip()}"


def modules_imported_by(path: Path) -> set[str]:
    """Every module `path` imports, by its full name, at the top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def _under(names: set[str], *prefixes: str) -> set[str]:
    return {n for n in names if any(n == p or n.startswith(p + ".") for p in prefixes)}


@pytest.mark.parametrize("path", sorted((ROOT / "tutor" / "lessons").glob("*.py")), ids=lambda p: p.name)
def test_lessons_know_no_textual_and_no_screen(path: Path) -> None:
    """tutor/lessons/ reads content/ for the app and for `tutor lessons --check`: no Textual, no widgets."""
    names = modules_imported_by(path)
    wrong = _under(names, "textual", "tutor.app", "tutor.screens", "tutor.widgets", "tutor.panels")
    assert not wrong, f"{path.name} imports {wrong}"


@pytest.mark.parametrize("path", sorted((ROOT / "tutor" / "panels").glob("*.py")), ids=lambda p: p.name)
def test_panels_read_a_view_and_never_run_the_model(path: Path) -> None:
    """A panel draws the View it is given: it reaches for no screen, app or runner, and runs no pass."""
    wrong = _under(modules_imported_by(path), "tutor.app", "tutor.screens", "tutor.runner", "tutor.host", "tutor.place")
    assert not wrong, f"{path.name} imports {wrong}"
    calls = {
        node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name)
    }
    # a pass, or what a pass brings besides its trace (the logit lens: tutor/lens.py reads it into the View)
    running = calls & {"run", "forward", "generate", "run_worker", "extend", "logit_lens", "lens_rows"}
    assert not running, f"{path.name} calls {running}"


@pytest.mark.parametrize("path", sorted((ROOT / "tutor" / "widgets").glob("*.py")), ids=lambda p: p.name)
def test_widgets_know_no_panel_and_no_screen(path: Path) -> None:
    """tutor/widgets/ is below the panels: general widgets that a panel or a screen puts together."""
    wrong = _under(modules_imported_by(path), "tutor.app", "tutor.screens", "tutor.panels")
    assert not wrong, f"{path.name} imports {wrong}"


def test_content_holds_no_code() -> None:
    assert not [p for p in (ROOT / "content").rglob("*") if p.suffix in {".py", ".pyc", ".sh"}]


def _fresh_python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_model_runs_with_no_textual_or_rich_loaded() -> None:
    loaded = _fresh_python(
        "import sys, model; model.load('tiny').run('猫追狗');"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'textual', 'rich', 'tutor'}))"
    )
    assert loaded == "[]"


def test_trace_version_and_help_do_not_import_textual() -> None:
    """`tutor trace`, `--version` and `--help` run (argparse ends the last two with SystemExit(0)) and print
    what they should, and none of them loads Textual."""
    from tutor import __version__

    loaded = _fresh_python(
        "import sys, io, contextlib; from tutor.cli import main\n"
        "out, codes = io.StringIO(), []\n"
        "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):\n"
        "    codes += [main(['trace', '猫追狗']), main(['trace', '猫', '--json'])]\n"
        "    for flag in ('--version', '--help'):\n"
        "        try:\n"
        "            main([flag])\n"
        "        except SystemExit as done:\n"
        "            codes.append(done.code)\n"
        "print(codes, out.getvalue().count('usage: tutor'), repr(out.getvalue().split('\\n')))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))"
    )
    ran, modules = loaded.split("\n")[-2:]
    assert ran.startswith("[0, 0, 0, 0] 1 "), ran  # four commands ran to the end; --help printed the usage
    assert f"'tutor {__version__}'" in ran  # --version printed the version, on a line of its own
    assert modules == "[]"


def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed")
    result = subprocess.run([ruff, "check", "--quiet", str(ROOT)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


I18N_HOME = {"tutor/i18n.py", "tutor/language.py"}  # `say` picks the language; language.py reads the locale


@pytest.mark.parametrize("path", sorted((ROOT / "tutor").rglob("*.py")), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_one_i18n_mechanism(path: Path) -> None:
    """Bilingual text is a (en, zh) pair said by tutor.i18n.say (through `t` and `pick`): no module but
    i18n.py compares a language with "zh" or "en", and no record keeps a `_en` / `_zh` field of its own."""
    if path.relative_to(ROOT).as_posix() in I18N_HOME:
        return
    tree = ast.parse(path.read_text(encoding="utf-8"))
    compared = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        and any(
            isinstance(side, ast.Constant) and side.value in ("zh", "en") for side in [node.left, *node.comparators]
        )
    ]
    assert not compared, f"compares a language itself at lines {compared}: use tutor.i18n.say"
    fields = [
        node.target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.target.id.endswith(("_en", "_zh"))
    ]
    assert not fields, f"fields {fields}: keep one Words pair, said with tutor.i18n.say"


# -- the catalogue: every panel, experiment and model variant is named once, in tutor/catalogue.py ------------------


# Chosen few, named on purpose and ordered for one screen, not copies of the catalogue: (file, the name they are given)
CHOSEN = {
    # the depth lab's 16-block family in the lab's order, then the 4-block models it is measured against; a new
    # 16-block variant is added here by choice (it is listed in the palette and the training screen without)
    ("tutor/screens/experiments/depth_lab.py", "FAMILY"),
}


def _name_lists(path: Path) -> list[tuple[int, list[str]]]:
    """Every literal tuple, list or set of strings in a file, and every literal dict's string keys, with its line
    (but the `CHOSEN`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where = path.relative_to(ROOT).as_posix()
    chosen = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name) and (where, target.id) in CHOSEN
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in chosen:
            continue
        items = (
            node.keys
            if isinstance(node, ast.Dict)
            else node.elts
            if isinstance(node, ast.Tuple | ast.List | ast.Set)
            else []
        )
        strings = [item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)]
        if strings:
            found.append((node.lineno, strings))
    return found


def test_the_catalogue_is_the_only_list_of_panels_experiments_and_variants() -> None:
    """A second list is a second place to add a name to (and to forget): no module but the catalogue spells out
    most of the panels, the experiments or the variants. A few of them together, for a purpose, are fine (a
    sweep's grid, a pair compared); lists of the lot are built from the catalogue (`tutor.catalogue`)."""
    from tutor.catalogue import EXPERIMENTS, MODEL_VARIANTS, PANELS

    kinds = {"panels": set(PANELS), "experiments": set(EXPERIMENTS), "variants": set(MODEL_VARIANTS)}
    second_lists = [
        f"{path.relative_to(ROOT)}:{line}: {kind} {strings}"
        for room in ("tutor", "model")
        for path in sorted((ROOT / room).rglob("*.py"))
        if path != ROOT / "tutor" / "catalogue.py"
        for line, strings in _name_lists(path)
        for kind, names in kinds.items()
        if len(strings) >= 3 and len(set(strings)) > len(names) / 2 and set(strings) <= names
    ]
    assert not second_lists, "\n".join(second_lists)


def test_the_catalogue_imports_only_the_standard_library() -> None:
    """The lesson parser, `tutor lessons --check` and `tutor train --help` read it: no Textual, no NumPy, no model/
    (model/variants.toml is read as a file), and of the tutor's only tutor.i18n (its labels are Words pairs), which
    imports nothing itself."""
    stdlib = set(sys.stdlib_module_names)
    names = {name for name in modules_imported_by(ROOT / "tutor" / "catalogue.py") if name.split(".")[0] not in stdlib}
    assert names <= {"tutor.i18n"}, names
    assert {name.split(".")[0] for name in modules_imported_by(ROOT / "tutor" / "i18n.py")} <= stdlib


def test_every_panel_and_experiment_in_the_catalogue_is_a_class_where_it_belongs() -> None:
    """A panel's widget is in tutor/panels/ and draws a View (`show`); an experiment's screen is in
    tutor/screens/experiments/, an ExperimentScreen whose NAME is its name in the catalogue."""
    from tutor.catalogue import EXPERIMENT_LIST, PANEL_LIST, load_class
    from tutor.screens.experiments.base import ExperimentScreen

    for panel in PANEL_LIST:
        widget = load_class(panel.widget)
        assert panel.widget.startswith("tutor.panels.") and callable(getattr(widget, "show", None)), panel
    for experiment in EXPERIMENT_LIST:
        screen = load_class(experiment.screen)
        assert experiment.screen.startswith("tutor.screens.experiments."), experiment
        assert issubclass(screen, ExperimentScreen) and experiment.name == screen.NAME, experiment


def test_every_variant_has_a_look_of_its_own() -> None:
    """model/variants.toml gives each variant its colour and marker: none left to the grey "?", no two alike."""
    from tutor.catalogue import VARIANT_LIST, Variant

    assert all((v.colour, v.marker) != (Variant("").colour, Variant("").marker) for v in VARIANT_LIST), VARIANT_LIST
    assert len({v.colour for v in VARIANT_LIST}) == len({v.marker for v in VARIANT_LIST}) == len(VARIANT_LIST)
