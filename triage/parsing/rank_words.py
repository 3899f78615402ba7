"""The shapes in which a line names a rank in words or by a bare tag, whatever the launcher, as one declared table:
each row a shape, what its number is (its trust), and an example. A new launcher's or framework's way of naming a
rank is one row here (tests/analysis/test_gaps_s39.py holds every row's example to its number).

Trust (what the number is):

- ``global``: a global rank of the job (``rank 3``, ``[rank3]``, Open MPI's ``[1,3]<stderr>:``, MVAPICH2's
  ``mpi_rank_3``, Ascend's ``RankID 3``, Cray's ``PE 3``);
- ``local``: a rank within its node (``local_rank 3``): a global rank only on one node;
- ``index``: a launcher's index of its processes or tasks (``worker 3``, ``process 3``, ``task 3``, srun's ``3: ``
  label): the rank where that launcher started the ranks, not under another launcher.

Numbers that name no rank, however they are written: a GPU or device (``cuda:3``, ``GPU 3``, ``device 3``), a port
(``localhost:29500``), a pid (``process 48213``: an index of more than three digits; ``proc 101``), a source file's line
(``proxy.cc:1587``, ``enzo.C:918``: a file's name with a source language's extension, ``SOURCE_EXTENSIONS``), an argv's
flag (``--local_rank=3``). ``NOT_RANK_HOSTS`` are the words before ``:N`` that name
a device or a port, never a host.

One rule for what a number names (the table's trust, and the launcher prefixes' reading, triage.parsing.log_prefix):

1. A global rank, wherever it is read: a launcher's or a framework's own word ``rank`` without ``local``, torchrun's
   ``[rankN]:``, Lightning's ``[rank: N]`` (also ``[rank N]``, ``rank=N``: its global rank), Open MPI's ``[job,N]``,
   MVAPICH2's ``mpi_rank_N``, Ascend's ``RankID``, Cray's ``PE``, and triage's own ``[host:N]`` tag.
2. A local rank (a rank within its node): ``local_rank N``, torchrun --tee's ``[defaultN]:``, torchx's
   ``role/replica [N]:``, and ``[host:N]`` where the input shows torchrun ``--role`` or several nodes. It is the global
   rank only where the input shows one node; on several nodes it names a process of its node, not a rank of the job.
3. A launcher's index (``srun --label``'s ``N: ``, ``worker N``, ``task N``, ``process N``, ``process_index=N``): the
   rank only where that launcher started the ranks themselves (srun's task N under ``srun torchrun`` is a node's
   launcher, not rank N).
4. Never a rank: a device, a port, a pid, a source line, an argv's flag (below).

(Not done: the launcher prefixes and the per-launcher records still apply rules 2 and 3 with their own patterns, and
the named-failure reader takes every row's number as a global rank: the trust column is declared, not yet read.)

(Launcher prefixes at the start of a line, with the host or pid they carry, are read by triage.parsing.log_prefix;
this table is the reading of the words of a line those prefixes leave, used by triage.parsing.named_failure.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from triage.lazy_regex import lazy_regex


@dataclass(frozen=True)
class RankShape:
    """A shape of log line that names a rank number, and how far its number is trusted."""
    name: str
    pattern: str         # one group, ``(?P<n>...)``: the number
    trust: str           # "global", "local" or "index"
    example: str         # a line of this shape naming 7


# Words before ":N" at a line's start that name a device, an accelerator or a port, never a host.
NOT_RANK_HOSTS = ("cuda", "gpu", "npu", "xpu", "hpu", "mps", "xla", "tpu", "device", "dev", "port", "localhost",
                  "line", "step", "epoch", "iter", "iteration", "batch", "loss", "time", "pid", "tid")
_NOT_HOST = "".join(f"(?<!\\b{word})" for word in NOT_RANK_HOSTS)
# a source file's name before ":N" (its line), in the languages' extensions and cases: C and C++ (Enzo's
# "enzo.C:918", ".cc", ".cxx", ".H"), CUDA and HIP, Fortran (".F90", ".f"), Python and Cython, Julia, Chapel, Java
# (not an extension that is also a country's domain, ".rs", ".cl": a host's name may end so)
SOURCE_EXTENSIONS = ("c", "C", "cc", "cpp", "cxx", "c++", "cu", "cuh", "h", "H", "hh", "hpp", "hxx", "inl", "f", "F",
                     "f90", "F90", "f95", "F95", "f03", "F03", "f08", "F08", "f77", "F77", "for", "FOR", "py", "pyx",
                     "jl", "chpl", "java", "hip")
_SOURCE = "".join(f"(?<!\\.{re.escape(ext)})" for ext in SOURCE_EXTENSIONS)
_END = r"\b(?![.:]\d)"

# Order matters only where two shapes start at the same place: the first row wins there; otherwise the leftmost
# shape in the line wins.
SHAPES: tuple[RankShape, ...] = (
    RankShape("Open MPI's --tag-output", r"^\[\d+,(?P<n>\d+)\]<std(?:err|out)>:", "global", "[1,7]<stderr>: failed"),
    RankShape("srun --label", r"^(?P<n>\d{1,5}):\s", "index", "7: failed"),
    RankShape("torchrun's tag", r"\[rank(?P<n>\d+)\]", "global", "[rank7] failed"),
    RankShape("MVAPICH2's head", r"(?<![A-Za-z])mpi_rank_(?P<n>\d{1,6})\b", "global", "[node1:mpi_rank_7] failed"),
    RankShape("Ascend's RankID", r"\bRankI[Dd]\s*[:=]?\s*(?P<n>\d{1,6})" + _END, "global", "RankID 7 failed"),
    RankShape("Paddle's rank list", r"\brank=\[(?P<n>\d{1,6})\]", "global",
              "the trainer process with rank=[7] was aborted"),
    RankShape("a local rank", r"(?<![-\w])local[ _]rank\s*(?:=|:|#|\bof\b)?\s*(?P<n>\d{1,6})" + _END, "local",
              "local_rank 7 failed"),
    RankShape("rank in words", r"(?<![-\w])(?:global[ _]rank|rank|RANK|Rank)\s*(?:=|:|#|\bof\b)?\s*(?P<n>\d{1,6})"
              + _END, "global", "rank 7 failed"),
    RankShape("rank joined to its number", r"(?<![-\w])(?:rank|RANK|Rank)(?:[-_]|\[|\()(?P<n>\d{1,6})[\])]?"
              + _END, "global", "rank-7 failed"),
    RankShape("Cray's processing element", r"(?<![-\w])PE\s*(?:=|:|#)?\s*(?P<n>\d{1,6})" + _END, "global",
              "PE 7 failed"),
    RankShape("a process index", r"\bprocess_index\s*[:=]\s*(?P<n>\d{1,3})" + _END, "index", "process_index=7 failed"),
    # (never "Process-1", Python's name of its first child process, nor "ForkPoolWorker-3": 1-based names, no ranks;
    # nor "proc 101", a pid in Python's thread reports; nor the worker a library starts in its own process, oneCCL's
    # "failed to start worker # 0", "Starting worker 3", "STARTING WORKER 3": a thread of that process, numbered by it;
    # the verb in any case)
    # (nor Spark's task of a stage, "Task 3 in stage 1.0 failed 4 times", "Lost task 3.3 in stage 1.0 (TID 7243, ...)":
    # TaskSetManager's and DAGScheduler's index of a partition's task within its stage, run on whichever executor, no
    # process of the job)
    # (nor a DataLoader's worker, a subprocess its loader numbers from 0 in each rank: "dataloader worker 3 failed to
    # prefetch", torch's "Caught RuntimeError in DataLoader worker process 3.")
    RankShape("worker, task or process", r"(?<![Ss]tart )(?<![Ss]tarting )(?<!START )(?<!STARTING )"
              r"(?<![Ll]oader )(?<![Ll]oader worker )(?<!LOADER )"
              r"\b(?:[Ww]orker|WORKER|[Tt]ask|[Pp]rocess)"
              r"(?:_|\s*(?:=|:|#)?\s*)"
              r"(?P<n>\d{1,3})" + _END + r"(?! in stage \d)", "index", "worker 7 failed"),
    # host:rank at the start, never a source file's line (NCCL's "proxy.cc:1587 NCCL WARN ..."), a device or a port,
    # nor the program and pid of a PSM-style fabric library's signal handler ("python:699378 terminated with signal 6 at
    # PC=7f87... SP=7ffe...": __progname and getpid())
    RankShape("host:rank", r"^[A-Za-z][\w.-]*" + _SOURCE + _NOT_HOST + r":(?P<n>\d{1,5})(?=\s)"
              r"(?! terminated with signal \d+ at PC=)", "global", "node07:7 failed"),
)

_ANY = lazy_regex("|".join(f"(?P<s{index}>{shape.pattern.replace('(?P<n>', f'(?P<n{index}>')})"
                           for index, shape in enumerate(SHAPES)))


def rank_shape(line: str) -> tuple[int, RankShape] | None:
    """The number the first rank-naming shape of ``line`` gives, with its shape (and so its trust)."""
    match = _ANY.search(line)
    if match is None:
        return None
    for index, shape in enumerate(SHAPES):
        number = match.group(f"n{index}")
        if number is not None:
            return int(number), shape
    return None


def named_rank(line: str) -> int | None:
    """The rank (worker, process, task) a line names, by the first of the shapes above."""
    found = rank_shape(line)
    return None if found is None else found[0]



def rank_at(line: str) -> int | None:
    """Where in ``line`` the first rank-naming shape starts, or None."""
    match = _ANY.search(line)
    return None if match is None else match.start()
