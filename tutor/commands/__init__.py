"""The `tutor` command's subcommands, one module each, registered one way.

Every module in `COMMANDS` has `HELP` and `DESCRIPTION` (for `tutor --help` and its own), `add_arguments(parser)`
and `run(args) -> int`; `app` is what runs with no command. A module imports only argparse-level names at its
top and the rest inside `run`, so that building the parser (which `tutor --help` and every start do) stays fast
and `tutor trace` never loads Textual. Shared bits (`fail`, `confirmed`) are in `tutor.commands.common`.
"""

from __future__ import annotations

import argparse
import importlib
import keyword
from types import ModuleType

# in the order `tutor --help` lists them
COMMANDS = ("trace", "lessons", "train", "sweep", "exercises", "progress", "class", "serve", "convert")
DEFAULT = "app"  # no command: the app itself


def load(name: str) -> ModuleType:
    """The module of command `name` (one of `COMMANDS`, or `DEFAULT`); `class`'s is `class_` (a keyword)."""
    return importlib.import_module(f"{__name__}.{name}{'_' if keyword.iskeyword(name) else ''}")


def add_commands(parser: argparse.ArgumentParser) -> None:
    """One subparser per command, each filled in by its own module."""
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = load(name)
        module.add_arguments(commands.add_parser(name, help=module.HELP, description=module.DESCRIPTION))


def run(args: argparse.Namespace) -> int:
    return load(args.command or DEFAULT).run(args)
