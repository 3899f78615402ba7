"""The typed facts of a verdict's failure (triage.model.Cause) that its words carry, read once where the verdict is
decided (the final step "the failure's facts", triage.analysis.verdict.decide), so that the next steps
(triage.analysis.advice) are chosen by facts, never by searching the summary (pure). The signal is not read here: the
rule that builds the verdict gives it from the failure's record. What is read here are the readers' own phrases
(triage.parsing.frameworks, launchers, crashlog word a platform's kill so) and the memory's words
(triage.analysis.oom.memory_run_out)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TypeVar

from triage.analysis.oom import memory_run_out
from triage.lazy_regex import lazy_regex
from triage.model import DeviceFault, Ending, Verdict
from triage.parsing.frameworks import PBS_ANY_LIMIT, SPARK_LOST
from triage.parsing.peers import NO_BINARY_NOTE

# a batch system's or a container runtime's own kill at the job's memory limit, as the readers word it
# (triage.parsing.frameworks: "YARN killed a container ...", "PBS killed the job for exceeding its requested mem",
# "Slurm killed job N ... for exceeding its memory limit" or "step N.0", Kubernetes' and Vertex AI's "OOMKilled", LSF's
# TERM_MEMLIMIT)
_LIMIT_KILL = lazy_regex(r"\b(?:YARN killed a container|"
                         r"PBS killed the job for exceeding its requested (?:v|p|pv)?mem\b|"
                         r"Slurm killed (?:job|step) \S+ (?:on \S+ )?for exceeding its memory limit)|\bOOMKilled\b|"
                         r"\bTERM_MEMLIMIT\b")

# PBS's kill at the CPU the job asked for ("PBS killed the job for exceeding its requested cput", ncpus, pcput)
_CPU_LIMIT_KILL = lazy_regex(r"\bPBS killed the job for exceeding its requested (?:p?cput|ncpus)\b")

# Dask's nanny restarting a worker past its memory budget ("Dask's nanny restarted worker ... for exceeding 95% of its
# memory limit")
_DASK_LIMIT_KILL = lazy_regex(r"\bDask's nanny restarted (?:a worker|worker \S+) for exceeding \d+% of its "
                              r"memory limit")

# Ray's memory monitor's kill in a verdict's words (triage.parsing.frameworks, launchers, crashlog)
_RAY_MEMORY_KILL = lazy_regex(r"Ray's memory monitor|Ray killed a worker for memory pressure")


_Fact = TypeVar("_Fact")

# How a platform says it ended the process, the first that applies in this order
_ENDINGS: tuple[tuple[re.Pattern[str] | str, Ending], ...] = (
    (_DASK_LIMIT_KILL, Ending.NANNY_MEMORY),     # Dask's nanny at the worker's memory budget
    (_RAY_MEMORY_KILL, Ending.RAY_MEMORY),       # Ray's memory monitor
    (_CPU_LIMIT_KILL, Ending.CPU_LIMIT),         # PBS at the CPU asked for
    (SPARK_LOST, Ending.EXECUTOR_LOST),          # Spark's executor lost with no word of why
    (PBS_ANY_LIMIT, Ending.SOME_LIMIT),          # PBS at a limit its mail does not name
    (_LIMIT_KILL, Ending.MEMORY_LIMIT),          # a scheduler or container runtime at the memory limit asked for
)


def _first(text: str, table: tuple[tuple[re.Pattern[str] | str, _Fact], ...]) -> _Fact | None:
    """The fact of the first entry of ``table`` whose words (a pattern or a literal) ``text`` holds; else None."""
    for words, fact in table:
        if (words in text) if isinstance(words, str) else (words.search(text) is not None):
            return fact
    return None


def ending_of(text: str) -> Ending | None:
    """How a platform says it ended the process, in the readers' words in ``text`` (_ENDINGS); None where none says
    so."""
    return _first(text, _ENDINGS)

# Ascend CANN's AI Core error in a verdict's words (triage.parsing.crashlog reads it as a device fault)
_AICORE = lazy_regex(r"there is an? (?:ai(?:vec|core) error exception|exception of ai(?:vec|core) error)|"
                     r"Aicore kernel execute failed")
# ROCm's own words of a GPU fault in a verdict's summary (triage.parsing.crashlog reads them): the HSA runtime's page
# fault ("Memory access fault by GPU node-2 (Agent handle: 0x...) on address 0x.... Reason: Page not present or
# supervisor privilege."), its queue errors ("HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION"), HIP's error names and
# PyTorch-on-ROCm's "HIP error: ...", the kernel's amdgpu driver ("amdgpu: [gfxhub] page fault")
_ROCM_FAULT = lazy_regex(r"\bMemory access fault by GPU node-\d|\bHSA_STATUS_ERROR_\w|\bhipError[A-Z]\w*|\bHIP error: |"
                         r"(?<![\w/@.-])amdgpu\b[^\n]{0,80}\b(?:page fault|VM fault|ring \w+ timeout)")


# A device's fault a failure names, the first that applies in this order
_DEVICE_FAULTS: tuple[tuple[re.Pattern[str] | str, DeviceFault], ...] = (
    (_AICORE, DeviceFault.AI_CORE),                              # Ascend CANN's AI Core error
    ("_RESULT_ERROR_DEVICE_LOST", DeviceFault.DEVICE_LOST),      # Level Zero's DEVICE_LOST
    (NO_BINARY_NOTE, DeviceFault.NO_BINARY),                     # no code for the GPU's architecture (peers' note)
    (_ROCM_FAULT, DeviceFault.ROCM),                             # ROCm's own words of a GPU fault
)


def device_fault_of(text: str) -> DeviceFault | None:
    """The device's fault the readers' words in ``text`` name (_DEVICE_FAULTS); None where none."""
    return _first(text, _DEVICE_FAULTS)


def with_facts(verdict: Verdict) -> Verdict:
    """``verdict`` with the facts its words carry in its cause (its signal kept as its rule gave it)."""
    text = verdict.summary
    cause = replace(verdict.cause, memory=memory_run_out(text), ending=ending_of(text), device=device_fault_of(text))
    return verdict if cause == verdict.cause else replace(verdict, cause=cause)
