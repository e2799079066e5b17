"""The positional-encoding explorer: the sinusoidal table, PE(p)·PE(q) and RoPE's angles for any base,
and the live model re-run with that base (off-training) beside the base it was trained with.

Every number comes from `model.sinusoidal_positions` (RoPE's angles are read back from its sin and cos
columns, as `model.rope` reads them) and from the model's own forward pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Input, Label, Static, TabbedContent, TabPane

from model import GPT, angle_table, model_rope_frequencies, sinusoidal_positions
from tutor import model_words
from tutor.i18n import pick, t
from tutor.model_words import rope_scaling_note
from tutor.number_style import sequential_style, visible_piece
from tutor.patches.footer_labels import localize_bindings
from tutor.runner import PassRunner, Stop
from tutor.screens.experiments.base import ExperimentScreen
from tutor.sentences import most_alike
from tutor.widgets.heatmap import GridRow, HeatmapGrid
from tutor.widgets.live_static import LiveStatic
from tutor.widgets.position_pictures import PositionPictures

PICTURES_MIN_HEIGHT = 32  # a shorter window keeps its rows for the tables (80×24)

MAX_POSITIONS = 128  # rows shown; GPT-2's 1024 positions would only repeat the story
TOP_K = 5
PRESETS = (10.0, 10000.0, 1e6)  # alt+p steps through them

KEY_WORDS: dict[str, tuple[str, str]] = {  # action → footer label
    "back": ("Back", "返回"),
    "next_preset": ("Base 10 → 10⁴ → 10⁶", "基数 10 → 10⁴ → 10⁶"),
    "next_tab": ("Next table", "下一张表"),
    "screen.scale_base(10)": ("Base ×10", "基数 ×10"),
    "screen.scale_base(0.1)": ("Base ÷10", "基数 ÷10"),
}

WORDS: dict[str, tuple[str, str]] = {
    "base_placeholder": ("base, e.g. 10, 10000, 1e6", "基数，例如 10、10000、1e6"),
    "prompt_placeholder": ("prompt, e.g. 猫追狗", "提示词，例如 猫追狗"),
    "base": ("base", "基数"),
    "prompt": ("prompt", "提示词"),
    "bad_base": (
        "The base must be a positive number, such as 10, 10000 or 1e6 (got “{text}”).",
        "基数必须是正数，例如 10、10000 或 1e6（输入的是 “{text}”）。",
    ),
    "tab_table": ("PE table", "PE 表"),
    "tab_similarity": ("PE(p)·PE(q)", "PE(p)·PE(q)"),
    "tab_rope": ("RoPE angles", "RoPE 角度"),
    "table_note": (
        "PE(pos, 2i) = sin(pos / base^(2i/d)), PE(pos, 2i+1) = cos(…), d = {d}. Pair 0 turns 1 rad per "
        "position (a full turn every {first} positions); the last pair {last_rate} rad (every {last} positions).",
        "PE(pos, 2i) = sin(pos / base^(2i/d))，PE(pos, 2i+1) = cos(…)，d = {d}。第 0 对每个位置转 1 弧度"
        "（每 {first} 个位置一整圈）；最后一对转 {last_rate} 弧度（每 {last} 个位置一圈）。",
    ),
    "similarity_note": (
        "PE(p)·PE(q) = Σᵢ cos((p − q)·ωᵢ): it depends only on the distance p − q. Distance 0: {self_dot}; "
        "1: {neighbours}; {far}: {farthest}; the most alike at a distance of 4 or more: {k}, {best}{each}.",
        "PE(p)·PE(q) = Σᵢ cos((p − q)·ωᵢ)：只取决于距离 p − q。距离 0：{self_dot}；"
        "1：{neighbours}；{far}：{farthest}；距离 4 及以上最相似的：{k}，{each}{best}。",
    ),
    "rope_note": (
        "RoPE turns each pair (q₂ᵢ, q₂ᵢ₊₁) of a head (d_head = {d}) by θ = pos / base^(2i/d_head); shown mod 2π, "
        "read back from the table's sin and cos. q·k then depends only on how far apart two tokens are.",
        "RoPE 把每个头（d_head = {d}）的每一对 (q₂ᵢ, q₂ᵢ₊₁) 旋转 θ = pos / base^(2i/d_head)；"
        "这里对 2π 取模，由表中的 sin 和 cos 反算。于是 q·k 只取决于两个词元相距多远。",
    ),
    "rope_half_note": (  # a Llama-family model: Hugging Face's pairs, the first half of a head with its second
        "RoPE turns each pair (q_i, q_{{i+d/2}}) of a head (d_head = {d}) by θ = pos / base^(2i/d_head); shown mod 2π, "
        "read back from the table's sin and cos. q·k then depends only on how far apart two tokens are.",
        "RoPE 把每个头（d_head = {d}）的每一对 (q_i, q_{{i+d/2}})（前一半与后一半配对）"
        "旋转 θ = pos / base^(2i/d_head)；这里对 2π 取模，由表中的 sin 和 cos 反算。"
        "于是 q·k 只取决于两个词元相距多远。",
    ),
    "each": (" each", "各 "),  # the most alike distances tie as shown
    "row_pos": ("pos {p}", "位置 {p}"),
    "row_p": ("p={p}", "p={p}"),
    "model_line": (
        "{model}: {positions}, trained with base {trained}. Showing base {base}.",
        "{model}：{positions}，训练时基数为 {trained}。当前显示基数 {base}。",
    ),
    "off_training": (
        "⚠ OFF-TRAINING: the weights never saw these position vectors; the right column is an experiment.",
        "⚠ 训练之外：权重从未见过这些位置向量；右栏只是实验。",
    ),
    "on_training": ("This is the base it was trained with: both columns agree.", "这就是训练时的基数：两栏一致。"),
    "unused": (
        "{model} uses {positions}, not the base: the tables show what a sinusoidal model would add; "
        "its guesses do not change.",
        "{model}：{positions}，不用基数：下面的表展示正弦模型会加入什么；它的猜测不会变。",
    ),
    "empty_prompt": (
        "Type a prompt above to see the model's next-token guess.",
        "在上方输入提示词，查看模型对下一个词元的猜测。",
    ),
    "guess_header": ("After “{token}” (position {pos}):", "在 “{token}”（位置 {pos}）之后："),
    "trained_column": ("base {base} (trained)", "基数 {base}（训练时）"),
    "changed_column": ("base {base} (off-training)", "基数 {base}（训练之外）"),
    "same_top": ("same top guess", "首选相同"),
    "changed_top": ("top guess changed", "首选变了"),
    "dropped": ("(the first {n} tokens are beyond the context and dropped)", "（前 {n} 个词元超出上下文，被丢弃）"),
}


def base_text(base: float) -> str:
    """A base as a learner would type it: 10, 10000, 1e+06, 2.5."""
    return f"{base:g}"


def parse_base(text: str) -> float | None:
    """A positive, finite base from the text, or None."""
    try:
        value = float(text.strip().replace("−", "-").replace("_", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) and value > 0 else None


def rope_angles(table: np.ndarray) -> np.ndarray:
    """θ mod 2π per position and pair, read back from the sinusoidal table's (sin, cos) columns."""
    sin, cos = table[:, 0::2].astype(np.float64), table[:, 1::2].astype(np.float64)
    return np.mod(np.arctan2(sin, cos), 2 * math.pi)


