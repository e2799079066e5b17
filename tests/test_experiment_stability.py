"""The stability lab: its sentences against random results (hypothesis), and the screen through the pilot.

The shipped results file is replaced when the full sweep ends, so nothing here hard-codes its numbers: a
test reads the file itself (`read_results`, `cells`) or writes a small file of its own.
"""

from __future__ import annotations

import gzip
import json
import re
import tempfile
from pathlib import Path

import pytest
from helpers import make_app, open_from_practice_menu, screen_text, settle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import model.sweep
from model.sweep import FORMAT, RunSpec, cells, read_results
from model.train import GROWTH, RECIPES
from tutor.lessons.links import parse_link
from tutor.screens.experiments import stability
from tutor.screens.experiments.stability import StabilityScreen, diverged_cell, shipped_variant
from tutor.screens.experiments.stability_words import (
    GROWTH_FACTOR,
    WIRINGS,
    cell_sentence,
    diverged_text,
    growth_sentence,
    loss_text,
    rate_sentence,
    run_sentence,
    trains_sentence,
)
from tutor.widgets.line_chart import LineChart

RATES = (0.001, 0.01, 0.1, 1.0)

# -- random results ---------------------------------------------------------------------------------


@st.composite
def records(draw: st.DrawFn, steps: int = 40) -> dict:
    """A run record of `run_record`'s shape, its outcome and numbers drawn at random (consistent as a sweep's)."""
    outcome = draw(st.sampled_from(("trained", "stalled", "diverged")))
    unigram = 3.5
    growth_length = draw(st.integers(1, 12))
    figure = st.one_of(st.none(), st.floats(1e-3, 1e30))
    growth = {key: draw(st.lists(figure, min_size=growth_length, max_size=growth_length)) for key in GROWTH}
    final = None
    if outcome == "trained":
        final = draw(st.floats(1.0, unigram - 0.1 - 1e-6))
    elif outcome == "stalled":
        final = draw(st.floats(unigram - 0.1, 9.0))
    return {
        "key": str(draw(st.integers())),
        "shape": "4x64",
        "norm": draw(st.sampled_from(WIRINGS)),
        "lr": draw(st.sampled_from(RATES)),
        "warmup": draw(st.sampled_from((0, 4))),
        "seed": draw(st.integers(0, 5)),
        "steps": steps,
        "outcome": outcome,
        "final_val_loss": final,
        "unigram": unigram,
        "diverged": {"step": draw(st.integers(1, steps)), "what": "loss"} if outcome == "diverged" else None,
        "val_loss": [[0, 9.0]],
        "train_loss": [],
        "growth": growth,
    }


RUNS = st.lists(records(), min_size=1, max_size=30)
QUICK = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES_EN = {"pre": "pre-norm", "post": "post-norm", "none": "no LayerNorm"}


def runs_of(runs: list[dict], norm: str, lr: float | None = None) -> list[dict]:
    return [r for r in runs if r["norm"] == norm and (lr is None or r["lr"] == lr)]


def median(values: list[float]) -> float:
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


@QUICK
@given(RUNS, st.sampled_from(RATES))
def test_the_rate_sentence_counts_the_diverged_runs_of_each_wiring(runs: list[dict], lr: float) -> None:
    one_warmup = [r for r in runs if r["warmup"] == runs[0]["warmup"]]
    sentence = rate_sentence(cells(one_warmup), lr, "en")
    said = {m[0]: (int(m[1]), int(m[2])) for m in re.findall(r"(with\w* [\w-]+) (\d+) of (\d+)", sentence)}
    wirings = {"pre": "with pre-norm", "post": "with post-norm", "none": "without LayerNorm"}
    expected = {}
    for norm, words in wirings.items():
        own = runs_of(one_warmup, norm, lr)
        if own:
            expected[words] = (sum(r["outcome"] == "diverged" for r in own), len(own))
    assert said == expected, sentence
    assert sentence.startswith(f"lr {lr:g}: ")
    zh = rate_sentence(cells(one_warmup), lr, "zh")
    assert [tuple(map(int, m)) for m in re.findall(r"(\d+) 次中 (\d+) 次", zh)] == [(n, k) for k, n in said.values()]


