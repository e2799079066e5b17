"""Training throughput of the NumPy GPT, and of the same model in PyTorch when it is installed.

    python scripts/bench_train.py [--batch 16] [--steps 30] [--threads 1]

One training step = forward, backward, gradient clipping and the AdamW update, on `batch`
windows of 64 tokens, the `tiny` shape (d_model 64, 4 heads, 4 layers, d_mlp 256, sinusoidal,
pre-norm, tied embeddings) with the vocabulary of the current corpus. Reports the median step.
`--threads` sets OpenBLAS's and PyTorch's thread count (before NumPy loads).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--vocab", type=int, default=362, help="vocabulary size (362: today's corpus)")
    args = parser.parse_args()
    os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)

    import numpy as np

    from model.gradients import loss_and_gradients
    from model.train import RECIPES, AdamW, clip_global_norm

    recipe = RECIPES["tiny"]
    config = recipe.config(args.vocab)
    from model.params import init_params

    params = init_params(config, 0)
    optimizer = AdamW.zeros_like(params)
    rng = np.random.default_rng(0)
    windows = [rng.integers(0, args.vocab, (args.batch, config.n_ctx + 1)) for _ in range(args.steps + 3)]

    def numpy_step(i: int) -> None:
        grads = loss_and_gradients(params, config, windows[i][:, :-1], windows[i][:, 1:])[1]
        clip_global_norm(grads, 1.0)
        optimizer.update(params, grads, 1e-3, i + 1, recipe)

    tokens = args.batch * config.n_ctx
    numpy_rate = tokens / _median_step(numpy_step, args.steps)
    print(f"numpy  : {numpy_rate:>9,.0f} tokens/s  (batch {args.batch} × {config.n_ctx}, {args.threads} thread(s))")

    try:
        import torch
    except ImportError:
        print("torch  : not installed (pip install '.[bench]')")
        return
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    net = _torch_gpt(config, torch)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
    torch_windows = [torch.from_numpy(w.astype(np.int64)) for w in windows]

    def torch_step(i: int) -> None:
        logits = net(torch_windows[i][:, :-1])
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, config.vocab_size), torch_windows[i][:, 1:].reshape(-1)
        )
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()

    torch_rate = tokens / _median_step(torch_step, args.steps)
    print(f"torch  : {torch_rate:>9,.0f} tokens/s  (torch {torch.__version__})")
    print(f"numpy / torch = {numpy_rate / torch_rate:.2f}")


def _median_step(step: object, steps: int) -> float:
    for i in range(3):  # warm-up
        step(i)  # type: ignore[operator]
    times = []
    for i in range(3, steps + 3):
        start = time.perf_counter()
        step(i)  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _torch_gpt(config: object, torch: object) -> object:
    """The same pre-norm, sinusoidal, tied-embedding GPT in PyTorch (GELU tanh form, causal)."""
    import math

    from model.positions import sinusoidal_positions

    nn = torch.nn  # type: ignore[attr-defined]
    cfg = config

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
            self.qkv, self.out = nn.Linear(cfg.d_model, 3 * cfg.d_model), nn.Linear(cfg.d_model, cfg.d_model)
            self.fc_in, self.fc_out = nn.Linear(cfg.d_model, cfg.d_mlp), nn.Linear(cfg.d_mlp, cfg.d_model)

        def forward(self, x: object) -> object:
            b, n, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (t.view(b, n, cfg.n_heads, cfg.d_head).transpose(1, 2) for t in (q, k, v))
            scores = q @ k.transpose(-1, -2) / math.sqrt(cfg.d_head)
            scores = scores.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
            z = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d)
            x = x + self.out(z)
            return x + self.fc_out(nn.functional.gelu(self.fc_in(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
            self.register_buffer("pe", torch.from_numpy(sinusoidal_positions(cfg.n_ctx, cfg.d_model)))
            self.blocks = nn.ModuleList(Block() for _ in range(cfg.n_layers))
            self.ln_f = nn.LayerNorm(cfg.d_model)

        def forward(self, tokens: object) -> object:
            x = self.wte(tokens) + self.pe[: tokens.shape[1]]
            for block in self.blocks:
                x = block(x)
            return self.ln_f(x) @ self.wte.weight.T

    return GPT()


if __name__ == "__main__":
    main()
