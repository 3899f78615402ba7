"""Torque's record's "exit_status = -10" is no memory kill by itself (rev54 of session 54): newer Torque's
JOB_EXEC_OVERLIMIT_MEM (-11 walltime, -12 cput), but older Torque's (4.x, src/include/pbs_job.h) one JOB_EXEC_OVERLIMIT
(-10) for a kill at any of the job's limits. Was (75d80a6c): "out of memory: PBS killed the job for exceeding its
requested mem" whatever the record's walltimes said; now a walltime stop where resources_used.walltime reached
Resource_List.walltime, else a kill at one of its limits, which one its resources_used against its requests tell."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import failure_verdict

CASES = Path(__file__).resolve().parent.parent / "realworld" / "cases"


def _record(*lines: str) -> str:
    return "Job Id: 77.torque-head\n    Job_Name = train\n    job_state = C\n    exec_host = n01/0-3\n" + "".join(
        f"    {line}\n" for line in lines)


def test_torques_minus_10_at_the_walltime_is_a_stop(tmp_path: Path) -> None:
    got = failure_verdict(_record("exit_status = -10", "Resource_List.walltime = 01:00:00",
                                  "resources_used.mem = 2000000kb", "resources_used.walltime = 01:00:07"), tmp_path)
    assert got["kind"] == "stopped" and "walltime limit" in got["summary"]
    assert "out of memory" not in got["summary"]


def test_torques_minus_10_before_the_walltime_is_one_of_its_limits(tmp_path: Path) -> None:
    for walltimes in (("Resource_List.walltime = 04:00:00", "resources_used.walltime = 00:40:00"), ()):
        got = failure_verdict(_record("exit_status = -10", "resources_used.mem = 8000000kb", *walltimes), tmp_path)
        assert got["kind"] == "crash" and "one of the resource limits" in got["summary"]
        assert "out of memory" not in got["summary"] and "Torque 4" in got["summary"]


def test_newer_torques_own_numbers_and_pbs_pros_stay(tmp_path: Path) -> None:
    got = failure_verdict(_record("exit_status = -11", "resources_used.walltime = 02:00:04"), tmp_path)
    assert got["kind"] == "stopped"
    got = failure_verdict(_record("Exit_status = -27", "resources_used.walltime = 00:10:00"), tmp_path)
    assert got["kind"] == "crash" and "out of memory: PBS killed the job for exceeding its requested mem" in \
        got["summary"]


def test_real_sarek_541_mail_stays_a_memory_kill(tmp_path: Path) -> None:
    # (Torque's server's mail says which limit in its own sentence: "Job exceeded a memory resource limit")
    got = failure_verdict((CASES / "nf-core__sarek__541" / "log.txt").read_text(), tmp_path)
    assert got["kind"] == "crash" and "out of memory: PBS killed the job" in got["summary"]
