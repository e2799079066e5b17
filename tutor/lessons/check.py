"""The content checker: keeps both languages, every reference, link, quiz and hand-worked table honest.

`check_content()` returns problems as `path:line: message`, one per fault; `tutor lessons --check`
prints them. Pure Python and NumPy: no Textual, so the command starts fast.
"""

from __future__ import annotations

import importlib
import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np

from model.train import RECIPES
from tutor.catalogue import EXPERIMENTS, MODEL_VARIANTS, PANELS
from tutor.lessons.answers import KEYS as ANSWER_KEYS
from tutor.lessons.answers import exercises_in, lesson_answers, raw_answers
from tutor.lessons.claims import check_claims, claim_problems
from tutor.lessons.folds import folds_in
from tutor.lessons.links import (
    DEPTH_LAB_VIEWS,
    LAYERNORM_CALC_VIEWS,
    STABILITY_LAB_OPTIONS,
    LessonError,
    links_in,
    parse_link,
)
from tutor.lessons.parse import (
    Block,
    Lesson,
    blocks_in,
    front_matter_line,
    lines_outside_fences,
    parse_lesson,
)
from tutor.paths import content_dir

SWITCHES = ("positional", "pos_base", "norm", "residual", "n_layers", "d_model", "d_mlp")

LANGS = ("zh", "en")
SECTIONS: dict[str, tuple[str, ...]] = {  # the seven `##` sections of content/README.md, in order
    "en": (
        "What you will understand",
        "The idea",
        "Formula and code",
        "Try it",
        "Exercises",
        "Quick check",
        "Summary",
    ),
    "zh": ("你将理解", "核心思想", "公式与代码", "动手试试", "练习", "小测验", "小结"),
}
# How each variant is wired, as changes to the default model's config (the trainer uses the same).
# what each variant changes from `tiny`, read off the training recipes that made them
VARIANT_SWITCHES: dict[str, dict[str, object]] = {
    name: {key: getattr(recipe, key) for key in SWITCHES if getattr(recipe, key) != getattr(RECIPES["tiny"], key)}
    for name, recipe in RECIPES.items()
}
DEFAULT_VARIANT = "tiny"
MIN_QUESTIONS = 3
CHECK_KEYS = {"function", "args", "skip_columns", "rows"}
_FILE_NAME = re.compile(r"(?P<order>\d{2})-(?P<id>[a-z0-9]+(?:-[a-z0-9]+)*)\.md")
_HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.*?)\s*#*\s*$")
_TUTOR_BLOCK = re.compile(
    r"^[ \t]*```tutor-[a-z]+\n.*?^[ \t]*```", re.S | re.M
)  # what the learner does not read as text
_NUMBER = re.compile(r"[-−]?\d+(?:\.(?P<decimals>\d+))?")


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    line: int  # file line


@dataclass(frozen=True)
class ModelFacts:
    """What links and front matter are checked against: each variant's step names, the default shape."""

    steps: dict[str, tuple[str, ...]]
    n_heads: int
    n_ctx: int
    encode: Callable[[str], list[int]]
    vocabulary: frozenset[str]  # the characters that are one token each (the frozen corpus's)


@cache
def model_facts() -> ModelFacts:
    import model

    gpt = model.load(model.DEFAULT_MODEL)
    steps = {
        variant: tuple(step.name for step in model.build_steps(replace(gpt.config, **switches)))  # type: ignore[arg-type]
        for variant, switches in VARIANT_SWITCHES.items()
    }
    chars = getattr(gpt.tokenizer, "chars", ())
    return ModelFacts(steps, gpt.config.n_heads, gpt.config.n_ctx, gpt.tokenizer.encode, frozenset(chars))


def check_content(root: Path | None = None) -> list[str]:
    """Every problem in the lessons under `root` (default: the shipped content), as `path:line: message`."""
    root = root or content_dir()
    lessons = {lang: _lessons_by_file(root / lang) for lang in LANGS}
    problems: list[str] = []
    for lang in LANGS:
        if not lessons[lang]:
            problems.append(f"{root / lang}:1: no lessons in {lang}/")
        for lesson in lessons[lang].values():
            problems += check_lesson(lesson, lessons[lang])
    problems += _check_translations(lessons["zh"], lessons["en"], root)
    for lang in LANGS:
        problems += _check_answer_spread(lessons[lang], root / lang)
    return problems


