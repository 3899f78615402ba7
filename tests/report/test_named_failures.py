"""Issue 23's goal "0 refusals of text that names a rank and a failure", held as a class: every way of
naming a rank (a launcher's prefix or plain words) with every failure word gives a verdict that names
that rank: never exit 2 ("nothing recognisable"), never an all-clear. A timeout names the rank that
reported it (it waited: not the culprit); any other failure names the rank as the culprit."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from triage.cli import main
from triage.parsing.named_failure import named_failure, named_rank

# {r}: the rank. Prefixes as launchers print them, and words as people and launchers write them.
WHO = ["rank {r}", "Rank {r}", "[rank{r}]", "rank={r}", "RANK={r}", "rank: {r}", "local_rank {r}", "local_rank={r}",
       "global rank {r}", "global_rank={r}", "worker {r}", "Worker {r}", "WORKER {r}", "process {r}", "Process {r}",
       "task {r}", "rank {r} (pid 48213)", "node07:{r}", "[1,{r}]<stderr>:", "{r}: ", "[rank{r}]:",
       "ERROR: rank {r}", "the launcher says rank {r}", "worker_{r}", "Worker_{r}", "process_{r}"]
WHAT = ["died from signal 11", "was killed", "got SIGKILL", "exited with exit code 1", "exit status 137",
        "failed", "aborted", "core dumped", "OOM", "ran out of memory", "segmentation fault", "Bus error",
        "illegal instruction", "raised an exception", "error: bad input", "crashed", "is dead",
        "terminated with exitcode 1", "Fatal error in the data loader", "hit SIGSEGV"]
TIMEOUT = ["timed out", "hit a timeout", "timeout after 1800 s"]
RANK = 5


def _report(text: str, tmp_path: Path) -> tuple[int, dict[str, Any], str]:
    path = tmp_path / "job.log"
    path.write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["report", str(path), "--format", "json"])
    return code, (json.loads(out.getvalue())["verdict"] if out.getvalue().strip() else {}), err.getvalue()


@pytest.mark.parametrize(("who", "what"), list(itertools.product(WHO, WHAT)))
def test_a_line_naming_a_rank_and_a_failure_names_that_rank(who: str, what: str, tmp_path: Path) -> None:
    line = f"{who.format(r=RANK)} {what}".replace("  ", " ")
    code, verdict, err = _report(f"starting the job\n{line}\n", tmp_path)
    assert code not in (0, 2), (line, code, err)
    assert RANK in (verdict.get("culprit_ranks") or ()), (line, verdict)


@pytest.mark.parametrize(("who", "what"), list(itertools.product(WHO, TIMEOUT)))
def test_a_timeout_names_the_rank_that_reported_it(who: str, what: str, tmp_path: Path) -> None:
    line = f"{who.format(r=RANK)} {what}".replace("  ", " ")
    code, verdict, err = _report(line + "\n", tmp_path)
    assert code not in (0, 2), (line, code, err)
    assert f"rank {RANK}" in verdict["summary"], (line, verdict)


@pytest.mark.parametrize("line", [
    "Sending process 165 closing signal SIGTERM",                      # the launcher's teardown: a pid
    "['/usr/bin/python', '-u', 'train.py', '--local_rank=1'] exits with return code = -11",   # an argv's flag
    "rank 3 finished epoch 7 with loss 0.12",                          # no failure word
    "error rate 0.3 on the validation set",                            # no rank
    "rank 2 exited with exit code 0",                                  # a clean exit
    "worker 4 exitcode: 0",
    "vm:869:869 [0] NCCL INFO Failed to initialize NET plugin IB",    # NCCL's set-up note of a healthy rank
])
def test_lines_that_are_not_a_named_failure(line: str) -> None:
    assert named_failure(line) is None


@pytest.mark.parametrize(("words", "signal"), [
    ("exited with code 137", "SIGKILL"),             # a shell's and a container's 128+N
    ("exited with status 139", "SIGSEGV"),
    ("returned exit code 134", "SIGABRT"),
    ("exit status: 135", "SIGBUS"),
    ("exited unexpectedly with return code -11", "SIGSEGV"),    # Python's subprocess: -N
    ("exited with returncode=-9", "SIGKILL"),
    ("exited with an exit code of -6", "SIGABRT"),
    ("exited with code 1", None),
    ("exited with code 130", None),                  # 128+2 (SIGINT, a teardown signal): no crash signal
])
def test_an_exit_code_that_stands_for_a_signal_names_it(words: str, signal: str | None) -> None:
    found = named_failure(f"rank 3 {words}")
    assert found is not None and found[0] == 3
    assert found[1].signal == signal, (words, found)


def test_the_forms_of_naming_a_rank() -> None:
    assert [named_rank(w.format(r=7) + " failed") for w in WHO] == [7] * len(WHO)
    assert named_rank("process 48213 failed") is None        # a pid, not a process index


def test_a_named_line_does_not_displace_a_failure_of_no_rank(tmp_path: Path) -> None:
    # the unattributed RuntimeError is the first failure; the task's exit after it is the launcher's echo
    code, verdict, _ = _report("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:82, invalid argument\n"
                               "srun: error: node-3: task 14: Exited with exit code 1\n", tmp_path)
    assert code == 1
    assert verdict["culprit_ranks"] == []
