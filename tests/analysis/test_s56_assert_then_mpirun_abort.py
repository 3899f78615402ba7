"""Session 56 (rev55 F9): an assert line, then Open MPI's signal handler's record of the abort ("[host:pid] Signal:
Aborted (6)") and mpirun's "process rank N with PID P on node H exited on signal 6 (Aborted)": the verdict quoted
mpirun's record alone, the cause (the assert) left out, where fix55c quotes it before the shell's "Aborted (core
dumped)". Now the assert is the rank's failure, the handler's and mpirun's records how it ended: the handler's pid and
host are the record's (or, the head read off, the text holds one handler's record and one launcher's record of signal
6) (triage.parsing.fatal_ending._handler_tied; triage.load.logs.records._banner_in_record: a launcher's record of
the banner's own signal after it is the same failure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.fatal_ending import endings

BOX = ("--------------------------------------------------------------------------\n"
       "Primary job  terminated normally, but 1 process returned\n"
       "a non-zero exit code. Per user-direction, the job has been aborted.\n"
       "--------------------------------------------------------------------------\n")


def _handler(host: str, pid: int) -> str:
    return (f"[{host}:{pid:05d}] *** Process received signal ***\n[{host}:{pid:05d}] Signal: Aborted (6)\n"
            f"[{host}:{pid:05d}] Signal code:  (-6)\n[{host}:{pid:05d}] *** End of error message ***\n")


@pytest.mark.parametrize(("assertion", "said"), [
    ("mesh_gen: /home/u/mesh/src/octree.cpp:577: void Octree::split(int): Assertion `depth <= max_depth' failed.\n",
     "assertion `depth <= max_depth' failed"),
    ("Assertion failed: nx > 0 (src/fft.c: plan_create: 91)\n", "assertion `nx > 0' failed"),
])
@pytest.mark.parametrize("launcher", ["mpirun", "prterun"])
def test_the_assert_is_the_failure_the_records_how_it_ended(assertion: str, said: str, launcher: str,
                                                             tmp_path: Path) -> None:
    text = ("iter 20 dt 1.0e-4\n" + assertion + _handler("cn017", 28813) + BOX
            + f"{launcher} noticed that process rank 3 with PID 28813 on node cn017 exited on signal 6 (Aborted).\n"
            + "--------------------------------------------------------------------------\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [3], verdict
    assert said in verdict["summary"] and "exited on signal 6" in verdict["summary"]


def test_two_processes_aborting_are_not_tied(tmp_path: Path) -> None:
    # (two handlers' records of signal 6, their heads read off: which process the assert was, the input does not tie)
    text = ("prog: a.c:10: main: Assertion `x' failed.\n" + _handler("cn017", 111) + _handler("cn018", 28813) + BOX
            + "mpirun noticed that process rank 3 with PID 28813 on node cn018 exited on signal 6 (Aborted).\n")
    _code, got = report_log(text, tmp_path)
    assert "assertion" not in got["verdict"]["summary"]


def test_the_rev55_variant(tmp_path: Path) -> None:
    text = ("step 100 residual 1.2e-3\nsolver: src/grid.c:142: refine_cell: Assertion `level < MAX_LEVEL' failed.\n"
            + _handler("n1", 4412) + BOX
            + "mpirun noticed that process rank 1 with PID 4412 on node n1 exited on signal 6 (Aborted).\n")
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["culprit_ranks"] == [1] and "refine_cell" in got["verdict"]["summary"]


@pytest.mark.parametrize(("pid", "tied"), [(28813, True), (111, False)])
def test_with_the_handlers_head_its_pid_ties(pid: int, tied: bool) -> None:
    text = ("prog: a.c:10: main: Assertion `x' failed.\n" + _handler("cn017", pid) + BOX
            + "mpirun noticed that process rank 3 with PID 28813 on node cn017 exited on signal 6 (Aborted).\n")
    found = endings(text)
    assert bool(found) is tied
    if tied:
        assert found[0][:3] == (3, "SIGABRT", "cn017")


def test_sruns_record_of_the_abort_ties_too(tmp_path: Path) -> None:
    # (Open MPI's library under srun: the handler's record, then srun's "task N: Aborted" on the handler's node)
    text = ("iter 20 dt 1.0e-4\nmesh_gen: src/octree.cpp:577: void Octree::split(int): Assertion `depth <= max_depth' "
            "failed.\n" + _handler("nid00412", 9120) + "srun: error: nid00412: task 5: Aborted (core dumped)\n"
            "srun: Terminating StepId=5512.0\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["culprit_ranks"] == [5] and "assertion `depth <= max_depth' failed" in verdict["summary"], verdict
    assert "srun's record: task 5" in verdict["summary"]


def test_sruns_records_of_two_aborts_are_not_tied(tmp_path: Path) -> None:
    text = ("prog: a.c:10: main: Assertion `x' failed.\n" + _handler("nid00412", 9120)
            + "srun: error: nid00412: task 5: Aborted (core dumped)\nsrun: error: nid00413: task 9: Aborted\n")
    _code, got = report_log(text, tmp_path)
    assert "srun's record" not in got["verdict"]["summary"]
