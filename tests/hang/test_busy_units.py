"""Busy or blocked, on real processes (tests/programs/agent_activity.py), and the rules that say
when a suspected hang is certain."""

from __future__ import annotations

import math
import subprocess
import time

import pytest

from tests.hang.test_detect import NOW, coll, rank
from tests.helpers.processes import python_program, running_program, triage_cmd
from triage.agent.hang import busy, detect
from triage.errors import UsageError
from triage.options import HangSettings

pytestmark = pytest.mark.timeout(120)


def _activity(mode: str, interval: float = 2.0) -> busy.RankActivity:
    with running_program(python_program("agent_activity.py", mode)) as proc:
        [result] = busy.sample_twice([(0, proc.pid)], interval)
        return result


def test_a_sleeping_process_is_blocked() -> None:
    act = _activity("sleep")
    assert act.activity == busy.Activity.BLOCKED, act
    assert act.runnable is False
    assert act.stack_changed is False and act.cpu_share is not None and act.cpu_share < busy.CPU_BUSY_SHARE
    assert act.where is not None and act.where.startswith("main (agent_activity.py:")


def test_a_spinning_process_is_busy_by_cpu() -> None:
    act = _activity("spin")
    assert act.activity == busy.Activity.BUSY, act
    assert act.cpu_share is not None and act.cpu_share > 2 * busy.CPU_BUSY_SHARE   # a loaded machine: no more
    assert "CPU" in act.evidence()


def test_a_writing_process_is_busy_by_io() -> None:
    act = _activity("write")
    assert act.activity == busy.Activity.BUSY, act
    assert act.io_rate is not None and act.io_rate > busy.IO_BUSY_BYTES_PER_S


def test_a_moving_stack_is_busy_without_cpu() -> None:
    act = _activity("nest")
    assert act.activity == busy.Activity.BUSY, act
    assert act.stack_changed is True


@pytest.mark.timeout(300)
def test_a_starved_process_is_busy_though_it_gets_no_cpu() -> None:
    """Computing in one C call but given almost no CPU (SCHED_IDLE next to a spinner on its CPU): no CPU
    share, no I/O, the same stack, but runnable in both samples: it works, slowly; never blocked."""
    with running_program(python_program("agent_activity.py", "starved"), timeout=200) as proc:
        # READY is printed just before the C call; starved of CPU, the process may take a while to reach
        # it: sample until both samples see the same stack (the event), with a generous deadline for a
        # loaded machine, never on a fixed sleep or a fixed number of tries
        deadline = time.monotonic() + 200
        while True:
            [act] = busy.sample_twice([(0, proc.pid)], 2.0)
            if act.stack_changed is False or time.monotonic() > deadline:
                break
    assert act.activity == busy.Activity.BUSY, act
    assert act.runnable is True and act.stack_changed is False
    assert "runnable" in act.evidence()


def test_triage_own_threads_are_left_out() -> None:
    # the main thread goes to sleep just after READY: sample until two samples see it there (the event; a loaded
    # CI machine once took the first sample before it got there: stack_changed, "busy"), with a generous deadline
    with running_program(python_program("agent_activity.py", "own-spin")) as proc:
        deadline = time.monotonic() + 100
        while True:
            [act] = busy.sample_twice([(0, proc.pid)], 2.0)
            if act.stack_changed is False or time.monotonic() > deadline:
                break
    assert act.activity == busy.Activity.BLOCKED, act
    assert act.cpu_share is not None and act.cpu_share < busy.CPU_BUSY_SHARE


def test_a_process_that_exits_between_the_samples_is_gone() -> None:
    with running_program(python_program("agent_activity.py", "sleep")) as proc:
        first = busy.sample_all([(0, proc.pid)])
        proc.kill()
        proc.wait()
    second = busy.sample_all([(0, proc.pid)], first)
    assert busy.judge(first[0], second[0]).activity == busy.Activity.GONE


def test_read_counters_of_a_missing_process_is_none() -> None:
    assert busy.read_counters(2**22 + 12345) is None


# -- certainty rules (constructed statuses) --------------------------------------------------
def _suspicion(ranks):  # type: ignore[no-untyped-def]
    hang = detect.detect_progress_hang(ranks, timeout=30, now=NOW)
    assert hang is not None
    return hang


