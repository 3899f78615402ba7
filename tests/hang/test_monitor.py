"""The hang monitor on constructed rank statuses: once per hang, re-arming, watchdog, remote, crash."""

from __future__ import annotations

from pathlib import Path

from tests.hang.test_detect import coll, rank
from triage.agent.hang import cluster_trigger
from triage.agent.hang.monitor import HangMonitor
from triage.agent.state import AgentContext, LocalRankStatus, MonitorActionKind
from triage.layout import RunPaths
from triage.options import HangSettings
from triage.private_files import write_json_atomic

T0 = 1_000_000.0
WATCHDOG = (b"[rank1]:[E1122 10:00:00.123456789 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
            b"Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, OpType=ALLREDUCE, NumelIn=8, "
            b"NumelOut=8, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n")


def monitor(tmp_path: Path, host: str = "h1") -> HangMonitor:
    ctx = AgentContext("job", host, tmp_path, tmp_path / host, T0 - 100)
    return HangMonitor(ctx, HangSettings(hang_timeout=30))


def hung(now: float, seq: int = 42) -> list[LocalRankStatus]:
    return [rank(0, in_flight=coll(0, seq, entered=now - 31), seq=seq), rank(1, progress_age=31, seq=seq - 1)]


def test_one_hang_is_reported_once_and_rearms_after_progress(tmp_path: Path) -> None:
    mon = monitor(tmp_path)
    first = mon.on_tick(hung(T0), T0)
    assert first is not None and first.trigger == "hang" and first.reason.startswith("rank 0 waiting in all_reduce")
    assert first.certain is None and first.sample == ((1, 100),)   # rank 1 is outside: sampled first
    mon.on_outcome(first, None)         # the agent's answer: blocked (the job is being stopped)
    for step in range(1, 20):
        assert mon.on_tick(hung(T0, 42), T0 + step) is None
    healthy = [rank(0, seq=50), rank(1, seq=50)]
    assert mon.on_tick(healthy, T0 + 40) is None
    again = mon.on_tick(hung(T0 + 80, seq=60), T0 + 80)
    assert again is not None and "seq 60" in again.reason
    # the detecting node told the other nodes
    assert [n.origin for n in cluster_trigger.notices(tmp_path)] == ["h1", "h1"]


def test_watchdog_line_fires_at_once_and_the_same_hang_is_not_reported_again(tmp_path: Path) -> None:
    mon = monitor(tmp_path)
    mon.on_output(1, b"unrelated output\n" + WATCHDOG)
    action = mon.on_tick([rank(0), rank(1)], T0)
    assert action is not None and action.reason.startswith("PyTorch watchdog on rank 1: collective timeout")
    assert mon.on_tick(hung(T0 + 5), T0 + 5) is None


def test_remote_notice_triggers_a_remote_collection_once(tmp_path: Path) -> None:
    RunPaths(tmp_path)  # the run dir is the shared directory
    mon = monitor(tmp_path, host="h2")
    cluster_trigger.announce(tmp_path, "h1", "ranks 0-7 waiting in all_reduce seq 9 (pg 0) for 30 s")
    action = mon.on_tick([rank(0), rank(1)], T0)
    assert action is not None and action.trigger == "remote"
    assert action.reason == "h1: ranks 0-7 waiting in all_reduce seq 9 (pg 0) for 30 s"
    assert mon.on_tick([rank(0), rank(1)], T0 + 1) is None
    # the same hang seen locally a little later is not collected a second time
    assert mon.on_tick(hung(T0 + 5), T0 + 5) is None


def test_own_announcement_is_not_a_remote_trigger(tmp_path: Path) -> None:
    mon = monitor(tmp_path, host="h1")
    cluster_trigger.announce(tmp_path, "h1", "mine")
    assert mon.on_tick([rank(0)], T0) is None


def test_failed_exits_in_one_tick_become_one_crash_action_naming_the_first(tmp_path: Path) -> None:
    mon = monitor(tmp_path)
    paths = RunPaths(tmp_path).host("h1")
    statuses = []
    for r, (code, when) in enumerate(((1, T0 + 0.2), (3, T0 + 0.0))):
        write_json_atomic(paths.rank(r).exit, {"pid": 100 + r, "exit_code": code, "time": when})
        status = rank(r, alive=False, returncode=code)
        statuses.append(LocalRankStatus(**{**status.__dict__, "paths": paths.rank(r)}))
    survivors = [rank(2)]
    mon.on_tick([*statuses, *survivors], T0)
    for status in statuses:
        assert mon.on_rank_exit(status) is None
    action = mon.on_tick([*statuses, *survivors], T0 + 0.5)
    assert action is not None and action.trigger == "crash"
    assert action.reason == "rank 1 exited (exit code 3); collecting from rank 2; then rank 0 (exit code 1)"
    assert action.ranks == (1, 0)
    assert mon.on_rank_exit(rank(2, alive=False, returncode=1)) is None
    assert mon.on_tick([rank(2, alive=False, returncode=1)], T0 + 1) is None


