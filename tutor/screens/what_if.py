"""The main screen's "what if?": edits of the model shown, made from the step on screen (alt+x), a point patched
from another prompt (alt+p), each taken back from the edits bar (a click, or the palette) or all at once
(alt+X). The edits themselves: tutor/edits.py; the pass with them: passes.py."""

from __future__ import annotations

from textual.screen import Screen

from tutor.edits import MAX_EDITS, Edit, patch_edit, step_edit
from tutor.i18n import Words, say
from tutor.place import Place
from tutor.runner import PassRunner
from tutor.screens.passes import Ready

WORDS: dict[str, Words] = {
    "no_edit_here": (
        "Nothing to take out at {step}: step to a LayerNorm, an attention, an MLP or a residual add.",
        "{step} 这一步没有可以拿掉的部分：请走到 LayerNorm、注意力、MLP 或残差相加那一步。",
    ),
    "no_patch_here": ("No point to patch at {step}.", "{step} 这一步没有可以替换的点。"),
    "edit_added": (
        "What if: {edit}. A click on it above the panels (or ctrl+p) takes it back; alt+X takes back every edit.",
        "假如：{edit}。点击面板上方的这一项（或用 ctrl+p）可以撤回；alt+X 撤回所有改动。",
    ),
    "edit_removed": ("Taken back: {edit}.", "已撤回：{edit}。"),
    "edits_full": ("At most {n} edits at once: take one back first.", "最多同时改动 {n} 处：请先撤回一处。"),
    "edits_cleared": ("Every edit taken back: the model as trained.", "所有改动都已撤回：回到训练好的模型。"),
    "no_edits": ("No edits to take back.", "没有可以撤回的改动。"),
    "patch_length": (
        "“{src}” has {m} tokens and this prompt {n}: a patch needs prompts of the same length.",
        "“{src}”有 {m} 个词元，当前提示词有 {n} 个：替换要求两个提示词一样长。",
    ),
    "patch_title": (
        "Patch {where} at token {t} from another prompt of {n} tokens (Enter; Esc: cancel)",
        "用另一个 {n} 个词元的提示词替换 {where} 第 {t} 个词元处的值（Enter 确定，Esc 取消）",
    ),
}


class WhatIf(Screen[None]):
    """Edits of the model from the step on screen; every one reruns the pass (clean beside edited).

    A part of `MainScreen` (tutor/screens/main.py), which holds the state these methods use."""

    # MainScreen's, set in its __init__
    place: Place
    lang: str
    passes: PassRunner[Ready]

    def action_edit_step(self) -> None:
        """alt+x: the piece at the step on screen taken out (the selected head at an attention step), or put
        back if it is out already."""
        step = self.place.step
        if step is None:
            return
        edit = step_edit(step, self.place.head)
        if edit is None:
            self.notify(say(WORDS["no_edit_here"], self.lang, step=step.name), severity="warning")
            return
        self.toggle_edit(edit)

    def toggle_edit(self, edit: Edit) -> None:
        added = self.place.toggle_edit(edit)
        if added is None:
            self.notify(say(WORDS["edits_full"], self.lang, n=MAX_EDITS), severity="warning")
            return
        words = WORDS["edit_added" if added else "edit_removed"]
        self.notify(say(words, self.lang, edit=edit.words(self.lang)))
        self.edits_changed()

    def action_remove_edit(self, index: int) -> None:
        """A click on an edit in the bar (or its palette command): that one taken back."""
        if index < len(self.place.edits):
            edit = self.place.edits[index]
            self.place.remove_edit(index)
            self.notify(say(WORDS["edit_removed"], self.lang, edit=edit.words(self.lang)))
            self.edits_changed()

    def action_clear_edits(self) -> None:
        """alt+X: every edit taken back."""
        if not self.place.clear_edits():
            self.notify(say(WORDS["no_edits"], self.lang))
            return
        self.notify(say(WORDS["edits_cleared"], self.lang))
        self.edits_changed()

    def action_patch_point(self) -> None:
        """alt+p: the point at the step on screen (the selected token; at attention the selected head) replaced by
        the same point of another prompt's pass, asked for in a small box."""
        from tutor.screens.patch_prompt import PatchPromptScreen

        step, trace = self.place.step, self.place.trace
        if step is None or trace is None:
            return
        probe = patch_edit(step, self.place.head, self.place.token, "?")
        if probe is None:
            self.notify(say(WORDS["no_patch_here"], self.lang, step=step.name), severity="warning")
            return
        n = len(trace.tokens)
        where = probe.hook + (f" head {probe.head}" if probe.head is not None else "")
        title = say(WORDS["patch_title"], self.lang, where=where, t=self.place.token, n=n)

        def chosen(source: str | None) -> None:
            if not source:
                return
            m = len(self.place.gpt.prompt_tokens(source)[0])
            if m != n:
                self.notify(say(WORDS["patch_length"], self.lang, src=source, m=m, n=n), severity="warning")
                return
            edit = patch_edit(step, self.place.head, self.place.token, source)
            if edit is not None:
                self.toggle_edit(edit)

        self.app.push_screen(PatchPromptScreen(title), chosen)

    def edits_changed(self) -> None:
        """The pass again, with the edits as they are now (the clean one is on screen already)."""
        prompt = self.place.prompt
        self.run_model(prompt, inline=self.passes.quick_for(self.work_of(prompt)))