@QUICK
@given(RUNS)
def test_the_trains_sentence_names_the_rates_where_every_run_trained(runs: list[dict]) -> None:
    one_warmup = [r for r in runs if r["warmup"] == runs[0]["warmup"]]
    sentence = trains_sentence(cells(one_warmup), "en")
    for norm, name in NAMES_EN.items():
        own = runs_of(one_warmup, norm)
        rates = sorted({r["lr"] for r in own})
        good = [lr for lr in rates if all(r["outcome"] == "trained" for r in runs_of(own, norm, lr))]
        if not own:
            assert f"{name}:" not in sentence
        elif good:
            assert f"{name}: {len(good)} of {len(rates)} rates, up to {max(good):g}" in sentence, sentence
        else:
            assert f"{name}: none of {len(rates)} rates" in sentence, sentence
    zh = trains_sentence(cells(one_warmup), "zh")
    assert zh.startswith("每次都训练成功的学习率——") and zh.endswith("。")


@QUICK
@given(RUNS)
def test_the_cell_sentence_and_table_cells_hold_the_cells_numbers(runs: list[dict]) -> None:
    for cell in cells(runs):
        own = list(cell.runs)
        diverged = sorted(r["diverged"]["step"] for r in own if r["outcome"] == "diverged")
        finals = sorted(r["final_val_loss"] for r in own if r["outcome"] != "diverged")
        sentence = cell_sentence(cell, "en")
        head = f"{NAMES_EN[cell.norm]}, lr {cell.lr:g}, "
        assert sentence.startswith(head), sentence
        assert f": {len(own)} run{'' if len(own) == 1 else 's'} — {len(diverged)} diverged" in sentence
        assert f"{sum(r['outcome'] == 'stalled' for r in own)} stalled" in sentence
        if diverged:
            assert f"diverged (step {', '.join(map(str, diverged))})" in sentence
        if len(finals) > 1:
            assert f"median {median(finals):.3f}, range {finals[0]:.3f}–{finals[-1]:.3f}" in sentence
            assert f"the {len(finals)} that did not diverge" in sentence
            assert loss_text(cell) == f"{median(finals):.3f} ({finals[0]:.3f}–{finals[-1]:.3f})"
        elif finals:
            assert f"final loss {finals[0]:.3f}" in sentence and loss_text(cell) == f"{finals[0]:.3f}"
        else:
            assert "every run diverged" in sentence and loss_text(cell) == "—"
        assert diverged_text(cell, "en").startswith(f"{len(diverged)} of {len(own)}")
        zh = cell_sentence(cell, "zh")
        assert f"共 {len(own)} 次——{len(diverged)} 次发散" in zh, zh


@QUICK
@given(RUNS, st.data())
def test_the_run_sentence_says_how_the_run_ended(runs: list[dict], data: st.DataObject) -> None:
    cell = data.draw(st.sampled_from(cells(runs)))
    index = data.draw(st.integers(0, cell.n - 1))
    run = sorted(cell.runs, key=lambda r: r["seed"])[index]
    sentence = run_sentence(cell, index, "en")
    head = f"Run: {NAMES_EN[cell.norm]}, lr {cell.lr:g}, "
    assert (
        sentence.startswith(head) and f", seed {run['seed']} ({index + 1} of {cell.n}: n for the next) — " in sentence
    )
    ending = {
        "diverged": lambda: f"diverged at step {run['diverged']['step']} (the loss stopped being finite)",
        "stalled": lambda: f"stalled at {run['final_val_loss']:.3f} (unigram {run['unigram']:.3f})",
        "trained": lambda: f"trained to {run['final_val_loss']:.3f}",
    }[run["outcome"]]()
    assert sentence.endswith(ending), sentence
    zh = run_sentence(cell, index, "zh")
    assert f"种子 {run['seed']}（{cell.n} 个中的第 {index + 1} 个" in zh


