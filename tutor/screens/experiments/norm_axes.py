"""LayerNorm and BatchNorm on the same [tokens × d_model] matrix: the stream one of the model's norms reads.

LayerNorm normalises each row (one token, over its d numbers); BatchNorm each column (one feature, over the
prompt's tokens: the batch a language model would have). When the prompt changes, the rows before the first
changed token read the same tokens as before: LayerNorm's stay as they were, BatchNorm's move, because each
column's μ and σ take in the later tokens. What the screen says about it is written by `describe`, from the
numbers alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, Label, Static

from model import GPT, Step, Trace, batch_norm, layer_norm
from tutor.i18n import pick
from tutor.number_style import visible_piece
from tutor.panels.step_vectors_panel import dims, ln_prefix
from tutor.runner import PassRunner, failure_words
from tutor.step_words import step_label
from tutor.widgets.heatmap import GridRow, HeatmapGrid

UNCHANGED = 5e-4  # max |Δ| below this shows as 0.000: float rounding (a longer matrix product), not a change
LISTED = 4  # up to this many moved rows are named one by one; more are summed up by the largest and smallest


def delta_text(value: float) -> str:
    """A change as the screen writes it, in the labels and in the sentences alike."""
    return f"{value:.3f}"


WORDS: dict[str, tuple[str, str]] = {
    "prompt": ("Prompt", "提示词"),
    "source": (
        "x: {t} tokens × {d} numbers entering {step} ({hook}); γ, β: that norm's; ε = {eps}; float64.",
        "x：进入 {step} 的 {t} 个词元 × {d} 个数（{hook}）；γ、β 用这一层自己的；ε = {eps}；float64。",
    ),
    "source_one": (
        "x: 1 token × {d} numbers entering {step} ({hook}); γ, β: that norm's; ε = {eps}; float64.",
        "x：进入 {step} 的 1 个词元 × {d} 个数（{hook}）；γ、β 用这一层自己的；ε = {eps}；float64。",
    ),
    "source_rms": (
        "x: {t} tokens × {d} numbers entering {step} ({hook}); γ: that norm's, β = 0 (an RMSNorm has none); "
        "ε = {eps}; float64.",
        "x：进入 {step} 的 {t} 个词元 × {d} 个数（{hook}）；γ 用这一层自己的，β = 0（RMSNorm 没有 β）；"
        "ε = {eps}；float64。",
    ),
    "source_one_rms": (
        "x: 1 token × {d} numbers entering {step} ({hook}); γ: that norm's, β = 0 (an RMSNorm has none); "
        "ε = {eps}; float64.",
        "x：进入 {step} 的 1 个词元 × {d} 个数（{hook}）；γ 用这一层自己的，β = 0（RMSNorm 没有 β）；"
        "ε = {eps}；float64。",
    ),
    "layer_title": ("LayerNorm: by row, over {d} numbers", "LayerNorm：按行，每行 {d} 个数"),
    "batch_title": ("BatchNorm: by column, over {t} tokens", "BatchNorm：按列，每列 {t} 个词元"),
    "batch_title_one": ("BatchNorm: by column, over 1 token", "BatchNorm：按列，每列只有 1 个词元"),
    "changes": (
        "alt+↑↓ changes token {pos} “{piece}” to the model's next guess there, alt+←→ picks another token; "
        "or edit the prompt.",
        "alt+↑↓ 把第 {pos} 个词元“{piece}”换成模型在这里的下一个猜测，alt+←→ 换一个位置；也可以直接改提示词。",
    ),
    "changes_first": (
        "alt+↑↓ changes token 0 “{piece}” to the next in the vocabulary (nothing predicts token 0), alt+←→ picks "
        "another token; or edit the prompt.",
        "alt+↑↓ 把第 0 个词元“{piece}”换成词表里的下一个（它前面没有词元，模型无从猜测），alt+←→ 换一个位置；"
        "也可以直接改提示词。",
    ),
    "empty": ("Type a prompt: its tokens are the rows.", "请输入提示词：它的每个词元就是一行。"),
    "no_norm": (
        "{model} has no LayerNorm: there is no stream a norm reads.",
        "{model} 没有 LayerNorm，取不到归一化层的输入。",
    ),
    "start": (
        "Change a later token (alt+↑↓, or type at the end) and watch the rows before it: "
        "LayerNorm's stay, BatchNorm's move.",
        "改动后面的一个词元（alt+↑↓，或在末尾接着输入），看它前面的那些行：LayerNorm 的不动，BatchNorm 的会动。",
    ),
    # what the edit was
    "replaced": ("Token {pos} changed: “{old}” → “{new}”.", "第 {pos} 个词元变了：“{old}” → “{new}”。"),
    "replaced_many": (
        "Tokens from {pos} on changed: “{old}” → “{new}”.",
        "从第 {pos} 个词元起变了：“{old}” → “{new}”。",
    ),
    "added": ("Token {pos} “{new}” added at the end.", "末尾加了第 {pos} 个词元“{new}”。"),
    "added_many": ("Tokens {pos}–{last} “{new}” added at the end.", "末尾加了第 {pos}–{last} 个词元“{new}”。"),
    "removed": ("Token {pos} “{old}” removed from the end.", "删掉了末尾的第 {pos} 个词元“{old}”。"),
    "removed_many": ("Tokens from {pos} on “{old}” removed.", "删掉了从第 {pos} 个起的词元“{old}”。"),
    "inserted": ("“{new}” inserted at position {pos}.", "在第 {pos} 个位置插入了“{new}”。"),
    "cut": ("“{old}” cut out at position {pos}.", "删掉了第 {pos} 个位置起的“{old}”。"),
    "no_earlier": (
        "Token 0 is the first: there is no earlier row to watch. Change a later one.",
        "第 0 个词元是第一个，它前面没有行可看。请改后面的词元。",
    ),
    # what LayerNorm's earlier rows did
    "layer_same_one": (
        "LayerNorm: row 0 before the change stayed the same (max |Δ| {delta} < {limit}): it uses only its own x.",
        "LayerNorm：改动前的第 0 行没变（max |Δ| {delta} < {limit}）：它只用自己这一行的 x。",
    ),
    "layer_same": (
        "LayerNorm: rows 0–{last} before the change stayed the same (max |Δ| {delta} < {limit}): each row uses "
        "only its own x.",
        "LayerNorm：改动前的第 0–{last} 行都没变（max |Δ| {delta} < {limit}）：每一行只用自己那一行的 x。",
    ),
    "layer_moved": (
        "LayerNorm: {rows} — the stream x itself moved there ({x}): in this model those positions see later tokens.",
        "LayerNorm：{rows}——那里的输入 x 本身就变了（{x}）：这个模型里这些位置看得见后面的词元。",
    ),
    # what BatchNorm's earlier rows did
    "batch_moved": (
        "BatchNorm: {rows}, though {x_same}: each column's μ and σ took in the later token. Row t depends on "
        "tokens after t: in a causal model, a leak of the future.",
        "BatchNorm：{rows}，可是{x_same}：每一列的 μ、σ 把后面的词元也算了进去。第 t 行依赖 t 之后的词元，"
        "在因果模型里，这就是未来信息的泄露。",
    ),
    "batch_moved_x": (
        "BatchNorm: {rows} (x there moved too: {x}).",
        "BatchNorm：{rows}（那里的 x 也变了：{x}）。",
    ),
    "batch_same": (
        "BatchNorm: rows 0–{last} stayed the same too (max |Δ| {delta} < {limit}).",
        "BatchNorm：第 0–{last} 行也没变（max |Δ| {delta} < {limit}）。",
    ),
    "x_same_one": ("x in row 0 did not change", "第 0 行的 x 没变"),
    "x_same": ("x in rows 0–{last} did not change", "第 0–{last} 行的 x 都没变"),
    # naming moved rows, with their max |Δ| (the first row named says "moved", the next ones only by how much)
    "row_first": ("row {row} moved by {delta}", "第 {row} 行变了 {delta}"),
    "row_next": ("row {row} by {delta}", "第 {row} 行变了 {delta}"),
    "rows_all": (
        "all {n} earlier rows moved (most: row {top}, {top_delta}; least: row {low}, {low_delta})",
        "前面 {n} 行全都变了（最多：第 {top} 行，{top_delta}；最少：第 {low} 行，{low_delta}）",
    ),
    "rows_some": (
        "{n} of the {of} earlier rows moved (most: row {top}, {top_delta}; least: row {low}, {low_delta})",
        "前面 {of} 行里有 {n} 行变了（最多：第 {top} 行，{top_delta}；最少：第 {low} 行，{low_delta}）",
    ),
    # one token
    "one_token": (
        "One token: each column holds one number, so μ = x, σ = 0 and x − μ = 0. BatchNorm's x̂ = 0 / √(0 + ε) = 0 "
        "and its row is β whatever the token (max |y − β| = {delta}); without ε it is 0 / 0, undefined. "
        "LayerNorm still normalises the token over its {d} numbers.",
        "只有一个词元：每一列只有一个数，所以 μ = x，σ = 0，x − μ = 0。BatchNorm 的 x̂ = 0 / √(0 + ε) = 0，"
        "输出这一行就是 β，跟是哪个词元无关（max |y − β| = {delta}）；要是没有 ε，就成了 0 / 0，没有定义。"
        "LayerNorm 照常在这个词元的 {d} 个数上归一化。",
    ),
    "one_token_undefined": (
        "One token: each column holds one number, so σ = 0 and x − μ = 0, and with ε = {eps} BatchNorm's "
        "x̂ = 0 / 0: undefined (nan). LayerNorm still normalises the token over its {d} numbers.",
        "只有一个词元：每一列只有一个数，σ = 0，x − μ = 0；而 ε = {eps}，BatchNorm 的 x̂ = 0 / 0，没有定义（nan）。"
        "LayerNorm 照常在这个词元的 {d} 个数上归一化。",
    ),
    "list_and": (", ", "，"),
    "no_change": ("No token after “{piece}” reads back as itself.", "“{piece}” 之后找不到能原样读回的词元。"),
}


@dataclass(frozen=True)
class BothNorms:
    """One prompt's matrix x (the stream a norm reads) normalised both ways, with that norm's γ and β."""

    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    x: np.ndarray  # [T, d], float64
    layer: np.ndarray  # layer_norm(x): row t from x[t] alone
    batch: np.ndarray  # batch_norm(x): column j from x[:, j], every token
    beta: np.ndarray
    eps: float
    rms: bool = False  # the model's norm is an RMSNorm: γ is its own, β = 0 (it has none)


def norm_steps(gpt: GPT) -> list[Step]:
    return [s for s in gpt.steps if s.kind == "norm"]


def both_norms(gpt: GPT, trace: Trace, step: Step) -> BothNorms:
    """The stream entering `step` in `trace`, through `layer_norm` and `batch_norm` with the step's γ, β."""
    prefix = ln_prefix(step)
    x = trace[step.in_hook].astype(np.float64)
    gamma = gpt.params[prefix + ".g"].astype(np.float64)
    rms = gpt.config.is_rms  # an RMSNorm has no β: both norms here add none
    beta = np.zeros_like(gamma) if rms else gpt.params[prefix + ".b"].astype(np.float64)
    eps = gpt.config.ln_eps
    with np.errstate(all="ignore"):  # one token and ε = 0: 0 / 0 shows as nan, and the words say why
        layer, batch = layer_norm(x, gamma, beta, eps), batch_norm(x, gamma, beta, eps)
    return BothNorms(tuple(trace.tokens), tuple(trace.pieces), x, layer, batch, beta, eps, rms)


