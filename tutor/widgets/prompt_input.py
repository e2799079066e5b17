"""The prompt box: Textual's Input, without a layout of the whole screen on every character."""

from __future__ import annotations

from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Input


class PromptInput(Input):
    """Input sets its virtual width to the text's on each change, and a virtual size asks for a layout of
    the whole screen. The box's own size never depends on its text, so a repaint is all it needs."""

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)
