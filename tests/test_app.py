"""The app through Textual's pilot: what the panels show must be the trace's own numbers."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
from helpers import LESSON_EN, LESSON_ZH, make_app, random_params, screen_text, settle, small_config

import model
from model import GPT, GPTConfig
from tutor.app import TutorApp
from tutor.lessons.links import parse_link
from tutor.paths import content_dir
from tutor.step_words import step_label
from tutor.widgets.lesson_view import LessonView
from tutor.widgets.step_bar import StepBar, short_name


@pytest.fixture
def content(tmp_path: Path) -> Path:
    root = tmp_path / "content"
    for lang, text in (("en", LESSON_EN), ("zh", LESSON_ZH)):
        (root / lang).mkdir(parents=True)
        (root / lang / "01-demo.md").write_text(text, encoding="utf-8")
    return root


def numbers_after(text: str, label: str, count: int) -> list[float]:
    """The `count` numbers on the first screen line that starts with `label` and has that many numbers."""
    for line in text.split("\n"):
        fields = line.strip().removeprefix(label).split()
        if line.strip().startswith(label + " ") and len(fields) >= count:
            try:
                return [float(f) for f in fields[:count]]
            except ValueError:
                continue
    raise AssertionError(f"no line starting with {label!r} and {count} numbers")


async def test_prompt_has_focus_and_typing_updates_the_tokens(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.focused is app.screen.query_one("#prompt")
        await pilot.press("ctrl+u", *"狗追猫的")
        await settle(pilot)
        trace = app.main.place.trace
        assert trace is not None and trace.pieces == list("狗追猫的")
        text = screen_text(app)
        for pos, (piece, token) in enumerate(zip(trace.pieces, trace.tokens, strict=True)):
            assert f"{pos} {piece}·{token}" in text


async def test_stepping_through_the_whole_pass_shows_each_steps_numbers(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        trace = app.main.place.trace
        await pilot.press("shift+up")
        for step in trace.steps:
            await pilot.pause()
            assert app.main.place.step_index == step.index
            text = screen_text(app)
            assert f"Step {step.index + 1}/{len(trace.steps)} · {step_label(step, 'en')}" in text
            before = np.linalg.norm(trace[step.in_hook][2].astype(np.float64))
            after = np.linalg.norm(trace[step.out_hook][2].astype(np.float64))
            assert f"‖x‖ {before:.3f} → {after:.3f}" in text, screen_text(app, "#stepinfo")
            await pilot.press("down")
        assert app.main.place.step_index == len(trace.steps) - 1  # stays on the last step


async def test_layernorm_panel_shows_mu_sigma_and_xhat_of_the_trace(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        app.main.goto_step_name("blocks.2.ln2")
        await pilot.pause()
        trace, text = app.main.place.trace, screen_text(app, "#layernorm")
        assert "Block 2 · LayerNorm 2: normalising each token's own vector" in text
        x = trace["blocks.2.hook_resid_mid"].astype(np.float64)
        x_hat = trace["blocks.2.ln2.hook_xhat"].astype(np.float64)
        y = trace["blocks.2.ln2.hook_normalized"].astype(np.float64)
        scale = trace["blocks.2.ln2.hook_scale"][:, 0]
        for pos, piece in enumerate(trace.pieces):
            expected = [
                x[pos].mean(),
                x[pos].std(),
                scale[pos],
                x_hat[pos].mean(),
                x_hat[pos].std(),
                np.linalg.norm(x_hat[pos]),
                y[pos].mean(),
                y[pos].std(),
            ]
            assert numbers_after(text, f"{pos} {piece}", len(expected)) == pytest.approx(expected, abs=6e-4)
        assert f"‖x̂‖ ≈ √64 = {math.sqrt(64):.2f}" in " ".join(text.split())  # the legend may wrap at a space


async def test_attention_panel_shows_the_pattern_of_the_selected_head(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗的")
        await settle(pilot)
        app.main.goto_step_name("blocks.1.attn")
        await pilot.press("f4", "f4")
        await pilot.pause()
        pattern = app.main.place.trace["blocks.1.attn.hook_pattern"][2]
        text = screen_text(app, "#attention")
        assert "Block 1 · head 2/4" in text
        for q, piece in enumerate("猫追狗的"):
            cells = next(line.split()[2:] for line in text.split("\n") if line.startswith(f"{q} {piece} "))
            assert cells == [f"{p:.2f}" for p in pattern[q][: q + 1]] + ["·"] * (3 - q)


async def test_next_token_panel_and_token_cursor(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        app.main.goto_step_name("unembed")
        await pilot.press("alt+left")
        await pilot.pause()
        assert app.main.place.token == 1
        text = screen_text(app)
        assert "After 追 (position 1) the model guesses:" in text
        ((_, _, prob),) = app.main.place.trace.top_k(1, position=1)
        assert f"{prob:6.1%}".strip() in text


async def test_block_keys_jump_between_blocks(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        steps = app.main.place.trace.steps
        await pilot.press("pagedown", "pagedown")
        assert steps[app.main.place.step_index].name == "blocks.1.ln1"
        await pilot.press("pageup")
        assert steps[app.main.place.step_index].name == "blocks.0.ln1"
        await pilot.press("shift+down")
        assert steps[app.main.place.step_index].name == "unembed"
        await pilot.press("pageup")
        assert steps[app.main.place.step_index].name == "blocks.3.ln1"
        app.main.query_one("#panels PanelTabs").focus()
        await pilot.press("2")
        assert steps[app.main.place.step_index].name == "blocks.2.ln1"


async def test_letter_keys_type_into_the_prompt_and_step_elsewhere(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"jk12")
        await settle(pilot)
        assert app.main.query_one("#prompt").value == "jk12" and app.main.place.step_index == 0
        app.main.query_one("#panels PanelTabs").focus()
        await pilot.press("j", "j", "k")
        assert app.main.place.step_index == 1
        await pilot.press("slash")
        assert app.focused is app.main.query_one("#prompt")


@pytest.mark.parametrize(
    "config",
    [
        dict(norm="pre"),
        dict(norm="post"),
        dict(norm="none"),
        dict(residual=False),
        dict(norm="post", residual=False),
        dict(positional="rope"),
        dict(positional="none", causal=False),
    ],
    ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()),
)
async def test_every_variant_steps_end_to_end_and_the_bar_covers_every_step(store, config) -> None:
    cfg = small_config(**config)
    from helpers import TOKENIZER

    gpt = GPT(cfg, random_params(cfg), TOKENIZER, name="variant")
    app = make_app(store, gpt=gpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        bar = app.main.query_one(StepBar)
        assert [chip[2] for chip in bar._chips()] == list(gpt.steps)
        for _ in gpt.steps:
            await pilot.press("down")
            assert screen_text(app)  # every panel draws at every step
        assert app.main.place.step_index == len(gpt.steps) - 1
        assert short_name(gpt.steps[-1]) == "out"


async def test_lesson_opens_with_its_prompt_step_and_panel_and_links_drive_the_panels(store, content) -> None:
    app = make_app(store, content)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await settle(pilot)
        main = app.main
        assert main.place.lesson is not None and main.place.lesson.id == "demo"
        assert main.query_one("#prompt").value == "狗追猫"
        assert main.place.trace.steps[main.place.step_index].name == "blocks.1.ln2"
        assert main.query_one("#panels").active == "layernorm"
        assert "def layer_norm(" in screen_text(app)  # quoted live from model/
        link = "tutor:show?prompt=%E8%BF%BD%E7%8C%AB%E7%8B%97&step=blocks.0.attn&panel=attention"
        await app.follow(parse_link(link))
        await settle(pilot)
        assert main.query_one("#prompt").value == "追猫狗"
        assert main.place.trace.pieces == list("追猫狗")
        assert main.place.trace.steps[main.place.step_index].name == "blocks.0.attn"
        assert main.query_one("#panels").active == "attention"


async def test_chinese_headings_are_reachable(store, content) -> None:
    app = make_app(store, content, lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        lesson_view = app.main.query_one(LessonView)
        heading_line = dict(lesson_view._rendered.headings)["公式与代码"]
        assert lesson_view.goto_heading("公式与代码")
        await settle(pilot)
        assert 0 < lesson_view.scroll_y == min(heading_line, lesson_view.max_scroll_y)
        assert not lesson_view.goto_heading("没有这个标题")


async def test_a_click_on_a_lesson_link_follows_it(store, content) -> None:
    app = make_app(store, content)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        lesson_view = app.main.query_one(LessonView)
        target = parse_link("tutor:show?prompt=追猫狗&step=blocks.0.attn&panel=attention")
        links = lesson_view._rendered.links
        index = next(i for i, href in enumerate(links) if parse_link(href).params == target.params)
        y, x = next(
            (y, sum(segment.cell_length for segment in line[:k]))
            for y, line in enumerate(lesson_view._rendered.lines)
            for k, segment in enumerate(line)
            if segment.style is not None and segment.style.meta.get("@click") == f"follow({index})"
        )
        lesson_view.scroll_to(y=y, animate=False)
        await settle(pilot)
        top = lesson_view.content_region.y - lesson_view.region.y
        left = lesson_view.content_region.x - lesson_view.region.x
        assert await pilot.click(LessonView, offset=(left + x, top + y - round(lesson_view.scroll_y)))
        await settle(pilot)
        assert app.main.place.trace.pieces == list("追猫狗")
        assert app.main.place.trace.steps[app.main.place.step_index].name == "blocks.0.attn"
        assert app.main.query_one("#panels").active == "attention"


async def test_language_switch_and_progress_are_kept(store, content) -> None:
    app = make_app(store, content)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        assert app.lang == "zh" and "示例课" in screen_text(app)
        await pilot.press("down")
        await pilot.press(*["alt+down"] * 5)  # to the end of the lesson
        await pilot.press("f8")  # the last lesson, read: marks it done
        await settle(pilot)
    saved, notice = store.load()
    assert notice is None and saved.done == ["demo"]
    assert saved.last["lang"] == "zh" and saved.last["lesson"] == "demo"
    assert saved.last["step"] == "blocks.1.mlp" and saved.last["prompt"] == "狗追猫"


async def test_progress_brings_the_learner_back(store, content) -> None:
    app = make_app(store, content)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+u", *"猫猫")
        await settle(pilot)
        await pilot.press("shift+down")
    again = make_app(store, content)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await settle(pilot)
        assert again.main.query_one("#prompt").value == "猫猫"
        assert again.main.place.trace.steps[again.main.place.step_index].name == "unembed"


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
async def test_layouts_at_each_size(store, content, size) -> None:
    app = make_app(store, content)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        main = app.main
        assert main.query_one("#lesson").display  # a new learner starts on the lesson, in any window
        assert main.query_one("#work").display == (size[0] >= 110)  # a small one has the panels behind F3
        if size[0] < 110:  # F3 swaps the lesson for the panels
            await pilot.press("f3")
            await pilot.pause()
            assert not main.query_one("#lesson").display and main.query_one("#work").display
        text = screen_text(app)
        assert "Step" in text and "猫" not in text.split("\n")[0]
        await pilot.press("f3")
        await pilot.pause()
        if size[0] < 110:  # and back
            assert main.query_one("#lesson").display and not main.query_one("#work").display
        # the side panels: mounted only once the window is wide
        assert [side.display for side in main.query("#side")] == ([True] if size[0] >= 170 else [])


async def test_a_tiny_terminal_gets_a_notice_not_a_crash(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(40, 10)) as pilot:
        await settle(pilot)
        assert "Make the window larger" in screen_text(app)
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert "Make the window larger" not in screen_text(app)


async def test_untrained_weights_are_said_plainly(store) -> None:
    from helpers import TOKENIZER

    config = small_config()
    untrained = GPT(config, random_params(config), TOKENIZER, trained=False)
    for gpt, says in ((untrained, True), (model.load("tiny"), False)):
        app = make_app(store, gpt=gpt)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            assert ("untrained" in screen_text(app).split("\n")[0]) == says


async def test_empty_and_huge_prompts(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u")
        await settle(pilot)
        assert "Type a prompt" in screen_text(app)
        app.main.set_prompt("猫" * 500)
        await settle(pilot)
        strip = " ".join(screen_text(app, "#tokens").split())
        assert "only the last 64 tokens are used (436 dropped)" in strip


async def test_model_switch_to_an_unshipped_variant_is_a_notice(store, tmp_path, monkeypatch) -> None:
    """Every variant ships today, so one is made unshipped: a weights folder that holds tiny and rope only."""
    from model import weights

    folder = tmp_path / "weights"
    folder.mkdir()
    for name in ("tiny", "rope"):
        (folder / f"{name}.safetensors").symlink_to(model.SHIPPED_DIR / f"{name}.safetensors")
    monkeypatch.setattr(model, "SHIPPED_DIR", folder)  # where model.load looks
    monkeypatch.setattr(weights, "SHIPPED_DIR", folder)  # where shipped_models() looks
    assert model.shipped_models() == ["rope", "tiny"]
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        trace = app.main.place.trace
        app.clear_notifications()
        assert app.main.switch_model("nope") is False
        await settle(pilot)
        notices = [n for n in app._notifications if "nope" in str(n.message)]
        assert notices and notices[0].severity == "warning", [str(n.message) for n in app._notifications]
        assert app.main.place.gpt.name == "tiny" and app.main.place.trace is trace  # the model and its numbers stay
        assert app.main.switch_model("rope") is True  # a shipped one still switches
        await settle(pilot)
        assert app.main.place.gpt.name == "rope" and app.main.place.trace is not trace  # run again on rope


@pytest.mark.parametrize("name", ["tiny", "nope", "deep-postnorm"])
async def test_gpt_config_used_by_the_app_is_the_shipped_one(store, name: str) -> None:
    """The app runs on the config stored in the shipped checkpoint, which is its training recipe's."""
    from model.train import RECIPES
    from model.weights import read_safetensors

    _, metadata = read_safetensors(model.SHIPPED_DIR / f"{name}.safetensors")
    stored = GPTConfig.from_json(metadata["config"])
    assert stored == RECIPES[name].config(stored.vocab_size)
    app = make_app(store, gpt=model.load(name))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.main.place.gpt.config == stored
        trace = app.main.place.trace
        assert trace["blocks.0.hook_resid_pre"].shape[-1] == stored.d_model
        assert 1 + max(s.block for s in trace.steps if s.block is not None) == stored.n_layers
        assert ("hook_pos_embed" in trace) == (stored.positional in ("sinusoidal", "learned"))


