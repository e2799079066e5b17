"""The `tutor` command. Only the app itself imports Textual, so `--help`, `--version` and
`tutor trace` start fast and work where no terminal UI can."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from tutor import __version__, exercises_command, progress_command, train_command
from tutor.allocator import keep_freed_memory
from tutor.language import LANGUAGES, detect_language


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tutor",
        description="See the inside of a GPT while you read about it.",
    )
    parser.add_argument("--version", action="version", version=f"tutor {__version__}")
    parser.add_argument(
        "--model",
        help="shipped model name, path to a .safetensors file or a Hugging Face GPT-2 folder, or a GPT-2 name in the "
        "local Hugging Face cache such as gpt2 (default: the app resumes the last model you used, else tiny; "
        "trace's default is tiny)",
    )
    parser.add_argument("--lang", choices=LANGUAGES, help="language of lessons and labels (default: from the locale)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    trace = commands.add_parser(
        "trace",
        help="print every step's per-token mean, std and norm for a prompt",
        description="Run the model on TEXT and print, for every step and token, mean, std and L2 norm "
        "of the step's input and output.",
    )
    trace.add_argument("text", metavar="TEXT", help="the prompt")
    trace.add_argument(
        "--model",
        default=argparse.SUPPRESS,
        help="shipped model name, .safetensors file, Hugging Face GPT-2 folder or cached name (gpt2); "
        "default: tiny, not the app's last model, so that one command prints the same numbers every time",
    )
    trace.add_argument("--lang", choices=LANGUAGES, default=argparse.SUPPRESS, help="language of the labels and notes")
    trace.add_argument("--json", action="store_true", help="print JSON instead of a table")
    trace.add_argument("--top-k", type=int, default=5, metavar="K", help="next-token guesses to show (default 5)")

    lessons = commands.add_parser(
        "lessons", help="list the lessons, or check them", description="List the lessons (id and title) in order."
    )
    lessons.add_argument("--lang", choices=LANGUAGES, default=argparse.SUPPRESS, help="language of the list")
    lessons.add_argument(
        "--check", action="store_true", help="check every lesson in both languages; exit 1 on problems"
    )
    train_command.register(commands)
    exercises_command.register(commands)
    progress_command.register(commands)
    return parser


def use_utf8_terminals() -> None:
    """Write UTF-8 to terminals even when the locale says otherwise (LANG=C over SSH is common and the
    terminal itself is nearly always UTF-8); elsewhere keep the encoding and escape what it cannot hold."""
    for stream in {sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__}:
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        if stream is None or encoding == "utf8" or not hasattr(stream, "reconfigure"):
            continue
        try:
            if stream.isatty():
                stream.reconfigure(encoding="utf-8", errors="replace")
            else:
                stream.reconfigure(errors="backslashreplace")
        except (OSError, ValueError):
            pass


def main(argv: Sequence[str] | None = None) -> int:
    # Before NumPy loads: the model's matrices are small, a second BLAS thread only adds overhead,
    # and a lab machine runs thirty of these at once.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    keep_freed_memory()  # each keystroke's trace reuses the last one's memory (tutor/allocator.py)
    use_utf8_terminals()
    args = build_parser().parse_args(argv)
    lang = args.lang or detect_language()
    try:
        if args.command == "trace":
            return run_trace(from_argv(args.text), args.model or "tiny", lang, as_json=args.json, top_k=args.top_k)
        if args.command == "lessons":
            from tutor.lessons_command import run_lessons

            return run_lessons(lang, check=args.check)
        if args.command == "progress":
            return progress_command.run_progress(lang, reset=args.reset, yes=args.yes)
        if args.command == "train":
            return train_command.run_train(args)
        if args.command == "exercises":
            return exercises_command.run_exercises(args, lang)
        return run_app(args.model, lang)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `tutor trace ... | head`
        sys.stderr.close()
        return 0
    except Exception as error:  # a bug: one line for the learner, the traceback on request
        if os.environ.get("TUTOR_DEBUG"):
            raise
        return fail(f"internal error: {type(error).__name__}: {error} (run with TUTOR_DEBUG=1 for details)")


def from_argv(text: str) -> str:
    """A command-line argument as text: bytes that were not UTF-8 (Python keeps them as lone surrogates)
    become U+FFFD, as a UTF-8 terminal would show them, rather than three made-up byte tokens each."""
    if sys.getfilesystemencoding().lower().replace("-", "") != "utf8":
        return text
    return os.fsencode(text).decode("utf-8", "replace")


TRACE_WORDS: dict[str, tuple[str, str]] = {  # key: (en, zh)
    "empty": (
        "the prompt is empty: nothing to trace (try: tutor trace 猫追狗)",
        "提示词是空的：没有可以追踪的内容（试试：tutor trace 猫追狗）",
    ),
    "untrained": (
        "note: model '{name}' has untrained (random) weights: the numbers show the mechanics, not anything learned",
        "注意：模型“{name}”的权重未经训练（随机）：这些数字展示的是计算过程，不是学到的东西",
    ),
    "dropped": (
        "note: the prompt is longer than the context; kept the last {n} tokens, dropped {d}",
        "注意：提示词超出上下文长度；只保留了最后 {n} 个词元，丢弃了 {d} 个",
    ),
}


def run_trace(text: str, model_name: str, lang: str, *, as_json: bool, top_k: int) -> int:
    """The table (or with `as_json` the JSON document) of every step's numbers for `text`.

    Notes on what the numbers are (untrained weights, tokens dropped from a long prompt) come first: in the
    table's output above it, where a pager or `head` shows them; with --json on stderr, so that stdout
    stays one JSON document (which says the same in "trained" and "dropped_tokens")."""
    from tutor.i18n import pick

    if not text:
        return fail(pick(TRACE_WORDS, "empty", lang), code=2)
    import model
    from tutor.report import render_report, trace_report

    try:
        gpt = model.load(model_name)
    except model.WeightsError as error:
        return fail(str(error))
    trace = gpt.run(text)
    report = trace_report(gpt, trace, top_k=max(top_k, 0))
    notes = []
    if not gpt.trained:
        notes.append(pick(TRACE_WORDS, "untrained", lang, name=gpt.name))
    if trace.dropped:
        notes.append(pick(TRACE_WORDS, "dropped", lang, n=len(trace.tokens), d=trace.dropped))
    if as_json:
        for note in notes:
            print(note, file=sys.stderr)
        utf8 = (sys.stdout.encoding or "").lower().replace("-", "") == "utf8"
        # indented for a person at a terminal; one line for a program reading a pipe
        json.dump(report, sys.stdout, ensure_ascii=not utf8, indent=2 if sys.stdout.isatty() else None)
        sys.stdout.write("\n")
    else:
        from rich.console import Console

        Console().print(render_report(report, trace, lang, notes=notes))
    return 0


def run_app(model_name: str | None, lang: str) -> int:
    """The app; with no --model it resumes the learner's last model, else the one asked for."""
    import model

    try:
        gpt = model.load(model_name or "tiny")
    except model.WeightsError as error:
        return fail(str(error))
    if not sys.stdout.isatty() or not sys.stdin.isatty():
        return fail("tutor needs a terminal; for plain output try: tutor trace TEXT")
    from tutor.app import TutorApp

    TutorApp(gpt, lang, resume_model=model_name is None).run()
    return 0


def fail(message: str, code: int = 1) -> int:
    print(f"tutor: error: {message}", file=sys.stderr)
    return code


YES = {"y", "yes", "是", "好"}


def confirmed(question: str) -> bool:
    """Ask a y/N question on the terminal; anything but yes (or end of input) is no."""
    try:
        answer = input(question)
    except EOFError:
        answer = ""
    return answer.strip().lower() in YES
