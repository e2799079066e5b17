"""Compare: one prompt through two models at once — residual norms, LayerNorm statistics, next-token guesses.

Both traces come from one worker (latest input wins). The rows line up by hook name, so a model
without LayerNorm shows "—" where the other has one, and the differences are spelled out: the ratio
of the norms, and which guesses only one model makes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input, Label, Select, Static

import model
from model import GPT, Trace
from tutor.i18n import pick, t
from tutor.model_words import norm_named
from tutor.number_style import visible_piece
from tutor.panels.residual_panel import bar_fraction, norm_text
from tutor.patches.footer_labels import localize_bindings
from tutor.runner import PassRunner, Stop
from tutor.screens.experiments.base import PromptExperimentScreen
from tutor.screens.experiments.variants import shipped, variant_names
from tutor.stream_points import residual_points
from tutor.widgets.live_static import LiveStatic

TOP_K = 5
BAR = 10  # cells of each norm bar at most
PANES = ("summary", "residual", "norms", "next")  # this screen's own, not the main screen's panels
FAR = 1.25  # a norm ratio beyond ×1.25 or below ×0.8 is marked as a difference

WORDS: dict[str, tuple[str, str]] = {
    "prompt": ("Prompt", "提示词"),
    "left": ("left", "左"),
    "right": ("right", "右"),
    "token": (
        "token {pos} {piece} (alt+←→ moves) · the numbers below are this token's",
        "词元 {pos} {piece}（alt+←→ 移动）· 下面的数字都属于这个词元",
    ),
    "resid_title": ("‖x‖ of the residual stream", "残差流的 ‖x‖"),
    "ratio": ("ratio", "比值"),
    "ratio_note": ("ratio = right / left; ≥ ×{far} or ≤ ×{near} in bold", "比值 = 右 / 左；≥ ×{far} 或 ≤ ×{near} 加粗"),
    "ln_title": ("LayerNorm: μ and σ of what each norm reads", "LayerNorm：每个归一化读入的 μ 和 σ"),
    "next_title": ("next-token guesses after token {pos}", "词元 {pos} 之后的下一个词元猜测"),
    "wiring": ("{name}: {norm} · {positional} · {residual}", "{name}：{norm} · {positional} · {residual}"),
    # each block as the model computes it: x + … only where there is a residual to add to
    "pre": ("pre-norm x + F(LN(x))", "pre-norm x + F(LN(x))"),
    "pre_nores": ("pre-norm F(LN(x))", "pre-norm F(LN(x))"),
    "post": ("post-norm LN(x + F(x))", "post-norm LN(x + F(x))"),
    "post_nores": ("post-norm LN(F(x))", "post-norm LN(F(x))"),
    "none": ("no LayerNorm, x + F(x)", "没有 LayerNorm，x + F(x)"),
    "none_nores": ("no LayerNorm, F(x)", "没有 LayerNorm，F(x)"),
    "pos_sinusoidal": ("sinusoidal positions", "正弦位置编码"),
    "pos_learned": ("learned positions", "可学习的位置向量"),
    "pos_rope": ("RoPE positions (rotated q, k)", "RoPE 位置编码（旋转 q、k）"),
    "pos_none": ("no positional encoding", "没有位置编码"),
    "pos_base": ("{positional}, base {base}", "{positional}，base {base}"),
    "scaled_llama3": ("{positional}, Llama 3 scaling ×{factor}", "{positional}，Llama 3 缩放 ×{factor}"),
    "scaled_linear": ("{positional}, linear scaling ×{factor}", "{positional}，线性缩放 ×{factor}"),
    "residual": ("residual", "有残差"),
    "no_residual": ("NO residual", "没有残差"),
    "same_top": ("Both guess {piece} first.", "两个模型的第一猜测都是 {piece}。"),
    "differ_top": ("First guesses differ: {left} vs {right}.", "第一猜测不同：{left} 对 {right}。"),
    "shared": (
        "{n} of the top {k} are shared; ≠ marks a guess the other model's top {k} lacks.",
        "前 {k} 个中有 {n} 个相同；≠ 表示另一个模型前 {k} 中没有的猜测。",
    ),
    "largest_ratio": (
        "Largest difference in ‖x‖: {point}, right/left = ×{ratio}.",
        "‖x‖ 差别最大处：{point}，右/左 = ×{ratio}。",
    ),
    "largest_ratio_shared": (
        "Largest difference in ‖x‖ at the {n} points both models have: {point}, right/left = ×{ratio}.",
        "在两个模型都有的 {n} 处里，‖x‖ 差别最大处：{point}，右/左 = ×{ratio}。",
    ),
    "depths": (
        "{deeper} has {most} blocks, the other {fewest}: the rows from B{fewest} on show {deeper} alone (—).",
        "{deeper} 有 {most} 个块，另一个只有 {fewest} 个：从 B{fewest} 起的行只有 {deeper}（—）。",
    ),
    "no_norm": ("— no LayerNorm", "— 没有 LayerNorm"),
    "empty": ("Type a prompt to compare the two models.", "输入提示词来比较两个模型。"),
    "same_model": (
        "Both sides run {name}: pick another model on one side (alt+↓ or shift+↓).",
        "两边都是 {name}：按 alt+↓ 或 shift+↓ 换一个。",
    ),
    "shorter": ("({name} has {n} tokens: its last is shown)", "（{name} 只有 {n} 个词元：显示最后一个）"),
    "log": ("(log bars)", "（对数刻度）"),
}
KEY_WORDS: dict[str, tuple[str, str]] = {  # footer labels by action; short: all five fit at 80 columns
    "back": ("Back", "返回"),
    "move_token(1)": ("Token", "词元"),
    "cycle(0, 1)": ("Left", "左模型"),
    "cycle(1, 1)": ("Right", "右模型"),
    "scroll(1)": ("Scroll", "滚动"),
}


@dataclass
class CompareReady:
    """Both traces of one prompt, computed in the worker."""

    prompt: str
    left: GPT
    right: GPT
    left_trace: Trace
    right_trace: Trace


@dataclass(frozen=True)
class NormRow:
    """One LayerNorm, named by its hook prefix ("blocks.0.ln1"), and what it reads at the token: μ, σ."""

    prefix: str
    mean: float
    std: float


def norm_rows(trace: Trace, token: int) -> dict[str, NormRow]:
    """μ and σ (population, as LayerNorm takes them) of every norm's input, at one token."""
    rows = {}
    for step in trace.steps:
        if step.kind != "norm":
            continue
        prefix = step.out_hook.rsplit(".", 1)[0]
        x = trace[step.in_hook][token].astype(np.float64)
        mean = trace.activations.get(prefix + ".hook_mean")  # an RMSNorm takes no μ: its input's own mean
        rows[prefix] = NormRow(prefix, float(mean[token, 0]) if mean is not None else float(x.mean()), float(x.std()))
    return rows


