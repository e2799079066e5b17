"""Each formula against a hand computation or an independent closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest

from model import (
    attention,
    batch_norm,
    causal_mask,
    gelu,
    layer_norm,
    rms_norm,
    rope,
    sinusoidal_positions,
    softmax,
)


def test_layer_norm_of_1_2_3_4_by_hand() -> None:
    x = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    seen: dict[str, np.ndarray] = {}
    y = layer_norm(x, np.ones(4, np.float32), np.zeros(4, np.float32), 1e-5, lambda n, v: seen.__setitem__(n, v))
    assert seen["hook_mean"] == pytest.approx(2.5)
    assert seen["hook_scale"] == pytest.approx(math.sqrt(1.25 + 1e-5))  # σ² = 1.25
    assert seen["hook_xhat"] == pytest.approx([-1.3416, -0.4472, 0.4472, 1.3416], abs=1e-4)
    assert y == pytest.approx([-1.3416, -0.4472, 0.4472, 1.3416], abs=1e-4)


def test_layer_norm_applies_gamma_and_beta_after_normalising() -> None:
    x = np.array([[1.0, 2.0, 3.0, 4.0]], dtype=np.float32)
    gamma = np.array([2.0, 1.0, 0.5, -1.0], dtype=np.float32)
    beta = np.array([0.0, 1.0, -1.0, 3.0], dtype=np.float32)
    x_hat = np.array([-1.341635, -0.447212, 0.447212, 1.341635])
    assert layer_norm(x, gamma, beta)[0] == pytest.approx(gamma * x_hat + beta, abs=1e-4)


def test_layer_norm_output_has_mean_0_std_1_and_norm_sqrt_d() -> None:
    d = 64
    x = np.random.default_rng(0).normal(3.0, 7.0, (10, d)).astype(np.float32)
    y = layer_norm(x, np.ones(d, np.float32), np.zeros(d, np.float32))
    assert np.abs(y.mean(axis=-1)).max() < 1e-5
    assert y.std(axis=-1) == pytest.approx(np.ones(10), abs=1e-4)
    assert np.linalg.norm(y, axis=-1) == pytest.approx(np.full(10, math.sqrt(d)), rel=1e-4)


def test_rms_norm_of_1_2_3_4_by_hand_keeps_the_mean() -> None:
    x = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    gamma = np.array([2.0, 1.0, 0.5, -1.0], dtype=np.float32)
    seen: dict[str, np.ndarray] = {}
    y = rms_norm(x, gamma, 1e-6, lambda n, v: seen.__setitem__(n, v))
    rms = math.sqrt(7.5 + 1e-6)  # mean(x²) = (1 + 4 + 9 + 16) / 4
    assert seen["hook_scale"] == pytest.approx(rms)
    assert seen["hook_xhat"] == pytest.approx([1 / rms, 2 / rms, 3 / rms, 4 / rms], rel=1e-6)
    assert y == pytest.approx([2 / rms, 2 / rms, 1.5 / rms, -4 / rms], rel=1e-6)
    assert "hook_mean" not in seen  # nothing is centred: x̂ keeps x's sign and its mean


def test_rms_norm_matches_a_float64_reference_on_batches() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(2.0, 5.0, (3, 7, 48))
    gamma = rng.normal(1.0, 0.3, 48)
    reference = gamma * x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + 1e-5)
    y = rms_norm(x.astype(np.float32), gamma.astype(np.float32), 1e-5)
    assert y.dtype == np.float32
    assert np.abs(y - reference).max() / np.abs(reference).max() < 1e-6
    unit = rms_norm(x, np.ones(48), 0.0)
    assert np.linalg.norm(unit, axis=-1) == pytest.approx(np.full((3, 7), math.sqrt(48)), rel=1e-12)


def test_batch_norm_by_hand_normalises_each_column_over_the_tokens() -> None:
    # column 0 holds 1, 3: μ = 2, σ² = ((−1)² + 1²) / 2 = 1; column 1 holds 2, 6: μ = 4, σ² = 4
    x = np.array([[1.0, 2.0], [3.0, 6.0]])
    seen: dict[str, np.ndarray] = {}
    gamma, beta = np.array([2.0, 1.0]), np.array([0.5, -1.0])
    y = batch_norm(x, gamma, beta, 1e-5, lambda n, v: seen.__setitem__(n, v))
    assert seen["hook_mean"] == pytest.approx(np.array([[2.0, 4.0]]))
    assert seen["hook_scale"] == pytest.approx(np.array([[math.sqrt(1 + 1e-5), math.sqrt(4 + 1e-5)]]))
    x_hat = np.array(
        [[-1 / math.sqrt(1 + 1e-5), -2 / math.sqrt(4 + 1e-5)], [1 / math.sqrt(1 + 1e-5), 2 / math.sqrt(4 + 1e-5)]]
    )
    assert seen["hook_xhat"] == pytest.approx(x_hat)
    assert y == pytest.approx(gamma * x_hat + beta)
    # LayerNorm of the same matrix goes along the rows: row 0 is [1, 2] → [−1, 1] · 0.5 / √(0.25 + ε)
    assert layer_norm(x, np.ones(2), np.zeros(2))[0] == pytest.approx([-0.99998, 0.99998], abs=1e-5)


def test_batch_norm_row_reads_later_tokens_and_one_token_gives_beta() -> None:
    x = np.random.default_rng(1).normal(0.0, 2.0, (5, 8))
    gamma, beta = np.full(8, 1.5), np.linspace(-1, 1, 8)
    later = x.copy()
    later[4] += 1.0  # only the last token changes
    assert np.abs(batch_norm(later, gamma, beta)[0] - batch_norm(x, gamma, beta)[0]).max() > 0.1
    assert np.array_equal(layer_norm(later, gamma, beta)[0], layer_norm(x, gamma, beta)[0])
    assert np.array_equal(batch_norm(x[:1], gamma, beta), beta[None, :])  # σ = 0, x − μ = 0: x̂ = 0, y = β


def test_sinusoidal_table_for_d4_positions_0_to_3() -> None:
    table = sinusoidal_positions(4, 4, 10000.0)
    # d = 4: dimensions 0/1 turn at 1 radian per position, 2/3 at 1/10000^(2/4) = 0.01
    expected = [[math.sin(p), math.cos(p), math.sin(p / 100), math.cos(p / 100)] for p in range(4)]
    assert table == pytest.approx(np.array(expected), abs=1e-6)
    assert table[1] == pytest.approx([0.841, 0.540, 0.010, 1.000], abs=1e-3)
    assert table[3] == pytest.approx([0.141, -0.990, 0.030, 1.000], abs=1e-3)


@pytest.mark.parametrize(("n_ctx", "d", "base"), [(7, 8, 10000.0), (5, 6, 10.0), (9, 5, 1e6)])
def test_sinusoidal_matches_the_formula_entry_by_entry(n_ctx: int, d: int, base: float) -> None:
    table = sinusoidal_positions(n_ctx, d, base)
    assert table.dtype == np.float32 and table.shape == (n_ctx, d)
    for pos in range(n_ctx):
        for j in range(d):
            angle = pos / base ** ((j - j % 2) / d)  # the pair (2i, 2i+1) shares 2i
            expected = math.sin(angle) if j % 2 == 0 else math.cos(angle)
            assert table[pos, j] == pytest.approx(expected, abs=1e-6)


def test_rope_rotates_pairs_keeps_length_and_sees_only_relative_position() -> None:
    rng = np.random.default_rng(1)
    d_head, base = 8, 10000.0
    pe = sinusoidal_positions(20, d_head, base)
    q = rng.normal(size=(1, 1, d_head)).astype(np.float32)
    k = rng.normal(size=(1, 1, d_head)).astype(np.float32)
    rotated = rope(np.repeat(q, 20, axis=0), pe)
    assert np.linalg.norm(rotated, axis=-1) == pytest.approx(np.full((20, 1), np.linalg.norm(q)), rel=1e-5)
    # pair 0 at position 3 turns by 3 radians
    x0, x1 = q[0, 0, 0], q[0, 0, 1]
    assert rotated[3, 0, 0] == pytest.approx(x0 * math.cos(3) - x1 * math.sin(3), abs=1e-5)
    assert rotated[3, 0, 1] == pytest.approx(x0 * math.sin(3) + x1 * math.cos(3), abs=1e-5)

    # q at m, k at n: the score depends only on m - n
    def score(m: int, n: int) -> float:
        return float(rope(q, pe[m : m + 1])[0, 0] @ rope(k, pe[n : n + 1])[0, 0])

    assert score(5, 2) == pytest.approx(score(13, 10), abs=1e-4)
    assert score(5, 2) != pytest.approx(score(5, 4), abs=1e-3)


def test_softmax_rows_sum_to_one_and_ignore_shifts() -> None:
    x = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, -1000.0]], dtype=np.float32)
    p = softmax(x)
    assert p.sum(axis=-1) == pytest.approx([1.0, 1.0])
    assert p[0] == pytest.approx(np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum(), rel=1e-6)
    assert p[1] == pytest.approx([0.5, 0.5, 0.0])
    assert softmax(x + 7.0) == pytest.approx(p, rel=1e-6)


def test_gelu_tanh_form_known_values() -> None:
    x = np.array([-3.0, -1.0, 0.0, 1.0, 3.0], dtype=np.float32)
    expected = [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))) for v in x]
    assert gelu(x) == pytest.approx(expected, abs=1e-6)
    assert gelu(np.float32(1.0)) == pytest.approx(0.841192, abs=1e-6)
    assert gelu(x).dtype == np.float32


def test_causal_mask_with_and_without_cache_offset() -> None:
    assert causal_mask(3, 3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    assert causal_mask(1, 4).tolist() == [[True, True, True, True]]  # the newest token sees all


def test_attention_pattern_is_causal_and_rows_sum_to_one() -> None:
    rng = np.random.default_rng(2)
    q, k, v = (rng.normal(size=(2, 5, 4)).astype(np.float32) for _ in range(3))
    seen: dict[str, np.ndarray] = {}
    z = attention(q, k, v, causal=True, hook=lambda n, a: seen.__setitem__(n, a))
    pattern = seen["hook_pattern"]
    assert np.triu(pattern, k=1).max() == 0.0
    assert pattern.sum(axis=-1) == pytest.approx(np.ones((2, 5)))
    assert np.isneginf(seen["hook_attn_scores"][0, 0, 1])
    first = v[:, 0]  # the first token can only attend to itself
    assert z[:, 0] == pytest.approx(first, abs=1e-6)
    scores = q[1] @ k[1].T / 2.0
    row = np.exp(scores[2, :3] - scores[2, :3].max())
    assert pattern[1, 2, :3] == pytest.approx(row / row.sum(), rel=1e-5)
