"""What the live agent knew when it collected a node bundle: the manifest's ``extra`` (one place).

The agent (``triage launch``) writes into a hang bundle's ``manifest.json`` ``extra``:

- ``activity``: each sampled rank busy or blocked, with its CPU share, I/O rate and stack;
- ``verdict_kind`` (``init_hang``) and ``hang_source`` (progress | nccl | watchdog | init | rendezvous);
- ``init``: for a hang before the first collective, the ranks waiting and those that never joined,
  where they wait, the store address (MASTER_ADDR:MASTER_PORT) and for how long;
- ``children``: each dumped child of a rank (pid, DataLoader worker id when read, dump file).

:func:`agent_facts` reads them (and the children's py-spy dumps) into frozen values; a field of the
wrong type is noted in ``skipped`` and left out, never raised. :class:`AgentEvidence` carries them
to the analysis next to the plain :class:`Evidence`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from triage.bundle import Manifest
from triage.load.fr_files import read_text
from triage.model.evidence import Evidence
from triage.parsing.stacks import ThreadStack, parse_pyspy_text

MAX_ITEMS = 4096          # ranks or children read from one manifest


@dataclass(frozen=True)
class RankActivityFact:
    """One rank as the agent sampled it (two samples a few seconds apart)."""

    rank: int
    pid: int | None
    activity: str                       # busy | blocked | gone | unknown
    cpu_share: float | None = None
    io_bytes_per_s: float | None = None
    stack_changed: bool | None = None
    where: str | None = None            # "main (job.py:51)"

    def figures(self) -> str:
        """``CPU 1%, I/O 0 B/s, same stack``."""
        parts = []
        if self.cpu_share is not None:
            parts.append(f"CPU {self.cpu_share * 100:.0f}%")
        if self.io_bytes_per_s is not None:
            parts.append(f"I/O {self.io_bytes_per_s:.0f} B/s" if self.io_bytes_per_s < 1000
                         else f"I/O {self.io_bytes_per_s / 1e3:.0f} kB/s")
        if self.stack_changed is not None:
            parts.append("stack moving" if self.stack_changed else "same stack")
        return ", ".join(parts)

    def line(self) -> str:
        """``rank 1 blocked in main (job.py:51) (CPU 1%, I/O 0 B/s, same stack)``."""
        where = f" in {self.where}" if self.where else ""
        figures = f" ({self.figures()})" if self.figures() else ""
        return f"rank {self.rank} {self.activity}{where}{figures}"


@dataclass(frozen=True)
class InitFact:
    """A hang before the first collective as the agent saw it."""

    waiting: tuple[int, ...]            # ranks waiting in their start-up call
    never_joined: tuple[int, ...]       # local ranks that never reached it
    where: str                          # "init_process_group" | "torchrun's rendezvous"
    store: str | None = None            # "127.0.0.1:29500"
    key: str | None = None              # the store key waited on, when known
    seconds: float | None = None        # how long they had waited
    nodes_joined: int | None = None     # torchrun rendezvous: nodes there / nodes wanted
    nodes_wanted: int | None = None
    reason: str = ""                    # the agent's own line


@dataclass(frozen=True)
class ChildStack:
    """One child process of a rank as the bundle holds it."""

    pid: int
    threads: tuple[ThreadStack, ...]
    worker_id: int | None = None      # DataLoader worker id, when the agent could read it
    path: str | None = None           # the dump file


@dataclass(frozen=True)
class AgentFacts:
    bundle: str
    host: str
    trigger: str
    reason: str
    verdict_kind: str | None = None
    hang_source: str | None = None
    activity: tuple[RankActivityFact, ...] = ()
    init: InitFact | None = None
    children: tuple[tuple[int, ChildStack], ...] = ()    # (rank, child)

    def children_of(self, rank: int) -> tuple[ChildStack, ...]:
        return tuple(child for r, child in self.children if r == rank)


@dataclass(frozen=True)
class AgentEvidence(Evidence):
    """Evidence of a run directory plus what each node's agent knew (its latest bundle)."""

    agent: tuple[AgentFacts, ...] = ()


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _str(value: Any, limit: int = 300) -> str | None:
    return value[:limit] if isinstance(value, str) and value else None


