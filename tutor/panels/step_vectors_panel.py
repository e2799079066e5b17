"""The vectors a step reads and writes, for every token, as heatmap rows with digits — at every step.

LayerNorm: x, x̂, y = γ·x̂ + β, and γ, β. Attention: its input and output, and the scaled scores q·k/√d_head
of the selected head. Residual add: x, F(x), x + F(x). MLP: the hidden units before and after GELU.
Unembedding: the final vector, and the rows of W_U = W_E (tied) whose dot products with it are the logits.
The embedding step is the VectorsPanel's (tutor/panels/vectors_panel.py).

The rows are made by the pure functions below from arrays already in the trace; the panel only lays
them out, and sets a grid again only when what it shows has changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from model import GPT, Step, Trace
from tutor.edits import norm_edit
from tutor.i18n import t
from tutor.number_style import fmt, top_dims_text, visible_piece
from tutor.view import View
from tutor.widgets.heatmap import GridRow, HeatmapGrid

TOP_K = 5  # rows of W_U shown at the unembedding


@dataclass(frozen=True)
class Picture:
    """What the panel draws for one view: a note line, the grid of vectors, and (attention) a grid of scores."""

    note: str
    rows: tuple[GridRow, ...]
    columns: tuple[str, ...]
    scores_title: str = ""
    score_rows: tuple[GridRow, ...] = field(default=())
    score_columns: tuple[str, ...] = field(default=())


def section_scale(*arrays: np.ndarray) -> float:
    """The colour scale of a section: its largest finite |value| (1 when it has none)."""
    finite = [np.abs(a[np.isfinite(a)]) for a in arrays if a.size]
    top = max((float(f.max()) for f in finite if f.size), default=0.0)
    return top or 1.0


def token_label(pos: int, piece: str) -> str:
    return f"{pos} {visible_piece(piece)}"


def token_rows(trace: Trace, title: str, array: np.ndarray, token: int) -> list[GridRow]:
    """A section: its title, then one row per token `array[pos]` labelled with the token and its ‖·‖."""
    scale = section_scale(array)
    rows = [GridRow(title, scale=scale)]  # the title shows the section's colour scale
    for pos, piece in enumerate(trace.pieces):
        norm = float(np.linalg.norm(array[pos].astype(np.float64)))
        rows.append(GridRow(f"{token_label(pos, piece)} ‖{norm:.2f}‖", array[pos], pos == token, scale))
    return rows


def short_hook(hook: str) -> str:
    """A hook's name without its block ("ln1.hook_normalized"): the step bar says which block."""
    return re.sub(r"^blocks\.\d+\.", "", hook)


def dims(width: int) -> tuple[str, ...]:
    return tuple(str(i) for i in range(width))


def ln_prefix(step: Step) -> str:
    """ "blocks.0.ln1" of a norm step writing "blocks.0.ln1.hook_normalized"."""
    return step.out_hook.rsplit(".", 1)[0]


def norm_rows(trace: Trace, gpt: GPT, step: Step, token: int, lang: str) -> list[GridRow]:
    """LayerNorm: x, x̂ = (x − μ)/√(σ²+ε), y = γ·x̂ + β for every token, then γ and β (one row each);
    RMSNorm: x, x̂ = x / rms, y = γ·x̂, then γ."""
    prefix, rms = ln_prefix(step), gpt.config.is_rms
    xhat_hook = prefix + ".hook_xhat"
    xhat_words, y_words = ("sv_rms_xhat", "sv_rms_y") if rms else ("sv_ln_xhat", "sv_ln_y")
    rows = token_rows(trace, t("sv_ln_x", lang, hook=short_hook(step.in_hook)), trace[step.in_hook], token)
    rows += token_rows(trace, t(xhat_words, lang, hook=short_hook(xhat_hook)), trace[xhat_hook], token)
    rows += token_rows(trace, t(y_words, lang, hook=short_hook(step.out_hook)), trace[step.out_hook], token)
    return rows + gamma_beta_rows(gpt, prefix, lang)


