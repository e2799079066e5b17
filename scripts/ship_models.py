"""Train every variant by the same recipe and put the models where `model.load(name)` finds them.

    python scripts/ship_models.py                       # all variants → model/weights/, tables to stdout
    python scripts/ship_models.py --variants tiny nope --steps 200 --dest /tmp/ship
    python scripts/ship_models.py --tables-only         # the tables of what model/weights/ holds now
    python scripts/ship_models.py --jobs 2              # two trainings at a time (one BLAS thread each)

Each variant trains with `tutor train --variant NAME --out WORK/NAME.safetensors` (a run that was
stopped resumes), then its model file is copied to DEST — float32, or float16 if float32 would
pass the 3 MB budget; the optimizer state stays in WORK. Prints two markdown tables: every
variant's validation loss beside the unigram and bigram baselines, and the depth table (the
per-layer figures `tutor train` records at initialisation and at the end, `model/depth.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from model.train import RECIPES  # noqa: E402

VARIANTS = tuple(RECIPES)
BUDGET = 3 * 1024 * 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS, metavar="NAME")
    parser.add_argument("--steps", type=int, help="steps per variant (default: the recipe's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="trainings at a time (default 1)")
    parser.add_argument("--tables-only", action="store_true", help="train nothing: print the tables of DEST")
    parser.add_argument(
        "--work", type=Path, default=ROOT / "build" / "training", help="checkpoints and optimizer state"
    )
    parser.add_argument("--dest", type=Path, default=ROOT / "model" / "weights", help="where the shipped models go")
    args = parser.parse_args()
    args.dest.mkdir(parents=True, exist_ok=True)

    if not args.tables_only:
        args.work.mkdir(parents=True, exist_ok=True)
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            codes = list(pool.map(lambda name: train(name, args), args.variants))
        if any(codes):
            return 1
        for name in args.variants:
            ship(args.work / f"{name}.safetensors", args.dest / f"{name}.safetensors")
    records = [record(args.dest / f"{name}.safetensors") for name in args.variants]
    print(loss_table([r for r in records if r is not None]))
    print()
    print(depth_table([r for r in records if r is not None]))
    return 0


def train(name: str, args: argparse.Namespace) -> int:
    checkpoint = args.work / f"{name}.safetensors"
    command = [sys.executable, "-m", "tutor", "train", "--variant", name, "--out", str(checkpoint)]
    command += ["--seed", str(args.seed)] + (["--steps", str(args.steps)] if args.steps else [])
    if checkpoint.exists():
        command.append("--resume")
    print("$", " ".join(command[1:]), file=sys.stderr)
    log = args.work / f"{name}.log"
    with log.open("w") as out:
        code = subprocess.run(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=os.environ).returncode
    print(f"{name}: {log.read_text().strip().splitlines()[-1]}", file=sys.stderr)
    return code


def ship(checkpoint: Path, dest: Path) -> None:
    """Copy the model file (float16 if float32 is over budget)."""
    import numpy as np

    from model.weights import load_checkpoint, save_checkpoint

    config, params, tokenizer, metadata = load_checkpoint(checkpoint)
    if checkpoint.stat().st_size <= BUDGET:
        shutil.copyfile(checkpoint, dest)
    else:
        extra = {k: v for k, v in metadata.items() if k not in {"format", "config", "tokenizer", "trained"}}
        save_checkpoint(dest, config, params, tokenizer, trained=True, dtype=np.float16, metadata=extra)


def record(path: Path) -> tuple[str, dict, int] | None:
    from model.weights import read_safetensors

    if not path.is_file():
        return None
    _, metadata = read_safetensors(path)
    return metadata["name"], json.loads(metadata["training"]), path.stat().st_size


def loss_table(records: list[tuple[str, dict, int]]) -> str:
    lines = [
        "| variant | blocks × d | validation loss | unigram | bigram | steps | training time | file |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, info, size in records:
        base, recipe = info["baselines"], info["recipe"]
        diverged = f" (diverged at step {info['diverged']['step']})" if info.get("diverged") else ""
        lines.append(
            f"| `{name}` | {recipe['n_layers']} × {recipe['d_model']} | {info['val_loss'][-1][1]:.3f}{diverged} "
            f"| {base['unigram']:.3f} | {base['bigram']:.3f} | {info['step']} | {info['seconds'] / 60:.1f} min "
            f"| {size / 1e6:.2f} MB |"
        )
    return "\n".join(lines)


def depth_table(records: list[tuple[str, dict, int]]) -> str:
    """Per variant, at init → trained: ‖x‖ after the first and the last block, ‖∂L/∂θ‖ of block 0 and
    of the last block, and the mean cosine similarity between positions after the last block."""
    lines = [
        "| variant | ‖x‖ block 0 | ‖x‖ last block | ‖∂L/∂θ‖ block 0 | ‖∂L/∂θ‖ last block "
        "| cos between positions, last block |",
        "|---|---|---|---|---|---|",
    ]

    def pair(key: str, index: int, depth: dict, digits: str) -> str:
        return f"{depth['init'][key][index]:{digits}} → {depth['trained'][key][index]:{digits}}"

    for name, info, _ in records:
        depth = info.get("depth")
        if depth is None:
            continue
        lines.append(
            f"| `{name}` | {pair('stream_norm', 1, depth, '.1f')} | {pair('stream_norm', -1, depth, '.1f')} "
            f"| {pair('param_grad', 0, depth, '.3g')} | {pair('param_grad', -1, depth, '.3g')} "
            f"| {pair('similarity', -1, depth, '.3f')} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
