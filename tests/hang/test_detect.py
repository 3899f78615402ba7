"""Unit tests of triage.agent.hang.detect on constructed LocalRankStatus values."""

from __future__ import annotations

from triage.agent.hang import detect
from triage.agent.state import LocalRankStatus
from triage.model import Collective, CollectiveState

NOW = 1_000_000.0


def coll(rank: int, seq: int, op: str = "all_reduce", pg: str = "0", entered: float = NOW - 60) -> Collective:
    return Collective(rank=rank, pg=pg, seq=seq, op=op, state=CollectiveState.SCHEDULED,
                      time_ns=int(entered * 1e9))


def rank(r: int, *, in_flight: Collective | None = None, progress_age: float | None = 1.0,
         seq: int | None = 41, alive: bool = True, returncode: int | None = None,
         heartbeat_age: float | None = 0.5, pid: int | None = 100) -> LocalRankStatus:
    progress = (("0", seq),) if seq is not None else ()
    return LocalRankStatus(rank=r, local_rank=r, host="h", pid=pid, alive=alive, returncode=returncode,
                           heartbeat_age_s=heartbeat_age, progress_age_s=progress_age, in_flight=in_flight,
                           progress=progress)


def test_ranks_waiting_and_one_not_entered() -> None:
    ranks = [rank(r, in_flight=coll(r, 42), progress_age=60, seq=42) for r in range(3)]
    ranks.append(rank(3, progress_age=61, seq=41))
    hang = detect.detect_progress_hang(ranks, timeout=30, now=NOW)
    assert hang is not None
    assert hang.message == ("ranks 0-2 waiting in all_reduce seq 42 (pg 0) for 60 s; "
                            "rank 3 has not entered it (last seq 41)")
    assert hang.ranks == (0, 1, 2, 3)


def test_collective_mismatch_names_both_ops() -> None:
    ranks = [rank(0, in_flight=coll(0, 4)), rank(1, in_flight=coll(1, 4, op="all_gather"))]
    hang = detect.detect_progress_hang(ranks, timeout=30, now=NOW)
    assert hang is not None
    assert "waiting in all_reduce seq 4 (pg 0)" in hang.message
    assert "rank 1 waiting in all_gather seq 4 (pg 0)" in hang.message


def test_not_flagged_before_timeout() -> None:
    ranks = [rank(0, in_flight=coll(0, 5, entered=NOW - 10), progress_age=10), rank(1, progress_age=10)]
    assert detect.detect_progress_hang(ranks, timeout=30, now=NOW) is None


def test_in_flight_age_counts_even_if_progress_is_fresh() -> None:
    ranks = [rank(0, in_flight=coll(0, 5, entered=NOW - 31), progress_age=2)]
    hang = detect.detect_progress_hang(ranks, timeout=30, now=NOW)
    assert hang is not None and hang.ranks == (0,)


def test_stale_progress_without_collective() -> None:
    ranks = [rank(0, progress_age=45), rank(1, progress_age=3)]
    hang = detect.detect_progress_hang(ranks, timeout=30, now=NOW)
    assert hang is not None
    assert hang.message == "rank 0 made no progress for 45 s (not in any collective)"


def test_rank_without_any_progress_signal_is_not_flagged() -> None:
    ranks = [rank(0, progress_age=500, seq=None)]
    assert detect.detect_progress_hang(ranks, timeout=30, now=NOW) is None


def test_frozen_heartbeat_is_flagged() -> None:
    ranks = [rank(0, progress_age=None, seq=None, heartbeat_age=40)]
    hang = detect.detect_progress_hang(ranks, timeout=30, now=NOW)
    assert hang is not None and hang.ranks == (0,)


def test_dead_and_unregistered_ranks_are_ignored() -> None:
    ranks = [rank(0, alive=False, returncode=1, progress_age=100),
             rank(1, pid=None, progress_age=100)]
    assert detect.detect_progress_hang(ranks, timeout=30, now=NOW) is None


