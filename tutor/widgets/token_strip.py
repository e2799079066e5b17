"""The prompt as tokens: text, id and position, with the token cursor lit."""

from __future__ import annotations

from rich.text import Text

from tutor.i18n import t
from tutor.view import View, visible_piece
from tutor.widgets.live_static import LiveStatic


class TokenStrip(LiveStatic):
    DEFAULT_CSS = "TokenStrip { height: auto; max-height: 4; padding: 0 1; }"

    def show(self, view: View) -> None:
        text = Text(no_wrap=False)
        if view.trace.dropped:  # first, so that it shows even when the tokens fill the strip
            text.append(t("dropped", view.lang, n=view.n_tokens, d=view.trace.dropped) + "\n", style="bold yellow")
        if not view.n_tokens:
            text.append(t("empty_prompt", view.lang), style="italic")
        for pos, (token, piece) in enumerate(zip(view.trace.tokens, view.trace.pieces, strict=True)):
            chip = Text.assemble((f"{pos}", "dim"), " ", (visible_piece(piece), "bold"), (f"·{token}", "dim"))
            if pos == view.token:
                chip.stylize("reverse")
                chip = Text("▸") + chip
            else:
                chip = Text(" ") + chip
            text.append_text(chip)
            text.append(" ")
        self.show_content(text, (text.cell_len, self.size.width))