def gamma_beta_rows(gpt: GPT, prefix: str, lang: str) -> list[GridRow]:
    gamma = gpt.params[prefix + ".g"]
    if gpt.config.is_rms:
        scale = section_scale(gamma)
        return [GridRow(t("sv_gamma", lang, name=short_hook(prefix)), scale=scale), GridRow("γ", gamma, scale=scale)]
    beta = gpt.params[prefix + ".b"]
    scale = section_scale(gamma, beta)
    return [
        GridRow(t("sv_gamma_beta", lang, name=short_hook(prefix)), scale=scale),
        GridRow("γ", gamma, scale=scale),
        GridRow("β", beta, scale=scale),
    ]


def norm_token_rows(trace: Trace, gpt: GPT, step: Step, token: int, lang: str) -> list[GridRow]:
    """One token's way through LayerNorm, a row each: x, x̂, γ, β, y = γ·x̂ + β (the LayerNorm tab's picture);
    through RMSNorm: x, x̂, γ, y = γ·x̂."""
    prefix = ln_prefix(step)
    x, x_hat, y = trace[step.in_hook][token], trace[prefix + ".hook_xhat"][token], trace[step.out_hook][token]
    label = token_label(token, trace.pieces[token])
    rms = gpt.config.is_rms
    shown = [("x", x), ("x̂", x_hat), ("γ", gpt.params[prefix + ".g"])]
    if not rms:
        shown.append(("β", gpt.params[prefix + ".b"]))
    rows = [GridRow(t("sv_rms_token" if rms else "sv_ln_token", lang, token=label))]  # each on its own scale
    for name, values in (*shown, ("y", y)):
        norm = float(np.linalg.norm(values.astype(np.float64)))
        rows.append(GridRow(f"{name} ‖{norm:.2f}‖", values, name in ("x", "y"), section_scale(values)))
    return rows


def norm_note(trace: Trace, step: Step, token: int, lang: str) -> str:
    prefix = ln_prefix(step)
    label = token_label(token, trace.pieces[token])
    rms = trace.config.is_rms
    bypass = norm_edit(trace, prefix)
    if bypass is not None and bypass.frozen_from is None:  # what if: the trace's μ 0 and scale 1 are the identity's
        return t("sv_rms_bypassed" if rms else "sv_ln_bypassed", lang, token=label)
    scale = float(trace[prefix + ".hook_scale"][token, 0])
    if rms:  # the μ RMSNorm leaves in: the mean of its own input
        mu = float(trace[step.in_hook][token].astype(np.float64).mean())
        return t("sv_rms_note", lang, token=label, mu=f"{mu:+.3f}", s=f"{scale:.3f}")
    mu = float(trace[prefix + ".hook_mean"][token, 0])
    return t("sv_ln_note", lang, token=label, mu=f"{mu:+.3f}", s=f"{scale:.3f}")


def score_rows(trace: Trace, step: Step, token: int, head: int) -> list[GridRow]:
    """q·k/√d_head before softmax for `head`: a row per query, a column per key; masked cells NaN (drawn "·")."""
    scores = trace[f"blocks.{step.block}.attn.hook_attn_scores"][head]
    shown = np.where(np.isneginf(scores), np.nan, scores).astype(np.float32)
    return [GridRow(token_label(pos, piece), shown[pos], pos == token) for pos, piece in enumerate(trace.pieces)]


def attention_rows(trace: Trace, step: Step, token: int, lang: str) -> list[GridRow]:
    """Attention: what it reads (the LayerNorm's output, or the stream itself) and what it writes."""
    rows = token_rows(trace, t("sv_attn_in", lang, hook=short_hook(step.in_hook)), trace[step.in_hook], token)
    return rows + token_rows(trace, t("sv_attn_out", lang, hook=short_hook(step.out_hook)), trace[step.out_hook], token)


def residual_rows(trace: Trace, step: Step, token: int, lang: str) -> list[GridRow]:
    """A residual add y = x + F(x): the stream before, the sublayer's output, the stream after."""
    assert step.added_hook is not None, step
    rows = token_rows(trace, t("sv_resid_x", lang, hook=short_hook(step.in_hook)), trace[step.in_hook], token)
    rows += token_rows(trace, t("sv_resid_f", lang, hook=short_hook(step.added_hook)), trace[step.added_hook], token)
    return rows + token_rows(
        trace, t("sv_resid_sum", lang, hook=short_hook(step.out_hook)), trace[step.out_hook], token
    )


def mlp_hooks(step: Step) -> tuple[str, str]:
    prefix = f"blocks.{step.block}.mlp."
    return prefix + "hook_pre", prefix + "hook_post"


