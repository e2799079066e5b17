"""The app's own words, in Chinese and English. Lessons carry their own text."""

from __future__ import annotations

STRINGS: dict[str, tuple[str, str]] = {  # key: (en, zh)
    "prompt": ("Prompt", "提示词"),
    "prompt_placeholder": ("Type a prompt, e.g. 猫追狗", "输入提示词，例如 猫追狗"),
    "tokens": ("Tokens", "词元"),
    "vectors": ("Vectors", "向量"),
    "layernorm": ("LayerNorm", "LayerNorm"),
    "residual": ("Residual", "残差流"),
    "attention": ("Attention", "注意力"),
    "next": ("Next token", "下一个词元"),
    "lesson": ("Lesson", "课程"),
    "step": ("Step", "步骤"),
    "untrained": ("untrained weights", "未训练的权重"),
    "model": ("model", "模型"),
    "shipped": ("shipped", "随附"),
    "not_shipped": ("not shipped yet", "尚未随附"),
    "model_failed": ("The model could not run on this prompt ({error}).", "模型无法处理这个提示词（{error}）。"),
    "empty_prompt": ("Type a prompt to see the model at work.", "输入提示词，看看模型如何计算。"),
    "dropped": (
        "The prompt is longer than the context: only the last {n} tokens are used ({d} dropped).",
        "提示词超出上下文长度：只使用最后 {n} 个词元（丢弃了 {d} 个）。",
    ),
    "too_small": (
        "Make the window larger: tutor needs at least {w}×{h} (now {cw}×{ch}).",
        "请把窗口调大：tutor 至少需要 {w}×{h}（当前 {cw}×{ch}）。",
    ),
    "token_embedding": ("token embedding W_E[token]", "词元嵌入 W_E[token]"),
    "position_vector": ("position vector PE(pos)", "位置向量 PE(pos)"),
    "learned_vector": ("learned position vector W_pos[pos]", "可学习的位置向量 W_pos[pos]"),
    "sum_vector": ("sum x = token + position", "相加 x = 词元 + 位置"),
    "rope_note": (
        "RoPE adds no vector: it turns each pair (q₂ᵢ, q₂ᵢ₊₁) and (k₂ᵢ, k₂ᵢ₊₁) "
        "by θ = pos / base^(2i/d_head). Angles θ (radians, mod 2π) per pair:",
        "RoPE 不加向量：它把每一对 (q₂ᵢ, q₂ᵢ₊₁)、(k₂ᵢ, k₂ᵢ₊₁) 旋转 θ = pos / base^(2i/d_head)。"
        "每对维度的角度 θ（弧度，对 2π 取模）：",
    ),
    "no_position": (
        "This model adds no position information: the token vector is all there is.",
        "这个模型不加入任何位置信息：只有词元向量本身。",
    ),
    "no_norm": ("This model has no LayerNorm.", "这个模型没有 LayerNorm。"),
    "ln_title": ("{label}: normalising each token's own vector", "{label}：对每个词元自己的向量做归一化"),
    "ln_input": ("input x", "输入 x"),
    "ln_xhat": ("x̂ = (x − μ)/√(σ²+ε)", "x̂ = (x − μ)/√(σ²+ε)"),
    "ln_output": ("output γ·x̂ + β", "输出 γ·x̂ + β"),
    "ln_gamma": (
        "γ: mean {gm}, std {gs} · β: mean {bm}, std {bs}",
        "γ：均值 {gm}，标准差 {gs} · β：均值 {bm}，标准差 {bs}",
    ),
    "backward": ("backward", "反向"),
    "grad_reads": ("gets ∂L/∂ {out} → hands ∂L/∂ {into}", "收到 ∂L/∂ {out} → 传给 ∂L/∂ {into}"),
    "gradient": ("∂L/∂x", "梯度"),  # short: at 80 columns every tab fits on the one line
    "similarity": ("Cosine", "相似度"),
    "grad_title": (
        "‖∂L/∂x‖, the loss's gradient on the residual stream, token {token}",
        "损失对残差流的梯度 ‖∂L/∂x‖，词元 {token}",
    ),
    "grad_underflow": (
        "A 0 at a scored token is float32 running out: the gradient fell below 1.4e-45, its smallest number.",
        "被打分的词元上出现的 0 是 float32 用到了头：梯度比它能表示的最小数 1.4e-45 还小。",
    ),
    "grad_needs_two": (
        "A loss needs at least 2 tokens (each position is scored on the next): type one more.",
        "损失至少要 2 个词元（每个位置都拿下一个词元来打分）：再输入一个。",
    ),
    "resid_title": ("‖x‖ of the residual stream, token {token}", "残差流的 ‖x‖，词元 {token}"),
    "largest_grad": ("largest |∂L/∂x| {token}{where}: dim {dims}", "{token}{where} |∂L/∂x| 最大的维度：{dims}"),
    "largest": ("largest |x| {token}{where}: dim {dims}", "{token}{where} |x| 最大的维度：{dims}"),
    "share": ("({p} of {of}²)", "（占 {of}² 的 {p}）"),
    "largest_at": (" at {point}", "在 {point}"),
    "attn_title": (
        "Block {block} · head {head}/{heads} · row = query, column = key",
        "第 {block} 块 · 头 {head}/{heads} · 行 = 查询，列 = 键",
    ),
    "next_title": ("After {token} (position {pos}) the model guesses:", "在 {token}（位置 {pos}）之后，模型猜："),
    "step_of": ("Step {i}/{n}", "步骤 {i}/{n}"),
    "reads": ("reads", "读取"),
    "writes": ("writes", "写入"),
    "adds": ("adds", "加上"),
    "help_title": ("Keys", "按键"),
    "help_close": ("↓↑ PgDn scroll · Esc closes", "↓↑ PgDn 滚动 · Esc 关闭"),
    "lessons_title": ("Lessons", "课程列表"),
    "no_lessons": ("No lessons found in {path}.", "在 {path} 中没有找到课程。"),
    "no_mask": ("(no causal mask)", "（没有因果掩码）"),
    "links_title": ("Try it: this lesson's links (Enter follows one)", "动手试试：本课的链接（回车执行）"),
    "practice_title": (
        "Practice: the quick check, experiments and exercises (Enter opens one)",
        "练习：小测验、实验和编程练习（回车打开）",
    ),
    "quiz_item": ("Quick check: {title}", "小测验：{title}"),
    "experiment_item": ("Experiment: {title}", "实验：{title}"),
    "exercise_item": ("Exercise: {title}", "编程练习：{title}"),
    "no_quiz": ("Lesson '{id}' has no quick check.", "课程“{id}”没有小测验。"),
    "no_links": ("This lesson has no links to try.", "本课没有可以执行的链接。"),
    "external_link": ("tutor does not open links outside the lessons: {href}", "tutor 不打开课程以外的链接：{href}"),
    # -- the Residual tab: ‖x‖ lines and the logit lens (tutor/panels/stream_panel.py and its parts) --
    "lines_title": (
        "‖x‖ of the stream, a line per token · ┊ this step: {point}",
        "残差流的 ‖x‖，每个词元一条线 · ┊ 当前步骤：{point}",
    ),
    "lines_log": (" (log)", "（对数）"),
    "lines_cursor": ("{token} (cursor)", "{token}（光标）"),
    "lines_others": ("the other {n} tokens", "其余 {n} 个词元"),
    "lines_some_others": ("{n} nearest of the other {m} tokens", "其余 {m} 个词元中最近的 {n} 个"),
    "lines_embed": ("emb", "嵌入"),
    "lens_title": (
        "Logit lens, token {token}: {formula} at each point",
        "Logit lens · 词元 {token}：残差流每一处的 {formula}",
    ),
    "lens_note_pre": (
        "A read-out of the stream through the final LayerNorm and the unembedding, not what the model outputs "
        "(only the last row is); TransformerLens calls it the logit lens.",
        "这是把残差流送进最后的 LayerNorm 和反嵌入读出来的结果，不是模型的输出（只有最后一行才是）；"
        "TransformerLens 称之为 logit lens。",
    ),
    "lens_note_post": (
        "A read-out of the stream through the unembedding (post-norm has no final LayerNorm: every sublayer "
        "already ends in one), not what the model outputs (only the last row is); TransformerLens calls it "
        "the logit lens.",
        "这是把残差流直接送进反嵌入读出来的结果（post-norm 没有最后的 LayerNorm，因为每个子层末尾已经有一个），"
        "不是模型的输出（只有最后一行才是）；TransformerLens 称之为 logit lens。",
    ),
    "lens_note_none": (
        "A read-out of the raw stream through the unembedding (this model has no LayerNorm: a larger ‖x‖ alone "
        "makes a sharper guess), not what the model outputs (only the last row is); TransformerLens calls it "
        "the logit lens.",
        "这是把未经归一化的残差流直接送进反嵌入读出来的结果（这个模型没有 LayerNorm，‖x‖ 越大，猜测就越尖锐），"
        "不是模型的输出（只有最后一行才是）；TransformerLens 称之为 logit lens。",
    ),
    "lens_no_residual": (
        "No residual here: each point is only its sublayer's output, which the next block replaces, not adds to.",
        "这个模型没有残差连接：每一处只是那个子层自己的输出，下一块会替换它，而不是在它上面累加。",
    ),
    "lens_top": ("top {k} read out", "读出的前 {k} 个"),
    "lens_final": ("p({token}), rank", "p({token})，名次"),
    "lens_settles": (
        "The model's guess {token} ({p}) leads the lens from {point} on.",
        "模型最终的猜测 {token}（{p}）从 {point} 起一直排在第一。",
    ),
    "lens_settles_last": (
        "The model's guess {token} ({p}) leads only at the last point, {point}.",
        "模型最终的猜测 {token}（{p}）只在最后一处（{point}）才排在第一。",
    ),
}

