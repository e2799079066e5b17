"""Every sublayer step of the pass in one strip, the current one lit; it scrolls to keep it in view."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

from model import Step

SHORT = {
    "embed": "emb",
    "ln1": "LN1",
    "attn": "attn",
    "attn_add": "+",
    "ln2": "LN2",
    "mlp": "MLP",
    "mlp_add": "+",
    "ln_final": "LNf",
    "unembed": "out",
}


def short_name(step: Step) -> str:
    return SHORT.get(step.name.rsplit(".", 1)[-1], step.name)


CONTEXT = 2  # chips kept in view on either side of the current one, where there are that many


class StepBar(Widget):
    """Two lines: block markers above, one chip per step below (Line API: it redraws two lines).

    It scrolls by whole chips: the strip shows the chips from `_first` on that fit whole, never a cut
    name ("N1 " of " LN1 "); ‹ and › say that more steps lie to the left or right."""

    DEFAULT_CSS = "StepBar { height: 2; }"

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.steps: tuple[Step, ...] = ()  # in the order the chips are drawn
        self.current = 0  # the lit chip's place in that order
        self._first = 0  # the first chip in view

    def show(self, steps: tuple[Step, ...], current: int, backward: bool = False) -> None:
        """The chips of `steps`, step `current` lit; `backward`: from the unembedding back to the embedding."""
        order = tuple(reversed(steps)) if backward else steps
        lit = len(steps) - 1 - current if backward else current
        if order == self.steps and lit == self.current:
            return  # a typed key: the same steps, the same one lit (a resize or a new style redraws by itself)
        if order != self.steps:
            self._first = 0  # turned round: the strip starts again from its own beginning
        self.steps, self.current = order, lit
        self.refresh()

    def _chips(self) -> list[tuple[int, str, Step]]:
        chips, x = [], 0
        for step in self.steps:
            label = f" {short_name(step)} "
            chips.append((x, label, step))
            x += len(label) + 1
        return chips

    @staticmethod
    def _fitting(chips: list[tuple[int, str, Step]], first: int, room: int) -> int:
        """The end (exclusive) of the chips from `first` on that fit whole in `room` cells."""
        start, end = chips[first][0], first
        while end < len(chips) and chips[end][0] + len(chips[end][1]) - start <= room:
            end += 1
        return max(end, first + 1)  # one chip at least, even in a strip narrower than it

    def window(self, width: int) -> tuple[int, int]:
        """The chips in view, [first, end), with the current one and up to CONTEXT on each side of it."""
        chips = self._chips()
        if self._fitting(chips, 0, width) == len(chips):
            self._first = 0
            return 0, len(chips)
        room = max(1, width - 2)  # a cell for ‹ and one for ›
        current = min(self.current, len(chips) - 1)
        first = min(self._first, len(chips) - 1)
        if current - CONTEXT < first:  # scrolled back: the current chip and its context on the left
            first = max(0, current - CONTEXT)
        while first < current and self._fitting(chips, first, room) < min(len(chips), current + 1 + CONTEXT):
            first += 1  # scrolled on: the current chip and its context on the right
        while first > 0 and self._fitting(chips, first - 1, room) == len(chips):
            first -= 1  # at the end: as many chips as fit, no blank after the last one
        self._first = first
        return first, self._fitting(chips, first, room)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        chips = self._chips()
        if not chips:
            return Strip.blank(width, base)
        first, end = self.window(width)
        shown = chips[first:end]
        start = shown[0][0]
        segments: list[Segment] = []
        scrolled = end - first < len(chips)
        if scrolled:
            segments.append(Segment("‹" if first > 0 and y == 1 else " ", base + Style(dim=True)))
        if y == 0:
            line = [" "] * (shown[-1][0] + len(shown[-1][1]) - start)
            seen: set[int] = set()  # each block in view is marked once, at its first chip in view
            for x, _, step in shown:
                if step.block is not None and step.block not in seen:
                    seen.add(step.block)
                    for k, ch in enumerate(f"B{step.block}"):
                        line[x - start + 1 + k] = ch
            segments.append(Segment("".join(line), base + Style(dim=True, bold=True)))
        else:
            for i, (_x, label, step) in enumerate(shown):
                lit = first + i == self.current
                style = base + (Style(reverse=True, bold=True) if lit else Style(dim=step.kind == "residual"))
                segments.append(Segment(label, style))
                if i < len(shown) - 1:
                    segments.append(Segment(" ", base))
        if scrolled:
            used = sum(len(segment.text) for segment in segments)
            segments.append(Segment(" " * max(0, width - 1 - used), base))
            segments.append(Segment("›" if end < len(chips) and y == 1 else " ", base + Style(dim=True)))
        return Strip(segments).crop(0, width).extend_cell_length(width, base)
