"""The prompt as tokens: text, id and position, with the token cursor lit."""

from __future__ import annotations

from rich.text import Text

from tutor.i18n import t
from tutor.number_style import visible_piece
from tutor.view import View
from tutor.widgets.live_static import LiveStatic

MAX_LINES = 4


class TokenStrip(LiveStatic):
    DEFAULT_CSS = "TokenStrip { height: auto; max-height: 4; padding: 0 1; }"

    _made_from: tuple[object, ...] | None = None  # everything the strip shown was made from

    def show(self, view: View) -> None:
        width = self.size.width - 2
        trace = view.trace
        made_from = (view.lang, width, view.token, trace.dropped, tuple(trace.tokens), tuple(trace.pieces))
        if made_from == self._made_from:
            return  # a step key: the same tokens, made again for nothing (~0.3 ms at 19 tokens)
        self._made_from = made_from
        text = Text(no_wrap=False)
        lines_left = MAX_LINES
        if view.trace.dropped:  # first, so that it shows even when the tokens fill the strip
            notice = Text(t("dropped", view.lang, n=view.n_tokens, d=view.trace.dropped), style="bold yellow")
            # as many lines as it takes at this width (two at 80 columns): the tokens get the rest
            notice_lines = list(notice.wrap(self.app.console, width, overflow="fold")) if width > 0 else [notice]
            notice_lines = notice_lines[: MAX_LINES - 1]
            text.append_text(Text("\n").join(notice_lines))
            text.append("\n")
            lines_left -= len(notice_lines)
        if not view.n_tokens:
            text.append(t("empty_prompt", view.lang), style="italic")
        chips: list[Text] = []
        for pos, (token, piece) in enumerate(zip(view.trace.tokens, view.trace.pieces, strict=True)):
            chip = Text.assemble((f"{pos}", "dim"), " ", (visible_piece(piece), "bold"), (f"·{token}", "dim"))
            if pos == view.token:
                chip.stylize("reverse")
                chip = Text("▸") + chip
            else:
                chip = Text(" ") + chip
            chips.append(chip + Text(" "))
        lines = wrap_chips(chips, width) if width > 0 else [chips]
        if len(lines) > lines_left:  # a long prompt: the lines around the token cursor
            here = next(i for i, line in enumerate(lines) if any(c.plain.startswith("▸") for c in line))
            first = max(0, min(here - lines_left // 2, len(lines) - lines_left))
            lines = lines[first : first + lines_left]
        if chips:
            # the lines as wrap_chips made them: left to Rich's word wrap, a chip broke at its inner spaces
            # ("5 只" on one line, "·408" on the next, at 60 columns)
            text.no_wrap = True
            text.append_text(Text("\n").join(Text("").join(line) for line in lines))
        height = (MAX_LINES - lines_left) + (len(lines) if chips else 1)
        self.show_content(text, min(height, MAX_LINES))  # a new token rarely adds a line: no re-layout then


def wrap_chips(chips: list[Text], width: int) -> list[list[Text]]:
    """Chips in lines of at most `width` cells, never splitting one."""
    lines: list[list[Text]] = [[]]
    used = 0
    for chip in chips:
        size = chip.cell_len
        if lines[-1] and used + size - 1 > width:  # the trailing gap may hang past the edge
            lines.append([])
            used = 0
        lines[-1].append(chip)
        used += size
    return lines
