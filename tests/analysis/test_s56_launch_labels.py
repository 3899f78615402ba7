"""Session 56 (fix56c item 6): a program the launcher could not start is one class, labelled one way in the corpus and
read one way: Hydra's proxy's `execvp error on file ./spk_mpi (No such file or directory)` (MPICH, Intel MPI) and Open
MPI's box `mpirun was unable to find the specified executable file, and therefore did not launch the job` are a
job-wide launch error of no rank, an exception (triage.parsing.launch_failure: "the program never ran: could not
start ..."). Hydra's three cases were labelled kind unknown (intel/caffe#274, idaholab/SPPARKS#9,
NLKNguyen/alpine-mpich#8), Open MPI's an exception of no rank (nufeb/NUFEB#16, henriquemiranda/yambopy#17): relabelled
as the latter."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines
from tests.realworld.scoring import load_cases

_WORDS = ("execvp error on file", "unable to find the specified executable", "unable to launch the specified application")


def test_every_case_of_the_class_is_labelled_one_way() -> None:
    cases = [c for c in load_cases() if any(w in c.log.read_text(encoding="utf-8", errors="replace") for w in _WORDS)]
    assert len(cases) >= 5
    for case in cases:
        assert case.kind == "exception" and case.culprits is None, case.name


@pytest.mark.parametrize("line", [
    ("[proxy:0:1@gpu-07] HYD_spawn (../../../../src/pm/hydra/lib/utils/launch.c:129): execvp error on file ./solver "
    "(No such file or directory)"),
    ("[proxy:0:0@gpu-07] HYDU_create_process (utils/launch/launch.c:75): execvp error on file ./solver (Permission "
    "denied)"),
])
def test_hydras_execvp_error_is_a_launch_error_of_no_rank(line: str) -> None:
    report = report_lines("$ mpiexec -n 8 ./solver", line, line)
    verdict = report.verdict
    assert verdict.kind.value == "exception" and verdict.culprit_ranks == (), verdict.summary
    assert "./solver" in verdict.summary and "gpu-07" in verdict.summary, verdict.summary
