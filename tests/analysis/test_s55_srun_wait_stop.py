"""srun's wait timer's plain ``exited`` tasks beside the program's abort routine (fix55d item 1,
NCAR/wrf_hydro_nwm_public#753).

srun's timer (``srun: First task exited Ns ago``, then src/srun/task_state.c's per-state lines ``... tasks 25,41:
exited``, ``... running``) lists the tasks that ended with code 0 as ``exited``. Beside a line that is only the name
of the program's abort routine (Intel Fortran's ``STOP 'wrf_abort'`` prints ``wrf_abort``, gfortran's ``STOP
wrf_abort``) before the timer, those tasks took the program's error path and stopped without aborting the job: the
first failure, and the step's cancellation that follows is srun's own doing, never a stop from outside. Without such
a line a clean exit stays no failure (the first tasks may have finished their share while another hung)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict
from triage.parsing.torchelastic import parse_launcher_failures

CASE = REPO / "tests/realworld/cases/NCAR__wrf_hydro_nwm_public__753/log.txt"


def _timer(launcher: str, tasks: str, routine: str | None, state: str = "exited") -> str:
    return ("step 4410 dt=30.0\n"
            + (f"{routine}\n" if routine else "")
            + f"{launcher}: First task exited 120s ago\n"
            + f"{launcher}: StepId=9001.0 tasks 0-2,4-7: running\n"
            + f"{launcher}: StepId=9001.0 {tasks}: {state}\n"
            + f"{launcher}: launch/slurm: _step_signal: Terminating StepId=9001.0\n"
            + "slurmstepd: error: *** STEP 9001.0 ON node17 CANCELLED AT 2026-03-02T11:20:41 ***\n"
            + f"{launcher}: error: node17: tasks 0-2,4-7: Killed\n")


@pytest.mark.parametrize(("launcher", "routine"), [
    ("srun", "model_abort"), ("srun", "STOP mpas_dmpar_abort"), ("yhrun", "SHR_SYS_ABORT"), ("srun", "  wrf_abort  "),
])
def test_the_tasks_that_exited_beside_an_abort_routine_are_the_first_failure(launcher: str, routine: str,
                                                                             tmp_path: Path) -> None:
    verdict = failure_verdict(_timer(launcher, "task 3", routine), tmp_path)
    assert verdict["kind"] != "stopped", verdict
    assert verdict["culprit_ranks"] == [3], verdict
    assert routine.split()[-1] in verdict["summary"], verdict


def test_tasks_that_exited_abnormally_come_before_those_that_exited_cleanly() -> None:
    text = _timer("srun", "task 3", "model_abort").replace(
        "srun: StepId=9001.0 task 3: exited\n", "srun: StepId=9001.0 task 5: exited abnormally\n"
        "srun: StepId=9001.0 task 3: exited\n")
    assert [f.rank for f in parse_launcher_failures(text)] == [5]


@pytest.mark.parametrize("text", [
    _timer("srun", "task 3", None),                                   # no abort routine: a clean end, no failure
    # the routine's name inside a sentence or a frame, or after the timer: not the program's own stop before it
    _timer("srun", "task 3", "the code calls wrf_abort when the energy balance fails"),
    _timer("srun", "task 3", "#3 0x00000000004a1b2c in wrf_abort ()"),
    _timer("srun", "task 3", None).replace("slurmstepd:", "wrf_abort\nslurmstepd:"),
])
def test_a_clean_exit_without_the_programs_abort_line_is_no_failure(text: str) -> None:
    assert parse_launcher_failures(text) == ()


def test_the_timers_cancellation_is_no_stop_from_outside(tmp_path: Path) -> None:
    verdict = failure_verdict(_timer("srun", "task 3", None), tmp_path)
    assert verdict["kind"] != "stopped", verdict


def test_wrf_hydros_tasks_25_and_41() -> None:
    failures = parse_launcher_failures(CASE.read_text(encoding="utf-8"))
    assert [f.rank for f in failures] == [25, 41]
    assert all(f.root_cause and "wrf_abort" in (f.note or "") for f in failures)
