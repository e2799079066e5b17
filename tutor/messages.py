"""Messages between the model worker, the screens and the app."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from model import GPT, Trace


@dataclass
class TraceReady(Message):
    """A forward pass finished in the worker for `prompt` on `gpt`."""

    prompt: str
    gpt: GPT
    trace: Trace