MAX_ANSWER_SHARE = 0.4  # of all quick-check questions in a language, the most that may share one letter


def _check_answer_spread(lessons: dict[str, Lesson], folder: Path) -> Iterator[str]:
    """A learner who notices that the right answer is nearly always B stops reading the choices."""
    answers: list[int] = []
    for lesson in lessons.values():
        for block in blocks_in(lesson.body):
            if block.kind == "tutor-quiz":
                try:
                    questions = tomllib.loads(block.text).get("questions", [])
                except tomllib.TOMLDecodeError:
                    continue  # reported by check_quiz
                answers += [q["answer"] for q in questions if isinstance(q, dict) and isinstance(q.get("answer"), int)]
    if len(answers) >= 8:
        letter, count = max(((a, answers.count(a)) for a in set(answers)), key=lambda pair: pair[1])
        if count > MAX_ANSWER_SHARE * len(answers):
            yield (
                f"{folder}:1: {count} of the {len(answers)} quick-check answers are {'ABCDEFGH'[letter]}: "
                f"spread the right answers over the letters (at most {MAX_ANSWER_SHARE:.0%} on one)"
            )


def check_course(folder: Path) -> list[str]:
    """Every problem in a teacher's lessons folder (`tutor lessons --check DIR`), checked as the shipped lessons
    are: each language it has on its own, both agreeing when it has both. With `after_shipped` its lessons may link
    to the shipped ones and must not take their ids. Raises `CourseError` (one line) when the folder gives no
    lesson at all."""
    from tutor.lessons.course import open_course

    course = open_course(folder)
    problems = list(course.problems)
    langs = [lang for lang in LANGS if lang in course.languages and not _without_lessons(folder / lang, problems)]
    lessons = {lang: _lessons_by_file(folder / lang) for lang in langs}
    shipped = {lang: _lessons_by_file(content_dir() / lang) for lang in langs} if course.after_shipped else {}
    for lang in langs:
        shipped_ids = {lesson.id: lesson for lesson in shipped.get(lang, {}).values()}
        linkable = {**{f"shipped/{name}": lesson for name, lesson in shipped.get(lang, {}).items()}, **lessons[lang]}
        for lesson in lessons[lang].values():
            problems += check_lesson(lesson, lessons[lang], linkable)
            if lesson.id in shipped_ids:
                problems.append(
                    f"{lesson.path}:{_id_line(lesson)}: id '{lesson.id}' is the shipped lesson "
                    f"{shipped_ids[lesson.id].path.name}'s: with after_shipped the app would leave this one out "
                    "(choose another id)"
                )
        problems += _check_answer_spread(lessons[lang], folder / lang)
    if len(langs) == 2:
        problems += _check_translations(lessons["zh"], lessons["en"], folder)
    return problems


def shipped_ids_taken(folder: Path) -> list[str]:
    """The ids of a teacher's lessons that are also shipped lessons' ids (a folder used alone may take them: its
    lesson stands in for the shipped one, and the learner's progress and the panels' reach follow the id)."""
    shipped = {lesson.id for lang in LANGS for lesson in _lessons_by_file(content_dir() / lang).values()}
    own = {lesson.id for lang in LANGS for lesson in _lessons_by_file(folder / lang).values()}
    return sorted(own & shipped)


def _without_lessons(folder: Path, problems: list[str]) -> bool:
    """A language folder that cannot be listed (its problem is already in `problems`) or has no lessons."""
    from tutor.lessons.course import lesson_files

    try:
        return not lesson_files(folder)
    except OSError:
        return True


def _id_line(lesson: Lesson) -> int:
    try:
        return front_matter_line(lesson.path.read_text(encoding="utf-8", errors="replace"), "id")
    except OSError:
        return 1


def _lessons_by_file(folder: Path) -> dict[str, Lesson]:
    if not folder.is_dir():
        return {}
    return {path.name: parse_lesson(path, folder.name) for path in sorted(folder.glob("*.md"))}


