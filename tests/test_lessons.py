"""The lessons and their checker: the shipped content passes, and every kind of fault is caught
with its file and line."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_tutor

from tutor.lessons.check import LANGS, SECTIONS, check_content
from tutor.lessons.parse import load_lessons, parse_lesson, resolve_code
from tutor.lessons.reading import reading_minutes

SECTION_BODY = {
    "en": ["Text with a [link](tutor:show?step=embed).", "", "", "", "", "QUIZ", ""],
    "zh": ["正文，有个[链接](tutor:show?step=embed)。", "", "", "", "", "QUIZ", ""],
}
QUIZ = """```tutor-quiz
[[questions]]
question = "One?"
choices = ["a", "b"]
answer = 0
explanation = "Because."

[[questions]]
question = "Two?"
choices = ["a", "b"]
answer = 1
explanation = "Because."

[[questions]]
question = "Three?"
choices = ["a", "b", "c"]
answer = 2
explanation = "Because."
```"""


def lesson_text(lang: str, lesson_id: str = "demo", order: int = 1, **front: str) -> str:
    meta = {
        "id": f'"{lesson_id}"',
        "order": str(order),
        "title": '"Demo"',
        "prompt": '"猫追狗"',
        "steps": '["blocks.0.ln1"]',
        "panels": '["layernorm"]',
    }
    meta.update(front)
    lines = ["+++", *(f"{key} = {value}" for key, value in meta.items()), "+++", "", "# Demo", ""]
    for heading, body in zip(SECTIONS[lang], SECTION_BODY[lang], strict=True):
        lines += [f"## {heading}", "", body.replace("QUIZ", QUIZ), ""]
    return "\n".join(lines)


def write_tree(root: Path, name: str = "01-demo.md", **texts: str) -> Path:
    for lang in ("zh", "en"):
        (root / lang).mkdir(parents=True, exist_ok=True)
        (root / lang / name).write_text(texts.get(lang, lesson_text(lang)), encoding="utf-8")
    return root


def line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1) if needle in line)


def assert_problem(problems: list[str], path: Path, line: int, *words: str) -> None:
    hits = [p for p in problems if p.startswith(f"{path}:{line}: ") and all(w in p for w in words)]
    assert hits, f"no problem at {path}:{line} mentioning {words}; got:\n" + "\n".join(problems)


# -- the shipped lessons -----------------------------------------------------------------------


def test_shipped_lessons_pass_the_checker() -> None:
    assert check_content() == []


def test_shipped_lessons_cover_the_topics_in_order() -> None:
    ids = [lesson.id for lesson in load_lessons("en")]
    expected = ["using-tutor", "tokens", "attention", "order", "sinusoidal", "learned-rope", "layernorm", "residual"]
    expected += ["gradient-walk", "norm-placement", "forward-pass"]
    assert ids == expected
    assert [lesson.id for lesson in load_lessons("zh")] == ids


def test_a_small_valid_tree_passes(tmp_path: Path) -> None:
    assert check_content(write_tree(tmp_path)) == []


# -- each kind of fault, named by file and line --------------------------------------------------


def test_missing_translation(tmp_path: Path) -> None:
    root = write_tree(tmp_path)
    (root / "zh" / "02-extra.md").write_text(lesson_text("zh", "extra", 2), encoding="utf-8")
    assert_problem(check_content(root), root / "zh" / "02-extra.md", 1, "no translation", "en/02-extra.md")


def test_broken_front_matter(tmp_path: Path) -> None:
    broken = lesson_text("en").replace('title = "Demo"', "title = Demo without quotes")
    root = write_tree(tmp_path, en=broken)
    path = root / "en" / "01-demo.md"
    assert_problem(check_content(root), path, line_of(path, "title ="), "broken front matter")


def test_front_matter_of_the_wrong_type_and_missing_key(tmp_path: Path) -> None:
    text = lesson_text("en", order='"one"').replace('prompt = "猫追狗"\n', "")
    root = write_tree(tmp_path, en=text)
    path = root / "en" / "01-demo.md"
    problems = check_content(root)
    assert_problem(problems, path, line_of(path, "order ="), "'order' must be a int")
    assert_problem(problems, path, 1, "no 'prompt'")


def test_bold_that_markdown_shows_as_stars(tmp_path: Path) -> None:
    """content/zh/04-order.md showed `**` to the learner: bold closing on 。 right before a character."""
    text = lesson_text("zh").replace("正文，有个", "正文，**两层以上的模型\n分得清顺序。**只是有个")
    root = write_tree(tmp_path, zh=text)
    path = root / "zh" / "01-demo.md"
    assert_problem(check_content(root), path, line_of(path, "正文"), "raw stars")
    fixed = lesson_text("zh").replace("正文，有个", "正文，**两层以上的模型\n分得清顺序**。只是有个")
    assert check_content(write_tree(tmp_path / "fixed", zh=fixed)) == []


def test_unknown_directive(tmp_path: Path) -> None:
    text = lesson_text("en").replace("(tutor:show?step=embed)", "(tutor:dance?step=embed)")
    root = write_tree(tmp_path, en=text)
    path = root / "en" / "01-demo.md"
    assert_problem(check_content(root), path, line_of(path, "tutor:dance"), "unknown directive")


def test_unknown_link_key(tmp_path: Path) -> None:
    text = lesson_text("en").replace("(tutor:show?step=embed)", "(tutor:show?colour=red)")
    root = write_tree(tmp_path, en=text)
    path = root / "en" / "01-demo.md"
    assert_problem(check_content(root), path, line_of(path, "colour=red"), "takes no 'colour'")


@pytest.mark.parametrize(
    ("link", "words"),
    [
        ("tutor:show?panel=heatmap", ("unknown panel", "heatmap")),
        ("tutor:show?step=blocks.9.ln1", ("unknown step", "blocks.9.ln1")),
        ("tutor:show?model=postnorm&step=ln_final", ("unknown step", "ln_final", "postnorm")),
        ("tutor:show?model=gpt5", ("unknown model variant", "gpt5")),
        ("tutor:show?head=4", ("head must be",)),
        ("tutor:show?token=3", ("token must be",)),
        ("tutor:experiment?name=magic", ("unknown experiment", "magic")),
        ("tutor:exercise?name=nothing", ("unknown exercise",)),
        ("tutor:lesson?id=nowhere", ("no lesson with id", "nowhere")),
        ("tutor:lesson?id=demo&heading=Nope", ("has no heading", "Nope")),
        ("tutor:show?prompt=猫追龘", ("'龘' (U+9F98)", "not in the shipped models' vocabulary")),
        ("tutor:show?model=deep&step=blocks.15.ln2", ()),  # the deep variants have 16 blocks
        ("tutor:show?model=deep&step=blocks.16.ln1", ("unknown step", "blocks.16.ln1", "deep")),
    ],
)
def test_link_values_are_checked(tmp_path: Path, link: str, words: tuple[str, ...]) -> None:
    text = lesson_text("zh").replace("(tutor:show?step=embed)", f"({link})")
    root = write_tree(tmp_path, zh=text)
    path = root / "zh" / "01-demo.md"
    if not words:
        assert check_content(root) == []
        return
    assert_problem(check_content(root), path, line_of(path, link), *words)


def test_every_prompt_character_is_one_token_of_the_shipped_vocabulary(tmp_path: Path) -> None:
    """The frozen corpus's vocabulary covers the lessons: a prompt outside it is a check problem."""
    root = write_tree(tmp_path, en=lesson_text("en", prompt='"猫🐈"'))
    path = root / "en" / "01-demo.md"
    assert_problem(check_content(root), path, line_of(path, "prompt = "), "'🐈' (U+1F408)", "vocabulary")


