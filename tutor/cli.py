"""The `tutor` command's front door: the parser, the process settings, and one line for any error.
The commands themselves are in tutor/commands/. Only the app itself imports Textual, so `--help`,
`--version` and `tutor trace` start fast and work where no terminal UI can."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from tutor import __version__
from tutor.commands import add_commands, run
from tutor.commands.common import fail
from tutor.language import LANGUAGES, detect_language
from tutor.process_tuning import keep_freed_memory

# Textual draws at most this many frames a second (its default, 60, is TEXTUAL_FPS). A frame waits for the
# next tick of that clock, so a character typed just after the panels drew waits up to a tick: at 120 it is
# 8 ms, not 17, of the 33 ms a keystroke may take. Frames only come when something changed: no more bytes.
FRAMES_PER_SECOND = "120"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tutor",
        description="See the inside of a GPT while you read about it.",
    )
    parser.add_argument("--version", action="version", version=f"tutor {__version__}")
    parser.add_argument(
        "--model",
        help="shipped model name, path to a .safetensors file or a Hugging Face folder (GPT-2, or Llama, Qwen2 or "
        "Mistral), or a GPT-2 name in the local Hugging Face cache such as gpt2 (default: the app resumes the last "
        "model you used, else tiny; trace's default is tiny)",
    )
    parser.add_argument("--lang", choices=LANGUAGES, help="language of lessons and labels (default: from the locale)")
    parser.add_argument(
        "--lessons",
        metavar="DIR",
        help="a teacher's lessons folder (default: $TUTOR_LESSONS, else the shipped lessons): DIR/en/ and DIR/zh/, "
        "or only one of them, whose lessons then show in both languages' sessions. They replace the shipped "
        "lessons, or come after them if DIR/course.toml says after_shipped = true. A folder that gives no lessons "
        "leaves the shipped ones, with a notice. Check it with: tutor lessons --check DIR (content/README.md "
        "is the author's guide)",
    )
    add_commands(parser)
    return parser


def use_utf8_terminals() -> None:
    """Write UTF-8 to terminals even when the locale says otherwise (LANG=C over SSH is common and the
    terminal itself is nearly always UTF-8); elsewhere keep the encoding and escape what it cannot hold."""
    for stream in {sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__}:
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        if stream is None or encoding == "utf8" or not hasattr(stream, "reconfigure"):
            continue
        try:
            if stream.isatty():
                stream.reconfigure(encoding="utf-8", errors="replace")
            else:
                stream.reconfigure(errors="backslashreplace")
        except (OSError, ValueError):
            pass


def preset_environment() -> None:
    """What must be set before NumPy and Textual load (each reads it once): one BLAS thread (the model's matrices
    are small, a second thread only adds overhead, and a lab machine runs thirty of these at once) and the frame
    rate. Also called by the fork server (tutor/fork_server.py) before it loads what its tutors share."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    os.environ.setdefault("TEXTUAL_FPS", FRAMES_PER_SECOND)


def main(argv: Sequence[str] | None = None) -> int:
    preset_environment()
    keep_freed_memory()  # each keystroke's trace reuses the last one's memory (tutor/process_tuning.py)
    use_utf8_terminals()
    args = build_parser().parse_args(argv)
    args.lang = args.lang or detect_language()
    try:
        return run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `tutor trace ... | head`
        sys.stderr.close()
        return 0
    except Exception as error:  # a bug: one line for the learner, the traceback on request
        if os.environ.get("TUTOR_DEBUG"):
            raise
        return fail(f"internal error: {type(error).__name__}: {error} (run with TUTOR_DEBUG=1 for details)")
