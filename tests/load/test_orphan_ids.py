"""scan.orphan_hosts is keyed by the id() of a failure line of no known rank: a line that leaves scan.orphans (a list
put in its place, an item removed or replaced) stays alive for the scan, so its id, and with it its host, is never
handed to a line made after it (it was: the host of a line read as gone on past went to the next line, and the same log
read with and without the line gate could differ, tests/load/test_line_gate.py on intel/analytics-zoo#614)."""

from __future__ import annotations

from triage.load.logs.scan import LogScan
from triage.parsing.crashlog import CrashLine, CrashLineKind


def _line(text: str) -> CrashLine:
    return CrashLine(CrashLineKind.FATAL_SIGNAL, text, signal="SIGSEGV")


def test_a_line_that_leaves_the_orphans_keeps_its_id() -> None:
    scan = LogScan()
    for order in range(3):
        line = _line(f"Segmentation fault {order}")
        scan.orphans.append((order, line, "job.log"))
        scan.orphan_hosts[id(line)] = f"node{order}"
    gone = {id(item[1]) for item in scan.orphans}
    del line
    scan.orphans = [item for item in scan.orphans if item[0] != 0]     # a list put in its place
    scan.orphans.remove(scan.orphans[0])                                 # an item removed
    scan.orphans[0] = (2, _line("Segmentation fault 2 (replaced)"), "job.log")   # an item replaced
    made = [_line(f"Bus error {i}") for i in range(2000)]
    assert not gone & {id(line) for line in made}
    assert all(scan.orphan_hosts.get(id(line)) is None for line in made)


def test_the_orphans_are_still_a_plain_list_to_their_readers() -> None:
    scan = LogScan()
    scan.orphans.append((1, _line("Aborted"), "job.log"))
    assert scan.orphans == [(1, _line("Aborted"), "job.log")] and isinstance(scan.orphans, list)
    assert LogScan() == LogScan()