def test_lesson_links_match_headings_by_text_even_in_chinese(tmp_path: Path) -> None:
    text = lesson_text("zh").replace("(tutor:show?step=embed)", "(tutor:lesson?id=demo&heading=公式与代码)")
    assert check_content(write_tree(tmp_path, zh=text)) == []


def test_unknown_panel_and_step_in_front_matter(tmp_path: Path) -> None:
    text = lesson_text("en", panels='["layernorm", "heatmap"]', steps='["blocks.7.attn"]')
    root = write_tree(
        tmp_path, en=text, zh=lesson_text("zh", panels='["layernorm", "heatmap"]', steps='["blocks.7.attn"]')
    )
    path = root / "en" / "01-demo.md"
    problems = check_content(root)
    assert_problem(problems, path, line_of(path, "panels ="), "unknown panel 'heatmap'")
    assert_problem(problems, path, line_of(path, "steps ="), "unknown step 'blocks.7.attn'")


def test_unknown_model_variant_in_front_matter(tmp_path: Path) -> None:
    root = write_tree(tmp_path, en=lesson_text("en", model='"huge"'), zh=lesson_text("zh", model='"huge"'))
    path = root / "zh" / "01-demo.md"
    assert_problem(check_content(root), path, line_of(path, "model ="), "unknown model variant 'huge'")


