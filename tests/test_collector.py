"""The garbage collector's full pass waits for a quiet moment (tutor/process_tuning.py)."""

from __future__ import annotations

import gc

from helpers import make_app

from tutor.process_tuning import FULL_PASS_THRESHOLD, QUIET, IdleCollector


def test_a_full_pass_runs_only_after_the_keys_are_quiet(monkeypatch) -> None:
    now = [100.0]
    passes: list[int] = []
    before = gc.get_threshold()
    collector = IdleCollector(clock=lambda: now[0])
    monkeypatch.setattr(gc, "collect", lambda *a: passes.append(1) or 0)
    try:
        assert gc.get_threshold()[2] == FULL_PASS_THRESHOLD  # never by itself
        assert gc.get_threshold()[:2] == before[:2]  # the young generations as they were
        assert not collector.tick()  # nothing typed since the start: nothing to do
        collector.key()
        now[0] += QUIET / 2
        assert not collector.tick() and not passes  # keys still coming
        now[0] += QUIET
        assert collector.tick() and passes == [1]
        assert not collector.tick() and passes == [1]  # once per quiet spell
    finally:
        collector.restore()
    assert gc.get_threshold() == before


async def test_the_app_holds_the_full_pass_while_it_runs(store) -> None:
    before = gc.get_threshold()
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("a")
        assert gc.get_threshold()[2] == FULL_PASS_THRESHOLD
        assert app.collector is not None and app.collector.pending  # the key was seen
    assert gc.get_threshold() == before  # given back when the app ends
