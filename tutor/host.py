"""What the main screen asks of the app that hosts it: the learner's progress, the lessons, the other screens.

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

    async def open_lesson(self, lesson_id: str | None, heading: str | None = None, resume: bool = False) -> None: ...

    async def step_lesson(self, delta: int) -> None: ...

    def open_experiment(self, name: str, options: dict[str, str] | None = None) -> None: ...

    def open_exercise(self, name: str) -> None: ...

    def show_model(self, name: str) -> None:
        """Back on the main screen with shipped variant `name` loaded (an experiment's "open it there")."""

    def open_quiz(self, lesson_id: str) -> None: ...

    def open_answer(self, lesson_id: str, n: str) -> None:
        """Exercise `n`'s hint, its answer a key away."""

    def action_lessons(self) -> None: ...

    def action_toggle_language(self) -> None: ...
