"""Write `model/data/depth-seeds.jsonl.gz`: the depth family over seeds, in `tutor sweep`'s results format.

    for seed in 1 2; do for v in deep deep-postnorm deep-nonorm deep-nowarmup deep-postnorm-nowarmup; do
        tutor train --variant $v --seed $seed --out runs/$v-s$seed.safetensors; done; done
    python scripts/depth_seeds.py runs/

Seed 0 of each variant is the shipped checkpoint (model/weights/), seeds 1 and 2 are `runs/VARIANT-sSEED.safetensors`,
each the variant's own recipe, 3000 steps. The records are read from the checkpoints' training metadata
(`model.sweep.record_from_checkpoint`): these runs were trained before every step's growth figures were recorded,
so their growth lists hold None. `tutor sweep --grid depth` trains the same runs (bit for bit: watching changes no
weight) and records the growth too; it takes about 15 × 5 minutes on one core.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from model.sweep import FORMAT, RunSpec, record_from_checkpoint, shape_of  # noqa: E402
from model.train import RECIPES, Recipe  # noqa: E402
from model.weights import SHIPPED_DIR, read_safetensors  # noqa: E402
from tutor.commands.sweep import PRESETS  # noqa: E402

OUT = ROOT / "model" / "data" / "depth-seeds.jsonl.gz"


def main() -> int:
    if len(sys.argv) != 2 or not Path(sys.argv[1]).is_dir():
        print(__doc__)
        return 2
    return write_seed_records(PRESETS["depth"]["variants"], PRESETS["depth"]["seeds"], Path(sys.argv[1]), OUT)


def write_seed_records(variants: Iterable[str], seeds: Iterable[int], runs: Path, out: Path) -> int:
    """Each variant at each seed as one record of `out` (seed 0 shipped, the others `runs/VARIANT-sSEED`); 0, or 1
    with a line naming a checkpoint that is not the variant's recipe at that seed."""
    lines = [json.dumps({"format": FORMAT})]
    for variant in variants:
        recipe = RECIPES[variant]
        for seed in seeds:
            path = SHIPPED_DIR / f"{variant}.safetensors" if seed == 0 else runs / f"{variant}-s{seed}.safetensors"
            metadata = read_safetensors(path)[1]
            info = json.loads(metadata["training"])
            if Recipe(**info["recipe"]) != recipe or int(info["seed"]) != seed:  # records older than norm_kind too
                print(f"{path}: not {variant} with seed {seed}")
                return 1
            record = record_from_checkpoint(RunSpec(recipe, seed, recipe.steps, shape_of(recipe)), metadata)
            lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    with out.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as gz:
        gz.write(("\n".join(lines) + "\n").encode())
    print(f"wrote {out}: {len(lines) - 1} runs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
