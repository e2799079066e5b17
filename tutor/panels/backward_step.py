"""One step of the backward pass in numbers: the loss it starts from, and what the step does to ∂L/∂x.

Every number is read from the trace's recorded gradients (`gpt.run(prompt, grads=True)`): the
prompt's loss and each position's, ‖∂L/∂y‖ where the gradient enters the step and ‖∂L/∂x‖ where it
leaves, the two paths of a residual add, ∂L/∂γ and ∂L/∂β at a LayerNorm, ∂L/∂θ of a sublayer.
"""

from __future__ import annotations

import numpy as np
from rich.text import Text

from model import Step, Trace
from tutor.i18n import pick
from tutor.number_style import grad_text, top_dims_text, visible_piece
from tutor.panels.token_strip import wrap_chips
from tutor.sentences import Sentence, residual_sum
from tutor.text_table import Column, text_table
from tutor.view import View
from tutor.widgets.live_static import laid_out_width
from tutor.widgets.text_lines import TextLines

ROWS = 10  # token rows at most: a window around the cursor in a long prompt

WORDS: dict[str, tuple[str, str]] = {  # key: (en, zh)
    "needs_two": (
        "Backwards needs a loss, and a loss needs at least 2 tokens (each position is scored on the next one).",
        "反向传播要从损失出发，而损失至少要 2 个词元（每个位置都拿下一个词元来打分）。",
    ),
    "loss": (
        "L = {loss:.3f}: the mean of {n} position losses −ln p(next token)",
        "L = {loss:.3f}：{n} 个位置损失 −ln p(下一个词元) 的平均",
    ),
    "last_free": ("{pos} {piece}: no next token, no loss", "{pos} {piece}：没有下一个词元，不计损失"),
    "token": ("token", "词元"),
    "target": ("target", "目标"),
    "p_target": ("p(target)", "p(目标)"),
    "own_loss": ("loss", "损失"),
    "unembed_note": (
        "The last position has no target: its ∂L/∂logits is 0, and no gradient starts there.",
        "最后一个位置没有目标：它的 ∂L/∂logits 是 0，梯度不从这里出发。",
    ),
    "identity": ("identity ‖∂L/∂y‖", "恒等路径 ‖∂L/∂y‖"),
    "through_f": ("through F", "经过 F"),
    "sum": ("sum ‖∂L/∂x‖", "相加 ‖∂L/∂x‖"),
    "cos": ("cos", "cos"),
    "residual_note": (
        "∂y/∂x = 1 + ∂F/∂x: the identity path hands ∂L/∂y down unchanged. The sum is smaller than the identity "
        "path alone only where cos < −‖through F‖ ÷ (2‖identity‖): the path through F must point against it, "
        "and by more the longer it is.",
        "∂y/∂x = 1 + ∂F/∂x：恒等路径把 ∂L/∂y 原样传下去。只有当 cos < −‖经过 F‖ ÷ (2‖恒等‖) 时，相加的结果"
        "才比恒等路径本身小：经过 F 的那条路径得和它方向相反，而且它越长，要反得越厉害。",
    ),
    "residual_larger": (
        "[{token}]: sum ÷ identity = {ratio:.2f}, larger{because}.",
        "[{token}]：相加 ÷ 恒等 = {ratio:.2f}，变大了{because}。",
    ),
    "residual_smaller": (
        "[{token}]: sum ÷ identity = {ratio:.2f}, smaller{because}.",
        "[{token}]：相加 ÷ 恒等 = {ratio:.2f}，变小了{because}。",
    ),
    "residual_same": ("[{token}]: sum ÷ identity = {ratio:.2f}.", "[{token}]：相加 ÷ 恒等 = {ratio:.2f}。"),
    "residual_no_identity": (
        "[{token}]: no gradient comes down the identity path here.",
        "[{token}]：这里没有梯度沿恒等路径传下来。",
    ),
    "residual_above": (
        ": cos {cos:+.2f} is above −‖through F‖ ÷ (2‖identity‖) = {threshold:+.2f}",
        "（cos {cos:+.2f} 高于 −‖经过 F‖ ÷ (2‖恒等‖) = {threshold:+.2f}）",
    ),
    "residual_below": (
        ": cos {cos:+.2f} is below −‖through F‖ ÷ (2‖identity‖) = {threshold:+.2f}",
        "（cos {cos:+.2f} 低于 −‖经过 F‖ ÷ (2‖恒等‖) = {threshold:+.2f}）",
    ),
    "enters": ("‖∂L/∂y‖ in", "传入 ‖∂L/∂y‖"),
    "leaves": ("‖∂L/∂x‖ out", "传出 ‖∂L/∂x‖"),
    "ratio": ("out ÷ in", "传出 ÷ 传入"),
    "no_residual": (
        "No residual add in this model: the stream's gradient has no path but through the sublayer.",
        "这个模型没有残差相加：流上的梯度只能穿过子层。",
    ),
    "params": ("∂L/∂θ of this sublayer: {norms}", "这个子层的 ∂L/∂θ：{norms}"),
    "gamma": ("‖∂L/∂γ‖ {norm} · largest: {dims}", "‖∂L/∂γ‖ {norm} · 最大的分量：{dims}"),
    "beta": ("‖∂L/∂β‖ {norm} · largest: {dims}", "‖∂L/∂β‖ {norm} · 最大的分量：{dims}"),
    "gamma_note": (
        "γ and β are learned by gradient descent: a training step moves them by −lr·∂L/∂γ and −lr·∂L/∂β.",
        "γ 和 β 是靠梯度下降学出来的：训练的每一步把它们移动 −lr·∂L/∂γ 和 −lr·∂L/∂β。",
    ),
    "gamma_note_rms": (
        "γ is learned by gradient descent: a training step moves it by −lr·∂L/∂γ. RMSNorm has no β.",
        "γ 是靠梯度下降学出来的：训练的每一步把它移动 −lr·∂L/∂γ。RMSNorm 没有 β。",
    ),
    "embed_grad": ("‖∂L/∂x₀‖ = to W_E[token]", "‖∂L/∂x₀‖ = 给 W_E[词元]"),
    "embed_note": (
        "Each position hands its ∂L/∂x₀ to its token's row of W_E (a token that appears twice gets the sum). "
        "W_E also scores the logits: its whole gradient adds the unembedding's share, ‖∂L/∂W_E‖ = {norm}.",
        "每个位置把自己的 ∂L/∂x₀ 交给它那个词元在 W_E 里的一行（出现两次的词元得到两者之和）。"
        "W_E 还用来给 logits 打分：它的整个梯度再加上反嵌入那一份，‖∂L/∂W_E‖ = {norm}。",
    ),
    "more": ("… {n} more tokens (alt+←→ moves the cursor)", "……还有 {n} 个词元（alt+←→ 移动光标）"),
}


