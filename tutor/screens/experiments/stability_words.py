"""What the stability lab says in words: every sentence it makes from numbers, one function per kind.

Each function reads only the cells (`model.sweep.Cell`) or the run record it is given, so a test can
check the sentence against those for any results at all (tests/test_experiment_stability.py generates
random records with hypothesis). No Textual here: the screen (stability.py) only places the lines.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from model.sweep import Cell
from model.train import GROWTH
from tutor.i18n import pick

WIRINGS = ("pre", "post", "none")  # norm placements, in the grid's order
GROWTH_FACTOR = 10.0  # a growth figure "has grown" once it passes this many times its value at step 0

WORDS: dict[str, tuple[str, str]] = {
    "pre": ("pre-norm", "pre-norm"),
    "post": ("post-norm", "post-norm"),
    "none": ("no LayerNorm", "无 LayerNorm"),
    "with_pre": ("with pre-norm", "pre-norm"),
    "with_post": ("with post-norm", "post-norm"),
    "with_none": ("without LayerNorm", "没有 LayerNorm"),
    "k_of_n": ("{k} of {n}", "{n} 次中 {k} 次"),
    "at_steps": (" (step {steps})", "（第 {steps} 步）"),
    "step_list_sep": (", ", "、"),
    "sep": ("; ", "；"),
    "comma": (", ", "，"),
    # the picked learning rate, wiring by wiring
    "rate_first": ("lr {lr}: {wiring} {k_of_n} runs diverged", "学习率 {lr}：{wiring}，{k_of_n}发散"),
    "rate_next": ("{wiring} {k_of_n}", "{wiring}，{k_of_n}"),
    "rate_none": ("lr {lr}: no runs on file.", "学习率 {lr}：文件里没有这个学习率的训练。"),
    "end": (".", "。"),
    # the rates at which every run trained, wiring by wiring
    "trains_intro": ("Learning rates at which every run trained — ", "每次都训练成功的学习率——"),
    "trains_some": ("{wiring}: {k} of {n} rates, up to {lr}", "{wiring}：{n} 个里有 {k} 个，最高 {lr}"),
    "trains_none": ("{wiring}: none of {n} rates", "{wiring}：{n} 个里一个也没有"),
    # one cell
    "cell": (
        "{wiring}, lr {lr}, {warmup}: {n} run{s} — {diverged} diverged{steps}, {stalled} stalled",
        "{wiring}，学习率 {lr}，{warmup}：共 {n} 次——{diverged} 次发散{steps}，{stalled} 次停滞",
    ),
    "cell_loss_one": ("; final loss {median}", "；最终损失 {median}"),
    "cell_loss": (
        "; final loss median {median}, range {low}–{high} (the {m} that did not diverge)",
        "；最终损失中位数 {median}，范围 {low}–{high}（没有发散的 {m} 次）",
    ),
    "cell_no_loss": ("; no final loss (every run diverged)", "；没有最终损失（每次都发散了）"),
    "warmup": ("warm-up {n} steps", "预热 {n} 步"),
    "no_warmup": ("no warm-up", "不预热"),
    # one run
    "run": (
        "Run: {wiring}, lr {lr}, {warmup}, seed {seed} ({i} of {n}: n for the next) — {outcome}",
        "单次训练：{wiring}，学习率 {lr}，{warmup}，种子 {seed}（{n} 个中的第 {i} 个，按 n 换下一个）——{outcome}",
    ),
    "outcome_trained": ("trained to {loss}", "训练到 {loss}"),
    "outcome_stalled": ("stalled at {loss} (unigram {unigram})", "停滞在 {loss}（一元基线 {unigram}）"),
    "outcome_diverged": (
        "diverged at step {step} ({what} stopped being finite)",
        "在第 {step} 步发散（{what}不再有限）",
    ),
    "what_loss": ("the loss", "损失"),
    "what_gradient norm": ("the gradient norm", "梯度范数"),
    # which growth figure passed GROWTH_FACTOR × its start first
    "growth_first": (
        "First past {factor:g}× its value at step 1: {first} at step {step}",
        "最先超过第 1 步的 {factor:g} 倍：{first}，在第 {step} 步",
    ),
    "growth_then": ("; then {rest}", "；然后是{rest}"),
    "growth_item": ("{name} (step {step})", "{name}（第 {step} 步）"),
    "growth_never": ("; never: {names}", "；始终没有：{names}"),
    "growth_none": (
        "No growth figure passed {factor:g}× its value at step 1.",
        "没有哪个量超过第 1 步的 {factor:g} 倍。",
    ),
    "grad_norm": ("gradient norm before clipping", "裁剪前的梯度范数"),
    "max_attn_score": ("max |attention score|", "最大 |注意力分数|"),
    "max_logit": ("max |logit|", "最大 |logit|"),
    "stream_norm": ("‖x‖ after the last block", "最后一块之后的 ‖x‖"),
}


def words(key: str, lang: str, **values: object) -> str:
    return pick(WORDS, key, lang, **values)


def rate_text(lr: float) -> str:
    """A learning rate as the grid writes it: 0.001, 0.03, 1."""
    return f"{lr:g}"


def wiring_name(norm: str, lang: str) -> str:
    return words(norm, lang) if norm in WIRINGS else norm


def warmup_text(warmup: int, lang: str) -> str:
    return words("warmup", lang, n=warmup) if warmup else words("no_warmup", lang)


def step_list(steps: Sequence[int], lang: str) -> str:
    return words("step_list_sep", lang).join(str(s) for s in steps)


def diverged_text(cell: Cell, lang: str) -> str:
    """ "2 of 3 (step 12, 40)": how many of the cell's runs diverged, and at which steps."""
    steps = cell.diverged_steps()
    text = words("k_of_n", lang, k=len(steps), n=cell.n)
    return text + (words("at_steps", lang, steps=step_list(steps, lang)) if steps else "")


