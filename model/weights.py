"""Safetensors in and out. Never pickle.

Loading maps the file into memory read-only and builds the tensors as views over the
mapping, so every process that opens the same file shares one copy of the weights (the
`safetensors` package's NumPy loader copies each tensor into the process instead).
"""

from __future__ import annotations

import json
import math
import mmap
import os
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from model.config import ConfigError, GPTConfig
from model.params import Params, parameter_shapes
from model.text import printable
from model.tokenizer import CharTokenizer, TokenizerError

FORMAT = "tutor-gpt/1"
SHIPPED_DIR = Path(__file__).parent / "weights"

_DTYPES: dict[str, np.dtype] = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),  # read as raw bits, widened to float32 below
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}
_FLOAT_DTYPES = {"F64", "F32", "F16", "BF16"}
# The header is parsed whole into Python objects, several times its size: a tutor checkpoint's is under 100 KB,
# GPT-2 XL's about 60 KB (safetensors itself allows 100 MB, which parses into more than a gigabyte)
_MAX_HEADER = 16 * 1024 * 1024
_MAX_DIMENSIONS = 8  # NumPy takes 64; a model's tensors have 1 to 4


class WeightsError(Exception):
    """A weights file that cannot be used; the message names the file and what is wrong, on one line that
    is safe to print (it may quote the file, whose text must not drive the terminal)."""

    def __init__(self, message: str) -> None:
        super().__init__(printable(message))


