"""NCCL INFO/WARN line parsing across versions and prefixes, and the tracker."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest

from tests.helpers.nccl import tracker_collectives
from triage.model import CollectiveState
from triage.parsing.nccl import bulk as nccl_bulk
from triage.parsing.nccl.lines import (
    NcclColl,
    NcclInit,
    NcclWarn,
    parse_nccl_line,
    parse_nccl_segments,
)
from triage.parsing.nccl.tracker import BULK_MIN_BYTES, NcclTracker

COLL = ("node07:4121:4188 [3] NCCL INFO AllReduce: opCount 2f sendbuff 0x7f01a0000000 recvbuff 0x7f01a0000000 "
        "count 262144 datatype 7 op 0 root 0 comm 0x55d0c3a0 [nranks=8] stream 0x55d0c1f0")


def test_standard_collective_line() -> None:
    event = parse_nccl_line(COLL)
    assert event == NcclColl(
        host="node07", pid=4121, tid=4188, cuda_dev=3, op="all_reduce", op_count=0x2F, count=262144,
        dtype="float32", redop="sum", root=0, comm="0x55d0c3a0", nranks=8, sendbuff="0x7f01a0000000",
        recvbuff="0x7f01a0000000", launcher_rank=None)


@pytest.mark.parametrize(("opname", "torch_name"), [
    ("AllReduce", "all_reduce"), ("AllGather", "all_gather"), ("ReduceScatter", "reduce_scatter"),
    ("Broadcast", "broadcast"), ("Reduce", "reduce"), ("Send", "send"), ("Recv", "recv"),
    ("AllToAll", "all_to_all"), ("Gather", "gather"), ("Scatter", "scatter"),
])
def test_op_names(opname: str, torch_name: str) -> None:
    event = parse_nccl_line(COLL.replace("AllReduce", opname))
    assert isinstance(event, NcclColl)
    assert event.op == torch_name


@pytest.mark.parametrize(("prefix", "rank"), [
    ("[rank3]:", 3), ("[rank3]: ", 3), ("node07: ", None), ("(RayTrainWorker pid=615, ip=10.0.0.6) ", None),
    ("[node07:5]:", 5), ("[node07:5] ", 5), ("[node07:5]+", 5), ("12: ", 12), ("[default3]:", None),
    ("2025-09-11T10:58:45.123Z ", None), ("\x1b[0m ", None),
])
def test_launcher_prefixes(prefix: str, rank: int | None) -> None:
    event = parse_nccl_line(prefix + COLL)
    assert isinstance(event, NcclColl)
    assert (event.host, event.pid, event.op_count, event.comm) == ("node07", 4121, 0x2F, "0x55d0c3a0")
    assert event.launcher_rank == rank


def test_nccl_2_3_without_opname_with_size() -> None:
    line = ("host1:100:200 [0] NCCL INFO opCount 1a sendbuff 0x7f00 recvbuff 0x7f80 count 1024 size 4096 "
            "datatype 7 op 0 root 0 comm 0x1234 [nranks=4] stream 0x99")
    event = parse_nccl_line(line)
    assert isinstance(event, NcclColl)
    assert (event.op, event.op_count, event.count, event.dtype, event.nranks) == ("unknown", 26, 1024, "float32", 4)


def test_send_recv_nil_and_peer() -> None:
    send = parse_nccl_line("h:1:2 [0] NCCL INFO Send: opCount 5 sendbuff 0x7f00 recvbuff (nil) count 16 datatype 9 "
                           "op 0 root 3 comm 0xabc [nranks=4] stream 0x1")
    recv = parse_nccl_line("h:1:2 [0] NCCL INFO Recv: opCount 6 sendbuff (nil) recvbuff 0x7f00 count 16 datatype 9 "
                           "op 0 root 1 comm 0xabc [nranks=4] stream 0x1")
    assert isinstance(send, NcclColl) and isinstance(recv, NcclColl)
    assert (send.op, send.root, send.recvbuff, send.dtype) == ("send", 3, "(nil)", "bfloat16")
    assert (recv.op, recv.root, recv.sendbuff) == ("recv", 1, "(nil)")


@pytest.mark.parametrize("line", [
    # extra fields NCCL may add, anywhere
    COLL + " task 3 globalrank 5",
    COLL.replace(" stream ", " prio 0 stream "),
    COLL.replace("[nranks=8] ", ""),
    COLL.replace("0x7f01a0000000", "<redacted>"),
    COLL.replace("0x7f01a0000000", "0xXXXXXXXX"),
    COLL + "\r",
    COLL.replace(" stream 0x55d0c1f0", ""),          # cut before stream
])
def test_tolerated_variants(line: str) -> None:
    event = parse_nccl_line(line)
    assert isinstance(event, NcclColl)
    assert (event.op, event.op_count, event.comm) == ("all_reduce", 0x2F, "0x55d0c3a0")


def test_redacted_comm_pointer_still_keys() -> None:
    event = parse_nccl_line(COLL.replace("comm 0x55d0c3a0", "comm <redacted>"))
    assert isinstance(event, NcclColl)
    assert event.comm == "<redacted>"


@pytest.mark.parametrize("line", [
    "", "hello world", "NCCL", "NCCL INFO", "node07:4121:4188 [3] NCCL INFO", COLL[:60], COLL[:120],
    ("node07:4121:4188 [3] NCCL INFO AllReduce: opCount zz sendbuff 0x1 recvbuff 0x1 count 1 datatype 7 op 0 "
    "root 0 comm 0x5 stream 0x1"),
    "node07:4121:4188 [3] NCCL INFO Channel 00/32 :    0   1   2   3",
    "node07:4121:4188 [3] NCCL INFO Using network IB", "NCCL version 2.21.5+cuda12.4",
    "node07:4121:4188 [3] NCCL INFO comm 0x55 rank x nranks 8",
])
def test_not_events(line: str) -> None:
    assert parse_nccl_line(line) is None


def test_glued_lines_recover_both_when_possible() -> None:
    first = COLL.replace("comm 0x55d0c3a0", "comm 0xaaaa")
    second = COLL.replace("node07:4121:4188 [3]", "node09:77:78 [1]").replace("opCount 2f", "opCount 30")
    glued = first + second  # the first ended without a newline
    events = parse_nccl_segments(glued)
    assert next((e.host, e.op_count) for e in events if isinstance(e, NcclColl)) == ("node07", 0x2F)
    last = parse_nccl_line(glued)
    assert isinstance(last, NcclColl)
    assert last.op_count == 0x30
    # launcher prefixes: each segment gets the one right before its own head
    prefixed = "[rank3]:" + first[:100] + "[rank9]:" + second
    ranks = [e.launcher_rank for e in parse_nccl_segments(prefixed) if isinstance(e, NcclColl)]
    assert ranks[-1] == 9
    assert [e.launcher_rank for e in parse_nccl_segments("[rank3]:" + first + second)] == [3, None]
    # cut mid-field then glued: the cut part is dropped, the complete one kept
    cut = COLL[:95] + second
    assert [e.op_count for e in parse_nccl_segments(cut) if isinstance(e, NcclColl)][-1] == 0x30


@pytest.mark.parametrize(("line", "expected"), [
    ("node07:4121:4121 [3] NCCL INFO comm 0x7f5f3c002e10 rank 3 nranks 8 cudaDev 3 busId 3d000 - Init COMPLETE",
     (3, 8, 3, "3d000", None, None)),
    (("node07:4121:4121 [3] NCCL INFO comm 0x7f5f3c002e10 rank 3 nranks 8 cudaDev 3 nvmlDev 3 busId 3d000 "
     "commId 0x2a5e8c2c5b1e2d0e - Init COMPLETE"), (3, 8, 3, "3d000", "0x2a5e8c2c5b1e2d0e", None)),
    (("node07:4121:4121 [3] NCCL INFO ncclCommInitRank comm 0x7f5f3c002e10 rank 3 nranks 8 cudaDev 3 nvmlDev 3 "
     "busId 3d000 commId 0x2a5e8c2c5b1e2d0e - Init COMPLETE"), (3, 8, 3, "3d000", "0x2a5e8c2c5b1e2d0e",
                                                               "ncclCommInitRank")),
    ("node07:4121:4121 [3] NCCL INFO comm 0x7f5f3c002e10 rank 3 nranks 8 cudaDev 3 - Init COMPLETE",
     (3, 8, 3, None, None, None)),
    ("node07:4121:4121 [3] NCCL INFO comm 0x7f5f3c002e10 rank 3 nRanks 8 nNodes 1 localRanks 8 localRank 3 MNNVL 0",
     (3, 8, 3, None, None, None)),
    (("[rank3]:node07:4121:4121 [3] NCCL INFO ncclCommInitRankConfig comm 0x7f5f3c002e10 rank 3 nranks 8 "
     "cudaDev 3 nvmlDev 3 busId 3d000 commId 0x1 - Init COMPLETE"), (3, 8, 3, "3d000", "0x1",
                                                                    "ncclCommInitRankConfig")),
])
def test_init_lines(line: str, expected: tuple[object, ...]) -> None:
    event = parse_nccl_line(line)
    assert isinstance(event, NcclInit)
    assert (event.host, event.pid, event.comm) == ("node07", 4121, "0x7f5f3c002e10")
    assert (event.rank, event.nranks, event.cuda_dev, event.bus_id, event.comm_id, event.function) == expected


def test_comm_split_init() -> None:
    event = parse_nccl_line("gpu1:9:9 [2] NCCL INFO ncclCommSplit comm 0x5601 rank 1 nranks 4 cudaDev 2 nvmlDev 2 "
                            "busId 5e000 parent 0x5500 color 1 key 1 commId 0x77aa - Init COMPLETE")
    assert isinstance(event, NcclInit)
    assert (event.function, event.parent, event.color, event.key, event.rank) == ("ncclCommSplit", "0x5500", 1, 1, 1)


@pytest.mark.parametrize(("line", "src", "ts", "func", "message"), [
    ("node07:4121:4190 [3] enqueue.cc:1234 NCCL WARN Cuda failure 'an illegal memory access was encountered'",
     ("enqueue.cc", 1234), None, None, "Cuda failure 'an illegal memory access was encountered'"),
    (("[2025-09-11 10:58:45] node07:4121:4190 [3] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion "
     "with error 12"), ("transport/net_ib.cc", 1295), "2025-09-11 10:58:45", None,
     "NET/IB : Got completion with error 12"),
    ("node07:4121:4190 [3] proxy.cc:1500 (ncclProxyProgress) NCCL WARN [Proxy Service 3] Failed to execute",
     ("proxy.cc", 1500), None, "ncclProxyProgress", "[Proxy Service 3] Failed to execute"),
    ("[rank3]:node07:4121:4190 [3] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer",
     ("misc/socket.cc", 50), None, None, "socketProgress: Connection closed by remote peer"),
    ("node07:4121:4190 [3] NCCL WARN Error : ring 0 does not loop back to start", None, None, None,
     "Error : ring 0 does not loop back to start"),
])
def test_warn_lines(line: str, src: tuple[str, int] | None, ts: str | None, func: str | None, message: str) -> None:
    event = parse_nccl_line(line)
    assert isinstance(event, NcclWarn)
    assert (event.host, event.pid, event.cuda_dev) == ("node07", 4121, 3)
    assert ((event.source_file, event.source_line) if src else (None, None)) == (src or (None, None))
    assert (event.timestamp, event.function, event.message) == (ts, func, message)


# ---- tracker -------------------------------------------------------------------------------

def _init(host: str, pid: int, comm: str, rank: int, nranks: int, comm_id: str) -> str:
    return (f"{host}:{pid}:{pid} [{rank % 8}] NCCL INFO ncclCommInitRank comm {comm} rank {rank} nranks {nranks} "
            f"cudaDev {rank % 8} nvmlDev {rank % 8} busId 1b000 commId {comm_id} - Init COMPLETE")


def _coll(host: str, pid: int, comm: str, op_count: int, op: str = "AllReduce", count: int = 1024,
          dtype: int = 7, nranks: int = 2, prefix: str = "") -> str:
    return (f"{prefix}{host}:{pid}:{pid + 5} [0] NCCL INFO {op}: opCount {op_count:x} sendbuff 0x7f0 recvbuff 0x7f0 "
            f"count {count} datatype {dtype} op 0 root 0 comm {comm} [nranks={nranks}] stream 0x1")


def test_tracker_last_op_per_comm_and_rank_mapping() -> None:
    tracker = NcclTracker(history=3)
    tracker.feed(_init("a", 10, "0xw0", 0, 2, "0xWORLD"))
    tracker.feed(_init("b", 20, "0xw1", 1, 2, "0xWORLD"))
    tracker.feed(_init("b", 20, "0xs1", 0, 1, "0xSUB1"))  # rank 0 of a 1-rank split comm
    for i in range(5):
        tracker.feed(_coll("a", 10, "0xw0", i))
        tracker.feed(_coll("b", 20, "0xw1", i, op="AllGather" if i == 4 else "AllReduce", dtype=9))
    tracker.feed(_coll("b", 20, "0xs1", 0, count=8))
    tracker.feed("b:20:21 [0] init.cc:10 NCCL WARN something bad")
    states = {(s.host, s.comm): s for s in tracker.last_ops()}
    assert set(states) == {("a", "0xw0"), ("b", "0xw1"), ("b", "0xs1")}
    w1 = states[("b", "0xw1")]
    assert (w1.rank, w1.nranks, w1.global_rank, w1.comm_id) == (1, 2, 1, "0xWORLD")
    assert (w1.last.op, w1.last.op_count, w1.last.dtype, w1.ops_seen) == ("all_gather", 4, "bfloat16", 5)
    assert [c.op_count for c in w1.history] == [2, 3, 4]
    s1 = states[("b", "0xs1")]
    assert (s1.rank, s1.global_rank, s1.last.count) == (0, 1, 8)  # global rank from the largest comm
    assert [w.message for w in tracker.warnings()] == ["something bad"]
    colls = [c for c in tracker_collectives(tracker) if c.pg == "0xWORLD" and c.seq == 5]
    assert sorted((c.rank, c.op) for c in colls) == [(0, "all_reduce"), (1, "all_gather")]
    assert all(c.state is CollectiveState.SCHEDULED and c.source == "nccl" for c in colls)


def test_tracker_without_init_uses_launcher_rank_and_pointer_pg() -> None:
    tracker = NcclTracker()
    tracker.feed(_coll("h", 1, "0xc", 9, prefix="[rank6]:"))
    (state,) = tracker.last_ops()
    assert (state.rank, state.global_rank, state.comm_id) == (None, 6, None)
    (coll,) = tracker_collectives(tracker)
    assert (coll.pg, coll.seq, coll.rank) == ("comm:0xc", 10, 6)


def test_tracker_send_recv_collectives() -> None:
    tracker = NcclTracker()
    tracker.feed("h:1:2 [0] NCCL INFO Send: opCount 0 sendbuff 0x1 recvbuff (nil) count 4 datatype 7 op 0 root 1 "
                 "comm 0xc [nranks=2] stream 0x1")
    (coll,) = tracker_collectives(tracker)
    assert (coll.op, coll.is_p2p, coll.peer) == ("send", True, 1)


def _realistic_log(rng: random.Random, lines: int, collide: bool = False) -> str:
    procs = [(f"n{r // 4}", 1000 + r, f"0x5{r:03x}0", f"0x6{r:03x}0", f"0x9{r:03x}0") for r in range(8)]
    out: list[str] = []
    counts: dict[str, int] = {}
    for r, (host, pid, world, tp, quiet) in enumerate(procs):
        out.append(_init(host, pid, world, r, 8, "0xWORLD"))
        if r != 5:  # rank 5's tp comm has no init line
            out.append(_init(host, pid, tp, r % 4, 4, f"0xTP{r // 4}"))
        out.append(_coll(host, pid, quiet, 0, op="Broadcast"))  # used once, early
    for _ in range(lines):
        r = rng.randrange(8)
        host, pid, world, tp, _quiet = procs[r]
        comm = tp if rng.random() < 0.3 else world
        if collide and r == 7 and comm == world:
            comm = procs[0][2]  # same pointer as rank 0's world comm, other process
        n = counts.get(f"{r}{comm}", 0)
        counts[f"{r}{comm}"] = n + 1
        roll = rng.random()
        prefix = f"[rank{r}]:" if roll < 0.1 else ""
        line = _coll(host, pid, comm, n, op=rng.choice(["AllReduce", "AllGather", "Broadcast"]),
                     count=rng.choice([8, 1024]), prefix=prefix)
        if roll > 0.9995:
            line = line + f"{host}:{pid}:{pid} [0] misc.cc:1 NCCL WARN glued warn {n}"
        elif roll > 0.999:
            line = f"{host}:{pid}:{pid} [0] misc.cc:1 NCCL WARN glued before ({n})" + line
        elif roll > 0.998:
            out.append(f"{host}:{pid}:{pid + 9} [0] net.cc:77 NCCL WARN transient error {n}")
        elif roll > 0.99:
            out.append(f"[rank{r}]: step {n} loss 0.1")
        out.append(line)
    return "\n".join(out) + "\n"


def _summary(tracker: NcclTracker) -> list[tuple[object, ...]]:
    return sorted(
        (s.host, s.pid, s.comm, s.rank, s.nranks, s.global_rank, s.comm_id, s.last, s.ops_seen, s.history, s.first)
        for s in tracker.last_ops()
    )


def _same_as_line_by_line(text: str) -> NcclTracker:
    """Feed `text` to the bulk reader and to the line-by-line one; both must tell the same collectives and
    warnings, and the bulk reader must not have fallen back. Returns the bulk tracker."""
    bulk, lines = NcclTracker(), NcclTracker()
    bulk.feed_bytes(text.encode())
    lines._feed_lines(text)
    assert bulk.bulk_fallbacks == 0
    assert _summary(bulk) == _summary(lines)
    assert [w.message for w in bulk.warnings()] == [w.message for w in lines.warnings()]
    return bulk


@pytest.mark.parametrize("seed", [1, 2])
def test_bulk_matches_line_by_line(seed: int) -> None:
    text = _realistic_log(random.Random(seed), 60000)
    assert len(text) > BULK_MIN_BYTES
    bulk = _same_as_line_by_line(text)
    assert len(bulk.warnings()) > 3
    assert len(_summary(bulk)) == 24  # 8 world + 8 tp + 8 quiet comms


def test_bulk_falls_back_when_a_pointer_is_shared() -> None:
    text = _realistic_log(random.Random(3), 60000, collide=True)
    bulk, lines = NcclTracker(), NcclTracker()
    bulk.feed_bytes(text.encode())
    lines._feed_lines(text)
    assert bulk.bulk_fallbacks == 1
    assert _summary(bulk) == _summary(lines)


def test_feed_file_mmap_pipe_and_small(tmp_path: Path) -> None:
    text = _realistic_log(random.Random(4), 60000)
    path = tmp_path / "nccl.log"
    path.write_text(text)
    reference = NcclTracker()
    reference._feed_lines(text)
    with path.open("rb") as handle:
        mapped = NcclTracker()
        mapped.feed_file(handle)
    piped = NcclTracker()
    piped.feed_file(io.BytesIO(text.encode()))
    texted = NcclTracker()
    texted.feed_text(text)
    small = NcclTracker()
    small.feed_file(io.StringIO(text[:5000]))
    assert _summary(mapped) == _summary(piped) == _summary(texted) == _summary(reference)
    assert small.last_ops()


def test_bulk_after_live_lines_keeps_state() -> None:
    text = _realistic_log(random.Random(5), 60000)
    head, tail = text[: len(text) // 3], text[len(text) // 3:]
    cut = head.rfind("\n") + 1
    head, tail = text[:cut], text[cut:]
    mixed, reference = NcclTracker(), NcclTracker()
    for line in head.splitlines():
        mixed.feed(line)
    mixed.feed_bytes(tail.encode())
    reference._feed_lines(text)
    assert _summary(mixed) == _summary(reference)


@pytest.mark.parametrize("heavy", [20000, 50])
def test_bulk_comm_quiet_halfway(monkeypatch: pytest.MonkeyPatch, heavy: int) -> None:
    """A comm busy for the first half then silent: found by the pass, or (when it matches too
    often) by the backward window search."""
    monkeypatch.setattr(nccl_bulk, "HEAVY_MATCHES", heavy)
    rng = random.Random(6)
    lines = [_init("a", 1, "0xw", 0, 2, "0xW"), _init("a", 1, "0xhalf", 0, 2, "0xH")]
    for i in range(80000):
        lines.append(_coll("a", 1, "0xw", i, count=rng.choice([1, 2])))
        if i < 40000 and i % 3 == 0:
            lines.append(_coll("a", 1, "0xhalf", i // 3, op="Broadcast"))
    text = "\n".join(lines) + "\n"
    assert len(text) > BULK_MIN_BYTES
    bulk, reference = NcclTracker(), NcclTracker()
    bulk.feed_bytes(text.encode())
    reference._feed_lines(text)
    assert bulk.bulk_fallbacks == 0
    assert _summary(bulk) == _summary(reference)
    half = next(s for s in bulk.last_ops() if s.comm == "0xhalf")
    assert (half.last.op_count, half.ops_seen, half.comm_id) == (13333, 13334, "0xH")


def test_warnings_keep_first_and_latest() -> None:
    tracker = NcclTracker(max_warnings=10)
    for i in range(100):
        tracker.feed(f"h:1:2 [0] misc.cc:1 NCCL WARN problem {i}")
    messages = [w.message for w in tracker.warnings()]
    assert messages == [f"problem {i}" for i in (0, 1, 2, 3, 4, 95, 96, 97, 98, 99)]
    assert tracker.warnings_dropped == 90


def test_timestamped_info_lines() -> None:
    line = "[2025-09-11 10:58:45.123456] " + COLL
    event = parse_nccl_line(line)
    assert isinstance(event, NcclColl) and event.host == "node07"
    tracker = NcclTracker()
    tracker.feed(line)
    assert tracker.last_ops()[0].last.op_count == 0x2F


def test_bulk_crlf_and_no_final_newline() -> None:
    text = _realistic_log(random.Random(7), 60000).replace("\n", "\r\n").rstrip("\r\n")
    _same_as_line_by_line(text)


# Lines the "mm " scan of the bulk pass stops at that are no " comm X" (summ, Comm, xcomm, mm at a line start)
_NEAR_MISSES = ("[rank2]: summ 0x5000 mm 0x5010 NCCL INFO xcomm 0x6000 Comm 0x9000",
                "mm 0x5020 grad summ 0xfff", "n0:1000:1000 [0] NCCL INFO Channel 01/32 : 0 1 comm")


@pytest.mark.parametrize("near_misses", [10**9, 3])
@pytest.mark.parametrize("where", ["start", "middle", "tail", "nowhere"])
def test_bulk_skips_the_lines_before_the_first_nccl_line(monkeypatch: pytest.MonkeyPatch, where: str,
                                                         near_misses: int) -> None:
    """The bulk pass starts at the first line holding "NCCL" (found by memchr on its "N"); the lines
    before it, the near misses of the "mm " scan (with and without the switch to " comm " after a
    few) and NCCL lines only in the last MB read the same as line by line, and a log without NCCL
    gives nothing."""
    monkeypatch.setattr(nccl_bulk, "NEAR_MISSES", near_misses)
    steps = "".join(f"[rank{i % 8}]: step {i} loss 2.{i % 97:02d} lr 3e-4 summ 0x5000 mm {i}\n" for i in range(90000))
    nccl = _realistic_log(random.Random(7), 30000 if where != "tail" else 2000)
    lines = nccl.splitlines()
    lines[len(lines) // 2:len(lines) // 2] = list(_NEAR_MISSES)
    nccl = "\n".join(lines) + "\n"
    text = {"start": nccl + steps, "middle": steps + nccl + steps, "tail": steps + nccl, "nowhere": steps}[where]
    assert len(text) > BULK_MIN_BYTES
    bulk = _same_as_line_by_line(text)
    assert bool(_summary(bulk)) is (where != "nowhere")
