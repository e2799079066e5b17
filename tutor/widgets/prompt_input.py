"""The prompt box: Textual's Input, drawn in the same frame as the numbers its text leads to."""

from __future__ import annotations

from collections.abc import Callable

from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Input


class PromptInput(Input):
    """Textual's Input with three changes:

    - The focus coming back (a screen closed, F3, Esc) leaves the text and the cursor as they were: Input
      would select all of it, and the next key typed would replace the whole prompt.
    - `on_value` is called the moment the text changes, inside the keystroke, rather than when the
      `Changed` message comes round: the character and the model's numbers then share one frame.
    - Input sets its virtual width to the text's on each change, and a virtual size asks for a
      layout of the whole screen. The box's own size never depends on its text: a repaint will do.
    """

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    def __init__(self, *, on_value: Callable[[str], None] | None = None, **kwargs: object) -> None:
        kwargs.setdefault("select_on_focus", False)
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.on_value = on_value

    def watch_value(self, value: str) -> None:
        if self.on_value is not None:
            self.on_value(value)