def check_lesson(lesson: Lesson, siblings: dict[str, Lesson], linkable: dict[str, Lesson] | None = None) -> list[str]:
    """One lesson's own problems; `siblings` are the lessons of its language (for ids and lesson links),
    `linkable` (default: the siblings) every lesson a link may open."""
    problems = list(lesson.warnings)  # front matter, link syntax and code references: the parser's
    problems += _check_file_name(lesson, siblings)
    problems += _check_front_matter_values(lesson)
    problems += _check_sections(lesson)
    problems += _check_links(lesson, siblings if linkable is None else linkable)
    problems += _check_emphasis(lesson)
    problems += [f"{lesson.path}:{lesson.body_line + n - 1}: {message}" for n, message in folds_in(lesson.body)[1]]
    for block in blocks_in(lesson.body):
        line = lesson.body_line + block.line - 1
        if block.kind == "tutor-quiz":
            problems += [f"{lesson.path}:{n}: {message}" for n, message in check_quiz(block.text, line)]
        elif block.kind == "tutor-check":
            problems += [f"{lesson.path}:{n}: {message}" for n, message in check_table(lesson.body, block, line)]
        elif block.kind == "tutor-claims":
            text = _TUTOR_BLOCK.sub("", lesson.body)
            problems += [f"{lesson.path}:{line + n}: {message}" for n, message in check_claims(block.text, text)]
    problems += [f"{lesson.path}:{n}: {message}" for n, message in check_answers(lesson)]
    return problems


# -- the exercises' hints and answers --------------------------------------------------------------


def check_answers(lesson: Lesson) -> list[tuple[int, str]]:
    """The lesson's `tutor-answers` block against its exercises, as (file line, message): one block, in the
    Exercises section, valid TOML, an `[[answers]]` entry per exercise, each with a hint and an answer, and each
    claim of an entry found in its text and recomputed (as `tutor-claims` are)."""
    count, heading, end = exercises_in(lesson)
    blocks = [block for block in blocks_in(lesson.body) if block.kind == "tutor-answers"]
    at = lesson.body_line - 1  # a body line + at = the file line
    if not blocks:
        return [(heading + at, f"{count} exercises but no tutor-answers block")] if count else []
    problems = [(block.line + at, "a second tutor-answers block: the first holds every answer") for block in blocks[1:]]
    block = blocks[0]
    fence_line = block.line + at
    if not heading < block.line < end:
        problems.append((fence_line, "the tutor-answers block belongs in the Exercises section"))
    try:
        entries = raw_answers(block.text)
    except tomllib.TOMLDecodeError as error:
        match = re.search(r"line (\d+)", str(error))
        return [*problems, (fence_line + (int(match.group(1)) if match else 1), f"answers are not valid TOML: {error}")]
    starts = [fence_line + n for n, row in enumerate(block.text.split("\n"), 1) if row.strip() == "[[answers]]"]
    if len(entries) != count:
        problems.append((fence_line, f"{len(entries)} [[answers]] for {count} exercises: one per exercise, in order"))
    for n, entry in enumerate(entries, 1):
        line = starts[n - 1] if n <= len(starts) else fence_line
        problems += [(line, f"answer {n}: {message}") for message in _answer_problems(entry)]
    return problems


