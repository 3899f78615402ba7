"""Session 53: `kubectl describe job` (or the Job's YAML) with only the Job controller's BackoffLimitExceeded, none of its
pods' output, is a failed Job whose pods' logs are not in the input: the failure, and `kubectl logs` as what would tell
which container failed and why. It was refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log

DESCRIBE = """Name:             train-job
Namespace:        default
Selector:         batch.kubernetes.io/controller-uid=5b1f
Parallelism:      1
Completions:      1
Start Time:       Mon, 03 Jun 2024 10:11:12 +0000
Pods Statuses:    0 Active (0 Ready) / 0 Succeeded / 4 Failed
Events:
  Type     Reason                Age    From            Message
  ----     ------                ----   ----            -------
  Normal   SuccessfulCreate      10m    job-controller  Created pod: train-job-abcde
  Normal   SuccessfulDelete      2m     job-controller  Deleted pod: train-job-abcde
  Warning  BackoffLimitExceeded  2m     job-controller  Job has reached the specified backoff limit
"""
TRACEBACK = ('Traceback (most recent call last):\n  File "train.py", line 10, in <module>\n    main()\n'
             "ValueError: bad config value lr=abc\n")


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_describe_job_alone_is_the_jobs_failure(eol: str, tmp_path: Path) -> None:
    code, got = report_log(DESCRIBE.replace("\n", eol), tmp_path)
    assert code not in (0, 2, 70)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == []
    assert "backoff limit (4 of its pods failed)" in verdict["summary"] and "kubectl logs POD" in verdict["summary"]
    assert "kubectl logs" in " ".join(got["next_steps"]) and "traceback" not in " ".join(got["next_steps"])


@pytest.mark.parametrize("order", ["describe first", "logs first"])
def test_a_pods_own_failure_in_the_input_comes_first(order: str, tmp_path: Path) -> None:
    logs = "$ kubectl logs train-job-abcde\n" + TRACEBACK
    text = DESCRIBE + logs if order == "describe first" else logs + "$ kubectl describe job train-job\n" + DESCRIBE
    got = failure_verdict(text, tmp_path)
    assert "ValueError: bad config value" in got["summary"]


def test_real_job_status_and_events(tmp_path: Path) -> None:
    # kubernetes/kubernetes#92245: a Job of `exit 1` pods, its status's condition and `kubectl describe`'s events
    text = """status:
    conditions:
    - lastProbeTime: "2020-06-18T06:06:48Z"
      lastTransitionTime: "2020-06-18T06:06:48Z"
      message: Job has reached the specified backoff limit
      reason: BackoffLimitExceeded
      status: "True"
      type: Failed
    failed: 5
    startTime: "2020-06-18T06:01:55Z"

Events:
  Type     Reason                Age   From            Message
  ----     ------                ----  ----            -------
  Normal   SuccessfulCreate      39m   job-controller  Created pod: demo-ctvjt
  Normal   SuccessfulCreate      39m   job-controller  Created pod: demo-vjbvt
  Normal   SuccessfulCreate      38m   job-controller  Created pod: demo-5tls6
"""
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "exception" and "failed at its backoff limit" in got["summary"]
    assert "kubectl logs POD" in got["summary"]
    # (kubernetes/kubernetes#96630's older `kubectl describe job` count)
    got = failure_verdict("Pods Statuses:  0 Running / 3 Succeeded / 5 Failed\n" + text, tmp_path)
    assert "5 of its pods failed" in got["summary"]
