"""Session 56's review by variants (rev56): readers of session 55 asked on neighbouring inputs.

oneCCL's transport lines (fix55d item 5, triage.parsing.oneccl) are its errors at start-up; a run that then trained to
its end (the line was one provider's, another opened) did not fail there: the line is a failure only where the job did
not go on past it (CrashLine.quoted), as a library's warning-level line is."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict, report_log

_CCL = "2025:03:02-08:11:40:(90211) "


def test_a_oneccl_transport_line_the_run_trained_past_is_no_failure(tmp_path: Path) -> None:
    text = (f"{_CCL}|CCL_WARN| did not find MPI-launcher specific variables, switch to ATL/OFI\n"
            f"{_CCL}|CCL_ERROR| atl_ofi_helper.cpp:867 atl_ofi_get_prov_list: fi_getinfo error: ret -61, providers 0\n"
            "Epoch 1/3: 100%|##########| 500/500 [02:11<00:00,  3.80it/s, loss=1.21]\n"
            "Epoch 2/3: 100%|##########| 500/500 [02:10<00:00,  3.83it/s, loss=0.98]\n"
            "Epoch 3/3: 100%|##########| 500/500 [02:10<00:00,  3.83it/s, loss=0.91]\n"
            "Training finished. Saved to ./out\n")
    code, got = report_log(text, tmp_path)
    assert code == 0 and got["verdict"]["kind"] != "network_error", got["verdict"]


def test_a_oneccl_transport_line_nothing_went_past_stays_the_failure(tmp_path: Path) -> None:
    text = ("loading model shards 4/4\n"
            f"{_CCL}|CCL_ERROR| atl_ofi_helper.cpp:867 atl_ofi_get_prov_list: fi_getinfo error: ret -61, providers 0\n"
            f"{_CCL}|CCL_ERROR| atl_ofi.cpp:243 init: can't find suitable provider\n"
            "failed to initialize ATL\n")
    assert failure_verdict(text, tmp_path)["kind"] == "network_error"


def test_ipex_llms_transport_failure_stays(tmp_path: Path) -> None:
    log = (REPO / "tests/realworld/cases/intel__ipex-llm__11877/log.txt").read_text(encoding="utf-8")
    verdict = failure_verdict(log, tmp_path)
    assert verdict["kind"] == "network_error" and verdict["culprit_ranks"] == [], verdict


# kubectl get pods rows quoted without their RESTARTS and AGE columns (fix56a's rows ending at their STATUS): the
# pod's later Completed row, ended the same way, is its end (a watch, `kubectl get pods -w`, cut to three columns)
_WATCH = ("mnist-ddp-master-0 1/1 Running\n"
          "mnist-ddp-worker-0 0/1 {why}\n"
          "mnist-ddp-worker-0 1/1 Running\n"
          "{kind}mnist-ddp-master-0 0/1 Completed\n"
          "{kind}mnist-ddp-worker-0 0/1 {end}\n")


@pytest.mark.parametrize("why", ["OOMKilled", "Error", "CrashLoopBackOff"])
@pytest.mark.parametrize("kind", ["", "pod/"])
def test_a_short_rows_pod_that_completed_after_its_failure_got_over_it(why: str, kind: str, tmp_path: Path) -> None:
    code, got = report_log(_WATCH.format(why=why, kind=kind, end="Completed"), tmp_path)
    assert code == 0, got["verdict"]


def test_a_short_rows_pod_that_did_not_complete_stays_the_failure(tmp_path: Path) -> None:
    verdict = failure_verdict(_WATCH.format(why="OOMKilled", kind="", end="OOMKilled"), tmp_path)
    assert verdict["kind"] == "crash" and "mnist-ddp-worker-0" in verdict["summary"], verdict


# condor_q -hold's list (fix56a), then the job released and condor_history's row of it completed: the hold was not its
# end, as a later terminated event in the job's event log is not
_HELD = (" ID          OWNER          HELD_SINCE  HOLD_REASON\n"
         "4242.0   alice           3/1  11:20 Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage "
         "9120.\n\n"
         "$ condor_qedit 4242.0 RequestMemory 12000\n$ condor_release 4242.0\nJob 4242.0 released\n"
         "$ condor_history {job}\n"
         " ID     OWNER          SUBMITTED   RUN_TIME     ST COMPLETED   CMD\n"
         "{job}  alice          3/1  10:00   {run} C  3/1  14:02 /home/alice/run.sh\n")


def test_a_held_job_condor_history_shows_completed_after_is_no_failure(tmp_path: Path) -> None:
    for run in ("0+02:40:11", "          "):
        code, got = report_log(_HELD.format(job="4242.0", run=run), tmp_path)
        assert code != 1 and got.get("verdict", {}).get("kind") != "crash", got


def test_a_held_job_another_completed_stays_the_hold(tmp_path: Path) -> None:
    verdict = failure_verdict(_HELD.format(job="4243.0", run="0+02:40:11"), tmp_path)
    assert verdict["kind"] == "crash" and "4242.0" in verdict["summary"], verdict


def test_the_ospools_hold_list_stays_a_memory_kill(tmp_path: Path) -> None:
    log = (REPO / "tests/realworld/cases/gwastro__1-ogc__2/log.txt").read_text(encoding="utf-8")
    verdict = failure_verdict(log, tmp_path)
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [], verdict


# a Job's pod in Error and the Job controller's next pod of the same Job (its name another random suffix, created after
# it: a smaller AGE) Completed: the Job retried (backoffLimit) and got over it, no failure of the job
_JOB_PODS = ("NAME                 READY   STATUS      RESTARTS   AGE\n"
             "{failed}   0/1     {why}       0          14m\n"
             "{done}     0/1     Completed   0          {age}\n"
             "train-master-0       1/1     Running     0          8m\n"
             "train-worker-0       1/1     Running     0          8m\n")


@pytest.mark.parametrize("why", ["Error", "OOMKilled"])
def test_a_jobs_pod_retried_by_a_pod_that_completed_is_no_failure(why: str, tmp_path: Path) -> None:
    code, got = report_log(_JOB_PODS.format(failed="preprocess-7xk2p", why=why, done="preprocess-q9d4m", age="9m"),
                           tmp_path)
    assert code != 1, got.get("verdict")


@pytest.mark.parametrize(("failed", "done", "age"), [
    ("preprocess-7xk2p", "preprocess-q9d4m", "14m"),      # (as old as the failed pod: not its retry)
    ("preprocess-7xk2p", "preprocess-q9d4m", "1h2m"),     # (older)
    ("preprocess-7xk2p", "tokenize-q9d4m", "9m"),         # (another Job's)
    ("train-worker-1", "train-worker-2", "9m"),           # (a PyTorchJob's replicas: no random suffix)
    ("backup-28473920-7xk2p", "backup-28473980-q9d4m", "9m"),   # (a CronJob's other run)
])
def test_a_pod_no_later_pod_of_its_job_completed_after_stays_the_failure(failed: str, done: str, age: str,
                                                                          tmp_path: Path) -> None:
    verdict = failure_verdict(_JOB_PODS.format(failed=failed, why="Error", done=done, age=age), tmp_path)
    assert failed in verdict["summary"], verdict


# Open MPI's direct-launch box (fix56a), then srun's records of the tasks' exit codes: MPI_Init failed in every task
# before any had a rank, and srun's records are that failure's end, no task's own
_DIRECT = ("[node01:12345] PMI_Get_clique_size [pmix_s1.c:281:s1_init]: Operation failed\n"
           "--------------------------------------------------------------------------\n"
           "The application appears to have been direct launched using \"srun\",\n"
           "but OMPI was not built with {what} support. This usually happens\n"
           "when OMPI was not configured --with-slurm and we weren't able\n"
           "to discover a SLURM installation in the usual places.\n"
           "--------------------------------------------------------------------------\n"
           "*** An error occurred in MPI_Init\n*** on a NULL communicator\n"
           "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n"
           "***    and potentially your MPI job)\n"
           "srun: error: node01: {tasks}: Exited with exit code 1\n")


@pytest.mark.parametrize("what", ["SLURM", "SLURM's PMI"])
@pytest.mark.parametrize("tasks", ["task 0", "tasks 0-3"])
def test_srun_exit_records_after_open_mpis_direct_launch_box_name_no_rank(what: str, tasks: str,
                                                                          tmp_path: Path) -> None:
    verdict = failure_verdict(_DIRECT.format(what=what, tasks=tasks), tmp_path)
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict
    assert "before any rank ran" in verdict["summary"], verdict


def test_srun_records_without_the_box_still_name_their_tasks(tmp_path: Path) -> None:
    verdict = failure_verdict("step 10\nsrun: error: node01: task 2: Exited with exit code 1\n", tmp_path)
    assert verdict["culprit_ranks"] == [2], verdict


def test_spacks_direct_launch_stays_no_rank(tmp_path: Path) -> None:
    log = (REPO / "tests/realworld/cases/spack__spack__22086/log.txt").read_text(encoding="utf-8")
    verdict = failure_verdict(log, tmp_path)
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict


# kubectl get all: the Job's own row with all its completions (COMPLETIONS 1/1) beside its pods, one Error and one
# Completed of the same age: the Job succeeded, its failed pod one it got over
_GET_ALL = ("NAME                                    READY   STATUS      RESTARTS   AGE\n"
            "pod/etl-job-28f7k                       0/1     Completed   0          3h\n"
            "pod/etl-job-zx9pl                       0/1     Error       0          3h\n"
            "pod/web-6d5f7c9b8-x2kq                  1/1     Running     0          3h\n\n"
            "NAME                {status}COMPLETIONS   DURATION   AGE\n"
            "job.batch/etl-job   {complete}{done}/1           4m         3h\n")


@pytest.mark.parametrize("status", ["", "Complete   "])
def test_a_jobs_pod_of_a_job_that_completed_is_no_failure(status: str, tmp_path: Path) -> None:
    text = _GET_ALL.format(status="STATUS     " if status else "", complete=status, done=1)
    code, got = report_log(text, tmp_path)
    assert code != 1, got.get("verdict")


def test_a_jobs_pod_of_a_job_not_complete_stays_the_failure(tmp_path: Path) -> None:
    verdict = failure_verdict(_GET_ALL.format(status="", complete="", done=0), tmp_path)
    assert "etl-job-zx9pl" in verdict["summary"], verdict
