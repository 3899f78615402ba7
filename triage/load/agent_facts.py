"""What the live agent knew when it collected a node bundle: the manifest's ``extra`` (one place).

The agent (``triage launch``) writes into a hang bundle's ``manifest.json`` ``extra``:

- ``activity``: each sampled rank busy, blocked or waiting on the GPU, with its CPU share, I/O rate and
  stack (and, waiting on the GPU, the call it waits in and its GPU's utilization);
- ``verdict_kind`` (``init_hang``) and ``hang_source`` (progress | nccl | watchdog | init | rendezvous);
- ``init``: for a hang before the first collective, the ranks waiting and those that never joined,
  where they wait, the store address (MASTER_ADDR:MASTER_PORT) and for how long;
- ``children``: each dumped child of a rank (pid, DataLoader worker id when read, dump file).

:func:`agent_facts` reads them (and the children's py-spy dumps) into frozen values; a field of the
wrong type is noted in ``skipped`` and left out, never raised. ``Evidence.agent`` carries them to the
analysis (the values are triage.model.evidence's :class:`AgentFacts`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from triage.bundle import Manifest
from triage.errors import InputError
from triage.layout import BundlePaths
from triage.load.fr_files import read_text
from triage.model.evidence import AgentFacts, ChildStack, InitFact, RankActivityFact
from triage.parsing.stacks import ThreadStack, parse_pyspy_text

MAX_ITEMS = 4096          # ranks or children read from one manifest


def stack_lines(threads: Sequence[ThreadStack]) -> tuple[str, ...]:
    """The main thread of a py-spy dump as the model keeps stacks: innermost first, ``file:line in func``
    (the only thread when none is marked main; empty when several are and none is)."""
    mains = [t for t in threads if t.is_main] or (list(threads) if len(threads) == 1 else [])
    return tuple(f"{f.filename}:{f.line} in {f.function}" for t in mains[:1] for f in t.frames)


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
        util = _float(item.get("gpu_util"))
        runnable = item.get("runnable")
        out.append(RankActivityFact(rank, _int(item.get("pid")), kind, _float(item.get("cpu_share")),
                                    _float(item.get("io_bytes_per_s")),
                                    changed if isinstance(changed, bool) else None, _str(item.get("where")),
                                    gpu_wait=_str(item.get("gpu_wait"), 200),
                                    gpu_util=util if util is not None and 0.0 <= util <= 1.0 else None,
                                    runnable=runnable if isinstance(runnable, bool) else None))
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
                try:
                    threads = parse_pyspy_text(read_text(path))
                except InputError as exc:          # a binary child dump: skipped, the report goes on
                    skipped.append(exc.one_line())
        out.append((item["rank"], ChildStack(item["pid"], stack_lines(threads), _int(item.get("worker_id")),
                                             str(path) if path is not None else None)))
    return tuple(out)


def agent_facts(bundle: Path, manifest: Manifest, host: str, skipped: list[str]) -> AgentFacts | None:
    """The agent's knowledge in ``bundle``'s manifest (None when the manifest holds none of it)."""
    extra: Mapping[str, Any] = manifest.extra if isinstance(manifest.extra, Mapping) else {}
    where = str(BundlePaths(bundle).manifest)
    keys = ("activity", "verdict_kind", "hang_source", "init", "children")
    if not any(k in extra for k in keys):
        return None
    return AgentFacts(
        bundle=str(bundle), host=host, trigger=manifest.trigger.value, reason=manifest.reason[:600],
        verdict_kind=_str(extra.get("verdict_kind"), 40), hang_source=_str(extra.get("hang_source"), 40),
        activity=_activity(extra.get("activity"), where, skipped), init=_init(extra.get("init"), where, skipped),
        children=_children(bundle, extra.get("children"), where, skipped))


__all__ = ["agent_facts", "stack_lines"]
