"""The processes a dump collects from, checked: the pids given must be alive and, unless
``all_users``, the invoker's (the one home of that check for `triage dump` and `triage collect`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from triage.collectors.common import Target, may_touch, process_alive
from triage.collectors.discover import foreign_pids, targets_for_pids
from triage.errors import InputError
from triage.layout import HostPaths
from triage.private_files import read_json


def dead_pids(pids: Sequence[int]) -> list[int]:
    """The pids among ``pids`` that name no live process (an exited one, a zombie)."""
    return [pid for pid in pids if not process_alive(pid)]


def pid_targets(pids: Sequence[int], all_users: bool, where: str | None = None) -> list[Target]:
    """Targets for explicit pids; an InputError (exit 2) for a dead pid or another user's process.
    ``where`` (a host name) starts the message, for answers that come back from many nodes."""
    head = f"{where}: " if where else ""
    dead = dead_pids(pids)
    if dead:
        raise InputError(f"{head}no such process: {' '.join(map(str, dead))}", hint="check the pid with `ps`")
    foreign = foreign_pids(pids, all_users)
    if foreign:
        raise InputError(f"{head}process {' '.join(map(str, foreign))} belongs to another user",
                         hint="root may collect other users' processes with --all-users")
    return targets_for_pids(pids)


def run_targets(host: HostPaths, all_users: bool = False) -> list[Target]:
    """A run directory's ranks on this node that are alive (their worker.json's pid) and ours."""
    targets = []
    for rank in host.ranks():
        paths = host.rank(rank)
        try:
            info: Any = read_json(paths.worker)
        except (OSError, ValueError):
            continue
        pid = info.get("pid") if isinstance(info, dict) else None
        if isinstance(pid, int) and process_alive(pid) and may_touch(pid, all_users):
            targets.append(Target(rank=rank, pid=pid, local_rank=info.get("local_rank"), paths=paths))
    return targets
