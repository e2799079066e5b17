"""`tutor` with no command: the app. The only command that imports Textual."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from tutor.commands.common import fail

if TYPE_CHECKING:
    from model import GPT

# A shipped model `tutor serve`'s fork server loaded before it forked this tutor (tutor/fork_server.py): its pages
# are shared with the other tabs' tutors until one writes to them. Taken once; a later load reads the file again.
PRELOADED: dict[str, GPT] = {}


def run(args: argparse.Namespace) -> int:
    """The app; with no --model it resumes the learner's last model, else the one asked for."""
    from tutor.process_tuning import collector_paused

    with collector_paused():  # until the first frame: what the start builds stays (tutor/process_tuning.py)
        return start_app(args)


def start_app(args: argparse.Namespace) -> int:
    import model

    try:
        gpt = PRELOADED.pop(args.model or "tiny", None) or model.load(args.model or "tiny")
    except model.WeightsError as error:
        return fail(str(error))
    in_browser = os.environ.get("TEXTUAL_DRIVER", "").startswith("textual.drivers.web_driver")  # `tutor serve`'s tab
    if not in_browser and (not sys.stdout.isatty() or not sys.stdin.isatty()):
        return fail("tutor needs a terminal; for plain output try: tutor trace TEXT")
    if in_browser:
        from tutor.process_tuning import hang_up_with_parent

        hang_up_with_parent()  # a killed server leaves no tutor behind (it saves and leaves on SIGHUP)
    from pathlib import Path

    from tutor.process_tuning import import_asyncio_without_tls

    import_asyncio_without_tls()  # before Textual: the app opens no TLS connection (tutor/process_tuning.py)
    from tutor.app import TutorApp
    from tutor.lessons.course import lessons_folder
    from tutor.model_words import describe_checkpoint
    from tutor.process_tuning import freeze_imports

    freeze_imports()  # they stay for the session: no pass need look for garbage among them

    app = TutorApp(gpt, args.lang, resume_model=args.model is None, course=lessons_folder(args.lessons))
    if args.model and args.model not in model.shipped_models() and Path(args.model).expanduser().is_file():
        app.model_notice = describe_checkpoint(Path(args.model).expanduser(), args.lang)  # its recipe, once
    app.run()
    if app.store.failing:  # the last save, on the way out, failed too: the notice went with the screen
        from tutor.progress import WORDS, pick

        return fail(pick(WORDS, "not_saved_on_exit", args.lang, path=app.store.path))
    return app.return_code or 0  # 1 after a crash (Textual has shown the traceback): not a clean exit