def test_unresolved_code_reference(tmp_path: Path) -> None:
    text = lesson_text("en").replace("Text with", "```tutor-code\nmodel.norm.layer_normal\n```\n\nText with")
    root = write_tree(tmp_path, en=text)
    path = root / "en" / "01-demo.md"
    assert_problem(check_content(root), path, line_of(path, "```tutor-code"), "does not resolve")


def test_a_code_reference_to_a_number_does_not_resolve(tmp_path: Path) -> None:
    text = lesson_text("en").replace("Text with", "```tutor-code\nmodel.config.MAX_LN_EPS\n```\n\nText with")
    path = write_tree(tmp_path, en=text) / "en" / "01-demo.md"
    lesson = parse_lesson(path, "en")
    assert any(f":{line_of(path, '```tutor-code')}: " in w and "does not resolve" in w for w in lesson.warnings)


def test_loading_the_lessons_checks_their_code_quotes_without_reading_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """A start loads every lesson: their ~20 quoted sources are read when a lesson is shown (~10 ms a start)."""
    read: list[object] = []
    getsource = inspect.getsource
    monkeypatch.setattr(inspect, "getsource", lambda target: read.append(target) or getsource(target))
    resolve_code.cache_clear()  # another test may have read them already
    lessons = load_lessons("en")
    assert any("tutor-code" in lesson.body for lesson in lessons)
    assert read == []
    assert not [w for lesson in lessons for w in lesson.warnings]
    assert "def forward" in resolve_code("model.gpt.GPT.forward")[1]  # shown: read then
    assert read


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ("answer = []", ("no right answer",)),
        ("answer = [0, 1]", ("2 right answers",)),
        ("answer = 5", ("out of range",)),
    ],
)
def test_quiz_needs_exactly_one_right_answer(tmp_path: Path, answer: str, words: tuple[str, ...]) -> None:
    text = lesson_text("en").replace('choices = ["a", "b"]\nanswer = 1', f'choices = ["a", "b"]\n{answer}')
    root = write_tree(tmp_path, en=text)
    path = root / "en" / "01-demo.md"
    second_question = [n for n, line in enumerate(text.split("\n"), 1) if line == "[[questions]]"][1]
    assert_problem(check_content(root), path, second_question, "question 2", *words)


def test_quiz_needs_three_questions_and_explanations(tmp_path: Path) -> None:
    short = QUIZ.split('\n\n[[questions]]\nquestion = "Three?"')[0] + "\n```"
    text = lesson_text("en").replace(QUIZ, short.replace('explanation = "Because."', 'explanation = ""', 1))
    root = write_tree(tmp_path, en=text)
    path = root / "en" / "01-demo.md"
    problems = check_content(root)
    assert_problem(problems, path, line_of(path, "```tutor-quiz"), "2 questions", "at least 3")
    assert_problem(problems, path, line_of(path, "[[questions]]"), "question 1", "explanation")


CHECKED_TABLE = """```tutor-check
function = "model.positions.sinusoidal_positions"
args = { n_ctx = 2, d = 4, base = 10000.0 }
skip_columns = 1
```

| pos | 0 | 1 | 2 | 3 |
|---|---|---|---|---|
| 0 | 0 | 1 | 0 | 1 |
| 1 | sin 1 ≈ 0.841 | 0.540 | 0.010 | 1.000 |
"""


def test_checked_table_that_is_right_passes(tmp_path: Path) -> None:
    text = lesson_text("en").replace("Text with", CHECKED_TABLE + "\nText with")
    assert check_content(write_tree(tmp_path, en=text)) == []


def test_wrong_number_in_a_checked_table(tmp_path: Path) -> None:
    text = lesson_text("en").replace("Text with", CHECKED_TABLE.replace("0.540", "0.504") + "\nText with")
    root = write_tree(tmp_path, en=text)
    path = root / "en" / "01-demo.md"
    assert_problem(check_content(root), path, line_of(path, "0.504"), "column 3", "0.504", "0.5403")


def test_checked_table_of_the_wrong_shape_or_missing(tmp_path: Path) -> None:
    wrong_shape = CHECKED_TABLE.replace("n_ctx = 2", "n_ctx = 3")
    no_table = CHECKED_TABLE.split("\n\n|")[0] + "\n"
    for block, words in ((wrong_shape, ("2 rows",)), (no_table, ("followed by a Markdown table",))):
        text = lesson_text("en").replace("Text with", block + "\nText with")
        root = write_tree(tmp_path / words[0][:2], en=text)
        path = root / "en" / "01-demo.md"
        assert_problem(check_content(root), path, line_of(path, "```tutor-check"), *words)


