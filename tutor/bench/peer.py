"""The pass on the learner's path against the peer they would use: a Hugging Face GPT-2 or Llama-family folder
loaded with `model.load` (what `tutor --model DIR` does), its forward pass with the full trace, against
transformers' `AutoModelForCausalLM.from_pretrained` (GPT2LMHeadModel, LlamaForCausalLM) on the same folder
under `torch.no_grad()`.

BLAS reads its thread count once, when NumPy loads, so each thread count runs in a process of its own:

    python -m tutor.bench.peer FOLDER THREADS REPEATS     # prints {"16": {"ours": [s, …], "theirs": […]}, …}
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

TOKENS = (16, 64)
SHAPES = {  # name → GPT2Config fields: GPT-2 small's, and tiny's (with GPT-2's learned positions)
    "GPT-2 small (124M)": {"n_layer": 12, "n_head": 12, "n_embd": 768, "vocab_size": 50257, "n_positions": 1024},
    "tiny shape": {"n_layer": 4, "n_head": 4, "n_embd": 64, "vocab_size": 1044, "n_positions": 64},
}
LLAMA_SHAPES = {  # name → LlamaConfig fields: SmolLM-135M's (HuggingFaceTB/SmolLM-135M's config.json), and a tiny one
    "SmolLM-135M shape": {
        "num_hidden_layers": 30,
        "num_attention_heads": 9,
        "num_key_value_heads": 3,
        "hidden_size": 576,
        "intermediate_size": 1536,
        "vocab_size": 49152,
        "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": True,
    },
    "tiny Llama shape": {
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "hidden_size": 64,
        "intermediate_size": 128,
        "vocab_size": 1044,
        "max_position_embeddings": 64,
        "tie_word_embeddings": True,
    },
}


def write_folder(folder: Path, shape: dict[str, int], seed: int = 0) -> Path:
    """A GPT-2 folder as `save_pretrained` writes it (config.json, model.safetensors), random weights, and a
    small byte-level BPE tokenizer.json (the timed passes are fed token ids, never text)."""
    import torch
    import transformers

    _quiet(transformers)
    torch.manual_seed(seed)
    end = shape["vocab_size"] - 1  # GPT-2's <|endoftext|> is 50256: a smaller vocabulary's last id instead
    config = transformers.GPT2Config(**shape, bos_token_id=end, eos_token_id=end)
    transformers.GPT2LMHeadModel(config).save_pretrained(folder, safe_serialization=True)
    _write_tokenizer(folder)
    return folder


def write_llama_folder(folder: Path, shape: dict[str, int | float | bool], seed: int = 0) -> Path:
    """A LlamaForCausalLM folder as `save_pretrained` writes it, random weights, float32, and the same small
    tokenizer.json (a vocabulary smaller than the embedding's: the extra rows are padding)."""
    import torch
    import transformers

    _quiet(transformers)
    torch.manual_seed(seed)
    transformers.LlamaForCausalLM(transformers.LlamaConfig(**shape)).save_pretrained(folder)
    _write_tokenizer(folder)
    return folder


def _quiet(transformers: object) -> None:
    """The bench's table, not transformers' progress bars."""
    transformers.utils.logging.set_verbosity_error()  # type: ignore[attr-defined]
    transformers.utils.logging.disable_progress_bar()  # type: ignore[attr-defined]


def _write_tokenizer(folder: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=["<|endoftext|>"]
    )
    tokenizer.train_from_iterator(["the cat chases the dog", "a dog and a cat"] * 8, trainer)
    tokenizer.save(str(folder / "tokenizer.json"))


def measure(folder: Path, threads: int, repeats: int) -> dict[str, dict[str, list[float] | float]]:
    """Seconds of each call, ours and theirs in turn, for every prompt length; and how far their logits differ."""
    import numpy as np
    import torch
    import transformers

    import model
    from tutor.bench.speed import alternate

    torch.set_num_threads(threads)
    transformers.utils.logging.set_verbosity_error()
    ours_model = model.load(folder)
    theirs_model = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    results: dict[str, dict[str, list[float] | float]] = {}
    for n in TOKENS:
        ids = [int(i) for i in np.random.default_rng(n).integers(0, ours_model.config.vocab_size, n)]
        batch = torch.tensor([ids])

        def ours(ids: list[int] = ids) -> np.ndarray:
            return ours_model.run(ids).logits

        def theirs(batch: torch.Tensor = batch) -> np.ndarray:
            with torch.no_grad():
                return theirs_model(batch).logits[0].numpy()

        difference = float(np.max(np.abs(ours().astype(np.float64) - theirs().astype(np.float64))))
        pair = alternate(ours, theirs, repeats)  # in turn: a neighbour's load falls on both
        ours_times, theirs_times = pair.ours_times, pair.reference_times
        results[str(n)] = {"ours": ours_times, "theirs": theirs_times, "difference": difference}
    return results


def run_in_process(folder: Path, threads: int, repeats: int) -> dict[str, dict[str, list[float] | float]]:
    """`measure` in a fresh interpreter whose BLAS and PyTorch use `threads` threads."""
    import subprocess

    env = {**os.environ, **{v: str(threads) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}}
    command = [sys.executable, "-m", "tutor.bench.peer", str(folder), str(threads), str(repeats)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def folders(llama: bool = False) -> tuple[tempfile.TemporaryDirectory[str], dict[str, Path]]:
    """One folder per shape in a temporary directory (kept while the returned handle lives): GPT-2's shapes, or
    with `llama` the SmolLM-135M shape's alone."""
    handle = tempfile.TemporaryDirectory(prefix="tutor-bench-llama-" if llama else "tutor-bench-gpt2-")
    made = {}
    if llama:
        name = "SmolLM-135M shape"
        made[name] = write_llama_folder(Path(handle.name) / "smollm", LLAMA_SHAPES[name])
        return handle, made
    for i, (name, shape) in enumerate(SHAPES.items()):
        made[name] = write_folder(Path(handle.name) / f"shape{i}", shape)
    return handle, made


if __name__ == "__main__":
    from tutor.process_tuning import keep_freed_memory

    keep_freed_memory()  # as `tutor` runs the pass: each trace reuses the last one's memory
    folder, threads, repeats = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    print(json.dumps(measure(folder, threads, repeats)))
