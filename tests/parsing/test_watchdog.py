from __future__ import annotations

import pytest

from triage.parsing.watchdog import WatchdogKind, parse_watchdog_line, scan_watchdog

T = WatchdogKind.TIMEOUT


@pytest.mark.parametrize(("line", "expected"), [
    # PyTorch 1.x: no SeqNum / NumelIn
    (("[E ProcessGroupNCCL.cpp:587] [Rank 0] Watchdog caught collective operation timeout: "
     "WorkNCCL(OpType=BROADCAST, Timeout(ms)=1800000) ran for 1806948 milliseconds before timing out."),
     (T, 0, None, None, None, "broadcast", None, None, 1800000, 1806948, None)),
    # 1.13 / 2.0: SeqNum, no Numel
    (("[E ProcessGroupNCCL.cpp:737] [Rank 5] Watchdog caught collective operation timeout: "
     "WorkNCCL(SeqNum=1542, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600480 milliseconds before timing out."),
     (T, 5, None, None, 1542, "all_reduce", None, None, 600000, 600480, None)),
    # 2.1/2.2 with [rankR]: prefix and NumelIn/Out
    (("[rank3]:[E ProcessGroupNCCL.cpp:523] [Rank 3] Watchdog caught collective operation timeout: "
     "WorkNCCL(SeqNum=42, OpType=_ALLGATHER_BASE, NumelIn=8, NumelOut=64, Timeout(ms)=600000) ran for 600012 "
     "milliseconds before timing out."),
     (T, 3, None, None, 42, "all_gather", 8, 64, 600000, 600012, None)),
    # 2.3: glog timestamp + [PG 1 Rank 0]
    (("[rank0]:[E1122 10:15:02.123456789 ProcessGroupNCCL.cpp:616] [PG 1 Rank 0] Watchdog caught collective "
     "operation timeout: WorkNCCL(SeqNum=7, OpType=_REDUCE_SCATTER_BASE, NumelIn=1024, NumelOut=128, "
     "Timeout(ms)=60000) ran for 60071 milliseconds before timing out."),
     (T, 0, "1", None, 7, "reduce_scatter", 1024, 128, 60000, 60071, "1122 10:15:02.123456789")),
    # 2.4: [PG 0 (default_pg) Rank 7]
    (("[rank7]:[E1122 10:15:02.1 ProcessGroupNCCL.cpp:632] [PG 0 (default_pg) Rank 7] Watchdog caught "
     "collective operation timeout: WorkNCCL(SeqNum=3, OpType=COALESCED, NumelIn=18446744073709551615, "
     "NumelOut=18446744073709551615, Timeout(ms)=600000) ran for 600003 milliseconds before timing out."),
     (T, 7, "0", "default_pg", 3, "coalesced", 18446744073709551615, 18446744073709551615, 600000, 600003,
      "1122 10:15:02.1")),
    # 2.5+: [PG ID 0 PG GUID 0(default_pg) Rank 1]
    (("[rank1]:[E1122 10:15:02.000000000 ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
     "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
     "Timeout(ms)=10000) ran for 10052 milliseconds before timing out."),
     (T, 1, "0", "default_pg", 1, "all_reduce", 1, 1, 10000, 10052, "1122 10:15:02.000000000")),
    (("[rank2]:[E1122 10:15:02.000000000 ProcessGroupNCCL.cpp:616] [PG ID 2 PG GUID 5(tp_group) Rank 2] "
     "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=SEND, NumelIn=4, NumelOut=4, "
     "Timeout(ms)=10000) ran for 10052 milliseconds before timing out."),
     (T, 2, "2", "tp_group", 9, "send", 4, 4, 10000, 10052, "1122 10:15:02.000000000")),
    # the exception text raised to Python has the same body
    (("RuntimeError: [Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=11, OpType=GATHER, "
     "NumelIn=2, NumelOut=16, Timeout(ms)=5000) ran for 5012 milliseconds before timing out."),
     (T, 4, None, None, 11, "gather", 2, 16, 5000, 5012, None)),
])
def test_timeouts(line: str, expected: tuple[object, ...]) -> None:
    event = parse_watchdog_line(line)
    assert event is not None
    assert (event.kind, event.rank, event.pg, event.pg_desc, event.seq, event.op, event.numel_in,
            event.numel_out, event.timeout_ms, event.ran_for_ms, event.timestamp) == expected
    assert event.raw == line


