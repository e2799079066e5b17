"""What the main screen's window shows: the lesson, the panels, or both side by side — one record, from which
the screen writes app.tcss's classes (and never reads them back)."""

from __future__ import annotations

from dataclasses import dataclass, replace

MIN_WIDTH, MIN_HEIGHT = 60, 16  # under this, one line asks for a bigger window
COMPACT_WIDTH = 110  # below this the lesson and the panels take turns
WIDE_WIDTH = 170  # from here the residual chart and the next-token guess stay in view beside the tabs


@dataclass(frozen=True)
class Layout:
    """The window's size and the F3 switch. In a small (compact) window F3 swaps the lesson in for the panels;
    in a wide one it hides the lesson, so the panels take the whole width."""

    # before the first resize: none of the classes below, as app.tcss lays out by default
    width: int = COMPACT_WIDTH
    height: int = MIN_HEIGHT
    swapped: bool = False  # F3 pressed (an odd number of times): app.tcss's "-lesson"
    from_start: bool = False  # a small window shows the lesson because it started so (not by F3)

    @property
    def too_small(self) -> bool:
        return self.width < MIN_WIDTH or self.height < MIN_HEIGHT

    @property
    def compact(self) -> bool:
        return self.width < COMPACT_WIDTH

    @property
    def wide(self) -> bool:
        """The residual table and the next-token guess beside the tabs, always in view."""
        return self.width >= WIDE_WIDTH

    @property
    def lesson_shown(self) -> bool:
        return self.swapped == self.compact

    @property
    def panels_shown(self) -> bool:
        return not (self.compact and self.swapped)

    @property
    def lesson_only(self) -> bool:
        """A small window showing the lesson (F3 swaps the panels in)."""
        return self.compact and self.swapped and not self.too_small

    def resized(self, width: int, height: int, start_on_lesson: bool = False) -> Layout:
        """The window at its new size. `start_on_lesson`: the first layout of a small window is the lesson; a
        lesson shown so goes when the window grows wide enough for both (F3 has not been pressed since)."""
        layout = replace(self, width=width, height=height)
        if start_on_lesson and layout.compact:
            return replace(layout, swapped=True, from_start=True)
        if self.from_start and not layout.compact:
            return replace(layout, swapped=False, from_start=False)
        return layout

    def toggled(self) -> Layout:
        """F3."""
        return replace(self, swapped=not self.swapped, from_start=False)

    def classes(self) -> dict[str, bool]:
        """app.tcss's classes for the screen."""
        return {"-too-small": self.too_small, "-compact": self.compact, "-wide": self.wide, "-lesson": self.swapped}
