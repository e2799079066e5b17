"""How position enters the model: a sinusoidal table, or rotations of q and k (RoPE)."""

from __future__ import annotations

import numpy as np


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
