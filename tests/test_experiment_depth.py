"""The depth lab, driven through the pilot: every number on screen is the checkpoint's own record."""

from __future__ import annotations

import json
import math
import re
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import make_app, open_experiment, open_from_practice_menu, screen_text, settle
from hypothesis import given
from hypothesis import strategies as st

from model import sweep
from model.weights import SHIPPED_DIR, read_safetensors
from tutor.screens.experiments import depth_lab, live_training
from tutor.screens.experiments.depth_lab import FAMILY, LOSS_STEPS, DepthLabScreen, figure
from tutor.screens.experiments.drift import DriftScreen
from tutor.screens.experiments.training import SERIES_LOOK
from tutor.widgets.line_chart import LineChart

LAYER_ROW = re.compile(r"^\s*(emb|B\d+|嵌入|块\d+)((?:\s+\S+){4})\s*$")


def stored(name: str) -> dict:
    """The checkpoint's "training" record, read here on its own (not through the screen's reader)."""
    _, metadata = read_safetensors(SHIPPED_DIR / f"{name}.safetensors")
    return json.loads(metadata["training"])


def depth(name: str) -> dict:
    return stored(name)["depth"]


async def open_lab(pilot) -> DepthLabScreen:
    await open_experiment(pilot, "depth")
    screen = pilot.app.screen
    assert isinstance(screen, DepthLabScreen)
    return screen


