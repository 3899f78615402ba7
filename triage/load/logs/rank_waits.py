"""The waits a finished scan concludes on: the watchdog's lines joined per rank (``finish_watchdog``), a store
get/wait that timed out as an init hang or a peer's wait (``finish_store_waits``), and frames that raise one thing
only as the failure they stand for (``finish_raise_sites``). (Part of triage.load.logs.finish's conclusions.)"""

from __future__ import annotations

from dataclasses import replace

from triage.load.logs.scan import LogScan
from triage.model.evidence import Event, EventKind
from triage.parsing.crashlog import CrashLine, CrashLineKind
from triage.parsing.raise_sites import RaiseSiteKind
from triage.parsing.rendezvous import STORE_WAIT_DETAIL


def finish_watchdog(scan: LogScan) -> None:
    """Join a rank's watchdog lines: the pg its "Exception ... detected by watchdog at work: N" line
    names is the pg of its timeout at seq N; a rank with only that line timed out too."""
    timed: set[tuple[int, int]] = set()
    for index, event in enumerate(scan.events):
        if event.kind is not EventKind.WATCHDOG_TIMEOUT or event.rank is None or event.seq is None:
            continue
        timed.add((event.rank, event.seq))
        pg = scan.pg_of.get((event.rank, event.seq))
        if event.pg is None and pg is not None:
            detail = event.detail.replace(f"SeqNum={event.seq} ran for", f"SeqNum={event.seq} on pg {pg} ran for", 1)
            scan.events[index] = replace(event, pg=pg, detail=detail)
    for (rank, seq), order in sorted(scan.detected.items(), key=lambda kv: kv[1]):
        if (rank, seq) not in timed:
            pg = scan.pg_of.get((rank, seq))
            on_pg = f" on pg {pg}" if pg else ""
            scan.events.append(Event(EventKind.WATCHDOG_TIMEOUT, f"work {seq}{on_pg} failed or timed out",
                                     rank=rank, pg=pg, seq=seq, order=order))
            scan.first_timeout.setdefault(rank, order)
    scan.detected.clear()


def finish_store_waits(scan: LogScan) -> None:
    """A store get/wait that timed out is an init hang when nothing shows the job past init; once
    the job ran collectives (or trained), it is a rank that waited for a peer that never came (the
    DETAIL wrapper's checks and the object collectives go through the store): a timeout like the
    watchdog's, of the rank that printed it, or of no known rank."""
    if not scan.store_waits:
        return
    if not (scan.past_init or scan.collectives or scan.mismatches or any(
            e.kind is EventKind.WATCHDOG_TIMEOUT for e in scan.events)):
        scan.init_waits.extend(scan.store_waits)
    else:
        for wait in scan.store_waits:
            if wait.rank is not None:
                scan.first_timeout.setdefault(wait.rank, wait.order or 0)
            scan.events.append(Event(EventKind.WATCHDOG_TIMEOUT, f"{STORE_WAIT_DETAIL}: {wait.text[:200]}",
                                     rank=wait.rank, evidence=wait.evidence, order=wait.order))
    scan.store_waits.clear()


def finish_raise_sites(scan: LogScan) -> None:
    """Frames that raise one thing only, in an input that does not show that thing (a paste cut before
    its exception line, or a thread's C++ frames alone): the failure they stand for, once. The
    watchdog's checkTimeout frame is a timeout only when no timeout line is in the input; the
    rendezvous store call is a network failure only when no failure line follows it; a raise statement
    is an exception only when the input shows no other failure."""
    sites, scan.raise_sites = scan.raise_sites, []
    for rank, order, path, site in sites:
        if site.kind is RaiseSiteKind.WATCHDOG_TIMEOUT:
            if any(e.kind is EventKind.WATCHDOG_TIMEOUT for e in scan.events):
                continue
            if rank is not None:
                scan.ranks_seen.add(rank)
                scan.first_timeout.setdefault(rank, order)
            scan.events.append(Event(EventKind.WATCHDOG_TIMEOUT, site.text, rank=rank, evidence=(path,), order=order))
            continue
        later = [item for items in scan.failures.values() for item in items] + scan.orphans
        if site.kind is RaiseSiteKind.RAISE_STATEMENT:
            if any(not item[1].collateral for item in later) or scan.events or scan.init_waits or scan.mismatches \
                    or any(not e.ok for e in scan.exits.values()):
                continue      # the only failure the input shows, or none: code pasted beside a log is no run
            line = CrashLine(CrashLineKind.EXCEPTION, site.text)
        elif any(item[0] > order for item in later):
            continue
        else:
            line = CrashLine(CrashLineKind.NETWORK, site.text)
        if rank is not None:
            scan.ranks_seen.add(rank)
        (scan.failures.setdefault(rank, []) if rank is not None else scan.orphans).append((order, line, path))
