"""Hands-on coding exercises, rustlings-style: write a model/ function again, then watch it run the real model.

Each exercise names the function the learner writes, its task and hint in both languages, the starter
code (signature, the formula in the docstring, a TODO) and the model/ functions whose source is the
reference solution. The checker (`tutor.exercises.check`) runs the learner's file in a subprocess.
Imports nothing heavy: the app's menu and the CLI list these without NumPy.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from tutor.i18n import Words, say


@dataclass(frozen=True)
class Exercise:
    name: str
    titles: Words
    function: str  # the function the learner writes, found by this name in their file
    tasks: Words
    hints: Words
    code: str  # the starter code after the imports: signature, formula docstring, `{todo}` where the body goes
    reference: tuple[str, ...]  # model/ functions ("module:qualname") whose source is the solution
    live_model: str = "tiny"  # the shipped model the learner's function is swapped into

    def title(self, lang: str) -> str:
        return say(self.titles, lang)

    def task(self, lang: str) -> str:
        return say(self.tasks, lang)

    def hint(self, lang: str) -> str:
        return say(self.hints, lang)


LAYER_NORM = '''
def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """LayerNorm over each token's own vector (the last axis of x):

        μ  = mean(x)
        σ² = mean((x − μ)²)
        x̂  = (x − μ) / √(σ² + ε)
        y  = γ · x̂ + β

    x: [..., d] float32 (one vector, or one per token); gamma, beta: [d].
    Returns y: the same shape as x, float32.
    """
{todo}
'''

SINUSOIDAL_POSITIONS = '''
def sinusoidal_positions(n_ctx: int, d: int, base: float = 10000.0) -> np.ndarray:
    """The sinusoidal position table, one row per position, sin and cos interleaved:

        PE(pos, 2i)   = sin(pos / base^(2i/d))
        PE(pos, 2i+1) = cos(pos / base^(2i/d))

    pos = 0 … n_ctx−1 and column j = 0 … d−1 (even j = 2i: sine; odd j = 2i+1: cosine of the same angle).
    d may be odd: then the last column is a sine with no cosine partner.
    Returns PE: [n_ctx, d], float32.
    """
{todo}
'''

PRE_NORM_BLOCK = '''
def residual_block(
    x: np.ndarray,
    ln1: Callable[[np.ndarray], np.ndarray],
    attn: Callable[[np.ndarray], np.ndarray],
    ln2: Callable[[np.ndarray], np.ndarray],
    mlp: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """One pre-norm transformer block: only the wiring, the four parts are given.

        h = x + attn(ln1(x))      the attention sublayer reads a normalised copy, adds to the stream
        y = h + mlp(ln2(h))       the MLP sublayer does the same with the updated stream

    x: [pos, d] float32, the residual stream entering the block. ln1, attn, ln2, mlp each take a
    [pos, d] array and return one. Returns y: [pos, d], float32.
    """
{todo}
'''

CAUSAL_ATTENTION = '''
def causal_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Scaled dot-product attention with the causal mask, every head at once:

        scores  = q · kᵀ / √d_head                 [head, pos, pos]: row = query i, column = key j
        scores  = −∞ where j > i                   the causal mask: no looking at later tokens
        pattern = softmax(scores) over each row    every row sums to 1
        z       = pattern · v                      [head, pos, d_head]

        softmax(s)ⱼ = exp(sⱼ − max s) / Σₖ exp(sₖ − max s)      (minus the max: exp must not overflow)

    q, k, v: [head, pos, d_head] float32, as many keys as queries. Returns z: float32.
    """
{todo}
'''

ROPE = '''
def rope(x: np.ndarray, pe: np.ndarray) -> np.ndarray:
    """Rotary position embedding: turn each pair (x₂ᵢ, x₂ᵢ₊₁) of every head's vector by the angle θ:

        x'₂ᵢ   = x₂ᵢ · cos θ − x₂ᵢ₊₁ · sin θ
        x'₂ᵢ₊₁ = x₂ᵢ · sin θ + x₂ᵢ₊₁ · cos θ

    x: [pos, head, d_head] float32 (queries or keys). pe: [pos, d_head], the sinusoidal table at the
    tokens' positions: sin θ in its even columns, cos θ in its odd ones (pe[:, 0::2] and pe[:, 1::2],
    one angle per pair, the same for every head). Returns the rotated x, same shape, float32;
    leave x itself unchanged.
    """
{todo}
'''

EXERCISES: dict[str, Exercise] = {
    exercise.name: exercise
    for exercise in (
        Exercise(
            name="layer_norm",
            titles=(
                "LayerNorm",
                "LayerNorm",
            ),
            function="layer_norm",
            tasks=(
                "Normalise every token's vector to mean 0 and variance 1 (ε keeps it finite), "
                "then scale by γ and shift by β.",
                "把每个词元的向量归一化到均值 0、方差 1（ε 保证不除以零），再乘以 γ、加上 β。",
            ),
            hints=(
                "Take means over the last axis with keepdims=True, so that (x − μ) broadcasts: "
                "mu = x.mean(axis=-1, keepdims=True). ε goes inside the square root, next to σ².",
                "沿最后一个轴求均值，并用 keepdims=True，这样 (x − μ) 才能广播："
                "mu = x.mean(axis=-1, keepdims=True)。ε 在平方根里面，和 σ² 相加。",
            ),
            code=LAYER_NORM,
            reference=("model.norm:layer_norm",),
        ),
        Exercise(
            name="sinusoidal_positions",
            titles=(
                "Sinusoidal positions",
                "正弦位置编码",
            ),
            function="sinusoidal_positions",
            tasks=(
                "Build the table of position vectors: column 2i is sin(pos / base^(2i/d)), "
                "column 2i+1 the cosine of the same angle.",
                "构造位置向量表：第 2i 列是 sin(pos / base^(2i/d))，第 2i+1 列是同一角度的余弦。",
            ),
            hints=(
                "pos = np.arange(n_ctx)[:, None] and two_i = np.arange(0, d, 2) broadcast to all the angles "
                "at once; fill pe[:, 0::2] with sines and pe[:, 1::2] with cosines (only d // 2 of them), "
                "then .astype(np.float32).",
                "pos = np.arange(n_ctx)[:, None] 和 two_i = np.arange(0, d, 2) 一起广播，一次算出所有角度；"
                "pe[:, 0::2] 放正弦，pe[:, 1::2] 放余弦（只有 d // 2 列），最后 .astype(np.float32)。",
            ),
            code=SINUSOIDAL_POSITIONS,
            reference=("model.positions:sinusoidal_positions",),
        ),
        Exercise(
            name="residual_block",
            titles=(
                "A pre-norm block's residual wiring",
                "Pre-norm 块的残差连接",
            ),
            function="residual_block",
            tasks=(
                "Wire one transformer block the pre-norm way: each sublayer reads a LayerNorm'd copy of "
                "the stream and adds its output back: x + attn(ln1(x)), then + mlp(ln2(·)).",
                "按 pre-norm 的方式连接一个 Transformer 块：每个子层读取残差流经过 LayerNorm 的副本，"
                "再把输出加回去：x + attn(ln1(x))，然后 + mlp(ln2(·))。",
            ),
            hints=(
                "Two lines. The MLP's input is the stream after the attention add (h), not the block's "
                "input x; and the norm goes inside, before the sublayer, never around the sum (that is post-norm).",
                "两行就够。MLP 的输入是加完注意力之后的残差流 h，而不是块的输入 x；"
                "LayerNorm 放在子层前面，而不是套在求和外面（那是 post-norm）。",
            ),
            code=PRE_NORM_BLOCK,
            reference=("model.gpt:GPT.block", "model.gpt:GPT.sublayer"),
        ),
        Exercise(
            name="causal_attention",
            titles=(
                "Causal attention",
                "因果注意力",
            ),
            function="causal_attention",
            tasks=(
                "Compute attention for every head: scores q·kᵀ/√d_head, −∞ above the diagonal "
                "(no looking ahead), a softmax over each row, then the weighted sum of the values.",
                "为每个头计算注意力：分数 q·kᵀ/√d_head，对角线以上设为 −∞（不能偷看后面的词元），"
                "每行做 softmax，再对 v 加权求和。",
            ),
            hints=(
                "k.transpose(0, 2, 1) turns k into [head, d_head, pos]; np.tri(n, n, dtype=bool) is True "
                "where j ≤ i; np.where(mask, scores, -np.inf) masks; subtract the row max before np.exp. Divide by "
                "d_head ** 0.5, not np.sqrt(d_head): that is a float64 scalar and would make the result float64.",
                "k.transpose(0, 2, 1) 把 k 变成 [head, d_head, pos]；np.tri(n, n, dtype=bool) 在 j ≤ i 处为 True；"
                "用 np.where(mask, scores, -np.inf) 做掩码；np.exp 之前先减去每行的最大值。除以 d_head ** 0.5，"
                "不要用 np.sqrt(d_head)：它是 float64 标量，会让结果变成 float64。",
            ),
            code=CAUSAL_ATTENTION,
            reference=("model.attention:softmax", "model.attention:causal_mask", "model.attention:attention"),
        ),
        Exercise(
            name="rope",
            titles=(
                "RoPE",
                "RoPE 旋转位置编码",
            ),
            function="rope",
            tasks=(
                "Rotate every pair of dimensions of the queries (or keys) by its position's angle, "
                "reading sin θ and cos θ from the sinusoidal table.",
                "把查询（或键）的每一对维度按位置的角度旋转，sin θ 和 cos θ 从正弦位置表里读取。",
            ),
            hints=(
                "sin, cos = pe[:, None, 0::2], pe[:, None, 1::2] give [pos, 1, d_head/2], shared by every "
                "head; x[..., 0::2] and x[..., 1::2] are the pairs' two halves; write into np.empty_like(x).",
                "sin, cos = pe[:, None, 0::2], pe[:, None, 1::2] 的形状是 [pos, 1, d_head/2]，所有头共用；"
                "x[..., 0::2] 和 x[..., 1::2] 是每一对的两半；结果写进 np.empty_like(x)。",
            ),
            code=ROPE,
            reference=("model.positions:rope",),
            live_model="rope",
        ),
    )
}


def record_result(exercises: dict[str, Any], name: str, passed: bool, elsewhere: Any = None) -> dict[str, Any]:
    """Count a check in the learner's progress. `passed` stays true once earned: a pass unlocks the solution.

    `elsewhere` is the record another session (`tutor exercises` beside the app) has saved meanwhile:
    its tries and its pass count too.
    """
    records = [r for r in (exercises.get(name), elsewhere) if isinstance(r, dict)]
    tries = max((r["tries"] for r in records if isinstance(r.get("tries"), int)), default=0)
    earned = any(r.get("passed") is True for r in records)
    record = {"passed": earned or passed, "tries": tries + 1, "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
    exercises[name] = record
    return record


def status_mark(record: Any, untried: str = "·") -> str:
    """✓ passed, ✗ tried and not passed yet, `untried` (·) not tried."""
    if not isinstance(record, dict) or not record.get("tries"):
        return untried
    return "✓" if record.get("passed") else "✗"


def reference_source(exercise: Exercise) -> str:
    """The reference solution: model/'s own functions, their source as the lessons quote it."""
    import importlib
    import inspect
    import textwrap

    parts = []
    for reference in exercise.reference:
        module_name, qualname = reference.split(":")
        target: Any = importlib.import_module(module_name)
        for attribute in qualname.split("."):
            target = getattr(target, attribute)
        lines, first = inspect.getsourcelines(target)
        parts.append(f"# {module_name}.{qualname} (model/{module_name.split('.')[-1]}.py, line {first})\n")
        parts[-1] += textwrap.dedent("".join(lines))
    return "\n\n".join(parts)