def norms(values: np.ndarray) -> np.ndarray:
    """‖v‖ of every row (every token), in float64."""
    return np.linalg.norm(values.astype(np.float64), axis=-1)


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """cos(a_t, b_t) for every token t; 0 where either is 0."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    size = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    return np.where(size > 0, (a * b).sum(-1) / np.where(size > 0, size, 1.0), 0.0)


def residual_sentence(trace: Trace, step: Step, token: int, lang: str) -> tuple[Sentence, str]:
    """What the residual add at `step` does to `token`'s gradient, as `tutor.sentences.residual_sum` reads the
    same norms and cosine the table shows; the sentence and its words."""
    paths = trace.residual_paths(step)
    identity, through_f, total = (path[token][None] for path in paths)
    cos = float(cosines(identity, through_f)[0])
    sentence = residual_sum(float(norms(identity)[0]), float(norms(through_f)[0]), float(norms(total)[0]), cos)
    values = dict(sentence.values)
    because = ""
    if values.pop("compared", False):
        side = "residual_above" if sentence.key == "residual_larger" else "residual_below"
        because = pick(WORDS, side, lang, cos=values["cos"], threshold=values["threshold"])
    piece = f"{token} {visible_piece(trace.pieces[token])}"
    return sentence, pick(WORDS, sentence.key, lang, token=piece, because=because, **values)


def token_window(n: int, cursor: int, rows: int = ROWS) -> range:
    """At most `rows` positions, the cursor among them."""
    first = min(max(0, cursor - rows // 2), max(0, n - rows))
    return range(first, min(n, first + rows))


def sublayer_params(trace: Trace, step: Step) -> dict[str, float]:
    """‖∂L/∂θ‖ of the step's own parameters ("w_qkv": 0.12, …), by their short names."""
    prefix = step.name + "."
    return {
        name.removeprefix(prefix): float(np.linalg.norm(g.astype(np.float64)))
        for name, g in trace.param_grads.items()
        if name.startswith(prefix)
    }


