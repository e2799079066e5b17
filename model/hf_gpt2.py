"""Real GPT-2 checkpoints from local Hugging Face files, mapped onto this project's parameters.

A Hugging Face GPT-2 folder holds `config.json`, `model.safetensors` (or shards listed in
`model.safetensors.index.json`) and `tokenizer.json` (or `vocab.json` + `merges.txt`). GPT-2 is
exactly this project's pre-norm model with learned positions, so the weights map one to one:

    wte.weight, wpe.weight               → wte, wpe
    h.{i}.ln_1.weight / .bias            → blocks.{i}.ln1.g / .b      (and ln_2 → ln2, ln_f → ln_final)
    h.{i}.attn.c_attn.weight / .bias     → blocks.{i}.attn.w_qkv / b_qkv   ([d, 3d], columns [q | k | v])
    h.{i}.attn.c_proj.weight / .bias     → blocks.{i}.attn.w_out / b_out
    h.{i}.mlp.c_fc.weight / .bias        → blocks.{i}.mlp.w_in / b_in
    h.{i}.mlp.c_proj.weight / .bias      → blocks.{i}.mlp.w_out / b_out

GPT-2's `Conv1D` stores weights as `[in, out]`, which is what `x @ w` wants: float32 tensors are
used as they lie in the memory-mapped file, never copied. The unembedding is tied to `wte`; the
`attn.bias` / `attn.masked_bias` buffers (the causal mask) are skipped; a `transformer.` prefix
(as `save_pretrained` writes it) is stripped. Nothing is ever downloaded.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from model.bpe import BPETokenizer
from model.config import ConfigError, GPTConfig
from model.params import Params, parameter_shapes
from model.tokenizer import TokenizerError
from model.weights import WeightsError, check_depth, check_params, read_safetensors, safetensors_dtypes

# activations that are GPT-2's tanh GELU (`gelu_new` is GPT-2's own name for it)
TANH_GELU = {"gelu_new", "gelu_pytorch_tanh", "gelu_fast"}
_BUFFERS = ("attn.bias", "attn.masked_bias")


def hf_cache_dirs() -> list[Path]:
    """Where a Hugging Face hub cache may be, in the order `huggingface_hub` itself looks."""
    dirs: list[Path] = []
    if os.environ.get("HF_HUB_CACHE"):
        dirs.append(Path(os.environ["HF_HUB_CACHE"]))
    if os.environ.get("HUGGINGFACE_HUB_CACHE"):
        dirs.append(Path(os.environ["HUGGINGFACE_HUB_CACHE"]))
    if os.environ.get("HF_HOME"):
        dirs.append(Path(os.environ["HF_HOME"]) / "hub")
    if os.environ.get("XDG_CACHE_HOME"):
        dirs.append(Path(os.environ["XDG_CACHE_HOME"]) / "huggingface" / "hub")
    dirs.append(Path("~/.cache/huggingface/hub"))
    unique: list[Path] = []
    for d in dirs:
        d = d.expanduser()
        if d not in unique:
            unique.append(d)
    return unique


def find_in_hf_cache(name: str) -> Path | None:
    """The snapshot folder of model `name` (`gpt2`, `openai-community/gpt2`, `distilgpt2`) in a local
    hub cache: `models--{owner}--{name}/snapshots/{revision}`, the revision `refs/main` points at."""
    if not name or name.startswith((".", "/")) or name.count("/") > 1 or ".." in name:
        return None
    for cache in hf_cache_dirs():
        if not cache.is_dir():
            continue
        repo = "models--" + name.replace("/", "--")
        candidates = [cache / repo]
        if "/" not in name:  # `gpt2` now lives at openai-community/gpt2, `distilgpt2` at distilbert/distilgpt2
            candidates += sorted(cache.glob(f"models--*--{name}"))
        for folder in candidates:
            snapshot = _snapshot(folder)
            if snapshot is not None:
                return snapshot
    return None


def _snapshot(repo: Path) -> Path | None:
    snapshots = repo / "snapshots"
    if not snapshots.is_dir():
        return None
    ref = repo / "refs" / "main"
    if ref.is_file():
        revision = ref.read_text(encoding="utf-8").strip()
        if revision and (snapshots / revision).is_dir():
            return snapshots / revision
    revisions = [p for p in snapshots.iterdir() if p.is_dir()]
    return max(revisions, key=lambda p: p.stat().st_mtime) if revisions else None


def is_hf_folder(path: Path) -> bool:
    return path.is_dir() and (path / "config.json").is_file()


def load_hf_gpt2(folder: str | os.PathLike[str]) -> tuple[GPTConfig, Params, BPETokenizer]:
    """Config, float32 parameters (views over the mapped file) and tokenizer of a GPT-2 folder.

    Raises `WeightsError` with one line naming the file and what is wrong.
    """
    folder = Path(folder)
    raw = read_config(folder / "config.json")
    config = gpt2_config(folder / "config.json", raw)
    tensors, weights_path = read_weights(folder)
    params = gpt2_params(weights_path, tensors, config)
    tokenizer = load_bpe_tokenizer(folder, config.vocab_size, raw.get("eos_token_id"))
    return config, params, tokenizer


def read_config(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise WeightsError(f"{path}: missing: a Hugging Face model folder needs config.json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise WeightsError(f"{path}: not readable JSON: {error}") from None
    if not isinstance(data, dict):
        raise WeightsError(f"{path}: not a JSON object")
    return data


def gpt2_config(path: Path, raw: dict[str, Any]) -> GPTConfig:
    """This project's config for a GPT-2 `config.json`: learned positions, pre-norm, residual, causal."""
    kind = raw.get("model_type")
    if kind != "gpt2":
        raise WeightsError(f"{path}: model_type {kind!r} is not supported (only GPT-2 family: 'gpt2')")
    activation = raw.get("activation_function", "gelu_new")
    if not isinstance(activation, str) or activation not in TANH_GELU:
        raise WeightsError(f"{path}: activation_function {activation!r} is not supported (GPT-2's tanh GELU only)")
    unsupported = {
        "scale_attn_weights": (False, "attention without the 1/√d_head scale"),
        "scale_attn_by_inverse_layer_idx": (True, "attention scaled by 1/layer"),
        "add_cross_attention": (True, "cross-attention"),
        "tie_word_embeddings": (False, "an untied unembedding"),
    }
    for key, (bad, what) in unsupported.items():
        if raw.get(key, not bad) == bad:
            raise WeightsError(f"{path}: {key} = {json.dumps(bad)} ({what}) is not supported")
    try:
        d = raw["n_embd"]
        n_inner = raw.get("n_inner")
        n_ctx = raw.get("n_positions", raw.get("n_ctx"))  # older GPT-2 configs name it n_ctx
        if n_ctx is None:
            raise KeyError("n_positions")
        return GPTConfig(
            vocab_size=raw["vocab_size"],
            n_ctx=n_ctx,
            d_model=d,
            n_heads=raw["n_head"],
            n_layers=raw["n_layer"],
            d_mlp=n_inner if n_inner is not None else 4 * d,
            positional="learned",
            norm="pre",
            residual=True,
            causal=True,
            ln_eps=float(raw.get("layer_norm_epsilon", 1e-5)),
        )
    except KeyError as error:
        raise WeightsError(f"{path}: missing key {error.args[0]!r}") from None
    except (ConfigError, TypeError, ValueError, OverflowError) as error:  # float(10**400) overflows
        raise WeightsError(f"{path}: bad config: {error}") from None