def mlp_rows(trace: Trace, step: Step, token: int, lang: str) -> list[GridRow]:
    """The MLP: the hidden units before GELU (hook_pre) and after (hook_post) first (what only this step
    shows, in view on a small screen), then its input and its output. A gated MLP's are its gate x W_gate
    (hook_pre), its up projection x W_in (hook_pre_linear) and their product silu(gate) ⊙ up (hook_post)."""
    pre, post = mlp_hooks(step)
    if step.form == "gated":
        up = pre.replace("hook_pre", "hook_pre_linear")
        rows = token_rows(trace, t("sv_gate", lang, hook=short_hook(pre)), trace[pre], token)
        rows += token_rows(trace, t("sv_up", lang, hook=short_hook(up)), trace[up], token)
        rows += token_rows(trace, t("sv_gated", lang, hook=short_hook(post)), trace[post], token)
    else:
        rows = token_rows(trace, t("sv_mlp_pre", lang, hook=short_hook(pre)), trace[pre], token)
        rows += token_rows(trace, t("sv_mlp_post", lang, hook=short_hook(post)), trace[post], token)
    rows += token_rows(trace, t("sv_mlp_in", lang, hook=short_hook(step.in_hook)), trace[step.in_hook], token)
    return rows + token_rows(trace, t("sv_mlp_out", lang, hook=short_hook(step.out_hook)), trace[step.out_hook], token)


def mlp_note(trace: Trace, step: Step, token: int, lang: str) -> str:
    _, post = mlp_hooks(step)
    label = token_label(token, trace.pieces[token])
    of = "‖silu(gate) ⊙ up‖" if step.form == "gated" else "‖gelu‖"
    return t("sv_mlp_active", lang, token=label, dims=top_dims_text(trace[post][token], lang, of=of))


@dataclass(frozen=True)
class Guess:
    """A row of W_U for one of the top tokens: its id, text, x · row (float64), and the trace's logit."""

    token: int
    piece: str
    dot: float
    logit: float


def unembed_guesses(trace: Trace, gpt: GPT, step: Step, token: int, k: int = TOP_K) -> list[Guess]:
    """The top `k` next tokens after position `token`, each with x · W_U[id] (W_U = W_E: tied) and its logit."""
    x = trace[step.in_hook][token].astype(np.float64)
    w_u = gpt.params["wte"]
    return [
        Guess(i, piece, float(x @ w_u[i].astype(np.float64)), float(trace.logits[token, i]))
        for i, piece, _ in trace.top_k(k, position=token)
    ]


def unembed_rows(
    trace: Trace, gpt: GPT, step: Step, token: int, lang: str, guesses: list[Guess] | None = None
) -> list[GridRow]:
    """The final vector of every token; the rows of W_U for the top guesses after the selected token, each
    labelled with its logit; and the selected token's x ⊙ W_U[top] term by term (their sum is that logit)."""
    rows = token_rows(trace, t("sv_final", lang, hook=short_hook(step.in_hook)), trace[step.in_hook], token)
    guesses = unembed_guesses(trace, gpt, step, token) if guesses is None else guesses
    w_u = gpt.params["wte"]
    chosen = [w_u[g.token] for g in guesses]
    scale = section_scale(*chosen)
    rows.append(GridRow(t("sv_wu", lang, k=len(guesses), token=token_label(token, trace.pieces[token])), scale=scale))
    for guess, values in zip(guesses, chosen, strict=True):
        rows.append(GridRow(f"{fmt(guess.logit).strip()} W_E[{visible_piece(guess.piece)}]", values, scale=scale))
    if guesses:
        top = guesses[0]
        product = trace[step.in_hook][token] * w_u[top.token]
        scale = section_scale(product)
        title = t("sv_product", lang, piece=visible_piece(top.piece), logit=fmt(top.logit).strip())
        rows += [GridRow(title, scale=scale), GridRow("x ⊙ w", product, scale=scale)]
    return rows


def unembed_note(guesses: list[Guess], token: int, lang: str) -> str:
    """x · W_U[top] worked out beside the trace's logit: the same number."""
    if not guesses:
        return ""
    top = guesses[0]
    piece = visible_piece(top.piece)
    return t("sv_dot", lang, pos=token, piece=piece, dot=f"{top.dot:+.3f}", logit=f"{top.logit:+.3f}")


