"""Kernel messages (dmesg) as events: Xid, segfault, OOM (parsed by triage.parsing.dmesg)."""

from __future__ import annotations

from triage.model.evidence import Event, EventKind
from triage.parsing.dmesg import OomEvent, SegfaultEvent, XidEvent, scan_dmesg


def dmesg_events(text: str, host: str, path: str) -> list[Event]:
    out: list[Event] = []
    for event in scan_dmesg(text):
        if isinstance(event, XidEvent):
            detail = (f"Xid {event.code} on {host}{f' ({event.pci})' if event.pci else ''}: {event.info.meaning}; "
                      f"likely {event.info.cause.value}; {event.info.action}")
            out.append(Event(EventKind.XID, detail, host=host, evidence=(path,), fatal=True))
        elif isinstance(event, SegfaultEvent):
            out.append(Event(EventKind.SEGFAULT, f"{event.process}[{event.pid}] segfault on {host}"
                             f"{f' in {event.library}' if event.library else ''}", host=host, evidence=(path,)))
        elif isinstance(event, OomEvent):
            out.append(Event(EventKind.OOM, f"kernel OOM killer killed {event.process or '?'}[{event.pid}] on {host}",
                             host=host, evidence=(path,)))
    return out
