"""The model's guess for the token after the cursor: the top k with their probabilities."""

from __future__ import annotations

from rich.text import Text

from tutor.i18n import t
from tutor.text_table import Column, text_table
from tutor.view import View, visible_piece
from tutor.widgets.live_static import LiveStatic

TOP_K = 10
BAR = 30


class NextTokenPanel(LiveStatic):
    DEFAULT_CSS = "NextTokenPanel { padding: 0 1; }"

    def show(self, view: View) -> None:
        trace, lang = view.trace, view.lang
        if not view.n_tokens:
            self.show_content(t("empty_prompt", lang), "empty")
            return
        title = Text(t("next_title", lang, token=visible_piece(trace.pieces[view.token]), pos=view.token), style="bold")
        columns = [Column(justify="right"), Column(), Column(), Column(justify="right")]
        rows = [
            [
                str(rank),
                Text(visible_piece(piece), style="bold"),
                Text("█" * round(prob * BAR), "green"),
                f"{prob:6.1%}",
            ]
            for rank, (_token, piece, prob) in enumerate(trace.top_k(TOP_K, view.token), 1)
        ]
        self.show_content(Text("\n").join([title, *text_table(columns, rows)]), view.n_tokens > 0)
