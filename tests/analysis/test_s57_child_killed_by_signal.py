"""Session 57 (round 80's ablab/spades#780): a driver's report of a child killed by a signal in Python's words, a
negative return code (-N: signal N), was no failure line ("== Error ==  system call for: ... finished abnormally, OS
return value: -9": its "== Error ==" head taken for a metric's "error = ", its "OS return value" for no exit's words),
and Python's CalledProcessError "returned non-zero exit status -9." a failure of unknown place; now each is the
child's death by signal N (a crash of no rank; SIGKILL's next step names the OOM killer as its usual sender, not as
this one's). Positive codes stay exits with that code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log


@pytest.mark.parametrize(("line", "signal"), [
    # (a pipeline driver's report, SPAdes' words, of another of its children)
    (("== Error ==  system call for: \"['/opt/SPAdes-3.15/bin/spades-hammer', '/scratch/run/corrected/configs/"
     "config.info']\" finished abnormally, OS return value: -11"), "SIGSEGV"),
    (("subprocess.CalledProcessError: Command '['/opt/bin/megahit_core', 'assemble', 'k41.cfg']' returned non-zero "
     "exit status -9."), "SIGKILL"),
    ("ERROR: the worker command returned non-zero exit status -6", "SIGABRT"),
])
def test_a_childs_negative_return_code_is_its_death_by_that_signal(line: str, signal: str, tmp_path: Path) -> None:
    _code, got = report_log("assembling k=41\n" + line + "\n", tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash", verdict
    assert signal in verdict["summary"], verdict
    assert verdict["culprit_ranks"] == [], verdict


def test_sigkill_names_the_oom_killer_as_its_usual_sender(tmp_path: Path) -> None:
    _code, got = report_log("== Error ==  system call for: \"['./assembler']\" finished abnormally, OS return value: "
                            "-9\n", tmp_path)
    assert got["verdict"]["kind"] == "crash" and "SIGKILL" in got["verdict"]["summary"], got["verdict"]
    steps = " ".join(got["next_steps"])
    assert "usually" in steps and "OOM" in steps, steps


@pytest.mark.parametrize("line", [
    "subprocess.CalledProcessError: Command '['python', 'prep.py']' returned non-zero exit status 1.",
    "== Error ==  system call for: \"['./assembler']\" finished abnormally, OS return value: 2",
])
def test_a_positive_code_is_no_signal(line: str, tmp_path: Path) -> None:
    _code, got = report_log(line + "\n", tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] != "crash", verdict
    assert "SIG" not in verdict["summary"], verdict


def test_a_metric_named_error_is_still_no_failure(tmp_path: Path) -> None:
    code, got = report_log("epoch 3 train error = 0.12\nepoch 4 train error = 0.10\n", tmp_path)
    assert code == 2 or got["verdict"]["kind"] == "no_problem_found", got
