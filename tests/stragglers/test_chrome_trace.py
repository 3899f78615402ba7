"""`--format chrome-trace`: the Trace Event Format document, from constructed reports."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from typing import Any

from tests.helpers.arrivals import MS, T0, evidence, jitter, late, traces
from triage.analysis.analyze import analyze
from triage.model import CollectiveState
from triage.report import FORMATS, render


def trace_of(report: Any) -> dict[str, Any]:
    out = io.StringIO()
    render(report, "chrome-trace", out)
    doc: dict[str, Any] = json.loads(out.getvalue())
    return doc


def slices(doc: dict[str, Any], tid: int) -> list[dict[str, Any]]:
    return [e for e in doc["traceEvents"] if e["ph"] == "X" and e["tid"] == tid]


def test_registered() -> None:
    assert "chrome-trace" in FORMATS


def test_one_thread_per_rank_one_process_per_host_straggler_marked() -> None:
    colls = traces(4, 50, late({3: 40.0}, jitter(1, 2.0)))
    report = analyze(evidence(colls, hosts={0: "a", 1: "a", 2: "b", 3: "b"}))
    doc = trace_of(report)
    meta = [e for e in doc["traceEvents"] if e["ph"] == "M"]
    assert {e["args"]["name"] for e in meta if e["name"] == "process_name"} == {"a", "b"}
    threads = {e["tid"]: (e["pid"], e["args"]["name"]) for e in meta if e["name"] == "thread_name"}
    assert threads[3][1] == "rank 3 (straggler)" and threads[0][1] == "rank 0"
    assert threads[0][0] == threads[1][0] != threads[2][0] == threads[3][0]
    assert doc["otherData"]["t0_unix_ns"] == min(c.time_ns for cs in colls.values() for c in cs)
    for event in doc["traceEvents"]:
        if event["ph"] == "X":
            assert {"name", "cat", "pid", "tid", "ts", "dur", "args"} <= event.keys()
            assert event["ts"] >= 0 and event["dur"] >= 0
    # gloo-like (no completion times): a slice lasts until the last rank arrived
    assert len(slices(doc, 0)) == 50
    assert all(e["dur"] == 0 and e["args"]["arrived_last"] for e in slices(doc, 3))
    waits = [e["args"]["wait_ms"] for e in slices(doc, 0)]
    assert all(37.9 < w < 42.1 for w in waits), waits   # 40 ms plus or minus the 2 ms jitter
    assert slices(doc, 0)[0]["name"] == "all_reduce(count=1024, float32)"
    assert slices(doc, 0)[1]["ts"] - slices(doc, 0)[0]["ts"] > 90_000    # microseconds: 100 ms steps


def test_completion_times_and_a_collective_that_never_completed() -> None:
    colls = traces(2, 5, late({}), completion=lambda r, s, last: last + 7.0)
    stuck = replace(colls[1][-1], state=CollectiveState.IN_FLIGHT, time_completed_ns=None)
    colls[1] = (*colls[1][:-1], stuck)
    doc = trace_of(analyze(evidence(colls)))
    first = slices(doc, 0)[0]
    assert first["dur"] == 7000.0 and first["args"]["until"] == "completed"
    last = slices(doc, 1)[-1]
    assert last["args"]["until"] == "end of trace (never completed)" and last["args"]["state"] == "in_flight"
    end_us = (max(c.time_completed_ns or 0 for c in colls[0]) - T0 - 100 * MS) / 1000
    assert last["ts"] + last["dur"] == end_us


def test_no_timed_collectives_is_an_empty_trace() -> None:
    colls = {r: tuple(replace(c, time_ns=None) for c in cs) for r, cs in traces(2, 3, late({})).items()}
    doc = trace_of(analyze(evidence(colls)))
    assert doc["traceEvents"] == [] and doc["otherData"]["t0_unix_ns"] is None
