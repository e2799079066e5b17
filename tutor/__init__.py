"""tutor: a terminal tutor for the inside of a GPT."""

__version__ = "0.1.0"
