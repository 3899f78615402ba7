"""Session 52 (rev47 item 8, 5 again): LSF's terminations from outside the job beyond a bkill and a preemption, the
queue's run window, a deadline, a load threshold, a signal from outside LSF, bkill -b, a checkpoint's kill, a hung
job removed (`TERM_WINDOW: job killed after queue run window closed.`, ...), are stops from outside (each was the
job's "exited with code 143"); its CPU limit (`TERM_CPULIMIT`) is a time limit with a time limit's advice (it got
Slurm's "find who cancelled it: sacct"); and a stop's next step is chosen from what its record said, not from the
advice already in its summary (a bkill's got the preemption's "sbatch --requeue" from "a preemption" in its own
advice)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log

# the report LSF writes into the job's output (BEFH/snakemake-executor-plugin-lsf#4's), its TERM_ line and exit put
# in by each test
REPORT = (REPO / "tests/realworld/cases/BEFH__snakemake-executor-plugin-lsf__4/log.txt").read_text(encoding="utf-8")
STEPS = "".join(f"epoch 1 step {n} loss 0.5\n" for n in (100, 200))


def _report(term: str, code: int) -> str:
    lines = REPORT.split("\n")
    assert lines[0].startswith("TERM_MEMLIMIT") and lines[1].startswith("Exited with exit code")
    return STEPS + "\n".join([term, f"Exited with exit code {code}.", *lines[2:]])


@pytest.mark.parametrize(("term", "step"), [
    ("TERM_WINDOW: job killed after queue run window closed.", "bhist -l JOBID"),
    ("TERM_DEADLINE: job killed after deadline expires.", "bsub -t"),
    ("TERM_LOAD: job killed after load exceeds threshold.", "bhist -l JOBID"),
    ("TERM_EXTERNAL_SIGNAL: job killed by a signal external to LSF.", "bhist -l JOBID"),
    ("TERM_BUCKET_KILL: job killed with bkill -b.", "bhist -l JOBID"),
    ("TERM_CHKPNT: job killed after checkpointing.", "bhist -l JOBID"),
    ("TERM_REMOVE_HUNG_JOB: job removed from LSF.", "bhist -l JOBID"),
    ("TERM_OWNER: job killed by owner.", "bhist -l JOBID"),
])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_lsf_ends_from_outside_are_stops(term: str, step: str, eol: str, tmp_path: Path) -> None:
    code, out = report_log(_report(term, 143).replace("\n", eol), tmp_path)
    assert code == 1 and out["verdict"]["kind"] == "stopped", out["verdict"]
    assert term.split(":")[0] in out["verdict"]["summary"] and "code 143" not in out["verdict"]["summary"]
    assert step in out["next_steps"][0] and "sbatch --requeue" not in out["next_steps"][0], out["next_steps"]


def test_lsf_cpu_limit_is_a_time_limit(tmp_path: Path) -> None:
    code, out = report_log(_report("TERM_CPULIMIT: job killed after reaching LSF CPU usage limit.", 152), tmp_path)
    assert code == 1 and out["verdict"]["kind"] == "stopped"
    assert "CPU time limit" in out["verdict"]["summary"]
    assert "-c" in out["next_steps"][0] and "sacct" not in out["next_steps"][0], out["next_steps"]


def test_an_lsf_limit_kill_is_still_the_jobs_kill(tmp_path: Path) -> None:
    # (the memory limit stays a crash, its signal the one the report gives: session 50)
    code, out = report_log(_report("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.", 137), tmp_path)
    assert code == 1 and out["verdict"]["kind"] == "crash" and "SIGKILL" in out["verdict"]["summary"]