def test_a_rank_outside_collectives_makes_the_hang_uncertain_and_is_the_one_sampled() -> None:
    ranks = [rank(0, progress_age=61, seq=2), rank(1, in_flight=coll(1, 3, op="barrier"), seq=3),
             rank(2, in_flight=coll(2, 3, op="barrier"), seq=3)]
    hang = _suspicion(ranks)
    assert detect.certain_reason(ranks, hang, 30, NOW) is None
    assert detect.culprits(ranks, hang) == (0,)
    assert detect.waiting_summary(ranks) == "ranks 1,2 waiting in barrier"


def test_a_mismatch_is_certain() -> None:
    ranks = [rank(0, in_flight=coll(0, 4)), rank(1, in_flight=coll(1, 4, op="all_gather"))]
    reason = detect.certain_reason(ranks, _suspicion(ranks), 30, NOW)
    assert reason is not None and "mismatch" in reason


def test_a_dead_peer_is_certain_but_a_peer_that_finished_is_not() -> None:
    waiting = rank(0, in_flight=coll(0, 4), seq=4)
    dead = [waiting, rank(1, alive=False, returncode=-9)]
    reason = detect.certain_reason(dead, _suspicion(dead), 30, NOW)
    assert reason is not None and "rank 1 exited" in reason
    finished = [rank(0, progress_age=61), rank(1, alive=False, returncode=0)]
    assert detect.certain_reason(finished, _suspicion(finished), 30, NOW) is None


def test_watchdog_and_nccl_suspicions_are_certain() -> None:
    wd = detect.detect_watchdog([(1, "collective timeout: all_reduce seq 4")])
    assert wd is not None and detect.certain_reason([rank(0)], wd, 30, NOW) is not None
    ops = [detect.NcclRankOps(0, "AllReduce", 5, 2, NOW - 60), detect.NcclRankOps(1, "AllReduce", 4, 2, NOW - 60)]
    nccl = detect.detect_nccl_hang(ops, [0, 1], 30, NOW)
    assert nccl is not None and detect.certain_reason([rank(0), rank(1)], nccl, 30, NOW) is not None


def test_position_moves_when_any_rank_progresses() -> None:
    before = [rank(0, seq=2), rank(1, seq=3)]
    assert detect.position(before) == detect.position(list(before))
    assert detect.position([rank(0, seq=3), rank(1, seq=3)]) != detect.position(before)


# -- --stop-timeout ---------------------------------------------------------------------------
@pytest.mark.parametrize(("options", "words"), [
    ({"hang_timeout": 10, "stop_timeout": 5}, "--stop-timeout 5 is lower than --hang-timeout 10"),
    ({"hang_timeout": 10, "stop_timeout": math.nan}, "--stop-timeout nan must be a finite number"),
    ({"hang_timeout": 10, "stop_timeout": math.inf}, "--stop-timeout inf must be a finite number"),
    ({"stop_timeout": -1}, "--stop-timeout -1 must be a finite number"),
    ({"stop_timeout": 60}, "--stop-timeout 60 is lower than --hang-timeout 300"),
])
def test_bad_stop_timeouts_are_refused(options, words) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError) as info:
        HangSettings(**options)
    assert words in str(info.value.message if hasattr(info.value, "message") else info.value)


def test_good_stop_timeouts_pass() -> None:
    assert HangSettings().stop_timeout == 1800.0
    assert HangSettings(hang_timeout=10, stop_timeout=10).stop_timeout == 10