def read_safetensors(path: str | os.PathLike[str]) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Every tensor of a safetensors file as a read-only memory-mapped array, and its metadata.

    Float tensors come back as stored (BF16 widened to float32); nothing is checked against a model.
    """
    path = Path(path)
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size < 8:
                raise WeightsError(f"{path}: truncated: {size} bytes, too short for a safetensors header")
            (header_len,) = struct.unpack("<Q", file.read(8))
            if header_len > min(size - 8, _MAX_HEADER):
                raise WeightsError(f"{path}: truncated or not safetensors: header claims {header_len} bytes")
            header_bytes = file.read(header_len)
            mapping = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as error:
        raise WeightsError(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        header = json.loads(header_bytes)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise WeightsError(f"{path}: corrupt: the safetensors header is not JSON") from None
    if not isinstance(header, dict):
        raise WeightsError(f"{path}: corrupt: the safetensors header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise WeightsError(f"{path}: corrupt: __metadata__ must map strings to strings")

    data_start = 8 + header_len
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        tensors[name] = _tensor_view(path, mapping, data_start, size, name, info)
    return tensors, metadata


def safetensors_dtypes(path: str | os.PathLike[str]) -> set[str]:
    """The dtypes ("F32", "BF16", …) a safetensors file's header names, read without mapping a tensor; empty for
    a file that is not safetensors (reading it later says what is wrong)."""
    try:
        with open(path, "rb") as file:
            (header_len,) = struct.unpack("<Q", file.read(8))
            if header_len > min(os.fstat(file.fileno()).st_size - 8, _MAX_HEADER):
                return set()
            header = json.loads(file.read(header_len))
    except (OSError, struct.error, json.JSONDecodeError, UnicodeDecodeError):
        return set()
    if not isinstance(header, dict):
        return set()
    return {
        str(info.get("dtype")) for name, info in header.items() if name != "__metadata__" and isinstance(info, dict)
    }


def _tensor_view(path: Path, mapping: mmap.mmap, data_start: int, size: int, name: str, info: Any) -> np.ndarray:
    try:
        dtype_name, shape, (begin, end) = info["dtype"], [int(n) for n in info["shape"]], info["data_offsets"]
        begin, end = int(begin), int(end)
    except (KeyError, TypeError, ValueError, OverflowError):  # OverflowError: int() of a JSON 1e999
        raise WeightsError(f"{path}: corrupt: tensor {name!r} has a malformed header entry") from None
    if not isinstance(dtype_name, str) or dtype_name not in _DTYPES:
        raise WeightsError(f"{path}: tensor {name!r} has unsupported dtype {dtype_name}")
    if len(shape) > _MAX_DIMENSIONS:
        raise WeightsError(f"{path}: corrupt: tensor {name!r} has {len(shape)} dimensions")
    dtype = _DTYPES[dtype_name]
    count = math.prod(shape)  # a Python int: NumPy's int64 product of [2**32, 2**32] wraps round to 0
    if min(shape, default=0) < 0 or begin < 0 or end - begin != count * dtype.itemsize:
        raise WeightsError(f"{path}: corrupt: tensor {name!r} offsets do not match its shape {shape}")
    if data_start + end > size:
        raise WeightsError(f"{path}: truncated: tensor {name!r} runs past the end of the file")
    array = np.frombuffer(mapping, dtype=dtype, count=count, offset=data_start + begin).reshape(shape)
    if dtype_name == "BF16":
        array = (array.astype(np.uint32) << 16).view(np.float32)
    return array


def load_checkpoint(path: str | os.PathLike[str]) -> tuple[GPTConfig, Params, CharTokenizer, dict[str, str]]:
    """A tutor checkpoint: its config and tokenizer (from the metadata) and float32 parameters.

    Raises `WeightsError` naming the file and the tensor for anything missing, extra,
    misshapen, not floating point, or holding NaN or Inf.
    """
    path = Path(path)
    tensors, metadata = read_safetensors(path)
    if "config" not in metadata:
        raise WeightsError(f"{path}: no model config in the metadata (is this a tutor checkpoint?)")
    try:
        config = GPTConfig.from_json(metadata["config"])
    except ConfigError as error:
        raise WeightsError(f"{path}: bad config: {error}") from None
    check_depth(path, tensors, config.n_layers, "blocks.")
    check_norm_kind(path, tensors, config)
    params = check_params(path, tensors, parameter_shapes(config))  # every size in the config, against a tensor
    try:
        tokenizer = CharTokenizer.from_json(metadata.get("tokenizer", ""))
    except TokenizerError as error:
        raise WeightsError(f"{path}: bad tokenizer: {error}") from None
    if tokenizer.vocab_size != config.vocab_size:
        raise WeightsError(
            f"{path}: the tokenizer has {tokenizer.vocab_size} tokens but the config says {config.vocab_size}"
        )
    return config, params, tokenizer, metadata


def check_depth(path: Path, names: Iterable[str], n_layers: int, block_prefix: str) -> None:
    """The file holds a block (`{block_prefix}{i}.…` tensors) for each of the config's n_layers: checked before
    the config's list of parameter names is built, which an n_layers of 10⁹ grew for minutes. (A block too
    many is bounded by the file: `check_params` names its first tensor.)"""
    blocks = {name[len(block_prefix) :].split(".", 1)[0] for name in names if name.startswith(block_prefix)}
    if n_layers > len(blocks):
        raise WeightsError(f"{path}: the config says n_layers {n_layers}, the file holds {len(blocks)} blocks")


def check_norm_kind(path: Path, names: dict[str, np.ndarray], config: GPTConfig) -> None:
    """A file's norms agree with its config's `norm_kind`: an RMSNorm holds γ only, a LayerNorm γ and β. Said in
    words of the norm (a β where none belongs, or none where one does), not as a bare unexpected tensor."""
    expected = parameter_shapes(config)
    betas = [n for n in names if n.endswith((".ln1.b", ".ln2.b")) or n == "ln_final.b"]
    if config.is_rms and betas:
        raise WeightsError(f"{path}: the config says norm_kind rms (RMSNorm has no β) but the file holds {betas[0]!r}")
    missing = [n for n in expected if n.endswith(".b") and n.rsplit(".", 2)[-2].startswith("ln") and n not in names]
    if missing and missing[0][:-1] + "g" in names:
        raise WeightsError(
            f"{path}: the config says norm_kind layer but the file lacks LayerNorm β {missing[0]!r} (an RMSNorm file?)"
        )


def check_params(path: Path, tensors: dict[str, np.ndarray], expected: dict[str, tuple[int, ...]]) -> Params:
    """The tensors as float32 parameters, after checking names, shapes, dtypes and values."""
    missing = [name for name in expected if name not in tensors]
    if missing:
        raise WeightsError(f"{path}: missing tensor {missing[0]!r}" + _and_more(missing))
    extra = [name for name in tensors if name not in expected]
    if extra:
        raise WeightsError(f"{path}: unexpected tensor {extra[0]!r}" + _and_more(extra))
    params: Params = {}
    for name, shape in expected.items():
        array = tensors[name]
        if array.shape != shape:
            raise WeightsError(f"{path}: tensor {name!r} has shape {list(array.shape)}, expected {list(shape)}")
        if array.dtype.kind != "f":
            raise WeightsError(f"{path}: tensor {name!r} has dtype {array.dtype}, expected a float type")
        if not np.isfinite(array).all():
            raise WeightsError(f"{path}: tensor {name!r} holds NaN or Inf values")
        params[name] = array if array.dtype == np.float32 else array.astype(np.float32)
    return params


def _and_more(names: list[str]) -> str:
    return f" (and {len(names) - 1} more)" if len(names) > 1 else ""


def save_checkpoint(
    path: str | os.PathLike[str],
    config: GPTConfig,
    params: Params,
    tokenizer: CharTokenizer,
    *,
    trained: bool,
    dtype: type[np.floating] = np.float32,
    metadata: dict[str, str] | None = None,
) -> None:
    """Write a checkpoint atomically (a temporary file, then a rename): never half a file."""
    from safetensors.numpy import save_file  # only writers need the package

    expected = parameter_shapes(config)
    if set(params) != set(expected):
        raise ValueError("parameters do not fit the config")
    meta = {
        "format": FORMAT,
        "config": config.to_json(),
        "tokenizer": tokenizer.to_json(),
        "trained": "true" if trained else "false",
        **(metadata or {}),
    }
    tensors = {name: np.ascontiguousarray(params[name], dtype=dtype) for name in expected}
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        save_file(tensors, str(tmp), metadata=meta)
        os.chmod(tmp, 0o644)  # a shared model file: readable by every learner on the machine
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def shipped_models() -> list[str]:
    """Names of the models that travel with the package (`tiny`, ...)."""
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.safetensors"))
