"""How position enters the model: a sinusoidal table, or rotations of q and k (RoPE)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from model.config import GPTConfig


def sinusoidal_positions(n_ctx: int, d: int, base: float = 10000.0) -> np.ndarray:
    """The sinusoidal position table, one row per position, interleaved sin/cos:

        PE(pos, 2i)   = sin(pos / base^(2i/d))
        PE(pos, 2i+1) = cos(pos / base^(2i/d))

    Low dimensions turn fast (they tell neighbours apart), high ones slowly
    (they tell near from far). Returns float32 `[n_ctx, d]`.
    """
    pos = np.arange(n_ctx, dtype=np.float64)[:, None]
    two_i = np.arange(0, d, 2, dtype=np.float64)
    angle = pos / base ** (two_i / d)  # [n_ctx, ceil(d/2)]
    pe = np.empty((n_ctx, d), dtype=np.float64)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d // 2])
    return pe.astype(np.float32)


def rope(x: np.ndarray, pe: np.ndarray) -> np.ndarray:
    """Rotary position embedding: turn each pair (x₂ᵢ, x₂ᵢ₊₁) by the angle θ = pos / base^(2i/d):

        x'₂ᵢ   = x₂ᵢ · cos θ − x₂ᵢ₊₁ · sin θ
        x'₂ᵢ₊₁ = x₂ᵢ · sin θ + x₂ᵢ₊₁ · cos θ

    The angles are the sinusoidal table's: `pe` is `sinusoidal_positions(...)` at the
    tokens' positions, `[pos, d_head]`, sin θ in its even columns and cos θ in its odd ones.
    `x` is queries or keys, `[pos, head, d_head]`. Rotating both q and k makes q·k depend on
    how far apart two tokens are, not on where they stand.
    """
    sin, cos = pe[:, None, 0::2], pe[:, None, 1::2]  # [pos, 1, d_head/2], shared by every head
    x_even, x_odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x_even * cos - x_odd * sin
    out[..., 1::2] = x_even * sin + x_odd * cos
    return out


def rotate_half(x: np.ndarray) -> np.ndarray:
    """(x₁, x₂) → (−x₂, x₁), x₁ the first half of the last axis and x₂ the second."""
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def rope_half(x: np.ndarray, pe: np.ndarray) -> np.ndarray:
    """RoPE as Hugging Face's Llama turns queries and keys: dimension i pairs with i + d/2, not 2i with 2i+1:

        x' = x · cos θ + rotate_half(x) · sin θ
        x'ᵢ = xᵢ cos θᵢ − x_{i+d/2} sin θᵢ,   x'_{i+d/2} = x_{i+d/2} cos θᵢ + xᵢ sin θᵢ

    The same angles θᵢ = pos / base^(2i/d) as `rope`, from the same table `pe` (sin θ in its even columns, cos θ
    in its odd ones), on another pairing of the dimensions. `x` is `[pos, head, d_head]`.
    """
    sin, cos = np.ascontiguousarray(pe[:, None, 0::2]), np.ascontiguousarray(pe[:, None, 1::2])  # [pos, 1, d/2]
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    out = np.empty_like(x)
    first, second = out[..., :half], out[..., half:]  # written in place: two arrays fewer per call
    np.multiply(x1, cos, out=first)
    first -= x2 * sin
    np.multiply(x2, cos, out=second)
    second += x1 * sin
    return out


def rope_frequencies(d: int, base: float = 10000.0) -> np.ndarray:
    """How fast each pair (2i, 2i+1) turns, in radians per position:

        ωᵢ = 1 / base^(2i/d)

    The angle of pair i at position pos is θᵢ = pos · ωᵢ. `[d/2]`, float64.
    """
    return 1.0 / base ** (np.arange(0, d, 2, dtype=np.float64) / d)


def ntk_by_parts_frequencies(
    omega: np.ndarray, factor: float, low_freq_factor: float, high_freq_factor: float, original_ctx: int
) -> np.ndarray:
    """Llama 3.1's scaled RoPE (Hugging Face's `rope_type` "llama3", TransformerLens' NTK-by-parts): each
    frequency ωᵢ, by its wavelength λᵢ = 2π / ωᵢ against the context L = `original_ctx` first trained on:

        λᵢ < L / high_freq_factor:   ω'ᵢ = ωᵢ                          (fast pairs: kept)
        λᵢ > L / low_freq_factor:    ω'ᵢ = ωᵢ / factor                 (slow pairs: divided)
        otherwise:                   ω'ᵢ = (1 − s) · ωᵢ / factor + s · ωᵢ,
                                     s = (L / λᵢ − low_freq_factor) / (high_freq_factor − low_freq_factor)

    Pairs that turn many times within L still tell neighbours apart as before; pairs that never finished a turn
    within L are slowed by `factor`, so a longer context stays within the angles they were trained on. float64.
    """
    wavelength = 2 * np.pi / omega
    s = (original_ctx / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
    blended = (1 - s) * omega / factor + s * omega
    kept = wavelength < original_ctx / high_freq_factor
    divided = wavelength > original_ctx / low_freq_factor
    return np.where(kept, omega, np.where(divided, omega / factor, blended))


def model_rope_frequencies(cfg: GPTConfig) -> np.ndarray:
    """The frequencies ωᵢ a RoPE model turns its pairs by: the base's (`rope_frequencies` of d_head), divided by
    `rope_factor` ("linear"), or Llama 3's NTK-by-parts ("llama3"). `[d_head/2]`, float64."""
    omega = rope_frequencies(cfg.d_head, cfg.pos_base)
    if cfg.rope_scaling == "linear":
        return omega / cfg.rope_factor
    if cfg.rope_scaling == "llama3":
        return ntk_by_parts_frequencies(
            omega, cfg.rope_factor, cfg.rope_low_freq_factor, cfg.rope_high_freq_factor, cfg.rope_original_ctx
        )
    return omega


