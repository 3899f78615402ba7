"""The typed facts of a verdict's failure (triage.model.Cause) that its words carry, read once where the verdict is
decided (the final step "the failure's facts", triage.analysis.verdict.decide), so that the next steps
(triage.analysis.advice) are chosen by facts, never by searching the summary (pure). The signal is not read here: the
rule that builds the verdict gives it from the failure's record. What is read here are the readers' own phrases
(triage.parsing.frameworks, launchers, crashlog word a platform's kill so) and the memory's words
(triage.analysis.oom.memory_run_out)."""

from __future__ import annotations

from dataclasses import replace

from triage.analysis.oom import memory_run_out
from triage.lazy_regex import lazy_regex
from triage.model import Ending, Verdict
from triage.parsing.frameworks import PBS_ANY_LIMIT, SPARK_LOST

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


def ending_of(text: str) -> Ending | None:
    """How a platform says it ended the process, in the readers' words in ``text`` (the first that applies, in this
    order): Dask's nanny at the worker's memory budget, Ray's memory monitor, PBS at the CPU asked for, Spark's
    executor lost with no word of why, PBS at a limit its mail does not name, a scheduler or container runtime at the
    memory limit the job asked for; None where none says so."""
    if _DASK_LIMIT_KILL.search(text) is not None:
        return Ending.NANNY_MEMORY
    if _RAY_MEMORY_KILL.search(text) is not None:
        return Ending.RAY_MEMORY
    if _CPU_LIMIT_KILL.search(text) is not None:
        return Ending.CPU_LIMIT
    if SPARK_LOST in text:
        return Ending.EXECUTOR_LOST
    if PBS_ANY_LIMIT in text:
        return Ending.SOME_LIMIT
    if _LIMIT_KILL.search(text) is not None:
        return Ending.MEMORY_LIMIT
    return None


def with_facts(verdict: Verdict) -> Verdict:
    """``verdict`` with the facts its words carry in its cause (its signal kept as its rule gave it)."""
    cause = replace(verdict.cause, memory=memory_run_out(verdict.summary), ending=ending_of(verdict.summary))
    return verdict if cause == verdict.cause else replace(verdict, cause=cause)