@QUICK
@given(records())
def test_the_growth_sentence_names_what_grew_first(run: dict) -> None:
    def first(values: list) -> int | None:
        start = values[0]
        if start is None or start <= 0:
            return None
        return next((i for i, v in enumerate(values, start=1) if v is None or v > GROWTH_FACTOR * start), None)

    firsts = {key: first(run["growth"][key]) for key in GROWTH}
    sentence = growth_sentence(run, "en")
    names = {
        "grad_norm": "gradient norm before clipping",
        "max_attn_score": "max |attention score|",
        "max_logit": "max |logit|",
        "stream_norm": "‖x‖ after the last block",
    }
    grown = {key: step for key, step in firsts.items() if step is not None}
    if not grown:
        assert sentence.startswith("No growth figure passed"), sentence
        return
    earliest = min(grown.values())
    match = re.match(r"First past 10× its value at step 1: (.+?) at step (\d+)", sentence)
    assert match and int(match[2]) == earliest, sentence
    assert grown[next(k for k, n in names.items() if n == match[1])] == earliest
    for key, step in grown.items():
        assert f"{names[key]} at step {step}" in sentence or f"{names[key]} (step {step})" in sentence, sentence
    for key in set(GROWTH) - set(grown):
        assert names[key] in sentence.split("never: ")[1]


# -- files for the screen ------------------------------------------------------------------------------


def record(norm: str, lr: float, seed: int, outcome: str, final: float | None, *, step: int = 0, warmup: int = 4):
    steps = 20
    n = step if outcome == "diverged" else steps  # update k's figures at index k − 1; the failing one last
    growth = {key: [1.0 + i * (100.0 if key == "max_logit" else 0.1) for i in range(n)] for key in GROWTH}
    if outcome == "diverged":
        growth["grad_norm"][-1] = None
    return {
        "key": f"{norm}-{lr}-{seed}-{warmup}",
        "name": f"tiny+norm={norm}",
        "shape": "4x64",
        "norm": norm,
        "residual": True,
        "lr": lr,
        "warmup": warmup,
        "seed": seed,
        "steps": steps,
        "outcome": outcome,
        "final_val_loss": final,
        "last_good_val_loss": final or 8.0,
        "unigram": 3.5,
        "diverged": {"step": step, "what": "gradient norm"} if outcome == "diverged" else None,
        "val_loss": [[0, 9.0], [10, 4.0], [20, final]] if final else [[0, 9.0]],
        "train_loss": [9.0 - i * 0.2 for i in range(n - 1 if outcome == "diverged" else n)],
        "growth": growth,
    }


def small_sweep() -> list[dict]:
    """Three wirings × two rates × two seeds: no LayerNorm diverges at the high rate, post-norm stalls there."""
    runs = []
    for seed in (0, 1):
        runs += [
            record("pre", 0.01, seed, "trained", 2.6 + seed * 0.1),
            record("pre", 0.3, seed, "trained", 2.8 + seed * 0.1),
            record("post", 0.01, seed, "trained", 2.7 + seed * 0.1),
            record("post", 0.3, seed, "stalled", 3.45 + seed * 0.02),
            record("none", 0.01, seed, "trained", 2.65 + seed * 0.1),
            record("none", 0.3, seed, "diverged", None, step=5 + seed),
        ]
    runs.append(record("pre", 0.01, 0, "trained", 3.0, warmup=0))  # a warm-up-off cell
    return runs


def write_results(path: Path, runs: list[dict], header: dict | None = None) -> Path:
    lines = [json.dumps(header or {"format": FORMAT})] + [json.dumps(r) for r in runs]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def small_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = write_results(tmp_path / "sweep.jsonl", small_sweep())
    monkeypatch.setattr(stability, "RESULTS_FILE", path)
    return path


async def open_lab(pilot, options: dict[str, str] | None = None) -> StabilityScreen:
    await settle(pilot)
    pilot.app.open_experiment("stability", options)
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, StabilityScreen)
    return screen


