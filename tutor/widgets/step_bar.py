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


class StepBar(Widget):
    """Two lines: block markers above, one chip per step below (Line API: it redraws two lines)."""

    DEFAULT_CSS = "StepBar { height: 2; }"

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.steps: tuple[Step, ...] = ()
        self.current = 0
        self._offset = 0

    def show(self, steps: tuple[Step, ...], current: int) -> None:
        self.steps, self.current = steps, current
        self.refresh()

    def _chips(self) -> list[tuple[int, str, Step]]:
        chips, x = [], 0
        for step in self.steps:
            label = f" {short_name(step)} "
            chips.append((x, label, step))
            x += len(label) + 1
        return chips

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        chips = self._chips()
        if not chips:
            return Strip.blank(width, base)
        start, label, _ = chips[self.current]
        if start < self._offset:  # keep the current chip in view, with a little context
            self._offset = max(0, start - 8)
        elif start + len(label) > self._offset + width:
            self._offset = start + len(label) - width + 8
        segments: list[Segment] = []
        if y == 0:
            line = [" "] * (chips[-1][0] + len(chips[-1][1]) + 1)
            seen: set[int] = set()
            for x, _, step in chips:
                if step.block is not None and step.block not in seen:
                    seen.add(step.block)
                    for k, ch in enumerate(f"B{step.block}"):
                        line[x + 1 + k] = ch
            segments.append(Segment("".join(line), base + Style(dim=True, bold=True)))
        else:
            for _x, label, step in chips:
                lit = step.index == self.current
                style = base + (Style(reverse=True, bold=True) if lit else Style(dim=step.kind == "residual"))
                segments += [Segment(label, style), Segment(" ", base)]
        return Strip(segments).crop(self._offset, self._offset + width).extend_cell_length(width, base)
