"""A kill at a limit says the limit and the signal only where the input gives it. PBS's MOM (OpenPBS's and Torque's
mom_main.c) writes `=>> PBS: job killed: <limit> ...` and sends SIGTERM, then SIGKILL after the job's kill_delay; Dask's
nanny (distributed/worker_memory.py) terminates a worker over its memory budget (SIGTERM) and sends SIGKILL only where
it says `is slow to accept SIGTERM; sending SIGKILL`. Both had been told as a SIGKILL (session 50's closing note), and
the nanny's restart got the kernel OOM killer's dmesg advice."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.analysis.advice import excerpt_steps
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts

_CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


def read(text: str) -> tuple[str, str]:
    result = analyze(load_log_texts([("job.log", text)]))
    assert result.verdict.kind.value == "crash", result.verdict.summary
    return result.verdict.summary, " ".join(excerpt_steps(result.verdict))


@pytest.mark.parametrize("line,limit", [
    ("=>> PBS: job killed: cput 3601 exceeded limit 3600", "cput"),
    ("=>> PBS: job killed: ncpus 9.5 exceeded limit 8", "ncpus"),
    ("=>> PBS: job killed: pcput 00:10:02 exceeded limit 00:10:00", "pcput"),
    ("=>> PBS: job killed: ncpus 36.02 exceeded limit 32", "ncpus"),
])
def test_pbss_cpu_limit_kill_says_the_limit_not_a_signal(line: str, limit: str) -> None:
    summary, steps = read(f"epoch 3 step 120 loss 0.7\n{line}\n")
    assert f"requested {limit}" in summary and "not in this input" in summary, summary
    assert "killed by SIGKILL" not in summary and "-l ncpus" in steps and "dmesg" not in steps, steps
    assert "memory limit the job asked for" not in steps, steps


@pytest.mark.parametrize("line", ["=>> PBS: job killed: mem 52428800kb exceeded limit 41943040kb",
                                  "=>> PBS: job killed: vmem 9000000kb exceeded limit 8388608kb"])
def test_pbss_memory_limit_kill_says_no_signal_and_keeps_the_limits_advice(line: str) -> None:
    summary, steps = read(f"epoch 3 step 120 loss 0.7\n{line}\n")
    assert "not in this input" in summary and "killed by SIGKILL" not in summary, summary
    assert "memory limit the job asked for" in steps and "PBS: -l mem" in steps, steps


@pytest.mark.parametrize("line", [
    "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting",
    ("2026-11-27 01:02:03,456 - distributed.nanny.memory - WARNING - Worker tcp://10.1.4.7:40121 (pid=8812) exceeded "
    "80% memory budget. Restarting..."),
])
def test_dasks_nanny_restart_says_no_signal_and_gets_the_workers_memory_advice(line: str) -> None:
    summary, steps = read(f"{line}\ndistributed.nanny - WARNING - Restarting worker\n")
    assert "Dask's nanny restarted" in summary and "not in this input" in summary, summary
    assert "killed by SIGKILL" not in summary, summary
    assert "memory_limit" in steps and "dmesg" not in steps, steps


def test_dasks_nanny_that_says_it_sent_sigkill_is_a_sigkill() -> None:
    summary, _ = read("distributed.nanny.memory - WARNING - Worker tcp://10.1.4.7:40121 (pid=8812) exceeded 95% "
                      "memory budget. Restarting...\ndistributed.nanny.memory - WARNING - Worker tcp://10.1.4.7:40121 "
                      "(pid=8812) is slow to accept SIGTERM; sending SIGKILL\n")
    assert "it sent SIGKILL" in summary and "not in this input" not in summary, summary


@pytest.mark.parametrize("case,words", [
    ("dask__distributed__1829", "Dask's nanny restarted a worker"),
    ("dask__dask__11346", "Dask's nanny restarted worker tcp://127.0.0.1:44453"),
    ("dask__dask-jobqueue__178", "PBS killed the job for exceeding its requested mem"),
])
def test_real_text(case: str, words: str) -> None:
    summary, steps = read((_CASES / case / "log.txt").read_text(encoding="utf-8"))
    assert words in summary and "not in this input" in summary, summary
    assert "dmesg" not in steps, steps
