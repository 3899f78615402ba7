"""Subkind ``oom``: the verdict's failure ran out of memory, as its own text shows it (pure).

A device's allocator (``CUDA out of memory``, ``torch.OutOfMemoryError``, ``CUDA error: out of memory``, ``NPU out of
memory``, ``XPU out of memory``, a GPU error in a library's words (AMReX's ``CUDA error 2 in file ...: out of
memory``), HIP's ``hipErrorOutOfMemory``, ``cudaErrorMemoryAllocation``, Level Zero's
``ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY``, MindSpore's ``Device(id:N) memory isn't enough``, XLA's
``RESOURCE_EXHAUSTED: Out of memory`` and its StreamExecutor allocator's ``Failed to allocate request for SIZE (NB) on
device ordinal N``), Node.js's (V8's) ``Allocation failed - JavaScript heap out of memory`` (``... process out of
memory``, V8's own ``Fatal javascript OOM in ...``: triage.parsing.node_heap), the host's memory in a program's own
exception (Python's ``MemoryError``, NumPy's ``_ArrayMemoryError``, PyTorch's ``DefaultCPUAllocator: can't allocate
memory``) or the host's OOM killer (the
kernel's ``Out of memory: Killed process``, ``oom-kill``, ``invoked oom-killer``, Kubernetes' ``OOMKilled``, srun's
``Out Of Memory``, a crash record the kernel's OOM line explains), or a batch system's kill at the memory limit the job
asked for, in its own words (slurmstepd's ``Step 551.0 exceeded memory limit (N > N), being killed``, sacct's and seff's
state ``OUT_OF_MEMORY``, PBS's ``job killed: mem N kb exceeded limit``, LSF's ``TERM_MEMLIMIT``, YARN's ``Container
killed by YARN for exceeding memory limits``), or Ray's memory monitor's kill (``Task was killed due to the node running
low on memory``, the raylet's ``N Workers (tasks / actors) killed due to memory pressure (OOM)``). The verdict's kind
stays what it is; only a failure's verdict with no other subkind gets it, and never from triage's own guess
(``SIGKILL is often the kernel OOM killer``): the words must be the input's.
"""

from __future__ import annotations

import re
from dataclasses import replace

from triage.lazy_regex import lazy_regex
from triage.model import Memory, MismatchKind, Verdict, VerdictKind
from triage.parsing import node_heap

# the host's memory in a program's own exception: Python's MemoryError (bare, with its message, or NumPy's
# _ArrayMemoryError: "Unable to allocate 12.0 GiB for an array ..."), PyTorch's CPU allocator (c10's alloc_cpu.cpp:
# "DefaultCPUAllocator: can't allocate memory: you tried to allocate N bytes", "... not enough memory: ...")
# (not PyCUDA's pycuda._driver.MemoryError, a GPU allocation's: "cuMemAlloc failed: out of memory")
HOST_MEMORY_ERROR = (r"(?:\b|_Array)(?<!pycuda\._driver\.)MemoryError\b"
                     r"(?![^\n]{0,40}\b(?:CUDA|GPU|device|cuMem\w*)\b)"
                     r"|\bDefaultCPUAllocator: (?:can't allocate memory|not enough memory)\b")
_HOST_MEMORY = lazy_regex(HOST_MEMORY_ERROR)
_OOM = lazy_regex(
    r"\b(?:CUDA|NPU|XPU|HIP|MPS|GPU|cuda|npu|xpu|hip|mps|gpu)\b[^\n]{0,200}?\bout of memory\b"
    r"|\bOutOfMemoryError\b|\b(?:cudaErrorMemoryAllocation|hipErrorOutOfMemory|CUDA_ERROR_OUT_OF_MEMORY)\b"
    r"|\b(?:ZE|UR)_RESULT_ERROR_OUT_OF_DEVICE_MEMORY\b"
    r"|\bDevice(?:\(id:\d+\))? memory isn't enough and alloc failed\b"
    r"|\bRESOURCE_EXHAUSTED: Out of memory\b"
    r"|\bAllocation failed - (?:JavaScript heap|process) out of memory\b|\bFatal (?:javascript|process) OOM in\b"
    r"|\bFailed to allocate request for [\d.]+ ?[KMGTP]?i?B \(\d+B\) on device ordinal \d+"
    r"|\bOut of memory: Kill(?:ed)? process\b|\boom-kill(?:er)?\b|\boom_kill_process\b|\bOOMKilled\b"
    r"|\bsrun: (?:error: )?[^\n]{0,80}?Out Of Memory\b|\bDetected \d+ oom[_-]kill events?\b"
    r"|\bkilled by the kernel OOM killer\b|\bthe kernel OOM killer ended it\b"
    r"|\bcuMem\w*Alloc\w* failed: out of memory\b"
    r"|\b(?:Job|Step) \S+ exceeded (?:virtual )?memory limit \(\d+ > \d+\), being killed"
    r"|\bOUT_OF_ME(?:MORY\b|\+)|\bPBS: job killed: v?mem\b[^\n]{0,40}? exceeded limit\b|\bTERM_MEMLIMIT\b"
    r"|\bkilled by YARN for exceeding (?:\w+ )?memory limits\b"
    # Ray's memory monitor's kill, in its own words and in triage's reading of them (triage.parsing.frameworks,
    # launchers, crashlog)
    r"|\bTask was killed due to the node running low on memory\b|\bkilled due to memory pressure \(OOM\)"
    r"|\bRay's memory monitor\b|\bRay killed a worker for memory pressure\b"
    r"|" + HOST_MEMORY_ERROR, re.IGNORECASE)
# triage's own guesses in a summary, never the input's words
_GUESS = lazy_regex(r"often the (?:kernel|host's) OOM killer|was it OOM-killed\?|usually the kernel OOM killer",
                    re.IGNORECASE)
_FAILURES = (VerdictKind.CRASH, VerdictKind.EXCEPTION, VerdictKind.FAILURE_UNLOCATED, VerdictKind.STOPPED,
             VerdictKind.MISSING_RANK, VerdictKind.NETWORK_ERROR)


def shows_oom(text: str) -> bool:
    """``text`` says, in an allocator's or the OOM killer's own words, that memory ran out."""
    return _OOM.search(_GUESS.sub("", text)) is not None


def host_memory_error(text: str) -> bool:
    """``text`` holds a program's own exception of the host's memory running out (Python's MemoryError, PyTorch's CPU
    allocator), no device's allocator."""
    return _HOST_MEMORY.search(text) is not None


def with_oom(verdict: Verdict) -> Verdict:
    """``verdict`` with subkind ``oom`` where it is a failure with no other subkind whose text shows memory ran out."""
    if verdict.kind not in _FAILURES or verdict.subkind is not None or not shows_oom(verdict.summary):
        return verdict
    return replace(verdict, subkind=MismatchKind.OOM)


def memory_run_out(text: str) -> Memory | None:
    """Which memory ``text`` (a verdict's words) says ran out, the fact its next steps are chosen by: Node.js's heap
    limit or its process's memory (triage.parsing.node_heap's words), the host's in a program's own exception, or a
    device's allocator (``out of memory``, ``OutOfMemoryError``, Level Zero's ``OUT_OF_DEVICE_MEMORY``); None where it
    says none."""
    if node_heap.HEAP_WORDS in text:
        return Memory.NODE_HEAP
    if node_heap.PROCESS_WORDS in text:
        return Memory.NODE_PROCESS
    if host_memory_error(text):
        return Memory.HOST
    if "out of memory" in text or "OutOfMemoryError" in text or "OUT_OF_DEVICE_MEMORY" in text:
        return Memory.DEVICE
    return None
