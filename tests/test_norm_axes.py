"""LayerNorm beside BatchNorm on one prompt's matrix: what the words say is what the numbers are."""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest
from helpers import make_app, open_experiment, screen_text, settle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import model
from model import GPT, batch_norm, layer_norm
from tutor.lessons.links import parse_link
from tutor.screens.experiments.norm_axes import (
    LISTED,
    UNCHANGED,
    BothNorms,
    NormAxesView,
    RowChange,
    both_norms,
    compare,
    delta_text,
    describe,
    edit_words,
    norm_steps,
)

ALPHABET = "猫追狗的一是在不了有和这中大为上个我以要他时来用们生到作地于出就分对成会可abc xyz,.!"


@cache
def tiny() -> GPT:
    return model.load("tiny")


# -- reading the sentences back into numbers -----------------------------------------------------------------

ROW_EN = re.compile(r"row (\d+) (?:moved )?by (\d+\.\d{3})")
ROW_ZH = re.compile(r"第 (\d+) 行变了 (\d+\.\d{3})")
SUMMARY_EN = re.compile(
    r"(all (\d+)|(\d+) of the (\d+)) earlier rows moved \(most: row (\d+), (\d+\.\d{3}); "
    r"least: row (\d+), (\d+\.\d{3})\)"
)
SUMMARY_ZH = re.compile(
    r"(前面 (\d+) 行全都变了|前面 (\d+) 行里有 (\d+) 行变了)"
    r"（最多：第 (\d+) 行，(\d+\.\d{3})；最少：第 (\d+) 行，(\d+\.\d{3})）"
)


def named_rows(sentence: str, lang: str) -> dict[int, str]:
    return {int(r): d for r, d in (ROW_ZH if lang == "zh" else ROW_EN).findall(sentence)}


def check_rows_sentence(sentence: str, deltas: np.ndarray, lang: str) -> None:
    """The rows `sentence` says moved are exactly those that moved, each with its own max |Δ|."""
    moved = [r for r in range(len(deltas)) if not deltas[r] < UNCHANGED]
    assert moved, sentence
    if len(moved) <= LISTED:
        assert named_rows(sentence, lang) == {r: delta_text(float(deltas[r])) for r in moved}, sentence
        return
    found = (SUMMARY_ZH if lang == "zh" else SUMMARY_EN).search(sentence)
    assert found, sentence
    _, all_n, some_n, of_n, top, top_delta, low, low_delta = found.groups()
    if lang == "zh":  # 前面 {of} 行里有 {n} 行: the two numbers come the other way round
        some_n, of_n = of_n, some_n
    if len(moved) == len(deltas):
        assert int(all_n) == len(deltas), sentence
    else:
        assert (int(some_n), int(of_n)) == (len(moved), len(deltas)), sentence
    values = deltas[moved]
    assert int(top) == moved[int(np.argmax(values))] and top_delta == delta_text(float(values.max())), sentence
    assert int(low) == moved[int(np.argmin(values))] and low_delta == delta_text(float(values.min())), sentence


def check_described(after: BothNorms, change: RowChange | None, lang: str) -> None:
    """Every label and sentence of `describe` against the numbers it was made from."""
    described = describe(after, change, "step", "hook", lang)
    t, d = after.x.shape
    assert f"{t} " in described.source and f"{d} " in described.source
    lines = described.lines
    if t == 1:
        assert np.abs(after.batch[0] - after.beta).max() < UNCHANGED  # BatchNorm of one token is β ...
        assert "max |y − β| = 0.000" in lines[0]  # ... and the sentence says so
    if change is None:
        assert all("Δ" not in label for label in described.layer_labels + described.batch_labels)
        return
    first = change.first
    for labels, deltas in ((described.layer_labels, change.layer), (described.batch_labels, change.batch)):
        for pos, label in enumerate(labels):  # the rows before the change carry their max |Δ|, the others none
            assert label.endswith(f" Δ{delta_text(float(deltas[pos]))}") if pos < first else "Δ" not in label
    moved = {name: [r for r in range(first) if not deltas[r] < UNCHANGED] for name, deltas in vars_of(change)}
    assert described.layer_moved == moved["layer"] and described.batch_moved == moved["batch"]
    edit = lines[-3] if first else lines[-2]
    assert str(first) in edit
    if first == 0:
        assert ("no earlier row" if lang == "en" else "前面没有行") in lines[-1]
        return
    layer_line, batch_line = lines[-2], lines[-1]
    assert layer_line.startswith("LayerNorm") and batch_line.startswith("BatchNorm")
    same = "stayed the same" if lang == "en" else "没变"
    assert (same in layer_line) == (not moved["layer"])
    if moved["layer"]:
        check_rows_sentence(layer_line.split("—")[0], change.layer, lang)
    else:
        assert f"max |Δ| {delta_text(float(change.layer.max()))} <" in layer_line
    leak = "leak of the future" if lang == "en" else "泄露"
    assert (leak in batch_line) == bool(moved["batch"] and not moved["x"])
    if moved["batch"]:
        check_rows_sentence(batch_line.split("(x there" if lang == "en" else "（那里")[0], change.batch, lang)
    else:
        assert same in batch_line


