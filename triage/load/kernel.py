"""Kernel messages (dmesg) as events: Xid, segfault, OOM (parsed by triage.parsing.dmesg)."""

from __future__ import annotations

from dataclasses import replace

from triage.model.evidence import Event, EventKind
from triage.parsing.dmesg import DmesgEvent, OomEvent, SegfaultEvent, SXidEvent, XidEvent, scan_dmesg


def dmesg_events(text: str, host: str, path: str) -> list[Event]:
    return [event for raw in scan_dmesg(text) if (event := _event(raw, host, path)) is not None]


def _event(event: DmesgEvent, host: str, path: str) -> Event | None:
    if isinstance(event, XidEvent):
        detail = (f"Xid {event.code} on {host}{f' ({event.pci})' if event.pci else ''}: {event.info.meaning}; "
                  f"likely {event.info.cause.value}; {event.info.action}")
        return Event(EventKind.XID, detail, host=host, evidence=(path,), fatal=True)
    if isinstance(event, SegfaultEvent):
        return Event(EventKind.SEGFAULT, f"{event.process}[{event.pid}] segfault on {host}"
                     f"{f' in {event.library}' if event.library else ''}", host=host, evidence=(path,))
    if isinstance(event, OomEvent):
        return Event(EventKind.OOM, f"kernel OOM killer killed {event.process or '?'}[{event.pid}] on {host}",
                     host=host, evidence=(path,))
    return None


# A kernel line this long before the job's start still counts (clock steps, a late agent start).
JOB_START_SLACK_S = 5.0


def job_kernel_events(text: str, host: str, path: str, pids: dict[int, int], started: float | None,
                      boot: float | None) -> tuple[list[Event], int]:
    """The job's own kernel events, and how many others were left out.

    A line is the job's when it names one of the job's pids (``pids``: pid -> rank; the event is
    tied to that rank), or when it is an Xid that names no process and falls within the job's
    lifetime (the node's GPUs: which of them the job used is not recorded). An Xid of no process
    whose time cannot be placed (no boot time, or no job start) is kept: a GPU that fell off the bus
    names no process, and the dmesg collector already reads only since the job started. Times come
    from the line's own wallclock, else from the recorded boot time."""
    kept: list[Event] = []
    others = 0
    for raw in scan_dmesg(text):
        event = _event(raw, host, path)
        if event is None or isinstance(raw, SXidEvent):
            continue
        when = raw.timestamp.unix(boot)
        pid = raw.pid
        if pid is not None and pid in pids:
            kept.append(replace(event, rank=pids[pid], time=when))
        elif isinstance(raw, XidEvent) and pid is None and not _before(when, started):
            kept.append(replace(event, time=when))
        else:
            others += 1
    return kept, others


def _before(when: float | None, started: float | None) -> bool:
    return when is not None and started is not None and when < started - JOB_START_SLACK_S