def test_clean_exit_is_not_a_crash(tmp_path: Path) -> None:
    mon = monitor(tmp_path)
    assert mon.on_rank_exit(rank(0, alive=False, returncode=0)) is None
    assert mon.on_tick([rank(0, alive=False, returncode=0)], T0) is None


# -- busy ranks: watched, re-checked every timeout, stopped at --stop-timeout -----------------
def busy_job(now: float, rank0_seq: int = 2) -> list[LocalRankStatus]:
    """Rank 0 outside any collective for 31 s; ranks 1-2 waiting in a barrier."""
    return [rank(0, progress_age=31, seq=rank0_seq),
            rank(1, in_flight=coll(1, 3, op="barrier", entered=T0 - 31), seq=3),
            rank(2, in_flight=coll(2, 3, op="barrier", entered=T0 - 31), seq=3)]


def watched(tmp_path: Path) -> tuple[HangMonitor, object]:
    mon = HangMonitor(AgentContext("job", "h1", tmp_path, tmp_path / "h1", T0 - 100),
                      HangSettings(hang_timeout=30, stop_timeout=300))
    first = mon.on_tick(busy_job(T0), T0)
    assert first is not None and first.kind == MonitorActionKind.COLLECT and first.trigger == "hang"
    assert first.certain is None and first.sample == ((0, 100),)
    assert first.waiting == "ranks 1,2 waiting in barrier"
    assert first.since is not None and abs(first.since - (T0 - 31)) < 1.0
    assert mon.on_tick(busy_job(T0 + 1), T0 + 1) is None        # being sampled: nothing new
    mon.on_outcome(first, "rank 0 busy in save_checkpoint (ckpt.py:10)")
    return mon, first


def test_busy_ranks_are_checked_again_every_timeout_and_stopped_at_stop_timeout(tmp_path: Path) -> None:
    mon, _first = watched(tmp_path)
    assert mon.on_tick(busy_job(T0 + 10), T0 + 10) is None
    check = mon.on_tick(busy_job(T0 + 31), T0 + 31)
    assert check is not None and check.kind == MonitorActionKind.CHECK and check.sample == ((0, 100),)
    assert mon.on_tick(busy_job(T0 + 32), T0 + 32) is None      # one check at a time
    mon.on_outcome(check, "rank 0 busy in save_checkpoint (ckpt.py:12)")
    assert mon.on_tick(busy_job(T0 + 40), T0 + 40) is None
    stop = mon.on_tick(busy_job(T0 + 270), T0 + 270)           # the stall began at T0 - 31
    assert stop is not None and stop.kind == MonitorActionKind.COLLECT
    assert stop.certain is not None and "--stop-timeout 300 s" in stop.certain
    # the other nodes are told to stop too (the busy announcement said: evidence only)
    assert [n.stop for n in cluster_trigger.notices(tmp_path)] == [False, True]


def test_busy_ranks_that_move_on_end_the_watch_with_a_finding(tmp_path: Path) -> None:
    mon, _first = watched(tmp_path)
    assert mon.on_tick(busy_job(T0 + 20, rank0_seq=3), T0 + 20) is None
    assert mon.findings == [("slow rank: rank 0 busy in save_checkpoint (ckpt.py:10) for 51 s "
                            "(ranks 1,2 waiting in barrier); the job went on by itself")]
    assert mon.on_tick(hung(T0 + 21), T0 + 21) is None         # quiet for one timeout
    assert mon.on_tick(hung(T0 + 49), T0 + 49) is None
    again = mon.on_tick(hung(T0 + 51), T0 + 51)
    assert again is not None and again.kind == MonitorActionKind.COLLECT


def test_the_finding_names_where_the_stall_began_and_where_it_was_last_seen(tmp_path: Path) -> None:
    mon, _first = watched(tmp_path)
    check = mon.on_tick(busy_job(T0 + 31), T0 + 31)
    assert check is not None and check.kind == MonitorActionKind.CHECK
    mon.on_outcome(check, "rank 0 busy in flush (io.py:7)")
    assert mon.on_tick(busy_job(T0 + 40, rank0_seq=3), T0 + 40) is None
    assert mon.findings == [("slow rank: rank 0 busy in save_checkpoint (ckpt.py:10) for 71 s "
                            "(ranks 1,2 waiting in barrier); last seen rank 0 busy in flush (io.py:7); "
                            "the job went on by itself")]