def test_chinese_wraps_between_characters_and_keeps_punctuation_on_the_line() -> None:
    from rich.console import Console
    from rich.text import Text

    from tutor.patches import cjk_wrap

    cjk_wrap.install()
    console = Console(width=20, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(Text("在注意力里，每个词元的 query 和所有 key 做点积，而 q 和 k 都只由词元向量算出来。"))
    lines = console.export_text().splitlines()
    assert len(lines[0].rstrip()) >= 8  # the first line is filled, not cut at the first space
    assert not any(line.startswith(("，", "。")) for line in lines)


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_no_color_every_step_and_every_panel(store, monkeypatch, size) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(store)
    assert app.no_color
    async with app.run_test(size=size) as pilot:
        await pilot.press("ctrl+u", *"猫追狗的")
        await settle(pilot)
        tabs = app.main.query_one("#panels")
        kinds_seen: set[str] = set()
        for step in app.main.place.trace.steps:  # the first step of each kind, in every panel
            if step.kind in kinds_seen:
                continue
            kinds_seen.add(step.kind)
            app.main.goto_step_index(step.index)
            for panel in ("vectors", "layernorm", "residual", "attention", "next"):
                tabs.active = panel
                app.main.refresh_panels()
                await pilot.pause()
                assert screen_text(app)  # drawn without colour, no crash
        app.main.goto_step_name("blocks.0.ln1")
        await pilot.pause()
        assert "8.000" in screen_text(app)  # ‖x̂‖ = √64 still reads without colour


async def test_lesson_links_can_be_followed_from_the_keyboard(store, content) -> None:
    app = make_app(store, content)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await settle(pilot)
        await pilot.press("f9")
        await pilot.pause()
        assert "Try 追猫狗 at attention" in screen_text(app)
        await pilot.press("enter")
        await settle(pilot)
        main = app.main
        assert main.query_one("#prompt").value == "追猫狗"
        assert main.place.trace.steps[main.place.step_index].name == "blocks.0.attn"


async def test_every_link_in_the_shipped_lessons_can_be_followed(store) -> None:
    """Each distinct link target of the shipped lessons, followed once in one app (many links recur across lessons
    and in both languages). A link without a model is followed in its lesson's model, the one its step is written
    for. Every single link, in every lesson, is also checked statically by the content checker (test_lessons)."""
    from tutor.lessons.links import labelled_links
    from tutor.lessons.parse import load_lessons

    targets: dict[tuple[str, str | None], str] = {}  # (href, its lesson's model if a show link names none) → lesson
    for lang in ("en", "zh"):
        for lesson in load_lessons(lang):
            for _label, href in labelled_links(lesson.body):
                link = parse_link(href)
                if link.action == "lesson":
                    continue
                unnamed = link.action == "show" and "model" not in link.params
                context = (lesson.model or model.DEFAULT_MODEL) if unnamed else None
                targets.setdefault((href, context), f"{lang}/{lesson.id}")
    assert len(targets) >= 50  # the lessons' links were found (117 links, 54 targets in November 2026)

    app = make_app(store, content_dir())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for (href, context), where in targets.items():
            link = parse_link(href)
            if context is not None and app.main.place.gpt.name != context:
                assert app.main.switch_model(context, from_lesson=True), where
                await settle(pilot)
            await app.follow(link)
            await settle(pilot)
            if link.action in ("experiment", "exercise", "quiz"):  # a screen of its own opens
                assert app.screen is not app.main, (where, href)
                warnings = [n.message for n in app._notifications if n.severity != "information"]
                assert not warnings, (where, href, warnings)
                app.pop_screen()
                await settle(pilot)
                continue
            assert app.main.place.gpt.name == link.params.get("model", context), (where, href)
            if "prompt" in link.params:
                assert app.main.place.prompt == link.params["prompt"], (where, href)
            if "step" in link.params:
                assert app.main.place.trace.steps[app.main.place.step_index].name == link.params["step"], (where, href)


async def test_emptying_the_prompt_clears_every_panel(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        app.main.goto_step_name("blocks.0.ln1")
        await pilot.press("ctrl+u")
        await settle(pilot)
        for panel in ("vectors", "layernorm", "residual", "attention", "next"):
            app.main.query_one("#panels").active = panel
            await pilot.pause()
            text = screen_text(app, "#panels")
            assert "Type a prompt to see the model at work." in text, panel
            assert "猫" not in text, panel
        assert "猫" not in screen_text(app, "#side")


async def test_a_model_named_on_the_command_line_beats_the_saved_one(store, tmp_path) -> None:
    config = small_config(positional="rope")
    from helpers import TOKENIZER

    path = tmp_path / "rope-small.safetensors"
    model.save_checkpoint(path, config, random_params(config), TOKENIZER, trained=False)
    store.save(__import__("tutor.progress", fromlist=["Progress"]).Progress(last={"model": "tiny", "prompt": "猫"}))
    for resume, expected in ((False, "rope-small"), (True, "tiny")):
        app = TutorApp(model.load(path), "en", store=store, content=Path("/nonexistent"), resume_model=resume)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await settle(pilot)
            assert app.main.place.gpt.name == expected


async def test_the_embed_step_states_how_position_enters(store) -> None:
    from helpers import TOKENIZER

    for positional, formula in (
        ("rope", "RoPE turns q and k"),
        ("none", "no position information"),
        ("learned", "W_E[token] + W_pos[pos]"),
        ("sinusoidal", "W_E[token] + PE(pos)"),
    ):
        config = small_config(positional=positional)
        app = make_app(store, gpt=GPT(config, random_params(config), TOKENIZER, name=positional))
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            assert formula in screen_text(app, "#stepinfo"), positional


async def test_a_link_selects_a_token_of_the_prompt_it_sets(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.follow(parse_link("tutor:show?prompt=%E7%8C%AB%E8%BF%BD%E7%8B%97%E7%9A%84&token=1"))
        await settle(pilot)
        assert app.main.place.trace.pieces == list("猫追狗的") and app.main.place.token == 1


def test_heatmap_headers_fit_their_cells() -> None:
    from rich.cells import cell_len

    from tutor.widgets.heatmap import fit_cells

    for text in ("0 猫", "11 人", "12 人人人", "7", "θ12"):
        assert cell_len(fit_cells(text, 5)) == 5


async def test_in_a_small_window_the_lesson_shown_by_f3_takes_the_keys(store) -> None:
    app = make_app(store, content_dir())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f3", "f3")  # the panels, then the lesson again: it fills the window
        lesson = app.main.query_one(LessonView)
        assert app.focused is lesson
        await pilot.press("pagedown", "down")
        await settle(pilot)
        assert lesson.max_scroll_y > 30, lesson.virtual_size
        assert lesson.scroll_y == lesson.scrollable_content_region.height + 1 and app.main.place.step_index == 0
        await pilot.press("f3")  # the panels again: the keys step
        assert app.focused is app.main.query_one("#prompt")
        await pilot.press("down")
        assert app.main.place.step_index == 1


async def test_a_new_theme_recolours_the_lesson(store, content) -> None:
    app = make_app(store, content)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        lesson = app.main.query_one(LessonView)
        heading = lesson.get_component_rich_style("lesson-view--h2", partial=True)
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await settle(pilot)
        assert lesson._rendered_styles["markdown.h2"] != heading
        y = dict(lesson._rendered.headings)["What you will understand"]
        colours = {segment.style.color for segment in lesson._rendered.lines[y] if segment.text.strip()}
        assert colours == {lesson._rendered_styles["markdown.h2"].color}


async def test_a_click_on_a_panel_name_shows_that_panel(store, content) -> None:
    from tutor.widgets.panel_tabs import PanelTabs

    app = make_app(store, content)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        tabs = app.main.query_one(PanelTabs)
        line = str(tabs.render())
        x = line.index("Attention") + tabs.styles.gutter.left
        assert await pilot.click(PanelTabs, offset=(x + 1, 0))
        await settle(pilot)
        assert app.main.query_one("#panels").active == "attention"
        assert "Attention" in screen_text(app, "#panels") and "head" in screen_text(app, "#panels").lower()
        tabs.focus()
        await pilot.press("right")  # ← / → walk the names while the tab line has the focus
        await settle(pilot)
        assert app.main.query_one("#panels").active == "next"


async def test_lesson_text_can_be_selected_and_copied(store, content) -> None:
    from textual.selection import Selection

    app = make_app(store, content)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        lesson = app.main.query_one(LessonView)
        text, _ = lesson.get_selection(Selection(None, None))
        assert "What you will understand" in text and "def layer_norm(" in text
        app.screen.selections = {lesson: Selection(None, None)}  # everything: drawn in the selection colours
        await settle(pilot)
        selected = app.screen.get_component_rich_style("screen--selection")
        strip = lesson.render_line(1)
        lit = [segment.style.bgcolor for segment in strip if segment.style and segment.text.strip()]
        assert selected.bgcolor in lit


async def test_the_footer_speaks_the_learners_language(store, content) -> None:
    app = make_app(store, content, lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        footer = screen_text(app).splitlines()[-1]
        assert "步进" in footer and "课文/面板" in footer and "Step" not in footer
        await pilot.press("f5")
        await settle(pilot)
        footer = screen_text(app).splitlines()[-1]
        assert "Step" in footer and "Lesson/panels" in footer and "步进" not in footer


async def test_a_resize_across_the_compact_width_moves_the_focus_to_what_is_shown(store) -> None:
    app = make_app(store, content_dir())
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")  # wide: the lesson hidden, the prompt keeps the keys
        assert app.focused is app.main.query_one("#prompt")
        await pilot.resize_terminal(100, 40)  # compact with the lesson chosen: the lesson fills the window
        await settle(pilot)
        lesson = app.main.query_one(LessonView)
        assert app.focused is lesson
        await pilot.press("pagedown")
        assert lesson.scroll_y > 0 and app.main.place.step_index == 0


@pytest.mark.parametrize("size", [(100, 24), (62, 30)])
async def test_panel_tables_fit_their_width_on_the_first_frame_of_a_tab(store, size) -> None:
    """A tab being switched to is drawn before it is laid out: its tables must still fit (or be made
    again at once) — not wrap their last column onto a line of its own."""
    from tutor.panels.layernorm_panel import LayerNormPanel
    from tutor.panels.residual_panel import ResidualPanel

    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await pilot.press("ctrl+u", *"the quick brown fox jumps")
        await settle(pilot)
        for _ in app.main.place.trace.steps:
            await pilot.press("down")
            await pilot.pause()
            for panel in (*app.main.query(ResidualPanel), *app.main.query(LayerNormPanel)):
                if panel.size.width and panel._shown is not None:  # shown: made for the width it has
                    step = app.main.place.trace.steps[app.main.place.step_index].name
                    assert panel._width_used == panel.content_size.width, (step, type(panel).__name__)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_layernorm_tab_numbers_the_norm_ahead_as_the_step_line_does(store, lang: str) -> None:
    """From the MLP (step 6), the LayerNorm tab shows block 1's LN1 and said "(→ step 7)": its index, counted
    from 0, though the step line counts from 1 and calls it step 8 (in Chinese with ASCII brackets too)."""
    app = make_app(store, lang=lang)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*["down"] * 5)  # step 6: block 0's MLP
        await settle(pilot)
        app.main.query_one("#panels").active = "layernorm"
        await settle(pilot)
        ahead = "(→ step 8)" if lang == "en" else "（→ 步骤 8）"
        shown = " ".join(screen_text(app, "LayerNormPanel").split())  # the title may wrap
        assert ahead in shown, shown
        await pilot.press("down", "down")
        await settle(pilot)
        step_line = "Step 8/27" if lang == "en" else "步骤 8/27"
        assert step_line in screen_text(app) and app.main.place.trace.steps[7].name == "blocks.1.ln1"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("everything", [False, True])
async def test_the_footer_keeps_f1_whatever_it_leaves_out(store, lang: str, everything: bool) -> None:
    """At 80×24 on the panels the footer left out "f1 Help" (in English; in both languages with everything shown):
    the keys it leaves out are in the help, so the help's own key must stay."""
    from tutor.progress import Progress

    if everything:
        store.save(Progress(last={"everything": True}))
    app = make_app(store, content_dir(), lang=lang)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f3", "down")  # the panels, a step on
        await settle(pilot)
        await pilot.pause(0.2)  # the footer composes its keys after a refresh
        footer = screen_text(app).splitlines()[-1]
        assert ("f1 Help" if lang == "en" else "f1 帮助") in footer, footer
        assert ("↓↑ Step" if lang == "en" else "↓↑ 步进") in footer, footer  # the first keys still come first
