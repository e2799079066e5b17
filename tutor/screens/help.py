"""Every key, in the learner's language."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tutor.i18n import say, t

KEYS: list[tuple[str, str, str]] = [  # keys, English, Chinese
    ("↓ / ↑", "next / previous step (also j / k)", "下一步 / 上一步（也可用 j / k）"),
    ("PgDn / PgUp", "next / previous block", "下一个块 / 上一个块"),
    ("shift+↑ / shift+↓", "first / last step", "第一步 / 最后一步"),
    ("0 … 9", "jump to block N (outside the prompt)", "跳到第 N 块（焦点不在提示词时）"),
    (
        "ctrl+r / b",
        "turn the pass round: step back from the loss, the gradient ∂L/∂x at every step (b outside the prompt)",
        "把整个计算倒过来：从损失出发往回走，每一步看梯度 ∂L/∂x（b 在焦点不在提示词时可用）",
    ),
    ("alt+→ / alt+←", "next / previous token (also l / h)", "下一个 / 上一个词元（也可用 l / h）"),
    ("F4 / shift+F4", "next / previous attention head (also ] / [)", "下一个 / 上一个注意力头（也可用 ] / [）"),
    ("F6", "next panel", "下一个面板"),
    (
        "alt+t / alt+T · alt+k / alt+K",
        "temperature up / down (0 … 5) · top-k up / down (1 … all): the next-token panel's p",
        "温度调高 / 调低（0 … 5）· top-k 调大 / 调小（1 … 全部）：下一个词元面板的概率随之重算",
    ),
    (
        "alt+n · alt+g",
        "draw a token after the prompt (seeded: draw n is the same every session) · draw 10 in a row (Esc stops)",
        "抽一个词元接在提示词后（有种子：第 n 次抽样每次都一样）· 连抽 10 个（Esc 停止）",
    ),
    (
        "alt+x · alt+p · alt+X",
        "what if? take out the piece at this step (a LayerNorm, the selected head, an MLP, a residual add) or put it"
        " back · patch this point from another prompt · take back every edit (one: a click on it, or ctrl+p)",
        "假如？拿掉这一步的部件（LayerNorm、选中的注意力头、MLP、残差相加），或者放回去 · 用另一个提示词替换这一点的值"
        " · 撤回所有改动（撤回其中一处：点击它，或用 ctrl+p）",
    ),
    ("F9", "the lesson's links, to follow without a mouse", "本课的链接，不用鼠标也能执行"),
    (
        "F10",
        "practice: the lesson's quick check, the experiments, the coding exercises",
        "练习：本课的小测验、实验和编程练习",
    ),
    ("F2", "lesson list", "课程列表"),
    (
        "alt+↓ / alt+↑",
        "scroll the lesson a page, wherever the focus is (the panel, while the lesson is out of view)",
        "课文翻一页，焦点在哪里都可以（课文不在屏幕上时，翻的是面板）",
    ),
    ("alt+PgDn / alt+PgUp", "scroll the shown panel a page", "当前面板翻一页"),
    (
        "F7 / F8",
        "previous / next lesson (F8 marks this one done once read to its end or its quick check passed)",
        "上一课 / 下一课（读到末尾或通过小测验后，F8 会把本课标为完成）",
    ),
    (
        "F3",
        "lesson or panels (small windows); hide the lesson (wide ones)",
        "小窗口：在课文和面板之间切换；宽窗口：隐藏课文",
    ),
    ("F5", "中文 / English", "中文 / English"),
    (
        "/",
        "from the lesson or a panel: back to the prompt (in the prompt it types /)",
        "在课文或面板里：回到提示词输入框（在输入框里就是输入 /）",
    ),
    ("tab / shift+tab", "move the focus", "切换焦点"),
    (
        "enter / space",
        "in the lesson: open or close the fold in view (▸ a derivation; a click does it too)",
        "在课文里：展开或收起眼前的折叠段（▸ 推导；点一下也行）",
    ),
    ("ctrl+p", "command palette: lessons, models, steps, practice", "命令面板：课程、模型、步骤、练习"),
    ("F1 / ?", "this help", "本帮助"),
    (
        "ctrl+l",
        "draw the whole screen again (after a system message, say, wrote over it)",
        "重画整个屏幕（例如系统消息覆盖了屏幕之后）",
    ),
    ("ctrl+q", "quit (progress is saved as you go)", "退出（进度随时自动保存）"),
]


def key_table(lang: str) -> Table:
    """Every key and what it does, in `lang`: two columns, the keys never wrapped."""
    table = Table(box=None, padding=(0, 2), show_header=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for keys, en, zh in KEYS:
        table.add_row(keys, say((en, zh), lang))
    return table


class HelpScreen(ModalScreen[None]):
    """The keys in a framed box as wide as they need (at most the window), scrolled by ↓ ↑ PgDn PgUp.

    A scroll container sized `auto` measures its content with no room at all (Textual shrinks it to
    width 0 first), and a Rich table measured in no room is 0×0: the box was an empty frame. So the
    container measures in the window's width (`shrink = False`) and the table in the room the
    container then has (`shrink=True`), wrapping its second column where the window is narrow.
    """

    BINDINGS = [Binding("escape,f1,question_mark,q", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: auto; max-width: 100%; height: auto; max-height: 100%;
                                   border: round $accent; padding: 0 1; background: $surface;
                                   border-title-align: center; border-subtitle-align: right; }
    HelpScreen > VerticalScroll > Static { width: auto; }
    """

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang

    def compose(self) -> ComposeResult:
        keys = VerticalScroll(id="help-keys")
        keys.shrink = False
        keys.border_title = t("help_title", self.lang)
        keys.border_subtitle = t("help_close", self.lang)
        with keys:
            yield Static(key_table(self.lang), shrink=True)