@pytest.mark.parametrize(("args", "words"), [
    (["--hang-timeout", "10", "--stop-timeout", "5"], "--stop-timeout 5 is lower than --hang-timeout 10"),
    (["--stop-timeout", "nan"], "not a finite number"),
    (["--stop-timeout", "inf"], "not a finite number"),
    (["--stop-timeout", "-3"], "must not be negative"),
])
def test_the_cli_refuses_bad_stop_timeouts_in_one_line(tmp_path, args, words) -> None:  # type: ignore[no-untyped-def]
    done = subprocess.run([*triage_cmd("launch", "--run-dir", str(tmp_path / "run"), *args, "--"), "true"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert words in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "run").exists()


# -- start-up (init) hangs ---------------------------------------------------------------------
def _threads(*frames: tuple[str, str, int]):  # type: ignore[no-untyped-def]
    from triage.parsing.stacks import parse_pyspy_json

    return parse_pyspy_json([{"thread_name": "MainThread", "os_thread_id": 1, "pid": 1, "frames": [
        {"name": name, "filename": filename, "line": line} for name, filename, line in frames]}])


def test_classify_finds_init_process_group_and_names_own_code_elsewhere() -> None:
    from triage.agent.hang.init_watch import classify

    lib = "/venv/lib/python3.11/site-packages/torch/distributed"
    waiting = _threads(("_store_based_barrier", f"{lib}/distributed_c10d.py", 10),
                       ("init_process_group", f"{lib}/distributed_c10d.py", 20), ("main", "/job/train.py", 5))
    assert classify(waiting) == (True, "init_process_group")
    rendezvous = _threads(("next_rendezvous", f"{lib}/elastic/rendezvous/dynamic_rendezvous.py", 1))
    assert classify(rendezvous) == (True, "next_rendezvous")
    elsewhere = _threads(("sleep_for", "/usr/lib/python3.11/time_helpers.py", 3), ("load", "/job/data.py", 7))
    assert classify(elsewhere) == (False, "load (data.py:7)")


def test_the_store_address_is_read_from_the_rank_environment() -> None:
    import os

    from triage.agent.hang.init_watch import _store_of

    env = {**os.environ, "MASTER_ADDR": "10.1.2.3", "MASTER_PORT": "29500"}
    with running_program(python_program("agent_activity.py", "sleep"), env=env) as proc:
        assert _store_of(proc.pid) == "10.1.2.3:29500"
    with running_program(python_program("agent_activity.py", "sleep"),
                         env={k: v for k, v in os.environ.items() if not k.startswith("MASTER_")}) as proc:
        assert _store_of(proc.pid) is None


def test_an_idle_process_outside_init_is_never_an_init_hang() -> None:
    import time

    from triage.agent.hang.init_watch import InitWatch
    from triage.agent.state import LocalRankStatus

    with running_program(python_program("agent_activity.py", "sleep")) as proc:
        status = LocalRankStatus(rank=0, local_rank=0, host="h", pid=proc.pid, alive=True, returncode=None,
                                 heartbeat_age_s=0.1, progress_age_s=None, in_flight=None)
        watch = InitWatch(timeout=1.0)
        deadline = time.monotonic() + 4.0
        while time.monotonic() < deadline:
            assert watch.tick([status], time.time()) is None
            time.sleep(0.25)
        state = watch.ranks[0]
        assert state.idle_since is not None and state.in_init is False
        assert state.where is not None and state.where.startswith("main (agent_activity.py:")


def test_a_starved_rank_before_init_is_never_idle() -> None:
    """A rank computing at start-up (importing, say) on an overloaded node gets almost no CPU and does no I/O, but
    its thread is runnable at every tick: the init watch never counts it idle, so it is never taken for a rank
    blocked outside init (CI once saw a peer still importing torch named as never joining)."""
    import time

    from triage.agent.hang.init_watch import InitWatch
    from triage.agent.state import LocalRankStatus

    with running_program(python_program("agent_activity.py", "starved"), timeout=200) as proc:
        status = LocalRankStatus(rank=0, local_rank=0, host="h", pid=proc.pid, alive=True, returncode=None,
                                 heartbeat_age_s=0.1, progress_age_s=None, in_flight=None)
        watch = InitWatch(timeout=1.0)
        ticks = 0
        deadline = time.monotonic() + 60.0
        while ticks < 12 and time.monotonic() < deadline:
            assert watch.tick([status], time.time()) is None
            assert watch.ranks[0].counters is not None
            assert watch.ranks[0].idle_since is None, watch.ranks[0]    # READY came: it computes, starved
            ticks += 1
            time.sleep(0.25)
        assert ticks == 12


def test_an_idle_rank_not_yet_probed_holds_the_init_hang_back() -> None:
    """One rank waits in init past the timeout; the other went idle but no probe has read its stack since:
    it may be in init too (a slow start on a loaded host), so nothing is said until it is probed."""
    from triage.agent.hang.init_watch import InitWatch, _RankInit

    watch = InitWatch(timeout=1.0)
    watch.ranks[1] = _RankInit(pid=101, idle_since=100.0, where="init_process_group", in_init=True,
                               probe_idle_since=100.0)
    watch.ranks[0] = _RankInit(pid=100, idle_since=102.0)
    assert watch.suspicion(110.0) is None
    watch.ranks[0] = _RankInit(pid=100, idle_since=102.0, where="main (train.py:9)", in_init=False,
                               probe_idle_since=102.0)
    suspicion = watch.suspicion(110.0)
    assert suspicion is not None and "rank 0 has not reached it (blocked in main (train.py:9))" in suspicion.message
    watch.ranks[0] = _RankInit(pid=100, idle_since=None)          # busy: no probe needed to say so
    suspicion = watch.suspicion(110.0)
    assert suspicion is not None and "rank 0 has not reached it (busy)" in suspicion.message