def test_companions() -> None:
    exc = parse_watchdog_line(
        "[rank0]:[E1122 10:15:02.2 ProcessGroupNCCL.cpp:1664] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception "
        "(either an error or timeout) detected by watchdog at work: 5, last enqueued NCCL work: 6, last completed "
        "NCCL work: 4.")
    assert exc is not None
    assert (exc.kind, exc.rank, exc.seq, exc.last_enqueued, exc.last_completed) == (
        WatchdogKind.EXCEPTION_DETECTED, 0, 5, 6, 4)
    at = parse_watchdog_line("[rank1]:[E1122 10:15:02.2 ProcessGroupNCCL.cpp:1] [PG 0 Rank 1] Timeout at NCCL "
                             "work: 12, last enqueued NCCL work: 12, last completed NCCL work: 11.")
    assert at is not None
    assert (at.kind, at.rank, at.pg, at.seq, at.last_enqueued, at.last_completed) == (
        WatchdogKind.TIMEOUT_AT, 1, "0", 12, 12, 11)


@pytest.mark.parametrize(("line", "timeout_ms"), [
    (("[rank1]:[E1122 10:15:02.1 ProcessGroupNCCL.cpp:1] [PG ID 0 PG GUID 0(default_pg) Rank 1] Heartbeat monitor "
     "timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1"), None),
    (("[rank0]:[E1122 ProcessGroupNCCL.cpp:1] [Rank 0] ProcessGroupNCCL's watchdog got stuck for 480 seconds "
     "without making progress in monitoring enqueued collectives."), 480000),
])
def test_heartbeat(line: str, timeout_ms: int | None) -> None:
    event = parse_watchdog_line(line)
    assert event is not None
    assert event.kind is WatchdogKind.HEARTBEAT_TIMEOUT
    assert event.timeout_ms == timeout_ms


def test_desync_report() -> None:
    """The TORCH_NCCL_DESYNC_DEBUG report: one glog message whose lines start with tabs."""
    text = (
        "[rank3]:[E1122 10:15:03.0 ProcessGroupNCCL.cpp:1] [PG 0 Rank 3] \n"
        "[rank3]:\t - [3] Timeout at collective: ALLREDUCE, #44\n"
        "[rank3]:\t - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:\n"
        "[rank3]:\t   - [1] joined but didn't finish collective #44 (count from 1)\n"
        "[rank3]:\t     [0, 2] finished collective #44, but didn't join collective #45 (count from 1)\n"
        "[rank3]:\t - Snapshot of ranks' latest states:\n"
        "[rank3]:\t   #44 started ranks:\n"
        "[rank3]:\t     [1] started ALLREDUCE\n"
        "[E ProcessGroupNCCL.cpp:1] [Rank 0]\t - To our best knowledge, ranks [1, 2] are the lagging ranks that "
        "caused this timeout. They never joined any collectives\n"
    )
    events = [e for e in scan_watchdog(text) if e.note]
    assert all(e.kind is WatchdogKind.DESYNC for e in events)
    assert [(e.note, e.rank, e.ranks, e.seq, e.op) for e in events] == [
        ("timeout_at_collective", 3, (3,), 44, "all_reduce"),
        ("joined_not_finished", 3, (1,), 44, None),
        ("finished_not_joined", 3, (0, 2), 45, None),
        ("never_joined", 0, (1, 2), None, None),
    ]


def test_no_heartbeat_line() -> None:
    event = parse_watchdog_line("[rank0]:[E1122 10:15:02.1 ProcessGroupNCCL.cpp:1] [PG ID 0 PG GUID 0(default_pg) "
                                "Rank 0] First PG on this rank that detected no heartbeat of its watchdog.")
    assert event is not None and event.kind is WatchdogKind.HEARTBEAT_TIMEOUT


def test_scan_skips_unrelated_text_and_keeps_order() -> None:
    assert scan_watchdog("nothing to see\n" * 1000) == ()
    text = ("x\n[rank1]:[E ProcessGroupNCCL.cpp:1] [Rank 1] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1) ran for 2 milliseconds "
            "before timing out.\n[rank1]:[E ProcessGroupNCCL.cpp:2] [Rank 1] Timeout at NCCL work: 3, last "
            "enqueued NCCL work: 3, last completed NCCL work: 2.\n")
    assert [e.kind for e in scan_watchdog(text)] == [WatchdogKind.TIMEOUT, WatchdogKind.TIMEOUT_AT]


