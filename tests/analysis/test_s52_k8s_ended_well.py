"""Session 52 (rev47 item 8, 3 again): a Kubernetes listing that shows the job ended well is no failing job, in more of
kubectl's shapes than session 50's: `kubectl get pods -A` (its NAMESPACE column first), the kubelet's back-off only in
`kubectl describe pod`'s events (it was refused), and the job's own word that it ended well, whatever its pods show: the
training operator's "PyTorchJob default/train-job successfully completed." (older: "... is successfully completed."),
`kubectl get pytorchjobs`' STATE Succeeded, a Job's "Completed ... Job completed" event and `kubectl get jobs`' n/n
completions (a retry in a new pod after one in Error). A job Kubernetes says failed, or a pod still failing beside pods
that ended, keeps its failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log
from triage.parsing.frameworks import job_ended_well, pods_ended_well

BACKOFF = ("33m         Warning   BackOff     pod/train-job-worker-1      Back-off restarting failed container pytorch "
           "in pod train-job-worker-1_ml-team(5e6f7a)\n")
ALL_NS = ("NAMESPACE     NAME                       READY   STATUS      RESTARTS      AGE\n"
          "ml-team       train-job-worker-0         0/1     {w0}   2 (31m ago)   40m\n"
          "ml-team       train-job-worker-1         0/1     {w1}   1 (33m ago)   40m\n")
DESCRIBE_EVENTS = ("Events:\n  Type     Reason   Age                 From     Message\n"
                   "  ----     ------   ----                ----     -------\n"
                   "  Warning  BackOff  22m (x4 over 30m)   kubelet  Back-off restarting failed container pytorch in pod "
                   "train-job-worker-0_default(9c8d7e)\n")
WIDE = ("NAME                 READY   STATUS      RESTARTS      AGE   IP         NODE         NOMINATED NODE   "
        "READINESS GATES\n"
        "train-job-worker-0   0/1     Completed   3 (20m ago)   45m   10.1.2.4   gpu-node-2   <none>           <none>\n")
PODS_RETRIED = ("NAME                    READY   STATUS      RESTARTS   AGE\n"
                "train-job-abc12         0/1     Error       0          40m\n"
                "train-job-def34         0/1     Completed   0          35m\n")


@pytest.mark.parametrize("text", [
    ALL_NS.format(w0="Completed", w1="Completed") + BACKOFF,
    WIDE + DESCRIBE_EVENTS,
    "NAME        STATE       AGE\ntrain-job   Succeeded   50m\n" + BACKOFF,
    BACKOFF + "2m   Normal   PyTorchJobSucceeded   pytorchjob/train-job   PyTorchJob ml-team/train-job successfully "
              "completed.\n",
    "NAME        COMPLETIONS   DURATION   AGE\ntrain-job   1/1           6m         40m\n" + PODS_RETRIED,
    "NAME        STATUS     COMPLETIONS   DURATION   AGE\ntrain-job   Complete   1/1           6m         40m\n"
    + PODS_RETRIED,
    PODS_RETRIED + "5m   Normal   Completed   job/train-job   Job completed\n",
])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_a_job_kubernetes_shows_ended_well_is_no_failure(text: str, eol: str, tmp_path: Path) -> None:
    assert pods_ended_well(text)
    code, out = report_log(text.replace("\n", eol), tmp_path)
    assert code == 0 and out["verdict"]["kind"] == "no_problem_found", out
    assert "the job got over" in out["verdict"]["summary"] and "progress lines follow" not in out["verdict"]["summary"]


@pytest.mark.parametrize("text", [
    ALL_NS.format(w0="Completed", w1="CrashLoopBackOff") + BACKOFF,       # one pod still fails
    "NAME        COMPLETIONS   DURATION   AGE\ntrain-job   0/1           40m        40m\n"
    + PODS_RETRIED.replace("Completed", "Error    "),                      # no completion
    "NAME        STATE    AGE\ntrain-job   Failed   50m\n" + BACKOFF,       # the operator says it failed
    "NAME        COMPLETIONS   DURATION   AGE\ntrain-job   1/1           6m         40m\n" + PODS_RETRIED
    + "  Warning  BackoffLimitExceeded  2m  job-controller  Job has reached the specified backoff limit\n",
])
def test_a_job_kubernetes_does_not_show_ended_well_keeps_its_failure(text: str, tmp_path: Path) -> None:
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "exception", got


def test_real_describe_of_a_job_that_succeeded_after_unschedulable_pods(tmp_path: Path) -> None:
    # `kubectl describe pytorchjob` of a 4-node FSDP job on EKS with Karpenter (gnosia93/training-on-eks's notes): the
    # operator's Unschedulable warnings while the nodes came up, then the job's Succeeded condition
    text = ("Status:\n  Completion Time:  2025-12-19T08:56:33Z\n  Conditions:\n"
            "    Message:               PyTorchJob pytorch-dist-job is running.\n"
            "    Reason:                PyTorchJobRunning\n    Status:                False\n"
            "    Type:                  Running\n"
            "    Message:               PyTorchJob pytorch-dist-job is successfully completed.\n"
            "    Reason:                PyTorchJobSucceeded\n    Status:                True\n"
            "    Type:                  Succeeded\n  Replica Statuses:\n    Master:\n      Succeeded:  1\n"
            "    Worker:\n      Succeeded:  3\nEvents:\n"
            "  Type     Reason                   Age                From                   Message\n"
            "  ----     ------                   ----               ----                   -------\n"
            "  Warning  Unschedulable            13m                pytorchjob-controller  Error pod "
            "pytorch-dist-job-master-0 condition message: 0/2 nodes are available: 2 node(s) didn't match Pod's node "
            "affinity/selector. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not "
            "helpful for scheduling.\n"
            "  Normal   ExitedWithCode           3m10s              pytorchjob-controller  Pod: "
            "default.pytorch-dist-job-worker-0 exited with code 0\n")
    assert job_ended_well(text)
    code, out = report_log(text, tmp_path)
    assert code == 0 and out["verdict"]["kind"] == "no_problem_found", out
    code, out = report_log(text.replace("Error pod", "Normal pod"), tmp_path)
    assert code == 0 and "Kubernetes says the job ended well" in out["verdict"]["summary"]


def test_real_listing_of_a_job_the_operator_failed(tmp_path: Path) -> None:
    # kubeflow/trainer#1579: a worker failed under restartPolicy Never, the PyTorchJob Failed, its master still running
    text = ("# kubectl get pytorchjob -n kubeflow\nNAME         STATE    AGE\npytorchjob   Failed   12m\n\n"
            "# kubectl get pod -n kubeflow | grep pytorch\n"
            "pytorchjob-master-0                                      1/1     Running   0          12m\n"
            "pytorchjob-worker-0                                      0/1     Error     0          12m\n")
    assert not job_ended_well(text)
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "exception" and "pytorchjob-worker-0" in got["summary"]