def norm_label(prefix: str) -> str:
    """ "blocks.2.ln1" → "B2 ln1", "ln_final" stays."""
    if prefix.startswith("blocks."):
        _, block, name = prefix.split(".")
        return f"B{block} {name}"
    return prefix


class ComparePanel(LiveStatic):
    DEFAULT_CSS = "ComparePanel { padding: 0 1; height: auto; width: 1fr; }"


class CompareScreen(PromptExperimentScreen):
    NAME = "compare"
    PROMPT_ID = "compare-prompt"
    WIDE = 120  # from here the residual chart and the LayerNorm table sit side by side
    BINDINGS = [
        Binding("alt+right", "move_token(1)", "Token", key_display="alt+←→", priority=True),
        Binding("alt+left", "move_token(-1)", show=False, priority=True),
        # alt for the left side, shift for the right, as the order lab's first and second token; F2 and F3 keep
        # their meaning everywhere (the lesson list, the lesson): not taken for models here
        Binding("alt+down", "cycle(0, 1)", "Left", key_display="alt+↑↓", priority=True),
        Binding("alt+up", "cycle(0, -1)", show=False, priority=True),
        Binding("shift+down", "cycle(1, 1)", "Right", key_display="shift+↑↓", priority=True),
        Binding("shift+up", "cycle(1, -1)", show=False, priority=True),
        Binding("pagedown", "scroll(1)", "Scroll", key_display="PgDn/PgUp", priority=True),
        Binding("pageup", "scroll(-1)", show=False, priority=True),
    ]
    DEFAULT_CSS = """
    CompareScreen #compare-controls { height: 1; margin: 0 1; }
    CompareScreen #compare-controls Label { padding: 0 1; }
    CompareScreen #compare-prompt { width: 1fr; }
    CompareScreen #compare-token { padding: 0 1; height: auto; }
    CompareScreen #compare-body { height: 1fr; }
    CompareScreen #compare-charts { height: auto; layout: vertical; }
    CompareScreen.-wide #compare-charts { layout: horizontal; }
    CompareScreen.-wide #compare-residual { width: 64; }
    """

    def __init__(self, gpt: GPT, prompt: str, lang: str) -> None:
        super().__init__(gpt=gpt, prompt=prompt, lang=lang)
        localize_bindings(self, KEY_WORDS, lang)
        self.names = variant_names()
        if gpt.name not in self.names:  # a GPT-2 or another checkpoint on the main screen: offer it too
            self.names.insert(0, gpt.name)
        right = "postnorm" if gpt.name != "postnorm" else model.DEFAULT_MODEL  # lesson 8's pair by default
        self.chosen = [gpt.name, right if right in self.names else self.names[-1]]
        self.token = -1  # the last token, until the learner moves
        self.ready: CompareReady | None = None
        self.passes: PassRunner[CompareReady] = PassRunner(self, "compare", self.compare_ready, self.pass_failed)

    def model_named(self, name: str) -> GPT:
        return self.gpt if name == self.gpt.name else shipped(name)

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="compare-controls"):
            yield Input(self.prompt, placeholder=pick(WORDS, "prompt", self.lang), id="compare-prompt", compact=True)
            for side, key in enumerate(("left", "right")):
                yield Label(pick(WORDS, key, self.lang))  # its keys are in the footer (alt+↑↓, shift+↑↓)
                picker = Select(
                    [(name, name) for name in self.names],
                    value=self.chosen[side],
                    allow_blank=False,
                    compact=True,
                    id=f"compare-{key}",
                )
                # the longest name whole, and its arrow: at 16 cells three models read "deep-postnorm"
                picker.styles.width = max(cell_len(name) for name in self.names) + 4
                yield picker
        yield Static(id="compare-token")
        with VerticalScroll(id="compare-body"):
            yield ComparePanel(id="compare-summary")
            with Horizontal(id="compare-charts"):
                yield ComparePanel(id="compare-residual")
                yield ComparePanel(id="compare-norms")
            yield ComparePanel(id="compare-next")

    # -- the two runs, in a worker -------------------------------------------------------------------

    @on(Select.Changed)
    def model_changed(self, event: Select.Changed) -> None:
        side = 0 if event.select.id == "compare-left" else 1
        if isinstance(event.value, str) and event.value != self.chosen[side]:
            self.chosen[side] = event.value
            self.recompute()

    def recompute(self) -> None:
        try:
            left, right = (self.model_named(name) for name in self.chosen)
        except model.WeightsError as error:
            self.notify(str(error), severity="error")
            return
        self.run_both(self.query_one("#compare-prompt", Input).value, left, right)

    def run_both(self, prompt: str, left: GPT, right: GPT) -> None:
        def compute(stop: Stop) -> CompareReady:  # a newer keystroke's pass makes this one stop at the next hook
            return CompareReady(prompt, left, right, *(gpt.run(prompt, stop=stop) for gpt in (left, right)))

        self.passes.run(compute)

    def compare_ready(self, message: CompareReady) -> None:
        current = [self.model_named(name) for name in self.chosen]
        if message.prompt != self.query_one("#compare-prompt", Input).value or [message.left, message.right] != current:
            return  # superseded: a newer run is on its way
        self.ready = message
        self.show_result()

    # -- keys --------------------------------------------------------------------------------------

    def action_move_token(self, delta: int) -> None:
        if self.ready is None or not self.ready.left_trace.tokens:
            return
        n = len(self.ready.left_trace.tokens)
        self.token = (self.token % n + delta) % n
        self.show_result()

    def action_cycle(self, side: int, delta: int = 1) -> None:
        """alt+↑↓ / shift+↑↓: the next (or previous) model on that side (the Select follows, and its change runs
        the models)."""
        key = ("compare-left", "compare-right")[side]
        following = self.names[(self.names.index(self.chosen[side]) + delta) % len(self.names)]
        self.query_one(f"#{key}", Select).value = following

    def action_scroll(self, direction: int) -> None:
        body = self.query_one("#compare-body", VerticalScroll)
        body.scroll_to(y=body.scroll_y + direction * max(1, body.size.height - 2), animate=False)

    # -- drawing -----------------------------------------------------------------------------------

    def show_result(self) -> None:
        if not self.is_mounted or self.ready is None:
            return
        lang, ready = self.lang, self.ready
        left, right = ready.left_trace, ready.right_trace
        panels = {name: self.query_one(f"#compare-{name}", ComparePanel) for name in PANES}
        if not left.tokens or not right.tokens:
            self.query_one("#compare-token", Static).update(pick(WORDS, "empty", lang))
            for panel in panels.values():
                panel.show_content("", "empty")
            return
        n = len(left.tokens)
        token = self.token % n
        tokens = (token, min(token, len(right.tokens) - 1))  # another tokenizer may cut the prompt differently
        line = Text(pick(WORDS, "token", lang, pos=token, piece=visible_piece(left.pieces[token])))
        if len(right.tokens) != n:
            line.append(" " + pick(WORDS, "shorter", lang, name=ready.right.name, n=len(right.tokens)), style="dim")
        if left.dropped:
            line.append("\n" + t("dropped", lang, n=n, d=left.dropped), style="dim")
        self.query_one("#compare-token", Static).update(line)
        names = (ready.left.name, ready.right.name)
        shape = (n, self.size.width, names)
        panels["summary"].show_content(self.summary_view(ready, tokens), shape)
        panels["residual"].show_content(self.residual_view(ready, tokens), shape)
        panels["norms"].show_content(self.norms_view(ready, tokens), shape)
        panels["next"].show_content(self.next_view(ready, tokens), shape)

    def residual_norms(self, trace: Trace, token: int) -> dict[str, tuple[str, float]]:
        """hook → (label, ‖x‖ at the token) for every point the residual stream is measured."""
        return {
            point.hook: (point.label(self.lang), float(np.linalg.norm(trace[point.hook][token].astype(np.float64))))
            for point in residual_points(trace)
        }

    def norm_ratios(self, ready: CompareReady, tokens: tuple[int, int]) -> list[tuple[str, float | None, float | None]]:
        """(label, left ‖x‖, right ‖x‖) for every residual point either model has, in the deeper one's order;
        None where a model has no such point (a 4-block model beside a 16-block one: blocks 4–15)."""
        left = self.residual_norms(ready.left_trace, tokens[0])
        right = self.residual_norms(ready.right_trace, tokens[1])
        order = list(right) if len(right) > len(left) else list(left)
        order += [hook for hook in {**left, **right} if hook not in order]
        return [
            ((left.get(hook) or right[hook])[0], *(side[hook][1] if hook in side else None for side in (left, right)))
            for hook in order
        ]

    def summary_view(self, ready: CompareReady, tokens: tuple[int, int]) -> Group:
        lang = self.lang
        lines = []
        if ready.left is ready.right:
            lines.append(Text(pick(WORDS, "same_model", lang, name=ready.left.name), style="bold"))
        lines += [Text(wiring(gpt, lang), style="dim") for gpt in (ready.left, ready.right)]
        left_top = ready.left_trace.top_k(1, tokens[0])[0]
        right_top = ready.right_trace.top_k(1, tokens[1])[0]
        if left_top[1] == right_top[1]:
            lines.append(Text(pick(WORDS, "same_top", lang, piece=visible_piece(left_top[1]))))
        else:
            lines.append(
                Text(
                    pick(
                        WORDS,
                        "differ_top",
                        lang,
                        left=f"{visible_piece(left_top[1])} {left_top[2]:.1%}",
                        right=f"{visible_piece(right_top[1])} {right_top[2]:.1%}",
                    ),
                    style="bold",
                )
            )
        rows = self.norm_ratios(ready, tokens)
        both = [(label, a, b) for label, a, b in rows if a is not None and b is not None]
        if both:
            label, a, b = max(both, key=lambda row: abs(np.log(max(row[2], 1e-30) / max(row[1], 1e-30))))
            key = "largest_ratio" if len(both) == len(rows) else "largest_ratio_shared"
            lines.append(Text(pick(WORDS, key, lang, point=label, ratio=ratio_text(a, b), n=len(both))))
        depths = (ready.left.config.n_layers, ready.right.config.n_layers)
        if depths[0] != depths[1]:
            deeper = ready.left.name if depths[0] > depths[1] else ready.right.name
            lines.append(
                Text(pick(WORDS, "depths", lang, deeper=deeper, most=max(depths), fewest=min(depths)), style="dim")
            )
        return Group(*lines)

    def residual_view(self, ready: CompareReady, tokens: tuple[int, int]) -> Group:
        lang = self.lang
        rows = self.norm_ratios(ready, tokens)
        values = [v for _, a, b in rows for v in (a, b) if v is not None]
        top, low = max(values) or 1.0, max(min(values), 1e-12)
        log = top / low > 100
        title = Text(pick(WORDS, "resid_title", lang), style="bold")
        if log:
            title.append(" " + pick(WORDS, "log", lang), style="dim")
        table = Table(box=None, padding=(0, 1), header_style="bold", pad_edge=False)
        table.add_column("", no_wrap=True)
        table.add_column(ready.left.name, no_wrap=True)
        table.add_column(ready.right.name, no_wrap=True)
        table.add_column(pick(WORDS, "ratio", lang), justify="right", no_wrap=True)
        for label, a, b in rows:
            if a is None or b is None:  # a point only the deeper model has
                ratio = Text("—", style="dim")
            else:
                far = not (1 / FAR <= (b / a if a else np.inf) <= FAR)
                ratio = Text("×" + ratio_text(a, b), style="bold" if far else "dim")
            table.add_row(
                label,
                self.bar(a, top, low, log, "cyan") if a is not None else Text("—", style="dim"),
                self.bar(b, top, low, log, "magenta") if b is not None else Text("—", style="dim"),
                ratio,
            )
        note = Text(pick(WORDS, "ratio_note", lang, far=f"{FAR:.2f}", near=f"{1 / FAR:.2f}"), style="dim")
        return Group(title, table, note)

    @staticmethod
    def bar(value: float, top: float, low: float, log: bool, colour: str) -> Text:
        cells = "█" * round(bar_fraction(value, top, low, log) * BAR)
        return Text.assemble((f"{cells:<{BAR}}", colour), f" {norm_text(value):>7}")

    def norms_view(self, ready: CompareReady, tokens: tuple[int, int]) -> Group:
        lang = self.lang
        left, right = norm_rows(ready.left_trace, tokens[0]), norm_rows(ready.right_trace, tokens[1])
        title = Text(pick(WORDS, "ln_title", lang), style="bold")
        table = Table(box=None, padding=(0, 1), header_style="bold", pad_edge=False)
        table.add_column("", no_wrap=True)
        for name in (ready.left.name, ready.right.name):
            table.add_column(f"{name} μ", justify="right", no_wrap=True)
            table.add_column("σ", justify="right", no_wrap=True)
        prefixes = list(left) + [prefix for prefix in right if prefix not in left]
        for prefix in prefixes:
            cells = []
            for rows in (left, right):
                row = rows.get(prefix)
                cells += [f"{row.mean:+.3f}", f"{row.std:.3f}"] if row else ["—", "—"]
            table.add_row(norm_label(prefix), *cells)
        lines: list[Text | Table] = [title, table] if prefixes else [title]
        for name, rows in ((ready.left.name, left), (ready.right.name, right)):
            if not rows:
                lines.append(Text(f"{name} {pick(WORDS, 'no_norm', lang)}", style="dim"))
        return Group(*lines)

    def next_view(self, ready: CompareReady, tokens: tuple[int, int]) -> Group:
        lang = self.lang
        left = ready.left_trace.top_k(TOP_K, tokens[0])
        right = ready.right_trace.top_k(TOP_K, tokens[1])
        left_pieces, right_pieces = {p for _, p, _ in left}, {p for _, p, _ in right}
        title = Text(pick(WORDS, "next_title", lang, pos=tokens[0]), style="bold")
        table = Table(box=None, padding=(0, 1), header_style="bold", pad_edge=False)
        table.add_column("#", justify="right")
        for name in (ready.left.name, ready.right.name):
            table.add_column(name, no_wrap=True)
            table.add_column("p", justify="right", no_wrap=True)
        for rank, ((_, a, pa), (_, b, pb)) in enumerate(zip(left, right, strict=True), 1):
            table.add_row(
                str(rank),
                self.guess(a, a not in right_pieces),
                f"{pa:6.1%}",
                self.guess(b, b not in left_pieces),
                f"{pb:6.1%}",
            )
        shared = Text(pick(WORDS, "shared", lang, n=len(left_pieces & right_pieces), k=TOP_K), style="dim")
        return Group(title, table, shared)

    @staticmethod
    def guess(piece: str, only_here: bool) -> Text:
        return Text(f"{visible_piece(piece)} {'≠' if only_here else ' '}", style="bold yellow" if only_here else "")