@pytest.mark.parametrize("line", [
    "", "Watchdog", "training step 5", "[rank0]: Watchdog caught collective operation timeout: WorkNCCL(",
    "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=x, OpType=, Timeout(ms)=)",
])
def test_partial_lines_do_not_raise(line: str) -> None:
    event = parse_watchdog_line(line)
    assert event is None or event.seq is None


@pytest.mark.parametrize("line", [
    "[rank0]: the data loader is lagging behind", "ProcessGroupNCCL environments: TORCH_NCCL_DESYNC_DEBUG: 0",
    "[rank0]: step 10 loss 2.3 (watchdog test disabled)",
])
def test_unrelated_mentions_are_not_events(line: str) -> None:
    assert parse_watchdog_line(line) is None


def test_a_rank_prefix_is_the_global_rank_over_a_group_tag() -> None:
    line = ("[rank13]:[E804 23:05:54.516665906 ProcessGroupNCCL.cpp:689] [Rank 1] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=12, OpType=ALLTOALL_BASE, NumelIn=64, NumelOut=64, Timeout(ms)=600000) ran for "
            "600093 milliseconds before timing out.")
    event = parse_watchdog_line(line)
    assert event is not None and event.rank == 13
    tagged = parse_watchdog_line("[rank7]:[E ProcessGroupNCCL.cpp:1316] [PG 5 Rank 0] Heartbeat monitor timed out!")
    assert tagged is not None and (tagged.rank, tagged.pg) == (7, "5")
    bare = parse_watchdog_line("[E ProcessGroupNCCL.cpp:1316] [PG 5 Rank 2] Heartbeat monitor timed out!")
    assert bare is not None and bare.rank == 2


def test_the_2_7_companion_wording_and_a_cut_companion_give_the_work_number() -> None:
    # ecmwf/WeatherGenerator#1533's and hiyouga/LlamaFactory#7396's classes, other ranks and numbers
    new = parse_watchdog_line("[rank9]:[E0311 04:02:11.100000000 ProcessGroupNCCL.cpp:2168] [PG ID 2 PG GUID 7 Rank 1]"
                              "  failure detected by watchdog at work sequence id: 42 PG status: last enqueued work: "
                              "45, last completed work: 41")
    assert new is not None and (new.seq, new.last_enqueued, new.last_completed) == (42, 45, 41)
    cut = parse_watchdog_line("[E0311 04:02:11.2 ProcessGroupNCCL.cpp:1709] [PG 3 Rank 2] Timeout at NCCL work: 907")
    assert cut is not None and cut.seq == 907 and cut.last_enqueued is None


def test_blocking_wait_timeout() -> None:
    event = parse_watchdog_line("[rank6]:[E0101 00:00:00.000 ProcessGroupNCCL.cpp:740] [Rank 6] Work WorkNCCL("
                                "SeqNum=12, OpType=REDUCE_SCATTER, NumelIn=64, NumelOut=8, Timeout(ms)=60000) timed "
                                "out in blocking wait.")
    assert event is not None and event.kind is WatchdogKind.TIMEOUT
    assert (event.rank, event.seq, event.op, event.timeout_ms) == (6, 12, "reduce_scatter", 60000)


def test_heartbeat_monitor_exit_for_a_stuck_watchdog_is_a_heartbeat_timeout() -> None:
    # PyTorch 2.4+: the monitor's last words before it aborts the process; the rank is the [rankN]: prefix
    line = ("[rank6]:[F1107 03:12:55.120000001 ProcessGroupNCCL.cpp:1420] [PG ID 0 PG GUID 0(default_pg) Rank 6] "
            "[PG ID 0 PG GUID 0(default_pg) Rank 6] Terminating the process after attempting to dump debug info, "
            "due to ProcessGroupNCCL watchdog hang.")
    event = parse_watchdog_line(line)
    assert event is not None and event.kind is WatchdogKind.HEARTBEAT_TIMEOUT and event.rank == 6
    # its other reason follows a collective timeout and is no heartbeat event of its own
    assert parse_watchdog_line(line.replace("ProcessGroupNCCL watchdog hang", "collective timeout or exception")) \
        is None
