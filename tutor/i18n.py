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
    # -- the step's vectors (tutor/panels/step_vectors_panel.py) and the LayerNorm tab's rows --
    "sv_read": ("reads {hook}", "读入 {hook}"),
    "sv_added": ("adds {hook}", "加上 {hook}"),
    "sv_written": ("writes {hook}", "写出 {hook}"),
    "sv_ln_x": ("x: input ({hook})", "x：输入（{hook}）"),
    "sv_ln_xhat": ("x̂ = (x − μ)/√(σ²+ε) ({hook})", "x̂ = (x − μ)/√(σ²+ε)（{hook}）"),
    "sv_ln_y": ("y = γ·x̂ + β: output ({hook})", "y = γ·x̂ + β：输出（{hook}）"),
    "sv_gamma_beta": ("γ and β, shared by all tokens ({name}.g, .b)", "γ 和 β：所有词元共用（{name}.g、.b）"),
    "sv_ln_token": (
        "{token}: x → x̂ → y = γ·x̂ + β (colour: each row on its own scale)",
        "{token}：x → x̂ → y = γ·x̂ + β（颜色：每行各用自己的刻度）",
    ),
    "sv_ln_note": ("{token}: μ {mu}, √(σ²+ε) {s}", "{token}：μ {mu}，√(σ²+ε) {s}"),
    "sv_attn_in": ("input ({hook})", "输入（{hook}）"),
    "sv_attn_out": ("output ({hook})", "输出（{hook}）"),
    "sv_scores": (
        "scaled scores q·k/√d_head, before softmax · head {head}/{heads} · row = query, column = key, · = masked",
        "缩放后的分数 q·k/√d_head（softmax 之前）· 头 {head}/{heads} · 行 = 查询，列 = 键，· = 被掩码遮住",
    ),
    "sv_no_residual": ("No residual: this output is the new stream", "没有残差连接：这个输出直接就是新的残差流"),
    "sv_resid_x": ("x: stream before ({hook})", "x：相加之前的残差流（{hook}）"),
    "sv_resid_f": ("F(x): sublayer output ({hook})", "F(x)：子层的输出（{hook}）"),
    "sv_resid_sum": ("x + F(x): stream after ({hook})", "x + F(x)：相加之后的残差流（{hook}）"),
    "sv_postnorm": (
        "Post-norm: the next step is a LayerNorm of this sum",
        "后置归一化：下一步就对这个和做 LayerNorm",
    ),
    "sv_mlp_in": ("input x ({hook})", "输入 x（{hook}）"),
    "sv_mlp_pre": ("hidden units before GELU ({hook})", "GELU 之前的隐藏单元（{hook}）"),
    "sv_mlp_post": ("after GELU ({hook})", "经过 GELU 之后（{hook}）"),
    "sv_mlp_out": ("output, back to d_model ({hook})", "输出，回到 d_model 维（{hook}）"),
    "sv_mlp_active": ("most active units of {token}: {dims}", "{token} 最活跃的隐藏单元：{dims}"),
    "sv_final": ("final x ({hook})", "最后的向量 x（{hook}）"),
    "sv_wu": (
        "W_U = W_E (tied): the top {k} after {token}, labelled logit = x · row",
        "W_U = W_E（与嵌入共用）：{token} 之后前 {k} 名的行，标签 = x · 行 = logit",
    ),
    "sv_product": (
        "x ⊙ W_E[{piece}] term by term, sum = logit {logit}",
        "x ⊙ W_E[{piece}] 逐项相乘，加起来 = logit {logit}",
    ),
    "sv_dot": (
        "x[{pos}] · W_E[{piece}] = {dot} = logits[{pos}, {piece}] {logit} in the trace",
        "x[{pos}] · W_E[{piece}] = {dot}，正是轨迹里的 logits[{pos}, {piece}] {logit}",
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