def _answer_problems(entry: object) -> Iterator[str]:
    if not isinstance(entry, dict):
        yield "must be an [[answers]] table"
        return
    for key in ("hint", "answer"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            yield f"needs a non-empty '{key}'"
    unknown = set(entry) - set(ANSWER_KEYS)
    if unknown:
        yield f"unknown keys {', '.join(sorted(unknown))} (known: {', '.join(ANSWER_KEYS)})"
    claims = entry.get("claims", {})
    if not isinstance(claims, dict):
        yield 'claims must be a table: claims = { "the text as written" = "MODEL.measure" }'
        return
    text = f"{entry.get('hint', '')}\n{entry.get('answer', '')}"
    for written, spec in claims.items():
        yield from claim_problems(written, spec, text, "the hint or the answer")


def _check_emphasis(lesson: Lesson) -> Iterator[str]:
    """`**`, `__` or a lone `*` that Markdown leaves as it is, so the learner reads the stars: in Chinese, bold
    that ends on punctuation right before a character (`**…顺序。**只是`) is not bold by CommonMark's flanking
    rules. Text only: code and fenced blocks may hold stars."""
    from markdown_it import MarkdownIt

    for token in MarkdownIt().enable("strikethrough").enable("table").parse(lesson.body):
        if token.type != "inline" or token.map is None:
            continue
        for child in token.children or []:
            if child.type == "text" and ("**" in child.content or "__" in child.content):
                where = lesson.body_line + token.map[0]
                yield (
                    f"{lesson.path}:{where}: emphasis shown as raw stars: {child.content.strip()[:40]!r} "
                    "(in Chinese, close bold before the punctuation: **…顺序**。)"
                )


def claimed_measures(lesson: Lesson) -> list[str]:
    """What a lesson's `tutor-claims` blocks measure, in order (the two languages must claim the same)."""
    measures: list[str] = []
    for block in blocks_in(lesson.body):
        if block.kind == "tutor-claims":
            try:
                claims = tomllib.loads(block.text)
            except tomllib.TOMLDecodeError:
                continue  # reported by check_claims
            measures += [spec.get("measure", "") if isinstance(spec, dict) else str(spec) for spec in claims.values()]
    for answer in lesson_answers(lesson):  # and what the exercises' answers measure
        specs = answer.claims.values()
        measures += [spec.get("measure", "") if isinstance(spec, dict) else str(spec) for spec in specs]
    return measures


def _check_file_name(lesson: Lesson, siblings: dict[str, Lesson]) -> Iterator[str]:
    match = _FILE_NAME.fullmatch(lesson.path.name)
    if not match:
        yield f"{lesson.path}:1: file name must be NN-id.md (two digits, the lesson's id)"
        return
    if match.group("id") != lesson.id:
        yield f"{lesson.path}:1: file name says id '{match.group('id')}' but the front matter says '{lesson.id}'"
    if int(match.group("order")) != lesson.order:
        yield f"{lesson.path}:1: file name says order {match.group('order')}, the front matter {lesson.order}"
    twins = [other.path.name for other in siblings.values() if other.id == lesson.id and other is not lesson]
    if twins:
        yield f"{lesson.path}:1: id '{lesson.id}' is also used by {', '.join(twins)}"


def _check_front_matter_values(lesson: Lesson) -> Iterator[str]:
    try:  # only to find line numbers: a file that is not UTF-8 or not readable, the parser has reported already
        text = lesson.path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    if lesson.model is not None and lesson.model not in MODEL_VARIANTS:
        unknown = _unknown("model variant", lesson.model, MODEL_VARIANTS)
        yield f"{lesson.path}:{front_matter_line(text, 'model')}: {unknown}"
    variant = lesson.model or DEFAULT_VARIANT
    steps = model_facts().steps.get(variant, ())
    for step in lesson.steps:
        if steps and step not in steps:
            yield f"{lesson.path}:{front_matter_line(text, 'steps')}: unknown step '{step}' for model '{variant}'"
    yield from (f"{lesson.path}:{front_matter_line(text, 'prompt')}: {m}" for m in _prompt_problems(lesson.prompt))


def _prompt_problems(prompt: str) -> Iterator[str]:
    facts = model_facts()
    if len(facts.encode(prompt)) > facts.n_ctx:
        yield f"prompt is longer than the model's context of {facts.n_ctx} tokens"
    missing = sorted({ch for ch in prompt if ch not in facts.vocabulary})
    if missing:
        shown = ", ".join(f"'{ch}' (U+{ord(ch):04X})" for ch in missing)
        yield (
            f"prompt uses {shown}, not in the shipped models' vocabulary (the frozen corpus, model/data/): "
            "each would be split into UTF-8 byte tokens; choose another character or take a new corpus snapshot"
        )


def _edit_problems(text: str, variant: str, prompt: str) -> Iterator[str]:
    """What is wrong with a show link's `edit=`: what cannot be read, and each edit that does not fit the link's
    model and prompt (checked as the app runs them: on the shipped weights, a patch's other prompt run)."""
    import model
    from tutor.edits import EditWordsError, model_edits, parse_edits

    try:
        edits = parse_edits(text)
    except EditWordsError as error:
        yield f"edit: {error}"
        return
    try:
        gpt = model.load(variant)
    except model.WeightsError as error:
        yield f"edit: cannot check on model '{variant}': {error}"
        return
    n_tokens = len(gpt.prompt_tokens(prompt)[0])
    _, unfit = model_edits(gpt, edits, n_tokens, gpt.run)
    for edit, why in unfit:
        yield f"edit {edit.link()} does not fit model '{variant}' and prompt '{prompt}': {why}"


def headings_in(lesson: Lesson) -> list[Heading]:
    """The Markdown headings of the lesson body, outside fenced blocks, with file lines."""
    headings: list[Heading] = []
    for number, line in lines_outside_fences(lesson.body, lesson.body_line):
        match = _HEADING.match(line)
        if match:
            headings.append(Heading(len(match.group("hashes")), match.group("text"), number))
    return headings


def _check_sections(lesson: Lesson) -> Iterator[str]:
    expected = SECTIONS.get(lesson.lang)
    if expected is None:
        return
    found = [h for h in headings_in(lesson) if h.level == 2]
    for index, name in enumerate(expected):
        if index >= len(found):
            line = found[-1].line if found else lesson.body_line
            yield f"{lesson.path}:{line}: missing section '## {name}' (sections: {', '.join(expected)})"
        elif found[index].text != name:
            where = f"{lesson.path}:{found[index].line}"
            yield f"{where}: section {index + 1} must be '## {name}', found '## {found[index].text}'"
    for extra in found[len(expected) :]:
        yield f"{lesson.path}:{extra.line}: extra section '## {extra.text}' (a lesson has exactly {len(expected)})"


def _subsections(lesson: Lesson) -> list[tuple[Heading, list[Heading]]]:
    """Each `##` section with its `###` headings."""
    sections: list[tuple[Heading, list[Heading]]] = []
    for heading in headings_in(lesson):
        if heading.level == 2:
            sections.append((heading, []))
        elif heading.level == 3 and sections:
            sections[-1][1].append(heading)
    return sections


def _check_translations(zh: dict[str, Lesson], en: dict[str, Lesson], root: Path) -> Iterator[str]:
    for name in sorted(set(zh) ^ set(en)):
        have, missing = ("zh", "en") if name in zh else ("en", "zh")
        yield f"{root / have / name}:1: no translation: {missing}/{name} is missing"
    for name in sorted(set(zh) & set(en)):
        a, b = zh[name], en[name]
        for key in ("id", "order", "steps", "panels", "model"):
            if getattr(a, key) != getattr(b, key):
                yield f"{b.path}:1: front matter '{key}' is {getattr(b, key)!r} here, {getattr(a, key)!r} in {a.path}"
        if claimed_measures(a) != claimed_measures(b):
            yield f"{b.path}:1: claims {claimed_measures(b)} here, {claimed_measures(a)} in {a.path}"
        zh_sections, en_sections = _subsections(a), _subsections(b)
        if len(zh_sections) != len(en_sections):
            continue  # already reported against the section list of each language
        for (zh_head, zh_subs), (en_head, en_subs) in zip(zh_sections, en_sections, strict=True):
            if len(zh_subs) != len(en_subs):
                yield (
                    f"{b.path}:{en_head.line}: section '{en_head.text}' has {len(en_subs)} ### headings, "
                    f"but '{zh_head.text}' in {a.path}:{zh_head.line} has {len(zh_subs)}"
                )


def _depth_lab_problems(params: dict[str, str]) -> Iterator[str]:
    """What is wrong with an experiment link's `left`, `right` and `view` (the depth lab's options; the LayerNorm
    calculator takes a `view` too)."""
    options = {key: params[key] for key in ("left", "right", "view") if key in params}
    if params.get("name") == "layernorm-calc":
        if "view" in options and options["view"] not in LAYERNORM_CALC_VIEWS:
            yield _unknown("LayerNorm calculator view", options["view"], LAYERNORM_CALC_VIEWS)
        options.pop("view", None)
        if options:
            yield f"only the depth lab takes {', '.join(options)}"
        return
    if options and params.get("name") != "depth":
        yield f"only the depth lab takes {', '.join(options)}"
        return
    for side in ("left", "right"):
        if side in options and options[side] not in MODEL_VARIANTS:
            yield _unknown("model variant", options[side], MODEL_VARIANTS)
    if "view" in options and options["view"] not in DEPTH_LAB_VIEWS:
        yield _unknown("depth lab view", options["view"], DEPTH_LAB_VIEWS)
    if "left" in options and options["left"] == options.get("right"):
        yield "the depth lab's left and right models must differ"


def _stability_lab_problems(params: dict[str, str]) -> Iterator[str]:
    """What is wrong with an experiment link's `shape` and `warmup` (the stability lab's options)."""
    options = {key: params[key] for key in STABILITY_LAB_OPTIONS if key in params}
    if options and params.get("name") != "stability":
        yield f"only the stability lab takes {', '.join(options)}"
        return
    for key, value in options.items():
        if value not in STABILITY_LAB_OPTIONS[key]:
            yield _unknown(f"stability lab {key}", value, STABILITY_LAB_OPTIONS[key])


def _check_links(lesson: Lesson, siblings: dict[str, Lesson]) -> Iterator[str]:
    facts = model_facts()
    by_id = {other.id: other for other in siblings.values()}
    for line, href in links_in(lesson.body):
        where = f"{lesson.path}:{lesson.body_line + line - 1}"
        try:
            link = parse_link(href)
        except LessonError:
            continue  # the parser's warning already says what is wrong
        params = link.params
        if link.action == "show":
            variant = params.get("model", lesson.model or DEFAULT_VARIANT)
            if variant not in MODEL_VARIANTS:
                yield f"{where}: {_unknown('model variant', variant, MODEL_VARIANTS)}"
            if "panel" in params and params["panel"] not in PANELS:
                yield f"{where}: {_unknown('panel', params['panel'], PANELS)}"
            if "step" in params and params["step"] not in facts.steps.get(variant, facts.steps[DEFAULT_VARIANT]):
                yield f"{where}: unknown step '{params['step']}' for model '{variant}'"
            if "prompt" in params:
                yield from (f"{where}: {message}" for message in _prompt_problems(params["prompt"]))
            if "head" in params and not _index_below(params["head"], facts.n_heads):
                yield f"{where}: head must be a number from 0 to {facts.n_heads - 1}, got '{params['head']}'"
            if params.get("direction", "forward") not in ("forward", "backward"):
                yield f"{where}: direction must be forward or backward, got '{params['direction']}'"
            if "edit" in params and variant in MODEL_VARIANTS:
                prompt = params.get("prompt", lesson.prompt)
                yield from (f"{where}: {message}" for message in _edit_problems(params["edit"], variant, prompt))
            if "token" in params:
                n_tokens = len(facts.encode(params.get("prompt", lesson.prompt)))
                if not _index_below(params["token"], n_tokens):
                    yield f"{where}: token must be a position from 0 to {n_tokens - 1}, got '{params['token']}'"
        elif link.action == "lesson":
            target = by_id.get(params.get("id", lesson.id))
            if target is None:
                yield f"{where}: no lesson with id '{params.get('id')}' in {lesson.lang}/"
            elif "heading" in params and params["heading"] not in {h.text for h in headings_in(target)}:
                yield f"{where}: lesson '{target.id}' has no heading '{params['heading']}'"
        elif link.action == "experiment":
            if params.get("name") not in EXPERIMENTS:
                yield f"{where}: {_unknown('experiment', params.get('name', ''), EXPERIMENTS)}"
            yield from (f"{where}: {problem}" for problem in _depth_lab_problems(params))
            yield from (f"{where}: {problem}" for problem in _stability_lab_problems(params))
        elif link.action == "quiz":
            target = by_id.get(params.get("id", lesson.id))
            if target is None:
                yield f"{where}: no lesson with id '{params.get('id')}' in {lesson.lang}/"
            elif not any(block.kind == "tutor-quiz" for block in blocks_in(target.body)):
                yield f"{where}: lesson '{target.id}' has no tutor-quiz block"
        elif link.action == "answer":
            target = by_id.get(params.get("id", lesson.id))
            if target is None:
                yield f"{where}: no lesson with id '{params.get('id')}' in {lesson.lang}/"
            elif not any(str(a.n) == params.get("n", "1") for a in lesson_answers(target)):
                yield f"{where}: lesson '{target.id}' has no answer {params.get('n', '1')}"
        elif link.action == "exercise":
            exercises = _exercise_names()
            if params.get("name") not in exercises:
                yield f"{where}: {_unknown('exercise', params.get('name', ''), exercises)}"


def _exercise_names() -> tuple[str, ...]:
    from tutor.exercises import EXERCISES

    return tuple(EXERCISES)


def _index_below(text: str, limit: int) -> bool:
    return text.isdigit() and int(text) < limit


def _unknown(kind: str, value: str, known: tuple[str, ...]) -> str:
    return f"unknown {kind} '{value}' (known: {', '.join(known)})"


# -- quizzes ---------------------------------------------------------------------------------------


def check_quiz(text: str, fence_line: int) -> list[tuple[int, str]]:
    """A `tutor-quiz` block's problems as (file line, message); `fence_line` is its opening fence."""
    try:
        questions = tomllib.loads(text).get("questions")
    except tomllib.TOMLDecodeError as error:
        match = re.search(r"line (\d+)", str(error))
        return [(fence_line + (int(match.group(1)) if match else 1), f"quiz is not valid TOML: {error}")]
    if not isinstance(questions, list) or not all(isinstance(q, dict) for q in questions):
        return [(fence_line, "quiz needs [[questions]] tables")]
    starts = [fence_line + n for n, line in enumerate(text.split("\n"), 1) if line.strip() == "[[questions]]"]
    problems: list[tuple[int, str]] = []
    if len(questions) < MIN_QUESTIONS:
        problems.append((fence_line, f"quiz has {len(questions)} questions, needs at least {MIN_QUESTIONS}"))
    for number, question in enumerate(questions, 1):
        line = starts[number - 1] if number <= len(starts) else fence_line
        problems += [(line, f"question {number}: {message}") for message in _question_problems(question)]
    return problems


def _question_problems(question: dict[str, object]) -> Iterator[str]:
    for key in ("question", "explanation"):
        if not isinstance(question.get(key), str) or not str(question.get(key)).strip():
            yield f"needs a non-empty '{key}'"
    choices = question.get("choices")
    if not isinstance(choices, list) or len(choices) < 2 or not all(isinstance(c, str) for c in choices):
        yield "needs 'choices', a list of at least 2 strings"
        choices = []
    answer = question.get("answer")
    if answer is None or answer == []:
        yield "has no right answer: set 'answer' to the index of the one right choice"
    elif isinstance(answer, list):
        yield f"has {len(answer)} right answers, a single-choice question needs exactly one"
    elif not isinstance(answer, int) or isinstance(answer, bool):
        yield f"'answer' must be the index of the right choice (a number), got {answer!r}"
    elif choices and not 0 <= answer < len(choices):
        yield f"'answer' {answer} is out of range: the choices are numbered 0 to {len(choices) - 1}"
    unknown = set(question) - {"question", "choices", "answer", "explanation"}
    if unknown:
        yield f"unknown keys {', '.join(sorted(unknown))}"


# -- hand-worked tables ----------------------------------------------------------------------------


def check_table(body: str, block: Block, fence_line: int) -> list[tuple[int, str]]:
    """A `tutor-check` block against the Markdown table after it, as (file line, message)."""
    try:
        spec = tomllib.loads(block.text)
    except tomllib.TOMLDecodeError as error:
        return [(fence_line, f"tutor-check is not valid TOML: {error}")]
    unknown = set(spec) - CHECK_KEYS
    if unknown:
        return [
            (
                fence_line,
                f"tutor-check has unknown keys {', '.join(sorted(unknown))} (known: {', '.join(sorted(CHECK_KEYS))})",
            )
        ]
    try:
        function = _model_function(spec.get("function"))
        args = spec.get("args", {})
        if not isinstance(args, dict):
            raise LessonError("tutor-check 'args' must be a table of keyword arguments")
        expected = np.asarray(function(**{k: _argument(v) for k, v in args.items()}), dtype=np.float64)
    except LessonError as error:
        return [(fence_line, str(error))]
    except (TypeError, ValueError) as error:
        return [(fence_line, f"tutor-check: calling {spec.get('function')} failed: {error}")]
    expected = expected.reshape(1, -1) if expected.ndim < 2 else expected.reshape(-1, expected.shape[-1])
    table = _table_after(body, block)
    if table is None:
        return [(fence_line, "tutor-check must be followed by a Markdown table")]
    skip = spec.get("skip_columns", 0)
    wanted_rows = spec.get("rows", list(range(len(table))))
    if not isinstance(skip, int) or not isinstance(wanted_rows, list):
        return [(fence_line, "tutor-check 'skip_columns' must be a number and 'rows' a list of row numbers")]
    if any(not isinstance(r, int) or not 0 <= r < len(table) for r in wanted_rows):
        return [(fence_line, f"tutor-check 'rows' must number the table's {len(table)} body rows from 0")]
    rows = [table[r] for r in wanted_rows]
    if len(rows) != expected.shape[0] or any(len(cells) - skip != expected.shape[1] for _, cells in rows):
        shape = f"{len(rows)} rows × {[len(c) - skip for _, c in rows]} numbers"
        return [
            (fence_line, f"the table has {shape}, {spec['function']} gives {expected.shape[0]} × {expected.shape[1]}")
        ]
    problems: list[tuple[int, str]] = []
    for (line, cells), want_row in zip(rows, expected, strict=True):
        for column, (cell, want) in enumerate(zip(cells[skip:], want_row, strict=True), skip + 1):
            problem = _cell_problem(cell, float(want))
            if problem:
                problems.append((fence_line + line, f"table column {column}: {problem}"))
    return problems


def _model_function(name: object) -> Callable[..., object]:
    if not isinstance(name, str) or not re.fullmatch(r"model(\.[A-Za-z_]\w*)+", name):
        raise LessonError(f"tutor-check 'function' must name a function in model/, got {name!r}")
    module_name, _, attribute = name.rpartition(".")
    try:
        function = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError):
        raise LessonError(f"tutor-check 'function' {name} does not resolve to a function in model/") from None
    if not callable(function):
        raise LessonError(f"tutor-check 'function' {name} is not callable")
    return function  # type: ignore[no-any-return]


