"""`tutor trace TEXT`: every step's per-token mean, std and norm for a prompt, as a table or JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys

from tutor.commands.common import fail
from tutor.language import LANGUAGES

HELP = "print every step's per-token mean, std and norm for a prompt"
DESCRIPTION = (
    "Run the model on TEXT and print, for every step and token, mean, std and L2 norm of the step's input and output."
)

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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", metavar="TEXT", help="the prompt")
    parser.add_argument(
        "--model",
        default=argparse.SUPPRESS,
        help="shipped model name, .safetensors file, Hugging Face folder (GPT-2, Llama, Qwen2, Mistral) or cached "
        "name (gpt2); "
        "default: tiny, not the app's last model, so that one command prints the same numbers every time",
    )
    parser.add_argument("--lang", choices=LANGUAGES, default=argparse.SUPPRESS, help="language of the labels and notes")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--top-k", type=int, default=5, metavar="K", help="next-token guesses to show (default 5)")


def run(args: argparse.Namespace) -> int:
    return run_trace(from_argv(args.text), args.model or "tiny", args.lang, as_json=args.json, top_k=args.top_k)


def from_argv(text: str) -> str:
    """A command-line argument as text: bytes that were not UTF-8 (Python keeps them as lone surrogates)
    become U+FFFD, as a UTF-8 terminal would show them, rather than three made-up byte tokens each."""
    if sys.getfilesystemencoding().lower().replace("-", "") != "utf8":
        return text
    return os.fsencode(text).decode("utf-8", "replace")


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
