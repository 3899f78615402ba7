"""The decision to stop a job: one decider, the verdict fixed, every node stopped together.

- The decider is the node whose stop notice came first (:mod:`triage.agent.hang.cluster_trigger`;
  ties by host name): every node reads the same notices, so they agree without talking.
- The decider builds the report (from the evidence of every node), fixes its verdict, records the
  decision in ``<host>/stop.json`` (``triage.stop/1``: time, host, reason, verdict, stop_at) and
  prints the report. Every other node prints one line pointing to it.
- Every node sends SIGTERM to its launcher at ``stop_at`` (a moment :data:`STOP_LEAD_S` after the
  decision): the nodes' agents watch the time every loop (20 ms), so no rank sees a peer vanish
  first. A one-node job stops at once.
- Everything after the decision is collateral of the stop (:mod:`triage.analysis.stop`).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from triage.agent.hang import cluster_trigger
from triage.agent.lines import holding_rank_output, say
from triage.layout import RunPaths
from triage.model import Report, Verdict, VerdictKind
from triage.private_files import write_json_atomic
from triage.schemas import STOP_LOG_RECORD, STOP_SCHEMA

if TYPE_CHECKING:
    from triage.agent.state import AgentContext

# Every agent imports this module at start (it looks for other nodes' stop.json every pass): what
# only deciding a stop needs (the verdict analysis, the evidence model behind it) is imported when
# a stop is decided, not by every job's agent.

# The decider stops its own node this long after it wrote stop.json; the other nodes read it
# within their poll interval and stop at the same moment.
STOP_LEAD_S = 1.0
_POLL_S = 0.05


@dataclass(frozen=True)
class Decision:
    verdict: Verdict | None
    stop_at: float
    decider: str
    time: float = 0.0           # when it was decided


_pointed = threading.Event()    # the line pointing to the decider's report is printed once


def decider(run_dir: Path, me: str) -> str:
    """The host whose stop notice came first (``me`` when there is none)."""
    try:
        stops = [n for n in cluster_trigger.notices(run_dir) if n.stop]
    except Exception:  # noqa: BLE001
        return me
    return min(stops, key=lambda n: (n.time, n.origin)).origin if stops else me


def record_stop(ctx: AgentContext, reason: str, verdict: Verdict | None, stop_at: float) -> float:
    """Write ``<host>/stop.json``; returns the decision's time. Never raises (a full disk must not
    keep the job from stopping)."""
    now = time.time()
    payload = {"schema": STOP_SCHEMA, "time": now, "host": ctx.host, "reason": reason[:600],
               "verdict": verdict.to_json() if verdict is not None else None, "stop_at": stop_at}
    try:
        write_json_atomic(RunPaths(ctx.run_dir).host(ctx.host).stop, payload)
    except OSError as error:
        say(f"could not record the stop decision ({error.strerror or error})")
    note_in_merged_log(ctx.run_dir, ctx.host, payload)
    return now


def note_in_merged_log(run_dir: Path, host: str, payload: dict[str, Any]) -> None:
    """The decision as one ``[host:triage]`` record in this host's merged.log, before the stop: a
    pasted merged.log then says that triage stopped the job (the launcher's SIGTERM that follows is
    not "stopped from outside"). Appended to the log the pump made (never created, never through a
    link); the pump writes whole records, so this one never splits one. Never raises."""
    line = f"[{host}:triage] {STOP_LOG_RECORD}{json.dumps(payload, sort_keys=True)}\n".encode()
    try:
        fd = os.open(RunPaths(run_dir).host(host).merged_log, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.write(fd, line)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_decision(run_dir: Path, host: str) -> Decision | None:
    """The decision ``host`` recorded, if it is there (loaded by the loader's own reader)."""
    # imported here: triage.load costs ~0.1 s to import and most agents never stop a job
    from triage.load.stop_record import verdict_from_json

    try:
        data: Any = json.loads(RunPaths(run_dir).host(host).stop.read_text(encoding="utf-8"))
        at = data.get("stop_at") if isinstance(data, dict) else None
        if data.get("schema") != STOP_SCHEMA or not isinstance(at, (int, float)):
            return None
        when = data.get("time")
        return Decision(verdict_from_json(data.get("verdict")), float(at), host,
                        float(when) if isinstance(when, (int, float)) else 0.0)
    except (OSError, ValueError, AttributeError):
        return None


def other_decision(run_dir: Path, me: str, since: float) -> Decision | None:
    """A decision another node's agent recorded after ``since`` (this agent's start: a stop.json
    left by an earlier run in a reused run directory is not this job's)."""
    found = [d for h in RunPaths(run_dir).hosts() if h.host != me and h.stop.is_file()
             for d in (read_decision(run_dir, h.host),) if d is not None and d.time >= since]
    return min(found, key=lambda d: (d.time, d.decider)) if found else None


def point_to(run_dir: Path, found: Decision) -> None:
    """``report printed by node2: <verdict>; triage report RUN_DIR``, once per agent."""
    if _pointed.is_set():
        return
    _pointed.set()
    verdict = found.verdict.summary if found.verdict is not None else "see the report"
    say(f"report printed by {found.decider}: {verdict.splitlines()[0][:300]}; triage report {run_dir}")


def wait_for_decision(run_dir: Path, host: str, deadline: float) -> Decision | None:
    while True:
        found = read_decision(run_dir, host)
        if found is not None or time.time() >= deadline:
            return found
        time.sleep(_POLL_S)


def job_verdict(report: Report | None, ctx: AgentContext, reason: str, source: str) -> Verdict:
    """The report's verdict as the stop fixes it: never NO PROBLEM FOUND for a job stopped for a hang."""
    from triage.analysis.stop import fixed_verdict  # see the note at the top
    from triage.analysis.verdict import headline
    from triage.model.evidence import StopDecision

    if report is None:
        return headline.verdict(VerdictKind.HANG, reason, limit=600)
    verdict = report.verdict
    if source == "init" and verdict.kind is VerdictKind.NO_PROBLEM_FOUND:   # the report cannot see it yet
        return headline.verdict(VerdictKind.INIT_HANG, reason.removeprefix("init hang: "))
    return fixed_verdict(StopDecision(time.time(), ctx.host, reason), verdict)


def decide_and_report(ctx: AgentContext, reason: str, source: str, stop: Callable[[], None] | None,
                      stop_at: Callable[[float], None] | None, one_node: bool) -> Decision | None:
    """This node decides: build the report, fix the verdict, record it, stop (now on one node, at
    ``stop_at`` for every node of a larger job), then print the report with rank output held back.
    None when another node turned out to decide."""
    report = build(ctx.run_dir)
    if not one_node and decider(ctx.run_dir, ctx.host) != ctx.host:
        return None             # an earlier stop notice showed up meanwhile (a slow shared file system)
    verdict = job_verdict(report, ctx, reason, source)
    at = time.time() + (0.0 if one_node else STOP_LEAD_S)
    record_stop(ctx, reason, verdict, at)
    if one_node and stop is not None:
        stop()
    elif stop_at is not None:
        stop_at(at)
    elif stop is not None:
        stop()
    if report is not None:
        render(replace(report, verdict=verdict), ctx.run_dir)
    return Decision(verdict, at, ctx.host)


def follow(ctx: AgentContext, origin: str, stop_at: Callable[[float], None] | None, deadline: float) -> Decision | None:
    """Another node decides: wait for its decision, stop with it, print one line pointing to it.
    None when no decision came before ``deadline`` (the decider died: this node decides)."""
    found = wait_for_decision(ctx.run_dir, origin, deadline)
    if found is None:
        return None
    note_in_merged_log(ctx.run_dir, ctx.host, {
        "schema": STOP_SCHEMA, "time": found.time, "host": found.decider, "stop_at": found.stop_at,
        "verdict": found.verdict.to_json() if found.verdict is not None else None,
        "reason": f"decided by {found.decider}"})
    if stop_at is not None:
        stop_at(found.stop_at)
    point_to(ctx.run_dir, found)
    return found


def build(run_dir: Path) -> Report | None:
    """The run directory's report; None (said on the console) when it cannot be made."""
    try:
        # imported when a report is made: the loaders and rich would cost every agent ~0.2 s at start
        from triage.report import build_report

        return build_report([str(run_dir)])
    except (Exception, SystemExit) as error:  # noqa: BLE001 - a report failure must not stop the stop
        say(f"could not make the report ({type(error).__name__}: {error}); run: triage report {run_dir}")
        return None


def render(report: Report, run_dir: Path) -> None:
    """Print the report on stdout while rank output waits; never raises."""
    from triage.report import render as render_report  # see build()

    with holding_rank_output():
        try:
            sys.stdout.flush()
            render_report(report, "text", sys.stdout)
            sys.stdout.flush()
        except (Exception, SystemExit) as error:  # noqa: BLE001
            say(f"could not print the report ({type(error).__name__}: {error}); run: triage report {run_dir}")
            return
        say(f"next: triage report {run_dir} --format html -o triage-report.html   # the picture")


def print_report(run_dir: Path) -> Verdict | None:
    """Print the report of the run directory to the console (rank output held back meanwhile);
    return its verdict. Never raises. (Here, not with the hang actions: a job that fails on its own
    prints it without loading the collectors.)"""
    report = build(run_dir)
    if report is None:
        return None
    render(report, run_dir)
    return report.verdict


__all__ = ["STOP_LEAD_S", "Decision", "decide_and_report", "decider", "follow", "job_verdict", "other_decision",
           "point_to", "print_report", "record_stop"]
