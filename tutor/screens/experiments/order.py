"""Order: swap two tokens of the prompt and see which outputs change, with and without positions and mask.

Four runs of the same weights on the prompt and on the prompt with tokens i and j swapped: `tiny`
(positions) and `nope` (no positions), each as trained (causal mask) and rebuilt with `causal=False`
(off-training). For every position and every block the screen shows max |Δ| of the residual stream
between the two prompts — at the same position, or following each token to where the swap moved it.
What the verdicts say is read off those numbers, never written in advance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, VerticalScroll
from textual.widgets import Input, Static

from model import GPT
from tutor.i18n import pick, t
from tutor.number_style import visible_piece
from tutor.patches.footer_labels import localize_bindings
from tutor.runner import PassRunner
from tutor.screens.experiments.base import PromptExperimentScreen
from tutor.screens.experiments.variants import shipped
from tutor.sentences import first_change
from tutor.widgets.live_static import LiveStatic

UNCHANGED = 5e-4  # below this max |Δ| shows as 0.000: float32 rounding, not a change
CELL = 6  # "12.345" at most; |Δ| of a residual stream stays far below 100 in the shipped models

WORDS: dict[str, tuple[str, str]] = {
    "prompt": ("Prompt", "提示词"),
    "swap": ("swap positions {i} ↔ {j}:  ", "交换位置 {i} ↔ {j}：  "),
    "mode_same": (
        "max |Δ| between the two prompts at the same position (F6: follow each token instead)",
        "两个提示词在同一位置的 max |Δ|（F6：改为跟随每个词元）",
    ),
    "mode_follow": (
        "max |Δ| following each token to where the swap moved it (F6: same position instead)",
        "跟随每个词元到交换后的位置的 max |Δ|（F6：改为同一位置）",
    ),
    "legend": (
        "rows: the residual stream after the embedding and after each block, then p(next); 0.000 = unchanged",
        "行：嵌入后与每个块之后的残差流，最后是 p(下一个)；0.000 = 没变",
    ),
    "embed": ("embed", "嵌入"),
    "block": ("B{b}", "B{b}"),
    "next": ("p(next)", "p(下一个)"),
    "positions": ("positions", "有位置编码"),
    "no_positions": ("no positions", "无位置编码"),
    "mask": ("causal mask", "因果掩码"),
    "no_mask": ("no mask", "无掩码"),
    "trained": ("as trained", "与训练时相同"),
    "off_training": ("OFF-TRAINING", "训练之外"),
    "permuted": (
        "Every output moved with its token: the same set of vectors, permuted.",
        "每个输出都跟着自己的词元移动：同一组向量，只是换了顺序。",
    ),
    "last_never": ("Last position {p}: unchanged at every block.", "最后位置 {p}：每个块都没变。"),
    "last_from": (
        "Last position {p}: unchanged through {before}; first changes at {row}.",
        "最后位置 {p}：到 {before} 为止没变；在 {row} 第一次改变。",
    ),
    "last_at_once": ("Last position {p}: changes already at {row}.", "最后位置 {p}：在 {row} 就已改变。"),
    "last_swapped": (
        "The last position is one of the two swapped: its own token changed.",
        "最后位置是被交换的位置之一：它自己的词元变了。",
    ),
    "before_swap_one": (
        "Position {ps}: unchanged everywhere — it comes before the swap, and the mask hides what follows.",
        "位置 {ps}：处处没变——它在交换之前，掩码挡住了后面的词元。",
    ),
    "before_swap": (
        "Positions {ps}: unchanged everywhere — they come before the swap, and the mask hides what follows.",
        "位置 {ps}：处处没变——它们在交换之前，掩码挡住了后面的词元。",
    ),
    "too_short": ("Type a prompt of at least two tokens to swap two of them.", "输入至少两个词元的提示词，才能交换。"),
    "same_tokens": (
        "Positions {i} and {j} hold the same token: the swap changes nothing. Pick another pair.",
        "位置 {i} 和 {j} 是同一个词元：交换后什么也不变。换一对位置。",
    ),
    "models": (
        "weights: {a} and {b} as shipped; 'no mask' runs them with causal=False, which they were never trained for",
        "权重：随附的 {a} 和 {b}；“无掩码”用 causal=False 运行它们，这不是它们训练时的样子",
    ),
}
KEY_WORDS: dict[str, tuple[str, str]] = {  # footer labels by action; short: all five fit at 80 columns
    "back": ("Back", "返回"),
    "move(0, 1)": ("1st", "第一个"),
    "move(1, 1)": ("2nd", "第二个"),
    "toggle_mode": ("Same/follow", "同位/跟随"),
    "scroll(1)": ("Scroll", "滚动"),
}


@dataclass(frozen=True)
class Run:
    """One configuration's comparison: rows = embed, B0 … B(n−1), p(next); columns = positions."""

    name: str  # the shipped weights
    positional: bool
    causal: bool
    same: np.ndarray  # [row, pos]: max |x_original[p] − x_swapped[p]|
    follow: np.ndarray  # [row, pos]: max |x_original[p] − x_swapped[π(p)]|, π swapping i and j


