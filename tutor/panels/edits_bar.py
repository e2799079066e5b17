"""The edits bar: what the learner has changed in the model (each one taken back by a click), and what that
changed — the prompt's loss, the size of what the step on screen writes, the next-token guesses — edited
against clean. Shown only while the pass on screen is an edited run."""

from __future__ import annotations

from textual.content import Content
from textual.markup import escape

from tutor.edits import differences
from tutor.i18n import Words, say
from tutor.number_style import visible_piece
from tutor.view import View
from tutor.widgets.live_static import LiveStatic

ROOM_FOR_KEYS = 110  # cells: narrower (80×24), the keys are left to the help screen and the notices

WORDS: dict[str, Words] = {
    "title": ("What if", "假如"),
    "keys": (
        "alt+x: take out / put back at this step · alt+p: patch · alt+X: all back",
        "alt+x：拿掉 / 放回这一步 · alt+p：替换 · alt+X：全部撤回",
    ),
    "loss": ("loss", "损失"),
    "norm": ("‖{hook}‖ at “{token}” {change}", "“{token}”处的 ‖{hook}‖ {change}"),
    "guesses": ("after “{token}”: p {guesses}", "“{token}”后面的 p：{guesses}"),
    "unfit": ("does not fit: {why}", "用不上：{why}"),
    "none_fit": (
        "no edit fits this model and prompt: the clean run is shown",
        "没有一处改动适用于这个模型和提示词：显示的是原样的计算",
    ),
}


def signed(value: float) -> str:
    return f"{value:+.2f}".replace("-", "−")


def change(clean: float, edited: float, digits: int = 2) -> str:
    """ "0.84 → 6.23 (+5.39)": the clean value, the edited one, and the difference edited − clean."""
    return f"{clean:.{digits}f} → {edited:.{digits}f} ({signed(edited - clean)})"


class EditsBar(LiveStatic):
    """A few lines above the panels: the edits (a click takes one back), then edited against clean."""

    _rows = 0  # the height it has while shown: it grows to what the text needs and does not shrink back

    def show(self, view: View) -> None:
        edited = view.edited
        self.display = edited is not None
        if edited is None:
            self._rows = 0
            return
        lang = view.lang
        unfit = {edit for edit, _ in edited.unfit}
        items = []
        for index, edit in enumerate(edited.asked):
            words = escape(edit.words(lang))
            look = "dim strike" if edit in unfit else "b"
            items.append(f"[@click=screen.remove_edit({index})][{look}]✕ {words}[/][/]")
        keys = f"  [dim]{say(WORDS['keys'], lang)}[/]" if self.available_width >= ROOM_FOR_KEYS else ""  # else F1's
        lines = [f"[reverse] {say(WORDS['title'], lang)} [/] " + " · ".join(items) + keys]
        for edit, why in edited.unfit:
            lines.append(f"[$warning]⚠ {escape(edit.link())} {escape(say(WORDS['unfit'], lang, why=why))}[/]")
        if len(edited.unfit) == len(edited.asked):
            lines.append(f"[dim]{say(WORDS['none_fit'], lang)}[/]")
        else:
            lines.append(self.change_line(view))
        content = Content.from_markup("\n".join(lines))
        # a line less would lay the whole screen out again on the next key that adds it back (an edit toggled
        # on and off at each step): the bar keeps its rows while it is shown
        rows = max(self._rows, content.get_height({}, max(1, self.available_width)))
        if rows != self._rows:
            self._rows = rows
            self.styles.height = rows
        self.show_content(content, rows)

    def change_line(self, view: View) -> str:
        """Edited against clean at the step and token on screen; every number is from the two traces."""
        assert view.edited is not None
        found = differences(view.gpt, view.trace, view.edited.clean, view.step, view.token)
        lang = view.lang
        token = escape(visible_piece(view.trace.pieces[view.token]))
        parts = []
        if found.loss is not None:
            parts.append(f"{say(WORDS['loss'], lang)} {change(*found.loss)}")
        parts.append(say(WORDS["norm"], lang, hook=escape(found.hook), token=token, change=change(*found.norm)))
        guesses = ", ".join(f"“{escape(visible_piece(g.piece))}” {change(g.clean, g.edited)}" for g in found.guesses)
        parts.append(say(WORDS["guesses"], lang, token=token, guesses=guesses))
        return " · ".join(parts)