@dataclass(frozen=True)
class RowChange:
    """What an edit of the prompt did to the rows before the first changed token (they read the same tokens)."""

    first: int  # the first position whose token differs; rows 0 … first−1 are compared
    old: tuple[str, ...]  # the pieces that differ, from `first` on, before (the tokens both end with left out)
    new: tuple[str, ...]  # and after
    at_end: bool  # nothing follows the edit: tokens were added or removed at the end
    x: np.ndarray  # [first]: max over d of |Δx| per earlier row
    layer: np.ndarray  # [first]: max |Δ| of LayerNorm's row
    batch: np.ndarray  # [first]: max |Δ| of BatchNorm's row


def compare(before: BothNorms, after: BothNorms) -> RowChange | None:
    """The change from `before` to `after` (None when the tokens are the same)."""
    if before.ids == after.ids:
        return None
    first = 0
    while first < min(len(before.ids), len(after.ids)) and before.ids[first] == after.ids[first]:
        first += 1

    same_end = 0  # tokens both prompts end with, after the first difference
    while (
        same_end < min(len(before.ids), len(after.ids)) - first
        and before.ids[-1 - same_end] == after.ids[-1 - same_end]
    ):
        same_end += 1

    def moved(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.abs(a[:first] - b[:first]).max(axis=-1, initial=0.0)

    return RowChange(
        first,
        before.pieces[first : len(before.ids) - same_end],
        after.pieces[first : len(after.ids) - same_end],
        same_end == 0,
        moved(before.x, after.x),
        moved(before.layer, after.layer),
        moved(before.batch, after.batch),
    )


@dataclass(frozen=True)
class Described:
    """Everything on screen that is read off the numbers."""

    source: str
    layer_title: str
    batch_title: str
    layer_labels: list[str]  # one per row: "2 狗", "2 狗 Δ0.412" for a row before the change
    batch_labels: list[str]
    layer_moved: list[int]  # the earlier rows whose change is ≥ UNCHANGED: highlighted
    batch_moved: list[int]
    lines: list[str]  # the sentences under the maps


def _joined(pieces: tuple[str, ...]) -> str:
    return "".join(visible_piece(p) for p in pieces)


def edit_words(change: RowChange, lang: str) -> str:
    pos, old, new = change.first, _joined(change.old), _joined(change.new)
    if not change.old:
        key = ("added" if len(change.new) == 1 else "added_many") if change.at_end else "inserted"
    elif not change.new:
        key = ("removed" if len(change.old) == 1 else "removed_many") if change.at_end else "cut"
    else:
        key = "replaced" if len(change.old) == len(change.new) == 1 else "replaced_many"
    return pick(WORDS, key, lang, pos=pos, last=pos + len(change.new) - 1, old=old, new=new)


def rows_words(deltas: np.ndarray, rows: list[int], lang: str) -> str:
    """The moved `rows` with their sizes: each by name when few, else the count, the largest and the smallest."""
    if len(rows) <= LISTED:
        return pick(WORDS, "list_and", lang).join(
            pick(WORDS, "row_first" if i == 0 else "row_next", lang, row=r, delta=delta_text(float(deltas[r])))
            for i, r in enumerate(rows)
        )
    top = max(rows, key=lambda r: float(deltas[r]))
    low = min(rows, key=lambda r: float(deltas[r]))
    values = dict(
        n=len(rows),
        of=len(deltas),
        top=top,
        top_delta=delta_text(float(deltas[top])),
        low=low,
        low_delta=delta_text(float(deltas[low])),
    )
    return pick(WORDS, "rows_all" if len(rows) == len(deltas) else "rows_some", lang, **values)


def change_lines(change: RowChange, lang: str) -> tuple[list[str], list[int], list[int]]:
    """The sentences about one edit, and the earlier rows each norm moved."""
    lines = [edit_words(change, lang)]
    if change.first == 0:
        return [*lines, pick(WORDS, "no_earlier", lang)], [], []
    limit = f"{UNCHANGED:g}"
    last = change.first - 1
    x_moved = [int(r) for r in np.flatnonzero(~(change.x < UNCHANGED))]
    layer_moved = [int(r) for r in np.flatnonzero(~(change.layer < UNCHANGED))]  # nan counts as moved
    batch_moved = [int(r) for r in np.flatnonzero(~(change.batch < UNCHANGED))]
    x_words = rows_words(change.x, x_moved, lang) if x_moved else ""
    if layer_moved:
        lines.append(pick(WORDS, "layer_moved", lang, rows=rows_words(change.layer, layer_moved, lang), x=x_words))
    else:
        key = "layer_same_one" if last == 0 else "layer_same"
        lines.append(pick(WORDS, key, lang, last=last, delta=delta_text(float(change.layer.max())), limit=limit))
    if not batch_moved:
        delta = delta_text(float(change.batch.max()))
        lines.append(pick(WORDS, "batch_same", lang, last=last, delta=delta, limit=limit))
    elif x_moved:
        lines.append(pick(WORDS, "batch_moved_x", lang, rows=rows_words(change.batch, batch_moved, lang), x=x_words))
    else:
        x_same = pick(WORDS, "x_same_one" if last == 0 else "x_same", lang, last=last)
        rows = rows_words(change.batch, batch_moved, lang)
        lines.append(pick(WORDS, "batch_moved", lang, rows=rows, x_same=x_same))
    return lines, layer_moved, batch_moved


def row_labels(pieces: tuple[str, ...], deltas: np.ndarray | None) -> list[str]:
    """ "2 狗", and for each row before the change how far it moved: "2 狗 Δ0.412" (0.000 for a row that stayed)."""
    labels = []
    for pos, piece in enumerate(pieces):
        label = f"{pos} {visible_piece(piece)}"
        if deltas is not None and pos < len(deltas):
            label += f" Δ{delta_text(float(deltas[pos]))}"
        labels.append(label)
    return labels


def describe(after: BothNorms, change: RowChange | None, step_words: str, hook: str, lang: str) -> Described:
    """Every sentence and label the screen shows about `after` and the edit that led to it."""
    t, d = after.x.shape
    key = ("source_one" if t == 1 else "source") + ("_rms" if after.rms else "")
    source = pick(WORDS, key, lang, step=step_words, hook=hook, t=t, d=d, eps=f"{after.eps:g}")
    layer_title = pick(WORDS, "layer_title", lang, d=d)
    batch_title = pick(WORDS, "batch_title_one", lang) if t == 1 else pick(WORDS, "batch_title", lang, t=t)
    lines: list[str] = []
    layer_moved: list[int] = []
    batch_moved: list[int] = []
    if t == 1:
        with np.errstate(invalid="ignore"):
            off_beta = float(np.abs(after.batch[0] - after.beta).max())
        if off_beta < UNCHANGED:
            lines.append(pick(WORDS, "one_token", lang, delta=delta_text(off_beta), d=d))
        else:  # nan: ε = 0 left 0 / 0
            lines.append(pick(WORDS, "one_token_undefined", lang, eps=f"{after.eps:g}", d=d))
    if change is not None:
        more, layer_moved, batch_moved = change_lines(change, lang)
        lines += more
    elif t > 1:
        lines.append(pick(WORDS, "start", lang))
    return Described(
        source,
        layer_title,
        batch_title,
        row_labels(after.pieces, change.layer if change else None),
        row_labels(after.pieces, change.batch if change else None),
        layer_moved,
        batch_moved,
        lines,
    )


def label_width(labels: list[str]) -> int:
    """Room for the longest label and a gap, within reason (the digits need the rest)."""
    return min(16, max((cell_len(label) for label in labels), default=4) + 1)


def changed_token(gpt: GPT, trace: Trace, pos: int, step: int) -> list[int] | None:
    """The trace's tokens with the one at `pos` replaced by the model's next (`step` = 1) or previous (−1) guess
    for that position, in the order of its probabilities after position pos − 1 (at position 0, which nothing
    predicts, the vocabulary's order); only a token that reads back as itself (a byte piece of a character would
    not). None when there is none."""
    tokenizer, ids = gpt.tokenizer, list(trace.tokens)
    size = tokenizer.vocab_size
    if pos > 0:
        order = [int(i) for i in np.argsort(-trace.next_token_probs(pos - 1), kind="stable")]
    else:
        order = list(range(size))
    at = order.index(ids[pos])
    for k in range(1, size):
        candidate = order[(at + step * k) % size]
        if candidate == tokenizer.end_of_text:
            continue
        changed = [*ids[:pos], candidate, *ids[pos + 1 :]]
        if tokenizer.encode(tokenizer.decode(changed)) == changed:
            return changed
    return None


@dataclass
class TraceReady:
    prompt: str
    trace: Trace | None  # None: an empty prompt


class NormAxesView(Vertical):
    """The prompt, its matrix x through LayerNorm and BatchNorm side by side, and what the last edit did."""

    DEFAULT_CSS = """
    NormAxesView .bn-row { height: 1; padding: 0 1; }
    NormAxesView .bn-row Label { width: auto; margin-right: 1; }
    NormAxesView #bn-prompt { width: 1fr; }
    NormAxesView .bn-line { height: auto; padding: 0 1; }
    NormAxesView #bn-maps { height: auto; max-height: 50%; }
    NormAxesView .bn-side { width: 1fr; height: auto; max-height: 100%; }
    NormAxesView .bn-side:first-of-type { margin-right: 1; }
    NormAxesView .bn-title { height: auto; padding: 0 1; text-style: bold; }
    NormAxesView HeatmapGrid { max-height: 100%; }
    NormAxesView #bn-words { height: 1fr; padding: 0 1; }
    """

    def __init__(self, gpt: GPT, prompt: str, lang: str, id: str | None = None) -> None:
        super().__init__(id=id)
        self.gpt, self.prompt, self.lang = gpt, prompt, lang
        self.norm = 0  # index into norm_steps(gpt)
        self.picked: int | None = None  # the token alt+↑↓ changes; None: the last
        self.trace: Trace | None = None  # shown now
        self.before: Trace | None = None  # shown before the last change of the prompt
        self.described: Described | None = None
        self.passes: PassRunner[TraceReady] = PassRunner(self, "norm-axes", self.trace_ready, self.pass_failed)

    def words(self, key: str, **values: object) -> str:
        return pick(WORDS, key, self.lang, **values)

    def compose(self) -> ComposeResult:
        with Horizontal(classes="bn-row"):
            yield Label(self.words("prompt"))
            yield Input(self.prompt, id="bn-prompt", compact=True)
        yield Static(id="bn-source", classes="bn-line")
        with Horizontal(id="bn-maps"):
            with Vertical(classes="bn-side"):
                yield Static(id="bn-layer-title", classes="bn-title")
                yield HeatmapGrid(id="bn-layer")
            with Vertical(classes="bn-side"):
                yield Static(id="bn-batch-title", classes="bn-title")
                yield HeatmapGrid(id="bn-batch")
        with VerticalScroll(id="bn-words"):
            yield Static(id="bn-lines")

    def on_mount(self) -> None:
        self.query_one("#bn-prompt", Input).cursor_blink = False
        self.recompute()

    # -- passes ---------------------------------------------------------------------------------

    @on(Input.Changed, "#bn-prompt")
    def prompt_changed(self, event: Input.Changed) -> None:
        event.stop()  # the calculator's own fields listen to Input.Changed too
        self.recompute()

    @on(Input.Submitted, "#bn-prompt")
    def prompt_submitted(self, event: Input.Submitted) -> None:
        event.stop()

    def recompute(self) -> None:
        prompt = self.query_one("#bn-prompt", Input).value
        gpt = self.gpt
        ids, _ = gpt.prompt_tokens(prompt)

        def compute(stop: object) -> TraceReady:
            return TraceReady(prompt, gpt.run(ids) if ids else None)

        self.passes.run(compute, inline=self.passes.quick_for(len(ids)), work=len(ids))

    def trace_ready(self, ready: TraceReady) -> None:
        if ready.prompt != self.query_one("#bn-prompt", Input).value:
            return  # typed on since: a newer pass is coming
        if ready.trace is None or self.trace is None or ready.trace.tokens != self.trace.tokens:
            self.before = self.trace
        self.trace = ready.trace
        self.show()

    def pass_failed(self, error: Exception) -> None:
        self.notify(failure_words(error, self.lang), severity="error", markup=False)

    # -- keys (the screen's bindings call these) ------------------------------------------------------

    def next_norm(self, step: int) -> None:
        steps = norm_steps(self.gpt)
        if steps:
            self.norm = (self.norm + step) % len(steps)
            self.show()

    def pick_token(self, step: int) -> None:
        n = len(self.trace.tokens) if self.trace is not None else 0
        if n:
            picked = (self.picked_position() + step) % n
            self.picked = None if picked == n - 1 else picked
            self.show()

    def picked_position(self) -> int:
        n = len(self.trace.tokens) if self.trace is not None else 0
        return n - 1 if self.picked is None else min(self.picked, n - 1)

    def change_token(self, step: int) -> None:
        if self.trace is None:
            self.notify(self.words("empty"), severity="warning")
            return
        pos = self.picked_position()
        changed = changed_token(self.gpt, self.trace, pos, step)
        if changed is None:
            self.notify(self.words("no_change", piece=self.trace.pieces[pos]), severity="warning")
            return
        field = self.query_one("#bn-prompt", Input)
        field.value = self.gpt.tokenizer.decode(changed)  # Input.Changed: a pass, compared with this one

    # -- drawing --------------------------------------------------------------------------------------

    def show(self) -> None:
        steps, trace = norm_steps(self.gpt), self.trace
        lines = self.query_one("#bn-lines", Static)
        maps = self.query_one("#bn-maps")
        if not steps or trace is None:
            maps.display = False
            self.described = None
            self.query_one("#bn-source", Static).update("")
            lines.update(self.words("no_norm", model=self.gpt.name) if not steps else self.words("empty"))
            return
        maps.display = True
        step = steps[self.norm % len(steps)]
        after = both_norms(self.gpt, trace, step)
        change = None
        if self.before is not None:
            change = compare(both_norms(self.gpt, self.before, step), after)
        label = step_label(step, self.lang, self.gpt.config.norm_kind)
        described = describe(after, change, label, step.in_hook, self.lang)
        self.described = described
        pos = self.picked_position()
        source = Text(described.source, style="dim")
        changes = self.words("changes" if pos else "changes_first", pos=pos, piece=visible_piece(trace.pieces[pos]))
        source.append("\n" + changes, style="")
        self.query_one("#bn-source", Static).update(source)
        self.query_one("#bn-layer-title", Static).update(described.layer_title)
        self.query_one("#bn-batch-title", Static).update(described.batch_title)
        finite = [np.abs(m[np.isfinite(m)]).max(initial=0.0) for m in (after.layer, after.batch)]
        scale = float(max(finite)) or 1.0  # one colour scale for both: the same colour is the same number
        columns = dims(after.x.shape[1])
        for grid_id, matrix, labels, moved in (
            ("#bn-layer", after.layer, described.layer_labels, described.layer_moved),
            ("#bn-batch", after.batch, described.batch_labels, described.batch_moved),
        ):
            grid = self.query_one(grid_id, HeatmapGrid)
            grid.label_width = label_width(labels)
            rows = [GridRow(label, matrix[p], highlight=p in moved) for p, label in enumerate(labels)]
            grid.set_rows(rows, columns, scale=scale)
        lines.update("\n".join(described.lines))
