"""The code the lessons quote reads as its formula: how it was made fast lives in code they do not quote.

Every function named in a `tutor-code` block, in either language, is checked: no comment about speed,
memory or caching, no docstring that argues for speed, no cache decorator and no in-place writes into
arrays. The fast twins the forward pass runs instead are tested equal to the formulas they stand for.
"""

from __future__ import annotations

import ast
import importlib
import io
import re
import textwrap
import tokenize
from pathlib import Path

import numpy as np
import pytest

import model
from tutor.lessons.parse import blocks_in, resolve_code

att = importlib.import_module("model.attention")  # the module: `model.attention` is also the function
CONTENT = Path(__file__).resolve().parent.parent / "content"

SPEED_IN_COMMENTS = re.compile(r"in place|slow|fast|allocat|cache|cost|µs|\bms\b|speed|memory|copy|\d\s*×", re.I)
SPEED_IN_DOCSTRINGS = re.compile(r"in place|faster|slower|allocat|\bcosts?\b|µs|\bms\b|speed|wrapper", re.I)
IN_PLACE_CALLS = {"copyto", "lru_cache", "cache", "put", "place", "putmask"}


def quoted_references() -> list[str]:
    references = {
        block.text.strip()
        for path in sorted(CONTENT.glob("*/*.md"))
        for block in blocks_in(path.read_text(encoding="utf-8"))
        if block.kind == "tutor-code"
    }
    return sorted(references)


QUOTED = quoted_references()


def test_the_lessons_quote_code() -> None:
    assert "model.attention.multi_head_attention" in QUOTED
    assert len(QUOTED) >= 15


def comments(source: str) -> list[str]:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [token.string for token in tokens if token.type == tokenize.COMMENT]


@pytest.mark.parametrize("reference", QUOTED)
def test_quoted_code_carries_no_speed_comment(reference: str) -> None:
    _, source = resolve_code(reference)
    found = [comment for comment in comments(source) if SPEED_IN_COMMENTS.search(comment)]
    assert not found, f"{reference} is quoted by a lesson, and its comments talk about speed: {found}"


@pytest.mark.parametrize("reference", QUOTED)
def test_quoted_docstring_argues_no_speed(reference: str) -> None:
    _, source = resolve_code(reference)
    function = ast.parse(textwrap.dedent(source)).body[0]
    docstring = ast.get_docstring(function) or ""  # type: ignore[arg-type]
    found = SPEED_IN_DOCSTRINGS.findall(docstring)
    assert not found, f"{reference} is quoted by a lesson, and its docstring talks about speed: {found}"


@pytest.mark.parametrize("reference", QUOTED)
def test_quoted_code_has_no_cache_and_no_in_place_writes(reference: str) -> None:
    _, source = resolve_code(reference)
    function = ast.parse(textwrap.dedent(source)).body[0]
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            assert name not in IN_PLACE_CALLS, f"{reference} calls {name}"
            assert all(keyword.arg != "out" for keyword in node.keywords), f"{reference} writes through out="
        if isinstance(node, ast.AugAssign):  # `x += …` of an array: an int counter is fine
            target = ast.unparse(node.target)
            assert target.endswith(("length", "count")), f"{reference} updates {target} in place"
    assert not any(isinstance(d, ast.Name | ast.Attribute | ast.Call) for d in function.decorator_list), (  # type: ignore[attr-defined]
        f"{reference} is decorated: {[ast.unparse(d) for d in function.decorator_list]}"  # type: ignore[attr-defined]
    )


# -- the fast twins compute what the quoted formulas compute ----------------------------------------


def _arrays(seed: int, *shapes: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(0.0, 1.0, shape).astype(np.float32) for shape in shapes]


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize(("n_q", "n_k"), [(1, 1), (5, 5), (1, 7), (3, 9), (0, 0)])
def test_attention_cached_mask_is_attention_bit_for_bit(causal: bool, n_q: int, n_k: int) -> None:
    q, k, v = _arrays(n_q * 10 + n_k, (2, 4, n_q, 8), (2, 4, n_k, 8), (2, 4, n_k, 8))
    tape: dict[str, np.ndarray] = {}
    fast_tape: dict[str, np.ndarray] = {}
    expected = att.attention(q, k, v, causal, tape.__setitem__)
    got = att.attention_cached_mask(q, k, v, causal, fast_tape.__setitem__)
    assert np.array_equal(got, expected, equal_nan=True)
    assert tape.keys() == fast_tape.keys()
    for name, value in tape.items():
        assert value.dtype == fast_tape[name].dtype and np.array_equal(value, fast_tape[name]), name


@pytest.mark.parametrize("rope", [False, True])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("shape", [(6, 16), (3, 5, 16), (1, 16)])
def test_multi_head_attention_kv_is_multi_head_attention_bit_for_bit(
    rope: bool, causal: bool, shape: tuple[int, ...]
) -> None:
    x, w_qkv, b_qkv, w_out, b_out = _arrays(len(shape), shape, (16, 48), (48,), (16, 16), (16,))
    pe = model.sinusoidal_positions(shape[-2], 4) if rope else None
    tape: dict[str, np.ndarray] = {}
    fast_tape: dict[str, np.ndarray] = {}
    expected = model.multi_head_attention(x, w_qkv, b_qkv, w_out, b_out, 4, causal, pe, tape.__setitem__)
    got, (k, v) = att.multi_head_attention_kv(x, w_qkv, b_qkv, w_out, b_out, 4, causal, pe, None, fast_tape.__setitem__)
    assert np.array_equal(got, expected)
    assert list(tape) == list(fast_tape)
    for name, value in tape.items():
        assert value.shape == fast_tape[name].shape and np.array_equal(value, fast_tape[name]), name
    assert np.array_equal(k, tape["hook_rot_k" if rope else "hook_k"]) and np.array_equal(v, tape["hook_v"])


def test_multi_head_attention_kv_continues_a_cache_as_one_pass_would() -> None:
    """The last two positions after a cache of the first five: the full pass's last rows, to float32 rounding."""
    x, w_qkv, b_qkv, w_out, b_out = _arrays(7, (7, 16), (16, 48), (48,), (16, 16), (16,))
    pe = model.sinusoidal_positions(7, 4)
    whole = model.multi_head_attention(x, w_qkv, b_qkv, w_out, b_out, 4, True, pe)
    _, past = att.multi_head_attention_kv(x[:5], w_qkv, b_qkv, w_out, b_out, 4, True, pe[:5])
    tail, (k, v) = att.multi_head_attention_kv(x[5:], w_qkv, b_qkv, w_out, b_out, 4, True, pe[5:], past)
    assert k.shape == v.shape == (7, 4, 4)
    assert np.allclose(tail, whole[5:], atol=1e-5)


def test_the_forward_pass_runs_the_formulas_where_they_cost_nothing() -> None:
    """The forward pass's attention makes q, k and v and turns them with the quoted `qkv_heads` and `rotate_qk`;
    only the scores' mask and softmax, and the KV cache, take the twins' path."""
    source = Path(att.__file__).read_text(encoding="utf-8")
    twin = source[source.index("def multi_head_attention_kv") :]
    assert "qkv_heads(" in twin and "rotate_qk(" in twin and "merge_heads(" in twin
    assert "multi_head_attention_kv(" in Path(model.gpt.__file__).read_text(encoding="utf-8")
