"""The model's shape and the architectural switches the lessons compare."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal, TypedDict

PositionalEncoding = Literal["sinusoidal", "learned", "rope", "none"]
NormPlacement = Literal["pre", "post", "none"]
MlpKind = Literal["gelu", "gated"]
RopeStyle = Literal["interleaved", "half"]
Biases = Literal["all", "qkv", "none"]
NormKind = Literal["layer", "rms"]
RopeScaling = Literal["none", "linear", "llama3"]

POSITIONAL_ENCODINGS: tuple[str, ...] = ("sinusoidal", "learned", "rope", "none")
NORM_PLACEMENTS: tuple[str, ...] = ("pre", "post", "none")
NORM_KINDS: tuple[str, ...] = ("layer", "rms")
# the Llama family's switches (docs/llama.md); each default is GPT-2's wiring, so every older file loads unchanged
CHOICES: dict[str, tuple[object, ...]] = {
    "mlp_kind": ("gelu", "gated"),
    "rope_style": ("interleaved", "half"),
    "biases": ("all", "qkv", "none"),
    "tied": (True, False),
    "rope_scaling": ("none", "linear", "llama3"),
}

# The largest size a config may ask for. A file's config is checked against its own tensors, but n_ctx sizes
# a sinusoidal or RoPE table no tensor holds: without a bound, one number in a file asked for gigabytes.
# Each is far above any model a tutor runs on a CPU (GPT-2 XL: 48 layers, d_model 1600, 1024 positions).
MAX_SIZES: dict[str, int] = {
    "vocab_size": 1 << 20,
    "n_ctx": 8192,
    "d_model": 8192,
    "n_heads": 256,
    "n_layers": 256,
    "d_mlp": 65536,
}
MAX_LN_EPS = 1.0


class ConfigError(ValueError):
    """A configuration that no model can be built from."""


@dataclass(frozen=True)
class GPTConfig:
    """Everything that fixes a GPT's shape and wiring.

    `positional`: how position enters — added sinusoidal table, added learned table,
    rotated queries and keys (RoPE), or nothing at all.
    `norm`: LayerNorm before each sublayer (pre, x + F(LN(x))), after the residual add
    (post, LN(x + F(x))), or nowhere.
    `norm_kind`: which norm sits there — LayerNorm (γ · (x − μ)/√(σ²+ε) + β) or RMSNorm (γ · x/√(mean(x²)+ε),
    no μ and no β, as Llama's). A file written before the field existed is a LayerNorm model.

    The Llama family (Llama, Qwen2, Mistral) differs in five more switches: `n_kv_heads` key/value heads
    shared by the query heads (grouped-query attention; None: one per query head), `mlp_kind` "gated"
    (silu(x W_gate) ⊙ x W_in, then W_out) instead of GELU's, `rope_style` "half" (RoPE pairs dimension i
    with i + d_head/2, as Hugging Face turns it, not 2i with 2i+1), `biases` on every linear map ("all"),
    on q, k and v only (Qwen2) or on none (Llama), and an unembedding `tied` to the embedding or its own W_U.

    `rope_scaling` stretches RoPE past the context a model was first trained on (Hugging Face's `rope_type`):
    "none"; "linear", every frequency ωᵢ divided by `rope_factor` (positions squeezed by it); "llama3", Llama 3.1's
    NTK-by-parts (TransformerLens' `use_NTK_by_parts_rope`): each pair of wavelength λᵢ = 2π/ωᵢ is kept when
    λᵢ < `rope_original_ctx` / `rope_high_freq_factor`, divided by `rope_factor` when
    λᵢ > `rope_original_ctx` / `rope_low_freq_factor`, and blended between the two in between
    (`model.positions.ntk_by_parts_frequencies`).
    """

    vocab_size: int
    n_ctx: int = 64
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 4
    d_mlp: int = 256
    positional: PositionalEncoding = "sinusoidal"
    pos_base: float = 10000.0
    norm: NormPlacement = "pre"
    residual: bool = True
    causal: bool = True
    ln_eps: float = 1e-5
    norm_kind: NormKind = "layer"
    n_kv_heads: int | None = None
    mlp_kind: MlpKind = "gelu"
    rope_style: RopeStyle = "interleaved"
    biases: Biases = "all"
    tied: bool = True
    rope_scaling: RopeScaling = "none"
    rope_factor: float = 1.0  # HF `factor`, TransformerLens `NTK_by_parts_factor`
    rope_low_freq_factor: float = 1.0  # HF `low_freq_factor`, TransformerLens `NTK_by_parts_low_freq_factor`
    rope_high_freq_factor: float = 4.0  # HF `high_freq_factor`, TransformerLens `NTK_by_parts_high_freq_factor`
    rope_original_ctx: int = 8192  # HF `original_max_position_embeddings`, TransformerLens `NTK_original_ctx_len`

    def __post_init__(self) -> None:
        for name, most in MAX_SIZES.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
            if value > most:
                raise ConfigError(f"{name} is {value}, more than the tutor runs (at most {most})")
        if self.positional not in POSITIONAL_ENCODINGS:
            raise ConfigError(f"positional must be one of {', '.join(POSITIONAL_ENCODINGS)}, got {self.positional!r}")
        if self.norm not in NORM_PLACEMENTS:
            raise ConfigError(f"norm must be one of {', '.join(NORM_PLACEMENTS)}, got {self.norm!r}")
        if self.norm_kind not in NORM_KINDS:
            raise ConfigError(f"norm_kind must be one of {', '.join(NORM_KINDS)}, got {self.norm_kind!r}")
        if self.d_model % self.n_heads:
            raise ConfigError(f"d_model ({self.d_model}) must divide evenly into n_heads ({self.n_heads})")
        for name, allowed in CHOICES.items():
            if getattr(self, name) not in allowed or type(getattr(self, name)) is not type(allowed[0]):
                raise ConfigError(f"{name} must be one of {', '.join(map(str, allowed))}, got {getattr(self, name)!r}")
        kv = self.n_kv_heads
        if kv is not None and (isinstance(kv, bool) or not isinstance(kv, int) or kv < 1 or self.n_heads % kv):
            raise ConfigError(f"n_heads ({self.n_heads}) must be a multiple of n_kv_heads ({kv!r})")
        if self.positional == "rope" and self.d_head % 2:
            raise ConfigError(f"rope needs an even head size, got d_head={self.d_head}")
        for name in ("residual", "causal"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if not (_is_number(self.pos_base) and math.isfinite(self.pos_base) and self.pos_base > 0):
            raise ConfigError(f"pos_base must be a positive finite number, got {self.pos_base!r}")
        if not (_is_number(self.ln_eps) and 0 <= self.ln_eps <= MAX_LN_EPS):
            raise ConfigError(f"ln_eps must be a number from 0 to {MAX_LN_EPS:g}, got {self.ln_eps!r}")
        self._check_rope_scaling()

    def _check_rope_scaling(self) -> None:
        if not (_is_number(self.rope_factor) and math.isfinite(self.rope_factor) and self.rope_factor >= 1):
            raise ConfigError(f"rope_factor must be a finite number of at least 1, got {self.rope_factor!r}")
        low, high = self.rope_low_freq_factor, self.rope_high_freq_factor
        for name, value in (("rope_low_freq_factor", low), ("rope_high_freq_factor", high)):
            if not (_is_number(value) and math.isfinite(value) and value > 0):
                raise ConfigError(f"{name} must be a positive finite number, got {value!r}")
        if low >= high:
            raise ConfigError(f"rope_low_freq_factor ({low!r}) must be less than rope_high_freq_factor ({high!r})")
        ctx = self.rope_original_ctx
        if isinstance(ctx, bool) or not isinstance(ctx, int) or ctx < 1:
            raise ConfigError(f"rope_original_ctx must be a positive integer, got {ctx!r}")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    @property
    def kv_heads(self) -> int:
        """How many key/value heads attention has: n_heads unless they are grouped."""
        return self.n_kv_heads or self.n_heads

    @property
    def group(self) -> int:
        """How many query heads share one key/value head (1 without grouped-query attention)."""
        return self.n_heads // self.kv_heads

    @property
    def is_rms(self) -> bool:
        """Its norms (where it has any) are RMSNorms: γ · x/√(mean(x²)+ε), no centring, no β."""
        return self.norm_kind == "rms"

    @property
    def has_final_norm(self) -> bool:
        """Only pre-norm needs a last LayerNorm: post-norm blocks already end with one."""
        return self.norm == "pre"

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GPTConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown config keys: {', '.join(unknown)}")
        try:
            return cls(**data)
        except TypeError as error:  # a required key is missing
            raise ConfigError(str(error)) from None

    @classmethod
    def from_json(cls, text: str) -> GPTConfig:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ConfigError(f"config is not valid JSON: {error}") from None
        if not isinstance(data, dict):
            raise ConfigError("config must be a JSON object")
        return cls.from_dict(data)


class ConfigChanges(TypedDict, total=False):
    """Keyword arguments that change a `GPTConfig`'s fields (`GPT.with_config`): any of them, each with its type."""

    vocab_size: int
    n_ctx: int
    d_model: int
    n_heads: int
    n_layers: int
    d_mlp: int
    positional: PositionalEncoding
    pos_base: float
    norm: NormPlacement
    residual: bool
    causal: bool
    ln_eps: float
    norm_kind: NormKind
    n_kv_heads: int | None
    mlp_kind: MlpKind
    rope_style: RopeStyle
    biases: Biases
    tied: bool
    rope_scaling: RopeScaling
    rope_factor: float
    rope_low_freq_factor: float
    rope_high_freq_factor: float
    rope_original_ctx: int


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
