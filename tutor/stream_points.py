"""The points of the residual stream where it can be measured (after the embedding and after each sublayer),
and the step that writes each: what the residual lines, the table and the logit lens are drawn against."""

from __future__ import annotations

from dataclasses import dataclass

from model import Trace
from tutor import i18n


@dataclass(frozen=True)
class ResidualPoint:
    """A place where the residual stream can be measured, and the step that writes it."""

    hook: str
    labels: i18n.Words  # (en, zh): "B0 attn", "B0 注意力"
    step_index: int

    def label(self, lang: str) -> str:
        return i18n.say(self.labels, lang)


def residual_points(trace: Trace) -> list[ResidualPoint]:
    """The stream after the embedding and after every sublayer: resid_pre, then mid and post of each block."""
    writer = {step.out_hook: step.index for step in trace.steps}
    n_layers = trace.config.n_layers
    # in post-norm and no-residual wirings the stream is written by the norm or the sublayer itself
    for step in trace.steps:
        if step.block is not None:
            for name in ("hook_resid_mid", "hook_resid_post"):
                hook = f"blocks.{step.block}.{name}"
                if hook not in writer and _same_array(trace, hook, step.out_hook):
                    writer[hook] = step.index
    points = [ResidualPoint("blocks.0.hook_resid_pre", ("embed", "嵌入"), writer["blocks.0.hook_resid_pre"])]
    for i in range(n_layers):
        points.append(
            ResidualPoint(
                f"blocks.{i}.hook_resid_mid",
                (f"B{i} attn", f"B{i} 注意力"),
                writer.get(f"blocks.{i}.hook_resid_mid", 0),
            )
        )
        points.append(
            ResidualPoint(
                f"blocks.{i}.hook_resid_post", (f"B{i} mlp", f"B{i} MLP"), writer.get(f"blocks.{i}.hook_resid_post", 0)
            )
        )
    return points


def _same_array(trace: Trace, a: str, b: str) -> bool:
    return a in trace and b in trace and trace[a] is trace[b]