def weight_files(folder: Path) -> list[Path]:
    """The safetensors files of a folder: `model.safetensors`, or the shards its index lists (each checked to be
    there). Raises `WeightsError` with one line: no weights, a pickle only, a bad index, a missing shard."""
    single = folder / "model.safetensors"
    if single.is_file():
        return [single]
    index = folder / "model.safetensors.index.json"
    if not index.is_file():
        pickled = [p.name for p in (folder / "pytorch_model.bin", folder / "tf_model.h5") if p.is_file()]
        found = f" (found only {', '.join(pickled)}; tutor reads safetensors, never pickle)" if pickled else ""
        raise WeightsError(f"{single}: missing: no model.safetensors or model.safetensors.index.json{found}")
    try:
        weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        shards = sorted(set(weight_map.values()))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, AttributeError) as error:
        raise WeightsError(f"{index}: not a safetensors index: {error}") from None
    for shard in shards:
        if not isinstance(shard, str) or "/" in shard or shard.startswith("."):
            raise WeightsError(f"{index}: bad shard name {shard!r}")
    missing = [shard for shard in shards if not (folder / shard).is_file()]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise WeightsError(f"{index}: shard {missing[0]} is missing{more}: {len(shards)} shards are listed")
    return [folder / shard for shard in shards]


