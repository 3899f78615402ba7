"""Only the job's own kernel events: a dmesg finding names one of the job's pids (tied to its rank)
or is an Xid of no process within the job's lifetime; the rest is counted, never reported."""

from __future__ import annotations

from triage.collectors.dmesg import _events_json
from triage.load.kernel import job_kernel_events
from triage.model.evidence import EventKind

BOOT = 1_700_000_000.0
STARTED = BOOT + 1_000.0
DMESG = (
    "[  500.000000] NVRM: Xid (PCI:0000:3b:00): 43, pid=999, name=python, Ch 00000008\n"       # earlier job
    "[ 1100.000000] NVRM: Xid (PCI:0000:3b:00): 43, pid=4242, name=python, Ch 00000008\n"      # rank 1's pid
    "[ 1101.000000] python3[777]: segfault at 0 ip 00007f0 sp 00007ffd error 4 in libc.so.6[7f0+1000]\n"  # stranger
    "[ 1102.000000] python[4141]: segfault at 0 ip 00007f0 sp 00007ffd error 4 in libc.so.6[7f0+1000]\n"  # rank 0
    "[ 1103.000000] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"              # no process, in the job
    "[  900.000000] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"              # no process, before it
)


def test_only_the_jobs_pids_and_lifetime() -> None:
    kept, others = job_kernel_events(DMESG, "node1", "b/node/dmesg.txt", {4141: 0, 4242: 1}, STARTED, BOOT)
    assert others == 3
    assert [(e.kind, e.rank) for e in kept] == [(EventKind.XID, 1), (EventKind.SEGFAULT, 0), (EventKind.XID, None)]
    assert [e.time for e in kept] == [BOOT + 1100.0, BOOT + 1102.0, BOOT + 1103.0]


def test_without_boot_time_an_xid_of_no_process_is_kept_unplaced() -> None:
    """It cannot be placed in time: kept (a GPU off the bus names no process); the strangers' are not."""
    kept, others = job_kernel_events(DMESG, "node1", "p", {4242: 1}, STARTED, None)
    assert [e.rank for e in kept] == [1, None, None] and {e.time for e in kept} == {None} and others == 3


def test_events_json_wallclock_from_boot_time() -> None:
    events = _events_json(DMESG, BOOT)
    assert all(e["timestamp"]["wallclock"] and e["time"] is not None for e in events)
    assert events[1]["time"] == BOOT + 1100.0
    assert all(e["timestamp"]["wallclock"] is None for e in _events_json(DMESG, None))
