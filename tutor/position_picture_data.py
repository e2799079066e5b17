"""The numbers behind the positional-encoding pictures, as small pure functions (no Textual).

Each is cached by its inputs (d, base, number of positions, or the learned table's identity): the
pictures redraw only when one of them changes, never on a keystroke that leaves them alone.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from model import pe_dot_by_distance, pe_wavelengths, sinusoidal_positions


@lru_cache(maxsize=32)
def sinusoidal_table(n: int, d: int, base: float) -> np.ndarray:
    """`sinusoidal_positions(n, d, base)`, read-only, shared by every picture of it."""
    table = sinusoidal_positions(n, d, base)
    table.flags.writeable = False
    return table


def wave_dims(d: int) -> tuple[int, ...]:
    """The dimensions drawn as waves, all sines (2i): the fastest pair's, a quarter and halfway across, and the
    last pair's (the slowest). For d = 64, base 10000 their wavelengths grow tenfold each: 6.28, 62.8, 628, 47 100."""
    quarter, middle, last = 2 * (d // 8), 2 * (d // 4), 2 * ((d - 1) // 2)
    return tuple(dict.fromkeys(j for j in (0, quarter, middle, last) if 0 <= j < d))


def wavelength(j: int, d: int, base: float) -> float:
    """Positions per full turn of dimension j (its pair's λ = 2π · base^(2i/d), i = j // 2)."""
    return float(pe_wavelengths(d, base)[j // 2])


@lru_cache(maxsize=32)
def sinusoidal_dots(n: int, d: int, base: float) -> tuple[np.ndarray, float]:
    """The curve Σᵢ cos(k·ωᵢ) for distances k = 0 … n−1 (`pe_dot_by_distance`), and the largest gap over all
    p, q < n between the table's own PE(p)·PE(q) and the curve at |p − q|: how exactly "distance only" holds."""
    curve = pe_dot_by_distance(np.arange(n), d, base)
    pe = sinusoidal_table(n, d, base).astype(np.float64)
    distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    gap = float(np.abs(pe @ pe.T - curve[distance]).max()) if n else 0.0
    return curve, gap


def dots_by_distance(table: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each distance k = 0 … n−1, the mean, lowest and highest table[p]·table[p+k] over every p."""
    rows = np.asarray(table, dtype=np.float64)
    dots = rows @ rows.T
    n = len(rows)
    diagonals = [np.diagonal(dots, k) for k in range(n)]
    return (
        np.array([d.mean() for d in diagonals]),
        np.array([d.min() for d in diagonals]),
        np.array([d.max() for d in diagonals]),
    )


def rope_pair_angles(p: int, q: int, omega: float) -> tuple[float, float, float]:
    """The angles RoPE turns a pair of frequency ω by at positions p and q, p·ω and q·ω (mod 2π), and the angle
    from q's to p's, (p − q)·ω, in (−π, π]. ω is the model's own (`model.model_rope_frequencies`: scaled, for a
    Llama 3 model)."""
    a, b = (float(np.mod(position * omega, 2 * np.pi)) for position in (p, q))
    delta = float(np.angle(np.exp(1j * (a - b))))  # wrapped to (−π, π]
    return a, b, delta


def rope_pairs(d_head: int) -> tuple[int, ...]:
    """The pairs drawn as dials: the fastest, a middle one, the slowest."""
    pairs = d_head // 2
    return tuple(dict.fromkeys(i for i in (0, pairs // 2, pairs - 1) if 0 <= i < pairs))


def number(value: float) -> str:
    """A wavelength or rate as a learner reads it: 6.28, 629, 4.7e+04."""
    return f"{value:.3g}"