@dataclass
class Guesses:
    """The next-token guesses of the model as trained and with the changed base, for one prompt."""

    prompt: str
    base: float
    position: int
    token: str
    dropped: int
    trained: list[tuple[int, str, float]]
    changed: list[tuple[int, str, float]]


class BaseInput(Input):
    """The base field: ↑ and ↓ multiply and divide the base by 10 (an Input scrolls with them otherwise)."""

    BINDINGS = [
        Binding("up", "screen.scale_base(10)", "Base ×10", key_display="↑↓"),
        Binding("down", "screen.scale_base(0.1)", "Base ÷10", show=False),
    ]


class PositionsScreen(ExperimentScreen):
    NAME = "positions"
    BINDINGS = [
        # alt+p: the next of three preset bases (F2, F3, F4 keep their meaning everywhere; a terminal sends alt+digits
        # and alt+b as ESC 1 and ESC b, which Textual reads as ¡ and ctrl+left); priority: the fields would type the p
        Binding("alt+p", "next_preset", "Base 10 → 10⁴ → 10⁶", key_display="alt+p", priority=True),
        Binding("f6", "next_tab", "Next table"),
    ]
    DEFAULT_CSS = """
    PositionsScreen .pos-row { height: 1; padding: 0 1; margin-top: 1; }
    PositionsScreen .pos-row Label { width: auto; margin-right: 1; }
    PositionsScreen #pos-base { width: 18; margin-right: 2; }
    PositionsScreen #pos-prompt { width: 1fr; }
    PositionsScreen #pos-model { height: auto; padding: 0 1; margin-top: 1; }
    PositionsScreen #pos-tabs { height: 1fr; }
    PositionsScreen TabPane { padding: 0 1; }
    PositionsScreen .pos-note { height: auto; color: $text-muted; }
    PositionsScreen TabPane > PositionPictures { height: 50%; }
    PositionsScreen #pos-rope-pictures { height: 45%; }
    PositionsScreen TabPane > HeatmapGrid { height: 1fr; }
    PositionsScreen.-small TabPane > PositionPictures { display: none; }
    """

    def __init__(self, gpt: GPT, prompt: str, lang: str) -> None:
        super().__init__(gpt=gpt, prompt=prompt, lang=lang)
        localize_bindings(self, KEY_WORDS, lang)
        self.trained_base = float(gpt.config.pos_base)
        self.base = self.trained_base
        self.uses_base = gpt.config.positional in ("sinusoidal", "rope")
        self.guesses: Guesses | None = None
        self.passes: PassRunner[Guesses] = PassRunner(self, "positions-model", self.guesses_ready, self.pass_failed)

    def words(self, key: str, **values: object) -> str:
        return pick(WORDS, key, self.lang, **values)

    def compose_body(self) -> ComposeResult:
        with Horizontal(classes="pos-row"):
            yield Label(self.words("base"))
            yield BaseInput(
                base_text(self.base), placeholder=self.words("base_placeholder"), id="pos-base", compact=True
            )
            yield Label(self.words("prompt"))
            yield Input(self.prompt, placeholder=self.words("prompt_placeholder"), id="pos-prompt", compact=True)
        yield LiveStatic(id="pos-model")
        with TabbedContent(id="pos-tabs"):
            with TabPane(self.words("tab_table"), id="pos-table-tab"):
                yield Static(classes="pos-note", id="pos-table-note")
                yield PositionPictures({"map", "waves"}, note=False, id="pos-table-pictures")
                yield HeatmapGrid(label_width=9, id="pos-table")
            with TabPane(self.words("tab_similarity"), id="pos-similarity-tab"):
                yield Static(classes="pos-note", id="pos-similarity-note")
                yield PositionPictures({"dots"}, id="pos-similarity-pictures")
                yield HeatmapGrid(label_width=7, id="pos-similarity")
            with TabPane(self.words("tab_rope"), id="pos-rope-tab"):
                yield Static(classes="pos-note", id="pos-rope-note")
                yield PositionPictures({"dials"}, id="pos-rope-pictures")
                yield HeatmapGrid(label_width=9, id="pos-rope")

    def on_mount(self) -> None:
        localize_bindings(self.query_one(BaseInput), KEY_WORDS, self.lang)
        for field in self.query(Input):
            field.cursor_blink = False
        self.query_one("#pos-base", Input).focus()
        self.show_tables()
        self.refresh_model()

    def on_resize(self) -> None:
        self.set_class(self.size.height < PICTURES_MIN_HEIGHT, "-small")

    # -- sizes --------------------------------------------------------------------------------

    @property
    def n_positions(self) -> int:
        return min(self.gpt.config.n_ctx, MAX_POSITIONS)

    @property
    def table_width(self) -> int:
        """The width of the table the model adds or rotates with: d_model, or d_head for RoPE."""
        cfg = self.gpt.config
        return cfg.d_head if cfg.positional == "rope" else cfg.d_model

    @property
    def rope_omegas(self) -> tuple[float, ...]:
        """RoPE's frequencies ωᵢ at the base typed, scaled as the model scales them (`rope_scaling`)."""
        cfg = replace(self.gpt.config, positional="rope", pos_base=self.base)
        return tuple(map(float, model_rope_frequencies(cfg)))

    @property
    def prompt_positions(self) -> int:
        """How many positions the prompt takes: their rows are highlighted."""
        return len(self.gpt.prompt_tokens(self.prompt)[0]) if self.prompt else 0

    # -- the tables ---------------------------------------------------------------------------

    def show_tables(self) -> None:
        n, d = self.n_positions, self.table_width
        table = sinusoidal_positions(n, d, self.base)
        self._show_table(table)
        self._show_similarity(table)
        if self.gpt.config.rope_scaling == "none":
            self._show_rope(sinusoidal_positions(n, self.gpt.config.d_head, self.base))
        else:  # a scaled model (Llama 3): its own frequencies, from the base typed
            self._show_rope(angle_table(n, np.asarray(self.rope_omegas)))
        self.show_pictures()

    def show_pictures(self) -> None:
        """The tables as pictures, for the base typed: each is redrawn only when its inputs changed."""
        n, d = self.n_positions, self.table_width
        marked = range(min(self.prompt_positions, n))
        for name in ("table", "similarity"):
            pictures = self.query_one(f"#pos-{name}-pictures", PositionPictures)
            reference = self.trained_base if self.uses_base and name == "similarity" else None
            pictures.show_sinusoidal(n, d, self.base, self.lang, marked=marked, reference=reference)
        p = max(1, min(self.prompt_positions, n) - 1)  # the prompt's last token, turned against the first's
        self.query_one("#pos-rope-pictures", PositionPictures).show_rope(self.rope_omegas, p, 0, self.lang)

    def _show_table(self, table: np.ndarray) -> None:
        n, d = table.shape
        last_rate = 1.0 / self.base ** (2 * ((d - 1) // 2) / d)  # pair i turns 1/base^(2i/d) rad per position
        self.query_one("#pos-table-note", Static).update(
            self.words("table_note", d=d, first=_turn(1.0), last_rate=f"{last_rate:.3g}", last=_turn(last_rate))
        )
        used = self.prompt_positions
        rows = [GridRow(self.words("row_pos", p=p), table[p].astype(np.float64), p < used) for p in range(n)]
        self.query_one("#pos-table", HeatmapGrid).set_rows(rows, [str(j) for j in range(d)], scale=1.0)

    def _show_similarity(self, table: np.ndarray) -> None:
        pe = table.astype(np.float64)
        similarity = pe @ pe.T
        n = len(pe)
        row = similarity[0]  # every row is this one shifted: the distance is all that counts
        alike = most_alike([float(value) for value in row])  # the largest dot product at distance ≥ 4, as shown
        found = alike.key != "alike_none"
        self.query_one("#pos-similarity-note", Static).update(
            self.words(
                "similarity_note",
                self_dot=f"{row[0]:.2f}",
                neighbours=f"{row[1]:.2f}" if n > 1 else "—",
                far=n - 1,
                farthest=f"{row[n - 1]:.2f}",
                k=", ".join(map(str, alike.values["ks"])) if found else "—",
                best=f"{alike.values['best']:.2f}" if found else "—",
                each=self.words("each") if alike.key == "alike_tied" else "",
            )
        )
        used = self.prompt_positions
        rows = [GridRow(self.words("row_p", p=p), similarity[p], p < used) for p in range(n)]
        scale = float(np.abs(similarity).max()) or 1.0
        self.query_one("#pos-similarity", HeatmapGrid).set_rows(rows, [str(q) for q in range(n)], scale=scale)

    def _show_rope(self, table: np.ndarray) -> None:
        angles = rope_angles(table)
        note = self.words("rope_half_note" if self.gpt.config.rope_style == "half" else "rope_note", d=table.shape[1])
        sentences = (note, rope_scaling_note(self.gpt.config, self.lang))
        self.query_one("#pos-rope-note", Static).update(t("sentence_gap", self.lang).join(filter(None, sentences)))
        used = self.prompt_positions
        rows = [GridRow(self.words("row_pos", p=p), angles[p], p < used) for p in range(len(angles))]
        self.query_one("#pos-rope", HeatmapGrid).set_rows(
            rows,
            [f"i={i}" for i in range(angles.shape[1])],
            scale=2 * math.pi,
            style_for=lambda value, scale: sequential_style(value / scale),
        )

    # -- the base and the prompt --------------------------------------------------------------

    def set_base(self, base: float) -> None:
        self.base = base
        field = self.query_one("#pos-base", Input)
        if parse_base(field.value) != base:
            with self.prevent(Input.Changed):
                field.value = base_text(base)
        self.show_tables()
        self.refresh_model()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "pos-prompt":
            self.prompt = event.value
            self.show_tables()  # the prompt's rows are highlighted
            self.refresh_model()
            return
        base = parse_base(event.value)
        if base is not None and base != self.base:
            self.set_base(base)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "pos-base":
            return
        base = parse_base(event.value)
        if base is None:
            self.notify(self.words("bad_base", text=event.value.strip()), severity="warning")
            return
        self.set_base(base)

    def action_next_preset(self) -> None:
        """The first of PRESETS above the base shown (after the largest, the smallest)."""
        self.set_base(next((base for base in PRESETS if base > self.base), PRESETS[0]))

    def action_scale_base(self, factor: float) -> None:
        base = float(f"{self.base * factor:.6g}")  # 10000 ÷ 10 stays 1000, not 999.9999999999999
        if math.isfinite(base) and base > 0:
            self.set_base(base)

    def action_next_tab(self) -> None:
        tabs = self.query_one("#pos-tabs", TabbedContent)
        panes = ["pos-table-tab", "pos-similarity-tab", "pos-rope-tab"]
        tabs.active = panes[(panes.index(tabs.active) + 1) % len(panes)]

    # -- the live model -----------------------------------------------------------------------

    def refresh_model(self) -> None:
        self._show_model()
        if self.prompt and self.uses_base:
            self.rerun(self.prompt, self.base)

    def rerun(self, prompt: str, base: float) -> None:
        self.passes.run(lambda stop: self.guesses_for(prompt, base, stop))

    def guesses_for(self, prompt: str, base: float, stop: Stop) -> Guesses:
        trained = self.gpt.run(prompt, stop=stop)
        changed = self.gpt.with_config(pos_base=base).run(prompt, stop=stop) if base != self.trained_base else trained
        position = len(trained.tokens) - 1
        return Guesses(
            prompt,
            base,
            position,
            trained.pieces[position] if position >= 0 else "",
            trained.dropped,
            trained.top_k(TOP_K),
            changed.top_k(TOP_K),
        )

    def guesses_ready(self, message: Guesses) -> None:
        if message.prompt == self.prompt and message.base == self.base:
            self.guesses = message
            self._show_model()

    def _show_model(self) -> None:
        cfg, name = self.gpt.config, self.gpt.name
        positions = pick(model_words.WORDS, f"pos_{cfg.positional}", self.lang)  # "sinusoidal" read as words
        lines: list[Text | Table] = []
        if not self.uses_base:
            lines.append(Text(self.words("unused", model=name, positions=positions)))
        else:
            lines.append(
                Text(
                    self.words(
                        "model_line",
                        model=name,
                        positions=positions,
                        trained=base_text(self.trained_base),
                        base=base_text(self.base),
                    )
                )
            )
            if self.base != self.trained_base:
                lines.append(Text(self.words("off_training"), style="bold reverse"))
            else:
                lines.append(Text(self.words("on_training"), style="dim"))
            if not self.prompt:
                lines.append(Text(self.words("empty_prompt"), style="dim"))
            elif self.guesses is not None and self.guesses.prompt == self.prompt and self.guesses.base == self.base:
                lines.append(self._guess_table(self.guesses))
                if self.guesses.dropped:
                    lines.append(Text(self.words("dropped", n=self.guesses.dropped), style="dim"))
        shape = (len(lines), self.guesses is not None)
        self.query_one("#pos-model", LiveStatic).show_content(_stack(lines), shape)

    def _guess_table(self, guesses: Guesses) -> Table:
        same = guesses.trained[:1] and guesses.changed[:1] and guesses.trained[0][0] == guesses.changed[0][0]
        table = Table(box=None, padding=(0, 2), show_edge=False, header_style="bold")
        table.add_column(self.words("guess_header", token=visible_piece(guesses.token), pos=guesses.position))
        table.add_column(self.words("trained_column", base=base_text(self.trained_base)))
        changed_header = self.words("changed_column", base=base_text(guesses.base))
        if guesses.base == self.trained_base:
            changed_header = self.words("trained_column", base=base_text(guesses.base))
        table.add_column(changed_header)
        shown = TOP_K if self.size.height >= 32 else 3  # small windows keep their rows for the tables
        for rank, (trained, changed) in enumerate(zip(guesses.trained[:shown], guesses.changed[:shown], strict=True)):
            note = ""
            if rank == 0:
                note = self.words("same_top" if same else "changed_top")
            table.add_row(note, _guess(trained), _guess(changed))
        return table


def _guess(guess: tuple[int, str, float]) -> str:
    _, piece, prob = guess
    return f"{visible_piece(piece)} {prob:6.1%}"


def _turn(rate: float) -> str:
    """Positions per full turn at `rate` radians a position."""
    return f"{2 * math.pi / rate:.3g}" if rate > 0 else "∞"


def _stack(lines: list[Text | Table]) -> Table:
    grid = Table.grid()
    grid.add_column()
    for line in lines:
        grid.add_row(line)
    return grid
