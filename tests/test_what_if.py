"""What if? The learner's edits of the model (tutor/edits.py) and the screen that makes them (alt+x, alt+p, the
edits bar, `tutor:show?edit=`): each edit reads back from its link form, fits or says why not, and every number
the bar and the panels print for an edited run is the edited and the clean run's own."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import make_app, screen_text, settle

import model
from model.patching import resid_pre_grid
from tutor.edits import (
    Edit,
    EditWordsError,
    differences,
    model_edits,
    parse_edit,
    parse_edits,
    patch_edit,
    prompt_loss,
    step_edit,
)
from tutor.lessons.check import _edit_problems
from tutor.patch_sweep import answer_and_wrong, patch_sweep

EVERY_KIND = [
    Edit("head", block=1, head=2),
    Edit("skip", block=0, sublayer="attn"),
    Edit("skip", block=3, sublayer="mlp"),
    Edit("drop", block=2, sublayer="attn"),
    Edit("bypass", block=0, hook="blocks.0.ln2"),
    Edit("bypass", hook="ln_final"),
    Edit("patch", block=1, hook="blocks.1.hook_resid_pre", token=2, source="狗追猫"),
    Edit("patch", block=0, head=3, hook="blocks.0.attn.hook_z", source="狗追猫"),
]


@pytest.mark.parametrize("edit", EVERY_KIND, ids=lambda e: e.link())
def test_an_edit_reads_back_from_its_link_form(edit: Edit) -> None:
    assert parse_edit(edit.link()) == edit
    for lang in ("en", "zh"):
        assert edit.words(lang) and "\n" not in edit.words(lang)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("fold:0.1", "unknown edit"),
        ("head:0", "head:B.H"),
        ("skip:0.ffn", "B.attn or B.mlp"),
        ("bypass:blocks.0.attn", "a LayerNorm"),
        ("patch:blocks.0.hook_q:猫", "patch: wants"),
        ("patch:blocks.0.hook_resid_pre@x:猫", "a position"),
        ("patch:blocks.0.hook_resid_pre", "the other prompt"),
        ("", "names no edit"),
        (";".join(["head:0.0"] * 9), "at most"),
    ],
)
def test_an_edit_that_cannot_be_read_is_one_line(text: str, says: str) -> None:
    with pytest.raises(EditWordsError) as error:
        parse_edits(text)
    assert says in str(error.value) and "\n" not in str(error.value)


def test_none_is_no_edits() -> None:
    assert parse_edits("none") == ()


def test_the_edit_of_each_step() -> None:
    gpt = model.load("tiny")
    kinds = {}
    for step in gpt.steps:
        edit = step_edit(step, head=3)
        kinds[step.name] = edit.link() if edit else None
    assert kinds["embed"] is None and kinds["unembed"] is None
    assert kinds["blocks.0.ln1"] == "bypass:blocks.0.ln1" and kinds["ln_final"] == "bypass:ln_final"
    assert kinds["blocks.2.attn"] == "head:2.3"
    assert kinds["blocks.2.mlp"] == "skip:2.mlp"
    assert kinds["blocks.1.attn_add"] == "drop:1.attn" and kinds["blocks.1.mlp_add"] == "drop:1.mlp"
    steps = {step.name: step for step in gpt.steps}
    assert patch_edit(steps["blocks.1.ln1"], 0, 2, "x").hook == "blocks.1.hook_resid_pre"  # what the norm reads
    assert patch_edit(steps["blocks.1.attn_add"], 0, 2, "x").hook == "blocks.1.hook_resid_mid"  # what the add writes
    assert patch_edit(steps["blocks.1.attn"], 1, 2, "x").link() == "patch:blocks.1.attn.hook_z.1@2:x"
    assert patch_edit(steps["unembed"], 0, 0, "x") is None


def test_edits_that_do_not_fit_say_why_and_the_others_run() -> None:
    noresidual = model.load("noresidual")
    edits = [
        Edit("drop", block=0, sublayer="attn"),
        Edit("head", block=0, head=9),
        Edit("skip", block=0, sublayer="mlp"),
    ]
    fit, unfit = model_edits(noresidual, edits, 3, noresidual.run)
    assert [type(e).__name__ for e in fit] == ["SkipSublayer"]
    assert [edit.kind for edit, _ in unfit] == ["drop", "head"]
    assert "without residuals" in unfit[0][1] and "\n" not in unfit[1][1]
    nonorm = model.load("nonorm")
    _, unfit = model_edits(nonorm, [Edit("bypass", hook="blocks.0.ln1")], 3, nonorm.run)
    assert "no LayerNorm" in unfit[0][1]
    tiny = model.load("tiny")
    patch = Edit("patch", block=1, hook="blocks.1.hook_resid_pre", token=0, source="狗追")
    _, unfit = model_edits(tiny, [patch], 3, tiny.run)
    assert "2 positions and this prompt 3" in unfit[0][1]


@pytest.mark.parametrize("variant", ["tiny", "postnorm", "nope", "deep"])
@pytest.mark.parametrize("prompt", ["猫追狗", "the cat sat on the mat", "ab"])
def test_the_differences_are_the_two_runs_own(variant: str, prompt: str) -> None:
    """The bar's numbers against the runs themselves: the loss from a run with gradients, p from a softmax in
    float64, ‖out‖ from the trace (an edit per kind the model has)."""
    gpt = model.load(variant)
    n = len(gpt.prompt_tokens(prompt)[0])
    asked = [Edit("head", block=0, head=1), Edit("skip", block=gpt.config.n_layers - 1, sublayer="mlp")]
    fit, unfit = model_edits(gpt, asked, n, gpt.run)
    assert not unfit
    clean, edited = gpt.run(prompt, grads=True), gpt.run(prompt, grads=True, edits=fit)
    for trace in (clean, edited):
        assert prompt_loss(trace) == pytest.approx(trace.loss, rel=1e-5)
    for step in (gpt.steps[2], gpt.steps[-2]):
        for token in range(n):
            found = differences(gpt, edited, clean, step, token)
            assert found.loss == pytest.approx((clean.loss, edited.loss), rel=1e-5)
            assert found.norm[0] == pytest.approx(float(np.linalg.norm(clean[step.out_hook][token])), rel=1e-5)
            assert found.norm[1] == pytest.approx(float(np.linalg.norm(edited[step.out_hook][token])), rel=1e-5)
            for guess in found.guesses:
                ids = [i for i in range(gpt.config.vocab_size) if gpt.tokenizer.piece(i) == guess.piece]
                p_clean, p_edited = (_softmax(t.logits[token])[ids[0]] for t in (clean, edited))
                assert (guess.clean, guess.edited) == pytest.approx((p_clean, p_edited), abs=1e-6)
            firsts = [g.edited for g in found.guesses[:3]]
            assert firsts == sorted(firsts, reverse=True)  # the edited run's top guesses, in order
            assert np.argmax(clean.logits[token]) in [
                i for g in found.guesses for i in range(gpt.config.vocab_size) if gpt.tokenizer.piece(i) == g.piece
            ]  # and the clean run's first among them


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.float64)
    e = np.exp(z - z.max())
    return e / e.sum()


def test_lessons_check_reads_and_fits_a_links_edits() -> None:
    assert list(_edit_problems("drop:1.attn;head:0.2", "tiny", "猫追狗")) == []
    assert list(_edit_problems("none", "tiny", "猫追狗")) == []
    [unreadable] = _edit_problems("fold:1", "tiny", "猫追狗")
    assert unreadable.startswith("edit: unknown edit")
    [unfit] = _edit_problems("drop:1.attn", "noresidual", "猫追狗")
    assert "does not fit model 'noresidual'" in unfit
    [short] = _edit_problems("patch:blocks.1.hook_resid_pre@0:狗追", "tiny", "猫追狗")
    assert "must match" in short


# -- on screen ------------------------------------------------------------------------------------------------


async def test_alt_x_edits_the_step_on_screen_and_takes_it_back(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        main = app.main
        main.set_prompt("猫追狗")
        await settle(pilot)
        clean_logits = main.place.trace.logits.copy()
        assert main.goto_step_name("blocks.1.attn")
        main.place.set_head(2)
        await pilot.press("alt+x")
        await settle(pilot)
        assert main.place.edits == (Edit("head", block=1, head=2),)
        trace, edited = main.place.trace, main.place.edited
        assert edited is not None and len(trace.edits) == 1
        np.testing.assert_array_equal(edited.clean.logits, clean_logits)  # the clean run beside, untouched
        ablated = model.load("tiny").run("猫追狗", edits=[model.AblateHead(block=1, head=2)])
        np.testing.assert_allclose(trace.logits, ablated.logits, rtol=1e-6)
        bar = screen_text(app, "#edits")
        assert "✕ head 2 of block 1 silenced" in bar
        loss = (prompt_loss(edited.clean), prompt_loss(trace))
        assert f"loss {loss[0]:.2f} → {loss[1]:.2f}" in bar
        await pilot.press("alt+x")  # the same piece again: put back
        await settle(pilot)
        assert main.place.edits == () and main.place.edited is None and not main.place.trace.edits
        assert not main.query_one("#edits").display
        np.testing.assert_array_equal(main.place.trace.logits, clean_logits)


async def test_nothing_to_take_out_at_the_embedding_is_a_notice(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.main.set_prompt("猫追狗")
        await settle(pilot)
        app.main.goto_step_name("embed")
        await pilot.press("alt+x")
        await settle(pilot)
        assert app.main.place.edits == ()
        assert any("Nothing to take out at embed" in str(n.message) for n in app._notifications)


async def test_a_link_brings_its_edits_and_the_next_scene_none(store) -> None:
    app = make_app(store, lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        main = app.main
        await app.follow_href("tutor:show?prompt=猫追狗&edit=drop:1.attn;bypass:blocks.2.ln1&step=blocks.2.ln1")
        await settle(pilot)
        assert [e.link() for e in main.place.edits] == ["drop:1.attn", "bypass:blocks.2.ln1"]
        assert main.place.edited is not None and not main.place.edited.unfit
        assert "第 1 块的注意力去掉残差" in screen_text(app, "#edits")
        await app.follow_href("tutor:show?step=blocks.3.ln1")  # a move only: the edits stay
        await settle(pilot)
        assert len(main.place.edits) == 2
        await app.follow_href("tutor:show?prompt=猫追狗")  # a new scene: the model as trained
        await settle(pilot)
        assert main.place.edits == () and main.place.edited is None


async def test_an_edit_the_model_lacks_is_listed_with_why(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.follow_href("tutor:show?model=noresidual&prompt=猫追狗&edit=drop:0.mlp")
        await settle(pilot)
        edited = app.main.place.edited
        assert edited is not None and [e.link() for e, _ in edited.unfit] == ["drop:0.mlp"]
        assert "trained without residuals" in screen_text(app, "#edits")
        assert not app.main.place.trace.edits  # the clean run is what is shown


async def test_alt_p_patches_the_point_from_another_prompt(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        main = app.main
        main.set_prompt("猫追狗")
        await settle(pilot)
        main.goto_step_name("blocks.2.ln1")
        main.place.set_token(0, coming=False)
        await pilot.press("alt+p")
        await settle(pilot)
        await pilot.press(*"狗追")  # two tokens: refused
        await pilot.press("enter")
        await settle(pilot)
        assert main.place.edits == ()
        assert any("a patch needs prompts of the same length" in str(n.message) for n in app._notifications)
        await pilot.press("alt+p")
        await settle(pilot)
        await pilot.press(*"狗追猫", "enter")
        await settle(pilot)
        assert [e.link() for e in main.place.edits] == ["patch:blocks.2.hook_resid_pre@0:狗追猫"]
        tiny = model.load("tiny")
        patched = tiny.run("猫追狗", edits=[model.Patch("blocks.2.hook_resid_pre", tiny.run("狗追猫"), positions=(0,))])
        np.testing.assert_allclose(main.place.trace.logits, patched.logits, rtol=1e-6)


async def test_a_token_drawn_with_edits_runs_the_edited_model(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        main = app.main
        await app.follow_href("tutor:show?prompt=猫追狗&edit=skip:0.mlp")
        await settle(pilot)
        await pilot.press("alt+n")
        await settle(pilot)
        sampled = main.place.sampling.last
        assert sampled is not None and sampled.full_reason == "edited"
        assert main.place.edited is not None and len(main.place.trace.tokens) == 4
        tiny = model.load("tiny")
        again = tiny.run(main.place.trace.tokens, edits=[model.SkipSublayer(block=0, sublayer="mlp")])
        np.testing.assert_allclose(main.place.trace.logits, again.logits, rtol=1e-6)


def test_answer_and_wrong_differ_when_the_two_prompts_agree() -> None:
    tiny = model.load("tiny")
    same = tiny.run("猫追狗")
    answer, wrong = answer_and_wrong(same, same)
    assert answer == int(np.argmax(same.logits[-1])) and wrong == int(np.argsort(-same.logits[-1])[1])
    sweep = patch_sweep(tiny, "猫追狗", same, same)  # the same run: nothing to restore, said in one line
    assert sweep.grid is None and "nothing to restore" in sweep.problem


@pytest.mark.parametrize("variant", ["tiny", "nope"])
async def test_the_patching_view_shows_the_sweep_of_the_patchs_other_prompt(store, variant: str) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 50)) as pilot:
        await settle(pilot)
        edit = "patch:blocks.1.hook_resid_pre@2:狗追猫"
        await app.follow_href(f"tutor:show?model={variant}&prompt=猫追狗&edit={edit}&panel=residual")
        await settle(pilot)
        sweep = app.main.place.edited.sweep
        gpt = model.load(variant)
        source, prompt = gpt.run("狗追猫"), gpt.run("猫追狗")
        answer, wrong = int(np.argmax(source.logits[-1])), int(np.argmax(prompt.logits[-1]))
        assert answer != wrong  # both models: the two prompts' first guesses differ
        expected = resid_pre_grid(gpt, source, prompt, answer, wrong)
        np.testing.assert_allclose(sweep.grid, expected, rtol=1e-6)
        shown = screen_text(app, "PatchingPanel")
        assert "Patching “狗追猫” into “猫追狗”" in shown
        for block, row in enumerate(expected):
            line = next(line for line in shown.split("\n") if line.strip().startswith(f"B{block} input"))
            assert line.split()[2:] == [f"{v:+.2f}" for v in row]
        await app.follow_href("tutor:show?edit=head:0.1")  # no patch: no patching view
        await settle(pilot)
        assert not app.main.query_one("PatchingPanel").display


async def test_the_palette_offers_the_edits_of_the_step_on_screen(store) -> None:
    from tutor.app import what_if_commands

    app = make_app(store, lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        main = app.main
        main.set_prompt("猫追狗")
        await settle(pilot)
        main.goto_step_name("blocks.1.attn")
        main.place.set_head(2)
        titles = [title for title, _, _ in what_if_commands(main, "zh")]
        assert titles == ["假如：第 1 块的 2 号头置零", "假如：用另一个提示词替换这一点的值"]
        [edit_now, *_] = list(what_if_commands(main, "zh"))
        edit_now[1]()
        await settle(pilot)
        titles = [title for title, _, _ in what_if_commands(main, "zh")]
        assert titles[0] == "撤回：第 1 块的 2 号头置零" and titles[-1].startswith("撤回所有改动")
        main.goto_step_name("embed")
        assert next(title for title, _, _ in what_if_commands(main, "zh")) == "假如：用另一个提示词替换这一点的值"


async def test_an_edited_step_says_so_where_its_formula_is(store) -> None:
    """The step's formula is the trained model's: an edited step says what was changed before it, and a bypassed
    LayerNorm's panels show x's own μ and σ, not the identity's 0 and 1 the trace records."""
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.follow_href("tutor:show?prompt=猫追狗&step=blocks.1.ln2&panel=layernorm&edit=bypass:blocks.1.ln2")
        await settle(pilot)
        info = screen_text(app, "#stepinfo")
        assert "✕ blocks.1.ln2 bypassed: LN(x) = x" in info
        x = app.main.place.trace["blocks.1.hook_resid_mid"].astype(np.float64)
        shown = screen_text(app, "#panels")
        assert "What if: bypassed, LN(x) = x" in shown
        row = next(line.split() for line in shown.split("\n") if line.strip().startswith("0 猫"))
        assert row[2:5] == [f"{x[0].mean():+.3f}", f"{x[0].std():.3f}", f"{np.sqrt(x[0].var() + 1e-5):.3f}"]
        await app.follow_href("tutor:show?step=blocks.2.ln2")  # another step: its formula as trained
        await settle(pilot)
        assert "✕" not in screen_text(app, "#stepinfo")
