"""Classes of real pasted logs found by round 15 of the real-world corpus (Open MPI's own signal handler
block, a line pasted as inline code that then got a timestamp), each tested on a variant written here
(other hosts, pids, signals and messages than the cases' own lines)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.log_prefix import split_rank_prefix
from triage.parsing.textclean import strip_decorations

_OMPI_BUS = (
    "[gpu-node07:48812] *** Process received signal ***",
    "[gpu-node07:48812] Signal: Bus error (7)",
    "[gpu-node07:48812] Signal code: Non-existant physical address (2)",
    "[gpu-node07:48812] Failing at address: 0x7f1c2a000000",
    "[gpu-node07:48812] [ 0] /lib/x86_64-linux-gnu/libpthread.so.0(+0x12890)[0x7f1d4c1a1890]",
    "[gpu-node07:48812] [ 1] /usr/lib/libnccl.so.2(+0x5a2b1)[0x7f1cf05a2b1]",
    "[gpu-node07:48812] *** End of error message ***")


def test_open_mpis_signal_handler_line_is_that_fatal_signal() -> None:
    line = parse_crash_line("[gpu-node07:48812] Signal: Bus error (7)")
    assert line is not None and line.kind is CrashLineKind.FATAL_SIGNAL and line.signal == "SIGBUS"
    assert parse_crash_line("[gpu-node07:48812] Signal code: Non-existant physical address (2)") is None


def test_open_mpis_host_pid_tag_is_no_rank() -> None:
    for line in _OMPI_BUS[:2] + _OMPI_BUS[4:5]:
        assert split_rank_prefix(line).rank is None, line
    assert split_rank_prefix("[gpu-node07:3] loss 0.1").rank == 3       # triage's own [host:rank] tag stays one


def test_open_mpis_handler_block_is_a_crash_of_no_known_rank_whether_indented_or_not() -> None:
    for lines in (_OMPI_BUS, tuple("   " + line for line in _OMPI_BUS)):
        result = report(*lines)
        assert result.verdict.kind.value == "crash", result.verdict.summary
        assert result.verdict.culprit_ranks == ()
        assert "Bus error" in result.verdict.summary


def test_an_inline_code_line_behind_a_timestamp_loses_its_backticks() -> None:
    assert strip_decorations("Nov 22 10:00:01 `[rank5]: ValueError: bad shard index`")[0] == (
        "[rank5]: ValueError: bad shard index")
    assert strip_decorations("2026-09-17 13:40:05 ```")[0] == "```"
    result = report("2026-09-17 13:40:05 The error, once more:",
                    "2026-09-17 13:40:05 `[rank3]: RuntimeError: shard 9 of 8 requested`")
    assert result.verdict.kind.value == "exception" and result.verdict.culprit_ranks == (3,)


_ABORTED = ("RuntimeError: NCCL communicator was aborted on rank 5.  Original reason for failure was: [Rank 5] Watchdog "
            "caught collective operation timeout: WorkNCCL(SeqNum=9120, OpType=ALLGATHER, Timeout(ms)=600000) ran for "
            "600412 milliseconds before timing out.")


def test_an_aborted_communicators_exit_code_is_the_timeouts_echo_not_a_first_failure() -> None:
    result = report(
        _ABORTED,
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 9001 closing signal SIGTERM",
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 3 (pid: 9004) of binary: "
        "/usr/bin/python3")
    assert result.verdict.kind.value == "hang", result.verdict.summary
    assert result.verdict.culprit_ranks == ()
    assert "rank 5 timed out" in result.verdict.summary


def test_an_exit_code_with_a_real_error_beside_the_timeout_stays_the_first_failure() -> None:
    result = report(
        "[rank3]: ValueError: label 12 out of range for 10 classes",
        _ABORTED,
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 3 (pid: 9004) of binary: "
        "/usr/bin/python3")
    assert result.verdict.kind.value == "exception" and result.verdict.culprit_ranks == (3,)


def test_a_timeout_in_another_group_does_not_infer_global_rank_0_at_work() -> None:
    result = report(
        "Loading shard 3 of the actor weights",
        "(PolicyWorker[rank=45] pid=812, ip=10.0.3.7) [E ProcessGroupNCCL.cpp:686] [PG ID 4 PG GUID 130(TENSOR_MODEL_"
        "PARALLEL_GROUP) Rank 3] Process group watchdog thread terminated with exception: [Rank 3] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) "
        "ran for 600301 milliseconds before timing out.")
    assert result.verdict.kind.value == "hang", result.verdict.summary
    assert result.verdict.culprit_ranks == ()


# A DataLoader worker started with the spawn context dies at start-up after its rank was killed: another
# launcher's words, other paths, another signal and EOFError instead of UnpicklingError.
_SPAWNED_CHILD = (
    'Traceback (most recent call last):',
    '  File "<string>", line 1, in <module>',
    '  File "/opt/conda/lib/python3.11/multiprocessing/spawn.py", line 122, in spawn_main',
    '    exitcode = _main(fd, parent_sentinel)',
    '  File "/opt/conda/lib/python3.11/multiprocessing/spawn.py", line 132, in _main',
    '    self = reduction.pickle.load(from_parent)',
    'EOFError: Ran out of input')


def test_a_spawned_childs_start_up_error_is_the_consequence_of_its_parents_death() -> None:
    result = report(
        "torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with signal SIGSEGV",
        *_SPAWNED_CHILD)
    assert result.verdict.kind.value == "crash" and result.verdict.culprit_ranks == (3,)
    assert "SIGSEGV" in result.verdict.summary and "EOFError" not in result.verdict.summary


def test_a_spawned_childs_start_up_error_alone_is_still_told_and_says_what_it_means() -> None:
    result = report(*_SPAWNED_CHILD)
    assert "EOFError: Ran out of input" in result.verdict.summary
    assert "its parent had gone" in result.verdict.summary


def test_the_same_error_outside_a_spawned_childs_start_up_is_the_failure() -> None:
    result = report(
        'Traceback (most recent call last):',
        '  File "train.py", line 40, in <module>',
        '    state = torch.load(path)',
        '_pickle.UnpicklingError: pickle data was truncated')
    assert result.verdict.kind.value == "exception"
    assert "its parent had gone" not in result.verdict.summary


def _duplicate(host: str, pid: int, dev: int, a: int, b: int, bus: str) -> str:
    return (f"{host}:{pid}:{pid + 17} [{dev}] init.cc:1025 NCCL WARN Duplicate GPU detected : rank {a} and rank {b} "
            f"both on CUDA device {bus}")


def test_duplicate_gpu_ranks_told_on_several_devices_are_sub_communicators_not_global_ranks() -> None:
    result = report(_duplicate("trn-a17", 5501, 2, 1, 0, "3f000"), _duplicate("trn-a17", 5509, 2, 0, 1, "3f000"),
                    _duplicate("trn-a17", 5502, 5, 1, 0, "c1000"), _duplicate("trn-a17", 5510, 5, 0, 1, "c1000"))
    assert result.verdict.kind.value == "exception"
    assert result.verdict.culprit_ranks == ()
    assert result.verdict.culprit_host == "trn-a17"
    assert "not global ranks" in result.verdict.summary


def test_duplicate_gpu_on_one_device_still_blames_both_ranks() -> None:
    result = report(_duplicate("trn-a17", 5501, 2, 3, 2, "3f000"), _duplicate("trn-a17", 5509, 2, 2, 3, "3f000"))
    assert result.verdict.culprit_ranks == (2, 3)
    assert "not global ranks" not in result.verdict.summary
