"""Round 48's classes held on hand-written variants (other programs, ranks, hosts, tasks; not the pasted logs of
GeoscienceAustralia/anuga_core#250, deepmodeling/dpgen#1308 or jiabowang/GAPIT#207), each with negatives:

- a module's own exception type named plainly ``Exception`` or ``Error`` (``mpi4py.MPI.Exception: ...``) is an
  exception line; a bare ``Error: ...`` stays a command-line tool's word;
- Hydra's box retyped as prose, its ``=`` frame left out and a comma after each line, still names its rank and host;
- srun's wait timer (``First task exited Ns ago`` then ``task N: exited abnormally``, under srun's name or Tianhe's
  ``yhrun``) names the tasks that ended first: their failure, not a step cancelled from outside."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict
from triage.parsing.crashlog import parse_crash_line
from triage.parsing.torchelastic import parse_launcher_failures


@pytest.mark.parametrize("line", [
    "mpi4py.MPI.Exception: MPI_ERR_TRUNCATE: message truncated",
    "mpi4py.MPI.Exception: Other MPI error, error stack:",
    "h5py._errors.Error: unable to open file",
])
def test_a_module_qualified_plain_exception_type_is_an_exception_line(line: str) -> None:
    found = parse_crash_line(line)
    assert found is not None and found.kind.value == "exception", found
    assert found.exc_type == line.split(":")[0]


@pytest.mark.parametrize("line", ["Error: no such file or directory", "Exception: handled, retrying",
                                  "os.path.join: see the docs", "numpy.ndarray: shape (3, 4)"])
def test_an_unqualified_or_non_exception_word_is_no_exception_line(line: str) -> None:
    assert parse_crash_line(line) is None


def test_an_mpi4py_traceback_followed_by_mpichs_error_stack_is_an_exception_of_no_known_rank(tmp_path: Path) -> None:
    text = ("Traceback (most recent call last):\n  File \"solve.py\", line 41, in <module>\n    comm.Recv(buf, "
            "source=3)\n  File \"mpi4py/MPI/Comm.pyx\", line 338, in mpi4py.MPI.Comm.Recv\n"
            "mpi4py.MPI.Exception: Other MPI error, error stack:\nPMPI_Recv(171)..........: MPI_Recv(buf=0x7f3c, "
            "count=40, MPI_DOUBLE, src=3, tag=MPI_ANY_TAG, MPI_COMM_WORLD) failed\nMPID_nem_tcp_connpoll(1845): "
            "Communication error with rank 3: Connection reset by peer\n")
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] in ("exception", "network_error"), verdict
    assert verdict["culprit_ranks"] == [], verdict


@pytest.mark.parametrize(("rank", "host", "signal_line"), [
    (3, "cn-0412", "KILLED BY SIGNAL: 9 (Killed)."),
    (12, "node17.cluster.local", "KILLED BY SIGNAL: 11 (Segmentation fault)"),
])
def test_hydras_box_retyped_without_its_frame_names_its_rank(rank: int, host: str, signal_line: str,
                                                             tmp_path: Path) -> None:
    text = (f"the run stops at step 3 with:\n  BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES,\n"
            f"  RANK {rank} PID 48213 RUNNING AT {host},\n  {signal_line}\n")
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "crash", verdict
    assert verdict["culprit_ranks"] == [rank], verdict


@pytest.mark.parametrize(("launcher", "tasks", "expected"), [
    ("srun", "task 2", [2]), ("srun", "tasks 4-5", [4, 5]), ("yhrun", "task 0", [0]),
])
def test_sruns_wait_timer_names_the_tasks_that_exited_abnormally(launcher: str, tasks: str, expected: list[int],
                                                                 tmp_path: Path) -> None:
    text = (f"epoch 3 step 900\n{launcher}: First task exited 45s ago\n{launcher}: StepId=77120.0 task 1: running\n"
            f"{launcher}: StepId=77120.0 {tasks}: exited abnormally\n{launcher}: StepId=77120.0 task 3: exited\n"
            f"{launcher}: Terminating StepId=77120.0\n"
            "slurmstepd: error: *** STEP 77120.0 ON cn0031 CANCELLED AT 2026-02-11T08:15:00 ***\n"
            f"{launcher}: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
            f"{launcher}: error: cn0031: task 1: Killed\n")
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] != "stopped", verdict
    assert verdict["culprit_ranks"] == expected, verdict


def test_a_clean_exit_in_the_wait_timer_is_no_failure() -> None:
    text = ("srun: First task exited 60s ago\nsrun: task 0: running\nsrun: tasks 1-3: exited\n"
            "srun: Terminating job step 5512.0\n")
    assert parse_launcher_failures(text) == ()


@pytest.mark.parametrize("text", [
    "I read somewhere that srun: task 1: exited abnormally means a crash, is that so?\n",
    # (the task lines without the timer's own head: not the wait timer's record)
    "srun: StepId=1.0 task 1: exited abnormally\n",
])
def test_the_wait_timers_words_outside_its_record_are_not_read(text: str) -> None:
    assert parse_launcher_failures(text) == ()