async def press(pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await settle(pilot)


async def show(pilot, screen: DepthLabScreen, view: str) -> None:
    while screen.view_key != view:
        await press(pilot, "v")


async def pick(pilot, screen: DepthLabScreen, left: str, right: str) -> None:
    for key, side, name in (("1", "left", left), ("2", "right", right)):
        for _ in range(len(FAMILY)):
            if screen.pair[0 if side == "left" else 1].name == name:
                break
            await press(pilot, key)
        assert screen.pair[0 if side == "left" else 1].name == name


def table_rows(app) -> dict[str, list[str]]:
    """The per-layer table as the terminal shows it: row label → the four cells (L init … R trained)."""
    rows = {}
    for line in screen_text(app, "#depth-table-box").split("\n"):
        if match := LAYER_ROW.match(line.rstrip("▁▂▃▄▅▆▇█ ")):
            rows[match.group(1)] = match.group(2).split()
    return rows


def note_text(app) -> str:
    """The view's title and reading, its wrapped lines joined again."""
    return " ".join(line.strip() for line in screen_text(app, "#depth-note").split("\n"))


def assert_shows(cell: str, value: float) -> None:
    """The cell is the figure of `value`, and read back as a number it is `value` to its three digits."""
    assert cell == figure(value), (cell, value)
    assert float(cell) == pytest.approx(value, rel=0.005, abs=1e-300)


def point_labels(n_layers: int, key: str) -> list[str]:
    blocks = [f"B{i}" for i in range(n_layers)]
    return blocks if key == "param_grad" else ["emb", *blocks]


# -- the stored figures --------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["stream_norm", "stream_grad", "param_grad", "similarity"])
async def test_every_figure_in_the_table_is_the_checkpoints(store, key: str) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        assert [r.name for r in screen.pair] == ["deep", "deep-noresidual"]
        await show(pilot, screen, key)
        rows = table_rows(app)
        left, right = depth("deep"), depth("deep-noresidual")
        columns = [left["init"], left["trained"], right["init"], right["trained"]]
        assert list(rows) == point_labels(16, key)
        for i, label in enumerate(point_labels(16, key)):
            for cell, profile in zip(rows[label], columns, strict=True):
                assert_shows(cell, profile[key][i])


async def test_the_highway_numbers_the_issue_names(store) -> None:
    """deep-noresidual's gradient at initialisation: 163 at block 15, 0.00235 at block 0; deep-postnorm's
    trained block 0 gets 2.24e-9; and the chart of such values is on a log axis."""
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        await show(pilot, screen, "param_grad")
        rows = table_rows(app)
        noresidual = depth("deep-noresidual")["init"]["param_grad"]
        assert rows["B15"][2] == "163" and rows["B0"][2] == "0.00235"
        assert_shows(rows["B15"][2], noresidual[15])
        assert_shows(rows["B0"][2], noresidual[0])
        assert app.screen.query_one(LineChart).log_y  # 163 … 5.82e-42
        assert "log scale" in screen_text(app)
        await pick(pilot, screen, "deep", "deep-postnorm")
        rows = table_rows(app)
        postnorm = depth("deep-postnorm")
        assert rows["B0"][3] == "2.24e-9"
        assert_shows(rows["B0"][2], postnorm["init"]["param_grad"][0])  # 1.17
        assert_shows(rows["B0"][3], postnorm["trained"]["param_grad"][0])
        text = note_text(app)
        ratio = postnorm["trained"]["param_grad"][0] / postnorm["trained"]["param_grad"][-1]
        assert (
            f"deep-postnorm {figure(postnorm['init']['param_grad'][0] / postnorm['init']['param_grad'][-1])} at init"
            in text
        )
        assert f"{figure(ratio)} trained" in text


async def test_the_pair_picker_changes_the_numbers_and_the_chart(store) -> None:
    """1 and 2 step the left and the right model through the family, never onto the other side's; a
    4-block model shows its five points and — below."""
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        await show(pilot, screen, "similarity")
        before = table_rows(app)
        await press(pilot, "2")
        assert screen.pair[1].name == FAMILY[FAMILY.index("deep-noresidual") + 1]
        assert table_rows(app) != before
        await pick(pilot, screen, "deep-postnorm", "noresidual")
        rows = table_rows(app)
        trained = depth("noresidual")["trained"]["similarity"]
        assert [rows[label][3] for label in ("B0", "B1", "B2", "B3")] == ["1.00"] * 4
        for i, label in enumerate(point_labels(4, "similarity")):
            assert_shows(rows[label][3], trained[i])
        assert all(rows[f"B{i}"][2:] == ["—", "—"] for i in range(4, 16))
        assert_shows(rows["B15"][1], depth("deep-postnorm")["trained"]["similarity"][16])
        text = screen_text(app)
        assert "L (1) ━P━ deep-postnorm: 16 blocks × 32, post-norm" in text
        assert "R (2) ━@━ noresidual: 4 blocks × 64, pre-norm, no residual" in text
        chart = app.screen.query_one(LineChart)
        assert [s.name for s in chart.series] == [
            "deep-postnorm init",
            "deep-postnorm trained",
            "noresidual init",
            "noresidual trained",
        ]
        assert list(chart.series[3].ys) == trained and list(chart.series[3].xs) == [-1, 0, 1, 2, 3]
        # the left model can step through every model but the right one
        seen = set()
        for _ in range(len(FAMILY)):
            await press(pilot, "1")
            seen.add(screen.pair[0].name)
            assert screen.pair[0].name != screen.pair[1].name
        assert seen == set(FAMILY) - {"noresidual"}


async def test_the_loss_view_holds_the_whole_curve_and_the_baselines(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        assert screen.view_key == "loss"
        left, right = stored("deep"), stored("deep-noresidual")
        text = screen_text(app, "#depth-table-box")
        for step in LOSS_STEPS:
            cells = dict(left["val_loss"])[step], dict(right["val_loss"])[step]
            assert re.search(rf"^\s*{step}\s+{cells[0]:.3f}\s+{cells[1]:.3f}\s*$", text, re.M), (step, text)
        text = screen_text(app)
        base = left["baselines"]
        ln_v = math.log(1044)
        assert f"unigram baseline {base['unigram']:.3f}" in text and f"bigram baseline {base['bigram']:.3f}" in text
        assert f"uniform ln V {ln_v:.3f}" in text and "ln 1044 = 6.951" in text
        chart = app.screen.query_one(LineChart)
        (_, _), (low, high) = chart.ranges()
        ys = [y for s in chart.series for y in s.ys]
        assert low <= min(ys) and max(ys) <= high  # the start near 8 and the end, nothing clipped
        assert max(ys) == pytest.approx(left["val_loss"][0][1])
        assert "deep: 16 blocks × 32, pre-norm, warm-up 300, lr 1e-2, loss 7.97 → 1.742" in text


async def test_the_family_view_puts_every_model_in_a_row(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        await show(pilot, screen, "family")
        text = screen_text(app)
        for name in FAMILY:
            record = stored(name)
            d = record["depth"]
            line = next(line for line in text.split("\n") if re.search(rf"\s{re.escape(name)}\s", line))
            loss = f"{record['val_loss'][0][1]:.2f} → {record['val_loss'][-1][1]:.3f}"
            grad = f"{figure(d['init']['param_grad'][0])} → {figure(d['trained']['param_grad'][0])}"
            cos = f"{figure(d['init']['similarity'][-1])} → {figure(d['trained']['similarity'][-1])}"
            assert loss in line and grad in line and cos in line, line
        assert re.search(r"R deep-noresidual .*0\.00235 → 5\.82e-42 +163 → 0\.207 +1\.00 → 1\.00", text)


# -- divergence, broken records --------------------------------------------------------------------


def copy_with(folder: Path, name: str, change=None) -> None:  # type: ignore[no-untyped-def]
    """`name`'s shipped checkpoint in `folder`, its training record changed by `change` (a function)."""
    from safetensors.numpy import save_file

    tensors, metadata = read_safetensors(SHIPPED_DIR / f"{name}.safetensors")
    if change is None:
        shutil.copyfile(SHIPPED_DIR / f"{name}.safetensors", folder / f"{name}.safetensors")
        return
    info = json.loads(metadata["training"])
    change(info)
    metadata = dict(metadata) | {"training": json.dumps(info)}
    save_file({k: v.copy() for k, v in tensors.items()}, str(folder / f"{name}.safetensors"), metadata=metadata)


async def test_a_diverged_record_shows_its_step(store, tmp_path, monkeypatch) -> None:
    folder = tmp_path / "weights"
    folder.mkdir()
    copy_with(folder, "deep")

    def diverged(info: dict) -> None:
        info["diverged"] = {"step": 812, "what": "loss", "value": "inf", "train_loss_since_checkpoint": []}

    copy_with(folder, "deep-postnorm-nowarmup", diverged)
    monkeypatch.setattr(depth_lab, "SHIPPED_DIR", folder)
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        assert [r.name for r in screen.pair] == ["deep", "deep-postnorm-nowarmup"]
        assert "diverged at step 812 (loss became inf)" in screen_text(app)
        await show(pilot, screen, "family")
        line = next(line for line in screen_text(app).split("\n") if "deep-postnorm-nowarmup " in line)
        assert re.search(r"→ 2\.967\s+812\s", line), line


async def test_broken_and_missing_records_are_a_notice_not_a_crash(store, tmp_path, monkeypatch) -> None:
    folder = tmp_path / "weights"
    folder.mkdir()
    copy_with(folder, "deep")
    copy_with(folder, "deep-noresidual")

    def cut(info: dict) -> None:
        info["depth"]["trained"]["stream_norm"] = info["depth"]["trained"]["stream_norm"][:3]

    def no_depth(info: dict) -> None:
        del info["depth"]

    copy_with(folder, "tiny", cut)
    copy_with(folder, "postnorm", no_depth)
    (folder / "nonorm.safetensors").write_bytes(b"not a safetensors file")
    monkeypatch.setattr(depth_lab, "SHIPPED_DIR", folder)
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        assert [r.name for r in screen.records] == ["deep", "deep-noresidual"]
        shown = [n.message for n in app._notifications]
        assert len(shown) == 1, shown
        assert "tiny (stream_norm is not 5 numbers)" in shown[0]
        assert "postnorm (no depth record)" in shown[0]
        assert "nonorm (no training record)" in shown[0] and "deep-nowarmup (not shipped)" in shown[0]
        await press(pilot, "1", "2", "v", "v")
        assert [r.name for r in screen.pair] == ["deep", "deep-noresidual"]  # two models: nothing else to pick
        assert table_rows(app)["B15"]

    # none readable: the screen says so, and no key breaks it
    monkeypatch.setattr(depth_lab, "SHIPPED_DIR", tmp_path / "nothing")
    app = make_app(store, lang="zh")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_lab(pilot)
        assert "深度实验室需要两个带深度记录的随附模型；只找到 0 个。" in screen_text(app)
        await press(pilot, "1", "2", "v", "t", "r", "c")
        assert isinstance(app.screen, DepthLabScreen)
        shown = [n.message for n in app._notifications]
        assert any("deep（没有随附）" in m for m in shown), shown


# -- the live run ----------------------------------------------------------------------------------


# six steps of windows of 8 on the lessons alone: a run of a second or two
QUICK = live_training.LiveSettings(steps=6, n_ctx=8, batch_size=2, eval_every=2, eval_windows=2, stdlib_text=False)


@pytest.fixture
def quick_live(monkeypatch: pytest.MonkeyPatch) -> live_training.LiveSettings:
    monkeypatch.setattr(depth_lab, "LIVE", QUICK)
    return QUICK


@pytest.fixture
def own_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary folder of this test's own (other runs on the machine make live folders in /tmp too)."""
    folder = tmp_path / "temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


async def test_live_training_trains_the_pair_and_draws_it(store, quick_live, own_temp: Path) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        await pick(pilot, screen, "deep-postnorm", "tiny")
        assert "r trains deep-postnorm and tiny side by side, 6 steps" in screen_text(app)
        await press(pilot, "r")
        await pilot.pause(0.1)
        live = screen.live
        assert live is not None and live.finished and not live.cancelled
        assert live.settings.variants == ("deep-postnorm", "tiny")
        assert screen.view_key == "live"
        for name in live.settings.variants:
            assert [step for step, _ in live.val_loss[name]] == [2, 4, 6]
        chart = app.screen.query_one(LineChart)
        assert [len(s.xs) for s in chart.series[:2]] == [3, 3]
        text = screen_text(app)
        assert "Live: done" in text and "View 8/8 (v): live validation loss" in text
        last = [live.val_loss[name][-1][1] for name in live.settings.variants]
        assert re.search(rf"^\s*6\s+{last[0]:.3f}\s+{last[1]:.3f}\s*$", screen_text(app, "#depth-table-box"), re.M)
        assert f"deep-postnorm {last[0]:.3f}" in text
        await press(pilot, "v")  # round to the stored curves
        assert screen.view_key == "loss"
    assert not any(own_temp.iterdir())  # the checkpoints' folder is gone


async def test_live_training_draws_as_it_goes_and_cancels(store, quick_live, monkeypatch) -> None:
    monkeypatch.setattr(depth_lab, "LIVE", replace(quick_live, steps=100_000))
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_lab(pilot)
        await pilot.press("r")
        while screen.live.step < 5:
            await pilot.pause(0.05)
        await pilot.pause(0.05)
        assert not screen.live.finished
        assert len(screen.live.val_loss["deep"]) >= 2  # drawn as they come
        assert "Live: step" in screen_text(app)
        await pilot.press("r")  # a second run while one goes: a notice
        await pilot.pause(0.05)
        assert any("already going" in n.message for n in app._notifications)
        await pilot.press("c")
        await settle(pilot)
        live = screen.live
        assert live.finished and live.cancelled and 5 <= live.step < 100_000
        assert "cancelled at step" in screen_text(app)


async def test_live_training_failure_is_a_notice(store, quick_live, monkeypatch) -> None:
    from model.corpus import CorpusError

    def no_corpus(**_: object) -> None:
        raise CorpusError("the corpus folder is gone")

    monkeypatch.setattr(live_training, "load_corpus", no_corpus)
    app = make_app(store, lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        await press(pilot, "r")
        assert screen.live.finished
        shown = [n.message for n in app._notifications]
        assert "现场训练停止：the corpus folder is gone" in shown
        assert isinstance(app.screen, DepthLabScreen)


async def test_live_divergence_is_a_notice_and_shows_its_step(store, quick_live, monkeypatch) -> None:
    """A step size of a million, no warm-up and no clipping: deep-noresidual's loss is NaN by step 4, for real."""
    from model.train import RECIPES

    wild = replace(RECIPES["deep-noresidual"], learning_rate=1e6, warmup_steps=0, grad_clip=1e30)
    monkeypatch.setattr(live_training, "RECIPES", RECIPES | {"deep-noresidual": wild})
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        await press(pilot, "r")
        await pilot.pause(0.1)
        assert screen.live.finished and not screen.live.cancelled
        assert screen.live.diverged["deep-noresidual"]["step"] == 4
        shown = [n.message for n in app._notifications]
        assert any("Diverged — a result, not a fault: deep-noresidual: diverged at step 4" in m for m in shown), shown
        assert "live run diverged at step 4" in screen_text(app)
        await show(pilot, screen, "family")
        line = next(line for line in screen_text(app).split("\n") if "R deep-noresidual " in line)
        assert re.search(r"→ 3\.486\s+4\s", line), line


# -- small windows, Chinese, the drift link --------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_80x24_shows_every_row_or_the_chart(store, lang: str) -> None:
    """In a small window the digits come first, every layer of them; t shows the chart in their place."""
    app = make_app(store, lang=lang)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_lab(pilot)
        for key in ("stream_norm", "stream_grad", "param_grad", "similarity"):
            await show(pilot, screen, key)
            rows = table_rows(app)
            last = "B15" if lang == "en" else "块15"
            assert last in rows, screen_text(app)
            init = depth("deep-noresidual")["init"][key]
            assert_shows(rows[last][2], init[-1])
            assert not app.screen.query_one(LineChart).display
        text = screen_text(app)
        assert ("t Chart" if lang == "en" else "t 图表") in text
        assert ("d Drift" if lang == "en" else "d 漂移") in text
        await press(pilot, "t")
        chart = app.screen.query_one(LineChart)
        assert chart.display and chart.size.height >= 14
        plot = [line for line in screen_text(app).split("\n") if line[7:8] in ("┤", "│")]
        assert len(plot) >= 8


ALLOWED_LATIN = {
    *FAMILY,
    *(f"{name}:" for name in FAMILY),
    "pre-norm",
    "post-norm",
    "LayerNorm",
    "unigram",
    "bigram",
    "ln",
    "V",
    "L",  # ∂L/∂x, ∂L/∂θ
    "x",
    "cos",
    "cos(x_s,",
    "x_t)",
    "s",
    "t",
    "Esc",
    "r",
    "c",
    "d",
    "v",
    "^p",
    "nats",
    "tutor",  # the app's name
    *(marker for _, marker in SERIES_LOOK.values()),  # the legend's markers
}


async def test_in_chinese_every_word_is_chinese(store) -> None:
    """Every view in Chinese: nothing in Latin letters but the models' names, the formulas' letters and the keys."""
    app = make_app(store, lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        for _ in screen.views():
            text = screen_text(app)
            words = set(re.findall(r"(?<![\w.^-])[A-Za-z][\w\-:().,]*", text))
            assert words <= ALLOWED_LATIN | {f"{w}," for w in ALLOWED_LATIN}, (words - ALLOWED_LATIN, screen.view_key)
            await press(pilot, "v")
        assert "返回" in screen_text(app) and "Back" not in screen_text(app)


async def test_d_opens_the_drift_experiment_and_escape_comes_back(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        await show(pilot, screen, "stream_norm")
        assert "d opens the drift experiment" in note_text(app)
        await press(pilot, "d")
        assert isinstance(app.screen, DriftScreen)
        await press(pilot, "escape")
        assert app.screen is screen and screen.view_key == "stream_norm"


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_lab_opens_from_the_practice_menu_and_from_a_lesson_link(store, lang: str) -> None:
    from tutor.lessons.links import parse_link

    app = make_app(store, lang=lang)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f10")
        await settle(pilot)
        assert ("The depth lab" if lang == "en" else "深度实验室") in screen_text(app)
        await pilot.press("escape")
        await open_from_practice_menu(pilot, "depth")
        assert isinstance(app.screen, DepthLabScreen)
        assert screen_text(app).startswith(" tutor · " + ("The depth lab" if lang == "en" else "深度实验室"))
        await press(pilot, "escape")
        await app.follow(parse_link("tutor:experiment?name=depth"))
        await settle(pilot)
        assert isinstance(app.screen, DepthLabScreen)


async def test_without_colour_the_curves_are_their_markers(store, monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.no_color
        screen = await open_lab(pilot)
        await show(pilot, screen, "param_grad")
        region = screen.query_one(LineChart).region
        plot = "\n".join(
            line[region.x + 8 : region.right] for line in screen_text(app).split("\n")[region.y : region.bottom]
        )
        for marker in ("D", "R", ".", ":"):  # deep and deep-noresidual trained; both at initialisation
            assert marker in plot, plot
        assert not any(0x2800 <= ord(ch) <= 0x28FF for ch in plot)
        assert "╍.╍ deep init" in screen_text(app) and "━R━ deep-noresidual trained" in screen_text(app)


def test_figure_keeps_three_digits_in_eight_cells() -> None:
    cases = {163.2: "163", 1.1722: "1.17", 0.050680: "0.0507", 0.0023505: "0.00235", 2.2430605e-9: "2.24e-9"}
    cases |= {5.82e-42: "5.82e-42", 0.99999999: "1.00", 244.8: "245", 1234.4: "1234", 12345.0: "1.23e4", 0.0: "0"}
    for value, text in cases.items():
        assert figure(value) == text and len(text) <= 8
    assert figure(float("inf")) == "inf" and figure(-0.0506) == "-0.0506"


async def test_a_link_opens_the_lab_on_its_pair_and_view(store) -> None:
    from tutor.lessons.links import parse_link

    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        href = "tutor:experiment?name=depth&left=deep&right=deep-postnorm&view=param_grad"
        await app.follow(parse_link(href))
        await settle(pilot)
        lab = app.screen
        assert isinstance(lab, DepthLabScreen)
        assert [r.name for r in lab.pair] == ["deep", "deep-postnorm"] and lab.view_key == "param_grad"
        trained = depth("deep-postnorm")["trained"]["param_grad"][0]
        assert figure(trained) in screen_text(app)
        await pilot.press("escape")
        await settle(pilot)
        await app.follow(parse_link("tutor:experiment?name=depth&left=deep&right=deep&view=nothing"))
        await settle(pilot)
        lab = app.screen
        assert isinstance(lab, DepthLabScreen) and lab.left != lab.right and lab.view_key == "loss"
        notices = " ".join(n.message for n in app._notifications)
        assert "left=deep, right=deep" in notices and "view=nothing" in notices


def test_the_checker_knows_the_labs_options() -> None:
    from tutor.lessons.check import _depth_lab_problems

    assert not list(_depth_lab_problems({"name": "depth", "left": "deep", "right": "tiny", "view": "family"}))
    problems = list(_depth_lab_problems({"name": "depth", "left": "deap", "view": "grads"}))
    assert any("deap" in p for p in problems) and any("grads" in p for p in problems)
    assert list(_depth_lab_problems({"name": "drift", "view": "loss"})) == ["only the depth lab takes view"]
    assert list(_depth_lab_problems({"name": "depth", "left": "deep", "right": "deep"}))
    # the LayerNorm calculator takes a view of its own, and only that
    assert not list(_depth_lab_problems({"name": "layernorm-calc", "view": "batchnorm"}))
    assert any("vectors" in p for p in _depth_lab_problems({"name": "layernorm-calc", "view": "vectors"}))
    assert list(_depth_lab_problems({"name": "layernorm-calc", "left": "deep"})) == ["only the depth lab takes left"]


# -- the family over seeds ---------------------------------------------------------------------------


def seed_runs(name: str, finals: list[float | None], similarity: list[float], spikes: list[bool]) -> list[dict]:
    """A variant's records over seeds, as the results file holds them."""
    runs = []
    for seed, (final, cos, spiked) in enumerate(zip(finals, similarity, spikes, strict=True)):
        losses = [3.0] * 60 + ([9.0] if spiked else [3.0]) + [3.0] * 5
        runs.append(
            {
                "key": f"{name}-{seed}",
                "name": name,
                "shape": "16x32",
                "norm": "post",
                "lr": 0.01,
                "warmup": 300,
                "seed": seed,
                "outcome": "diverged" if final is None else "trained",
                "final_val_loss": final,
                "diverged": {"step": 40, "what": "loss"} if final is None else None,
                "train_loss": losses,
                "last_block_similarity": cos,
            }
        )
    return runs


@given(
    st.integers(1, 6).flatmap(
        lambda n: st.tuples(
            st.lists(st.none() | st.floats(1.0, 4.0), min_size=n, max_size=n),
            st.lists(st.floats(-1.0, 1.0), min_size=n, max_size=n),
            st.lists(st.booleans(), min_size=n, max_size=n),
        )
    ),
    st.sampled_from(["en", "zh"]),
)
def test_the_seed_sentence_says_how_often_and_never_more(runs: tuple, lang: str) -> None:
    finals, similarity, spikes = runs
    (variant,) = sweep.variants(seed_runs("deep-postnorm", finals, similarity, spikes))
    n, collapsed, spiked = len(finals), sum(c >= sweep.COLLAPSED_SIMILARITY for c in similarity), sum(spikes)
    assert (variant.collapsed, variant.spiked) == (collapsed, spiked)
    said = depth_lab.seed_sentence(variant, lang)
    for k, what in ((collapsed, "collapsed"), (spiked, "spiked")):
        phrase = depth_lab.how_often(k, n, lang, what)
        assert phrase in said
        every, none = ("every seed", "no seed") if lang == "en" else ("全部", "没有一个种子")
        assert (every in phrase) == (k == n) and (none in phrase) == (k == 0)
        assert (f"{k} of {n}" if lang == "en" else f"{k}/{n}") in phrase
    finite = sorted(f for f in finals if f is not None)
    if finite:
        assert f"{finite[0]:.3f}" in said and f"{finite[-1]:.3f}" in said
    else:
        assert said.rstrip("。.").endswith("—")


async def test_the_seeds_view_is_the_results_file(store) -> None:
    results = sweep.read_results(sweep.SHIPPED_RESULTS / "depth-seeds.jsonl.gz")
    assert results.problem is None and results.runs
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        await show(pilot, screen, "seeds")
        text = screen_text(app)
        for variant in sweep.variants(results.runs):
            n = variant.cell.n
            row = next(line for line in text.split("\n") if re.match(rf"\s*{re.escape(variant.name)}\s+{n}\s", line))
            losses = [variant.final_loss(i) for i in range(n)]
            assert " ".join("—" if x is None else f"{x:.3f}" for x in losses) in row
            assert f"{variant.collapsed}/{n}" in row and f"{variant.spiked}/{n}" in row
            assert depth_lab.seed_sentence(variant, "en") in " ".join(text.split())


async def test_without_the_seeds_file_the_view_says_so(store, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(depth_lab, "SHIPPED_RESULTS", tmp_path)
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_lab(pilot)
        await show(pilot, screen, "seeds")
        assert f"No results over seeds: no results file at {tmp_path / 'depth-seeds.jsonl.gz'}" in " ".join(
            screen_text(app).split()
        )
