"""The hand-written backward pass against central finite differences, in float64.

Relative error of a gradient: ‖analytic − numeric‖ / max(‖analytic‖, ‖numeric‖, 1e-8), which
must stay ≤ 1e-6. Components are checked on every coordinate; the whole model on every
variant (positional × norm × residual × causal), on a sample of coordinates of every
parameter plus one random direction through the whole tensor, and every activation's gradient
in a `grads=True` trace along a random direction. All of it runs `GPT.forward`, the pass the app
shows and the lessons quote, in float64.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from helpers import LLAMA_VARIANTS, RMS_VARIANTS, TOKENIZER, VARIANTS, random_params, small_config, variant_id

import model
from model import backward as bw
from model.attention import attention
from model.embedding import embed, unembed
from model.gradients import loss_and_gradients, loss_only, record_forward
from model.hooks import no_hook
from model.mlp import gelu, mlp
from model.norm import layer_norm, rms_norm
from model.positions import rope, sinusoidal_positions

STEP = 1e-3
TOLERANCE = 1e-6


def relative_error(analytic: np.ndarray, numeric: np.ndarray) -> float:
    scale = max(np.linalg.norm(analytic), np.linalg.norm(numeric), 1e-8)
    return float(np.linalg.norm(analytic - numeric) / scale)


def central_difference(loss: Callable[[], float], x: np.ndarray, direction: np.ndarray) -> float:
    """∂L/∂x along `direction` from central differences, Richardson-extrapolated (the five-point stencil):

        D(h) = (L(x + h·u) − L(x − h·u)) / 2h,   ∂L/∂u ≈ (4·D(h/2) − D(h)) / 3,   error O(h⁴)

    A plain D(h) needs a small h (error O(h²)), where float64 round-off swamps small gradients.
    x is changed in place and restored.
    """
    values = {}
    original = x.copy()
    for k in (-2, -1, 1, 2):
        x[...] = original + (k * STEP / 2) * direction
        values[k] = loss()
    x[...] = original
    return (4 * (values[1] - values[-1]) / STEP - (values[2] - values[-2]) / (2 * STEP)) / 3


def numeric_gradient(loss: Callable[[], float], x: np.ndarray, indices: list[int] | None = None) -> np.ndarray:
    """`central_difference` along each coordinate i (all, or `indices`); zero elsewhere."""
    grad = np.zeros(x.size)
    for i in range(x.size) if indices is None else indices:
        unit = np.zeros(x.size)
        unit[i] = 1.0
        grad[i] = central_difference(loss, x, unit.reshape(x.shape))
    return grad.reshape(x.shape)


def rng_arrays(seed: int, *shapes: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape) for shape in shapes]


def check(analytic: np.ndarray, loss: Callable[[], float], x: np.ndarray) -> None:
    assert analytic.shape == x.shape
    error = relative_error(analytic, numeric_gradient(loss, x))
    assert error <= TOLERANCE, error


# -- each component alone: L = Σ R ⊙ f(inputs) for a fixed random R, so ∂L/∂f = R -------------


def test_cross_entropy() -> None:
    (logits,) = rng_arrays(0, (2, 5, 7))
    targets = np.random.default_rng(1).integers(0, 7, (2, 5))
    check(bw.cross_entropy_backward(logits, targets), lambda: bw.cross_entropy(logits, targets), logits)


def test_cross_entropy_is_the_mean_negative_log_probability() -> None:
    (logits,) = rng_arrays(0, (3, 4))
    targets = np.array([0, 3, 1])
    probs = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    assert bw.cross_entropy(logits, targets) == pytest.approx(-np.log(probs[[0, 1, 2], targets]).mean(), rel=1e-12)


def test_embed_and_tied_unembed() -> None:
    w_e, r_x, r_logits = rng_arrays(0, (6, 4), (2, 5, 4), (2, 5, 6))
    tokens = np.array([[0, 3, 3, 5, 1], [2, 3, 0, 0, 4]])
    check(bw.embed_backward(r_x, tokens, 6), lambda: float((embed(tokens, w_e) * r_x).sum()), w_e)
    x = embed(tokens, w_e) * 0.5
    d_x, d_w_e = bw.unembed_backward(r_logits, x, w_e)
    check(d_w_e, lambda: float((unembed(x, w_e) * r_logits).sum()), w_e)
    check(d_x, lambda: float((unembed(x, w_e) * r_logits).sum()), x)


def test_learned_positions() -> None:
    w_p, r = rng_arrays(0, (8, 4), (3, 5, 4))
    check(bw.learned_positions_backward(r, 8), lambda: float(((np.zeros((3, 5, 4)) + w_p[:5]) * r).sum()), w_p)


def test_rope() -> None:
    x, r = rng_arrays(0, (2, 6, 3, 8), (2, 6, 3, 8))
    pe = sinusoidal_positions(6, 8, 10.0).astype(np.float64)  # a small base: every pair turns visibly
    check(bw.rope_backward(r, pe), lambda: float((rope(x, pe) * r).sum()), x)


def test_layer_norm() -> None:
    x, gamma, beta, r = rng_arrays(0, (2, 3, 6), (6,), (6,), (2, 3, 6))
    x = 3.0 * x + 1.0
    tape: dict[str, np.ndarray] = {}
    layer_norm(x, gamma, beta, 1e-5, lambda name, value: tape.__setitem__(name, value))
    d_x, d_gamma, d_beta = bw.layer_norm_backward(r, tape["hook_xhat"], tape["hook_scale"], gamma)

    def loss() -> float:
        return float((layer_norm(x, gamma, beta, 1e-5) * r).sum())

    check(d_x, loss, x)
    check(d_gamma, loss, gamma)
    check(d_beta, loss, beta)


def test_rms_norm() -> None:
    x, gamma, r = rng_arrays(0, (2, 3, 6), (6,), (2, 3, 6))
    x = 3.0 * x + 1.0  # a mean RMSNorm does not remove
    tape: dict[str, np.ndarray] = {}
    rms_norm(x, gamma, 1e-5, lambda name, value: tape.__setitem__(name, value))
    d_x, d_gamma = bw.rms_norm_backward(r, tape["hook_xhat"], tape["hook_scale"], gamma)

    def loss() -> float:
        return float((rms_norm(x, gamma, 1e-5) * r).sum())

    check(d_x, loss, x)
    check(d_gamma, loss, gamma)


def test_softmax() -> None:
    s, r = rng_arrays(0, (3, 5), (3, 5))
    check(bw.softmax_backward(r, model.softmax(s)), lambda: float((model.softmax(s) * r).sum()), s)


@pytest.mark.parametrize("causal", [True, False], ids=["causal", "full"])
def test_attention(causal: bool) -> None:
    q, k, v, r = rng_arrays(0, (4, 5, 3), (4, 5, 3), (4, 5, 3), (4, 5, 3))
    tape: dict[str, np.ndarray] = {}
    attention(q, k, v, causal, lambda name, value: tape.__setitem__(name, value))
    d_q, d_k, d_v = bw.attention_backward(r, q, k, v, tape["hook_pattern"])

    def loss() -> float:
        return float((attention(q, k, v, causal) * r).sum())

    check(d_q, loss, q)
    check(d_k, loss, k)
    check(d_v, loss, v)


def test_gelu() -> None:
    x, r = rng_arrays(0, (4, 7), (4, 7))
    x = 3.0 * x
    check(bw.gelu_backward(r, x), lambda: float((gelu(x) * r).sum()), x)


def test_mlp() -> None:
    x, w_in, b_in, w_out, b_out, r = rng_arrays(0, (2, 3, 4), (4, 6), (6,), (6, 4), (4,), (2, 3, 4))
    tape: dict[str, np.ndarray] = {}
    mlp(x, w_in, b_in, w_out, b_out, lambda name, value: tape.__setitem__(name, value))
    grads = bw.mlp_backward(r, x, tape["hook_pre"], tape["hook_post"], w_in, w_out)

    def loss() -> float:
        return float((mlp(x, w_in, b_in, w_out, b_out) * r).sum())

    for grad, wrt in zip(grads, (x, w_in, b_in, w_out, b_out), strict=True):
        check(grad, loss, wrt)


@pytest.mark.parametrize("positional", ["rope", "none"])
@pytest.mark.parametrize("causal", [True, False], ids=["causal", "full"])
def test_multi_head_attention(positional: str, causal: bool) -> None:
    x, w_qkv, b_qkv, w_out, b_out, r = rng_arrays(0, (2, 5, 8), (8, 24), (24,), (8, 8), (8,), (2, 5, 8))
    pe = sinusoidal_positions(5, 4, 10.0).astype(np.float64) if positional == "rope" else None
    tape: dict[str, np.ndarray] = {}
    model.multi_head_attention(x, w_qkv, b_qkv, w_out, b_out, 2, causal, pe, tape.__setitem__)
    q, k = (tape["hook_rot_q"], tape["hook_rot_k"]) if pe is not None else (tape["hook_q"], tape["hook_k"])
    grads = bw.multi_head_attention_backward(
        r, x, q, k, tape["hook_v"], tape["hook_pattern"], tape["hook_z"], w_qkv, w_out, pe
    )

    def loss() -> float:
        return float((model.multi_head_attention(x, w_qkv, b_qkv, w_out, b_out, 2, causal, pe) * r).sum())

    for grad, wrt in zip(grads, (x, w_qkv, b_qkv, w_out, b_out), strict=True):
        check(grad, loss, wrt)


def test_batched_attention_matches_the_models_attention_per_sequence() -> None:
    x, w_qkv, b_qkv, w_out, b_out = (
        a.astype(np.float32) for a in rng_arrays(0, (3, 5, 8), (8, 24), (24,), (8, 8), (8,))
    )
    batched = model.multi_head_attention(x, w_qkv, b_qkv, w_out, b_out, 2)
    for seq, out in zip(x, batched, strict=True):
        assert np.allclose(model.multi_head_attention(seq, w_qkv, b_qkv, w_out, b_out, 2), out, atol=1e-6)


# -- the whole model ----------------------------------------------------------------------


class IdTokenizer:
    """Token ids only, for models smaller than any text tokenizer (the gradient checks' vocabulary of 24)."""

    def __init__(self, vocab_size: int) -> None:
        self.vocab_size, self.end_of_text = vocab_size, 0

    def encode(self, text: str) -> list[int]:
        raise NotImplementedError("feed token ids")

    def decode(self, ids: object) -> str:
        return " ".join(map(str, ids))  # type: ignore[call-overload]

    def piece(self, token: int) -> str:
        return str(token)


def float64_gpt(variant: dict, seed: int = 0) -> model.GPT:
    config = small_config(vocab_size=24, n_ctx=8, d_model=8, n_heads=2, n_layers=2, d_mlp=16, **variant)
    params = {name: value.astype(np.float64) for name, value in random_params(config, seed).items()}
    return model.GPT(config, params, IdTokenizer(24), lay_out=False, dtype=np.float64)


def tiny_case(variant: dict, seed: int = 0) -> tuple[model.GPT, np.ndarray, np.ndarray]:
    gpt = float64_gpt(variant, seed)
    windows = np.random.default_rng(seed).integers(0, gpt.config.vocab_size, (2, 7))
    return gpt, windows[:, :-1], windows[:, 1:]


def model_gradient_errors(variant: dict, sample: int | None) -> dict[str, float]:
    """Each parameter's relative error, on `sample` random coordinates plus one random direction (all if None)."""
    gpt, inputs, targets = tiny_case(variant)
    params = gpt.params
    _, grads = loss_and_gradients(gpt, inputs, targets)
    assert set(grads) == set(params)
    rng = np.random.default_rng(1)

    def loss() -> float:
        return loss_only(gpt, inputs, targets)

    errors = {}
    for name, value in params.items():
        indices = None if sample is None else list(rng.choice(value.size, min(sample, value.size), replace=False))
        numeric = numeric_gradient(loss, value, indices).reshape(-1)
        analytic = grads[name].reshape(-1)
        if indices is not None:
            numeric, analytic = numeric[indices], analytic[indices]
        errors[name] = relative_error(analytic, numeric)
        direction = rng.normal(size=value.shape)
        along = np.array([central_difference(loss, value, direction)])
        errors[name + " (direction)"] = relative_error(np.array([np.vdot(grads[name], direction)]), along)
    return errors


@pytest.mark.parametrize("variant", VARIANTS + RMS_VARIANTS + LLAMA_VARIANTS, ids=variant_id)
def test_whole_model_gradients(variant: dict) -> None:
    errors = model_gradient_errors(variant, sample=6)
    worst = max(errors, key=errors.__getitem__)
    assert errors[worst] <= TOLERANCE, f"{worst}: {errors[worst]:.2e}"


def test_whole_model_gradients_on_every_coordinate() -> None:
    errors = model_gradient_errors(dict(positional="sinusoidal", norm="pre", residual=True, causal=True), sample=None)
    worst = max(errors, key=errors.__getitem__)
    assert errors[worst] <= TOLERANCE, f"{worst}: {errors[worst]:.2e}"


def test_the_check_catches_a_wrong_layer_norm_gradient(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drop the x̂ · mean(g · x̂) term (the σ path) and the check must fail."""

    def without_the_variance_path(d_y, x_hat, scale, gamma, hook=no_hook):  # type: ignore[no-untyped-def]
        g = d_y * gamma
        d_x = (g - g.mean(axis=-1, keepdims=True)) / scale
        return d_x, (d_y * x_hat).reshape(-1, x_hat.shape[-1]).sum(0), d_y.reshape(-1, d_y.shape[-1]).sum(0)

    monkeypatch.setattr("model.gradients.layer_norm_backward", without_the_variance_path)
    errors = model_gradient_errors(dict(positional="learned", norm="pre", residual=True, causal=True), sample=6)
    assert max(errors.values()) > 1e-3


@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
def test_a_batch_runs_the_same_pass_as_each_of_its_sequences(variant: dict) -> None:
    """Training's batch goes through `GPT.forward` itself: every activation, sequence by sequence, is the trace's."""
    config = small_config(**variant)
    gpt = model.GPT(config, random_params(config), TOKENIZER)
    tokens = np.random.default_rng(0).integers(0, config.vocab_size, (3, config.n_ctx))
    logits, acts = record_forward(gpt, tokens)
    assert logits.dtype == np.float32 and all(value.dtype == np.float32 for value in acts.values())
    for b, seq in enumerate(tokens):
        trace = gpt.run(seq.tolist())
        assert list(trace.activations) == list(acts)
        for name, value in trace.activations.items():
            batched = acts[name] if name == "hook_pos_embed" else acts[name][b]  # positions: one table for all
            np.testing.assert_allclose(batched, value, rtol=1e-5, atol=1e-5, err_msg=name)


def test_gradients_stay_float32() -> None:
    config = small_config()
    gpt = model.GPT(config, random_params(config), TOKENIZER)
    windows = np.random.default_rng(0).integers(0, config.vocab_size, (2, 9))
    loss, grads = loss_and_gradients(gpt, windows[:, :-1], windows[:, 1:])
    assert np.isfinite(loss)
    assert {g.dtype for g in grads.values()} == {np.dtype(np.float32)}
    trace = gpt.run(windows[0].tolist(), grads=True)
    arrays = [*trace.grads.values(), *trace.param_grads.values(), trace.losses]
    assert {a.dtype for a in arrays} == {np.dtype(np.float32)}


# -- the backward pass as a trace ------------------------------------------------------------


def prompt_loss(gpt: model.GPT, tokens: np.ndarray, hook: model.hooks.Hook = no_hook) -> float:
    """The trace's loss: mean cross-entropy of positions 0 … n−2 predicting tokens 1 … n−1."""
    logits = gpt.forward(tokens, hook=hook)
    return float(bw.position_losses_and_backward(logits, tokens)[0].mean())


@pytest.mark.parametrize("variant", VARIANTS + RMS_VARIANTS + LLAMA_VARIANTS, ids=variant_id)
def test_every_activation_gradient_against_finite_differences(variant: dict) -> None:
    """∂L/∂a for every a in the trace, along a random direction u: nudge a by h·u where the forward
    hands it to its hook (the pass goes on from the nudged array) and difference the loss."""
    gpt = float64_gpt(variant)
    tokens = np.random.default_rng(3).integers(0, gpt.config.vocab_size, 7)
    trace = gpt.run(tokens.tolist(), grads=True)
    assert trace.loss == pytest.approx(prompt_loss(gpt, tokens), rel=1e-12)
    assert set(trace.grads) == {name + "_grad" for name in trace.activations}
    rng = np.random.default_rng(4)
    errors = {}
    for name, value in trace.activations.items():
        if name == "hook_pos_embed":  # a view of the position table: its gradient is hook_embed's, checked below
            assert np.array_equal(trace[name + "_grad"], trace["hook_embed_grad"])
            continue
        direction = rng.normal(size=value.shape)
        direction[~np.isfinite(value)] = 0.0  # masked attention scores stay −∞
        nudge = np.zeros(1)

        def nudged(
            hook_name: str, array: np.ndarray, name: str = name, direction: np.ndarray = direction, nudge=nudge
        ) -> None:
            if hook_name == name:
                array += nudge[0] * direction

        def loss(nudged: model.hooks.Hook = nudged) -> float:
            return prompt_loss(gpt, tokens, nudged)

        numeric = central_difference(loss, nudge, np.ones(1))
        analytic = float(np.vdot(np.nan_to_num(trace[name + "_grad"]), direction))
        errors[name] = relative_error(np.array([analytic]), np.array([numeric]))
    worst = max(errors, key=errors.__getitem__)
    assert errors[worst] <= TOLERANCE, f"{worst}: {errors[worst]:.2e}"


def test_trace_parameter_gradients_are_trainings_on_one_window() -> None:
    gpt = float64_gpt(dict(positional="learned", norm="pre", residual=True, causal=True))
    tokens = np.random.default_rng(5).integers(0, gpt.config.vocab_size, 8)
    trace = gpt.run(tokens.tolist(), grads=True)
    loss, grads = loss_and_gradients(gpt, tokens[None, :-1], tokens[None, 1:])
    assert trace.loss == pytest.approx(loss, rel=1e-12)
    assert trace.losses.shape == (7,) and trace.targets == tokens[1:].tolist()
    for name, g in grads.items():
        np.testing.assert_allclose(trace.param_grads[name], g, rtol=1e-9, atol=1e-12, err_msg=name)
    assert trace.param_grad_norms()["wte"] == pytest.approx(np.linalg.norm(grads["wte"]))


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_residual_paths_add_up_to_the_gradient_before_the_add(norm: str) -> None:
    gpt = float64_gpt(dict(positional="sinusoidal", norm=norm, residual=True, causal=True))
    trace = gpt.run([3, 1, 4, 1, 5, 9], grads=True)
    adds = [step for step in trace.steps if step.kind == "residual"]
    assert len(adds) == 2 * gpt.config.n_layers
    for step in adds:
        identity, through_f, total = trace.residual_paths(step)
        assert np.array_equal(identity, trace[step.out_hook + "_grad"])
        assert np.array_equal(total, trace[step.in_hook + "_grad"])
        np.testing.assert_allclose(identity + through_f, total, atol=1e-12)
        assert np.abs(through_f).max() > 1e-6  # F's path is really there
    with pytest.raises(ValueError, match="not a residual add"):
        trace.residual_paths(trace.steps[0])


def test_a_prompt_without_a_target_has_no_loss(make_gpt) -> None:  # type: ignore[no-untyped-def]
    gpt = make_gpt()
    for prompt in ("", "猫", [3]):
        with pytest.raises(model.NoTargetError, match="at least 2 tokens"):
            gpt.run(prompt, grads=True)
    trace = gpt.run("猫")  # the forward alone is fine, and has no backward to read
    assert not trace.has_grads and trace.loss is None
    with pytest.raises(KeyError, match="grads=True"):
        trace["blocks.0.hook_resid_pre_grad"]


@pytest.mark.reference
def test_shipped_model_gradients_match_pytorch_autograd() -> None:
    """The shipped `tiny`'s `grads=True` trace against autograd through the PyTorch reference model."""
    torch = pytest.importorskip("torch")
    from tutor.bench.reference import torch_training_model

    gpt = model.load("tiny")
    trace = gpt.run("猫追狗，狗追猫。A cat chases a dog.", grads=True)
    net = torch_training_model(gpt.config, {k: np.array(v) for k, v in gpt.params.items()})
    tokens = torch.tensor([trace.tokens])
    logits = net(tokens)[0]
    loss = torch.nn.functional.cross_entropy(logits[:-1], tokens[0, 1:])
    loss.backward()
    assert trace.loss == pytest.approx(loss.item(), abs=1e-5)
    theirs = {"wte": net.wte.weight.grad, "ln_final.g": net.ln_f.weight.grad, "ln_final.b": net.ln_f.bias.grad}
    for i, block in enumerate(net.blocks):
        b = f"blocks.{i}."
        for module, name in ((block.qkv, "attn.w_qkv"), (block.out, "attn.w_out")):
            theirs[b + name] = module.weight.grad.T  # nn.Linear keeps [out, in]
            theirs[b + name.replace(".w_", ".b_")] = module.bias.grad
        for module, name in ((block.fc_in, "mlp.w_in"), (block.fc_out, "mlp.w_out")):
            theirs[b + name] = module.weight.grad.T
            theirs[b + name.replace(".w_", ".b_")] = module.bias.grad
        for module, name in ((block.ln1, "ln1"), (block.ln2, "ln2")):
            theirs[b + name + ".g"], theirs[b + name + ".b"] = module.weight.grad, module.bias.grad
    assert set(theirs) == set(trace.param_grads)
    for name, grad in theirs.items():
        reference = grad.numpy()
        assert np.abs(trace.param_grads[name] - reference).max() / np.abs(reference).max() < 1e-4, name
