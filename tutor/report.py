"""Per-token numbers of every step of a trace, as a Rich table or as JSON (no Textual here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from model import GPT, Trace
from tutor.i18n import say
from tutor.number_style import visible_piece as visible
from tutor.step_words import step_label


def token_stats(x: np.ndarray) -> dict[str, list[float]]:
    """Mean, standard deviation (σ, as LayerNorm takes it) and L2 norm of each token's vector."""
    x = np.asarray(x, dtype=np.float64)
    if x.shape[0] == 0:
        return {"mean": [], "std": [], "norm": []}
    return {
        "mean": x.mean(axis=-1).tolist(),
        "std": x.std(axis=-1).tolist(),
        "norm": np.linalg.norm(x, axis=-1).tolist(),
    }


def trace_report(gpt: GPT, trace: Trace, top_k: int = 5) -> dict[str, Any]:
    """The `tutor trace --json` document: tokens, every step's in/out stats, the next-token guess."""
    return {
        "model": gpt.name,
        "trained": gpt.trained,
        "dropped_tokens": trace.dropped,
        "tokens": [
            {"text": text, "id": token, "position": position}
            for position, (token, text) in enumerate(zip(trace.tokens, trace.pieces, strict=True))
        ],
        "steps": [
            {
                "index": step.index,  # from 0, as `trace.steps[index]`
                "number": step.index + 1,  # from 1, as the app's "Step 1/27" and the table count
                "name": step.name,
                "kind": step.kind,
                "hook": step.out_hook,
                "in_hook": step.in_hook,
                "in": token_stats(trace[step.in_hook]),
                "out": token_stats(trace[step.out_hook]),
            }
            for step in trace.steps
        ],
        "next_token": [{"text": text, "id": token, "prob": prob} for token, text, prob in trace.top_k(top_k)],
    }


HEADERS = {  # the table's columns: (en, zh)
    "step": ("step · token", "步骤 · 词元"),
    "in": ("in", "输入"),
    "out": ("out", "输出"),
}


def render_report(report: dict[str, Any], trace: Trace, lang: str = "en", notes: Sequence[str] = ()) -> Any:
    """A Rich renderable: `notes` first, then each step's name on a line of its own with a row per token
    under it. The name and the tokens share the first column, so that at 80 columns (the width of a
    pipe) a step's name has the room it needs and stays on one line."""
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    if not trace.tokens:
        return Text(
            say(("The prompt is empty: there is nothing to trace.", "提示词是空的：没有可以追踪的内容。"), lang)
        )
    table = Table(
        title=f"{report['model']} · " + say(("every step, in and out", "每一步的输入与输出"), lang),
        header_style="bold",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        padding=(0, 1, 0, 0),  # with the column rule's one cell: two between columns
    )
    word = {key: say(words, lang) for key, words in HEADERS.items()}
    table.add_column(word["step"], overflow="fold")
    for side in ("in", "out"):
        for stat in ("μ", "σ", "‖x‖"):
            table.add_column(f"{word[side]} {stat}", justify="right", no_wrap=True)
    for step, data in zip(trace.steps, report["steps"], strict=True):
        # numbered from 1 as the app's step bar counts ("Step 1/27"); the JSON's "index" is trace.steps' own
        table.add_row(Text(f"{step.index + 1} {step_label(step, lang, trace.config.norm_kind)}", style="bold"))
        for position, piece in enumerate(trace.pieces):
            table.add_row(
                f"  {position} {visible(piece)}",
                *(f"{data[side][stat][position]:.3f}" for side in ("in", "out") for stat in ("mean", "std", "norm")),
            )
        table.add_section()
    guesses = Text(say(("next token: ", "下一个词元："), lang), style="bold")
    for i, guess in enumerate(report["next_token"]):
        guesses.append(("  " if i else "") + f"{visible(guess['text'])} {guess['prob']:.1%}")
    return Group(*(Text(note) for note in notes), table, guesses)