def angle_table(n_ctx: int, omega: np.ndarray) -> np.ndarray:
    """RoPE's table for any frequencies ωᵢ, laid out as `sinusoidal_positions`' (which is it for ωᵢ = 1/base^(2i/d)):

        table(pos, 2i) = sin(pos · ωᵢ),   table(pos, 2i+1) = cos(pos · ωᵢ)

    float32 `[n_ctx, 2 · len(ω)]`.
    """
    angle = np.arange(n_ctx, dtype=np.float64)[:, None] * omega
    table = np.empty((n_ctx, 2 * len(omega)), dtype=np.float64)
    table[:, 0::2] = np.sin(angle)
    table[:, 1::2] = np.cos(angle)
    return table.astype(np.float32)


def pe_wavelengths(d: int, base: float = 10000.0) -> np.ndarray:
    """How many positions each pair (2i, 2i+1) of the sinusoidal table takes for one full turn:

        λᵢ = 2π · base^(2i/d)

    Pair 0 turns every 2π ≈ 6.28 positions; the last pair, almost base times slower. `[ceil(d/2)]`, float64.
    """
    return 2 * np.pi * base ** (np.arange(0, d, 2, dtype=np.float64) / d)


def pe_dot_by_distance(distance: np.ndarray, d: int, base: float = 10000.0) -> np.ndarray:
    """PE(p)·PE(q) of the sinusoidal table, as a function of the distance k = p − q alone (d even):

        PE(p)·PE(q) = Σᵢ sin(p·ωᵢ)·sin(q·ωᵢ) + cos(p·ωᵢ)·cos(q·ωᵢ) = Σᵢ cos((p − q)·ωᵢ),   ωᵢ = 1 / base^(2i/d)

    So it is d/2 at distance 0 and never depends on where the two positions stand. float64.
    """
    omega = 1.0 / base ** (np.arange(0, d, 2, dtype=np.float64) / d)
    return np.cos(np.asarray(distance, dtype=np.float64)[..., None] * omega).sum(axis=-1)


def pe_distance(distance: np.ndarray, d: int, base: float | np.ndarray = 10000.0) -> np.ndarray:
    """‖PE(p + k) − PE(p)‖ of the sinusoidal table, as a function of the distance k alone (d even):

        ‖PE(p + k) − PE(p)‖² = Σᵢ (2 sin(k·ωᵢ / 2))²,   ωᵢ = 1 / base^(2i/d)

    Each pair is a point on a unit circle turned by k·ωᵢ: its chord is 2 sin(k·ωᵢ / 2). A list of bases gives
    one row per base. `[..., len(k)]`, float64.
    """
    omega = 1.0 / np.asarray(base, dtype=np.float64)[..., None] ** (np.arange(0, d, 2, dtype=np.float64) / d)
    chords = 2 * np.sin(np.asarray(distance, dtype=np.float64)[..., None] * omega[..., None, :] / 2)
    return np.sqrt((chords**2).sum(axis=-1))
