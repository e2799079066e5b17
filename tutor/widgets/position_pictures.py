"""Positional encoding as pictures: the table as a heatmap, a few dimensions as waves, the dot product
against the distance, and RoPE's rotations as dials.

`PositionPictures` holds the four pictures and shows those its `parts` name; each `show_*` call is
keyed by what the picture is made of (d, base, positions, the learned table), so calling it again on
every keystroke redraws nothing. A general widget: it takes numbers, not a View.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
from rich.cells import cell_len
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.events import Resize
from textual.widgets import Static

from tutor.i18n import t
from tutor.position_picture_data import (
    dots_by_distance,
    number,
    rope_pair_angles,
    rope_pairs,
    sinusoidal_dots,
    sinusoidal_table,
    wave_dims,
    wavelength,
)
from tutor.widgets.dials import Dial, Dials, Hand
from tutor.widgets.line_chart import LineChart, Series
from tutor.widgets.value_map import ValueMap

WAVE_STYLES = (("#ff7f50", "•"), ("#40c0ff", "o"), ("#a0e040", "+"), ("#e0a0ff", "x"))
PARTS = frozenset({"map", "waves", "dots", "dials"})
CHART_WIDTH = 40  # a chart beside the heatmap needs this much; two stacked charts 60, else they go above it


class PositionPictures(Vertical):
    """The pictures of a position table; `parts` picks which are shown (all by default)."""

    DEFAULT_CSS = """
    PositionPictures { height: 1fr; }
    PositionPictures > .pp-note { height: auto; padding: 0 1; color: $text-muted; }
    PositionPictures > #pp-top { height: 1fr; }
    PositionPictures #pp-charts { width: 1fr; height: 1fr; }
    PositionPictures #pp-charts > LineChart { height: 1fr; min-height: 8; }
    PositionPictures #pp-map { width: auto; height: 1fr; margin-left: 1; }
    PositionPictures.-narrow > #pp-top { layout: vertical; }
    PositionPictures.-narrow #pp-charts { layout: horizontal; height: 10; }
    PositionPictures.-narrow #pp-charts > LineChart { width: 1fr; height: 1fr; min-height: 8; }
    PositionPictures.-narrow #pp-map { width: 1fr; height: 1fr; min-height: 5; margin-left: 0; }
    PositionPictures > Dials { height: 1fr; min-height: 7; max-height: 12; }
    """

    def __init__(
        self, parts: Iterable[str] = PARTS, *, note: bool = True, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.parts = frozenset(parts)
        self.note = note  # the words over the pictures (a screen with its own notes leaves them out)
        self.key: object = None  # what the pictures show now
        self.map_width = 0

    def compose(self) -> ComposeResult:
        yield Static(classes="pp-note", id="pp-note")
        with Horizontal(id="pp-top"):
            with Vertical(id="pp-charts"):
                yield LineChart(id="pp-waves")
                yield LineChart(id="pp-dots")
            yield ValueMap(id="pp-map")
        yield Static(classes="pp-note", id="pp-dials-note")
        yield Dials(id="pp-dials")

    def on_mount(self) -> None:
        self._show_parts(set())

    def _show_parts(self, parts: set[str]) -> None:
        shown = parts & self.parts
        self.query_one("#pp-map").display = "map" in shown
        self.query_one("#pp-waves").display = "waves" in shown
        self.query_one("#pp-dots").display = "dots" in shown
        self.query_one("#pp-charts").display = bool(shown & {"waves", "dots"})
        self.query_one("#pp-top").display = bool(shown & {"map", "waves", "dots"})
        self.query_one("#pp-dials").display = "dials" in shown
        self.query_one("#pp-dials-note").display = self.note and "dials" in shown
        self.query_one("#pp-note").display = self.note and bool(shown & {"map", "waves", "dots"})

    def on_resize(self, event: Resize) -> None:
        self._layout_for(event.size.width)

    def _layout_for(self, width: int) -> None:
        """The heatmap beside the charts when both fit, else the charts side by side over the heatmap."""
        both = {"map"} <= self.parts and bool(self.parts & {"waves", "dots"})
        charts = len(self.parts & {"waves", "dots"})
        narrow = both and width < self.map_width + (CHART_WIDTH if charts == 1 else 60)
        self.set_class(narrow, "-narrow")
        self.value_map.styles.width = "1fr" if narrow or not both else self.map_width

    # -- what is shown ---------------------------------------------------------------------------

    def show_sinusoidal(
        self, n: int, d: int, base: float, lang: str, marked: Sequence[int] = (), reference: float | None = None
    ) -> None:
        """The sinusoidal table of n positions × d dimensions for `base`; with another `reference` base (the one
        the model was trained with), its dot-product curve too, dashed, to compare."""
        reference = reference if reference != base else None
        key = ("sinusoidal", n, d, base, reference, lang)
        self._mark(marked)
        if key == self.key:
            return
        self.key = key
        self._show_parts({"map", "waves", "dots"})
        table = sinusoidal_table(n, d, base)
        dims = wave_dims(d)
        self._show_map(table, key, lang, "PE(pos, dim)")
        waves = [
            Series(t("pp_wave", lang, j=j, wavelength=number(wavelength(j, d, base))), range(n), table[:, j], c, m)
            for j, (c, m) in zip(dims, WAVE_STYLES, strict=False)
        ]
        self.waves.set_series(waves, x_label=t("pp_position", lang), y_label=t("pp_waves_title", lang))
        curve, gap = sinusoidal_dots(n, d, base)
        dots = [Series(t("pp_dot", lang), range(n), curve, WAVE_STYLES[0][0], "•")]
        if reference is not None:
            trained, _ = sinusoidal_dots(n, d, reference)
            name = t("pp_reference", lang, base=f"{reference:g}")
            dots.append(Series(name, range(n), trained, WAVE_STYLES[1][0], "-", dashed=True))
        self.dots.set_series(dots, x_label=t("pp_distance", lang), y_label=t("pp_dots_title", lang))
        self.gap = gap
        self._note(t("pp_sinusoidal_note", lang, base=f"{base:g}", d=d, n=n, gap=f"{gap:.1e}"))

    def show_learned(self, table: np.ndarray, table_key: object, lang: str, marked: Sequence[int] = ()) -> None:
        """A learned table `[positions, d]`; `table_key` names it (the model), so it is drawn once."""
        key = ("learned", table_key, lang)
        self._mark(marked)
        if key == self.key:
            return
        self.key = key
        self._show_parts({"map", "waves", "dots"})
        n, d = table.shape
        self._show_map(table, key, lang, "W_pos[pos, dim]")
        waves = [
            Series(t("pp_learned_wave", lang, j=j), range(n), table[:, j], c, m)
            for j, (c, m) in zip(wave_dims(d), WAVE_STYLES, strict=False)
        ]
        self.waves.set_series(waves, x_label=t("pp_position", lang), y_label=t("pp_learned_waves_title", lang))
        mean, low, high = dots_by_distance(table)
        distances = range(n)
        dots = [
            Series(t("pp_mean", lang), distances, mean, WAVE_STYLES[0][0], "•"),
            Series(t("pp_lowest", lang), distances, low, WAVE_STYLES[1][0], "-", dashed=True),
            Series(t("pp_highest", lang), distances, high, WAVE_STYLES[2][0], "+", dashed=True),
        ]
        self.dots.set_series(dots, x_label=t("pp_distance", lang), y_label=t("pp_learned_dots_title", lang))
        self._note(t("pp_learned_note", lang, d=d, spread=f"{float(np.max(high - low)):.2f}"))

    def show_rope(self, omegas: tuple[float, ...], p: int, q: int, lang: str) -> None:
        """Dials of RoPE's rotation of a few pairs at positions p (query) and q (key); `omegas` are the model's
        frequencies ωᵢ, one a pair (`model.model_rope_frequencies`)."""
        key = ("rope", omegas, p, q, lang)
        if key == self.key:
            return
        self.key = key
        self._show_parts({"dials"})
        self.query_one("#pp-dials-note", Static).update(t("pp_rope_dials_note", lang))
        dials = []
        for i in rope_pairs(2 * len(omegas)):
            omega = omegas[i]
            a, b, delta = rope_pair_angles(p, q, omega)
            dials.append(
                Dial(
                    t("pp_dial", lang, i=i, omega=number(omega)),
                    (Hand(b, "q", WAVE_STYLES[1][0]), Hand(a, "p", WAVE_STYLES[0][0])),
                    (
                        t("pp_dial_angles", lang, p=p, a=f"{a:.2f}", q=q, b=f"{b:.2f}"),
                        t("pp_dial_between", lang, delta=f"{delta:+.2f}"),
                    ),
                )
            )
        self.query_one(Dials).set_dials(dials, key)

    def show_nothing(self) -> None:
        self.key = None
        self._show_parts(set())

    # -- parts ---------------------------------------------------------------------------------

    gap = 0.0  # the largest |PE(p)·PE(q) − curve(|p − q|)| of the sinusoidal table shown

    @property
    def waves(self) -> LineChart:
        return self.query_one("#pp-waves", LineChart)

    @property
    def dots(self) -> LineChart:
        return self.query_one("#pp-dots", LineChart)

    @property
    def value_map(self) -> ValueMap:
        return self.query_one(ValueMap)

    def _show_map(self, table: np.ndarray, key: object, lang: str, what: str) -> None:
        value_map = self.value_map
        title = t("pp_map_title", lang, what=what, last=table.shape[1] - 1)
        value_map.set_values(table, scale=_scale(table), row_title=t("pp_pos", lang), column_title=title, key=key)
        # the cells and a scrollbar; a narrow table (RoPE's d_head) keeps room for its title and legend
        self.map_width = value_map.label_width + max(table.shape[1] + 2, cell_len(title) + 32)
        self._layout_for(self.size.width)

    def _note(self, words: str) -> None:
        self.query_one("#pp-note", Static).update(words)

    def _mark(self, marked: Sequence[int]) -> None:
        self.value_map.set_marked(marked)


def _scale(table: np.ndarray) -> float:
    """±1 for the sinusoidal table (its values are sines and cosines); a learned table's largest |value|."""
    largest = float(np.abs(table).max()) if table.size else 1.0
    return 1.0 if largest <= 1.0 else math.ceil(largest * 100) / 100