@dataclass(frozen=True)
class OrderResult:
    prompt: str
    pieces: list[str]
    i: int
    j: int
    runs: list[Run]
    dropped: int  # tokens cut from the front of a prompt longer than the context


@dataclass
class OrderReady:
    result: OrderResult


def swapped(ids: list[int], i: int, j: int) -> list[int]:
    out = list(ids)
    out[i], out[j] = out[j], out[i]
    return out


def stream_rows(gpt: GPT, ids: list[int]) -> list[np.ndarray]:
    """The residual stream after the embedding and after each block, then the next-token probabilities."""
    trace = gpt.run(ids)
    rows = [trace["blocks.0.hook_resid_pre"]]
    rows += [trace[f"blocks.{b}.hook_resid_post"] for b in range(gpt.config.n_layers)]
    probs = np.stack([trace.next_token_probs(p) for p in range(len(ids))])
    return [row.astype(np.float64) for row in rows] + [probs]


def compare_swap(gpt: GPT, ids: list[int], i: int, j: int) -> tuple[np.ndarray, np.ndarray]:
    """max |Δ| per row and position, at the same position and following the tokens."""
    order = np.arange(len(ids))
    order[i], order[j] = j, i  # the token at p in the original sits at order[p] in the swapped prompt
    original, other = stream_rows(gpt, ids), stream_rows(gpt, swapped(ids, i, j))
    same = np.array([np.abs(a - b).max(axis=-1) for a, b in zip(original, other, strict=True)])
    follow = np.array([np.abs(a - b[order]).max(axis=-1) for a, b in zip(original, other, strict=True)])
    return same, follow


def run_order(prompt: str, i: int, j: int) -> OrderResult:
    """The four runs: no positions or positions (nope, tiny) × the causal mask or not (as trained, off-training)."""
    runs = []
    for name in ("nope", "tiny"):  # the lesson's order: no positions first
        trained = shipped(name)
        ids, _ = trained.prompt_tokens(prompt)
        for causal in (True, False):
            gpt = trained if causal else trained.with_config(causal=False)
            same, follow = compare_swap(gpt, ids, i, j)
            runs.append(Run(name, trained.config.positional != "none", causal, same, follow))
    tiny = shipped("tiny")
    ids, dropped = tiny.prompt_tokens(prompt)
    return OrderResult(prompt, [tiny.tokenizer.piece(t) for t in ids], i, j, runs, dropped)


class RunPanel(LiveStatic):
    DEFAULT_CSS = "RunPanel { padding: 0 1; height: auto; }"