def vars_of(change: RowChange) -> list[tuple[str, np.ndarray]]:
    return [("x", change.x), ("layer", change.layer), ("batch", change.batch)]


# -- the model's own prompts, edited -----------------------------------------------------------------------------

prompts = st.text(alphabet=ALPHABET, min_size=1, max_size=14)
edits = st.tuples(
    st.sampled_from(["replace", "append", "remove", "insert", "replace_last"]), st.integers(0, 20), prompts
)


def edited(prompt: str, edit: tuple[str, int, str]) -> str:
    kind, where, text = edit
    if kind == "append":
        return prompt + text
    if kind == "remove":
        return prompt[: max(0, len(prompt) - 1 - where % len(prompt))] or text
    if kind == "insert":
        pos = where % len(prompt)
        return prompt[:pos] + text + prompt[pos:]
    pos = len(prompt) - 1 if kind == "replace_last" else where % len(prompt)
    return prompt[:pos] + text[0] + prompt[pos + 1 :]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prompt=prompts, edit=edits, norm=st.integers(0, 8), lang=st.sampled_from(["en", "zh"]))
def test_the_words_say_what_the_numbers_are_over_many_prompts(
    prompt: str, edit: tuple[str, int, str], norm: int, lang: str
) -> None:
    gpt = tiny()
    step = norm_steps(gpt)[norm % len(norm_steps(gpt))]
    before = both_norms(gpt, gpt.run(prompt), step)
    after = both_norms(gpt, gpt.run(edited(prompt, edit)), step)
    change = compare(before, after)
    if change is not None:
        # the causal model and LayerNorm: no row before the change moves, whichever norm reads the stream
        assert (change.x < UNCHANGED).all() and (change.layer < UNCHANGED).all()
    check_described(after, change, lang)
    check_described(before, None, lang)


matrices = st.integers(1, 7).flatmap(
    lambda t: st.tuples(
        st.just(t),
        st.integers(0, 2**32 - 1),
        st.integers(0, t),  # the first changed row
        st.booleans(),  # whether the earlier x moves too (a model whose positions see later tokens)
        st.floats(0.0, 1e-3),  # how far: around the UNCHANGED line
    )
)


@settings(max_examples=200, deadline=None)
@given(case=matrices, lang=st.sampled_from(["en", "zh"]))
def test_the_words_follow_the_numbers_when_earlier_x_moves_too(
    case: tuple[int, int, int, bool, float], lang: str
) -> None:
    """Matrices made up for every branch: earlier x moving or not, by a little (rounding) or a lot."""
    t, seed, first, x_moves, nudge = case
    rng = np.random.default_rng(seed)
    d = 6
    gamma, beta = rng.normal(1, 0.3, d), rng.normal(0, 0.3, d)

    def norms(ids: tuple[int, ...], x: np.ndarray) -> BothNorms:
        pieces = tuple(ALPHABET[i % len(ALPHABET)] for i in ids)
        return BothNorms(ids, pieces, x, layer_norm(x, gamma, beta), batch_norm(x, gamma, beta), beta, 1e-5)

    x = rng.normal(0, 2, (t, d))
    later = x.copy()
    later[first:] += rng.normal(0, 1, (t - first, d))
    if x_moves:
        later[:first] += nudge * rng.choice([-1.0, 1.0], (first, d)) * rng.integers(0, 2, (first, 1))
    ids = tuple(range(t))
    new_ids = ids[:first] + tuple(i + 100 for i in ids[first:])
    after = norms(new_ids, later)
    check_described(after, compare(norms(ids, x), after), lang)


@pytest.mark.parametrize(
    ("before", "after", "en", "zh"),
    [
        ("猫追狗", "猫追猫", "Token 2 changed: “狗” → “猫”.", "第 2 个词元变了：“狗” → “猫”。"),
        ("猫追狗的一是", "猫追狗的H是", "Token 4 changed: “一” → “H”.", "第 4 个词元变了：“一” → “H”。"),
        ("猫追狗", "猫追狗的一", "Tokens 3–4 “的一” added at the end.", "末尾加了第 3–4 个词元“的一”。"),
        ("猫追狗", "猫的追狗", "“的” inserted at position 1.", "在第 1 个位置插入了“的”。"),
        ("猫追狗", "猫追", "Token 2 “狗” removed from the end.", "删掉了末尾的第 2 个词元“狗”。"),
    ],
)
def test_the_edit_is_named_by_the_tokens_that_differ(before: str, after: str, en: str, zh: str) -> None:
    gpt = tiny()
    step = norm_steps(gpt)[0]
    change = compare(both_norms(gpt, gpt.run(before), step), both_norms(gpt, gpt.run(after), step))
    assert change is not None
    assert edit_words(change, "en") == en and edit_words(change, "zh") == zh