def wiring(gpt: GPT, lang: str) -> str:
    """How a model is wired, as a person would write it: "noresidual: pre-norm F(LN(x)) · sinusoidal
    positions · NO residual" (no "x +" where there is no residual), "no positional encoding"."""
    config = gpt.config
    norm = config.norm if config.residual else f"{config.norm}_nores"
    positional = pick(WORDS, f"pos_{config.positional}", lang)
    if config.positional in ("sinusoidal", "rope") and config.pos_base != 10000:
        base = f"{config.pos_base:g}".replace("e+0", "e").replace("e+", "e")  # 10, 1e6
        positional = pick(WORDS, "pos_base", lang, positional=positional, base=base)
    if config.positional == "rope" and config.rope_scaling != "none":  # Llama 3's: its angles are not base's alone
        positional = pick(
            WORDS, f"scaled_{config.rope_scaling}", lang, positional=positional, factor=f"{config.rope_factor:g}"
        )
    residual = pick(WORDS, "residual" if config.residual else "no_residual", lang)
    norm_words = norm_named(pick(WORDS, norm, lang), config, lang)
    return pick(WORDS, "wiring", lang, name=gpt.name, norm=norm_words, positional=positional, residual=residual)


def ratio_text(left: float, right: float) -> str:
    """right/left in a few cells: 1.00, 12.3, 1.2e+03; "∞" when the left norm is 0."""
    if left == 0:
        return "∞"
    return norm_text(right / left, width=6)
