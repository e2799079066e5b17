"""A frame that repaints part of the screen draws only the pieces of lines it sends.

Textual's `Compositor.render_partial_update` takes the box around every changed region and asks every widget in
that box for all of its lines (`_get_renders`); then, on each line with any change, it cuts every widget's line
at every widget edge (`Strip.divide`), keeping the front-most piece, and the frame sends only the changed spans.
On a step key that box is most of the screen: the lesson beside the panels (which did not change), the
containers behind every panel (hidden by their children), every scrollbar, each drew and was cut up on every
changed line: about a third of the frame's drawing, for pieces no terminal ever got.

Here the frame first lists the pieces it will send (those `ChopsUpdate` writes: a piece between two cuts that
overlaps a changed span), then goes through the widgets front to back as Textual does and asks each only for
the lines where it still has a piece to give, stopping once every piece is filled. A piece it sends is the
same piece (the same widget, the same line cut at the same edges); the pieces it leaves empty are those
`ChopsUpdate` skips anyway. Full frames (`render_full_update`, screenshots) are Textual's own.
"""

from __future__ import annotations

from itertools import pairwise

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.strip import Strip


def wanted_chops(
    compositor: Compositor, crop: Region, spans: list[tuple[int, int, int]]
) -> list[dict[int, Strip | None]]:
    """Per screen line, the piece at each cut: filled where a span is sent, else None (not sent)."""
    cuts = compositor.cuts
    chops: list[dict[int, Strip | None]] = [dict.fromkeys(cut_set[:-1]) for cut_set in cuts]
    wanted: dict[int, set[int]] = {}  # line → the cuts whose piece a span writes and no widget has given yet
    for y, x1, x2 in spans:
        if not 0 <= y < len(cuts):
            continue
        line_cuts = cuts[y]
        pieces = wanted.setdefault(y, set())
        for x, end in pairwise(line_cuts):
            if not (x > x2 or end <= x1):  # ChopsUpdate's test for a piece it writes
                pieces.add(x)
    wanted = {y: pieces for y, pieces in wanted.items() if pieces}
    crop_overlaps = crop.overlaps
    for widget, (region, clip) in compositor.visible_widgets.items():  # front-most first: the first piece wins
        if not wanted:
            break
        if not crop_overlaps(clip):
            continue
        render_region = region.intersection(clip)
        if not render_region:
            continue
        first_cut, last_cut = render_region.column_span
        lines = [
            y
            for y in render_region.line_range
            if (left := wanted.get(y)) and any(first_cut <= cut < last_cut for cut in left)
        ]
        if not lines:
            continue
        top, bottom = lines[0], lines[-1]
        strips = widget.render_lines(
            Region(render_region.x - region.x, top - region.y, render_region.width, bottom - top + 1)
        )
        render_x = render_region.x
        for y in lines:
            final_cuts = [cut for cut in cuts[y] if last_cut >= cut >= first_cut]
            pieces = wanted[y]
            chops_line = chops[y]
            divided = strips[y - top].divide([cut - render_x for cut in final_cuts[1:]])
            for cut, piece in zip(final_cuts, divided, strict=False):  # the last cut is the widget's end: no piece
                if cut in pieces:
                    chops_line[cut] = piece
                    pieces.discard(cut)
            if not pieces:
                del wanted[y]
    return chops


def render_partial_update(self: Compositor) -> ChopsUpdate | None:
    """As Textual's (textual/_compositor.py), with `wanted_chops` in place of `_render_chops`."""
    screen_region = self.size.region
    update_regions = self._dirty_regions.copy()
    self._dirty_regions.clear()
    if not update_regions:
        return None
    crop = Region.from_union(update_regions).intersection(screen_region)
    spans = list(self._regions_to_spans(update_regions))
    chops = wanted_chops(self, crop, spans)
    chop_ends = [cut_set[1:] for cut_set in self.cuts]
    return ChopsUpdate(chops, spans, chop_ends)


def install() -> None:
    """Process-wide, once."""
    if getattr(Compositor.render_partial_update, "_tutor_dirty_spans", False):
        return
    render_partial_update._tutor_dirty_spans = True  # type: ignore[attr-defined]
    render_partial_update.__wrapped__ = Compositor.render_partial_update  # type: ignore[attr-defined]
    Compositor.render_partial_update = render_partial_update  # type: ignore[method-assign]
