"""Train every variant by the same recipe and put the models where `model.load(name)` finds them.

    python scripts/ship_models.py                       # all variants → model/weights/, table to stdout
    python scripts/ship_models.py --variants tiny nope --steps 200 --dest /tmp/ship

Each variant trains with `tutor train --variant NAME --out WORK/NAME.safetensors` (a run that was
stopped resumes), then its model file is copied to DEST — float32, or float16 if float32 would
pass the 3 MB budget; the optimizer state stays in WORK. Prints the validation-loss table
(markdown) with the unigram and bigram baselines and each variant's training time.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ("tiny", "learned", "rope", "nope", "postnorm", "noresidual", "nonorm")
BUDGET = 3 * 1024 * 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS, metavar="NAME")
    parser.add_argument("--steps", type=int, help="steps per variant (default: the recipe's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--work", type=Path, default=ROOT / "build" / "training", help="checkpoints and optimizer state"
    )
    parser.add_argument("--dest", type=Path, default=ROOT / "model" / "weights", help="where the shipped models go")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    args.dest.mkdir(parents=True, exist_ok=True)

    rows = []
    for name in args.variants:
        checkpoint = args.work / f"{name}.safetensors"
        command = [sys.executable, "-m", "tutor", "train", "--variant", name, "--out", str(checkpoint)]
        command += ["--seed", str(args.seed)] + (["--steps", str(args.steps)] if args.steps else [])
        if checkpoint.exists():
            command.append("--resume")
        print("$", " ".join(command[1:]), file=sys.stderr)
        if subprocess.run(command, cwd=ROOT).returncode != 0:
            return 1
        rows.append(ship(checkpoint, args.dest / f"{name}.safetensors"))

    print("| variant | validation loss | unigram | bigram | steps | training time | file |")
    print("|---|---|---|---|---|---|---|")
    for name, info, size in rows:
        base = info["baselines"]
        print(
            f"| `{name}` | {info['val_loss'][-1][1]:.3f} | {base['unigram']:.3f} | {base['bigram']:.3f} "
            f"| {info['step']} | {info['seconds'] / 60:.1f} min | {size / 1e6:.2f} MB |"
        )
    return 0


def ship(checkpoint: Path, dest: Path) -> tuple[str, dict, int]:
    """Copy the model file (float16 if float32 is over budget) and return its training record."""
    import numpy as np

    from model.weights import load_checkpoint, save_checkpoint

    config, params, tokenizer, metadata = load_checkpoint(checkpoint)
    if checkpoint.stat().st_size <= BUDGET:
        shutil.copyfile(checkpoint, dest)
    else:
        extra = {k: v for k, v in metadata.items() if k not in {"format", "config", "tokenizer", "trained"}}
        save_checkpoint(dest, config, params, tokenizer, trained=True, dtype=np.float16, metadata=extra)
    return metadata["name"], json.loads(metadata["training"]), dest.stat().st_size


if __name__ == "__main__":
    sys.exit(main())
