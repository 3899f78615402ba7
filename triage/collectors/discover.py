"""Find a job's ranks on this node without an agent (``triage dump --pid/--match``, ``triage collect``).

A rank is a Python process whose environment names its global rank (``RANK``, else
``SLURM_PROCID``, else ``OMPI_COMM_WORLD_RANK`` / ``PMI_RANK``). Launchers (torchrun's agent,
srun) are skipped: a process with a rank variable whose own descendants also carry one is a
launcher, not a worker.

Only the invoking user's processes are adopted (a rank variable is something any user can set);
``all_users=True`` (``--all-users``, for root) lifts that. For a SLURM job the caller passes
``only_pids``, the pids SLURM itself assigns to the job on this node.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable

import psutil

from triage.collectors.common import Target, may_touch
from triage.collectors.procinfo import read_environ

RANK_VARS = ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")
LOCAL_RANK_VARS = ("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK")


def _int_var(env: dict[str, str], names: Iterable[str]) -> int | None:
    for name in names:
        value = env.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return None


def _is_python(proc: psutil.Process) -> bool:
    try:
        names = [proc.name(), *(proc.cmdline()[:1])]
    except psutil.Error:
        return False
    return any("python" in os.path.basename(n).lower() for n in names if n)


def _cmdline(proc: psutil.Process) -> str:
    try:
        return " ".join(proc.cmdline())
    except psutil.Error:
        return ""


def _has_rank_descendant(proc: psutil.Process) -> bool:
    try:
        children = proc.children(recursive=True)
    except psutil.Error:
        return False
    return any(_int_var(read_environ(c.pid), RANK_VARS) is not None and _is_python(c) for c in children)


def targets_for_pids(pids: Iterable[int]) -> list[Target]:
    """Targets for explicit pids; the rank comes from the environment, else the position."""
    targets: list[Target] = []
    used: set[int] = set()
    for index, pid in enumerate(pids):
        env = read_environ(pid)
        rank = _int_var(env, RANK_VARS)
        if rank is None or rank in used:
            rank = max(used, default=-1) + 1 if rank in used else index
        used.add(rank)
        targets.append(Target(rank=rank, pid=pid, local_rank=_int_var(env, LOCAL_RANK_VARS)))
    return targets


def find_ranks(match: str | None = None, exclude: Iterable[int] = (), all_users: bool = False,
               only_pids: Collection[int] | None = None) -> list[Target]:
    """Python rank processes on this node (optionally only those whose cmdline matches ``match``)."""
    pattern = re.compile(match) if match else None
    skip = {os.getpid(), *exclude}
    found: dict[int, Target] = {}
    for proc in psutil.process_iter():
        if proc.pid in skip or (only_pids is not None and proc.pid not in only_pids):
            continue
        if not may_touch(proc.pid, all_users) or not _is_python(proc):
            continue
        if pattern is not None and not pattern.search(_cmdline(proc)):
            continue
        env = read_environ(proc.pid)
        rank = _int_var(env, RANK_VARS)
        if rank is None or _has_rank_descendant(proc):
            continue
        if rank in found:          # two jobs on the node: keep the older pid, the user can --match
            continue
        found[rank] = Target(rank=rank, pid=proc.pid, local_rank=_int_var(env, LOCAL_RANK_VARS))
    return [found[r] for r in sorted(found)]


def find_matching(match: str, all_users: bool = False) -> list[Target]:
    """Python processes whose cmdline matches, with or without a rank variable (ranks by order)."""
    pattern = re.compile(match)
    skip = {os.getpid(), os.getppid()}
    pids = [p.pid for p in psutil.process_iter()
            if p.pid not in skip and may_touch(p.pid, all_users) and _is_python(p) and pattern.search(_cmdline(p))]
    return targets_for_pids(sorted(pids))


def foreign_pids(pids: Iterable[int], all_users: bool = False) -> list[int]:
    """The pids among ``pids`` that belong to another user (empty with ``all_users``)."""
    return [pid for pid in pids if not may_touch(pid, all_users)]
