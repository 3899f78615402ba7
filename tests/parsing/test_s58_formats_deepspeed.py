"""Session 58 (fmt58, issue 23 item 3: formats from the source): DeepSpeed's launcher's own lines.

deepspeed/launcher/launch.py's ``sigkill_handler`` runs on SIGINT/SIGTERM and when one of its processes exited
non-zero. In the second case it logs "Killing subprocess P" for each, then "<argv> exits with return code = N" and
exits; only in the first does it reach "Main process received SIGTERM, exiting" (or SIGINT: its handler's only two
names). Those words are therefore always a signal from outside the job (a scheduler, a pod's stop, Ctrl-C), read as
torchrun's agent's "Received 15 death signal" is: STOPPED of no rank for SIGTERM, a person's Ctrl-C for SIGINT, and
after a rank's own failure that failure stays the verdict. Variants written here from the source's templates."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.torchelastic import DEEPSPEED_LAUNCHER, parse_agent_death_signal

_START = (
    "[2025-02-03 09:12:03,200] [INFO] [launch.py:152:main] nnodes=1, num_local_procs=2, node_rank=0",
    ("[2025-02-03 09:12:03,201] [INFO] [launch.py:256:main] process 7311 spawned with command: ['/opt/py/bin/python', "
    "'-u', 'sft.py', '--local_rank=0', '--deepspeed', 'zero3.json']"),
    ("[2025-02-03 09:12:03,202] [INFO] [launch.py:256:main] process 7312 spawned with command: ['/opt/py/bin/python', "
    "'-u', 'sft.py', '--local_rank=1', '--deepspeed', 'zero3.json']"),
    "{'loss': 0.8123, 'grad_norm': 1.02, 'learning_rate': 1.9e-05, 'epoch': 0.41}",
)


def _stopped_by(name: str) -> tuple[str, ...]:
    return ("[2025-02-03 10:40:00,100] [INFO] [launch.py:335:sigkill_handler] Killing subprocess 7311",
            "[2025-02-03 10:40:00,120] [INFO] [launch.py:335:sigkill_handler] Killing subprocess 7312",
            f"[2025-02-03 10:40:00,130] [INFO] [launch.py:344:sigkill_handler] Main process received {name}, exiting")


def test_the_launchers_sigterm_is_a_stop_from_outside() -> None:
    verdict = report(*_START, *_stopped_by("SIGTERM")).verdict
    assert verdict.kind.value == "stopped" and verdict.culprit_ranks == (), verdict.summary
    assert "DeepSpeed's launcher received SIGTERM" in verdict.summary


def test_under_pdsh_on_each_node() -> None:
    lines = [f"gpu07: {line}" for line in (*_START, *_stopped_by("SIGTERM"))]
    lines += [f"gpu08: {line}" for line in _stopped_by("SIGTERM")]
    verdict = report(*lines).verdict
    assert verdict.kind.value == "stopped" and verdict.culprit_ranks == (), verdict.summary


def test_ctrl_c_is_no_stop_by_a_scheduler() -> None:
    verdict = report(*_START, *_stopped_by("SIGINT")).verdict
    assert verdict.kind.value != "stopped" and verdict.culprit_ranks == (), verdict.summary
    assert "Ctrl-C" in verdict.summary


def test_a_ranks_own_failure_before_it_stays_the_verdict() -> None:
    verdict = report(*_START, "[rank1]: Traceback (most recent call last):",
                     '[rank1]:   File "sft.py", line 88, in <module>',
                     "[rank1]: ValueError: labels and logits differ in length (512 vs 511)",
                     *_stopped_by("SIGTERM")).verdict
    assert verdict.kind.value == "exception" and verdict.culprit_ranks == (1,), verdict.summary


def test_the_record_of_a_failed_process_is_no_outside_signal() -> None:
    text = "\n".join((*_START, _stopped_by("SIGTERM")[0],
                      ("[2025-02-03 10:40:00,140] [ERROR] [launch.py:341:sigkill_handler] ['/opt/py/bin/python', '-u', "
                      "'sft.py', '--local_rank=1'] exits with return code = -9")))
    assert parse_agent_death_signal(text) is None
    received = parse_agent_death_signal("\n".join((*_START, *_stopped_by("SIGTERM"))))
    assert received is not None and received.launcher == DEEPSPEED_LAUNCHER and received.signal == "SIGTERM"


def test_a_healthy_run_says_no_signal() -> None:
    text = "\n".join((*_START, "[2025-02-03 11:00:00,000] [INFO] [launch.py:367:main] Process 7312 exits successfully.",
                      "[2025-02-03 11:00:01,000] [INFO] [launch.py:367:main] Process 7311 exits successfully."))
    assert parse_agent_death_signal(text) is None
