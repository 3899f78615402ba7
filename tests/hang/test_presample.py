"""The first busy/blocked sample taken ahead of a hang (triage.agent.hang.presample): started by the
monitor when the ranks are LEAD_S from the hang timeout, handed to the hang action when nothing
moved since, so the second sample (and the stop) comes at first-sample start + --sample-interval.
On a real process (tests/programs/agent_activity.py sleeping: a blocked rank)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.hang.test_detect import coll, rank
from tests.helpers.processes import python_program, running_program
from triage.agent.hang import busy
from triage.agent.hang.monitor import HangMonitor
from triage.agent.hang.presample import LEAD_S, PreSampler
from triage.agent.state import AgentContext, LocalRankStatus
from triage.options import HangSettings

pytestmark = pytest.mark.timeout(120)
T0 = 1_000_000.0
TIMEOUT = 30.0
INTERVAL = 2.0


def _stalled(now: float, stuck: float, pid: int, seq: int = 42) -> list[LocalRankStatus]:
    """Rank 0 waits in all_reduce for ``stuck`` s; rank 1 (``pid``) is outside any collective."""
    return [rank(0, in_flight=coll(0, seq, entered=now - stuck), seq=seq, pid=4242),
            rank(1, progress_age=stuck, seq=seq - 1, pid=pid)]


def _wait_result(pre: PreSampler) -> None:
    deadline = time.monotonic() + 30
    while pre._result is None and time.monotonic() < deadline:     # the background sample
        time.sleep(0.05)


def test_the_monitor_samples_ahead_and_the_action_gets_that_sample(tmp_path: Path) -> None:
    mon = HangMonitor(AgentContext("job", "h1", tmp_path, tmp_path / "h1", T0 - 100),
                      HangSettings(hang_timeout=TIMEOUT, sample_interval=INTERVAL))
    with running_program(python_program("agent_activity.py", "sleep")) as proc:
        assert mon.on_tick(_stalled(T0, TIMEOUT - 3 * LEAD_S, proc.pid), T0) is None
        assert mon._pre._key is None                        # not yet: nothing sampled
        assert mon.on_tick(_stalled(T0 + 0.5, TIMEOUT - LEAD_S + 0.1, proc.pid), T0 + 0.5) is None
        _wait_result(mon._pre)
        action = mon.on_tick(_stalled(T0 + 1.0, TIMEOUT + 0.1, proc.pid), T0 + 1.0)
        assert action is not None and action.sample == ((1, proc.pid),)
        first = action.first_sample
        assert first is not None and set(first.samples) == {1} and first.samples[1].pid == proc.pid
        [activity] = busy.sample_twice(action.sample, INTERVAL, first_sample=first)
        took = time.monotonic() - first.started
    assert activity.activity == busy.Activity.BLOCKED, activity
    assert INTERVAL <= took < INTERVAL + 2.0               # the second sample at first start + interval
    assert mon._pre.take(_stalled(T0 + 1.0, TIMEOUT, proc.pid), action.sample) is None    # used once


def test_a_sample_taken_ahead_is_not_used_when_the_ranks_moved_or_are_others() -> None:
    with running_program(python_program("agent_activity.py", "sleep")) as proc:
        pre = PreSampler(TIMEOUT, INTERVAL)
        before = _stalled(T0, TIMEOUT - LEAD_S / 2, proc.pid)
        pre.tick(before, T0)
        _wait_result(pre)
        assert pre.take(before, ((1, proc.pid + 1),)) is None            # another process
        pre.tick(before, T0)                                            # same stall: not sampled again
        time.sleep(1.0)
        assert pre._result is None
        pre._key = None
        pre.tick(before, T0)
        _wait_result(pre)
        moved = _stalled(T0, TIMEOUT - LEAD_S / 2, proc.pid, seq=43)    # a rank progressed since
        assert pre.take(moved, ((1, proc.pid),)) is None
        pre._key = None
        pre.tick(before, T0)
        _wait_result(pre)
        assert pre._result is not None
        pre._result = busy.FirstSample(pre._result.started - INTERVAL - 0.1, pre._result.samples)
        assert pre.take(before, ((1, proc.pid),)) is None               # older than an interval


def test_a_short_timeout_samples_a_third_of_it_ahead() -> None:
    assert PreSampler(3.0, 3.0).lead == 1.0 and PreSampler(1.5, 3.0).lead == 0.5
    assert PreSampler(300.0, 3.0).lead == LEAD_S