def read_weights(folder: Path) -> tuple[dict[str, np.ndarray], Path]:
    """Every tensor of the folder's safetensors file or shards, and the path to name in errors."""
    files = weight_files(folder)
    if files == [folder / "model.safetensors"]:
        return read_safetensors(files[0])[0], files[0]
    tensors: dict[str, np.ndarray] = {}
    for shard in files:
        tensors.update(read_safetensors(shard)[0])
    return tensors, folder / "model.safetensors.index.json"


def hf_names(config: GPTConfig) -> dict[str, str]:
    """This project's parameter name for every GPT-2 tensor name (without the `transformer.` prefix)."""
    names = {"wte.weight": "wte", "wpe.weight": "wpe", "ln_f.weight": "ln_final.g", "ln_f.bias": "ln_final.b"}
    parts = {
        "ln_1": "ln1",
        "ln_2": "ln2",
        "attn.c_attn": "attn.{w}_qkv",
        "attn.c_proj": "attn.{w}_out",
        "mlp.c_fc": "mlp.{w}_in",
        "mlp.c_proj": "mlp.{w}_out",
    }
    for i in range(config.n_layers):
        for hf, ours in parts.items():
            if ours.startswith("ln"):
                names[f"h.{i}.{hf}.weight"] = f"blocks.{i}.{ours}.g"
                names[f"h.{i}.{hf}.bias"] = f"blocks.{i}.{ours}.b"
            else:
                names[f"h.{i}.{hf}.weight"] = f"blocks.{i}." + ours.format(w="w")
                names[f"h.{i}.{hf}.bias"] = f"blocks.{i}." + ours.format(w="b")
    return names


def gpt2_params(path: Path, tensors: dict[str, np.ndarray], config: GPTConfig) -> Params:
    """The GPT-2 tensors under this project's names, checked (names, shapes, dtypes, NaN/Inf) and not copied.

    Error messages use the names as they are in the file.
    """
    prefix = "transformer." if any(name.startswith("transformer.") for name in tensors) else ""
    check_depth(path, tensors, config.n_layers, prefix + "h.")
    ours = hf_names(config)
    shapes = parameter_shapes(config)
    kept: dict[str, np.ndarray] = {}
    for name, array in tensors.items():
        short = name.removeprefix(prefix)
        if short.endswith(_BUFFERS) and short.split(".")[-2] == "attn":  # the causal-mask buffers
            continue
        if name == "lm_head.weight":  # tied: it must be wte itself
            wte = tensors.get(prefix + "wte.weight")
            if wte is None or wte.shape != array.shape or not np.array_equal(wte, array):
                raise WeightsError(f"{path}: lm_head.weight differs from wte.weight (an untied unembedding)")
            continue
        kept[name] = array
    expected = {prefix + hf: shapes[mine] for hf, mine in ours.items()}
    checked = check_params(path, kept, expected)
    return {ours[name.removeprefix(prefix)]: array for name, array in checked.items()}


