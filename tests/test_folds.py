"""Folds in a lesson (tutor/lessons/folds.py): checked like the rest of the lesson, shown as one line until the
learner opens it by a click, Enter or space, and left out of the lesson's reading time."""

from __future__ import annotations

from pathlib import Path

from test_lessons import assert_problem, lesson_text, line_of, write_tree

from tutor.lessons.check import check_content
from tutor.lessons.display import display_markdown
from tutor.lessons.parse import parse_lesson
from tutor.lessons.reading import reading_minutes

DERIVATION = "tiny has 1044 tokens. " + "A long derivation step by step. " * 120 + "[Inside](tutor:show?step=embed)."
FOLD = f"<details><summary>Why 1044</summary>\n\n{DERIVATION}\n\n</details>"
CLAIMS = '```tutor-claims\n"1044" = "tiny.vocab_size"\n```'


def with_fold(lang: str, fold: str = FOLD, claims: str = CLAIMS) -> str:
    return lesson_text(lang) + f"\n{fold}\n\n{claims}\n"


def test_a_fold_passes_and_its_claims_and_links_are_checked(tmp_path: Path) -> None:
    good = write_tree(tmp_path / "good", en=with_fold("en"), zh=with_fold("zh"))
    assert check_content(good) == []
    wrong = FOLD.replace("1044 tokens", "1045 tokens").replace("step by step.", "[step](tutor:show?step=nowhere).", 1)
    root = write_tree(tmp_path / "bad", en=with_fold("en", wrong, CLAIMS.replace("1044", "1045")), zh=with_fold("zh"))
    path = root / "en" / "01-demo.md"
    problems = check_content(root)
    assert_problem(problems, path, line_of(path, '"1045" ='), "is 1044")
    assert_problem(problems, path, line_of(path, "tutor:show?step=nowhere"), "nowhere")


def test_a_broken_fold_is_a_problem_at_its_line(tmp_path: Path) -> None:
    unclosed = lesson_text("en") + "\n<details><summary>Open</summary>\n\nText.\n"
    root = write_tree(tmp_path / "a", en=unclosed)
    path = root / "en" / "01-demo.md"
    assert_problem(check_content(root), path, line_of(path, "<details>"), "not closed")
    heading = lesson_text("en") + "\n<details><summary>Open</summary>\n\n### Inside\n\n</details>\n"
    root = write_tree(tmp_path / "b", en=heading)
    path = root / "en" / "01-demo.md"
    assert_problem(check_content(root), path, line_of(path, "### Inside"), "no headings inside a fold")


def test_a_closed_fold_is_one_line_with_its_length_and_the_reading_time_leaves_it_out(tmp_path: Path) -> None:
    root = write_tree(tmp_path, en=lesson_text("en") + f"\n{FOLD}\n", zh=lesson_text("zh") + f"\n{FOLD}\n")
    en = parse_lesson(root / "en" / "01-demo.md", "en")
    shown = display_markdown(en)
    assert "[**▸ Why 1044 · 725 words · 4 min**](fold:0)" in shown and "derivation" not in shown
    opened = display_markdown(en, frozenset({0}))
    assert "▾ Why 1044" in opened and DERIVATION in opened and "[▴ Close: Why 1044](fold:0)" in opened
    assert reading_minutes(en) == 1  # the lesson's own text; the fold says its 4 minutes itself
    zh = parse_lesson(root / "zh" / "01-demo.md", "zh")
    assert "▸ Why 1044 · 725 字 · 约 4 分钟" in display_markdown(zh)


async def test_the_learner_opens_and_closes_a_fold_by_key_and_by_click(store, tmp_path: Path) -> None:
    from helpers import make_app, screen_text, settle

    from tutor.widgets.lesson_view import LessonView

    root = write_tree(tmp_path, en=lesson_text("en") + "\nBefore the fold.\n" * 80 + f"\n{FOLD}\n")
    app = make_app(store, root)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.main.query_one(LessonView)
        view.focus()
        await pilot.press("end")
        await settle(pilot)
        assert view.fold_in_view() == 0 and view.check_action("toggle_fold", ()) is True
        assert not any("derivation" in line for line in view.plain_lines)
        await pilot.press("enter")
        assert view.open_folds == {0} and any("derivation" in line for line in view.plain_lines)
        await pilot.press("end", "space")  # from inside the fold's end: closed, its line in view
        assert view.open_folds == frozenset() and not any("derivation" in line for line in view.plain_lines)
        assert view.fold_in_view() == 0
        view.action_follow(view._rendered.links.index("fold:0"))  # a click on the fold's line
        assert view.open_folds == {0}
        view.scroll_home(animate=False)
        await settle(pilot)
        assert view.fold_in_view() is None and view.check_action("toggle_fold", ()) is False
        view.toggle_fold(0)  # closed again: its link is still the lesson's, in F9's list
        await pilot.press("f9")
        await pilot.pause()
        assert "Inside" in screen_text(app)