class OrderScreen(PromptExperimentScreen):
    NAME = "order"
    PROMPT_ID = "order-prompt"
    WIDE = 120  # from here the four runs sit in a 2 × 2 grid
    BINDINGS = [
        # priority: the prompt would move its cursor or select with these keys
        Binding("alt+right", "move(0, 1)", "1st", key_display="alt+←→", priority=True),
        Binding("alt+left", "move(0, -1)", show=False, priority=True),
        Binding("shift+right", "move(1, 1)", "2nd", key_display="shift+←→", priority=True),
        Binding("shift+left", "move(1, -1)", show=False, priority=True),
        Binding("f6", "toggle_mode", "Same/follow"),
        Binding("pagedown", "scroll(1)", "Scroll", key_display="PgDn/PgUp", priority=True),
        Binding("pageup", "scroll(-1)", show=False, priority=True),
    ]
    DEFAULT_CSS = """
    OrderScreen #order-prompt { margin: 0 1; }
    OrderScreen .order-line { padding: 0 1; height: auto; }
    OrderScreen #order-runs { height: auto; grid-size: 1; grid-rows: auto; grid-gutter: 0 2; }
    OrderScreen.-wide #order-runs { grid-size: 2; }
    OrderScreen #order-body { height: 1fr; }
    """

    def __init__(self, gpt: GPT, prompt: str, lang: str) -> None:
        super().__init__(gpt=gpt, prompt=prompt, lang=lang)
        localize_bindings(self, KEY_WORDS, lang)
        self.positions = [0, 1]
        self.follow = False
        self.result: OrderResult | None = None
        self.passes: PassRunner[OrderReady] = PassRunner(self, "order", self.order_ready, self.pass_failed)

    def compose_body(self) -> ComposeResult:
        yield Input(self.prompt, placeholder=pick(WORDS, "prompt", self.lang), id="order-prompt", compact=True)
        yield Static(id="order-swap", classes="order-line")
        with VerticalScroll(id="order-body"):
            yield Static(id="order-mode", classes="order-line")
            with Grid(id="order-runs"):
                for n in range(4):
                    yield RunPanel(id=f"run-{n}")

    # -- the runs, in a worker ---------------------------------------------------------------------

    def tokens(self) -> list[int]:
        ids, _ = shipped("tiny").prompt_tokens(self.query_one("#order-prompt", Input).value)
        return ids

    def recompute(self) -> None:
        ids = self.tokens()
        if len(ids) < 2:
            self.result = None
            self.show_result()
            return
        i, j = (min(p, len(ids) - 1) for p in self.positions)
        if i == j:  # the prompt got shorter under both positions: keep them apart
            j = i - 1 if i > 0 else 1
        self.positions = [i, j]
        self.run_swap(self.query_one("#order-prompt", Input).value, i, j)

    def run_swap(self, prompt: str, i: int, j: int) -> None:
        self.passes.run(lambda stop: OrderReady(run_order(prompt, i, j)))

    def order_ready(self, message: OrderReady) -> None:
        result = message.result
        if result.prompt != self.query_one("#order-prompt", Input).value or [result.i, result.j] != self.positions:
            return  # the learner has moved on: a newer run is coming
        self.result = result
        self.show_result()

    # -- keys ------------------------------------------------------------------------------------

    def action_move(self, which: int, delta: int) -> None:
        n = len(self.tokens())
        if n < 2:
            self.notify(pick(WORDS, "too_short", self.lang), severity="warning")
            return
        other = self.positions[1 - which]
        position = (self.positions[which] + delta) % n
        if position == other:  # the two positions never coincide: hop over the other one
            position = (position + delta) % n
        self.positions[which] = position
        self.recompute()

    def action_toggle_mode(self) -> None:
        self.follow = not self.follow
        self.show_result()

    def action_scroll(self, direction: int) -> None:
        body = self.query_one("#order-body", VerticalScroll)
        body.scroll_to(y=body.scroll_y + direction * max(1, body.size.height - 2), animate=False)

    # -- drawing ---------------------------------------------------------------------------------

    def show_result(self) -> None:
        if not self.is_mounted:
            return
        lang, result = self.lang, self.result
        swap_line, mode_line = self.query_one("#order-swap", Static), self.query_one("#order-mode", Static)
        panels = list(self.query(RunPanel))
        if result is None:
            swap_line.update(pick(WORDS, "too_short", lang))
            mode_line.update("")
            for panel in panels:
                panel.show_content("", "empty")
            return
        i, j = result.i, result.j
        other_pieces = result.pieces[:]
        other_pieces[i], other_pieces[j] = other_pieces[j], other_pieces[i]
        swap_text = Text(pick(WORDS, "swap", lang, i=i, j=j))
        both = self.pieces_text(result.pieces, i, j).cell_len * 2 + 5
        if swap_text.cell_len + both <= self.size.width - 2:
            swap_text.append_text(self.pieces_text(result.pieces, i, j))
            swap_text.append("  →  ")
            swap_text.append_text(self.pieces_text(other_pieces, i, j))
        else:  # a long prompt: the two tokens are what matters, the prompt itself is in the input above
            swap_text.append(visible_piece(result.pieces[i]), style="reverse bold")
            swap_text.append(" ↔ ")
            swap_text.append(visible_piece(result.pieces[j]), style="reverse bold")
        if result.dropped:
            swap_text.append("\n" + t("dropped", lang, n=len(result.pieces), d=result.dropped), style="dim")
        if result.pieces[i] == result.pieces[j]:
            swap_text.append("\n" + pick(WORDS, "same_tokens", lang, i=i, j=j), style="bold")
        swap_line.update(swap_text)
        mode = pick(WORDS, "mode_follow" if self.follow else "mode_same", lang)
        mode_line.update(
            Text.assemble(
                (mode, "bold"),
                "\n",
                (pick(WORDS, "legend", lang), "dim"),
                "\n",
                (pick(WORDS, "models", lang, a="tiny", b="nope"), "dim"),
            )
        )
        width = panels[0].size.width or self.size.width
        for panel, run in zip(panels, result.runs, strict=True):
            panel.show_content(self.run_view(run, result, width), (len(result.pieces), width, self.follow))

    @staticmethod
    def pieces_text(pieces: list[str], i: int, j: int) -> Text:
        text = Text()
        for p, piece in enumerate(pieces):
            text.append(visible_piece(piece), style="reverse bold" if p in (i, j) else "")
        return text

    def row_labels(self, n_rows: int) -> list[str]:
        blocks = [pick(WORDS, "block", self.lang, b=b) for b in range(n_rows - 2)]
        return [pick(WORDS, "embed", self.lang), *blocks, pick(WORDS, "next", self.lang)]

    def shown_positions(self, result: OrderResult, width: int) -> list[int]:
        """The columns that fit: the two swapped positions and the last first, then the others in order."""
        n = len(result.pieces)
        label_width = max(cell_len(label) for label in self.row_labels(len(result.runs[0].same)))
        room = max(1, (width - 2 - label_width) // (CELL + 2))  # each column: its digits and a gap of two
        wanted = [result.i, result.j, n - 1, *range(n)]
        chosen: list[int] = []
        for p in wanted:
            if p not in chosen and len(chosen) < room:
                chosen.append(p)
        return sorted(chosen)

    def run_view(self, run: Run, result: OrderResult, width: int) -> Group:
        lang = self.lang
        values = run.follow if self.follow else run.same
        positions = pick(WORDS, "positions" if run.positional else "no_positions", lang)
        mask = pick(WORDS, "mask" if run.causal else "no_mask", lang)
        title = Text(f"{run.name} · {positions} · {mask}  ", style="bold")
        if run.causal:
            title.append(pick(WORDS, "trained", lang), style="dim")
        else:
            title.append(pick(WORDS, "off_training", lang), style="bold reverse")
        labels = self.row_labels(len(values))
        table = Table(box=None, padding=(0, 1), header_style="bold", pad_edge=False)
        table.add_column("", no_wrap=True)
        shown = self.shown_positions(result, width)
        for p in shown:
            mark = "*" if p in (result.i, result.j) else ""
            header = f"{p} {visible_piece(result.pieces[p])}{mark}"
            table.add_column(header, justify="right", no_wrap=True, min_width=CELL)
        for label, row in zip(labels, values, strict=True):
            cells = [Text(f"{row[p]:.3f}", style="dim" if row[p] < UNCHANGED else "bold red") for p in shown]
            table.add_row(label, *cells)
        return Group(title, table, *self.verdicts(run, result, labels))

    def verdicts(self, run: Run, result: OrderResult, labels: list[str]) -> list[Text]:
        """What the numbers say, in words: permuted, when the last position first differs, who never sees it."""
        lang, n = self.lang, len(result.pieces)
        lines = []
        if result.pieces[result.i] == result.pieces[result.j]:
            return lines
        if (run.follow < UNCHANGED).all():
            lines.append(Text(pick(WORDS, "permuted", lang), style="green"))
        last = n - 1
        if last in (result.i, result.j):
            lines.append(Text(pick(WORDS, "last_swapped", lang), style="dim"))
        else:
            said = first_change([float(value) for value in run.same[:, last]])  # as the table shows them
            values = {key: labels[row] for key, row in said.values.items()}
            lines.append(Text(pick(WORDS, said.key, lang, p=last, **values)))
        before = [p for p in range(min(result.i, result.j)) if (run.same[:, p] < UNCHANGED).all()]
        if run.causal and before:
            key = "before_swap_one" if len(before) == 1 else "before_swap"
            lines.append(Text(pick(WORDS, key, lang, ps=", ".join(map(str, before))), style="dim"))
        return lines
