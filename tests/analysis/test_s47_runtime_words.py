"""Session 47: runtimes' and schedulers' words across versions.

seff's summary of an ended job (Slurm's contribs/seff: "Job ID: N", "Cluster: c", "User/Group: u/g", then
"State: OUT_OF_MEMORY (exit code 0)"): a time limit, preemption, node failure or cancellation is a stop from outside,
OUT_OF_MEMORY the job's kill for memory, FAILED its exit code; a running job's "State: RUNNING" (no exit code) is no
end, and a rank's own failure before the summary stays the failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict
from triage.parsing.frameworks import parse_framework_records

PROGRESS = "".join(f"{prefix}epoch 2 step {n} loss 0.7\n" for n in (100, 200) for prefix in ("0: ", "1: "))
SEFF = ("Job ID: {job}\n{array}Cluster: delta\nUser/Group: alice/alice\nState: {state} (exit code {code})\n"
        "Nodes: 2\nCores per node: 64\nCPU Utilized: 10:02:11\nCPU Efficiency: 24.33% of 1-18:00:00 core-walltime\n"
        "Job Wall-clock time: 16:00:21\nMemory Utilized: 62.41 GB\nMemory Efficiency: 99.86% of 62.50 GB "
        "(31.25 GB/node)\n")


@pytest.mark.parametrize(("job", "array"), [("551205", ""), ("551206", "Array Job ID: 551200_6\n")])
@pytest.mark.parametrize("indent", ["", "  "])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_seff_out_of_memory_is_a_kill_for_memory(job: str, array: str, indent: str, eol: str,
                                                 tmp_path: Path) -> None:
    summary = "".join(indent + line + "\n" for line in SEFF.format(job=job, array=array, state="OUT_OF_MEMORY",
                                                                    code=0).splitlines())
    text = (PROGRESS + f"$ seff {job}\n" + summary).replace("\n", eol)
    [record] = parse_framework_records(text)
    assert record.signal == "SIGKILL" and not record.outside and job in record.text
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "crash" and "out of memory" in got["summary"]


@pytest.mark.parametrize(("state", "words"), [("TIMEOUT", "time limit was reached"), ("PREEMPTED", "preempted"),
                                              ("NODE_FAIL", "a node failed"), ("CANCELLED", "cancelled")])
def test_seff_time_limit_preemption_node_failure_cancel_are_stops(state: str, words: str, tmp_path: Path) -> None:
    text = PROGRESS + SEFF.format(job="73001", array="", state=state, code=0)
    [record] = parse_framework_records(text)
    assert record.outside and record.signal == "SIGTERM"
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "stopped" and words in got["summary"]


def test_seff_failed_is_its_exit_code(tmp_path: Path) -> None:
    [record] = parse_framework_records(PROGRESS + SEFF.format(job="73002", array="", state="FAILED", code=2))
    assert record.exitcode == 2 and record.signal is None and not record.outside


@pytest.mark.parametrize("text", [
    PROGRESS + SEFF.format(job="73003", array="", state="COMPLETED", code=0),
    PROGRESS + SEFF.format(job="73004", array="", state="FAILED", code=0),   # (a signal seff does not print)
    PROGRESS + "Job ID: 73005\nCluster: delta\nUser/Group: alice/alice\nState: RUNNING\nNodes: 2\n",
    PROGRESS + "Our wiki says a seff line like State: TIMEOUT (exit code 0) means the job hit its --time.\n",
])
def test_seff_that_tells_no_failure_is_no_record(text: str) -> None:
    assert parse_framework_records(text) == ()


def test_a_ranks_own_failure_before_seff_stays_the_failure(tmp_path: Path) -> None:
    text = (PROGRESS + "1: Traceback (most recent call last):\n1:   File \"train.py\", line 9, in <module>\n"
            "1: ValueError: bad shard index 7\n" + SEFF.format(job="73006", array="", state="FAILED", code=1))
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [1] and "bad shard index" in got["summary"]


# Flux (flux-core src/shell/doom.c, src/common/libjob/waitstatus.c): the job shell ends the job after its first task
# ended ("task rank R on host H exited and exit-timeout=T has expired"; older shells "doom: rank R on host H ..."), and
# flux-job prints the job's end ("task(s) exited with exit code C", or strsignal's words of a task's signal)
DOOM = "{stamp}flux-shell[1]: FATAL: {who}rank {rank} on host {host} exited and exit-timeout=30s has expired\n"


@pytest.mark.parametrize(("who", "stamp"), [("python: task ", "0.879s: "), ("doom: ", "12.004s: "), ("task ", "")])
@pytest.mark.parametrize(("end", "kind", "how"), [("task(s) exited with exit code 3", "exception", "exit code 3"),
                                                  ("task(s) Segmentation fault", "crash", "SIGSEGV"),
                                                  # (a kill is the job shell's end of the other tasks after
                                                  # exit-timeout, not the first task's: how it ended is untold)
                                                  ("task(s) Killed", "crash", "how, flux-job's status does not"),
                                                  ("task(s) Terminated", "crash", "how, flux-job's status does not"),
                                                  # (older flux-core: the signal as its code, 128 + N; rev50 F4)
                                                  ("task(s) exited with exit code 143", "crash",
                                                   "how, flux-job's status does not"),
                                                  ("task(s) exited with exit code 137", "crash",
                                                   "how, flux-job's status does not")])
def test_flux_doom_names_the_first_task_and_its_host(who: str, stamp: str, end: str, kind: str, how: str,
                                                     tmp_path: Path) -> None:
    text = PROGRESS + DOOM.format(stamp=stamp, who=who, rank=5, host="tioga17") + f"flux-job: {end}\n"
    [record] = parse_framework_records(text)
    assert record.rank == 5 and record.host == "tioga17" and record.first
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == kind and got["culprit_ranks"] == [5] and "tioga17" in got["summary"] and \
        (how in got["summary"] or how.replace("exit code", "code") in got["summary"])
    if how.startswith("how,"):
        assert "exited with code" not in got["summary"] and "SIGKILL" not in got["summary"] and "SIGTERM" not in got["summary"] and "OOM" not in str(got), got


def test_the_reviewers_flux_end_by_code_143_is_the_shells_teardown(tmp_path: Path) -> None:
    # rev50's f1.txt: exit code 143 is 128 + SIGTERM, the job shell's end of the other tasks, not task 1's
    text = ("0.512s: flux-shell[0]: FATAL: doom: rank 1 on host tioga12 exited and exit-timeout=30s has expired\n"
            "flux-job: task(s) exited with exit code 143\n")
    got = failure_verdict(text, tmp_path)
    assert got["culprit_ranks"] == [1] and "143" not in got["summary"].split("(how", 1)[0], got
    assert "exited with code 143" not in got["summary"] and "not in this input" not in got["summary"], got


def test_flux_doom_after_the_tasks_own_error_keeps_its_words(tmp_path: Path) -> None:
    text = (PROGRESS + "1: Traceback (most recent call last):\n1: ValueError: bad shard 3\n"
            + DOOM.format(stamp="0.879s: ", who="python: task ", rank=1, host="node13")
            + "0.880s: job.exception type=exec severity=0 python: task rank 1 on host node13 exited and "
              "exit-timeout=30s has expired\nflux-job: task(s) exited with exit code 1\n")
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [1] and "bad shard 3" in got["summary"]


def test_flux_lost_shell_is_its_nodes_loss_of_no_task_rank(tmp_path: Path) -> None:
    text = PROGRESS + DOOM.format(stamp="3.1s: ", who="python: shell ", rank=2, host="node15") + \
        "flux-job: task(s) Killed\n"
    [record] = parse_framework_records(text)
    assert record.outside and record.rank is None and record.host == "node15"
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "stopped" and "node15" in got["summary"] and "rank 2" not in got["summary"].replace(
        "shell rank 2", "")


@pytest.mark.parametrize(("end", "kind"), [("task(s) exited with exit code 2", "exception"),
                                           ("task(s) Aborted", "crash")])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_flux_job_end_alone_is_a_failure_of_no_rank(end: str, kind: str, eol: str, tmp_path: Path) -> None:
    text = (PROGRESS + f"flux-job: {end}\n").replace("\n", eol)
    [record] = parse_framework_records(text)
    assert record.rank is None and (record.signal or record.exitcode)
    assert failure_verdict(text, tmp_path)["kind"] == kind


@pytest.mark.parametrize("text", [
    PROGRESS + 'If you see "flux-job: task(s) exited with exit code 1" in the output, check the task logs.\n',
    PROGRESS + "The doc says: rank 3 on host n1 exited and exit-timeout=30s has expired is the shell's word.\n",
    PROGRESS + "flux-job: task(s) exited with exit code 1\n" + PROGRESS.replace("step 100", "step 300").replace(
        "step 200", "step 400") + "0: epoch 3 step 500 loss 0.6\n1: epoch 3 step 500 loss 0.6\n"
    "0: Training complete: saved checkpoint-final\n",
])
def test_flux_words_quoted_or_gone_on_past_are_no_record(text: str) -> None:
    assert parse_framework_records(text) == ()


# Open MPI's mpirun that could not start its daemons (help-plm-base.txt; "ORTE" in 1.x-4.x, "PRTE" in 5.x): no rank
# ran; the launch agent's own line just above the box, where printed, is the cause (was refused, or an all-clear)
UNSTARTED = ("--------------------------------------------------------------------------\n"
             "{who} was unable to reliably start one or more daemons.\nThis usually is caused by:\n\n"
             "* not finding the required libraries and/or binaries on\n  one or more nodes. Please check your PATH and "
             "LD_LIBRARY_PATH\n  settings, or configure OMPI with --enable-orterun-prefix-by-default\n"
             "--------------------------------------------------------------------------\n")


@pytest.mark.parametrize("who", ["ORTE", "PRTE"])
@pytest.mark.parametrize(("before", "cause"), [("bash: orted: command not found\n", "orted: command not found"),
                                               ("Host key verification failed.\n", "Host key verification failed"),
                                               ("$ mpirun -np 16 --hostfile hosts python train.py\n", None)])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_daemons_not_started_is_a_launch_that_ran_no_rank(who: str, before: str, cause: str | None, eol: str,
                                                          tmp_path: Path) -> None:
    text = (before + UNSTARTED.format(who=who)).replace("\n", eol)
    [record] = parse_framework_records(text)
    assert record.raised and record.rank is None and "no rank ran" in record.text
    assert (cause in record.text) if cause else "mpirun -np" not in record.text
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "exception" and "could not start its daemons" in got["summary"]


def test_daemons_not_started_after_progress_is_no_all_clear(tmp_path: Path) -> None:
    text = PROGRESS + "[gpu-a03:41822] [[49023,0],0] ORTE_ERROR_LOG: Data unpack would read past end of buffer\n" + \
        UNSTARTED.format(who="ORTE")
    assert "could not start its daemons" in failure_verdict(text, tmp_path)["summary"]


@pytest.mark.parametrize("text", [
    PROGRESS + "The FAQ: ORTE was unable to reliably start one or more daemons means orted is not on the PATH.\n",
    UNSTARTED.format(who="ORTE") + "(fixed with --prefix)\n" + PROGRESS + "0: epoch 3 step 900 loss 0.5\n"
    "1: epoch 3 step 900 loss 0.5\n0: Training complete: saved checkpoint-final\n",
])
def test_daemons_words_quoted_or_gone_on_past_are_no_record(text: str) -> None:
    assert parse_framework_records(text) == ()
