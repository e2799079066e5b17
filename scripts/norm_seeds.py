"""Write `model/data/norm-seeds.jsonl.gz`: tiny and rmsnorm (LayerNorm against RMSNorm) over three seeds, in
`tutor sweep`'s results format, for the LayerNorm lesson's comparison (is the gap between them seed noise?).

    for seed in 1 2; do for v in tiny rmsnorm; do
        tutor train --variant $v --seed $seed --out runs/$v-s$seed.safetensors; done; done
    python scripts/norm_seeds.py runs/

Seed 0 of each variant is the shipped checkpoint (model/weights/), seeds 1 and 2 are `runs/VARIANT-sSEED.safetensors`,
each the variant's own recipe, 3000 steps. A seed fixes the initial weights and the batches: tiny and rmsnorm with
the same seed start from the same weights (an RMSNorm has only γ, which starts at 1 as LayerNorm's does, and β's
zeros draw no random numbers) and see the same windows, so seed s of one is seed s of the other with the norm changed.
The records are read from the checkpoints' training metadata (`model.sweep.record_from_checkpoint`), as
scripts/depth_seeds.py reads the depth family's.
"""

from __future__ import annotations

import sys
from pathlib import Path

from depth_seeds import ROOT, write_seed_records  # scripts/ is on the path of a script run from it

OUT = ROOT / "model" / "data" / "norm-seeds.jsonl.gz"
VARIANTS = ("tiny", "rmsnorm")
SEEDS = (0, 1, 2)


def main() -> int:
    if len(sys.argv) != 2 or not Path(sys.argv[1]).is_dir():
        print(__doc__)
        return 2
    return write_seed_records(VARIANTS, SEEDS, Path(sys.argv[1]), OUT)


if __name__ == "__main__":
    raise SystemExit(main())
