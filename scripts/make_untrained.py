"""Write the stand-in `tiny` checkpoint: the shipped shape with seeded random weights.

Used until `tutor train` ships trained weights. Its vocabulary is printable ASCII plus
every character of the given text files (the seed lessons were used):

    python scripts/make_untrained.py model/weights/tiny.safetensors ../shared/seeds/*.txt
"""

from __future__ import annotations

import string
import sys
from pathlib import Path

from model import CharTokenizer, GPTConfig, init_params, save_checkpoint


def main(out: str, *sources: str) -> None:
    texts = [string.printable] + [Path(s).read_text(encoding="utf-8") for s in sources]
    tokenizer = CharTokenizer.from_corpus(texts)
    config = GPTConfig(vocab_size=tokenizer.vocab_size, n_ctx=64, d_model=64, n_heads=4, n_layers=4, d_mlp=256)
    save_checkpoint(out, config, init_params(config, seed=0), tokenizer, trained=False, metadata={"name": "tiny"})
    print(f"wrote {out}: vocab {tokenizer.vocab_size}, untrained")


if __name__ == "__main__":
    main(*sys.argv[1:])
