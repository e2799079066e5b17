"""What the screens ask of the app that hosts them: the learner's progress, the lessons, the links to follow.

The app decides what opens (a lesson, an experiment, a quiz) and tells the screens what to show: a screen
asks (up), the app shows (down), never round again.

A typed interface instead of reaching into the app's attributes: `TutorApp` is one `Host`, and a test
may stand in another."""

from __future__ import annotations

from typing import Any, Protocol


class Host(Protocol):
    def remember(self, **changes: Any) -> None:
        """Keep where the learner is (lesson, step, prompt, model, view, …) for the next session."""

    def lesson_is_done(self, lesson_id: str) -> bool: ...

    def lesson_read(self, lesson_id: str) -> None:
        """The learner has seen the lesson's last line."""

    def practice_items(self) -> list[tuple[str, str]]:
        """(label, tutor: link) for the practice menu."""
        ...

    async def follow_href(self, href: str) -> None:
        """A link the learner chose (F9, F10): the app follows every link, and tells the screens what to show."""

    async def step_lesson(self, delta: int) -> None: ...

    def show_model(self, name: str) -> None:
        """Back on the main screen with shipped variant `name` loaded (an experiment's "open it there")."""

    def action_lessons(self) -> None: ...

    def action_toggle_language(self) -> None: ...
