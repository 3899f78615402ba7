"""Issue 23: what the first-sight misses of rounds 20-37 have in common, read as classes before the next round
shows them (session 39). Variants written here, none taken from a round's case.

1. A failure in words triage has no reader for (a library, launcher or runtime never seen: a new MPI, a fabric
   library, a framework's own logger) and no rank: at its error level (``FOOLIB ERROR ...``, ``FATAL: ...``, ``[E]
   ...``, ``abort: ...``), in the words "X failed" / "failed to", or a process's own death by a signal (``***
   Received signal 11 ***``, ``killed by signal 9``). Rounds 25, 28, 31, 32, 34, 35 and 37 each refused such text
   from a library triage had never seen (UCX, Transformer Engine, glog, gfortran, Intel Fortran, XLA, Ray): it is a
   failure of unknown rank, said with what would settle it; never read where the input shows success after it or
   only warnings, never an all-clear, never in place of a stronger reading.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log
from triage.parsing.named_failure import named_failure
from triage.parsing.rank_words import SHAPES, RankShape, rank_shape
from triage.parsing.unread_failure import unread_failure

report = failure_verdict


# --- 1. a failure in unread words ---------------------------------------------------------------------------------

_WORK = "loading checkpoint shards: 100%\nepoch 0 step 10 loss 2.31\nepoch 0 step 20 loss 2.12\n"


@pytest.mark.parametrize("line", [
    "[1701080000.123] [gpu-node07:12345:0]  mm_xpmem.c:166  XPLIB ERROR failed to attach segment 0x1: Invalid argument",
    "FATAL: fabric init failed: no route to device mlx5_1",
    "[QX] ERROR userbuffers.cu:88 registration failed (code 3)",
    "foocomm: abort: peer 10.0.0.2 closed the channel",
    "MPIDI_XYZ_send failed: Input/output error",
    "2026-11-27 10:00:01,234 CRITICAL [engine] the collective engine failed to initialise its transport",
    "E1127 10:00:01.123456 4242 transport.cc:88] failed to post a send: queue pair 0x3 in the error state",
    "hcomm: Fatal error in channel setup (code 507033)",
])
def test_a_failure_line_in_unread_words_is_a_failure_of_unknown_rank(line: str, tmp_path: Path) -> None:
    verdict = report(_WORK + line + "\n", tmp_path)
    assert verdict["kind"] == "failure_unlocated"
    assert not verdict["culprit_ranks"]
    assert "a failure of unknown rank" in verdict["summary"]
    assert line.split()[-1] in verdict["summary"]
    assert "would settle it" in verdict["summary"]


@pytest.mark.parametrize(("line", "signal"), [
    ("*** Received signal 11 ***", "SIGSEGV"),
    ("the worker process was killed by signal 9", "SIGKILL"),
    ("child process terminated by signal SIGBUS", "SIGBUS"),
    ("solver: caught signal 8, exiting", "SIGFPE"),
    ("myrt: process 88123 died of signal 6", "SIGABRT"),
])
def test_a_death_by_a_signal_in_unread_words_is_a_crash_of_unknown_rank(line: str, signal: str,
                                                                        tmp_path: Path) -> None:
    verdict = report(_WORK + line + "\n", tmp_path)
    assert verdict["kind"] == "crash"
    assert not verdict["culprit_ranks"]
    assert signal in verdict["summary"]


def test_the_host_of_the_line_goes_with_it(tmp_path: Path) -> None:
    verdict = report(_WORK + "node03: [E] fatal error in transport: qp 0x3 entered error state\n", tmp_path)
    assert verdict["kind"] == "failure_unlocated"
    assert verdict.get("culprit_host") == "node03"


def test_the_signal_beats_the_error_line_before_it(tmp_path: Path) -> None:
    verdict = report(_WORK + "XPLIB ERROR: registration failed\n*** Received signal 11 ***\n", tmp_path)
    assert verdict["kind"] == "crash"
    assert "SIGSEGV" in verdict["summary"]


@pytest.mark.parametrize("text", [
    _WORK + "WARNING: the fabric library is deprecated\nUserWarning: foo is slow\ntraining finished\n",
    _WORK + "W1127 10:00:01.123456 4242 transport.cc:88] retrying the connect, error 3\n",
    _WORK + "validation error rate: 0.013\nerrors: 0\n",
    _WORK + "=== 12 passed, 1 failed in 3.2s ===\n" .replace("1 failed", "0 failed"),
    _WORK + "XPLIB ERROR: the first connect failed, retrying in 5 s\n",
    # (an error line the run went on after to its successful end: the all-clear that quotes it, test_gaps_s41.py)
    "    if err != 0:\n        raise RuntimeError(\"fatal\")\n",
    "NCCL_DEBUG=WARN python train.py --log-level ERROR\n" + _WORK,
])
def test_text_that_only_warns_or_ends_well_stays_unread(text: str, tmp_path: Path) -> None:
    code, out = report_log(text, tmp_path)
    assert code == 2, out         # nothing recognisable: never an all-clear, never a failure it does not show


@pytest.mark.parametrize("line", [
    "INFO: connected to peer, no errors", "DEBUG fatal_on_error=1", "retrying the connect (attempt 2): ERROR 111",
    "loss: 0.3 error: 0.12", "3 failed, 12 passed", "installing the SIGSEGV signal handler",
    "  File \"x.py\", line 3, in <module>",
])
def test_unread_failure_lines_that_are_none(line: str) -> None:
    assert unread_failure(line) is None


def test_a_stronger_reading_is_never_displaced(tmp_path: Path) -> None:
    text = ("[rank1]: Traceback (most recent call last):\n[rank1]:   File \"train.py\", line 9, in <module>\n"
            "[rank1]: ValueError: bad shape\nXPLIB ERROR: registration failed\n")
    verdict = report(text, tmp_path)
    assert verdict["kind"] == "exception"
    assert verdict["culprit_ranks"] == [1]
    assert "XPLIB" not in verdict["summary"]


# --- 2. one table of the shapes that name a rank --------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: shape.name)
def test_every_rank_shape_reads_its_example(shape: RankShape) -> None:
    found = rank_shape(shape.example)
    assert found is not None and found[0] == 7 and found[1] == shape, shape


@pytest.mark.parametrize(("line", "rank", "trust"), [
    ("RankID 3 reported: HCCL timeout error in allreduce", 3, "global"),
    ("[node1:mpi_rank_3][handler] Caught error: Segmentation fault (signal 11)", 3, "global"),
    ("the trainer process with rank=[3] was aborted", 3, "global"),
    ("rank-3: fatal error in the data loader", 3, "global"),
    ("rank_3 failed to open its shard", 3, "global"),
    ("Rank[3] crashed", 3, "global"),
    ("PE 3: killed by signal 9", 3, "global"),
    ("process_index=3 raised an exception", 3, "index"),
    ("local_rank 3 was killed", 3, "local"),
    ("worker 3 died", 3, "index"),
])
def test_the_shapes_a_rank_is_named_in(line: str, rank: int, trust: str) -> None:
    found = rank_shape(line)
    assert found is not None
    assert (found[0], found[1].trust) == (rank, trust)


@pytest.mark.parametrize("line", [
    "cuda:3 failed: device-side assert",                 # a device
    "localhost:29500 failed to connect",                  # a port
    "gpu:1 error: ECC",
    "Process-1 raised an exception",                      # Python's 1-based name of a child process
    "ForkPoolWorker-3 failed",
    "process 48213 failed",                               # a pid
    "proxy.cc:1587 NCCL WARN accept failed",              # a source file's line
    "--local_rank=3 failed",                              # an argv's flag
    "GPU 3 ran out of memory",
    "Unhandled exception <class 'RuntimeError'> in thread <_MainThread(MainThread)>, proc 101.",   # a pid
])
def test_numbers_that_name_no_rank(line: str) -> None:
    assert rank_shape(line) is None


@pytest.mark.parametrize(("line", "rank"), [
    ("RankID 3 failed: HCCL error", 3), ("PE 3: killed by signal 9", 3),
    ("rank-3: fatal error: communicator aborted", 3),
    ("[node1:mpi_rank_3][handler] Caught error: Segmentation fault (signal 11)", 3),
])
def test_a_failure_in_a_new_shape_names_its_rank(line: str, rank: int, tmp_path: Path) -> None:
    verdict = report(_WORK + line + "\n", tmp_path)
    assert verdict["culprit_ranks"] == [rank], verdict


# --- 3. a logger's head on every line ---------------------------------------------------------------------------------

@pytest.mark.parametrize("head", [
    "2026-11-27 10:00:00,123 - ERROR - worker 3 - ", "worker 3 | ", "[trainer] rank 3: ", "rank 3 >> ",
])
def test_an_exception_under_a_head_that_names_the_rank_is_that_ranks(head: str, tmp_path: Path) -> None:
    text = "".join(head + line + "\n" for line in (
        "Traceback (most recent call last):", '  File "train.py", line 3, in <module>',
        "    main()", "ValueError: the batch has the wrong shape"))
    verdict = report(_WORK + text, tmp_path)
    assert verdict["culprit_ranks"] == [3], verdict
    assert "ValueError" in verdict["summary"]


@pytest.mark.parametrize("line", [
    "RuntimeError: DDP expects same model across all ranks, but Rank 2 has 128 params, while rank 1 has 0 params.",
    "ValueError: shard 3 of rank 5 is empty",
])
def test_a_rank_an_exceptions_message_names_did_not_raise_it(line: str) -> None:
    assert named_failure(line) is None


def test_a_rank_before_the_exceptions_name_raised_it() -> None:
    found = named_failure("worker 3 - ValueError: the batch has the wrong shape")
    assert found is not None and found[0] == 3



@pytest.mark.parametrize(("line", "kind", "signal"), [
    ("the solver exited with code 1", "failure_unlocated", None),
    ("ERROR: Job failed: exit code 2", "failure_unlocated", None),
    ("Process finished with exit code 139", "crash", "SIGSEGV"),
    ("command returned exit code -9", "crash", "SIGKILL"),
])
def test_an_exit_with_a_code_in_unread_words(line: str, kind: str, signal: str | None, tmp_path: Path) -> None:
    verdict = report(_WORK + line + "\n", tmp_path)
    assert verdict["kind"] == kind
    assert not verdict["culprit_ranks"]
    assert signal is None or signal in verdict["summary"]


@pytest.mark.parametrize("line", ["Process finished with exit code 0", "the launcher exited with status 143"])
def test_a_clean_exit_or_a_stop_is_no_unread_failure(line: str) -> None:
    assert unread_failure(line) is None
