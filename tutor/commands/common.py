"""What the commands share: one way to report an error, one way to ask yes or no."""

from __future__ import annotations

import sys

YES = {"y", "yes", "是", "好"}


def fail(message: str, code: int = 1) -> int:
    """Print `tutor: error: message` on stderr; the exit code to return."""
    print(f"tutor: error: {message}", file=sys.stderr)
    return code


def confirmed(question: str) -> bool:
    """Ask a y/N question on the terminal; anything but yes (or end of input) is no."""
    try:
        answer = input(question)
    except EOFError:
        answer = ""
    return answer.strip().lower() in YES