async def press(pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await settle(pilot)


def flat(app, selector: str | None = None) -> str:
    """The screen's text as one line: wrapped lines joined, runs of spaces one space."""
    return re.sub(r"\s+", " ", screen_text(app, selector))


def plot_rows(app, selector: str) -> list[str]:
    """A chart's plot rows, right of the y axis."""
    rows = [line for line in screen_text(app, selector).split("\n") if any(ch in line[:10] for ch in "┤│")]
    return [re.split("[┤│]", line, maxsplit=1)[1] for line in rows]


def notices(app) -> list[str]:
    """Every notice the app was asked to show from here on (a notice on screen expires: a slow run missed them)."""
    said: list[str] = []
    notify = app.notify

    def keep(message, *args, **kwargs):  # type: ignore[no-untyped-def]
        said.append(str(message))
        return notify(message, *args, **kwargs)

    app.notify = keep
    return said


def table_lines(app) -> list[str]:
    return [line.strip() for line in screen_text(app, "#stab-table").split("\n") if line.strip()]


# -- the shipped file --------------------------------------------------------------------------------


async def test_the_shipped_results_open_from_the_practice_menu_with_every_cell_in_the_table(store) -> None:
    results = read_results(stability.RESULTS_FILE)
    assert results.runs, results.problem  # the file ships, and the lab reads it as `tutor sweep --report` does
    app = make_app(store)
    async with app.run_test(size=(160, 50)) as pilot:
        await open_from_practice_menu(pilot, "stability")
        screen = app.screen
        assert isinstance(screen, StabilityScreen)
        first_shape = next(s for s in stability.SHAPES if any(r["shape"] == s for r in results.runs))
        shown = [c for c in cells(results.runs) if c.shape == first_shape and c.warmup > 0]
        rows = table_lines(app)[1:]
        assert len(rows) == len(shown)
        for row, cell in zip(rows, shown, strict=True):
            assert re.search(rf"{cell.norm}\s+{cell.lr:g}\s+{re.escape(diverged_cell(cell))}\s", row), row
            assert row.endswith(loss_text(cell)) and f"{cell.count('stalled')}/{cell.n}" in row
        assert trains_sentence(shown, "en") in flat(app)


# -- the chart and the table ------------------------------------------------------------------------


async def test_the_chart_draws_medians_ranges_diverged_and_stalled_runs(store, small_file) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        chart = screen.query_one("#stab-chart", LineChart)
        by_name = {s.name: s for s in chart.series}
        pre = by_name["pre-norm: median"]
        assert list(pre.ys) == pytest.approx([2.65, 2.85])
        assert [10**x for x in pre.xs] == pytest.approx([0.01 * 10**-0.05, 0.3 * 10**-0.05])
        assert "no LayerNorm: median" in by_name and len(by_name["no LayerNorm: median"].ys) == 1  # none at 0.3
        bars = [s for s in chart.series if not s.legend and not s.points]
        assert sorted((min(s.ys), max(s.ys)) for s in bars)[0] == pytest.approx((2.6, 2.7))
        crosses = [s for s in chart.series if s.points and s.marker == "×" and s.xs]
        assert len(crosses) == 1 and 10 ** (crosses[0].xs[0] - 0.05) == pytest.approx(0.3)
        assert crosses[0].ys[0] == chart.ranges()[1][1]  # at the top, above every loss
        rings = [s for s in chart.series if s.points and s.marker == "○" and s.xs]
        assert sorted(y for s in rings for y in s.ys) == pytest.approx([3.45, 3.47])
        unigram = next(s for s in chart.series if s.dashed)
        assert unigram.name == "unigram loss 3.500" and set(unigram.ys) == {3.5}
        text = flat(app)
        assert "×" in plot_rows(app, "#stab-chart")[0]  # the top row of the plot
        assert "lr 0.01: without LayerNorm 0 of 2 runs diverged; with pre-norm 0 of 2; with post-norm 0 of 2." in text
        assert "pre-norm: 2 of 2 rates, up to 0.3; post-norm: 1 of 2 rates, up to 0.01" in text
        rows = table_lines(app)
        assert any(re.search(r"% none\s+0\.3\s+2/2 \(5, 6\)\s+0/2\s+—$", r) for r in rows), rows
        assert any(re.search(r"# post\s+0\.3\s+0/2\s+2/2\s+3\.460 \(3\.450–3\.470\)$", r) for r in rows), rows
        await press(pilot, "right")  # the picked rate moves, and the sentence with it
        assert "lr 0.3: without LayerNorm 2 of 2 runs diverged; with pre-norm 0 of 2; with post-norm 0 of 2." in flat(
            app
        )


async def test_without_colour_the_wirings_are_their_glyphs(store, small_file, monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_lab(pilot)
        plot = "".join(plot_rows(app, "#stab-chart"))  # the plot itself, not the legend
        for glyph in ("*", "#", "%", "×", "○"):
            assert glyph in plot, glyph
        assert not any(0x2800 < ord(ch) <= 0x28FF for ch in plot)


async def test_warmup_and_shape_toggle_and_links_choose_them(store, small_file) -> None:
    app = make_app(store)
    said = notices(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        assert len(table_lines(app)) == 1 + 6
        await press(pilot, "w")
        assert not screen.warmup_on and len(table_lines(app)) == 1 + 1
        assert "no warm-up" in screen_text(app)
        await press(pilot, "w")
        assert len(table_lines(app)) == 1 + 6
        await press(pilot, "escape")
        await app.follow(parse_link("tutor:experiment?name=stability&shape=4x64&warmup=off"))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, StabilityScreen) and not screen.warmup_on and len(table_lines(app)) == 1 + 1
        await press(pilot, "escape")
        await app.follow(parse_link("tutor:experiment?name=stability&shape=2x2&warmup=sometimes"))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, StabilityScreen) and screen.warmup_on and screen.shape == "4x64"
        assert any("cannot open on shape=2x2, warmup=sometimes" in message for message in said), said


def test_the_checker_knows_the_stability_labs_options() -> None:
    from tutor.lessons.check import _stability_lab_problems

    assert not list(_stability_lab_problems({"name": "stability", "shape": "16x32", "warmup": "off"}))
    problems = list(_stability_lab_problems({"name": "stability", "shape": "8x8", "warmup": "yes"}))
    assert any("'8x8'" in p for p in problems) and any("'yes'" in p for p in problems)
    assert list(_stability_lab_problems({"name": "depth", "warmup": "on"})) == ["only the stability lab takes warmup"]


# -- a run ------------------------------------------------------------------------------------------


async def test_a_picked_run_shows_its_curves_and_growth_with_the_divergence_marked(store, small_file) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        await press(pilot, "right", "up", "v", "n")  # lr 0.3, no LayerNorm (up from pre-norm), the run view, seed 1
        run = screen.picked_run()
        assert run is not None and run["norm"] == "none" and run["lr"] == 0.3 and run["seed"] == 1
        growth = screen.query_one("#stab-growth", LineChart)
        assert growth.x_marker == 6
        assert [s.name for s in growth.series] == [
            "gradient norm before clipping",
            "max |attention score|",
            "max |logit|",
            "‖x‖ after the last block",
        ]
        assert list(growth.series[2].ys) == pytest.approx(run["growth"]["max_logit"])
        assert growth.log_y and list(growth.series[0].xs) == [1, 2, 3, 4, 5, 6]  # max |logit| from 1 to 501
        loss = screen.query_one("#stab-loss", LineChart)
        assert list(loss.series[1].ys) == pytest.approx(run["train_loss"]) and loss.x_marker == 6
        text = flat(app)
        assert "Run: no LayerNorm, lr 0.3, warm-up 4 steps, seed 1 (2 of 2: n for the next)" in text
        assert "diverged at step 6 (the gradient norm stopped being finite)" in text
        assert (
            "First past 10× its value at step 1: max |logit| at step 2; then gradient norm before clipping (step 6)"
            in text
        )
        assert growth_sentence(run, "en") in text
        assert "o Open" not in text  # no shipped model is this run


async def test_a_run_that_is_a_shipped_model_opens_in_the_main_screen(store, tmp_path, monkeypatch) -> None:
    """The match is generic: any recipe of RECIPES whose run with the record's seed and steps has its key."""
    _, metadata = model.weights.read_safetensors(model.weights.SHIPPED_DIR / "nonorm.safetensors")
    info = json.loads(metadata["training"])
    seed, steps = int(info["seed"]), int(info["total_steps"])
    shipped = record("none", RECIPES["nonorm"].learning_rate, seed, "trained", 2.5)
    shipped |= {"key": RunSpec(RECIPES["nonorm"], seed, steps).key(), "steps": steps}
    other = record("none", RECIPES["nonorm"].learning_rate, seed + 1, "trained", 2.6)
    other["steps"] = steps
    monkeypatch.setattr(stability, "RESULTS_FILE", write_results(tmp_path / "s.jsonl", [shipped, other]))
    assert shipped_variant(shipped) == "nonorm" and shipped_variant(other) is None
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        await press(pilot, "up", "v")
        assert screen.picked_run()["key"] == shipped["key"]
        assert "o opens it in the main screen: it is the shipped model nonorm." in flat(app)
        assert "o Open" in screen_text(app)
        await press(pilot, "n")
        assert "o Open" not in screen_text(app) and "No shipped model is this run." in flat(app)
        await press(pilot, "n", "o")
        await settle(pilot)
        assert app.screen is app.main and app.main.place.gpt.name == "nonorm"


def test_a_recipe_added_later_is_found_by_its_key(tmp_path, monkeypatch) -> None:
    """A variant named nowhere in the lab (as the two another engineer will add) is found through RECIPES."""
    import shutil

    folder = tmp_path / "weights"
    folder.mkdir()
    shutil.copyfile(model.weights.SHIPPED_DIR / "nonorm.safetensors", folder / "nonorm-lr-later.safetensors")
    monkeypatch.setattr(stability, "SHIPPED_DIR", folder)
    monkeypatch.setattr(stability, "RECIPES", {"nonorm-lr-later": RECIPES["nonorm"]})
    run = {"key": RunSpec(RECIPES["nonorm"], 0, 3000).key(), "seed": 0, "steps": 3000}
    assert shipped_variant(run) == "nonorm-lr-later"
    assert shipped_variant(run | {"seed": 1, "key": RunSpec(RECIPES["nonorm"], 1, 3000).key()}) is None  # not its seed


# -- broken files --------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["missing", "cut", "foreign", "gz-cut"])
async def test_a_broken_results_file_is_one_line_and_the_lab_opens(store, tmp_path, monkeypatch, kind: str) -> None:
    path = tmp_path / "sweep.jsonl"
    if kind == "cut":
        write_results(path, small_sweep())
        path.write_bytes(path.read_bytes()[:-40])  # the last line cut short by a kill
    elif kind == "foreign":
        write_results(path, small_sweep(), header={"format": "tutor-sweep/0"})
    elif kind == "gz-cut":
        path = tmp_path / "sweep.jsonl.gz"
        data = gzip.compress(write_results(tmp_path / "plain.jsonl", small_sweep()).read_bytes())
        path.write_bytes(data[: len(data) // 2])
    monkeypatch.setattr(stability, "RESULTS_FILE", path)
    problem = read_results(path).problem
    assert problem
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_lab(pilot)
        assert f"Results file: {problem}"[:30] in flat(app, "#stab-head")
        chart = screen.query_one("#stab-chart", LineChart)
        if kind == "cut":  # the whole lines still count
            assert chart.series and len(screen.file_cells) == len(cells(small_sweep()[:-1]))
        else:
            assert not chart.series and "No runs to show" in screen_text(app)
        await press(pilot, "right", "v", "w", "s", "n", "v")  # nothing to pick: no crash
        assert app.screen is screen


# -- both languages, both sizes ---------------------------------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_lab_reads_in_both_languages_at_both_sizes(store, small_file, lang: str, size) -> None:
    app = make_app(store, lang=lang)
    async with app.run_test(size=size) as pilot:
        screen = await open_lab(pilot)
        text = screen_text(app)
        if lang == "zh":
            assert "稳定性实验室" in text and "每次都训练成功的学习率" in text and "←→ 学习率" in text
            assert "Every run" not in text and "diverged" not in text
        else:
            assert "Learning rates at which every run trained" in text and "←→ Rate" in text
        assert len(plot_rows(app, "#stab-chart")) >= 8, text
        assert screen.compact == (size == (80, 24))
        if screen.compact:  # the table and the chart take turns
            await press(pilot, "t")
            assert len(table_lines(app)) == 7
            await press(pilot, "v")
            assert screen.query_one("#stab-growth").display and not screen.query_one("#stab-loss").display
            await press(pilot, "g")
            assert screen.query_one("#stab-loss").display and not screen.query_one("#stab-growth").display
        else:
            assert len(table_lines(app)) == 7


# -- the live sweep ----------------------------------------------------------------------------------

TINY_GRID = stability.LIVE_GRID | {"learning_rates": (0.01,), "steps": 5, "eval_every": 5}


@pytest.fixture
def own_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


async def test_the_live_sweep_trains_through_the_sweeps_own_code_and_draws_each_run(
    store, small_file, monkeypatch, own_temp: Path
) -> None:
    monkeypatch.setattr(stability, "LIVE_GRID", TINY_GRID)
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        await pilot.press("r")
        await until(pilot, lambda: screen.live is not None and screen.live.finished)
        live = screen.live
        assert live is not None and live.finished and not live.cancelled
        assert [(r["norm"], r["lr"], r["steps"]) for r in live.records] == [("pre", 0.01, 5), ("none", 0.01, 5)]
        specs = model.sweep.grid(**TINY_GRID)
        assert [r["key"] for r in live.records] == [s.key() for s in specs]  # `tutor sweep`'s grid, its keys
        assert screen.show_live and "Live sweep" in screen_text(app)
        assert "Live: 2 runs in" in screen_text(app, "#stab-status")
        assert len(table_lines(app)) == 1 + 2
        assert list(own_temp.iterdir()) == []  # the checkpoints went with the run
        await press(pilot, "l")
        assert not screen.show_live and len(table_lines(app)) == 1 + 6


async def until(pilot, done, seconds: float = 600.0) -> None:  # type: ignore[no-untyped-def]
    """Pause until `done()` (the live run shares the machine: no fixed number of pauses is enough)."""
    import time

    end = time.monotonic() + seconds
    while not done() and time.monotonic() < end:
        await pilot.pause(0.05)
    assert done()


async def test_the_live_sweep_cancels_with_its_key_with_escape_and_on_leaving(store, small_file, monkeypatch) -> None:
    # one validation at the start only: the run is all steps (`settle` would wait for its worker: not used below)
    monkeypatch.setattr(stability, "LIVE_GRID", TINY_GRID | {"steps": 100_000, "eval_every": 100_000})
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        for cancel in ("r", "escape"):
            await pilot.press("r")
            await until(pilot, lambda: screen.live is not None and screen.live.step >= 1)
            assert "Live: run 1/2" in screen_text(app, "#stab-status")
            lr = screen.lr
            await pilot.press("right", "v", "v")  # keys do not wait for the run
            await pilot.pause(0.2)
            assert screen.lr != lr and not screen.live.finished
            await pilot.press(cancel)
            await settle(pilot)
            assert screen.live.finished and screen.live.cancelled and screen.live.step < 100_000
            assert app.screen is screen  # Escape cancelled; it did not leave
        await pilot.press("r")
        await until(pilot, lambda: screen.live.step >= 1)
        app.pop_screen()  # leaving the screen while it trains
        await settle(pilot)
        assert screen._stop is not None and screen._stop.is_set()
        assert not [w for w in app.workers if w.is_running]  # the thread saw it at its next step and ended


async def test_a_failing_live_run_is_a_notice_and_the_sweep_goes_on(store, small_file, monkeypatch) -> None:
    monkeypatch.setattr(stability, "LIVE_GRID", TINY_GRID)
    real = model.sweep.train_run

    def failing(spec, *args, **kwargs):  # type: ignore[no-untyped-def]
        if spec.recipe.norm == "pre":
            raise MemoryError("no room")
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(model.sweep, "train_run", failing)
    app = make_app(store)
    said = notices(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        await pilot.press("r")
        await until(pilot, lambda: screen.live is not None and screen.live.finished)
        assert [r["norm"] for r in screen.live.records] == ["none"]
        assert any("failed: MemoryError: no room" in message for message in said), said
        assert app.screen is screen


def test_the_live_grid_is_the_issues() -> None:
    specs = model.sweep.grid(**stability.LIVE_GRID)
    assert [(s.recipe.norm, s.recipe.learning_rate) for s in specs] == [
        (norm, lr) for norm in ("pre", "none") for lr in (0.01, 0.03, 0.1, 0.3, 1.0)
    ]
    assert {(s.steps, s.seed, s.shape, s.recipe.warmup_steps) for s in specs} == {(150, 0, "4x64", 15)}
