"""Classes of real pasted logs found by the third round of the real-world corpus, each tested on a
variant of the class (other ranks, groups, ops and wording than the case's own lines)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report


def _timeout(prefix: str, rank: int, seq: int, op: str, numel_in: int, numel_out: int) -> str:
    return (f"{prefix}[E ProcessGroupNCCL.cpp:563] [Rank {rank}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel_in}, NumelOut={numel_out}, Timeout(ms)=1800000) "
            "ran for 1800051 milliseconds before timing out.")


def _fingerprint(seq: int, op: str, shape: str, dtype: str) -> str:
    return (f"CollectiveFingerPrint(SequenceNumber={seq}, OpType={op}, TensorShape=[{shape}], TensorDtypes={dtype}, "
            "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), "
            "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))")


def _mismatch(reporter: int, mine: str, other: int, theirs: str) -> str:
    return (f"RuntimeError: Detected mismatch between collectives on ranks. Rank {reporter} is running collective: "
            f"{mine}, but Rank {other} is running collective: {theirs}.")


def test_a_timeout_glued_after_another_ranks_progress_bar_is_the_glued_ranks() -> None:
    # nanotron#204's class: torchrun --tee tags; rank 1's bar ends without a line end, rank 3's timeout sticks to it
    result = report("[default1]:Running tokenizer on dataset:  23%|██▎       | 2300/10000 [01:02<03:29, 36.80 ex/s]"
                    + _timeout("[default3]:", 3, 4, "ALLREDUCE", 1, 1),
                    _timeout("[default2]:", 2, 4, "ALLREDUCE", 1, 1),
                    _timeout("[default0]:", 0, 4, "ALLREDUCE", 1, 1))
    assert result.verdict.kind.value == "stuck_outside_collective"
    assert result.verdict.culprit_ranks == (1,)
    assert "Running tokenizer" in result.verdict.summary


def test_a_log_viewers_column_does_not_make_the_ranks_lines_rank_0_work() -> None:
    # litData#340's class: "  | <time> | " before every line; the rank prefix behind it still counts
    stamp = "  | 2025-02-11T08:15:0{}.004Z | "
    result = report(stamp.format(1) + "[rank5]:[E ProcessGroupNCCL.cpp:577] [Rank 5] Some NCCL operations have "
                    "failed or timed out.",
                    stamp.format(2) + _timeout("[rank5]:", 5, 1207, "_ALLGATHER_BASE", 4096, 32768))
    assert result.verdict.kind.value == "hang"
    assert result.verdict.culprit_ranks == ()
    assert "rank 5 timed out" in result.verdict.summary


def test_two_ranks_against_one_of_a_job_whose_size_is_unknown_blame_no_one() -> None:
    # OpenDDE#23's class: the checker's order makes the ranks below the reported one agree with the reporter,
    # but two against one, with the job's size not in the input, is no majority (rank 3 may side with rank 2)
    a, b = _fingerprint(7, "REDUCE_SCATTER", "640, 128", "Float"), _fingerprint(7, "REDUCE_SCATTER", "641, 128", "Float")
    result = report(_mismatch(0, a, 2, b))          # ranks 0, 1 against rank 2; rank 3 not in the input
    assert result.verdict.kind.value == "collective_mismatch"
    assert result.verdict.subkind is not None and result.verdict.subkind.value == "size"
    assert result.verdict.culprit_ranks == ()
    assert "not in this input" in result.verdict.summary


def test_a_minority_that_stays_one_whatever_the_unshown_ranks_did_is_named() -> None:
    a, b = _fingerprint(7, "ALLREDUCE", "8192", "BFloat16"), _fingerprint(7, "ALLREDUCE", "8192", "Float")
    result = report(_mismatch(5, a, 6, b))          # ranks 0-5 against rank 6; rank 7 at most on its side
    assert result.verdict.subkind is not None and result.verdict.subkind.value == "dtype"
    assert result.verdict.culprit_ranks == (6,)


def test_a_rank_that_timed_out_in_a_later_collective_is_not_said_to_wait_in_the_earlier() -> None:
    # NeMo Speech#13562's class: two ranks wait in a broadcast, a third timed out two collectives later
    result = report(_timeout("[rank3]:", 3, 9120, "BROADCAST", 2048, 2048),
                    _timeout("[rank1]:", 1, 9120, "BROADCAST", 2048, 2048),
                    _timeout("[rank0]:", 0, 9121, "ALLREDUCE", 300, 300))
    assert result.verdict.kind.value == "hang"
    assert result.verdict.culprit_ranks == ()
    summary = result.verdict.summary
    assert summary.startswith("HANG: ranks 1,3 timed out in BROADCAST SeqNum=9120")
    assert "rank 0 timed out later in the same group (ALL_REDUCE SeqNum=9121)" in summary


def test_a_process_group_taking_its_process_down_is_never_an_all_clear() -> None:
    # UniWorld#46's class: NCCL INFO return-code chains, a communicator abort, and the watchdog's "Some NCCL
    # operations have failed or timed out" of one rank, with the line naming the timeout cut from the paste
    result = report("gpu-node-3:88412:88590 [5] NCCL INFO misc/socket.cc:64 -> 3",
                    "gpu-node-3:88412:88590 [5] NCCL INFO comm 0x5581 rank 13 nranks 16 cudaDev 5 busId 9e000 - Abort "
                    "COMPLETE",
                    "[rank13]:[E0211 08:15:03.004100000 ProcessGroupNCCL.cpp:684] [Rank 13] Some NCCL operations have "
                    "failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations "
                    "might run on corrupted/incomplete data.")
    assert result.verdict.kind.value == "failure_unlocated"
    assert result.verdict.culprit_ranks == ()


def test_the_shells_killed_after_a_training_progress_bar_is_a_crash_of_no_known_rank() -> None:
    result = report("Loading checkpoint shards: 100%|██████████| 4/4 [00:09<00:00,  2.31s/it]",
                    "Epoch 3:  41%|████      | 812/1980 [07:12<10:22,  1.88it/s, loss=0.912]Killed")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == ()


def test_the_ranks_a_failed_monitored_barrier_names_are_the_culprits_not_its_reporter() -> None:
    # the reporter (rank 0) raises; ranks 3 and 11 never reached the barrier
    result = report("[rank0]: Traceback (most recent call last):",
                    '[rank0]:   File "/opt/app/train.py", line 88, in <module>',
                    "[rank0]:     dist.monitored_barrier(group=gloo_group, timeout=timeout)",
                    "[rank0]: RuntimeError: [Rank 0]: Ranks 3, 11 failed to pass monitoredBarrier in 600000 ms")
    assert result.verdict.kind.value == "missing_rank"
    assert result.verdict.culprit_ranks == (3, 11)
    assert "rank 0" not in result.verdict.summary.split(":")[1]


def test_a_launcher_stopped_by_a_signal_from_outside_is_stopped_by_no_rank() -> None:
    # (the `stopped` verdict since session 33; a crash of no rank before it)
    result = report("[default0]:step 1200 loss 2.31",
                    "W0301 02:10:44.120000 8812 torch/distributed/elastic/agent/server/api.py:723] Received 1 death "
                    "signal, shutting down workers",
                    "W0301 02:10:44.121000 8812 torch/distributed/elastic/multiprocessing/api.py:900] Sending process "
                    "8830 closing signal SIGHUP")
    assert result.verdict.kind.value == "stopped"
    assert result.verdict.culprit_ranks == ()
    assert "SIGHUP" in result.verdict.summary and "terminal" in result.verdict.summary


def test_determineds_rank_tag_is_the_global_rank() -> None:
    stamp = "[2024-03-15T16:59:14.11079{}Z] 3e1f09aa [rank={}] || "
    result = report(stamp.format(1, 5) + _timeout("", 1, 77, "ALLREDUCE", 4096, 4096),
                    stamp.format(2, 7) + _timeout("", 3, 77, "ALLREDUCE", 4096, 4096))
    assert result.verdict.kind.value == "hang"
    assert "ranks 5,7 timed out" in result.verdict.summary


def test_a_root_cause_record_cut_before_its_exit_code_still_names_its_rank() -> None:
    # vllm-project/speculators#1115's class: the paste ends inside torchrun's Root Cause record
    result = report("train.py FAILED", "-" * 60, "Failures:", "  <NO_OTHER_FAILURES>", "-" * 60,
                    "Root Cause (first observed failure):", "[0]:", "  time      : 2025-06-02_08:11:40",
                    "  host      : gpu-07.cluster", "  rank      : 6 (local_rank: 6)")
    assert result.verdict.kind.value == "exception"
    assert result.verdict.culprit_ranks == (6,)
    assert "first observed failure" in result.verdict.summary


def test_a_lone_watchdog_companion_or_dump_line_is_never_an_all_clear() -> None:
    # the sweep of the corpus's single lines: each of these alone was "no problem found"
    lone = report("[rank9]:[E0311 04:02:11.1 ProcessGroupNCCL.cpp:2168] [PG ID 0 PG GUID 0(default_pg) Rank 9]  failure"
                  " detected by watchdog at work sequence id: 42 PG status: last enqueued work: 45, last completed "
                  "work: 41")
    assert lone.verdict.kind.value == "hang" and lone.verdict.culprit_ranks == ()
    dump = report("[rank2]:[E0311 04:02:11.4 ProcessGroupNCCL.cpp:1914] [PG ID 0 PG GUID 0(default_pg) Rank 2] Received"
                  " a dump signal due to a collective timeout from  rank 5 and we will try our best to dump the debug "
                  "info.")
    assert dump.verdict.kind.value not in ("no_problem_found",) and dump.verdict.culprit_ranks == ()