def test_one_token_batchnorm_is_beta_and_the_screen_says_so() -> None:
    gpt = tiny()
    step = norm_steps(gpt)[0]
    one = both_norms(gpt, gpt.run("猫"), step)
    assert np.array_equal(one.batch[0], one.beta)
    for lang, words in (("en", "its row is β whatever the token"), ("zh", "输出这一行就是 β")):
        line = describe(one, None, "s", "h", lang).lines[0]
        assert words in line and "0 / 0" in line
    with np.errstate(invalid="ignore"):  # 0 / 0 on purpose
        no_eps_batch = batch_norm(one.x, 1.0, one.beta, 0.0)
    no_eps = BothNorms(one.ids, one.pieces, one.x, one.layer, no_eps_batch, one.beta, 0.0)
    line = describe(no_eps, None, "s", "h", "en").lines[0]
    assert "undefined (nan)" in line and "row is β" not in line  # ε = 0: the words do not claim β


# -- on screen ---------------------------------------------------------------------------------------------------


def grid_labels(app, grid_id: str) -> list[str]:
    return [row.label for row in app.screen.query_one(grid_id).rows]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_later_token_moves_batchnorms_earlier_rows_on_screen(store, lang: str, size: tuple[int, int]) -> None:
    app = make_app(store, lang=lang)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await app.follow(parse_link("tutor:experiment?name=layernorm-calc&view=batchnorm"))
        await settle(pilot)
        view = app.screen.query_one(NormAxesView)
        prompt = app.screen.query_one("#bn-prompt")
        assert prompt.has_focus and view.display
        prompt.value = "猫追狗"
        await settle(pilot)
        text = screen_text(app)
        assert ("LayerNorm: by row" if lang == "en" else "LayerNorm：按行") in text
        assert ("BatchNorm: by column, over 3 tokens" if lang == "en" else "BatchNorm：按列，每列 3 个词元") in text
        await pilot.press("alt+up")  # the last token, 狗, becomes another
        await settle(pilot)
        assert prompt.value.startswith("猫追") and prompt.value != "猫追狗"
        change = view.described
        assert change is not None and change.layer_moved == [] and change.batch_moved == [0, 1]
        text = screen_text(app)
        labels = grid_labels(app, "#bn-batch")
        assert labels[0].startswith("0 猫 Δ") and labels[1].startswith("1 追 Δ") and "Δ" not in labels[2]
        assert all(label.endswith("Δ0.000") for label in grid_labels(app, "#bn-layer")[:2])
        for row in app.screen.query_one("#bn-batch").rows[:2]:
            assert row.highlight  # the rows that moved are lit
        words = " ".join(line.strip() for line in text.split("\n"))
        for label in labels[:2]:  # the sizes in the labels are the ones in the sentence
            assert label.split("Δ")[1] in words
        assert ("leak of the future" if lang == "en" else "泄露") in words
        footer = text.split("\n")[-1]
        assert "alt+↑↓" in footer and "alt+←→" in footer
        await pilot.press("alt+left", "alt+left", "alt+up")  # now token 0 changes: no earlier row to watch
        await settle(pilot)
        assert view.described.batch_moved == [] and ("Token 0" if lang == "en" else "第 0 个") in screen_text(app)
        prompt.value = "猫"
        await settle(pilot)
        assert ("0 / 0" in screen_text(app)) and view.described.batch_title.endswith(
            "1 token" if lang == "en" else "1 个词元"
        )
        await pilot.press("alt+v")  # back to the one-vector calculator, its keys in the footer
        await settle(pilot)
        assert app.screen.query_one("#ln-x").has_focus
        footer = screen_text(app).split("\n")[-1]
        label = "alt+v BatchNorm" if lang == "en" else "alt+v 对比 BN"
        assert "alt+↑↓" not in footer and label in footer  # the way back fits at 80 too


async def test_typing_at_the_end_is_a_later_token_too(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "layernorm-calc")
        await pilot.press("alt+v")
        await settle(pilot)
        app.screen.query_one("#bn-prompt").value = "猫追狗的"
        await settle(pilot)
        await pilot.press("end", *"一是")
        await settle(pilot)
        view = app.screen.query_one(NormAxesView)
        assert view.described.batch_moved == [0, 1, 2, 3, 4] and view.described.layer_moved == []
        assert "Token 5 “是” added at the end." in screen_text(app)  # compared with the prompt shown last
        await pilot.press("f6")  # another norm: the same two prompts, read at block 0's second LayerNorm
        await settle(pilot)
        assert "blocks.0.hook_resid_mid" in screen_text(app) and view.described.batch_moved == [0, 1, 2, 3, 4]


async def test_the_calculators_view_option(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        notices: list[str] = []
        notify = app.notify
        # kept as they come: on a loaded machine a notice may time out before a settle is over
        app.notify = lambda message, *args, **kwargs: (notices.append(str(message)), notify(message, *args, **kwargs))
        await app.follow(parse_link("tutor:experiment?name=layernorm-calc&view=sideways"))
        await settle(pilot)
        assert any("view=sideways" in notice for notice in notices)
        assert app.screen.query_one("#ln-x").has_focus  # the calculator as it always opened