def _argument(value: object) -> object:
    """TOML lists become float32 arrays, as the model computes in float32."""
    return np.asarray(value, dtype=np.float32) if isinstance(value, list) else value


def _table_after(body: str, block: Block) -> list[tuple[int, list[str]]] | None:
    """The body rows of the first table after `block` (line offsets from the block's fence, cells)."""
    lines = body.split("\n")
    index = block.line + block.text.count("\n") + 2  # 0-based: the line after the closing fence
    while index < len(lines) and not lines[index].strip():
        index += 1
    rows: list[tuple[int, list[str]]] = []
    while index < len(lines) and lines[index].strip().startswith("|"):
        cells = [cell.strip() for cell in lines[index].strip().strip("|").split("|")]
        rows.append((index + 1 - block.line, cells))
        index += 1
    if len(rows) < 3 or not all(re.fullmatch(r":?-+:?", cell) for cell in rows[1][1]):
        return None
    return rows[2:]  # without the header and the --- row


def _cell_problem(cell: str, want: float) -> str | None:
    """The cell's last number must equal `want` to the precision it is printed with."""
    numbers = list(_NUMBER.finditer(cell))
    if not numbers:
        return f"'{cell}' holds no number (expected {want:.6g})"
    last = numbers[-1]
    value = float(last.group().replace("−", "-"))
    decimals = len(last.group("decimals") or "")
    tolerance = 0.5 * 10.0**-decimals
    if abs(value - want) > tolerance * (1 + 1e-6) + 1e-9:
        return f"'{cell}' is wrong: the model gives {want:.{max(decimals, 1) + 2}f}"
    return None
