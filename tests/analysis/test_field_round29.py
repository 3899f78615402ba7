"""Classes of real pasted logs found by round 29 of the real-world corpus, each tested on a variant written
here (other messages, exception types, surrounding lines and launchers than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line


# The C++ terminate handler prints "terminate called after throwing an instance of 'T'" then "  what():  ...";
# a paste that keeps only the what() line (the reporter's own words in place of the header) was named an
# exception of no rank, not the abort it is (TheAtticusProject/cuad#9's shape; another message and words here)
def test_the_terminate_handlers_what_line_alone_is_a_crash() -> None:
    result = report("Epoch 3:  41%|####      | 880/2140",
                    "the job then died with a c++ error:",
                    "  what():  std::bad_alloc")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "what():" in result.verdict.summary


def test_a_what_line_alone_reads_as_its_header_and_what_line_together() -> None:
    for what in ("NCCL error: unhandled system error, NCCL version 2.18.1",
                 "[../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.7]:4121",
                 "CUDA error: an illegal memory access was encountered",
                 "basic_string::_M_construct null not valid"):
        alone = parse_crash_line(f"what():  {what}")
        joined = parse_crash_line(f"terminate called after throwing an instance of 'std::runtime_error' "
                                  f"what():  {what}")
        assert alone is not None and joined is not None, what
        assert (alone.kind, alone.signal) == (joined.kind, joined.signal), what


def test_a_what_line_that_names_a_cuda_error_is_a_cuda_error() -> None:
    line = parse_crash_line("  what():  CUDA error: an illegal memory access was encountered")
    assert line is not None and line.kind is CrashLineKind.CUDA_ERROR


def test_what_inside_other_text_or_empty_is_not_a_terminate() -> None:
    assert parse_crash_line("what():") is None
    line = parse_crash_line("I wonder what(): means here")
    assert line is None or line.kind is not CrashLineKind.TERMINATE


def test_the_header_and_its_what_line_are_still_one_crash() -> None:
    result = report("terminate called after throwing an instance of 'c10::Error'",
                    "  what():  std::bad_alloc")
    assert result.verdict.kind.value == "crash", result.verdict.summary


# A process's own announcement that it is rank 0 of a world of one ("| distributed init (rank 0, world 1):
# env://", DETR/DeiT/LAVIS's print; Lightning's "GLOBAL_RANK: 0, MEMBER: 1/1") before a traceback of no rank
# prefix: the job's one process raised it, so it is rank 0's (salesforce/LAVIS#396's shape; other errors here)
def test_an_exception_after_rank_0_of_a_world_of_one_is_rank_0s() -> None:
    for announcement in ("| distributed init (rank 0, world 1): tcp://127.0.0.1:23456",
                         "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/1"):
        result = report(announcement,
                        "Traceback (most recent call last):",
                        '  File "main.py", line 40, in <module>',
                        "    build_loader(cfg)",
                        "KeyError: 'SLURM_PROCID'")
        assert result.verdict.kind.value == "exception", (announcement, result.verdict.summary)
        assert result.verdict.culprit_ranks == (0,), (announcement, result.verdict.summary)


def test_a_larger_world_names_no_rank_from_the_announcements() -> None:
    result = report("| distributed init (rank 0, world 2): env://",
                    "| distributed init (rank 1, world 2): env://",
                    "Traceback (most recent call last):",
                    '  File "main.py", line 40, in <module>',
                    "KeyError: 'SLURM_PROCID'")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert result.verdict.culprit_ranks == (), result.verdict.summary


def test_a_world_of_one_that_also_states_a_larger_world_size_names_no_rank() -> None:
    result = report("| distributed init (rank 0, world 1): env://",
                    "world_size=4",
                    "KeyError: 'SLURM_PROCID'")
    assert result.verdict.culprit_ranks == (), result.verdict.summary
