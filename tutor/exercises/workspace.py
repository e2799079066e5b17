"""The learner's exercise folder: one Python file per exercise, written once and never overwritten."""

from __future__ import annotations

import os
from pathlib import Path

from tutor.exercises import EXERCISES, Exercise
from tutor.i18n import pick

WORDS: dict[str, tuple[str, str]] = {
    "header": (
        "Exercise: {title}\n\n{task}\n\n"
        "Write the function below in place of the TODO, then check it:\n"
        "    tutor exercises check {name}      (or keep `tutor exercises --watch` running, or open it in the app)\n"
        "    tutor exercises hint {name}       a hint\n"
        "    tutor exercises solution {name}   the reference, once your version passes\n"
        "Only NumPy and Python's standard library: the checker runs this file on its own.",
        "练习：{title}\n\n{task}\n\n"
        "把下面函数里的 TODO 换成你的代码，然后检查：\n"
        "    tutor exercises check {name}      （或者让 `tutor exercises --watch` 一直运行，或在应用里打开）\n"
        "    tutor exercises hint {name}       提示\n"
        "    tutor exercises solution {name}   通过之后可以看参考答案\n"
        "只用 NumPy 和 Python 标准库：检查器会单独运行这个文件。",
    ),
    "todo": (
        "    # TODO: your code here, then return the result.",
        "    # TODO: 在这里写你的代码，然后返回结果。",
    ),
}

TODO_BODY = '    raise NotImplementedError("TODO")'


def workspace_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """--dir, else $TUTOR_EXERCISES_DIR, else the user data directory (~/.local/share/tutor/exercises)."""
    if override:
        return Path(override).expanduser()
    from_env = os.environ.get("TUTOR_EXERCISES_DIR")
    if from_env:
        return Path(from_env).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("tutor", appauthor=False)) / "exercises"


def exercise_path(folder: Path, name: str) -> Path:
    return folder / f"{name}.py"


def starter_text(exercise: Exercise, lang: str) -> str:
    """The file a learner starts from: the task, the imports, the signature with its formula, a TODO."""
    header = pick(WORDS, "header", lang, title=exercise.title(lang), task=exercise.task(lang), name=exercise.name)
    imports = "import numpy as np\n"
    if "Callable" in exercise.code:
        imports = "from collections.abc import Callable\n\n" + imports
    body = pick(WORDS, "todo", lang) + "\n" + TODO_BODY
    return f'"""{header}\n"""\n\n{imports}\n{exercise.code.replace("{todo}", body)}'


def write_workspace(folder: Path, lang: str) -> list[Path]:
    """Write every exercise file that is not there yet; a learner's own file is never touched.

    Returns the files written now. Raises OSError when the folder cannot be made or written.
    """
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, exercise in EXERCISES.items():
        path = exercise_path(folder, name)
        try:
            with path.open("x", encoding="utf-8") as file:  # "x": fails if the learner's file exists
                file.write(starter_text(exercise, lang))
        except FileExistsError:
            continue
        written.append(path)
    return written


def reset_exercise(folder: Path, name: str, lang: str) -> Path:
    """Put the starter file back in place of the learner's (the caller has asked them first)."""
    path = exercise_path(folder, name)
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(starter_text(EXERCISES[name], lang), encoding="utf-8")
    return path
