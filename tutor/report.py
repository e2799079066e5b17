"""Per-token numbers of every step of a trace, as a Rich table or as JSON (no Textual here)."""

from __future__ import annotations

from typing import Any

import numpy as np

from model import GPT, Trace
from tutor.view import visible_piece as visible


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
                "index": step.index,
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


def render_report(report: dict[str, Any], trace: Trace, lang: str = "en") -> Any:
    """A Rich renderable: one row per step and token, grouped by step."""
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    zh = lang == "zh"
    if not trace.tokens:
        return Text("提示词是空的：没有可以追踪的内容。" if zh else "The prompt is empty: there is nothing to trace.")
    table = Table(
        title=f"{report['model']} · " + ("每一步的输入与输出" if zh else "every step, in and out"),
        header_style="bold",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
    )
    table.add_column("步骤" if zh else "step", overflow="fold")
    table.add_column("词元" if zh else "token", no_wrap=True)
    for header in ("in μ", "in σ", "in ‖x‖", "out μ", "out σ", "out ‖x‖"):
        table.add_column(header, justify="right", no_wrap=True)
    for step, data in zip(trace.steps, report["steps"], strict=True):
        for position, piece in enumerate(trace.pieces):
            table.add_row(
                f"{step.index} {step.label(lang)}" if position == 0 else "",
                f"{position} {visible(piece)}",
                *(f"{data[side][stat][position]:.3f}" for side in ("in", "out") for stat in ("mean", "std", "norm")),
            )
        table.add_section()
    guesses = Text("下一个词元：" if zh else "next token: ", style="bold")
    for i, guess in enumerate(report["next_token"]):
        guesses.append(("  " if i else "") + f"{visible(guess['text'])} {guess['prob']:.1%}")
    return Group(table, guesses)