def load_bpe_tokenizer(folder: Path, vocab_size: int, eos: object = None) -> BPETokenizer:
    """The checkpoint's own byte-level BPE: `tokenizer.json`, or `vocab.json` + `merges.txt`."""
    tokenizer_json, vocab, merges = folder / "tokenizer.json", folder / "vocab.json", folder / "merges.txt"
    if not tokenizer_json.is_file() and not (vocab.is_file() and merges.is_file()):
        raise WeightsError(f"{tokenizer_json}: missing: no tokenizer.json (nor vocab.json + merges.txt)")
    try:
        import tokenizers
    except ImportError:
        raise WeightsError(
            f"{folder}: GPT-2's tokenizer needs the `tokenizers` package: pip install 'tutor[gpt2]'"
        ) from None
    path = tokenizer_json if tokenizer_json.is_file() else vocab
    try:
        if tokenizer_json.is_file():
            inner = tokenizers.Tokenizer.from_file(str(tokenizer_json))
        else:
            from tokenizers import decoders, models, pre_tokenizers

            inner = tokenizers.Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
            inner.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
            inner.decoder = decoders.ByteLevel()
            if inner.token_to_id("<|endoftext|>") is not None:
                inner.add_special_tokens(["<|endoftext|>"])
    except Exception as error:  # tokenizers raises plain Exception for a bad file
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise WeightsError(f"{path}: not a readable tokenizer: {first}") from None
    try:
        return BPETokenizer(inner, vocab_size, eos if isinstance(eos, int) and 0 <= eos < vocab_size else None)
    except TokenizerError as error:
        raise WeightsError(f"{path}: {error}") from None


HALF_DTYPES = frozenset({"BF16", "F16"})  # widened to float32 copies at load
MAX_SIDE_FILE = 64 << 20  # a tokenizer, a config: anything larger beside the weights is not copied


def holds_half(path: Path) -> bool:
    """Whether a safetensors file holds bf16 or f16 tensors (read from its header alone)."""
    return bool(safetensors_dtypes(path) & HALF_DTYPES)


def write_float32_folder(folder: Path, out: Path) -> int:
    """A copy of a Hugging Face folder at `out` with every bf16/f16 tensor widened to float32, shard by shard,
    and the rest (config, tokenizer, index) copied, the config's dtype set to float32; the bytes of weights written.

    Why: a float32 file is memory-mapped, so every tutor on a machine reads one copy from the page cache, while
    bf16/f16 weights are widened into each tutor's own float32 copy at load. `out` is written as `out.partial`
    and renamed when complete. Raises `WeightsError` with one line (nothing to widen, `out` exists, too little disk).
    """
    import shutil

    from safetensors.numpy import save_file  # only writers need the package

    files = weight_files(folder)
    half = {path for path in files if holds_half(path)}
    if not half:
        raise WeightsError(f"{folder}: already float32: tutors on one machine share it as it is")
    if out.exists():
        raise WeightsError(f"{out}: already exists; name a new folder")
    needed = sum(path.stat().st_size * (2 if path in half else 1) for path in files)  # 2 bytes a number become 4
    partial = out.with_name(out.name + ".partial")
    partial.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(partial.parent).free
    if needed > free:
        raise WeightsError(
            f"{out.parent}: {needed / 2**30:.1f} GiB needed for the float32 copy, {free / 2**30:.1f} free"
        )
    shutil.rmtree(partial, ignore_errors=True)  # a copy an earlier run left half written
    partial.mkdir()
    umask = os.umask(0o022)
    os.umask(umask)
    total_size = 0  # the index's "total_size": the bytes of every tensor written
    for path in files:
        tensors, metadata = read_safetensors(path)
        widened = {name: t.astype(np.float32) if t.dtype.kind == "f" else np.asarray(t) for name, t in tensors.items()}
        total_size += sum(t.nbytes for t in widened.values())
        save_file(widened, str(partial / path.name), metadata=metadata or None)
        del widened
        # as any new file is: safetensors writes 0600, which no other learner could read
        os.chmod(partial / path.name, 0o666 & ~umask)
    for path in folder.iterdir():
        if path in files or not path.is_file() or path.stat().st_size > MAX_SIDE_FILE:
            continue
        if path.name in ("config.json", "model.safetensors.index.json"):
            data = read_config(path)
            if path.name == "config.json":
                data.update({key: "float32" for key in ("torch_dtype", "dtype") if key in data})
            elif isinstance(data.get("metadata"), dict):
                data["metadata"]["total_size"] = total_size
            (partial / path.name).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        else:
            shutil.copyfile(path, partial / path.name)
    partial.rename(out)
    return total_size
