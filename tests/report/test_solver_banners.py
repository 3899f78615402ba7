"""Simulation frameworks' own fatal-error banners (triage.parsing.solver_errors) and Open MPI's error handler record
with its asterisks thinned by Markdown, held as classes on hand-written variants (other solvers, messages, ranks,
hosts; not the pasted logs of round 47): OpenFOAM's ``--> FOAM FATAL ERROR:`` / ``FOAM FATAL IO ERROR`` is the
process's own exception, of rank N under a ``[N] `` prefix and of no known rank without it; WRF's ``FATAL CALLED``
is the exception of the task whose RSL header (``taskid: N hostname: H``) comes before it. Negatives: the same words
quoted inside a sentence, and a run that went on after the banner."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log
from triage.parsing.mpi_errors import parse_mpi_errors
from triage.parsing.solver_errors import parse_solver_errors


def _foam(message: str, io: bool = False, exit_word: str = "FOAM exiting") -> str:
    return ("Create time\n\nCreate mesh for time = 0\n\n\n--> FOAM FATAL " + ("IO " if io else "") + "ERROR:\n"
            f"{message}\n\n    From function Foam::fvMesh::lookup(...)\n    in file fvMesh.C at line 412.\n\n"
            f"{exit_word}\n")


@pytest.mark.parametrize(("message", "io"), [
    ("cannot find file \"0/U\"", False),
    ("keyword nCorrectors is undefined in dictionary \"system/fvSolution/PIMPLE\"", True),
    ("Unknown patchField type zeroGradientt for patch inlet of field T", False),
])
def test_an_openfoam_banner_of_one_process_is_its_exception(message: str, io: bool, tmp_path: Path) -> None:
    verdict = failure_verdict("Time = 0.001\nCourant Number mean: 0.1 max: 0.4\n" + _foam(message, io), tmp_path)
    assert verdict["kind"] == "exception", verdict
    assert verdict["culprit_ranks"] == [], verdict
    assert "FOAM FATAL" in verdict["summary"], verdict


@pytest.mark.parametrize("rank", [1, 5, 13])
def test_an_openfoam_banner_under_a_rank_prefix_is_that_ranks(rank: int) -> None:
    text = "".join(f"[{rank}] {line}\n" for line in _foam("Maximum number of iterations exceeded").splitlines())
    deaths = parse_solver_errors(text + "FOAM parallel run exiting\n")
    assert [(d.rank, d.raised) for d in deaths] == [(rank, True)]
    assert "Maximum number of iterations exceeded" in deaths[0].text


@pytest.mark.parametrize(("task", "host"), [(7, "cn0412"), (33, "node-a17.hpc.example.org")])
def test_wrf_fatal_called_is_the_exception_of_the_task_its_rsl_file_names(task: int, host: str,
                                                                           tmp_path: Path) -> None:
    text = (f" taskid: {task} hostname: {host}\n module_io_quilt_old.F        2931 T\n"
            " Ntasks in X            4 , ntasks in Y            9\n"
            "-------------- FATAL CALLED ---------------\n"
            "FATAL CALLED FROM FILE:  <stdin>  LINE:    1218\n"
            " ERROR: namelist physics suite not recognised\n"
            "-------------------------------------------\n")
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "exception", verdict
    assert verdict["culprit_ranks"] == [task], verdict


def test_wrf_fatal_called_without_an_rsl_header_names_no_task() -> None:
    deaths = parse_solver_errors("d01 2019-04-21_00:00:00 Input data is acceptable\n"
                                 "-------------- FATAL CALLED ---------------\n"
                                 "FATAL CALLED FROM FILE:  <stdin>  LINE:     987\n")
    assert [(d.rank, d.raised) for d in deaths] == [(None, True)]
    assert "FATAL CALLED FROM FILE" in deaths[0].text


@pytest.mark.parametrize("sentence", [
    "I keep getting --> FOAM FATAL ERROR: when I decompose, any idea?",
    "The log says -------------- FATAL CALLED --------------- but nothing else.",
])
def test_the_banners_quoted_in_a_sentence_are_not_read(sentence: str) -> None:
    assert parse_solver_errors(sentence + "\n") == ()


def test_a_banner_the_run_went_on_after_is_not_the_jobs_failure() -> None:
    # (a driver script that caught the solver's failure, fell back to another case and went on: its own steps after)
    text = _foam("cannot find file \"0/p\"") + "falling back to the coarse mesh\n" + "".join(
        f"Iteration {step}: residual 0.0{step % 9 + 1}\n" for step in range(1, 30))
    assert parse_solver_errors(text) == ()


@pytest.mark.parametrize(("stars", "rank", "call"), [("**", 0, "MPI_Win_fence"), ("*", 3, "MPI_Allreduce"),
                                                      ("**", 12, "MPI_Bcast")])
def test_open_mpis_error_handler_record_with_fewer_asterisks_names_its_rank(stars: str, rank: int, call: str,
                                                                              tmp_path: Path) -> None:
    head = "[hpc-n03:55120] "
    text = (f"{head}{stars} An error occurred in {call}\n{head}* reported by process [2718236673,{rank}]\n"
            f"{head}* on communicator MPI_COMM_WORLD\n{head}{stars} MPI_ERR_TRUNCATE: message truncated\n"
            f"{head}* MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n"
            f"{head}***    and potentially your MPI job)\n")
    assert [e.rank for e in parse_mpi_errors(text)] == [rank]
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "exception", verdict
    assert verdict["culprit_ranks"] == [rank], verdict


def test_an_asterisk_list_item_about_mpi_is_no_error_record(tmp_path: Path) -> None:
    text = "Release notes:\n* An error occurred in MPI_Init handling is now reported more clearly\n* Faster builds\n"
    code, out = report_log(text, tmp_path)
    assert out.get("verdict", {}).get("culprit_ranks") in (None, []), out
    assert code != 70, out


def _garbled(launch: str, vpid: int = 0xFFFF00000000) -> str:
    head = "[c7f3a9e2b1d0:00917] "
    return (f"{launch}\n{head}*** An error occurred in MPI_Comm_split\n{head}*** reported by process [1190264833,{vpid}]\n"
            f"{head}*** on communicator MPI_COMM_WORLD\n{head}*** MPI_ERR_ARG: invalid argument of some other kind\n"
            f"{head}*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n")


@pytest.mark.parametrize("launch", ["$ mpiexec -np 1 python solve.py", "user@box:~/run$ mpirun --np 1 ./model",
                                    "mpirun.openmpi -n 1 ./a.out --grid 64"])
def test_a_garbled_vpid_under_a_one_process_launch_is_rank_0(launch: str) -> None:
    errors = parse_mpi_errors(_garbled(launch))
    assert [e.rank for e in errors] == [0]
    assert "no rank can be" in errors[0].text


@pytest.mark.parametrize("launch", ["$ mpirun -n 4 ./model", "$ mpiexec -np 16 ./model", "(no command in the paste)"])
def test_a_garbled_vpid_is_no_rank_otherwise(launch: str) -> None:
    assert [e.rank for e in parse_mpi_errors(_garbled(launch))] == [None]


def test_a_plausible_vpid_is_its_rank_whatever_the_launch() -> None:
    assert [e.rank for e in parse_mpi_errors(_garbled("$ mpirun -n 1 ./model", vpid=5))] == [5]