def loss_text(cell: Cell) -> str:
    """The final loss of the runs that did not diverge: "2.611 (2.526–2.702)", one run's alone, or "—"."""
    losses = cell.final_losses()
    if not losses:
        return "—"
    median = cell.median()
    if len(losses) == 1 or median is None:
        return f"{losses[0]:.3f}"
    return f"{median:.3f} ({losses[0]:.3f}–{losses[-1]:.3f})"


def rate_sentence(cells: Sequence[Cell], lr: float, lang: str) -> str:
    """How many runs diverged at learning rate `lr`, wiring by wiring (those without LayerNorm first):
    "lr 0.1: without LayerNorm 3 of 3 runs diverged; with pre-norm 0 of 3; with post-norm 1 of 3." """
    at_rate = [c for c in cells if c.lr == lr]
    order = {norm: i for i, norm in enumerate(("none", "pre", "post"))}
    at_rate.sort(key=lambda c: order.get(c.norm, len(order)))
    if not at_rate:
        return words("rate_none", lang, lr=rate_text(lr))
    parts = []
    for i, cell in enumerate(at_rate):
        k_of_n = words("k_of_n", lang, k=len(cell.diverged_steps()), n=cell.n)
        wiring = words(f"with_{cell.norm}", lang) if cell.norm in WIRINGS else cell.norm
        key = "rate_first" if i == 0 else "rate_next"
        parts.append(words(key, lang, lr=rate_text(lr), wiring=wiring, k_of_n=k_of_n))
    return words("sep", lang).join(parts) + words("end", lang)


def trains_sentence(cells: Sequence[Cell], lang: str) -> str:
    """At how many learning rates every run of a wiring trained (none diverged, none stalled), and the highest:
    "Learning rates at which every run trained — pre-norm: 6 of 6 rates, up to 0.3; no LayerNorm: 2 of 6 …" """
    parts = []
    for norm in WIRINGS:
        own = [c for c in cells if c.norm == norm]
        if not own:
            continue
        good = [c.lr for c in own if c.count("trained") == c.n]
        wiring = wiring_name(norm, lang)
        if good:
            parts.append(words("trains_some", lang, wiring=wiring, k=len(good), n=len(own), lr=rate_text(max(good))))
        else:
            parts.append(words("trains_none", lang, wiring=wiring, n=len(own)))
    if not parts:
        return ""
    return words("trains_intro", lang) + words("sep", lang).join(parts) + words("end", lang)