def _ranks(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(sorted({v for v in value[:MAX_ITEMS] if _int(v) is not None and v >= 0}))


def _activity(value: Any, where: str, skipped: list[str]) -> tuple[RankActivityFact, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        skipped.append(f"{where}: extra.activity is not a list (ignored)")
        return ()
    out = []
    for item in value[:MAX_ITEMS]:
        rank = _int(item.get("rank")) if isinstance(item, dict) else None
        kind = _str(item.get("activity"), 20) if isinstance(item, dict) else None
        if rank is None or kind is None or not isinstance(item, dict):
            skipped.append(f"{where}: an extra.activity entry without rank/activity (ignored)")
            continue
        changed = item.get("stack_changed")
        out.append(RankActivityFact(rank, _int(item.get("pid")), kind, _float(item.get("cpu_share")),
                                    _float(item.get("io_bytes_per_s")),
                                    changed if isinstance(changed, bool) else None, _str(item.get("where"))))
    return tuple(out)


def _init(value: Any, where: str, skipped: list[str]) -> InitFact | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        skipped.append(f"{where}: extra.init is not an object (ignored)")
        return None
    return InitFact(waiting=_ranks(value.get("waiting")), never_joined=_ranks(value.get("never_joined")),
                    where=_str(value.get("where"), 100) or "init_process_group", store=_str(value.get("store"), 120),
                    key=_str(value.get("key"), 200), seconds=_float(value.get("seconds")),
                    nodes_joined=_int(value.get("nodes_joined")), nodes_wanted=_int(value.get("nodes_wanted")),
                    reason=_str(value.get("reason"), 600) or "")


def _children(bundle: Path, value: Any, where: str, skipped: list[str]) -> tuple[tuple[int, ChildStack], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        skipped.append(f"{where}: extra.children is not a list (ignored)")
        return ()
    out: list[tuple[int, ChildStack]] = []
    root = bundle.resolve()
    for item in value[:MAX_ITEMS]:
        if not isinstance(item, dict) or _int(item.get("rank")) is None or _int(item.get("pid")) is None:
            skipped.append(f"{where}: an extra.children entry without rank/pid (ignored)")
            continue
        name = _str(item.get("file"), 300)
        threads: tuple[ThreadStack, ...] = ()
        path: Path | None = None
        if name is not None:
            path = (bundle / name).resolve()
            if not path.is_relative_to(root) or not path.is_file():
                skipped.append(f"{where}: child dump {name!r} missing or outside the bundle (ignored)")
                path = None
            else:
                threads = parse_pyspy_text(read_text(path))
        out.append((item["rank"], ChildStack(item["pid"], threads, _int(item.get("worker_id")),
                                             str(path) if path is not None else None)))
    return tuple(out)


def agent_facts(bundle: Path, manifest: Manifest, host: str, skipped: list[str]) -> AgentFacts | None:
    """The agent's knowledge in ``bundle``'s manifest (None when the manifest holds none of it)."""
    extra: Mapping[str, Any] = manifest.extra if isinstance(manifest.extra, Mapping) else {}
    where = str(bundle / "manifest.json")
    keys = ("activity", "verdict_kind", "hang_source", "init", "children")
    if not any(k in extra for k in keys):
        return None
    return AgentFacts(
        bundle=str(bundle), host=host, trigger=manifest.trigger.value, reason=manifest.reason[:600],
        verdict_kind=_str(extra.get("verdict_kind"), 40), hang_source=_str(extra.get("hang_source"), 40),
        activity=_activity(extra.get("activity"), where, skipped), init=_init(extra.get("init"), where, skipped),
        children=_children(bundle, extra.get("children"), where, skipped))


__all__ = ["AgentEvidence", "AgentFacts", "ChildStack", "InitFact", "RankActivityFact", "agent_facts"]
