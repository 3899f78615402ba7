"""Session 54: Kubernetes' end of a Job or a pod at its activeDeadlineSeconds (the Job controller's DeadlineExceeded,
"Job was active longer than specified deadline"; the kubelet's "Pod was active on the node longer than the specified
deadline"; kubectl get pods' DeadlineExceeded) was refused or a failure of unknown place, now a stop from outside the
job at its time limit, as Slurm's TIMEOUT; and Spark's driver's "Lost executor N on H: Executor lost for unknown
reasons" (Spark on Kubernetes, the pod's status not read), a failure of unknown place, is executor N on H lost, its
cause not in the input (the pod's `kubectl describe pod` would tell)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log

CASES = Path(__file__).resolve().parent.parent / "realworld" / "cases"

DESCRIBE_JOB = ("Name:             train-job\nNamespace:        ml\nParallelism:      1\nCompletions:      1\n"
                "Active Deadline Seconds:  3600s\nPods Statuses:    0 Active (0 Ready) / 0 Succeeded / 1 Failed\n"
                "Events:\n  Type     Reason            Age   From            Message\n"
                "  ----     ------            ----  ----            -------\n"
                "  Normal   SuccessfulCreate  61m   job-controller  Created pod: train-job-7xk2p\n"
                "  Normal   SuccessfulDelete  1m    job-controller  Deleted pod: train-job-7xk2p\n"
                "  Warning  DeadlineExceeded  1m    job-controller  Job was active longer than specified deadline\n")
JOB_YAML = ("status:\n  conditions:\n  - lastProbeTime: \"2026-01-02T03:04:05Z\"\n    message: Job was active longer than "
            "specified deadline\n    reason: DeadlineExceeded\n    status: \"True\"\n    type: Failed\n  failed: 1\n")
POD = ("Name:         train-worker-0\nNamespace:    ml\nStatus:       Failed\nReason:       DeadlineExceeded\n"
       "Message:      Pod was active on the node longer than the specified deadline\n")
ROW = ("NAME             READY   STATUS             RESTARTS   AGE\n"
       "train-worker-0   0/1     DeadlineExceeded   0          61m\n")


@pytest.mark.parametrize("text", [DESCRIBE_JOB, JOB_YAML, POD, ROW])
def test_a_deadline_is_a_stop_at_the_time_limit(text: str, tmp_path: Path) -> None:
    code, got = report_log("epoch 3 step 900 loss 0.41\n" + text, tmp_path)
    assert code not in (0, 2, 70), got
    verdict = got["verdict"]
    assert verdict["kind"] == "stopped" and "activeDeadlineSeconds" in verdict["summary"]
    assert "time limit" in verdict["summary"]
    steps = " ".join(got["next_steps"])
    assert "spec.activeDeadlineSeconds" in steps and "sbatch --time" not in steps


def test_a_pods_own_failure_before_the_deadline_comes_first(tmp_path: Path) -> None:
    text = ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    main()\n"
            "ValueError: bad config\n" + DESCRIBE_JOB)
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "exception" and "ValueError: bad config" in got["summary"]


LOST = ("ERROR [2017-09-06T02:48:45.917Z] org.apache.spark.scheduler.cluster.kubernetes.KubernetesTaskSchedulerImpl: "
        "Lost executor 4 on 10.1.2.3: Executor lost for unknown reasons\n")


def test_spark_lost_executor_for_unknown_reasons(tmp_path: Path) -> None:
    got = failure_verdict("INFO  Disabling executor 4.\n" + LOST, tmp_path)
    assert got["kind"] != "failure_unlocated"
    assert "lost executor 4 on 10.1.2.3" in got["summary"] and "kubectl describe pod" in got["summary"]
    assert "no reader for these words" not in got["summary"]


def test_spark_on_yarn_names_yarns_logs(tmp_path: Path) -> None:
    text = ("21/03/02 10:15:40 ERROR YarnScheduler: Lost executor 7 on worker-7.example.com: Remote RPC client "
            "disassociated. Likely due to containers exceeding thresholds, or network issues. Check driver logs for "
            "WARN messages.\n")
    got = failure_verdict(text, tmp_path)
    assert "lost executor 7 on worker-7.example.com" in got["summary"] and "yarn logs" in got["summary"]


def test_a_lost_executor_whose_tasks_ran_again_is_no_end(tmp_path: Path) -> None:
    text = LOST + ("INFO TaskSetManager: Finished task 31.1 in stage 3.0 (TID 431) in 120 ms on 10.1.2.4 (executor 5) "
                   "(32/400)\nINFO DAGScheduler: Job 0 finished: count at job.py:12, took 320.1 s\n")
    _code, got = report_log(text, tmp_path)
    assert "lost executor 4" not in got.get("verdict", {}).get("summary", "")


def test_real_spark_on_k8s_480(tmp_path: Path) -> None:
    got = failure_verdict((CASES / "apache-spark-on-k8s__spark__480" / "log.txt").read_text(), tmp_path)
    assert "lost executor 2 on 10.255.73.13" in got["summary"] and "kubectl describe pod" in got["summary"]


PODS_DONE = ("$ kubectl get pods\nNAME                     READY   STATUS      RESTARTS   AGE\n"
             "train-worker-0           0/1     Completed   0          40m\n"
             "train-worker-1           0/1     Completed   0          40m\n$ kubectl get events\n"
             "LAST SEEN   TYPE      REASON             OBJECT                     MESSAGE\n"
             "3m          Normal    Completed          job/train                  Job completed\n")


def test_another_jobs_deadline_event_is_not_this_jobs_stop(tmp_path: Path) -> None:
    # (a namespace's events list every Job's: job/nightly-eval-28731's deadline beside train's pods, which completed;
    # review rev54's F6)
    text = PODS_DONE + ("3m          Warning   DeadlineExceeded   job/nightly-eval-28731     Job was active longer than "
                        "specified deadline\n")
    _, got = report_log(text, tmp_path)    # (refused today: the pods completed and no line says a failure)
    assert got.get("verdict", {}).get("kind") != "stopped" and "activeDeadlineSeconds" not in str(got)


def test_the_jobs_own_deadline_event_beside_its_pods_is_its_stop(tmp_path: Path) -> None:
    text = ("LAST SEEN   TYPE      REASON             OBJECT                     MESSAGE\n"
            "61m         Normal    Created            pod/train-worker-0         Created container pytorch\n"
            "3m          Warning   DeadlineExceeded   job/train                  Job was active longer than specified "
            "deadline\n")
    got = failure_verdict(text, tmp_path)
    assert "activeDeadlineSeconds" in got["summary"]
