"""Classes of real pasted logs found by round 68 of the real-world corpus, each tested on a variant written here
(other commands, pids, job numbers, signals and surrounding lines than the cases' own), with their negatives."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.launchers import parse_rank_deaths


# zsh's own report of a job a signal ended (printjob in zsh's Src/jobs.c): the signal in zsh's lowercase words
# (its sig_msg table: "killed", "segmentation fault", "abort", "bus error", "floating point exception", "illegal
# hardware instruction"), "(core dumped)" after it, padded, then the job's command; headed "zsh: " for the foreground
# job, or by the job's number with the process's pid where LONG_LIST_JOBS is set (as oh-my-zsh sets it). Refused:
# invoke-ai/InvokeAI#342 ("[1]    9301 killed     python3 scripts/dream.py") and rocm-arch/tensorflow-rocm#21
# ("[1]    2964311 abort (core dumped)  python test.py"); other jobs, pids and commands here
@pytest.mark.parametrize(("line", "signal", "pid"), [
    ("[2]    71544 killed     python -m train --config configs/base.yaml", "SIGKILL", 71544),
    ("[1]  + 80211 segmentation fault (core dumped)  ./build/bin/solver input.nml", "SIGSEGV", 80211),
    ("[3]  - 1207 bus error  python demo_network.py", "SIGBUS", 1207),
    ("zsh: abort (core dumped)  python -c 'import torch; torch.zeros(1).cuda()'", "SIGABRT", None),
    ("zsh: killed     accelerate launch finetune.py", "SIGKILL", None),
    ("zsh: floating point exception  ./a.out", "SIGFPE", None),
    ("zsh: illegal hardware instruction  python3 bench.py", "SIGILL", None),
])
def test_zshs_report_of_a_job_a_signal_ended_is_its_death(line: str, signal: str, pid: int | None) -> None:
    deaths = parse_rank_deaths(f"Loading checkpoint shards: 100%|##########| 4/4 [00:09<00:00,  2.31s/it]\n{line}\n")
    assert [(d.rank, d.signal, d.pid) for d in deaths] == [(None, signal, pid)], deaths


def test_zshs_killed_job_after_loading_lines_is_a_sigkill_of_no_rank() -> None:
    result = report(">> Loading model from models/ldm/model.ckpt",
                    "DiffusionWrapper has 865.91 M params.",
                    "[2]    40177 killed     python3 scripts/txt2img.py --plms --n_samples 1")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "SIGKILL" in result.verdict.summary and "40177" in result.verdict.summary, result.verdict.summary
    assert result.verdict.culprit_ranks == (), result.verdict


def test_zshs_aborted_job_after_a_runtimes_guarantee_is_a_sigabrt() -> None:
    result = report("2023-02-11 09:14:02.511873: I tensorflow/stream_executor/platform/default/dso_loader.cc:49] "
                    "Successfully opened dynamic library libamdhip64.so",
                    'hip_code_object.cpp:92: guarantee(false && "hipErrorNoBinaryForGpu: Unable to find code object '
                    'for all current devices!")',
                    "zsh: abort (core dumped)  python3 check_gpu.py")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "SIGABRT" in result.verdict.summary, result.verdict.summary


@pytest.mark.parametrize("line", [
    # zsh's own reports of jobs that ended well, or a stop that is no death
    "[1]  + 71544 done       python -m train",
    "[2]  - 1207 exit 1     python demo_network.py",
    "[1]  + 80211 suspended  vim notes.md",
    # the words inside a program's own sentence, or a list of jobs without zsh's head
    "the worker was killed     because it ran out of time",
    "status: segmentation fault  (see core file)",
    "job 3 abort (core dumped)  by request",
])
def test_other_job_lines_and_words_are_no_death(line: str) -> None:
    assert parse_rank_deaths(f"step 10 loss 0.31\n{line}\n") == ()


# The shell's message of a job's death alone on its line where the reporter's paste kept a shell prompt's "$" before
# it, as before the command they ran (google/gemma.cpp#30, "$  Killed" after "$  ./gemma ..."): refused
@pytest.mark.parametrize(("line", "signal"), [
    ("$ Killed", "SIGKILL"),
    ("$  Segmentation fault (core dumped)", "SIGSEGV"),
    ("$ Aborted (core dumped)", "SIGABRT"),
])
def test_the_shells_job_message_after_a_pasted_prompt_is_the_death(line: str, signal: str) -> None:
    found = parse_crash_line(line)
    assert found is not None and found.kind is CrashLineKind.FATAL_SIGNAL and found.signal == signal, found
    result = report("$ ./llama-cli -m models/7B/ggml-model-q4_0.gguf -p 'Hello'", line)
    assert result.verdict.kind.value == "crash", result.verdict.summary
    # the same verdict as the message without the prompt before it
    bare = report("$ ./llama-cli -m models/7B/ggml-model-q4_0.gguf -p 'Hello'", line.lstrip("$ "))
    assert result.verdict == bare.verdict, (result.verdict, bare.verdict)


@pytest.mark.parametrize("line", [
    "$ Killed the old workers with pkill before the rerun",
    "$ echo Killed",
])
def test_a_prompt_before_other_words_is_no_death(line: str) -> None:
    assert parse_crash_line(line) is None
