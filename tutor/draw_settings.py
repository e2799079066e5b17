"""How the next token is chosen: the learner's temperature, top-k and seed, and the last token drawn.

Plain records, no Textual: `Place` holds a `Sampling` and replaces it on each move; the next-token panel
reads it from the `View`. The numbers themselves are `model.sampling`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from model import GPT, Trace

TEMPERATURES: tuple[float, ...] = (0.0, 0.25, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0)
TOP_KS: tuple[int | None, ...] = (1, 3, 5, 10, 50, None)  # None: every token of the vocabulary
GENERATE_N = 10  # how many tokens one press of the generate key draws in a row


@dataclass(frozen=True)
class Sampled:
    """One token drawn and appended to the prompt."""

    number: int  # the session's draw number: draw n of seed s is the same token from the same distribution
    token: int
    piece: str
    raw_p: float  # the model's own probability for it, softmax(z)
    p: float  # the probability it was drawn with, at the temperature and top-k of the draw
    temperature: float
    top_k: int | None
    computed: int  # positions the model computed for it: 1 through the KV cache, else the whole prompt
    kept: int  # positions kept from the pass before (the KV cache); 0 for a full pass
    full_reason: str | None = None  # why not the KV cache: "not_causal", "context_full", "retokenized", "empty",
    # "edited"
    run: tuple[int, int] | None = None  # (i, n): the i-th of n tokens generated in a row
    backward: bool = False  # the pass has its gradients: the backward pass ran over every position


@dataclass(frozen=True)
class Sampling:
    """The learner's sampling settings, and what the last draw gave."""

    temperature: float = 1.0
    top_k: int | None = None
    seed: int = 0
    draws: int = 0  # draws made this session: the next one is number `draws`
    last: Sampled | None = None  # the token the pass on screen ends with, when it was drawn (not typed)
    generating: tuple[int, int] | None = None  # (done, n) while tokens are being generated in a row


def appended(gpt: GPT, trace: Trace, prompt: str, token: int) -> tuple[str, str | None]:
    """The prompt's text with `token` appended, and why its pass cannot be `gpt.extend(trace, token)` — the
    reason `GPT.extend_refusal` gives, or "retokenized": the prompt is text, and the new text is cut into other
    tokens than the old ones plus this one (a BPE merge across the seam, a lone byte of a UTF-8 character,
    a special token's name). The trace on screen is always the text's own tokens, so that case runs the whole
    pass of the new text. None: the one new position is all there is to compute."""
    text = prompt + gpt.tokenizer.decode([token])
    reason = gpt.extend_refusal(trace)
    if reason is None and gpt.prompt_tokens(text) != ([*trace.tokens, token], trace.dropped):
        reason = "retokenized"
    return text, reason