def test_layer_norm_table_is_checked_against_layer_norm(tmp_path: Path) -> None:
    block = """```tutor-check
function = "model.norm.layer_norm"
args = { x = [1.0, 2.0, 3.0, 4.0], gamma = [1.0, 1.0, 1.0, 1.0], beta = [0.0, 0.0, 0.0, 0.0] }
```

| x̂₀ | x̂₁ | x̂₂ | x̂₃ |
|---|---|---|---|
| −1.3416 | −0.4472 | 0.4472 | 1.3461 |
"""
    text = lesson_text("en").replace("Text with", block + "\nText with")
    root = write_tree(tmp_path, en=text)
    path = root / "en" / "01-demo.md"
    problems = check_content(root)
    assert_problem(problems, path, line_of(path, "1.3461"), "column 4", "1.3461")
    assert len(problems) == 1


def test_mismatched_sections(tmp_path: Path) -> None:
    renamed = lesson_text("en").replace("## The idea", "## The big idea")
    root = write_tree(tmp_path, en=renamed)
    path = root / "en" / "01-demo.md"
    assert_problem(check_content(root), path, line_of(path, "## The big idea"), "must be '## The idea'")


def test_sections_out_of_order_and_missing(tmp_path: Path) -> None:
    text = lesson_text("zh").replace("## 小结", "## 总结")
    root = write_tree(tmp_path, zh=text)
    path = root / "zh" / "01-demo.md"
    assert_problem(check_content(root), path, line_of(path, "## 总结"), "must be '## 小结'")


def test_subsections_must_match_across_languages(tmp_path: Path) -> None:
    text = lesson_text("en").replace("## Try it\n", "## Try it\n\n### A first try\n")
    root = write_tree(tmp_path, en=text)
    path = root / "en" / "01-demo.md"
    assert_problem(check_content(root), path, line_of(path, "## Try it"), "1 ### headings", "has 0")


def test_headings_inside_fenced_blocks_do_not_count(tmp_path: Path) -> None:
    text = lesson_text("en").replace("Text with", "```text\n## not a heading\n```\n\nText with")
    assert check_content(write_tree(tmp_path, en=text)) == []


def test_translations_must_agree_on_id_and_order(tmp_path: Path) -> None:
    root = write_tree(tmp_path, zh=lesson_text("zh", steps='["embed"]'))
    assert_problem(check_content(root), root / "en" / "01-demo.md", 1, "'steps'")
    renamed = write_tree(tmp_path / "b", en=lesson_text("en", lesson_id="other"))
    assert_problem(check_content(renamed), renamed / "en" / "01-demo.md", 1, "file name says id 'demo'")


# -- the app's side: a broken lesson still loads ---------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "no front matter at all",
        "+++\nid = \n+++\n# x",
        "+++\nid = 'x'\norder = 1\n",
        "+++\nid = 3\norder = true\ntitle = 'x'\nprompt = 'y'\npanels = 'tokens'\n+++\n"
        "[a](tutor:nope?x=1)\n```tutor-code\nos.system\n```",
        "\udcff",
    ],
)
def test_parse_lesson_of_a_broken_file_warns_instead_of_raising(tmp_path: Path, text: str) -> None:
    path = tmp_path / "01-broken.md"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    lesson = parse_lesson(path, "en")
    assert lesson.warnings
    assert all(re.match(rf"{re.escape(str(path))}:\d+: ", warning) for warning in lesson.warnings)


# -- the command -------------------------------------------------------------------------------------


