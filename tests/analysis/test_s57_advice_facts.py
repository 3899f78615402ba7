"""The "what to do next" steps follow the verdict's typed facts (triage.model.Cause, set where the verdict is decided
from the failure's record), not its summary's words: a verdict whose summary is blank gets the steps its facts call
for, and a record the readers know as SIGKILL in other words ("Killed", "exit signals: Killed", "error code -9") gets
SIGKILL's steps, not "the input does not say how it died"."""

from __future__ import annotations

import pytest

from triage.analysis.advice import K8S_KILL_STEP, excerpt_steps
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Cause, DeviceFault, Ending, Memory, Verdict, VerdictKind

_DMESG_OOM = "SIGKILL is usually the kernel OOM killer"


def _crash(summary: str, signal: int | None) -> Verdict:
    return Verdict(VerdictKind.CRASH, summary, culprit_ranks=(2,), cause=Cause(signal=signal))


@pytest.mark.parametrize("platform", [None, "kubernetes"])
def test_a_blank_summary_gets_the_steps_of_its_facts(platform: str | None) -> None:
    worded = excerpt_steps(_crash("CRASH: rank 2 was killed by SIGKILL", 9), "torchrun", platform=platform)
    blank = excerpt_steps(_crash("", 9), "torchrun", platform=platform)
    assert blank == worded
    if platform == "kubernetes":
        assert K8S_KILL_STEP in blank
    else:
        assert any(_DMESG_OOM in step for step in blank), blank


def test_the_signal_fact_not_the_word_picks_the_step() -> None:
    # (a summary that names SIGKILL while the record says another signal: the record's signal is the fact)
    steps = excerpt_steps(_crash("CRASH: rank 2 was killed by SIGSEGV (after SIGKILL was sent to rank 5)", 11),
                          "torchrun", gpu=False)
    assert not any(_DMESG_OOM in step for step in steps), steps


def _steps_of(text: str) -> tuple[str, tuple[str, ...]]:
    result = analyze(load_log_texts([("job.log", text)]))
    return result.verdict.summary, excerpt_steps(result.verdict, gpu=False)


@pytest.mark.parametrize("last", [
    "Killed",                                                   # a shell's record of its child's SIGKILL
    "Application 4417 exit signals: Killed",                    # Cray ALPS's aprun
    "ERROR: error code -9",                                     # a wrapper's negative return code
])
def test_a_sigkill_in_other_words_gets_sigkills_steps(last: str) -> None:
    summary, steps = _steps_of(f"loading shards\nepoch 1: 40% 812/2030 [03:11<04:40]\n{last}\n")
    assert summary.startswith("CRASH"), summary
    assert any(_DMESG_OOM in step for step in steps), (summary, steps)
    assert not any("does not say how it died" in step for step in steps), steps


@pytest.mark.parametrize(("memory", "words"), [
    (Memory.DEVICE, "batch size"),
    (Memory.HOST, "free -g"),
    (Memory.NODE_HEAP, "--max-old-space-size"),
    (Memory.NODE_PROCESS, "under Node"),
])
def test_the_memory_that_ran_out_is_a_fact(memory: Memory, words: str) -> None:
    blank = Verdict(VerdictKind.EXCEPTION, "", culprit_ranks=(1,), cause=Cause(memory=memory))
    steps = " ".join(excerpt_steps(blank, "torchrun"))
    assert words in steps, steps
    others = " ".join(excerpt_steps(Verdict(VerdictKind.EXCEPTION, "", culprit_ranks=(1,)), "torchrun"))
    assert words not in others, others


@pytest.mark.parametrize(("line", "memory"), [
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 3; 79.15 GiB total capacity)",
     Memory.DEVICE),
    ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 48.0 GiB for an array with shape (80000, 80000)",
     Memory.HOST),
    ("FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory", Memory.NODE_HEAP),
])
def test_the_verdict_carries_the_memory_its_record_names(line: str, memory: Memory) -> None:
    text = f"[rank1]: Traceback (most recent call last):\n[rank1]:   File \"train.py\", line 80, in step\n[rank1]: {line}\n"
    verdict = analyze(load_log_texts([("job.log", text)])).verdict
    assert verdict.cause.memory is memory, (verdict.summary, verdict.cause)


@pytest.mark.parametrize(("ending", "words"), [
    (Ending.NANNY_MEMORY, "distributed.worker.memory.terminate"),
    (Ending.RAY_MEMORY, "RAY_memory_usage_threshold"),
    (Ending.CPU_LIMIT, "match the threads to -l ncpus"),
    (Ending.EXECUTOR_LOST, "how the executor's container ended"),
    (Ending.SOME_LIMIT, "its mail does not say which"),
    (Ending.MEMORY_LIMIT, "memory limit the job asked for"),
])
def test_a_platforms_end_is_a_fact(ending: Ending, words: str) -> None:
    blank = Verdict(VerdictKind.CRASH, "", cause=Cause(signal=9, ending=ending))
    steps = " ".join(excerpt_steps(blank))
    assert words in steps and _DMESG_OOM not in steps, steps


@pytest.mark.parametrize(("text", "ending"), [
    (("2024-05-02 10:01:12,113 - distributed.nanny.memory - WARNING - Worker tcp://10.1.2.3:40111 (pid=8812) "
      "exceeded 95% memory budget. Restarting...\n"), Ending.NANNY_MEMORY),
    ("=>> PBS: job killed: mem 52428800kb exceeded limit 41943040kb\n", Ending.MEMORY_LIMIT),
])
def test_the_verdict_carries_the_platforms_end(text: str, ending: Ending) -> None:
    verdict = analyze(load_log_texts([("job.log", "epoch 3 step 120 loss 0.41\n" + text)])).verdict
    assert verdict.cause.ending is ending, (verdict.summary, verdict.cause)


@pytest.mark.parametrize(("device", "words"), [
    (DeviceFault.AI_CORE, "aicore_error"),
    (DeviceFault.DEVICE_LOST, "xpu-smi"),
    (DeviceFault.NO_BINARY, "no code object for this GPU's architecture"),
    (DeviceFault.ROCM, "a fault on an AMD GPU"),
])
def test_a_devices_fault_is_a_fact(device: DeviceFault, words: str) -> None:
    # (a summary that says how it died, as those verdicts do: its words are not what picks the step)
    said = Verdict(VerdictKind.CRASH, "CRASH: rank 0 was killed by SIGABRT", culprit_ranks=(0,),
                   cause=Cause(signal=6, device=device))
    assert words in " ".join(excerpt_steps(said)), excerpt_steps(said)
    plain = Verdict(VerdictKind.CRASH, said.summary, culprit_ranks=(0,), cause=Cause(signal=6))
    assert words not in " ".join(excerpt_steps(plain))


def test_the_verdict_carries_the_device_its_words_name() -> None:
    text = ("[rank0]: step 40\n[rank0]: RuntimeError: level_zero backend failed with error: 20 "
            "(UR_RESULT_ERROR_DEVICE_LOST)\n")
    verdict = analyze(load_log_texts([("job.log", text)])).verdict
    assert verdict.cause.device is DeviceFault.DEVICE_LOST, (verdict.summary, verdict.cause)
