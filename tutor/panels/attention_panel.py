"""The attention patterns of the current block: every head small, side by side, and the selected head large
with its digits. Rows are queries, columns keys; the selected query token is marked in every map.

In a causal model a key after its query is masked: drawn as a dim dot, never as a 0. Under the maps, for the
selected head and query, the key it attends to most and the entropy of its row, both from the pattern itself.
In a small window (80×24) the big grid stays alone, with a one-line list of the heads.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np
from rich.cells import cell_len
from rich.style import Style
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.events import Resize
from textual.widgets import Static

from model import AblateHead, Trace, causal_mask
from tutor.i18n import t
from tutor.number_style import SHADES, probability_style, sequential_style, shade_glyph, visible_piece
from tutor.sentences import attention_most
from tutor.step_words import kv_sharing
from tutor.view import View
from tutor.widgets.heatmap import CELL, GridRow, HeatmapGrid
from tutor.widgets.mini_maps import MiniMap, MiniMaps

SMALL_HEIGHT = 16  # a panel lower than this shows the big grid alone (80×24 leaves it about 12 rows)
TINY_HEIGHT = 10  # lower still (60×16): the grid without the read-out and the list of heads
READOUT_LINES = 2  # the read-out under the maps: the most-attended key, then the entropy


class AttentionPanel(Vertical):
    DEFAULT_CSS = """
    AttentionPanel > Static { height: auto; padding: 0 1; }
    AttentionPanel > MiniMaps { padding: 0 1; }
    AttentionPanel > #attn-heads-line { display: none; }
    AttentionPanel.-small > MiniMaps { display: none; }
    AttentionPanel.-small > #attn-heads-line { display: block; }
    AttentionPanel.-tiny > #attn-heads-line, AttentionPanel.-tiny > #attn-readout { display: none; }
    AttentionPanel > HeatmapGrid { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._shown: tuple[object, ...] | None = None  # what is on screen: the same view draws nothing again
        self._shown_trace: Trace | None = None
        self._patterns: tuple[Trace, int, np.ndarray] | None = None  # (trace, block, masked patterns)
        self._said: dict[str, str] = {}
        self._said_lines: dict[str, int] = {}

    def compose(self) -> ComposeResult:
        yield Static(classes="heatmap-title", id="attn-title")
        yield Static(id="attn-heads-line")
        yield MiniMaps(id="attn-heads")
        yield Static(id="attn-readout")
        yield HeatmapGrid(label_width=10)

    @property
    def title(self) -> Static:
        return self.query_one("#attn-title", Static)

    @property
    def grid(self) -> HeatmapGrid:
        return self.query_one(HeatmapGrid)

    @property
    def heads(self) -> MiniMaps:
        return self.query_one(MiniMaps)

    def on_resize(self, event: Resize) -> None:
        self.set_class(event.size.height < SMALL_HEIGHT, "-small")
        self.set_class(event.size.height < TINY_HEIGHT, "-tiny")

    def say(self, selector: str, text: str) -> None:
        """A line of words, changed only if it changed, and laid out again only if its height changes (a new
        layout of the screen on every token key would cost more than the pictures)."""
        static = self.query_one(selector, Static)
        old = self._said.get(selector)
        if old == text:
            return
        width = max(1, static.content_region.width or self.size.width - 2)
        lines = sum(max(1, -(-cell_len(line) // width)) for line in text.split("\n"))
        static.update(Content(text), layout=old is None or lines != self._said_lines.get(selector))
        self._said[selector], self._said_lines[selector] = text, lines

    def masked_patterns(self, trace: Trace, block: int) -> np.ndarray:
        """Every head's pattern of `block` (heads × queries × keys), a masked cell NaN: once per trace and block."""
        cached = self._patterns
        if cached is not None and cached[0] is trace and cached[1] == block:
            return cached[2]
        pattern = trace[f"blocks.{block}.attn.hook_pattern"].astype(np.float64)
        if trace.config.causal:  # key > query: masked, a dot, not a zero
            n = pattern.shape[-1]
            pattern = np.where(causal_mask(n, n), pattern, np.nan)
        self._patterns = (trace, block, pattern)
        return pattern

    def show(self, view: View) -> None:
        cfg, trace = view.gpt.config, view.trace
        head = view.head % cfg.n_heads
        shown = (view.block, head, view.token, view.lang, view.n_tokens)
        if trace is self._shown_trace and shown == self._shown:
            return  # a step within the block: the same picture, not drawn again
        self._shown_trace, self._shown = trace, shown
        lang = view.lang
        heads_line = t(
            "attn_heads_line", lang, heads=" ".join(f"[{h}]" if h == head else str(h) for h in range(cfg.n_heads))
        )
        self.say("#attn-heads-line", heads_line)
        if not view.n_tokens:
            self.say("#attn-title", t("empty_prompt", lang))
            self.heads.set_maps([])
            self.say("#attn-readout", "")
            self.grid.set_rows([], [])
            return
        silenced = {e.head for e in trace.edits if isinstance(e, AblateHead) and e.block == view.block}
        self.say(
            "#attn-title",
            t("attn_title", lang, block=view.block, head=head, heads=cfg.n_heads)
            + (" · " + kv_sharing(cfg, head, lang) if cfg.group > 1 else "")  # grouped-query: whose k and v it reads
            + (t("attn_masked", lang) if cfg.causal else "  " + t("no_mask", lang))
            + (t("attn_silenced", lang) if head in silenced else ""),
        )
        patterns = self.masked_patterns(trace, view.block)
        n, q = view.n_tokens, view.token
        pieces = [visible_piece(piece) for piece in trace.pieces]
        caption = t("attn_heads", lang, heads=cfg.n_heads, q=q, piece=pieces[q])
        scrollbar = 1 if 10 + 6 * n > self.size.width else 0  # the big grid's, when its keys do not all fit
        self.heads.set_maps(
            [MiniMap(f"{h}✕" if h in silenced else str(h), patterns[h], h == head) for h in range(cfg.n_heads)],
            caption=caption,
            selected_row=q,
            focus=(q, q),
            style_for=cell_style,
            fraction=probability_fraction,
            glyph=shade_glyph,
            window_words=window_words(lang),
            reserve=1 + READOUT_LINES + n + 2 + scrollbar,  # title, read-out, the grid: header, rows, legend
        )
        self.say("#attn-readout", readout(patterns[head], head, q, pieces, lang))
        labels = [f"{pos} {piece}" for pos, piece in enumerate(pieces)]
        rows = [GridRow(label, patterns[head][row], row == q) for row, label in enumerate(labels)]
        self.grid.set_rows(rows, labels, scale=1.0, style_for=probability_style, number=probability)
        self.call_after_refresh(self.keep_key_in_view, q)

    def keep_key_in_view(self, key: int) -> None:
        """A prompt wider than the grid: scrolled sideways so that the selected query's own key (the diagonal,
        the last one it may see) is in view, in the middle, so that the next keys need no scroll (each scroll
        draws every row again); the learner's own scrolling is left alone while the key is in view."""
        grid = self.grid
        shown = max(1, grid.whole_cells(grid.scrollable_content_region.width))
        first = -(-round(grid.scroll_x) // CELL)
        if first <= key < first + shown:
            return
        grid.scroll_to(x=max(0, key - shown // 2) * CELL, animate=False, force=True)  # mid-view: a page per jump


def attended(pattern: np.ndarray, query: int) -> tuple[int, float, float, int]:
    """For one head's pattern (NaN where masked) and a query: the key with the most weight (the first of
    equals), its weight, the row's entropy −Σ p·log₂ p in bits, and how many keys the query may see."""
    row = pattern[query]
    seen = np.isfinite(row)
    p = np.where(seen, row, 0.0)
    key = int(np.argmax(p))
    positive = p[p > 0]
    # never "-0.00": one key of weight 1 (or 1 + 1e-7 from float32) has entropy 0, not −0 or −1e-7
    entropy = max(0.0, float(-(positive * np.log2(positive)).sum()))
    return key, float(p[key]), entropy, int(seen.sum())


def readout(pattern: np.ndarray, head: int, query: int, pieces: list[str], lang: str) -> str:
    """Two lines: where the query looks most, and how spread its weights are."""
    _, _, entropy, n_keys = attended(pattern, query)
    row = pattern[query]
    sentence = attention_most([float(w) for w in row[np.isfinite(row)]])  # the keys it may see, as the table shows
    key = sentence.values["key"]
    keys = t("list_separator", lang).join(f"{k} {pieces[k]}" for k in sentence.values["keys"])
    most = t(
        sentence.key,
        lang,
        head=head,
        q=query,
        piece=pieces[query],
        k=key,
        kpiece=pieces[key],
        keys=keys,
        p=sentence.values["p"],
    )
    spread = t("attn_entropy", lang, h=entropy, n=n_keys, hmax=math.log2(n_keys), eff=2.0**entropy)
    return most + "\n" + spread


@lru_cache(maxsize=4)
def window_words(lang: str) -> Callable[[range, range, int, int], str]:
    """The caption's "rows 38–47, columns 36–49 of 64": one function per language, so that the maps drawn
    before are found again by their content."""

    def words(rows: range, cols: range, n_rows: int, n_cols: int) -> str:
        return t("attn_window", lang, r0=rows[0], r1=rows[-1], c0=cols[0], c1=cols[-1], n=n_rows)

    return words


def probability_fraction(value: float) -> float:
    return value  # a probability is its own fraction of the scale 0…1


@lru_cache(maxsize=64)
def _cell_style(shade: int) -> Style:
    colour = sequential_style(shade / SHADES).bgcolor
    return Style(bgcolor=colour, color="rgb(225,245,225)")


def cell_style(value: float) -> Style:
    """A small map's cell: the sequential colour behind a light shade glyph (brighter and fuller together)."""
    return _cell_style(round(min(1.0, max(0.0, value)) * SHADES))


def probability(value: float) -> str:
    """0.33, 1.00; a masked cell (NaN) is a dot."""
    return f"{value:.2f}" if np.isfinite(value) else "·"
