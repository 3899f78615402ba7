"""What a log says about the job's size: ``world_size=8``, torchrun's ``global_world_sizes=[8, ...]``,
Lightning's ``MEMBER: 3/8``, Megatron's ``using world size: 8``, accelerate's ``Num processes: 8``.
The world size of an excerpt is never the highest rank seen plus one."""

from __future__ import annotations

import re
from dataclasses import dataclass

from triage.lazy_regex import lazy_regex

MAX_WORLD_SIZE = 1 << 20     # larger figures in a log are not a world size (or an attack)


@dataclass(frozen=True)
class WorldSize:
    """The job's size as the log says it."""
    size: int
    source: str                  # where it was read, for the coverage line ("world_size=8 in the log")


# (pattern, where it was read, a literal every match holds: the pattern runs only where the text holds it,
# as each pattern starts with \b, which keeps sre from skipping to a literal prefix: ~5 ms per 300 KB of
# excerpt each. The IGNORECASE one's literal is looked for in the lower-cased text: nothing but w, o, r, l,
# d themselves and their capitals matches those letters there)
_PATTERNS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (lazy_regex(r"\bglobal_world_sizes=\[(\d+)"), "torchrun's rendezvous line (global_world_sizes)",
     "global_world_sizes=["),
    (lazy_regex(r"\b(?:WORLD_SIZE|world_size|world size|worldsize)[\"']?\s*(?:=|:|is)?\s*(\d+)\b",
                re.IGNORECASE), "world_size in the log", "world"),
    (lazy_regex(r"\bMEMBER: \d+/(\d+)\b"), "Lightning's MEMBER: n/N line", "MEMBER: "),
    (lazy_regex(r"\bNum processes: (\d+)\b"), "accelerate's Num processes line", "Num processes: "),
    (lazy_regex(r"\bnum_processes[\"']?\s*[=:]\s*(\d+)\b"), "num_processes in the log", "num_processes"),
    (lazy_regex(r"\b(?:nranks|nRanks)\s*[= ]\s*(\d+)\b"), "nranks in NCCL's lines", "anks"),
    (lazy_regex(r"\bGLOBAL_RANK: \d+, MEMBER: \d+/(\d+)"), "Lightning's MEMBER: n/N line", "GLOBAL_RANK: "),
)


def world_size_facts(text: str) -> WorldSize | None:
    """The largest world size the text states, with where it was read; None when it states none."""
    best: WorldSize | None = None
    lowered: str | None = None
    for pattern, source, needle in _PATTERNS:
        if pattern.flags & re.IGNORECASE:
            lowered = text.lower() if lowered is None else lowered
            if needle not in lowered:
                continue
        elif needle not in text:
            continue
        for size in {int(found) for found in pattern.findall(text)}:   # (each NCCL line repeats its nranks=8)
            if 1 < size <= MAX_WORLD_SIZE and (best is None or size > best.size):
                best = WorldSize(size, source)
    return best


# A process's own announcement of its rank and the world's size: DETR/DeiT/LAVIS's
# "| distributed init (rank 0, world 1): env://", Lightning's "GLOBAL_RANK: 0, MEMBER: 1/1", and a program's own
# print of its rank and its communicator's size as keys, at a line's start (an MPI.jl or mpi4py test: "rank=0, size=1,
# dst=0, src=0", "rank = 0, world_size = 1").
_ANNOUNCED = (lazy_regex(r"\bdistributed init \(rank (\d+), world (\d+)\)"),
              lazy_regex(r"\bGLOBAL_RANK: (\d+), MEMBER: \d+/(\d+)\b"),
              lazy_regex(r"^rank ?= ?(\d+), (?:size|world_size|nprocs|nranks) ?= ?(\d+)\b", re.MULTILINE))


# The job's own statement of its world's size, with no rank: ChainerMN's "Num process (COMM_WORLD): 1", and the
# MPI launch command in the input ("$ mpiexec -n 1 python train.py", "mpirun -np 1 ./a.out").
_WORLD_OF = (lazy_regex(r"\bNum process \(COMM_WORLD\): (\d+)"),
             lazy_regex(r"(?:^|[\s$#>])(?:mpirun|mpiexec(?:\.hydra)?|orterun)\s(?:[^\n|;&]*?\s)?-(?:n|np|c)\s+(\d+)\b",
                        re.MULTILINE))


_ANNOUNCED_BY = ("the process's own 'distributed init (rank 0, world 1)' line", "Lightning's MEMBER: 1/1 line",
                 "the process's own 'rank=0, size=1' line")
_WORLD_OF_BY = ("ChainerMN's Num process (COMM_WORLD): 1 line", "the MPI launch command's -n 1")


def sole_process(text: str) -> bool:
    """The text's processes announce themselves, and every one is rank 0 of a world of one, or the job
    states that its world is one process (its launch command's ``-n 1``): the job has one process,
    rank 0, so a failure of no rank prefix is its. False when any announcement names another rank or a
    larger world, or when there is none."""
    return sole_process_source(text) is not None


def sole_process_source(text: str) -> str | None:
    """Where the text says its job is one process (:func:`sole_process`): the first announcement or launch command of
    a world of one, for the coverage line ("a world of one: Lightning's MEMBER: 1/1 line"); None where it does not."""
    announced = [(int(m.group(1)), int(m.group(2)), by) for pattern, by in zip(_ANNOUNCED, _ANNOUNCED_BY, strict=True)
                 if ("distributed init" in text or "GLOBAL_RANK: " in text or "rank" in text)
                 for m in pattern.finditer(text)]
    sizes = [(int(m.group(1)), by) for pattern, by in zip(_WORLD_OF, _WORLD_OF_BY, strict=True)
             if ("COMM_WORLD" in text or "mpirun" in text or "mpiexec" in text or "orterun" in text)
             for m in pattern.finditer(text)]
    if not (announced or sizes) or any((rank, size) != (0, 1) for rank, size, _ in announced) or any(
            n != 1 for n, _ in sizes):
        return None
    return announced[0][2] if announced else sizes[0][1]