EMBED_FORMULAS: dict[str, str] = {  # by the model's positional encoding
    "sinusoidal": "x = W_E[token] + PE(pos)",
    "learned": "x = W_E[token] + W_pos[pos]",
    "rope": "x = W_E[token]      (RoPE turns q and k inside attention instead)",
    "none": "x = W_E[token]      (no position information at all)",
}

FORMULAS: dict[str, str] = {
    "norm": "y = γ · (x − μ) / √(σ² + ε) + β",
    "attention": "z = softmax(q·kᵀ / √d_head) · v,  out = z W_O + b_O",
    "residual": "x ← x + F(x)",
    "mlp": "out = gelu(x W_in + b_in) W_out + b_out",
    "unembed": "logits = x · W_Eᵀ",
}

BACKWARD_FORMULAS: dict[str, str] = {  # what a step does to the gradient, going back through it
    "embed": "∂L/∂W_E[token] += ∂L/∂x₀   (each position's gradient goes to its token's row)",
    "norm": "∂L/∂x = (g − mean(g) − x̂·mean(g·x̂)) / s,  g = γ·∂L/∂y;   ∂L/∂γ = Σ ∂L/∂y·x̂,  ∂L/∂β = Σ ∂L/∂y",
    "attention": "∂L/∂x = ∂L/∂out · ∂attn/∂x   (through v, and through q and k by the softmax)",
    "residual": "y = x + F(x)  ⇒  ∂L/∂x = ∂L/∂y + ∂L/∂y · ∂F/∂x",
    "mlp": "∂L/∂h = ∂L/∂out · W_outᵀ,  ∂L/∂pre = ∂L/∂h · gelu′(pre),  ∂L/∂x = ∂L/∂pre · W_inᵀ",
    "unembed": "∂L/∂logits = (softmax(logits) − one-hot(next token)) / (n − 1)",
}


def pick(words: dict[str, tuple[str, str]], key: str, lang: str, **values: object) -> str:
    """`words[key]` in the learner's language, filled in. Screens keep their own `words` tables."""
    en, zh = words[key]
    text = zh if lang == "zh" else en
    return text.format(**values) if values else text


def t(key: str, lang: str, **values: object) -> str:
    return pick(STRINGS, key, lang, **values)
