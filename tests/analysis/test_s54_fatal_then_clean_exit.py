"""A program's fatal line followed by its clean end (fix54a item 3): fatal_ending's teardown took any line holding
"exit code" or starting "Job " as the process's teardown, so ``FATAL ERROR: ...`` followed by ``Process finished with
exit code 0`` or ``Job 4242 completed successfully`` (a step retried after it) was the run's EXCEPTION. A record that the process or
its step ended well (an exit code or status 0; completed, finished, succeeded with no word of a failure) says the fatal
line was not the end; only teardown that says it ended badly, or neutral teardown, counts."""

from __future__ import annotations

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report
from triage.parsing.fatal_ending import endings

_FATAL = "FATAL ERROR: could not open restart file step1.chk"


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


@pytest.mark.parametrize("after", [
    "Process finished with exit code 0",
    "Exit code: 0",
    "step 1 exited with status 0",
    "Job 4242 completed successfully",
    "Successfully completed.",
])
def test_a_clean_end_after_it_says_it_was_not_the_end(after: str) -> None:
    assert endings(f"step 1 running\n{_FATAL}\n{after}\n") == []


@pytest.mark.parametrize("after", [
    "srun: error: n25: task 0: Exited with exit code 1",
    "Job 4242 completed with errors",
    "Job 4242 completed",          # (a scheduler's neutral record: fix55c item 3, test_s55_fatal_then_job_completed)
    "Exit code: 1",
    "application called MPI_Abort(MPI_COMM_WORLD, 1) - process 0",
])
def test_teardown_that_says_it_ended_badly_still_counts(after: str) -> None:
    assert len(endings(f"step 1 running\n{_FATAL}\n{after}\n")) == 1


def test_an_exit_zero_after_it_is_no_failure_of_the_run() -> None:
    result = report("step 1 running", _FATAL, "Process finished with exit code 0")
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary


def test_namds_fatal_error_before_its_teardown_still_ends_it() -> None:
    # NAMD's NAMD_die: "FATAL ERROR: ..." then Charm++'s teardown and the launcher's records (as session 53's reader)
    text = ("Info: Startup phase 7 took 0.21 s\nFATAL ERROR: Unable to open binary file output/restart.coor\n"
            "[Partition 0][Node 0] End of program\n")
    assert len(endings(text)) == 1