def test_a_watchdog_during_a_watch_is_certain_at_once(tmp_path: Path) -> None:
    mon, _first = watched(tmp_path)
    mon.on_output(1, WATCHDOG)
    action = mon.on_tick(busy_job(T0 + 5), T0 + 5)
    assert action is not None and action.certain == "PyTorch's watchdog reported it"


def test_a_remote_stop_notice_during_a_watch_is_followed(tmp_path: Path) -> None:
    mon, _first = watched(tmp_path)
    cluster_trigger.announce(tmp_path, "h2", "rank 9 blocked", stop=True)
    action = mon.on_tick(busy_job(T0 + 5), T0 + 5)
    assert action is not None and action.trigger == "remote" and action.certain == "h2 is stopping the job"


def test_a_rank_gone_while_sampled_concludes_nothing_and_rearms_after_a_timeout(tmp_path: Path) -> None:
    mon, first = watched(tmp_path)
    mon.on_outcome(first, None, gone=True)
    assert mon.on_tick(busy_job(T0 + 10), T0 + 10) is None
    again = mon.on_tick(busy_job(T0 + 31), T0 + 31)
    assert again is not None and again.kind == MonitorActionKind.COLLECT


def test_a_remote_busy_notice_collects_without_stopping(tmp_path: Path) -> None:
    mon = monitor(tmp_path, host="h2")
    cluster_trigger.announce(tmp_path, "h1", "rank 0 busy", stop=False)
    action = mon.on_tick([rank(0), rank(1)], T0)
    assert action is not None and action.trigger == "remote" and action.certain is None
    cluster_trigger.announce(tmp_path, "h1", "rank 0 blocked now", stop=True)
    upgrade = mon.on_tick([rank(0), rank(1)], T0 + 5)
    assert upgrade is not None and upgrade.certain == "h1 is stopping the job"


def test_local_ranks_stuck_after_a_remote_busy_notice_are_sampled_without_a_second_bundle(tmp_path: Path) -> None:
    mon = monitor(tmp_path, host="h2")
    cluster_trigger.announce(tmp_path, "h1", "rank 0 busy", stop=False)
    first = mon.on_tick([rank(0), rank(1)], T0)
    assert first is not None and first.trigger == "remote"
    mon.on_outcome(first, None)
    check = mon.on_tick(busy_job(T0 + 1), T0 + 1)
    assert check is not None and check.kind == MonitorActionKind.CHECK and check.sample == ((0, 100),)
    assert cluster_trigger.notices(tmp_path)[-1].origin == "h2" and not cluster_trigger.notices(tmp_path)[-1].stop


def test_ranks_waiting_on_a_running_gpu_are_stopped_at_gpu_wait_timeout(tmp_path: Path) -> None:
    mon = HangMonitor(AgentContext("job", "h1", tmp_path, tmp_path / "h1", T0 - 100),
                      HangSettings(hang_timeout=30, stop_timeout=1800, gpu_wait_timeout=120))
    first = mon.on_tick(busy_job(T0), T0)
    assert first is not None
    mon.on_outcome(first, "rank 0 waiting on the GPU in synchronize (train.py:3)")
    check = mon.on_tick(busy_job(T0 + 31), T0 + 31)
    assert check is not None and check.kind == MonitorActionKind.CHECK and check.certain is None
    mon.on_outcome(check, "rank 0 waiting on the GPU in synchronize (train.py:3)")
    stop = mon.on_tick(busy_job(T0 + 90), T0 + 90)                     # the stall began at T0 - 31
    assert stop is not None and stop.certain is not None
    assert "--gpu-wait-timeout 120 s" in stop.certain


def test_a_busy_rank_beside_a_gpu_wait_keeps_the_stop_timeout(tmp_path: Path) -> None:
    mon = HangMonitor(AgentContext("job", "h1", tmp_path, tmp_path / "h1", T0 - 100),
                      HangSettings(hang_timeout=30, stop_timeout=1800, gpu_wait_timeout=120))
    first = mon.on_tick(busy_job(T0), T0)
    assert first is not None
    mon.on_outcome(first, "rank 0 waiting on the GPU in synchronize (train.py:3), rank 3 busy in save (c.py:1)")
    check = mon.on_tick(busy_job(T0 + 60), T0 + 60)
    assert check is not None and check.certain is None
    mon.on_outcome(check, "rank 0 waiting on the GPU in synchronize (train.py:3), rank 3 busy in save (c.py:1)")
    later = mon.on_tick(busy_job(T0 + 95), T0 + 95)                   # past 120 s of stall: checked, not stopped
    assert later is not None and later.kind == MonitorActionKind.CHECK and later.certain is None