class BackwardStep(TextLines):
    """Drawn a line at a time: a step key repaints the lines that changed (the loss lines above stay)."""

    DEFAULT_CSS = "BackwardStep { margin: 0 1; }"
    MARGIN = 2  # cells left and right
    _height_for: tuple[object, ...] = ()
    _tallest = 0

    @property
    def available_width(self) -> int:
        """Cells for the lines; a hidden tab (drawn before it is laid out) measures by its nearest laid-out ancestor."""
        return self.size.width or laid_out_width(self, self.MARGIN)

    def show(self, view: View) -> None:
        trace, lang = view.trace, view.lang
        if not trace.has_grads:
            self._height_for = ()
            self.set_lines([Text(pick(WORDS, "needs_two", lang), style="italic")])
            return
        lines = self.loss_lines(view)
        kind = view.step.kind
        if kind == "unembed":
            lines += self.unembed_lines(view)
        elif kind == "residual":
            lines += self.residual_lines(view)
        elif kind == "embed":
            lines += self.embed_lines(view)
        else:
            lines += self.through_lines(view)
        window = token_window(view.n_tokens, view.token)
        if view.n_tokens > len(window):
            lines.append(Text(pick(WORDS, "more", lang, n=view.n_tokens - len(window)), style="dim"))
        self.set_lines(self.steady(lines, view))

    def steady(self, lines: list[Text], view: View) -> list[Text]:
        """`lines` padded to the tallest this panel has been for this prompt, width and language: the chart below
        keeps its place from step to step (and a key that changes the kind of step costs no new layout)."""
        width = self.available_width
        height = sum(len(line.wrap(self.app.console, width)) for line in lines) if width else len(lines)
        key = (width, view.n_tokens, view.lang, view.gpt.name)
        if key != self._height_for:
            self._height_for, self._tallest = key, 0
        self._tallest = max(self._tallest, height)
        return lines + [Text() for _ in range(self._tallest - height)]

    # -- the loss, at the top of every step ---------------------------------------------------------

    def loss_lines(self, view: View) -> list[Text]:
        trace, lang = view.trace, view.lang
        assert trace.losses is not None and trace.loss is not None
        head = Text(pick(WORDS, "loss", lang, loss=trace.loss, n=len(trace.losses)), style="bold")
        parts: list[Text] = []
        for pos in range(view.n_tokens):
            piece = visible_piece(trace.pieces[pos])
            if pos < len(trace.losses):
                part = f"{pos} {piece}→{visible_piece(trace.pieces[pos + 1])} {float(trace.losses[pos]):.2f}"
            else:
                part = pick(WORDS, "last_free", lang, pos=pos, piece=piece)
            chip = Text()
            chip.append(part, style="reverse" if pos == view.token else "")
            if pos < view.n_tokens - 1:
                chip.append(" · ", style="dim")
            parts.append(chip)
        # wrapped between the tokens' parts, never inside one ("5" at a line's end, "␣→6 2.69" on the next)
        width = self.available_width
        lines = wrap_chips(parts, width) if width > 0 else [parts]
        return [head, *(Text("").join(line) for line in lines), Text()]

    def token_label(self, view: View, pos: int) -> Text:
        """The row's token; the cursor's lit (its numbers in bold: a lit number would lose its alignment)."""
        return Text(f"{pos} {visible_piece(view.trace.pieces[pos])}", style="reverse bold" if pos == view.token else "")

    def rows_style(self, view: View, pos: int) -> str:
        return "bold" if pos == view.token else ""

    # -- by kind of step ---------------------------------------------------------------------------

    def unembed_lines(self, view: View) -> list[Text]:
        trace, lang, step = view.trace, view.lang, view.step
        d_logits = norms(trace["logits_grad"])
        leaves = norms(trace[step.in_hook + "_grad"])
        columns = [
            Column(pick(WORDS, "token", lang), max_width=12),
            Column(pick(WORDS, "target", lang), max_width=8),
            Column(pick(WORDS, "p_target", lang), justify="right"),
            Column(pick(WORDS, "own_loss", lang), justify="right"),
            Column("‖∂L/∂logits‖", justify="right"),
            Column(pick(WORDS, "leaves", lang), justify="right"),
        ]
        rows = []
        assert trace.losses is not None
        for pos in token_window(view.n_tokens, view.token):
            style = self.rows_style(view, pos)
            if pos < len(trace.losses):
                loss = float(trace.losses[pos])
                target = visible_piece(trace.pieces[pos + 1])
                cells = [target, f"{np.exp(-loss):.3f}", f"{loss:.3f}"]
            else:
                cells = ["—", "—", "—"]
            rows.append(
                [
                    self.token_label(view, pos),
                    *(Text(c, style=style) for c in cells),
                    Text(grad_text(d_logits[pos]), style=style),
                    Text(grad_text(leaves[pos]), style=style),
                ]
            )
        return [*text_table(columns, rows), Text(pick(WORDS, "unembed_note", lang), style="dim")]

    def residual_lines(self, view: View) -> list[Text]:
        trace, lang, step = view.trace, view.lang, view.step
        identity, through_f, total = trace.residual_paths(step)
        sizes = norms(identity), norms(through_f), norms(total)
        cos = cosines(identity, through_f)
        columns = [
            Column(pick(WORDS, "token", lang), max_width=12),
            Column(pick(WORDS, "identity", lang), justify="right"),
            Column(pick(WORDS, "through_f", lang), justify="right"),
            Column(pick(WORDS, "sum", lang), justify="right"),
            Column(pick(WORDS, "cos", lang), justify="right"),
        ]
        rows = [
            [
                self.token_label(view, pos),
                *(Text(grad_text(size[pos]), style=self.rows_style(view, pos)) for size in sizes),
                Text(f"{cos[pos]:+.2f}", style=self.rows_style(view, pos)),
            ]
            for pos in token_window(view.n_tokens, view.token)
        ]
        _sentence, said = residual_sentence(trace, step, view.token, lang)
        return [*text_table(columns, rows), Text(pick(WORDS, "residual_note", lang), style="dim"), Text(said)]

    def through_lines(self, view: View) -> list[Text]:
        """A LayerNorm, attention or MLP: the gradient in and out, and the step's own ∂L/∂θ."""
        trace, lang, step = view.trace, view.lang, view.step
        enters, leaves = norms(trace[step.out_hook + "_grad"]), norms(trace[step.in_hook + "_grad"])
        columns = [
            Column(pick(WORDS, "token", lang), max_width=12),
            Column(pick(WORDS, "enters", lang), justify="right"),
            Column(pick(WORDS, "leaves", lang), justify="right"),
            Column(pick(WORDS, "ratio", lang), justify="right"),
        ]
        rows = []
        for pos in token_window(view.n_tokens, view.token):
            style = self.rows_style(view, pos)
            ratio = grad_text(leaves[pos] / enters[pos]) if enters[pos] > 0 else "—"
            rows.append(
                [
                    self.token_label(view, pos),
                    Text(grad_text(enters[pos]), style=style),
                    Text(grad_text(leaves[pos]), style=style),
                    Text(ratio, style=style),
                ]
            )
        lines = text_table(columns, rows)
        if step.kind == "norm" and step.name + ".g" in trace.param_grads:
            learned = [("gamma", "g", "‖∂L/∂γ‖"), ("beta", "b", "‖∂L/∂β‖")]
            rms = step.name + ".b" not in trace.param_grads  # RMSNorm: γ alone, no β
            for key, leaf, name in learned[:1] if rms else learned:
                grad = trace.param_grads[f"{step.name}.{leaf}"]
                norm = grad_text(float(np.linalg.norm(grad.astype(np.float64))))
                dims = top_dims_text(grad, lang, of=name)
                lines.append(Text(pick(WORDS, key, lang, norm=norm, dims=dims), style="bold"))
            lines.append(Text(pick(WORDS, "gamma_note_rms" if rms else "gamma_note", lang), style="dim"))
        elif step.kind in ("attention", "mlp"):
            params = sublayer_params(trace, step)
            text = " · ".join(f"{name} {grad_text(value)}" for name, value in params.items())
            lines.append(Text(pick(WORDS, "params", lang, norms=text), style="bold"))
        if not view.gpt.config.residual and step.kind in ("attention", "mlp"):
            lines.append(Text(pick(WORDS, "no_residual", lang), style="dim"))
        return lines

    def embed_lines(self, view: View) -> list[Text]:
        trace, lang, step = view.trace, view.lang, view.step
        to_rows = norms(trace[step.out_hook + "_grad"])
        columns = [
            Column(pick(WORDS, "token", lang), max_width=12),
            Column(pick(WORDS, "embed_grad", lang), justify="right"),
        ]
        rows = [
            [self.token_label(view, pos), Text(grad_text(to_rows[pos]), style=self.rows_style(view, pos))]
            for pos in token_window(view.n_tokens, view.token)
        ]
        whole = grad_text(float(np.linalg.norm(trace.param_grads["wte"].astype(np.float64))))
        return [*text_table(columns, rows), Text(pick(WORDS, "embed_note", lang, norm=whole), style="dim")]
