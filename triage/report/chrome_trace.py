"""`triage report --format chrome-trace`: every rank's collectives as a Chrome/Perfetto trace.

The JSON Trace Event Format (an object with ``traceEvents``), which ui.perfetto.dev and
chrome://tracing open. One process per host, one thread per rank ("rank 2 (straggler)").
Each collective is a complete event ("X") that starts when the rank called it (FR creation
time) and lasts:

- until the backend says it completed, when the FR records completion (NCCL with timing);
- else (gloo) until the last member of its group called it: the time the rank waited for the
  others (a straggler's slices are thin, everyone else's are long);
- for a collective that never completed, until the end of the trace (``args.state``).

Timestamps are microseconds from the earliest collective (``otherData.t0_unix_ns``); they are
each host's own clock (see docs/stragglers.md on clocks). Events are written one at a time:
2 million collectives are never one list in memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, TextIO

from triage.analysis.describe import call
from triage.model import Collective, CollectiveState, Report

_HOST_UNKNOWN = "unknown host"


def _straggler_ranks(report: Report) -> set[int]:
    return {rank for item in report.extra.get("stragglers", ()) for rank in item.get("ranks", ())}


def _last_arrivals(report: Report) -> dict[tuple[str, int], int]:
    """(pg, seq) -> the latest creation time of that collective over the ranks that recorded it."""
    last: dict[tuple[str, int], int] = {}
    for _rank, colls in report.traces:
        for coll in colls:
            if coll.time_ns and not coll.is_p2p:
                key = (coll.pg, coll.seq)
                if coll.time_ns > last.get(key, 0):
                    last[key] = coll.time_ns
    return last


def trace_events(report: Report) -> Iterator[dict[str, Any]]:
    """The trace's events: metadata first (process and thread names), then one per collective."""
    known = {r.rank: r.host or _HOST_UNKNOWN for r in report.ranks}
    hosts = {rank: known.get(rank, _HOST_UNKNOWN) for rank, _colls in report.traces}
    slow = _straggler_ranks(report)
    host_ids = {host: index + 1 for index, host in enumerate(sorted(set(hosts.values())))}
    times = [c.time_ns for _rank, colls in report.traces for c in colls if c.time_ns]
    if not times:
        return
    t0, end = min(times), max(max(times), max((c.time_completed_ns or 0 for _r, cs in report.traces for c in cs)))
    for host, pid in host_ids.items():
        yield {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": host}}
    last = _last_arrivals(report)
    for rank, colls in report.traces:
        pid = host_ids[hosts[rank]]
        label = f"rank {rank}" + (" (straggler)" if rank in slow else "")
        yield {"ph": "M", "name": "thread_name", "pid": pid, "tid": rank, "args": {"name": label}}
        yield {"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": rank, "args": {"sort_index": rank}}
        for coll in colls:
            if coll.time_ns:
                yield _event(coll, pid, rank, t0, end, last)


def _event(coll: Collective, pid: int, tid: int, t0: int, end: int,
           last: dict[tuple[str, int], int]) -> dict[str, Any]:
    start = coll.time_ns or 0
    args: dict[str, Any] = {"pg": coll.pg, "seq": coll.seq, "state": coll.state.value}
    if coll.pg_name:
        args["pg_name"] = coll.pg_name
    if coll.time_completed_ns and coll.time_completed_ns >= start:
        stop = coll.time_completed_ns
        args["until"] = "completed"
    elif coll.state is not CollectiveState.COMPLETED:
        stop = end
        args["until"] = "end of trace (never completed)"
    elif not coll.is_p2p and (coll.pg, coll.seq) in last:
        stop = last[(coll.pg, coll.seq)]
        args["until"] = "last rank arrived"
        args["wait_ms"] = round((stop - start) / 1e6, 3)
    else:
        stop = start
        args["until"] = "unknown"
    if not coll.is_p2p and (coll.pg, coll.seq) in last:
        args["arrived_last"] = start == last[(coll.pg, coll.seq)]
    return {"ph": "X", "name": call(coll), "cat": "p2p" if coll.is_p2p else "collective", "pid": pid,
            "tid": tid, "ts": round((start - t0) / 1000, 3), "dur": round(max(stop - start, 0) / 1000, 3),
            "args": args}


def write_chrome_trace(report: Report, file: TextIO) -> None:
    """Write the trace JSON to ``file``, one event per line."""
    t0 = min((c.time_ns for _r, colls in report.traces for c in colls if c.time_ns), default=None)
    file.write('{"displayTimeUnit": "ms", "otherData": ')
    json.dump({"producer": "triage", "verdict": report.verdict.summary, "t0_unix_ns": t0}, file)
    file.write(', "traceEvents": [\n')
    first = True
    for event in trace_events(report):
        if not first:
            file.write(",\n")
        file.write(json.dumps(event, separators=(",", ":")))
        first = False
    file.write("\n]}\n")
