"""The main screen's keys, and the words the footer shows for them in both languages."""

from __future__ import annotations

from textual.binding import Binding

MAIN_KEYS = [
    # Footer order is what a learner needs first: at 80 columns only the first few fit, with F1, which lists all
    # (the footer keeps it whatever it leaves out: tutor/widgets/footer.py)
    # priority: the prompt (a scrolling widget underneath) would otherwise claim these keys
    Binding("down", "step(1)", "Step", key_display="↓↑", priority=True),
    Binding("up", "step(-1)", "Back", show=False, priority=True),
    Binding("f3", "toggle_lesson", "Lesson/panels"),
    # the lesson scrolls wherever the focus is (shown while the lesson is in view without the focus; with it,
    # the lesson's own PgDn is shown)
    Binding("alt+down", "scroll_lesson(1)", "Scroll", key_display="alt+↓↑", priority=True),
    Binding("alt+up", "scroll_lesson(-1)", "Scroll lesson back", show=False, priority=True),
    Binding("alt+pagedown", "scroll_panel(1)", "Scroll panel", show=False, priority=True),
    Binding("alt+pageup", "scroll_panel(-1)", "Scroll panel back", show=False, priority=True),
    Binding("f8", "lesson(1)", "Next lesson"),
    Binding("f7", "lesson(-1)", "Prev lesson", show=False),
    Binding("f10", "practice", "Practice"),
    Binding("f9", "links", "Try it"),
    Binding("f1", "help", "Help"),
    # ^r works in the prompt too (alt+b cannot: terminals send it as ESC b, which Textual reads as ctrl+left)
    Binding("ctrl+r", "turn", "Backward", priority=True),
    Binding("f2", "lessons", "Lessons"),
    Binding("pagedown", "block(1)", "Block", key_display="PgDn", priority=True),
    Binding("pageup", "block(-1)", "Block back", show=False, priority=True),
    Binding("shift+up", "first_step", "First step", show=False, priority=True),
    Binding("shift+down", "last_step", "Last step", show=False, priority=True),
    Binding("alt+right", "move_token(1)", "Token", key_display="alt+→"),
    Binding("alt+left", "move_token(-1)", "Token back", show=False),
    Binding("f4", "head(1)", "Head"),
    Binding("shift+f4", "head(-1)", "Head back", show=False),
    Binding("f6", "next_panel", "Panel"),
    Binding("f5", "toggle_language", "中/En"),
    # sampling the next token: alt+letters work from the prompt too (priority: the prompt would type the letter)
    Binding("alt+n", "sample", "Draw a token", key_display="alt+n", priority=True),
    Binding("alt+g", "generate", "Generate", show=False, priority=True),
    Binding("alt+t", "temperature(1)", "Temperature", key_display="alt+t/T", priority=True),
    Binding("alt+shift+t", "temperature(-1)", "Cooler", show=False, priority=True),
    Binding("alt+k", "top_k(1)", "More tokens", show=False, priority=True),
    Binding("alt+shift+k", "top_k(-1)", "Fewer tokens", show=False, priority=True),
    Binding("escape", "stop_generating", "Stop", show=False),
    # what if? edits of the model from the step on screen (tutor/screens/what_if.py)
    Binding("alt+x", "edit_step", "What if", key_display="alt+x", show=False, priority=True),  # F1, ^p list it
    Binding("alt+shift+x", "clear_edits", "Clear edits", show=False, priority=True),
    Binding("alt+p", "patch_point", "Patch", show=False, priority=True),
    # single keys, only when the prompt does not have the focus (the input would type them)
    Binding("j", "step(1)", show=False),
    Binding("k", "step(-1)", show=False),
    Binding("l,right", "move_token(1)", show=False),
    Binding("h,left", "move_token(-1)", show=False),
    Binding("right_square_bracket", "head(1)", show=False),
    Binding("left_square_bracket", "head(-1)", show=False),
    Binding("b", "turn", show=False),
    Binding("question_mark", "help", show=False),
    Binding("slash", "focus_prompt", show=False),
    *[Binding(str(n), f"goto_block({n})", show=False) for n in range(10)],
]
FOOTER: dict[str, tuple[str, str]] = {  # action: (en, zh) label in the footer
    "step(1)": ("Step", "步进"),
    "toggle_lesson": ("Lesson/panels", "课文/面板"),
    "lesson(1)": ("Next lesson", "下一课"),
    "practice": ("Practice", "练习"),
    "links": ("Try it", "试一试"),
    "help": ("Help", "帮助"),
    "lessons": ("Lessons", "课程"),
    "block(1)": ("Block", "下一块"),
    "move_token(1)": ("Token", "词元"),
    "head(1)": ("Head", "注意力头"),
    "next_panel": ("Panel", "面板"),
    "turn": ("Backward", "反向传播"),  # where ctrl+r takes the learner: TURN_FORWARD while backward
    "scroll_lesson(1)": ("Scroll", "滚动"),  # the lesson, or the panel while the lesson is out of view
    "page_down": ("Scroll", "滚动"),  # the lesson's own, while it has the focus
    "toggle_fold": ("Open/close", "展开/收起"),  # the fold in view, while the lesson has the focus
    "sample": ("Draw a token", "抽一个词元"),
    "temperature(1)": ("Temperature", "温度"),
    "toggle_language": ("中/En", "中/En"),
}
TURN_FORWARD = ("Forward", "正向计算")  # ctrl+r's label while the pass is shown backwards
