"""Session 58 (fmt58, issue 23 item 3: formats from the source): Ray's WorkerCrashedError.

python/ray/exceptions.py's ``WorkerCrashedError``: "The worker died unexpectedly while executing this task. Check
python-core-worker-*.log files for more information.", what ``ray.get`` raises for a task whose worker process died
(a signal, a native crash) while it ran: the process raised nothing. Was an EXCEPTION of no rank; now a CRASH of no
rank (a Ray worker died), and the raylet's own record of the death beside it, which names its pid and so its rank,
stays the verdict. Variants written from the template."""

from __future__ import annotations

from tests.helpers.report import report_lines as report

_WORKER = "(RayTrainWorker pid=4411, ip=172.31.9.20) [rank1]: epoch 3 iter 500 loss 0.88"
_DRIVER = ("Traceback (most recent call last):", '  File "train.py", line 80, in <module>', "    ray.get(refs)",
           ("ray.exceptions.WorkerCrashedError: The worker died unexpectedly while executing this task. Check "
           "python-core-worker-*.log files for more information."))


def test_the_driver_s_word_alone_is_a_crash_of_no_rank() -> None:
    verdict = report(_WORKER, *_DRIVER).verdict
    assert verdict.kind.value == "crash" and verdict.culprit_ranks == (), verdict.summary
    assert "WorkerCrashedError" in verdict.summary


def test_the_raylet_s_record_names_the_rank() -> None:
    verdict = report(_WORKER, "(raylet, ip=172.31.9.20) A worker died or was killed while executing a task by an "
                     "unexpected system error. To troubleshoot the problem, check the logs for the dead worker. RayTask "
                     "ID: ffffffffffffffff2d6b Worker ID: 9ce3b5e1f6a4 Node ID: 5a7f Worker IP address: 172.31.9.20 "
                     "Worker port: 10015 Worker PID: 4411 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker "
                     "unexpectedly exits with a connection error code 2. End of file.", *_DRIVER).verdict
    assert verdict.kind.value == "crash" and verdict.culprit_ranks == (1,), verdict.summary


def test_a_rank_s_exception_stays_the_verdict() -> None:
    verdict = report("(RayTrainWorker pid=4411, ip=172.31.9.20) [rank1]: Traceback (most recent call last):",
                     "(RayTrainWorker pid=4411, ip=172.31.9.20) [rank1]: ValueError: Expected input batch_size (32) to "
                     "match target batch_size (16).", *_DRIVER).verdict
    assert verdict.kind.value == "exception" and verdict.culprit_ranks == (1,), verdict.summary
