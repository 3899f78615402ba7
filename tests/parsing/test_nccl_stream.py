"""A real process prints a live NCCL stream; the tracker follows it through a pipe."""

from __future__ import annotations

from tests.helpers.nccl import tracker_collectives
from tests.helpers.processes import python_program, running_program
from triage.parsing.nccl.tracker import NcclTracker

OPS = ["all_reduce", "all_gather", "reduce_scatter", "broadcast"]
N_OPS = 30


def test_live_stream_through_a_pipe() -> None:
    tracker = NcclTracker(history=4)
    checked_midway = False
    lines = 0
    with running_program(python_program("nccl_stream.py", "--ops", str(N_OPS), "--interval", "0.01", "--hold"),
                         timeout=60) as proc:
        assert proc.stdout is not None
        while True:
            raw = proc.stdout.readline()
            assert raw, "the stream ended before STREAM-END"
            line = raw.decode()
            if line.startswith("STREAM-END"):
                break
            tracker.feed(line.rstrip("\n"))
            lines += 1
            if lines == 60 and not checked_midway:
                # live: the state already reflects what has been read so far
                states = tracker.last_ops()
                assert states
                for state in states:
                    assert state.last.op_count == state.ops_seen - 1
                checked_midway = True
    assert checked_midway
    states = {(s.pid, s.comm): s for s in tracker.last_ops()}
    assert len(states) == 4
    world0 = states[(52110, "0x55a1c9e4b2d0")]
    world1 = states[(52111, "0x5601e33f8a10")]
    split1 = states[(52111, "0x5601e3410c20")]
    last_op = OPS[(N_OPS - 1) % 4]
    for rank, world in ((0, world0), (1, world1)):
        assert (world.rank, world.nranks, world.global_rank) == (rank, 2, rank)
        assert (world.last.op, world.last.op_count, world.ops_seen) == (last_op, N_OPS - 1, N_OPS)
        assert world.comm_id == "0x4d1f9e2a7c3b8e10"
        assert world.host == "trn-node-3"
        assert [op.op_count for op in world.history] == list(range(N_OPS - 4, N_OPS))
    assert (split1.rank, split1.nranks, split1.global_rank) == (0, 1, 1)
    assert (split1.last.op, split1.last.op_count, split1.last.dtype, split1.last.redop) == (
        "all_reduce", N_OPS // 2 - 1, "int64", "max")
    assert split1.comm_id == "0x8a2b3c4d5e6f7081"
    assert world1.last.launcher_rank == 1
    (warn,) = tracker.warnings()
    assert (warn.pid, warn.source_file, warn.source_line) == (52111, "transport/net_ib.cc", 1295)
    assert warn.message.startswith("NET/IB : Got completion from peer")
    seqs = {(c.rank, c.pg): c.seq for c in tracker_collectives(tracker) if c.pg == "0x4d1f9e2a7c3b8e10"}
    assert seqs == {(0, "0x4d1f9e2a7c3b8e10"): N_OPS, (1, "0x4d1f9e2a7c3b8e10"): N_OPS}


def test_live_stream_with_a_stalled_rank() -> None:
    tracker = NcclTracker()
    argv = python_program("nccl_stream.py", "--ops", "12", "--interval", "0", "--stall-rank", "1", "--stall-at", "9",
                          "--hold")
    with running_program(argv, timeout=60) as proc:
        assert proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            if raw.startswith(b"STREAM-END"):
                break
            tracker.feed(raw.decode().rstrip("\n"))
    last = {s.global_rank: s.last for s in tracker.last_ops() if s.comm_id == "0x4d1f9e2a7c3b8e10"}
    assert (last[0].op_count, last[0].op) == (11, "broadcast")
    assert (last[1].op_count, last[1].op) == (8, "all_reduce")  # rank 1 never entered opCount 9
