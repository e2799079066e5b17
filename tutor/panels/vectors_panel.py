"""Token and position vectors, and their sum, for every token: digits on coloured cells, norms beside."""

from __future__ import annotations

import math

import numpy as np
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from model import model_rope_frequencies
from tutor.i18n import t
from tutor.model_words import rope_scaling_note
from tutor.number_style import top_dims_text, visible_piece
from tutor.view import View
from tutor.widgets.heatmap import GridRow, HeatmapGrid
from tutor.widgets.position_pictures import PositionPictures

MAX_PICTURE_POSITIONS = 128  # GPT-2's 1024 positions would only repeat the story
PICTURES_MIN_HEIGHT = 24  # a panel shorter than this keeps its rows for the numbers (80×24)


class VectorsPanel(Vertical):
    DEFAULT_CSS = """
    VectorsPanel > #vectors-note { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    VectorsPanel > HeatmapGrid { height: 1fr; }
    VectorsPanel > #angles-note { height: auto; padding: 0 1; }
    VectorsPanel.-pictures > HeatmapGrid { height: auto; }
    /* the three sections of a short prompt whole */
    VectorsPanel.-pictures > #vectors-grid { max-height: 55%; min-height: 5; }
    VectorsPanel.-pictures > #angles-grid { max-height: 25%; }
    VectorsPanel > PositionPictures { height: 1fr; display: none; }
    VectorsPanel.-pictures > PositionPictures { display: block; }
    VectorsPanel.-pictures.-empty > PositionPictures { display: none; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="vectors-note")
        yield HeatmapGrid(label_width=18, id="vectors-grid")
        yield Static(id="angles-note")
        yield HeatmapGrid(label_width=18, id="angles-grid")
        # the positions' pictures (9 widgets, each costing on every key) are mounted when first shown: show_pictures

    _positions_taught = True  # the positions' pictures are shown (tutor/reach.py: from the sinusoidal lesson on)
    _pictures: PositionPictures | None = None  # mounted, once the positions are taught
    _pictures_drawn = False  # mounted and drawn: till then the panel is laid out as without them
    _pictures_view: View | None = None  # what the pictures were last asked to show

    def on_resize(self) -> None:
        shown = self._positions_taught and self._pictures_drawn and self.size.height >= PICTURES_MIN_HEIGHT
        self.set_class(shown, "-pictures")

    def show(self, view: View) -> None:
        trace, lang, cfg = view.trace, view.lang, view.gpt.config
        note, grid = self.query_one("#vectors-note", Static), self.query_one("#vectors-grid", HeatmapGrid)
        angle_note, angles_grid = self.query_one("#angles-note", Static), self.query_one("#angles-grid", HeatmapGrid)
        rope = cfg.positional == "rope"
        if self._positions_taught != view.reach.shows("positions"):
            self._positions_taught = view.reach.shows("positions")
            self.on_resize()
        angle_note.display = angles_grid.display = rope and view.n_tokens > 0
        self.set_class(not view.n_tokens, "-empty")  # pictures hidden, not emptied: ctrl+u, then typing, keeps them
        if not view.n_tokens:
            note.update(t("empty_prompt", lang))
            grid.set_rows([], [])
            return
        if self._positions_taught:
            self.show_pictures(view)

        def rows_of(title: str, array: np.ndarray) -> list[GridRow]:
            rows = [GridRow(title)]
            for pos, piece in enumerate(trace.pieces):
                norm = float(np.linalg.norm(array[pos].astype(np.float64)))
                rows.append(GridRow(f"{pos} {visible_piece(piece)} ‖{norm:.2f}‖", array[pos], pos == view.token))
            return rows

        rows = rows_of(t("token_embedding", lang), trace["hook_embed"])
        if cfg.positional in ("sinusoidal", "learned"):
            title = "position_vector" if cfg.positional == "sinusoidal" else "learned_vector"
            rows += rows_of(t(title, lang), trace["hook_pos_embed"])
            rows += rows_of(t("sum_vector", lang), trace["blocks.0.hook_resid_pre"])
            base = f" · base {cfg.pos_base:g}" if cfg.positional == "sinusoidal" and self._positions_taught else ""
            note.update(f"d_model = {cfg.d_model}{base}" + self.largest(view, "blocks.0.hook_resid_pre"), layout=False)
            columns = [str(i) for i in range(cfg.d_model)]
        elif rope:
            note.update(f"d_model = {cfg.d_model}" + self.largest(view, "hook_embed"), layout=False)
            rope_note = t("rope_half_note" if cfg.rope_style == "half" else "rope_note", lang)
            sentences = (rope_note, rope_scaling_note(cfg, lang), t("rope_angles", lang))
            angle_note.update(t("sentence_gap", lang).join(filter(None, sentences)))
            pe = view.gpt.position_rows(0, view.n_tokens).astype(np.float64)  # the model's own angles, scaled or not
            angles = np.arctan2(pe[:, 0::2], pe[:, 1::2]) % (2 * math.pi)  # θ from (sin θ, cos θ)
            angle_rows = [
                GridRow(f"{pos} {visible_piece(piece)}", angles[pos], pos == view.token)
                for pos, piece in enumerate(trace.pieces)
            ]
            angles_grid.set_rows(angle_rows, [f"θ{i}" for i in range(cfg.d_head // 2)], scale=2 * math.pi)
            columns = [str(i) for i in range(cfg.d_model)]
        else:
            note.update(t("no_position", lang) + self.largest(view, "hook_embed"), layout=False)
            angle_note.display = True
            angle_note.update(t("pp_nope", lang))
            columns = [str(i) for i in range(cfg.d_model)]
        grid.set_rows(rows, columns)

    def show_pictures(self, view: View) -> None:
        """The position table as pictures; drawn again only when the model, base or language changed. Mounted the
        first time (from the sinusoidal lesson on), and in view ("-pictures") once drawn, so that they come whole."""
        self._pictures_view = view
        if self._pictures is None:
            self._pictures = PositionPictures(id="vectors-pictures")
            mounting = self.mount(self._pictures)

            async def mounted() -> None:
                await mounting
                self._pictures_drawn = True
                if self._pictures_view is not None:
                    self.show_pictures(self._pictures_view)
                self.on_resize()

            self.call_next(mounted)
            return
        if not self._pictures_drawn:
            return  # still mounting: drawn, the latest view, once mounted
        cfg, lang = view.gpt.config, view.lang
        pictures = self._pictures
        n = min(cfg.n_ctx, MAX_PICTURE_POSITIONS)
        if cfg.positional == "sinusoidal":
            pictures.show_sinusoidal(n, cfg.d_model, cfg.pos_base, lang, marked=[view.token])
        elif cfg.positional == "learned":
            table = view.gpt.position_rows(0, n)
            pictures.show_learned(table, (id(view.gpt), view.gpt.name), lang, marked=[view.token])
        elif cfg.positional == "rope":
            p = view.token
            q = p - 1 if p > 0 else min(1, view.n_tokens - 1)  # the token before: q·k's angle is one step's turn
            pictures.show_rope(tuple(map(float, model_rope_frequencies(cfg))), p, q, lang)
        else:
            pictures.show_nothing()

    @staticmethod
    def largest(view: View, hook: str) -> str:
        """Where the selected token's vector is largest: wide vectors scroll, this points the way."""
        token = f"[{view.token} {visible_piece(view.trace.pieces[view.token])}]"
        dims = top_dims_text(view.trace[hook][view.token], view.lang)
        return " · " + t("largest", view.lang, token=token, where="", dims=dims)
