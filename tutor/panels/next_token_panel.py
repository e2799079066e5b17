"""The model's guess for the token after the cursor — its own probabilities beside the ones a token is drawn
with at the learner's temperature and top-k, the formula that turns one into the other, and the last draw."""

from __future__ import annotations

import numpy as np
from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from model import Trace, sampling_probs, top_order
from tutor.draw_settings import GENERATE_N, Sampled, Sampling
from tutor.i18n import t
from tutor.number_style import sequential_style, visible_piece
from tutor.text_table import Column, text_table
from tutor.view import View
from tutor.widgets.live_static import LiveStatic

MIN_ROWS, MAX_ROWS = 5, 30  # tokens listed: as many as the panel has rows for, within these
FRAME_ROWS = 6  # the lines around the list: title, settings, formula, header, the rest, the keys (and see list_rows)
MIN_BAR, MAX_BAR = 4, 20  # cells of a probability bar: fewer than MIN_BAR and the panel shows the numbers alone
EIGHTHS = " ▏▎▍▌▋▊▉"  # a bar's last cell: 1/8 … 7/8 of it
GAP = 2  # between the table's columns (text_table's)


def next_token_rows(
    trace: Trace, position: int, sampling: Sampling, n: int
) -> tuple[list[tuple[int, float, float, float]], float, float]:
    """The `n` likeliest tokens after `position` as (id, logit z, the model's p, the p a draw uses), and the
    two probabilities of all the other tokens together."""
    logits = trace.logits[position]
    raw = sampling_probs(logits, 1.0)
    drawn = sampling_probs(logits, sampling.temperature, sampling.top_k)
    listed = top_order(logits, n)  # the order top-k counts in (`model.top_k_mask`)
    rest = np.ones(len(logits), dtype=bool)
    rest[listed] = False
    rows = [(int(i), float(logits[i]), float(raw[i]), float(drawn[i])) for i in listed]
    return rows, float(raw[rest].sum()), float(drawn[rest].sum())


def percent(p: float) -> str:
    """A probability as the panel prints it: "35.2%", and "0" only when it is exactly 0 (outside the top k, or
    not the argmax at T = 0) — a tiny p inside them prints as "0.0%"."""
    return f"{p:.1%}" if p > 0 else "0"


def points_change(delta: float) -> str:
    """A change of probability in percentage points: "+4.2", "−0.1"."""
    return f"{delta * 100:+.1f}".replace("-", "−")


def temperature_text(temperature: float) -> str:
    return f"{temperature:g}"


def top_k_text(top_k: int | None, lang: str) -> str:
    return t("sample_all", lang) if top_k is None else str(top_k)


def formula_text(sampling: Sampling, vocab: int, lang: str) -> str:
    """pᵢ = exp(zᵢ/T) / Σⱼ exp(zⱼ/T) and what j runs over — or, at T = 0, the argmax."""
    if sampling.temperature == 0:
        return t("sample_formula_argmax", lang)
    over = t("sample_over_all", lang, n=vocab) if sampling.top_k is None else t("sample_over_k", lang, k=sampling.top_k)
    return f"pᵢ = exp(zᵢ/T) / Σⱼ exp(zⱼ/T)   {over}"


def sampled_text(sampled: Sampled, lang: str) -> str:
    """What the last draw gave, and what it cost: one new position through the KV cache, or the whole pass."""
    return " · ".join(sampled_lines(sampled, lang))


def sampled_lines(sampled: Sampled, lang: str) -> list[str]:
    """What the last draw gave; what it cost; why the KV cache could not serve, if it could not."""
    run = f"{t('sample_run', lang, i=sampled.run[0], n=sampled.run[1])} " if sampled.run else ""
    drawn = t(
        "sample_drawn",
        lang,
        number=sampled.number + 1,  # counted from 1 on screen; `model.sample_rng(seed, number)` counts from 0
        token=visible_piece(sampled.piece),
        raw=f"{sampled.raw_p:.1%}",
        p=f"{sampled.p:.1%}",
        T=temperature_text(sampled.temperature),
        k=top_k_text(sampled.top_k, lang),
    )
    if sampled.full_reason is None:
        cost = t("kv_cache_one", lang, kept=sampled.kept)
        if sampled.backward:  # the loss has one more term, and its gradient reaches every position
            return [f"{run}{drawn}", cost, t("kv_backward_all", lang, n=sampled.kept + 1)]
    else:
        why = t("kv_because", lang, why=t(f"kv_why_{sampled.full_reason}", lang))
        return [f"{run}{drawn}", t("kv_full_pass", lang, n=sampled.computed), why]
    return [f"{run}{drawn}", cost]


