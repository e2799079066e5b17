"""A calmer first hour (issue 29 §3): the panels' details and the footer's keys wait for the lesson that explains
them, every key works all along, and the learner can ask for everything at once."""

from __future__ import annotations

import pytest
from helpers import make_app, settle

from tutor.lessons.parse import load_lessons
from tutor.panels.step_info import StepInfo
from tutor.paths import content_dir
from tutor.progress import Progress
from tutor.reach import DETAILS, EVERYTHING, FOOTER_KEYS, reach_of
from tutor.screens.main import MainScreen
from tutor.screens.main_keys import FOOTER
from tutor.widgets.position_pictures import PositionPictures

ORDER = {
    "using-tutor": 0,
    "tokens": 1,
    "attention": 2,
    "order": 3,
    "sinusoidal": 4,
    "layernorm": 6,
    "residual": 7,
    "gradient-walk": 8,
}


def test_each_detail_waits_for_its_lesson_and_no_longer() -> None:
    first = reach_of(ORDER, ["using-tutor"])
    assert not any(first.shows(detail) for detail in DETAILS)
    assert {"block(1)", "turn", "practice"} <= first.held_keys
    assert reach_of(ORDER, []) == first  # nothing opened yet: the first lesson's reach
    fifth = reach_of(ORDER, ["using-tutor", "sinusoidal"])
    assert fifth.shows("positions") and not fifth.shows("stats") and "turn" in fifth.held_keys
    assert "block(1)" not in fifth.held_keys  # the attention lesson came before
    seventh = reach_of(ORDER, ["layernorm"])
    assert seventh.shows("stats") and seventh.shows("hooks") and seventh.shows("positions")
    assert reach_of(ORDER, ["using-tutor"], everything=True) == EVERYTHING
    assert not EVERYTHING.held_keys and all(EVERYTHING.shows(detail) for detail in DETAILS)


def test_a_detail_whose_lesson_is_not_loaded_is_always_shown() -> None:
    """A teacher's own lessons without the sinusoidal one: nothing waits for a lesson that never comes."""
    reach = reach_of({"intro": 0, "layernorm": 1}, ["intro"])
    assert reach.shows("positions") and not reach.shows("stats")


def test_every_detail_and_key_names_a_shipped_lesson_and_a_real_key() -> None:
    """A renamed lesson would silently show its details from the start; a renamed action, its key always."""
    for lang in ("en", "zh"):
        ids = {lesson.id for lesson in load_lessons(lang, content_dir())}
        assert set(DETAILS.values()) | set(FOOTER_KEYS.values()) <= ids, lang
    actions = {binding.action for binding in MainScreen.BINDINGS if binding.show}
    assert set(FOOTER_KEYS) <= actions and set(FOOTER_KEYS) <= set(FOOTER)


def footer_words(app) -> str:
    return " ".join(str(binding.description) for _, binding, _, _ in app.main.active_bindings.values() if binding.show)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_new_learner_s_first_screen_shows_what_lesson_one_names(store, lang) -> None:
    app = make_app(store, content_dir(), lang=lang)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        main = app.main
        info = str(main.query_one(StepInfo).render())
        assert "‖x‖" in info and "μ" not in info and "hook_" not in info, info
        assert not main.query(PositionPictures)  # not even mounted: mounted when first shown
        held = main.place.reach.held_keys
        assert {"block(1)", "turn", "head(1)"} <= held
        shown = footer_words(app)
        assert FOOTER["block(1)"][lang == "zh"] not in shown and FOOTER["links"][lang == "zh"] in shown, shown
        # every key works all along: PgDn still walks a block
        await pilot.press("pagedown")
        await settle(pilot)
        assert main.place.step.name == "blocks.0.ln1"  # from the embedding: block 0

        await app.open_lesson("sinusoidal")
        await settle(pilot)
        assert main.query_one(PositionPictures).display
        await app.open_lesson("layernorm")
        await settle(pilot)
        info = str(main.query_one(StepInfo).render())
        assert "μ" in info and "hook_" in info, info
        assert FOOTER["block(1)"][lang == "zh"] in footer_words(app)
        await app.open_lesson("using-tutor")  # back to lesson 1: what was taught stays
        await settle(pilot)
        assert "μ" in str(main.query_one(StepInfo).render())
    again = make_app(store, content_dir(), lang=lang)  # and next time
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert again.main.place.reach.shows("stats")


async def test_show_everything_shows_it_all_at_once_and_is_kept(store) -> None:
    app = make_app(store, content_dir())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert not app.main.place.reach.shows("positions")
        app.action_show_everything()
        await settle(pilot)
        main = app.main
        assert main.query_one(PositionPictures).display and "μ" in str(main.query_one(StepInfo).render())
        assert FOOTER["turn"][0] in footer_words(app)
    saved, _ = store.load()
    assert saved.last.get("everything") is True
    again = make_app(store, content_dir())
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert again.main.place.reach == EVERYTHING
        again.action_show_everything()  # and back: as the lessons reach them
        await settle(pilot)
        assert not again.main.place.reach.shows("positions")
        assert FOOTER["turn"][0] not in footer_words(again)


async def test_a_store_that_says_everything_in_another_shape_is_not_everything(store) -> None:
    store.save(Progress(last={"everything": "yes"}))
    app = make_app(store, content_dir())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert not app.main.place.reach.shows("stats")
