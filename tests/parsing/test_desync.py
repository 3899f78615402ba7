"""TORCH_DISTRIBUTED_DEBUG=DETAIL messages (ProcessGroupWrapper's format)."""

from __future__ import annotations

from triage.parsing.desync import parse_desync_report, parse_mismatch, parse_monitored_barrier, parse_running

OPTS = ("TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), "
        "pinned_memory=false (default), memory_format=(nullopt))")
MISMATCH = ("RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
            f"CollectiveFingerPrint(SequenceNumber=23, OpType=ALLREDUCE, TensorShape=[10], TensorDtypes=Float, "
            f"TensorDeviceTypes={OPTS}), but Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=23, "
            f"OpType=BROADCAST, TensorShape=[10], TensorDtypes=Float, TensorDeviceTypes={OPTS}).")


def test_both_sides_of_a_mismatch_are_read() -> None:
    found = parse_mismatch(MISMATCH)
    assert found is not None
    assert (found.reporter.rank, found.reporter.op, found.reporter.seq) == (0, "all_reduce", 23)
    assert (found.other.rank, found.other.op, found.other.shapes, found.other.dtypes) == (
        2, "broadcast", ((10,),), ("float32",))


def test_fingerprints_that_differ_only_in_sequence_number_are_recognised() -> None:
    found = parse_mismatch("Detected mismatch between collectives on ranks. Rank 1 is running collective: "
                           "CollectiveFingerPrint(SequenceNumber=1, OpType=BARRIER), but Rank 0 is running "
                           "collective: CollectiveFingerPrint(SequenceNumber=0, OpType=BARRIER).")
    assert found is not None
    reporter, other = found.reporter, found.other
    assert (reporter.op, reporter.shapes, reporter.dtypes) == (other.op, other.shapes, other.dtypes)
    assert (reporter.seq, other.seq) == (1, 0)


def test_running_collective_lines_give_rank_seq_and_op() -> None:
    running = parse_running(f"[rank1]: [Rank 1] Running collective: CollectiveFingerPrint(SequenceNumber=7, "
                            f"OpType=ALLGATHER, TensorShape=[4, 8], TensorDtypes=BFloat16, TensorDeviceTypes={OPTS})")
    assert running is not None
    assert (running.rank, running.seq, running.op, running.shapes, running.dtypes) == (
        1, 7, "all_gather", ((4, 8),), ("bfloat16",))


def test_cut_or_foreign_text_gives_none_not_an_error() -> None:
    assert parse_mismatch("Detected mismatch between collectives on ranks.") is None
    cut = parse_running("[Rank 1] Running collective: CollectiveFingerPrint(SequenceNumber=7, OpTy")
    assert cut is None or cut.op is None


def test_a_failed_monitored_barrier_names_the_ranks_that_did_not_reach_it() -> None:
    text = ("[rank0]: RuntimeError: [Rank 0]: Ranks 3, 11 failed to pass monitoredBarrier in 600000 ms\n"
            "[rank0]:  Original exception: \n"
            "[rank5]:[E ProcessGroupGloo.cpp:145] Rank 5 successfully reached monitoredBarrier, but received errors "
            "while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n"
            "[rank6]:[E ProcessGroupGloo.cpp:145] Rank 6 successfully reached monitoredBarrier, but received errors "
            "while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n")
    lags = parse_monitored_barrier(text)
    assert [lag.ranks for lag in lags] == [(3, 11), (0,)]
    assert all(lag.never_joined and lag.collective == 0 for lag in lags)
    assert parse_desync_report(text) == lags
    assert parse_monitored_barrier("dist.monitored_barrier(group, timeout=timedelta(seconds=30))") == []


def test_a_mismatch_message_cut_inside_the_reporters_fingerprint_keeps_that_side() -> None:
    from triage.parsing.desync import parse_mismatch
    cut = ("RuntimeError: Detected mismatch between collectives on ranks. Rank 4 is running collective: "
           "CollectiveFingerPrint(SequenceNumber=30, OpType=ALLGATHER, TensorShape=[2], TensorDtypes=Float, "
           "TensorDeviceTypes=TensorOptions(dtype=float (default)")
    mismatch = parse_mismatch(cut)
    assert mismatch is not None
    assert (mismatch.reporter.rank, mismatch.reporter.seq, mismatch.reporter.op) == (4, 30, "all_gather")
    assert mismatch.other.rank is None
    whole = cut + ")), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=30, OpType=BROADCAST)."
    other = parse_mismatch(whole)
    assert other is not None and other.other.rank == 0