def test_lessons_command_lists_and_checks(tmp_path: Path) -> None:
    listed = run_tutor("lessons", "--lang", "zh", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    titles = [f"{lesson.title}  · 约 {reading_minutes(lesson)} 分钟" for lesson in load_lessons("zh")]
    assert [line.split(None, 2)[2] for line in listed.stdout.splitlines()] == titles
    assert "Tokens and embeddings" in run_tutor("lessons", "--lang", "en", cwd=tmp_path).stdout
    checked = run_tutor("lessons", "--check", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout
    assert checked.stdout.strip() == f"{len(titles)} lessons, zh and en, all checks pass"


def test_lessons_command_does_not_import_textual(tmp_path: Path) -> None:
    code = (
        "import sys, io, contextlib; from tutor.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()): main(['lessons', '--check'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.stdout.strip() == "[]", result.stderr


def test_the_variants_lessons_may_name_are_the_ones_training_makes() -> None:
    from model.train import RECIPES
    from tutor.catalogue import MODEL_VARIANTS
    from tutor.commands.train import VARIANTS
    from tutor.lessons.check import VARIANT_SWITCHES

    assert MODEL_VARIANTS == tuple(RECIPES) == VARIANTS and set(RECIPES) == set(VARIANT_SWITCHES)
    assert VARIANT_SWITCHES["deep-postnorm"] == {"norm": "post", "n_layers": 16, "d_model": 32, "d_mlp": 128}
    assert VARIANT_SWITCHES["nope"] == {"positional": "none"} and VARIANT_SWITCHES["tiny"] == {}


# -- claims about the shipped models ------------------------------------------------------------


def with_claims(lang: str, sentence: str, claims: str) -> str:
    return lesson_text(lang) + f"\n{sentence}\n\n```tutor-claims\n{claims}\n```\n"


def test_claims_are_recomputed_from_the_shipped_weights(tmp_path: Path) -> None:
    good = "\n".join(
        [
            '"1044" = "tiny.vocab_size"',
            '"266 880" = "tiny.parameters"',
            '"1.000" = "deep-postnorm.depth.trained.similarity[-1]"',
        ]
    )
    sentence = (
        "tiny has 1044 tokens and 266 880 parameters; deep-postnorm's positions agree to cos 1.000; 4 blocks\nof"
        " 64, 4 heads."
    )
    good += '\n"4 blocks of 64" = "tiny.n_layers"\n"4 heads" = "tiny.n_heads"'  # a claim's words may wrap
    root = write_tree(tmp_path, en=with_claims("en", sentence, good), zh=with_claims("zh", sentence, good))
    assert check_content(root) == []


@pytest.mark.parametrize(
    ("sentence", "claims", "words"),
    [
        ("A vocabulary of 987.", '"987" = "tiny.vocab_size"', ("'987' = tiny.vocab_size is 1044",)),
        ("Nothing here.", '"1044" = "tiny.vocab_size"', ("'1044' does not appear",)),
        ("It has 7 layers.", '"7" = "tiny.layers"', ("no 'layers'", "n_layers")),
        ("A model of 7.", '"7" = "gpt5.n_layers"', ("no shipped model 'gpt5'",)),
        ("Loss 1.6.", '"1.6" = { measure = "tiny.val_loss", tolerance = 0.001 }', ("±0.001",)),
        ("Loss about two.", '"two" = "tiny.val_loss"', ("not a number",)),
        ("tiny has 4 blocks of 64.", '"64 blocks" = "tiny.d_model"', ("'64 blocks' does not appear",)),
        ("tiny has 4 blocks\nof 64.", '"64 of 4" = "tiny.d_model"', ("'64 of 4' does not appear",)),
        ("tiny has 64 blocks.", '"64 blocks" = "tiny.n_layers"', ("'64 blocks' = tiny.n_layers is 4",)),
    ],
)
def test_a_wrong_claim_is_a_problem_at_its_line(tmp_path: Path, sentence: str, claims: str, words: tuple) -> None:
    root = write_tree(tmp_path, en=with_claims("en", sentence, claims), zh=with_claims("zh", sentence, claims))
    path = root / "en" / "01-demo.md"
    claim_line = line_of(path, claims.split(" =")[0])
    assert_problem(check_content(root), path, claim_line, *words)


def test_both_languages_claim_the_same_measures(tmp_path: Path) -> None:
    en = with_claims("en", "1044 tokens.", '"1044" = "tiny.vocab_size"')
    root = write_tree(tmp_path, en=en, zh=lesson_text("zh"))
    assert_problem(check_content(root), root / "en" / "01-demo.md", 1, "claims ['tiny.vocab_size'] here, []")


def test_written_numbers_carry_their_precision() -> None:
    from tutor.lessons.claims import written_number

    assert written_number("266 880") == (266880.0, 0.5)
    assert written_number("1.638") == (1.638, pytest.approx(0.0005))
    value, half = written_number("2.2e-9")
    assert value == pytest.approx(2.2e-9) and half == pytest.approx(0.05e-9)
    assert written_number("−0.50")[0] == -0.5


def test_the_right_answers_are_spread_over_the_letters(tmp_path: Path) -> None:
    """Three lessons whose nine answers are all B: a learner would stop reading the choices."""
    all_b = {
        lang: lesson_text(lang).replace("answer = 0", "answer = 1").replace("answer = 2", "answer = 1")
        for lang in LANGS
    }
    root = tmp_path
    for order in (1, 2, 3):
        for lang in LANGS:
            text = all_b[lang].replace('id = "demo"', f'id = "demo{order}"').replace("order = 1", f"order = {order}")
            (root / lang).mkdir(parents=True, exist_ok=True)
            (root / lang / f"0{order}-demo{order}.md").write_text(text, encoding="utf-8")
    problems = check_content(root)
    assert any("9 of the 9 quick-check answers are B" in p for p in problems), problems
