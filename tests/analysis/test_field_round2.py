"""Classes of real pasted logs found by the second round of the real-world corpus, each tested on a
variant of the class (other ranks, groups, ops and wording than the case's own lines)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report


def _timeout(prefix: str, tag: str, seq: int, op: str, numel_in: int, numel_out: int) -> str:
    return (f"{prefix}[E1203 09:14:22.101200345 ProcessGroupNCCL.cpp:632] {tag} Watchdog caught collective operation "
            f"timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel_in}, NumelOut={numel_out}, "
            "Timeout(ms)=600000) ran for 600044 milliseconds before timing out.")


def test_the_rank_prefix_is_the_global_rank_and_the_message_rank_is_the_groups() -> None:
    # prime-rl#3186 / verl#1309's class: "[rank21]: ... [Rank 3] Watchdog caught" in a subgroup
    result = report(_timeout("[rank21]:", "[Rank 3]", 88, "REDUCE_SCATTER", 8192, 1024),
                    "[rank21]:[E1203 09:14:22.101300345 ProcessGroupNCCL.cpp:2168] [PG ID 7 PG GUID 41(mesh_dp) "
                    "Rank 3]  failure detected by watchdog at work sequence id: 88 PG status: last enqueued work: 88, "
                    "last completed work: 87")
    assert result.verdict.kind.value == "hang"
    assert "rank 21 timed out" in result.verdict.summary
    assert "rank 3 " not in result.verdict.summary
    # the subgroup's NumelIn/NumelOut ratio is not the job's world size
    assert "world size" not in result.verdict.summary


def test_a_rank_whose_last_lines_are_processgroupnccl_dump_handling_is_not_stuck_outside() -> None:
    # prime-rl#3186's class: another rank only received the dump signal of the timed-out one
    result = report(_timeout("[rank6]:", "[Rank 6]", 310, "ALLGATHER", 64, 512),
                    "[rank2]:[E1203 09:14:23.000100000 ProcessGroupNCCL.cpp:1849] [PG ID 0 PG GUID 0(default_pg) "
                    "Rank 2] Observed flight recorder dump signal from another rank via TCPStore.",
                    "[rank2]:[E1203 09:14:23.000200000 ProcessGroupNCCL.cpp:1628] [PG ID 0 PG GUID 0(default_pg) "
                    "Rank 2] ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1")
    assert result.verdict.kind.value == "hang"
    assert result.verdict.culprit_ranks == ()


def test_heartbeat_monitor_lines_of_a_group_rank_do_not_make_it_a_rank_at_work() -> None:
    # xDiT#147's class: two processes, each rank 0 of its own group, whose heartbeat monitors fire
    result = report("[rank2]:[E ProcessGroupNCCL.cpp:1316] [PG 3 Rank 0] Heartbeat monitor timed out! Process will be "
                    "terminated after dumping debug info. workMetaList_.size()=1",
                    "[rank6]:[E ProcessGroupNCCL.cpp:1316] [PG 3 Rank 0] Heartbeat monitor timed out! Process will be "
                    "terminated after dumping debug info. workMetaList_.size()=4",
                    "[rank6]:[E ProcessGroupNCCL.cpp:1153] [PG 3 Rank 0] ProcessGroupNCCL preparing to dump debug "
                    "info.")
    assert result.verdict.kind.value == "hang"
    assert result.verdict.culprit_ranks == ()
    assert "ranks 2,6" in result.verdict.summary


def test_a_periodic_metrics_report_before_the_timeouts_is_no_rank_0_work() -> None:
    # OLMo#846's class: the training loop's own metrics printed by rank 0, then a large FSDP collective times out
    result = report("trainer.py:412  INFO    [step=5100/9000,epoch=1]",
                    "    train/loss=2.114",
                    "    throughput/tokens_per_second=9,812",
                    _timeout("[rank5]:", "[Rank 5]", 40211, "_REDUCE_SCATTER_BASE", 4096000, 512000),
                    _timeout("[rank6]:", "[Rank 6]", 40211, "_REDUCE_SCATTER_BASE", 4096000, 512000))
    assert result.verdict.kind.value == "hang"
    assert result.verdict.culprit_ranks == ()


def test_rank_0_only_work_before_the_timeouts_still_names_rank_0() -> None:
    # ...while a line of rank-0-only work (here a save) still does
    result = report("    train/loss=2.114",
                    "Saving model checkpoint to /ckpt/step-5100",
                    _timeout("[rank5]:", "[Rank 5]", 40211, "ALLREDUCE", 1, 1),
                    _timeout("[rank6]:", "[Rank 6]", 40211, "ALLREDUCE", 1, 1))
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("stuck_outside_collective", (0,))


def test_an_unfinished_progress_bar_is_routine_but_a_finished_one_is_not() -> None:
    bar = "Epoch 3: {pct}%|███       | {n}/200 [01:10<02:40,  1.2it/s, loss=0.31]"
    busy = report(bar.format(pct=37, n=74), _timeout("[rank3]:", "[Rank 3]", 901, "ALLREDUCE", 4096, 4096))
    assert busy.verdict.culprit_ranks == ()
    done = report(bar.format(pct=100, n=200), _timeout("[rank3]:", "[Rank 3]", 901, "ALLREDUCE", 4096, 4096))
    assert done.verdict.culprit_ranks == (0,)


def test_an_nccl_warn_of_a_peer_that_closed_the_connection_is_a_network_error() -> None:
    # pytorch/elastic#134's class: only NCCL's own lines, a peer gone
    result = report("gpu-n3:5512:5590 [2] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote "
                    "peer gpu-n4<47121>",
                    "gpu-n3:5512:5590 [2] NCCL INFO misc/socket.cc:749 -> 6")
    assert result.verdict.kind.value == "network_error"
    assert result.verdict.culprit_ranks == ()
    assert "gpu-n3" in result.verdict.summary


def test_a_ray_prefix_with_a_node_name_and_an_iso_stamp_keeps_the_rank() -> None:
    # verl#1309's class: "[ISO stamp] (Actor pid=N, ip=<host name>) [rankR]:..." inside inline code
    line = _timeout("`[2025-06-01 08:00:01] (TrainWorker pid=311, ip=node-a7-worker-2) [rank11]:", "[Rank 3]",
                    5, "BROADCAST", 1, 1) + "`"
    result = report(line)
    assert result.verdict.kind.value == "hang"
    assert "rank 11 timed out" in result.verdict.summary