class NextTokenPanel(LiveStatic):
    DEFAULT_CSS = "NextTokenPanel { padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._made: tuple[object, ...] | None = None
        self._view: View | None = None
        self.redraw = self._redraw  # the bars take the width there is: made again when it changes

    def _redraw(self) -> None:
        if self._view is not None:
            self.show(self._view)

    @property
    def available_height(self) -> int:
        """Rows the panel's scroll area has (the panel itself is as tall as its content)."""
        for node in self.ancestors:
            if isinstance(node, Widget) and node.size.height:
                return node.content_size.height
        return 0

    def list_rows(self, view: View, vocab: int) -> int:
        """As many tokens as the rows left by the lines around the list, within MIN_ROWS … MAX_ROWS."""
        sampling = view.sampling
        drawn = len(sampled_lines(sampling.last, view.lang)) if sampling.last is not None else 0
        frame = FRAME_ROWS + drawn + (sampling.generating is not None)
        frame += view.token != view.n_tokens - 1
        return max(MIN_ROWS, min(MAX_ROWS, vocab, self.available_height - frame))

    def show(self, view: View) -> None:
        trace, lang, sampling = view.trace, view.lang, view.sampling
        if not view.n_tokens:
            self._made, self._view = None, None
            self.show_content(t("empty_prompt", lang), "empty")
            return
        vocab = trace.logits.shape[-1]
        self._view = view
        n, width = self.list_rows(view, vocab), self.available_width
        made = (trace, view.token, sampling, lang, n, width)
        if self._made is not None and made[0] is self._made[0] and made[1:] == self._made[1:]:  # a trace by identity
            return  # the same picture: a step key does not change the guess
        self._made = made
        rows, rest_raw, rest_drawn = next_token_rows(trace, view.token, sampling, n)
        picture = self.picture(view, rows, (rest_raw, rest_drawn), vocab, width)
        self.show_content(picture, (n, sampling.last is not None, sampling.generating is not None, view.token))

    def picture(
        self, view: View, rows: list[tuple[int, float, float, float]], rest: tuple[float, float], vocab: int, width: int
    ) -> Text:
        trace, lang, sampling = view.trace, view.lang, view.sampling
        title = Text(t("next_title", lang, token=visible_piece(trace.pieces[view.token]), pos=view.token), style="bold")
        settings = Text.assemble(
            ("T = ", "bold"),
            (temperature_text(sampling.temperature), "bold"),
            "  ·  ",
            ("top-k = ", "bold"),
            (top_k_text(sampling.top_k, lang), "bold"),
            "  ·  ",
            t("sample_seed", lang, seed=sampling.seed, n=sampling.draws),
        )
        formula = Text(formula_text(sampling, vocab, lang), style="italic")
        numbers = [
            [
                str(rank),
                Text(visible_piece(trace.tokenizer.piece(token)), style="bold"),
                f"{z:+.2f}",
                percent(raw),
                percent(p),
            ]
            for rank, (token, z, raw, p) in enumerate(rows, 1)
        ]
        headers = ["#", t("sample_token", lang), "z", t("sample_p_model", lang), t("sample_p_drawn", lang)]
        columns = [
            Column("#", "right"),
            Column(headers[1], max_width=8),
            Column("z", "right"),
            Column(headers[3], "right"),
            Column(headers[4], "right"),
        ]
        if view.edited is not None:  # an edited run: the clean model's p beside, and the change in points
            clean = sampling_probs(view.edited.clean.logits[view.token], 1.0)
            for cells, (token, _, raw, _) in zip(numbers, rows, strict=True):
                cells += [percent(float(clean[token])), points_change(raw - float(clean[token]))]
            columns += [Column(t("clean_run", lang), "right"), Column("Δ", "right")]
        plain = text_table(columns, numbers)
        bar = min(MAX_BAR, (width - max(line.cell_len for line in plain) - 2 * GAP) // 2)
        if bar < MIN_BAR:  # a narrow window: the numbers alone
            table = plain
        else:
            columns = [*columns[:3], Column(), columns[3], Column(), *columns[4:]]
            with_bars = [
                [*cells[:3], probability_bar(raw, bar), cells[3], probability_bar(p, bar), *cells[4:]]
                for cells, (_, _, raw, p) in zip(numbers, rows, strict=True)
            ]
            table = text_table(columns, with_bars)
        lines = [title, settings, formula]  # then what the last draw gave: in view however short the panel
        if sampling.generating is not None:
            done, total = sampling.generating
            lines.append(Text(t("sample_generating", lang, done=done, n=total), style="bold yellow"))
        if sampling.last is not None:
            lines += [Text(line, style="bold") for line in sampled_lines(sampling.last, lang)]
        if view.token != view.n_tokens - 1:
            last = visible_piece(trace.pieces[-1])
            lines.append(Text(t("sample_from_last", lang, token=last, pos=view.n_tokens - 1), style="dim"))
        lines += table
        if vocab > len(rows):
            others = t("sample_rest", lang, n=vocab - len(rows), raw=percent(rest[0]), p=percent(rest[1]))
            lines.append(Text(others, style="dim"))
        lines.append(Text(t("sample_keys", lang, n=GENERATE_N), style="dim"))
        picture = Text("\n").join(lines)
        picture.no_wrap, picture.overflow = True, "ellipsis"  # a long line is cut, never wrapped into the table
        return picture


def probability_bar(p: float, width: int) -> Text:
    """A bar of p × width cells, in eighths, in the probability scale's colour; its length carries p under NO_COLOR."""
    eighths = round(min(1.0, max(0.0, p)) * width * 8)
    full, part = divmod(eighths, 8)
    glyphs = "█" * full + (EIGHTHS[part] if part else "")
    return Text(glyphs.ljust(width), Style(color=sequential_style(max(p, 0.35)).bgcolor))