def cell_sentence(cell: Cell, lang: str) -> str:
    """One cell in a sentence: its runs, how many diverged (at which steps) and stalled, its final losses."""
    steps = cell.diverged_steps()
    text = words(
        "cell",
        lang,
        wiring=wiring_name(cell.norm, lang),
        lr=rate_text(cell.lr),
        warmup=warmup_text(cell.warmup, lang),
        n=cell.n,
        s="" if cell.n == 1 else "s",
        diverged=len(steps),
        steps=words("at_steps", lang, steps=step_list(steps, lang)) if steps else "",
        stalled=cell.count("stalled"),
    )
    losses = cell.final_losses()
    median = cell.median()
    if not losses or median is None:
        text += words("cell_no_loss", lang)
    elif len(losses) == 1:
        text += words("cell_loss_one", lang, median=f"{losses[0]:.3f}")
    else:
        text += words(
            "cell_loss", lang, median=f"{median:.3f}", low=f"{losses[0]:.3f}", high=f"{losses[-1]:.3f}", m=len(losses)
        )
    return text + words("end", lang)


def run_sentence(cell: Cell, index: int, lang: str) -> str:
    """The cell's run `index` (by seed) in a line: its recipe, its seed, and how it ended."""
    run = cell.runs[index]
    diverged = run.get("diverged")
    if isinstance(diverged, dict):
        what = str(diverged.get("what"))
        what = words(f"what_{what}", lang) if f"what_{what}" in WORDS else what
        outcome = words("outcome_diverged", lang, step=diverged.get("step"), what=what)
    elif run.get("outcome") == "stalled":
        unigram = float(run.get("unigram", math.nan))  # type: ignore[arg-type]
        loss = float(run["final_val_loss"])  # type: ignore[arg-type]
        outcome = words("outcome_stalled", lang, loss=f"{loss:.3f}", unigram=f"{unigram:.3f}")
    else:
        outcome = words("outcome_trained", lang, loss=f"{float(run['final_val_loss']):.3f}")  # type: ignore[arg-type]
    return words(
        "run",
        lang,
        wiring=wiring_name(cell.norm, lang),
        lr=rate_text(cell.lr),
        warmup=warmup_text(cell.warmup, lang),
        seed=run.get("seed"),
        i=index + 1,
        n=cell.n,
        outcome=outcome,
    )


def growth_series(run: dict[str, object], key: str) -> list[float]:
    """A run's per-step figure `key` (`model.train.GROWTH`), None (not finite when recorded) as inf."""
    growth = run.get("growth")
    values = growth.get(key, []) if isinstance(growth, dict) else []
    out = []
    for value in values if isinstance(values, list) else []:
        try:
            out.append(math.inf if value is None else float(value))
        except (TypeError, ValueError):
            out.append(math.nan)
    return out


def first_growth_step(values: Sequence[float], factor: float = GROWTH_FACTOR) -> int | None:
    """The first step (1: the first update's forward pass, as a divergence step counts) at which the figure is
    more than `factor` × its value at step 1 (or not finite: inf, a None on file); None if it never is, or has
    no positive start."""
    if not values or not math.isfinite(values[0]) or values[0] <= 0:
        return None
    for step, value in enumerate(values, start=1):
        if value == math.inf or (math.isfinite(value) and value > factor * values[0]):
            return step
    return None


def growth_sentence(run: dict[str, object], lang: str) -> str:
    """Which of the four growth figures passed GROWTH_FACTOR × its value at step 1 first, and when the others did:
    the learner sees what grew before the run blew up."""
    firsts = [(key, first_growth_step(growth_series(run, key))) for key in GROWTH]
    grown = sorted(((step, GROWTH.index(key), key) for key, step in firsts if step is not None))
    never = [key for key, step in firsts if step is None]
    if not grown:
        return words("growth_none", lang, factor=GROWTH_FACTOR)
    (step, _, first), rest = grown[0], grown[1:]
    text = words("growth_first", lang, factor=GROWTH_FACTOR, first=words(first, lang), step=step)
    if rest:
        items = [words("growth_item", lang, name=words(key, lang), step=s) for s, _, key in rest]
        text += words("growth_then", lang, rest=words("comma", lang).join(items))
    if never:
        text += words("growth_never", lang, names=words("comma", lang).join(words(key, lang) for key in never))
    return text + words("end", lang)
