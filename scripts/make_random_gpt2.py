"""Write a Hugging Face GPT-2 folder with seeded random weights, for trying the app and timing the
loader at real size without a download (no torch needed):

    python scripts/make_random_gpt2.py /tmp/gpt2-124m              # 124M: 12 layers, d 768, 12 heads
    python scripts/make_random_gpt2.py /tmp/gpt2-small --layers 2 --d-model 128 --heads 4

The tokenizer is a byte-level BPE trained on the lessons (`tokenizers` needed); the embedding keeps
GPT-2's 50257 rows, past the tokenizer's own vocabulary. Weights follow GPT-2's initialisation.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from model.corpus import lesson_documents
from tutor.paths import content_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--d-model", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--n-ctx", type=int, default=1024)
    parser.add_argument("--vocab", type=int, default=50257)
    parser.add_argument("--bpe-vocab", type=int, default=4000, help="tokens the BPE learns from the lessons")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=min(args.bpe_vocab, args.vocab),
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([doc.text for doc in lesson_documents(content_dir())], trainer)
    tok.save(str(out / "tokenizer.json"))

    d, layers = args.d_model, args.layers
    rng = np.random.default_rng(args.seed)

    def normal(*shape: int, std: float = 0.02) -> np.ndarray:
        return rng.standard_normal(shape, dtype=np.float32) * np.float32(std)

    proj_std = 0.02 / math.sqrt(2 * layers)
    tensors = {"transformer.wte.weight": normal(args.vocab, d), "transformer.wpe.weight": normal(args.n_ctx, d)}
    for i in range(layers):
        h = f"transformer.h.{i}."
        tensors |= {
            h + "ln_1.weight": np.ones(d, np.float32),
            h + "ln_1.bias": np.zeros(d, np.float32),
            h + "attn.c_attn.weight": normal(d, 3 * d),
            h + "attn.c_attn.bias": np.zeros(3 * d, np.float32),
            h + "attn.c_proj.weight": normal(d, d, std=proj_std),
            h + "attn.c_proj.bias": np.zeros(d, np.float32),
            h + "ln_2.weight": np.ones(d, np.float32),
            h + "ln_2.bias": np.zeros(d, np.float32),
            h + "mlp.c_fc.weight": normal(d, 4 * d),
            h + "mlp.c_fc.bias": np.zeros(4 * d, np.float32),
            h + "mlp.c_proj.weight": normal(4 * d, d, std=proj_std),
            h + "mlp.c_proj.bias": np.zeros(d, np.float32),
        }
    tensors |= {"transformer.ln_f.weight": np.ones(d, np.float32), "transformer.ln_f.bias": np.zeros(d, np.float32)}
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "model.safetensors").chmod(0o644)  # safetensors writes 0600: every learner must read it
    config = {
        "model_type": "gpt2",
        "architectures": ["GPT2LMHeadModel"],
        "vocab_size": args.vocab,
        "n_positions": args.n_ctx,
        "n_embd": d,
        "n_layer": layers,
        "n_head": args.heads,
        "n_inner": None,
        "activation_function": "gelu_new",
        "layer_norm_epsilon": 1e-5,
        "eos_token_id": 0,
        "bos_token_id": 0,
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    n_params = sum(t.size for t in tensors.values())
    print(f"wrote {out}: {n_params / 1e6:.1f}M parameters, BPE of {tok.get_vocab_size()} tokens")


if __name__ == "__main__":
    main()
