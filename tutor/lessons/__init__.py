"""Lessons: the files in content/, read, linked, shown and checked.

- `parse`: a lesson file (TOML front matter, Markdown body) into a `Lesson`. The panel, experiment
  and model names a lesson may use (`PANELS`, `EXPERIMENTS`, `MODEL_VARIANTS`) are the catalogue's
  (`tutor.catalogue`), re-exported here.
- `links`: `tutor:` links (`parse_link`, `labelled_links`) and `LessonError`.
- `display`: the body as the app shows it (code quoted from model/, checker blocks hidden).
- `markdown`: that Markdown rendered by Rich into lines, for the lesson pane.
- `quiz`: a lesson's quick check, parsed and graded.
- `check`, `claims`: `tutor lessons --check`, which keeps the content honest (imports NumPy).

The names below are re-exported so `from tutor.lessons import Lesson` keeps working; new code
imports from the module that defines a name. No Textual, Rich or NumPy is loaded by importing this.
"""

from tutor.catalogue import EXPERIMENTS, MODEL_VARIANTS, PANELS
from tutor.lessons.display import display_markdown
from tutor.lessons.links import ACTIONS, SCHEME, SHOW_KEYS, LessonError, Link, labelled_links, links_in, parse_link
from tutor.lessons.parse import (
    FENCES,
    FRONT_MATTER_KEYS,
    REQUIRED_KEYS,
    Block,
    Lesson,
    blocks_in,
    front_matter_line,
    load_lessons,
    parse_lesson,
    resolve_code,
)
from tutor.lessons.quiz import quiz_markdown

__all__ = [
    "ACTIONS",
    "EXPERIMENTS",
    "FENCES",
    "FRONT_MATTER_KEYS",
    "MODEL_VARIANTS",
    "PANELS",
    "REQUIRED_KEYS",
    "SCHEME",
    "SHOW_KEYS",
    "Block",
    "Lesson",
    "LessonError",
    "Link",
    "blocks_in",
    "display_markdown",
    "front_matter_line",
    "labelled_links",
    "links_in",
    "load_lessons",
    "parse_lesson",
    "parse_link",
    "quiz_markdown",
    "resolve_code",
]
