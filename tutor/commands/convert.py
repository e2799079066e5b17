"""`tutor convert FOLDER OUT`: a float32 copy of a Hugging Face model folder, which every tutor on a machine shares."""

from __future__ import annotations

import argparse
from pathlib import Path

from tutor.commands.common import fail

HELP = "for teachers: write a float32 copy of a bf16/f16 model folder, which every tutor on the machine shares"
DESCRIPTION = (
    "A tutor widens bf16 or f16 weights into its own float32 copy as it loads them (Qwen2-0.5B: 2 GB for each "
    "learner), while a float32 file is memory-mapped and read by every tutor on the machine from one copy. "
    "Write the copy once, somewhere every learner can read (for example /opt/models/NAME, then chmod -R a+rX), "
    "and have learners open it with tutor --model /opt/models/NAME."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", metavar="FOLDER", help="a Hugging Face folder (Llama, Qwen2, Mistral or GPT-2)")
    parser.add_argument("out", metavar="OUT", help="the new folder to write (must not exist)")


def run(args: argparse.Namespace) -> int:
    import model
    from model.hf_gpt2 import write_float32_folder

    folder, out = Path(args.folder).expanduser(), Path(args.out).expanduser()
    if not folder.is_dir():
        return fail(f"{folder}: not a folder")
    try:
        model.hf_family(folder)  # a config the tutor cannot open is refused here, before a byte is written
        written = write_float32_folder(folder, out)
    except model.WeightsError as error:
        return fail(str(error))
    except OSError as error:
        return fail(f"{out}: cannot write: {error.strerror or error}")
    print(f"{out}: float32 weights, {written / 2**30:.2f} GiB; open it with: tutor --model {out}")
    return 0