def test_exited_rank_is_named_next_to_the_waiters() -> None:
    ranks = [rank(0, in_flight=coll(0, 7)), rank(1, alive=False, returncode=-9)]
    hang = detect.detect_progress_hang(ranks, timeout=30, now=NOW)
    assert hang is not None
    assert hang.message.endswith("rank 1 exited (killed by SIGKILL)")


def test_key_is_stable_while_the_hang_lasts_and_changes_when_it_moves() -> None:
    first = detect.detect_progress_hang([rank(0, in_flight=coll(0, 7))], 30, NOW)
    later = detect.detect_progress_hang([rank(0, in_flight=coll(0, 7), progress_age=90)], 30, NOW + 30)
    moved = detect.detect_progress_hang([rank(0, in_flight=coll(0, 8), seq=42)], 30, NOW)
    assert first is not None and later is not None and moved is not None
    assert first.key == later.key != moved.key


def test_nccl_disagreement_after_silence() -> None:
    ops = [detect.NcclRankOps(0, "all_reduce", 0x30, 2, NOW - 40),
           detect.NcclRankOps(1, "all_reduce", 0x2F, 2, NOW - 41)]
    hang = detect.detect_nccl_hang(ops, alive=[0, 1], timeout=30, now=NOW)
    assert hang is not None
    assert hang.message.startswith("NCCL: rank 0 issued all_reduce opCount 0x30, no NCCL op for 40 s")
    assert "rank 1 stopped at all_reduce opCount 0x2f" in hang.message
    assert hang.ranks == (1,)


def test_nccl_agreement_or_recent_activity_is_not_a_hang() -> None:
    same = [detect.NcclRankOps(r, "all_reduce", 5, 2, NOW - 100) for r in range(2)]
    assert detect.detect_nccl_hang(same, [0, 1], 30, NOW) is None
    recent = [detect.NcclRankOps(0, "all_reduce", 6, 2, NOW - 1), detect.NcclRankOps(1, "all_reduce", 5, 2, NOW - 90)]
    assert detect.detect_nccl_hang(recent, [0, 1], 30, NOW) is None


def test_nccl_warn_with_silence_is_a_hang() -> None:
    ops = [detect.NcclRankOps(r, "broadcast", 9, 2, NOW - 50, warnings=("NET/Socket : peer closed",) if r else ())
           for r in range(2)]
    hang = detect.detect_nccl_hang(ops, [0, 1], 30, NOW)
    assert hang is not None and "NCCL WARN on rank 1: NET/Socket : peer closed" in hang.message


def test_watchdog_message() -> None:
    hang = detect.detect_watchdog([(2, "collective timeout: all_reduce seq 9 (pg 0) ran for 600000 ms")])
    assert hang is not None
    assert hang.message == "PyTorch watchdog on rank 2: collective timeout: all_reduce seq 9 (pg 0) ran for 600000 ms"
    assert detect.detect_watchdog([]) is None


def test_crash_reason() -> None:
    status = rank(3, alive=False, returncode=-11)
    assert detect.crash_reason(status, [0, 1, 2]) == "rank 3 exited (killed by SIGSEGV); collecting from ranks 0-2"
    assert detect.is_failure(status) and not detect.is_failure(rank(0, alive=False, returncode=0))


def test_a_rank_that_entered_its_collective_a_moment_later_is_waiting_not_missing() -> None:
    # without a Flight Recorder the heartbeat sees a rank enter up to one interval late
    ranks = [rank(0, in_flight=coll(0, 4, entered=NOW - 31), progress_age=31, seq=4),
             rank(1, in_flight=coll(1, 4, "all_gather", entered=NOW - 29.5), progress_age=29.5, seq=4)]
    hang = detect.detect_progress_hang(ranks, timeout=30, now=NOW)
    assert hang is not None and hang.ranks == (0,)
    assert hang.message == "rank 0 waiting in all_reduce seq 4 (pg 0) for 31 s; rank 1 waiting in all_gather seq 4 (pg 0)"
