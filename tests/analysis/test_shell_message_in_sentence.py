"""The shell's message of a job's death that its reporter quotes in Markdown bold or a code span after a colon, inside
their own sentence (round 60, HITS-MCM/gromacs-ramd#13: "MD run failed with following errror: **Aborted (core
dumped)** on GPU(RTX 2080).", a failure of no known words at first sight): the writer's own failure, that signal, where
the words before the colon tell of a failure; the same span after words that do not (a list of messages to look for, a
how-to) is no failure of this input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict
from triage.parsing.crashlog import parse_crash_line


@pytest.mark.parametrize(("line", "signal"), [
    ("MD run failed with following errror: **Aborted (core dumped)** on GPU(RTX 2080).", "SIGABRT"),
    ("After 3 epochs the training crashed with: `Killed`", "SIGKILL"),
    ("the output of the second node was: __Segmentation fault (core dumped)__ and nothing else", "SIGSEGV"),
    ("I got this error: **Bus error (core dumped)** when the dataloader starts", "SIGBUS"),
])
def test_a_quoted_shell_message_after_the_writers_failure_is_that_signal(line: str, signal: str) -> None:
    read = parse_crash_line(line)
    assert read is not None and read.signal == signal, read


@pytest.mark.parametrize("line", [
    "Common messages: **Killed** means the OOM killer, **Aborted** an assert.",
    "If you see this: `Segmentation fault (core dumped)` then rebuild with -g.",
    "- the job prints: `Killed`",
])
def test_the_same_span_after_words_of_no_failure_is_not_one(line: str) -> None:
    read = parse_crash_line(line)
    assert read is None or read.signal is None, read


def test_the_round_60_sentence_is_a_crash_by_sigabrt(tmp_path: Path) -> None:
    text = "I am using the patched build. The run failed with the following error: **Aborted (core dumped)** on GPU 1.\n"
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "crash" and "Aborted (core dumped)" in verdict["summary"], verdict


# rev50's F1: the quoted shell message is the reporter's sentence, a death only where the run did not go on past it:
# a list of what such messages mean, or a how-to, before a run that goes on to its end (variants written here)
@pytest.mark.parametrize("head", [
    "Possible errors shown: `Killed` means the OOM killer, `Aborted` means an assertion.",
    "The README says that when the host runs out of RAM you get the error message: `Killed`",
    "Common output: **Segmentation fault (core dumped)** if the wheel does not match the driver",
])
def test_a_quoted_shell_message_before_a_run_that_went_on_is_no_death(head: str, tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text(head + "\n" + "".join(f"[rank0]: epoch 1 step {step} loss 2.{step // 100}\n"
                                         for step in range(100, 700, 100)) + "[rank0]: training complete\n")
    from triage.analysis.analyze import analyze
    from triage.load.inputs import load_log_texts
    result = analyze(load_log_texts([("job.log", log.read_text())]))
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary
