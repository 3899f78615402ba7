"""scan.orphan_hosts: the host of a failure line of no known rank, by the line (triage.load.logs.scan.LineHosts).
An entry holds its line, so a line that leaves scan.orphans (a list put in its place, an item removed or replaced)
never hands its host to a line made after it (it did, when the hosts were keyed by id() alone: the host of a line
read as gone on past went to the next line made, and the same log read with and without the line gate could differ,
tests/load/test_line_gate.py on intel/analytics-zoo#614)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from triage.load.logs import text
from triage.load.logs.scan import LineHosts, LogScan
from triage.parsing.crashlog import CrashLine, CrashLineKind

CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


def _line(text: str) -> CrashLine:
    return CrashLine(CrashLineKind.FATAL_SIGNAL, text, signal="SIGSEGV")


def test_a_line_that_leaves_the_orphans_keeps_its_host_to_itself() -> None:
    scan = LogScan()
    for order in range(3):
        line = _line(f"Segmentation fault {order}")
        scan.orphans.append((order, line, "job.log"))
        scan.orphan_hosts[line] = f"node{order}"
    del line
    scan.orphans = [item for item in scan.orphans if item[0] != 0]     # a list put in its place
    scan.orphans.remove(scan.orphans[0])                                 # an item removed
    scan.orphans[0] = (2, _line("Segmentation fault 2 (replaced)"), "job.log")   # an item replaced
    made = [_line(f"Bus error {i}") for i in range(2000)]
    assert all(scan.orphan_hosts.get(line) is None and line not in scan.orphan_hosts for line in made)
    assert sorted(scan.orphan_hosts.values()) == ["node0", "node1", "node2"]


def test_a_host_is_the_lines_own_not_its_words() -> None:
    """Two lines of the same words from two nodes are two lines; a line marked (replaced) takes its host along."""
    hosts = LineHosts()
    first, second = _line("Segmentation fault"), _line("Segmentation fault")
    hosts[first] = "gpu-a"
    hosts.setdefault(second, "gpu-b")
    hosts.setdefault(second, "gpu-c")            # (the first host told stays)
    assert (hosts.get(first), hosts.get(second)) == ("gpu-a", "gpu-b")
    marked = replace(first, collateral=True)
    hosts.moved(first, marked)
    assert (hosts.get(first), hosts.get(marked)) == (None, "gpu-a")
    assert hosts.pop(second) == "gpu-b" and hosts.pop(second) is None and len(hosts) == 1


def test_the_orphans_are_a_plain_list_and_scans_compare() -> None:
    scan = LogScan()
    scan.orphans.append((1, _line("Aborted"), "job.log"))
    assert type(scan.orphans) is list and scan.orphans == [(1, _line("Aborted"), "job.log")]
    assert LogScan() == LogScan()


def test_a_real_logs_hosts_go_to_their_lines() -> None:
    """intel/analytics-zoo#614: each failure of no known rank that a host was told for keeps it, read twice alike."""
    log = next((CASES / "intel__analytics-zoo__614").glob("*.txt"))
    body = log.read_text(encoding="utf-8", errors="replace")
    scans = [LogScan(), LogScan()]
    for scan in scans:
        text.scan_log_text(body, log.name, scan)
    assert scans[0].orphan_hosts == scans[1].orphan_hosts and len(scans[0].orphan_hosts) >= 1
    lines = [line for _, line, _ in scans[0].orphans]
    assert any(scans[0].orphan_hosts.get(line) for line in lines)