def embed_rows(trace: Trace, step: Step, token: int, lang: str) -> list[GridRow]:
    rows = token_rows(trace, t("sv_read", lang, hook=short_hook(step.in_hook)), trace[step.in_hook], token)
    if step.added_hook:
        rows += token_rows(trace, t("sv_added", lang, hook=short_hook(step.added_hook)), trace[step.added_hook], token)
    return rows + token_rows(trace, t("sv_written", lang, hook=short_hook(step.out_hook)), trace[step.out_hook], token)


def step_picture(view: View) -> Picture:
    """Everything the panel draws at the view's step, for every token, the selected one highlighted."""
    trace, step, token, lang, gpt = view.trace, view.step, view.token, view.lang, view.gpt
    d_model = dims(gpt.config.d_model)
    if step.kind == "norm":
        return Picture(norm_note(trace, step, token, lang), tuple(norm_rows(trace, gpt, step, token, lang)), d_model)
    if step.kind == "attention":
        heads = trace[f"blocks.{step.block}.attn.hook_attn_scores"].shape[0]
        note = "" if gpt.config.residual else t("sv_no_residual", lang)
        title = t("sv_scores", lang, head=view.head, heads=heads)
        return Picture(
            note,
            tuple(attention_rows(trace, step, token, lang)),
            d_model,
            title,
            tuple(score_rows(trace, step, token, view.head)),
            tuple(token_label(pos, piece) for pos, piece in enumerate(trace.pieces)),
        )
    if step.kind == "residual":
        post = "sv_postnorm_rms" if gpt.config.is_rms else "sv_postnorm"
        note = t(post, lang) if gpt.config.norm == "post" else ""
        return Picture(note, tuple(residual_rows(trace, step, token, lang)), d_model)
    if step.kind == "mlp":
        note = mlp_note(trace, step, token, lang)
        if not gpt.config.residual:
            note = f"{t('sv_no_residual', lang)} · {note}"
        width = trace[mlp_hooks(step)[0]].shape[-1]
        return Picture(note, tuple(mlp_rows(trace, step, token, lang)), dims(width))
    if step.kind == "unembed":
        guesses = unembed_guesses(trace, gpt, step, token)
        rows = tuple(unembed_rows(trace, gpt, step, token, lang, guesses))
        return Picture(unembed_note(guesses, token, lang), rows, d_model)
    return Picture("", tuple(embed_rows(trace, step, token, lang)), d_model)


class StepVectorsPanel(Vertical):
    """The step's vectors as heatmap rows (and, at attention, the selected head's scores)."""

    DEFAULT_CSS = """
    StepVectorsPanel > #sv-note { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    StepVectorsPanel > #sv-grid { height: 1fr; }
    StepVectorsPanel > #sv-scores-title { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    StepVectorsPanel > #sv-scores { height: auto; max-height: 45%; }
    """

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._trace: Trace | None = None  # what the grids show: this trace, at _shown = (step, token, head, lang)
        self._shown: tuple[object, ...] = ()

    def compose(self) -> ComposeResult:
        yield Static(id="sv-note")
        yield Static(id="sv-scores-title")  # attention: the scores on top (a few rows), the vectors below
        yield HeatmapGrid(label_width=8, id="sv-scores")
        yield HeatmapGrid(label_width=16, id="sv-grid")

    def show(self, view: View) -> None:
        note = self.query_one("#sv-note", Static)
        grid, scores = self.query_one("#sv-grid", HeatmapGrid), self.query_one("#sv-scores", HeatmapGrid)
        scores_title = self.query_one("#sv-scores-title", Static)
        head = view.head if view.step.kind == "attention" else None
        key = (view.step_index, view.token, head, view.lang)
        if view.trace is self._trace and key == self._shown:
            return  # the same picture: setting the grids again would only redraw them
        self._trace, self._shown = view.trace, key
        if not view.n_tokens:
            note.update(t("empty_prompt", view.lang))
            note.display, scores.display, scores_title.display = True, False, False
            grid.set_rows([], [])
            return
        picture = step_picture(view)
        note.display = bool(picture.note)
        note.update(picture.note, layout=False)
        grid.set_rows(picture.rows, picture.columns)
        scores.display = scores_title.display = bool(picture.score_rows)
        if picture.score_rows:
            scores_title.update(picture.scores_title, layout=False)
            scores.set_rows(picture.score_rows, picture.score_columns)
