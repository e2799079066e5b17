"""The app's own words, in Chinese and English. Lessons carry their own text.

One mechanism: every piece of the app's text is a `Words` pair, (English, Chinese), and `say` is the one
place that picks a language and fills in the values. `t(key)` says this module's STRINGS; a screen or a
command keeps its own table of pairs and says them with `pick`; a record with text of its own (an
exercise's task, a stream point's label) holds `Words`. Nothing else compares `lang` with "zh".
"""

from __future__ import annotations

Words = tuple[str, str]  # (English, Chinese)
LANGUAGE_NAMES: Words = ("English", "中文")

STRINGS: dict[str, Words] = {  # key: (en, zh)
    "prompt": ("Prompt", "提示词"),
    "prompt_placeholder": ("Type a prompt, e.g. 猫追狗", "输入提示词，例如 猫追狗"),
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
    "rope_note": (  # then a scaled model's `rope_scaling_*`, then `rope_angles`
        "RoPE adds no vector: it turns each pair (q₂ᵢ, q₂ᵢ₊₁) and (k₂ᵢ, k₂ᵢ₊₁) by θ = pos / base^(2i/d_head).",
        "RoPE 不加向量：它把每一对 (q₂ᵢ, q₂ᵢ₊₁)、(k₂ᵢ, k₂ᵢ₊₁) 旋转 θ = pos / base^(2i/d_head)。",
    ),
    "rope_half_note": (  # a Llama-family model turns the half-split pairs (`rope_style` "half")
        "RoPE adds no vector: it turns each pair (q_i, q_{i+d/2}) and (k_i, k_{i+d/2}) — Hugging Face's pairing, the "
        "first half of a head with its second — by θ = pos / base^(2i/d_head).",
        "RoPE 不加向量：它按 Hugging Face 的配对方式（头的前一半与后一半）把每一对 (q_i, q_{i+d/2})、(k_i, k_{i+d/2}) "
        "旋转 θ = pos / base^(2i/d_head)。",
    ),
    "sentence_gap": (" ", ""),  # between two sentences: Chinese sets none
    "rope_angles": ("Angles θ (radians, mod 2π) per pair:", "每对维度的角度 θ（弧度，对 2π 取模）："),
    "rope_scaling_llama3": (  # Llama 3.1–3.3's NTK-by-parts (`rope_scaling` "llama3")
        "Llama 3 scaling (factor {factor}, trained on {ctx} positions): a pair that turns once in more than {low} "
        "positions turns {factor}× slower, one that turns once in fewer than {high} keeps its speed, those between "
        "are blended.",
        "Llama 3 缩放（factor {factor}，原训练长度 {ctx} 个位置）：转一圈要超过 {low} 个位置的维度对，转速降为原来的 "
        "1/{factor}；不到 {high} 个位置就转一圈的，转速不变；介于两者之间的，按比例混合。",
    ),
    "rope_scaling_linear": (
        "Linear scaling: every angle is divided by {factor} (position pos turns as pos/{factor} did).",
        "线性缩放：每个角度都除以 {factor}（位置 pos 转的角度等于原来 pos/{factor} 处的角度）。",
    ),
    "no_position": (
        "This model adds no position information: the token vector is all there is.",
        "这个模型不加入任何位置信息：只有词元向量本身。",
    ),
    "no_norm": ("This model has no LayerNorm.", "这个模型没有 LayerNorm。"),
    "sv_postnorm_rms": ("Post-norm: the next step is an RMSNorm of this sum", "后置归一化：下一步就对这个和做 RMSNorm"),
    "ln_title": ("{label}: normalising each token's own vector", "{label}：对每个词元自己的向量做归一化"),
    "ln_ahead": ("  (→ step {n})", "（→ 步骤 {n}）"),  # the norm shown is a later step's
    "ln_input": ("input x", "输入 x"),
    "ln_xhat": ("x̂ = (x − μ)/√(σ²+ε)", "x̂ = (x − μ)/√(σ²+ε)"),
    "ln_output": ("output γ·x̂ + β", "输出 γ·x̂ + β"),
    "ln_bypassed": (
        "What if: bypassed, LN(x) = x — no centring, no scaling, no γ, β: x̂ and y are x itself (μ, σ: what"
        " this LayerNorm would have divided out)",
        "假如：绕过了，LN(x) = x——不减均值、不除标准差、不乘 γ 不加 β：x̂ 和 y 就是 x 本身（μ、σ：这个"
        " LayerNorm 本来会除掉的量）",
    ),
    "ln_frozen": (
        "What if: μ and √(σ²+ε) frozen from another prompt's run (the columns show the frozen ones)",
        "假如：μ 和 √(σ²+ε) 固定为另一个提示词算出的值（表中列出的就是固定的值）",
    ),
    "ln_gamma": (
        "γ: mean {gm}, std {gs} · β: mean {bm}, std {bs}",
        "γ：均值 {gm}，标准差 {gs} · β：均值 {bm}，标准差 {bs}",
    ),
    # the same tab for a model whose norms are RMSNorm (norm_kind "rms"): no μ taken away, no β
    "rms_title": (
        "{label}: RMSNorm, dividing each token's own vector by its root mean square",
        "{label}：RMSNorm，把每个词元自己的向量除以它的均方根",
    ),
    "rms_xhat": ("x̂ = x / rms, rms = √(mean(x²)+ε)", "x̂ = x / rms，rms = √(mean(x²)+ε)"),
    "rms_output": ("output γ·x̂ (no centring, no β: μ stays in)", "输出 γ·x̂（不减均值，没有 β：μ 留在里面）"),
    "rms_bypassed": (
        "What if: bypassed, RMSNorm(x) = x — no scaling, no γ: x̂ and y are x itself (rms: what this RMSNorm"
        " would have divided by)",
        "假如：绕过了，RMSNorm(x) = x——不除均方根、不乘 γ：x̂ 和 y 就是 x 本身（rms：这个 RMSNorm 本来要除的数）",
    ),
    "rms_frozen": (
        "What if: the rms frozen from another prompt's run (the rms column shows the frozen one; RMSNorm has no μ)",
        "假如：rms 固定为另一个提示词算出的值（rms 列就是固定的值；RMSNorm 本来就没有 μ）",
    ),
    "rms_gamma": ("γ: mean {gm}, std {gs} · no β (RMSNorm)", "γ：均值 {gm}，标准差 {gs} · 没有 β（RMSNorm）"),
    "backward": ("backward", "反向"),
    "grad_reads": ("gets ∂L/∂ {out} → hands ∂L/∂ {into}", "收到 ∂L/∂ {out} → 传给 ∂L/∂ {into}"),
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
    "attn_silenced": (
        " · silenced: its z ← 0 (the pattern is still computed; nothing it reads goes on)",
        " · 已置零：z ← 0（注意力图照样算出，但它读到的东西不再往下传）",
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
    "lessons_notice": ("Lessons: {notice}", "课程：{notice}"),
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
    "everything_on_command": (
        "Show everything: every panel's details and every key, before the lessons reach them",
        "全部显示：不等课程讲到，就显示每个面板的全部细节和所有按键",
    ),
    "everything_off_command": (
        "Show the details as the lessons reach them",
        "按课程进度显示细节",
    ),
    "everything_on": (
        "Everything shown: every panel's details and every key in the footer.",
        "已全部显示：每个面板的全部细节，页脚列出所有按键。",
    ),
    "everything_off": (
        "Details now come as the lessons reach them (ctrl+p shows everything again).",
        "细节改为随课程进度出现（ctrl+p 可再次全部显示）。",
    ),
    "reading_time": ("{m} min read", "约 {m} 分钟"),
    # notices about a name that is not there (a link, the command line, a key): English as before, Chinese too
    "no_lesson": ("no lesson '{id}'", "没有课程“{id}”"),
    "no_heading": ("no heading '{heading}' in this lesson", "本课没有标题“{heading}”"),
    "last_lesson": ("✓ that was the last lesson", "✓ 全部课程已完成"),
    "no_experiment": ("no experiment '{name}' (known: {known})", "没有实验“{name}”（已有：{known}）"),
    "no_exercise": ("no exercise '{name}' (known: {known})", "没有编程练习“{name}”（已有：{known}）"),
    "block_range": ("this model has blocks 0–{last}", "这个模型只有第 0–{last} 块"),
    "no_step": ("model {model} has no step {name}", "模型 {model} 没有步骤 {name}"),
    "no_options": ("{name} takes no options ({options})", "{name} 不接受选项（{options}）"),
    "f3_shows_it": ("F3 shows the panel this link changed.", "按 F3 查看这个链接改动的面板。"),
    "typing_in_lesson": (
        "The lesson fills the window: F3 (or /) brings back the prompt to type in.",
        "课文占满了窗口：按 F3（或 /）回到提示词，再输入。",
    ),
    "answers_line": ("Hints and answers: ", "提示与答案："),  # the links follow at once
    # a fold's own line (tutor/lessons/folds.py): ▸ closed, ▾ open; its length as the lesson list gives a lesson's
    # (words: English words; characters: Chinese characters and the Latin words among them)
    "fold_closed": ("▸ {summary} · {n_words} words · {m} min", "▸ {summary} · {n_characters} 字 · 约 {m} 分钟"),
    "fold_open": ("▾ {summary} · {n_words} words · {m} min", "▾ {summary} · {n_characters} 字 · 约 {m} 分钟"),
    "fold_end": ("▴ Close: {summary}", "▴ 收起：{summary}"),
    "answer_item": ("Exercise {n}: hint and answer", "练习 {n}：提示与答案"),
    "no_answer": ("Lesson '{id}' has no hint for exercise {n}.", "课程“{id}”的练习 {n} 没有提示。"),
    "answer_title": ("{title} · exercise {n}", "{title} · 练习 {n}"),
    "answer_hint": ("Hint", "提示"),
    "answer_heading": ("Answer", "答案"),
    "answer_hidden": (
        "Try the exercise with the hint first. Press a to see the answer.",
        "先借着提示自己做一做，再按 a 看答案。",
    ),
    "no_links": ("This lesson has no links to try.", "本课没有可以执行的链接。"),
    "external_link": ("tutor does not open links outside the lessons: {href}", "tutor 不打开课程以外的链接：{href}"),
    # the attention panel: every head small, the selected one large (issue 18, part 3)
    "attn_heads": ("All {heads} heads, ▸ = query {q} {piece}", "全部 {heads} 个头，▸ = 查询 {q} {piece}"),
    "attn_masked": (" · · = masked", "，· = 被掩码遮住"),
    "attn_window": (" · rows {r0}–{r1}, columns {c0}–{c1} of {n}", "，显示第 {r0}–{r1} 行、第 {c0}–{c1} 列（共 {n}）"),
    "attn_heads_line": ("Heads: {heads}   F4 / shift+F4 picks one", "注意力头：{heads}   F4 / shift+F4 切换"),
    "attn_most": (
        "Head {head}, query {q} {piece}: most weight on key {k} {kpiece}, {p:.2f}",
        "头 {head}、查询 {q} {piece}：权重最大的是键 {k} {kpiece}，{p:.2f}",
    ),
    "attn_tied": (
        "Head {head}, query {q} {piece}: keys {keys} share the most weight, {p:.2f} each",
        "头 {head}、查询 {q} {piece}：权重并列最大的键：{keys}，各 {p:.2f}",
    ),
    "attn_entropy": (
        "entropy {h:.2f} bits ≤ log₂ {n} = {hmax:.2f}: as spread as {eff:.1f} equal keys",
        "熵 {h:.2f} 比特 ≤ log₂ {n} = {hmax:.2f}：分散程度相当于平分给 {eff:.1f} 个键",
    ),
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
    "lens_reading": (
        "Reading this token's lens in the background: a large model, {vocab} logits at each point …",
        "正在后台计算这个词元的 logit lens：模型较大，每一处都要算 {vocab} 个 logits……",
    ),
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
    "lens_settles_earlier": (
        "The model's guess {token} ({p}) leads the lens from {point} on, and before that only at {earlier}.",
        "模型最终的猜测 {token}（{p}）从 {point} 起一直排在第一；在此之前，只在 {earlier} 排过第一。",
    ),
    "lens_last_only": (
        "The model's guess {token} ({p}) leads only at the last point, {point}.",
        "模型最终的猜测 {token}（{p}）只在最后一处（{point}）才排在第一。",
    ),
    "lens_last_and_earlier": (
        "The model's guess {token} ({p}) leads at the last point, {point}, and before that only at {earlier}.",
        "模型最终的猜测 {token}（{p}）在最后一处（{point}）排第一；在此之前，只在 {earlier} 排过第一。",
    ),
    "lens_earlier_many": ("{count} points, the first {first}", "{count} 处（最早是 {first}）"),
    "list_separator": (", ", "、"),
    # -- sampling the next token (the next-token panel, the sample and generate keys) --
    "sample_all": ("all", "全部"),
    "sample_formula_argmax": (
        "T = 0: p = 1 for the likeliest token (the argmax), 0 for every other",
        "T = 0：概率最大的那个词元（argmax）p = 1，其余都是 0",
    ),
    "sample_over_all": ("j over all {n} tokens", "j 取遍全部 {n} 个词元"),
    "sample_over_k": ("i, j among the top {k} only (the rest: p = 0)", "i、j 只在前 {k} 个里取（其余 p = 0）"),
    "sample_seed": ("seed {seed}, {n} drawn", "种子 {seed}，已抽 {n} 次"),
    "sample_token": ("token", "词元"),
    "sample_p_model": ("model p", "模型 p"),
    "sample_p_drawn": ("drawn p", "抽样 p"),
    "sample_rest": (
        "the other {n} tokens together: model p {raw}, drawn p {p}",
        "其余 {n} 个词元合计：模型 p {raw}，抽样 p {p}",
    ),
    "sample_generating": (
        "Generating: {done} of {n} drawn (Esc or alt+g stops)",
        "正在生成：已抽 {done}/{n} 个（按 Esc 或 alt+g 停止）",
    ),
    "sample_run": ("[{i}/{n}]", "[{i}/{n}]"),
    "sample_drawn": (
        "Draw #{number}: “{token}” · model p {raw} · drawn p {p} (T={T}, k={k})",
        "第 {number} 次抽样：“{token}” · 模型 p {raw} · 抽样 p {p}（T={T}，k={k}）",
    ),
    "kv_cache_one": ("KV cache: computed 1 new position ({kept} kept)", "KV 缓存：只算了 1 个新位置（沿用 {kept} 个）"),
    "kv_backward_all": (
        "the backward pass still runs over all {n} positions",
        "反向传播仍要走遍全部 {n} 个位置",
    ),
    "kv_full_pass": ("no KV cache: computed all {n} positions", "没用 KV 缓存：全部 {n} 个位置重算"),
    "kv_because": ("because {why}", "因为{why}"),
    "kv_why_not_causal": (
        "without a causal mask the old positions see it too",
        "没有因果掩码，旧位置也看得见新词元",
    ),
    "kv_why_context_full": (
        "the context is full: the window slides, every position moves",
        "上下文已满，窗口一滑动，每个位置都变了",
    ),
    "clean_run": ("clean", "原样"),
    "kv_why_edited": (
        "the model is edited, and the cache would run the new token through the clean one",
        "模型被改动过，而缓存会让新词元走没改动的模型",
    ),
    "kv_why_retokenized": (
        "the text with the new token is cut into other tokens",
        "接上新词元后，整段文本切出的词元变了",
    ),
    "kv_why_empty": ("no positions to keep", "没有可沿用的位置"),
    "sample_from_last": (
        "A draw always follows the last token, {token} (position {pos}).",
        "抽样总是接在最后一个词元 {token}（位置 {pos}）后面。",
    ),
    "sample_keys": (
        "alt+t/T temperature · alt+k/K top-k · alt+n draw · alt+g draw {n}",
        "alt+t/T 温度 · alt+k/K top-k · alt+n 抽一个 · alt+g 连抽 {n} 个",
    ),
    "sample_wait": (
        "The typed prompt's pass is still on its way: draw again in a moment.",
        "刚输入的提示词还在计算，稍等再抽。",
    ),
    "sample_no_prompt": (
        "Type a prompt first: a draw follows its last token.",
        "先输入提示词：抽样接在它的最后一个词元后面。",
    ),
    "generate_stopped": ("Generation stopped: {done} of {n} drawn.", "生成已停止：抽了 {done}/{n} 个。"),
    "temperature_set": ("T = {T}", "温度 T = {T}"),
    "top_k_set": ("top-k = {k}", "top-k = {k}"),
    # -- positional encoding as pictures (tutor/widgets/position_pictures.py) --
    "pp_pos": ("pos ↓", "位置 ↓"),
    "pp_map_title": ("{what}: dim 0…{last} →", "{what}：维度 0…{last} →"),
    "pp_waves_title": ("PE(pos, dim) against pos", "PE(pos, dim) 随位置的变化"),
    "pp_learned_waves_title": ("W_pos[pos, dim] against pos", "W_pos[pos, dim] 随位置的变化"),
    "pp_wave": ("dim {j} λ{wavelength}", "维{j} λ{wavelength}"),
    "pp_learned_wave": ("dim {j}", "维 {j}"),
    "pp_dots_title": ("PE(p)·PE(q) against |p − q|", "PE(p)·PE(q) 随距离 |p − q| 的变化"),
    "pp_learned_dots_title": (
        "W_pos[p]·W_pos[q] against |p − q|",
        "W_pos[p]·W_pos[q] 随距离 |p − q| 的变化",
    ),
    "pp_distance": ("distance |p − q|", "距离 |p − q|"),
    "pp_position": ("pos", "位置 pos"),
    "pp_dot": ("Σᵢ cos(|p−q|·ωᵢ)", "Σᵢ cos(|p−q|·ωᵢ)"),
    "pp_reference": ("base {base}, trained", "训练时的基数 {base}"),
    "pp_mean": ("mean", "平均"),
    "pp_lowest": ("lowest", "最低"),
    "pp_highest": ("highest", "最高"),
    "pp_sinusoidal_note": (
        "λ = 2π·base^(2i/d) positions a turn. PE(p)·PE(q) depends only on |p − q|: over all p, q < {n} it is "
        "off the curve by ≤ {gap}.",
        "λ = 2π·base^(2i/d)，即转一圈所需的位置数。PE(p)·PE(q) 只取决于 |p − q|：在所有 p, q < {n} 上，"
        "它与曲线相差不超过 {gap}。",
    ),
    "pp_learned_note": (
        "Learned W_pos, d = {d}: no formula, training chose it. At one distance the dot products spread by up to "
        "{spread}: they need not depend on the distance alone.",
        "可学习的 W_pos，d = {d}：没有公式，是训练出来的。同一距离下点积最多相差 {spread}：不一定只取决于距离。",
    ),
    "pp_dial": ("pair {i} ω={omega}", "第 {i} 对 ω={omega}"),
    "pp_dial_angles": ("p={p} {a} q={q} {b}", "p={p} {a} q={q} {b}"),
    "pp_dial_between": ("(p−q)·ω {delta}", "夹角 {delta}"),
    "pp_rope_dials_note": (
        "Dials: pair i of q at p turned p·ωᵢ (hand p), of k at q turned q·ωᵢ (hand q); between: (p − q)·ωᵢ.",
        "表盘：位置 p 的 q 第 i 对转 p·ωᵢ（指针 p），位置 q 的 k 转 q·ωᵢ（指针 q）；夹角 (p − q)·ωᵢ。",
    ),
    "pp_nope": (
        "No positions here, so no picture: without them attention sees the prompt as a bag of tokens.",
        "这里没有位置编码，也就没有图：没有位置，注意力眼中的提示词只是一袋词元。",
    ),
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
    "sv_ln_bypassed": (
        "{token}: bypassed (what if): x̂ = y = x, no μ, σ, γ or β applied",
        "{token}：已绕过（假如）：x̂ = y = x，没有减 μ、除 σ，也没有乘 γ、加 β",
    ),
    "sv_ln_note": ("{token}: μ {mu}, √(σ²+ε) {s}", "{token}：μ {mu}，√(σ²+ε) {s}"),
    "sv_rms_xhat": ("x̂ = x / rms ({hook})", "x̂ = x / rms（{hook}）"),
    "sv_rms_y": ("y = γ·x̂: output ({hook})", "y = γ·x̂：输出（{hook}）"),
    "sv_gamma": ("γ, shared by all tokens ({name}.g; RMSNorm has no β)", "γ：所有词元共用（{name}.g；RMSNorm 没有 β）"),
    "sv_rms_token": (
        "{token}: x → x̂ = x / rms → y = γ·x̂ (colour: each row on its own scale)",
        "{token}：x → x̂ = x / rms → y = γ·x̂（颜色：每行各用自己的刻度）",
    ),
    "sv_rms_bypassed": (
        "{token}: bypassed (what if): x̂ = y = x, no rms or γ applied",
        "{token}：已绕过（假如）：x̂ = y = x，没有除以 rms，也没有乘 γ",
    ),
    "sv_rms_note": (
        "{token}: μ {mu} (kept: RMSNorm does not centre), rms {s}",
        "{token}：μ {mu}（保留：RMSNorm 不减均值），rms {s}",
    ),
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
    "sv_gate": ("gate x W_gate, before silu ({hook})", "门 x W_gate，silu 之前（{hook}）"),
    "sv_up": ("up projection x W_in ({hook})", "上投影 x W_in（{hook}）"),
    "sv_gated": ("silu(gate) ⊙ up: what W_out reads ({hook})", "silu(门) ⊙ 上投影：W_out 读的就是它（{hook}）"),
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

RMS_FORMULA = "y = γ · x / √(mean(x²) + ε)"  # RMSNorm's: no μ taken away, no β (the formulas carry no words)
RMS_BACKWARD_FORMULA = "∂L/∂x = (g − x̂·mean(g·x̂)) / rms,  g = γ·∂L/∂y;   ∂L/∂γ = Σ ∂L/∂y·x̂"

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


FORMS: dict[str, str] = {  # a step's other forms (`Step.form`), by "kind.form"
    "mlp.gated": "out = (silu(x W_gate) ⊙ x W_in) W_out,   silu(u) = u · σ(u)",
    "unembed.untied": "logits = x · W_U      (W_U its own matrix, not W_Eᵀ)",
}
BACKWARD_FORMS: dict[str, str] = {
    "attention.grouped": "∂L/∂x = ∂L/∂out · ∂attn/∂x   (a shared key/value head sums its query heads' ∂L/∂k, ∂L/∂v)",
    "mlp.gated": "∂L/∂x = ∂L/∂pre · W_gateᵀ + ∂L/∂pre_linear · W_inᵀ,  ∂L/∂pre = silu′(pre)·∂L/∂post·pre_linear",
}


def say(words: Words, lang: str, **values: object) -> str:
    """`words` in the learner's language (`zh`: the Chinese, anything else the English), filled in."""
    en, zh = words
    text = zh if lang == "zh" else en
    return text.format(**values) if values else text


def pick(words: dict[str, Words], key: str, lang: str, **values: object) -> str:
    """`words[key]` in the learner's language, filled in. Screens keep their own `words` tables."""
    return say(words[key], lang, **values)


def other_language(lang: str) -> str:
    """F5: Chinese ↔ English."""
    return say(("zh", "en"), lang)


def t(key: str, lang: str, **values: object) -> str:
    return pick(STRINGS, key, lang, **values)
