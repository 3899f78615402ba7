"""Session 54: Torque's server mail of a job its MOM aborted over a limit ("Aborted by PBS Server", "Job exceeded a
memory resource limit (vmem, pvmem, etc.). Job was aborted", "Exit_status=-10", the job's resources_used.* lines) and
PBS's negative exit statuses of a kill at a limit (PBS Pro's JOB_EXEC_KILL_* -24..-29 as "Exit_status", Torque's
JOB_EXEC_OVERLIMIT_* -10..-12 as its qstat's "exit_status") were failures of unknown place or refused; and srun's
"srun: error: host: task 0: Killed" after slurmstepd's memory kill was dropped (after the step's cancellation), leaving
the kill of no rank."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log

CASES = Path(__file__).resolve().parent.parent / "realworld" / "cases"

MAIL = ("PBS Job Id: 4242.head01\nJob Name:   train_big\nExec host:  n031/0-15\nAborted by PBS Server\n{words}\n"
        "See Administrator for help\nExit_status={code}\nresources_used.cput=01:02:03\nresources_used.vmem=98000000kb\n"
        "resources_used.walltime=00:20:00\nresources_used.mem=12000000kb\n")


@pytest.mark.parametrize("quote", ["", "> "])
def test_torques_memory_mail_is_the_jobs_memory_kill(quote: str, tmp_path: Path) -> None:
    text = MAIL.format(words="Job exceeded a memory resource limit (vmem, pvmem, etc.). Job was aborted", code=-10)
    code, got = report_log("".join(quote + line + "\n" for line in text.splitlines()), tmp_path)
    assert code not in (0, 2, 70)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == []
    assert verdict["summary"].startswith("CRASH") and "out of memory: PBS killed the job" in verdict["summary"]
    assert "resources_used.vmem=98000000kb" in verdict["summary"]
    steps = " ".join(got["next_steps"])
    assert "PBS: -l mem" in steps and "dmesg" not in steps


def test_torques_cpu_time_mail_is_a_kill_at_cput(tmp_path: Path) -> None:
    got = failure_verdict(MAIL.format(words="Job exceeded its cpu time limit. Job was aborted", code=-12), tmp_path)
    assert got["kind"] == "crash" and "requested cput" in got["summary"]


def test_older_torques_mail_names_no_limit(tmp_path: Path) -> None:
    text = MAIL.format(words="Job exceeded some resource limit (walltime, mem, etc.). Job was aborted", code=-10)
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "crash" and "out of memory" not in got["verdict"]["summary"]
    assert any("does not say which" in step for step in got["next_steps"])


def test_the_walltime_mail_stays_a_stop(tmp_path: Path) -> None:
    got = failure_verdict(MAIL.format(words="Job exceeded its walltime limit. Job was aborted", code=-11), tmp_path)
    assert got["kind"] == "stopped"


RECORD = "Job Id: 4242.pbs01\n    Job_Name = train\n    job_state = F\n    resources_used.walltime = 02:00:04\n"


@pytest.mark.parametrize(("attr", "code", "kind", "words"), [
    ("Exit_status", -27, "crash", "out of memory: PBS killed the job for exceeding its requested mem"),
    ("Exit_status", -26, "crash", "requested vmem"),
    ("Exit_status", -28, "crash", "requested cput"),
    ("Exit_status", -29, "stopped", "walltime limit"),
    ("exit_status", -10, "crash", "PBS killed the job at one of the resource limits"),  # (Torque 4's any limit too)
    ("exit_status", -11, "stopped", "walltime limit"),
])
def test_pbs_kill_statuses_in_the_job_record(attr: str, code: int, kind: str, words: str, tmp_path: Path) -> None:
    got = failure_verdict(RECORD + f"    {attr} = {code}\n", tmp_path)
    assert got["kind"] == kind and words in got["summary"]


def test_pbs_pros_minus_11_is_no_walltime(tmp_path: Path) -> None:
    # (PBS Pro's -11 is JOB_EXEC_RERUN, Torque's JOB_EXEC_OVERLIMIT_WT: only Torque's record, "exit_status", says so)
    _code, got = report_log(RECORD + "    Exit_status = -11\n", tmp_path)
    assert got.get("verdict", {}).get("kind") != "stopped"


def test_real_sarek_541(tmp_path: Path) -> None:
    got = failure_verdict((CASES / "nf-core__sarek__541" / "log.txt").read_text(), tmp_path)
    assert got["kind"] == "crash" and "out of memory: PBS killed the job" in got["summary"]


KILL = ("step 40 loss 1.2\nslurmstepd: error: Job 777 exceeded memory limit (9000000 > 8000000), being killed\n"
        "slurmstepd: error: *** JOB 777 ON n12 CANCELLED AT 2026-01-02T03:04:05 ***\n")


def test_the_task_srun_names_after_the_memory_kill_is_its_rank(tmp_path: Path) -> None:
    got = failure_verdict(KILL + "srun: error: n12: task 3: Killed\n", tmp_path)
    assert got["kind"] == "crash" and got["culprit_ranks"] == [3] and "out of memory: Slurm killed" in got["summary"]
    assert "kernel OOM killer" not in got["summary"]


@pytest.mark.parametrize("srun", ["srun: error: n12: tasks 0-3: Killed\n", "srun: error: n13: task 3: Killed\n", "",
                                  "srun: error: n12: task 0: Killed\nsrun: error: n12: tasks 1-3: Killed\n"])
def test_no_rank_where_srun_names_several_tasks_or_another_node(srun: str, tmp_path: Path) -> None:
    got = failure_verdict(KILL + srun, tmp_path)
    assert got["kind"] == "crash" and got["culprit_ranks"] == [] and "out of memory: Slurm killed" in got["summary"]


def test_real_openbabel_2658(tmp_path: Path) -> None:
    got = failure_verdict((CASES / "openbabel__openbabel__2658" / "log.txt").read_text(), tmp_path)
    assert got["kind"] == "crash" and got["culprit_ranks"] == [0] and "falkor7" in got["summary"]
