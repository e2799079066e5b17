"""The reference for the app's own figures: the smallest Textual app with a prompt, a panel and a footer.

Whatever `tutor` costs beyond this (start time, memory, latency, bytes) is ours; this much is Textual's.

    python -m tutor.bench.minimal_app
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Input, Static


class MinimalApp(App[None]):
    """An input whose text a panel echoes, and a step key that moves a counter in the panel."""

    BINDINGS = [Binding("down", "step(1)", "Step", priority=True), Binding("up", "step(-1)", "Back", priority=True)]

    def __init__(self) -> None:
        super().__init__()
        self.animation_level = "none"
        self.step = 0

    def compose(self) -> ComposeResult:
        yield Input(id="prompt")
        yield Static("Step 0 ready", id="panel")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        prompt = self.query_one(Input)
        prompt.cursor_blink = False
        prompt.focus()

    def refresh_panels(self) -> None:
        text = self.query_one(Input).value
        self.query_one("#panel", Static).update(f"Step {self.step} ready · {len(text)} characters: {text}")

    def on_input_changed(self) -> None:
        self.refresh_panels()

    def action_step(self, delta: int) -> None:
        self.step += delta
        self.refresh_panels()


if __name__ == "__main__":
    MinimalApp().run()
