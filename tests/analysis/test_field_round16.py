"""Classes of real pasted logs found by round 16 of the real-world corpus (Open MPI's signal handler inside
a rank's --tag-output), each tested on a variant written here (other ranks, hosts, pids and signals than
the cases' own lines)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line


def test_open_mpi_signal_line_is_a_fatal_signal() -> None:
    line = parse_crash_line("[trn-node-12:90210] Signal: Floating point exception (8)")
    assert line is not None and line.kind is CrashLineKind.FATAL_SIGNAL and line.signal == "SIGFPE"
    assert parse_crash_line("[trn-node-12:90210] Signal code: Integer divide-by-zero (1)") is None


def test_open_mpi_handler_inside_a_tagged_rank_names_that_rank_and_host() -> None:
    result = report(
        "[1,3]<stdout>:epoch 2 step 400 loss 1.93",
        "[1,12]<stderr>:[trn-node-12:90210] *** Process received signal ***",
        "[1,12]<stderr>:[trn-node-12:90210] Signal: Bus error (7)",
        "[1,12]<stderr>:[trn-node-12:90210] Signal code: Non-existant physical address (2)",
        "[1,12]<stderr>:[trn-node-12:90210] Failing at address: 0x7f3a1c000000",
        "[1,12]<stderr>:[trn-node-12:90210] [ 0] /lib64/libpthread.so.0(+0xf630)[0x7f3b2c4a5630]",
        "[1,12]<stderr>:[trn-node-12:90210] *** End of error message ***")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == (12,)
    assert "SIGBUS" in result.verdict.summary and "trn-node-12" in result.verdict.summary


def test_open_mpi_handler_without_a_tag_is_a_crash_of_no_rank_not_of_its_pid() -> None:
    result = report(
        "[trn-node-4:5123] *** Process received signal ***",
        "[trn-node-4:5123] Signal: Segmentation fault (11)",
        "[trn-node-4:5123] Signal code: Address not mapped (1)")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == ()
    assert "5123" not in result.verdict.summary.split(":")[0]


def test_a_script_refusing_the_launchers_local_rank_argument_is_that_ranks_exception() -> None:
    result = report("finetune.py: error: unrecognized arguments: --local_rank=6")
    assert result.verdict.kind.value == "exception"
    assert result.verdict.culprit_ranks == (6,)


def test_every_process_that_refused_it_is_named_not_only_the_agents_first() -> None:
    result = report(
        "usage: run.py [-h] [--config CONFIG] [--local_rank LOCAL_RANK]",
        "run.py: error: unrecognized arguments: --local-rank=2",
        "usage: run.py [-h] [--config CONFIG] [--local_rank LOCAL_RANK]",
        "run.py: error: unrecognized arguments: --local-rank=0",
        "usage: run.py [-h] [--config CONFIG] [--local_rank LOCAL_RANK]",
        "run.py: error: unrecognized arguments: --local-rank=1",
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 2) local_rank: 0 (pid: 7781) of "
        "binary: /usr/bin/python3")
    assert result.verdict.kind.value == "exception"
    assert result.verdict.culprit_ranks == (0, 1, 2)


def test_python_fire_refusing_it_names_that_rank() -> None:
    result = report("ERROR: Could not consume arg: --local_rank=1",
                    "Usage: sft.py --local_rank=1 --model_path /data/m")
    assert result.verdict.culprit_ranks == (1,)


def test_deepspeed_launchers_record_without_its_argv_is_a_failure_of_no_named_rank() -> None:
    result = report("[2024-05-02 10:11:12,345] [ERROR] [launch.py:321:sigkill_handler] exits with return code = -6")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == ()
    assert "SIGABRT" in result.verdict.summary


def test_ranks_raising_the_same_error_share_its_cause_and_are_all_named() -> None:
    result = report(
        "[rank2]: Traceback (most recent call last):",
        '[rank2]:   File "/work/run.py", line 88, in <module>',
        "[rank2]: ValueError: tensor_parallel_size (16) must divide the number of attention heads (12)",
        "[rank5]: Traceback (most recent call last):",
        '[rank5]:   File "/work/run.py", line 88, in <module>',
        "[rank5]: ValueError: tensor_parallel_size (16) must divide the number of attention heads (12)",
        "[rank7]: RuntimeError: Connection reset by peer")
    assert result.verdict.kind.value == "exception"
    assert result.verdict.culprit_ranks == (2, 5)
    assert "rank 5 raised the same error" in result.verdict.summary
    assert "rank 7 failed after it" in result.verdict.summary
    assert result.findings[0].ranks == (2, 5) and result.findings[0].root_cause


def test_a_different_error_on_another_rank_is_still_after_the_first() -> None:
    result = report(
        "[rank2]: ValueError: tensor_parallel_size (16) must divide the number of attention heads (12)",
        "[rank5]: KeyError: 'lm_head.weight'")
    assert result.verdict.culprit_ranks == (2,)
    assert "rank 5 failed after it" in result.verdict.summary
