"""NCCL's RAS status report (``ncclras``, NCCL 2.24+): communicators whose ranks disagree on how
many operations they launched. Format as NCCL prints it::

    #0-0 (fa93daea854b060b) MISMATCH
      Communicator ranks have different AllGather operation counts
      30 ranks have launched up to operation 640
      2 ranks have launched up to operation 641
      Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124

The ranks listed after a "N ranks have ..." line belong to that group (NCCL lists the smaller ones).
"""

from __future__ import annotations

from dataclasses import dataclass

from triage.lazy_regex import lazy_regex

MARKER = "operation count"

_HEADER = lazy_regex(r"Communicator ranks have different (\w+) operation counts")
_GROUP = lazy_regex(r"^\s*(\d+) ranks? (?:has|have) launched up to operation (\d+)")
_RANK = lazy_regex(r"^\s*Rank (\d+) -- GPU (\d+) managed by process (\d+) on node (\S+)")
_COMM_SIZE = lazy_regex(r"^\s*\d+\s+\d+\s+\d+\s+\d+\s+(\d+)\s+\d+\s+[A-Z]+")   # the Communicators table row


@dataclass(frozen=True)
class RasRank:
    """A rank NCCL's RAS listed."""
    rank: int
    gpu: int
    pid: int
    host: str


@dataclass(frozen=True)
class RasGroup:
    """A group of ranks NCCL's RAS reported at the same operation."""
    count: int                          # how many ranks are in this group
    launched: int                       # the operation number they launched up to
    listed: tuple[RasRank, ...]         # the ranks NCCL named (all of them, or none for a large group)


@dataclass(frozen=True)
class RasOpMismatch:
    """NCCL's RAS report of ranks at different operations of a collective."""
    op: str                             # "AllGather"
    groups: tuple[RasGroup, ...]
    comm_size: int | None               # ranks per communicator, from the table


def parse_ras_mismatches(text: str) -> list[RasOpMismatch]:
    """Every "different ... operation counts" block of a RAS report."""
    if MARKER not in text:
        return []
    found: list[RasOpMismatch] = []
    op: str | None = None
    groups: list[RasGroup] = []
    comm_size: int | None = None

    def flush() -> None:
        if op is not None and len(groups) > 1:
            found.append(RasOpMismatch(op, tuple(groups), comm_size))

    for line in text.splitlines():
        if (size := _COMM_SIZE.match(line)) is not None and comm_size is None:
            comm_size = int(size.group(1))
        if (header := _HEADER.search(line)) is not None:
            flush()
            op, groups = header.group(1), []
        elif op is not None and (group := _GROUP.match(line)) is not None:
            groups.append(RasGroup(int(group.group(1)), int(group.group(2)), ()))
        elif op is not None and groups and (rank := _RANK.match(line)) is not None:
            last = groups[-1]
            item = RasRank(int(rank.group(1)), int(rank.group(2)), int(rank.group(3)), rank.group(4))
            groups[-1] = RasGroup(last.count, last.launched, last.listed + (item,))
        elif op is not None and line.strip().startswith("#"):
            flush()
            op, groups = None, []
    flush()
    return found
