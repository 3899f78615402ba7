"""What the node agent does with a monitor action: print, collect the node bundle, report, decide.

Console lines (stderr of the agent):

- ``triage: hang suspected: <reason>`` (hang), ``triage: <reason>`` (crash),
  ``triage: dump requested: collecting evidence`` (manual), ``triage: hang reported by
  <host>: ...`` (remote);
- ``triage: evidence saved to <bundle>`` once the bundle is complete;
- for a hang with ``--on-hang report-and-stop|report-and-wait``: the report of the run directory
  (``triage report <run dir>``), then, for report-and-stop, the agent stops the job (exit 75).
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from triage.agent.hang_monitor import ActionOutcome
from triage.agent.state import AgentContext, LocalRankStatus, MonitorAction
from triage.bundle import CollectorRecord, Trigger, read_manifest, write_manifest
from triage.collectors.common import CollectOptions, Target
from triage.collectors.node_bundle import JobInfo, collect_node_bundle
from triage.layout import HostPaths, read_json

_REPORTED_TRIGGERS = (Trigger.HANG, Trigger.REMOTE)
_WAIT_OTHER_NODES_S = 30.0


def say(line: str) -> None:
    print(f"triage: {line}", file=sys.stderr, flush=True)


def _headline(action: MonitorAction, trigger: Trigger) -> str:
    if trigger == Trigger.HANG:
        return f"hang suspected: {action.reason}"
    if trigger == Trigger.REMOTE:
        return f"hang reported by {action.reason}; collecting evidence on this node"
    if trigger == Trigger.MANUAL:
        why = f" ({action.reason})" if action.reason else ""
        return f"dump requested{why}: collecting evidence"
    return f"{action.reason}" if action.reason else f"{trigger.value}: collecting evidence"


def targets_from(ranks: Sequence[LocalRankStatus]) -> list[Target]:
    return [Target(rank=r.rank, pid=r.pid, local_rank=r.local_rank, paths=r.paths, alive=r.alive)
            for r in sorted(ranks, key=lambda s: s.rank) if r.pid is not None]


def _trigger(value: str) -> Trigger:
    try:
        return Trigger(value)
    except ValueError:
        return Trigger.MANUAL


def run_action(ctx: AgentContext, options: Mapping[str, Any], action: MonitorAction,
               ranks: Sequence[LocalRankStatus]) -> ActionOutcome:
    trigger = _trigger(action.trigger)
    say(_headline(action, trigger))
    job = JobInfo(job_id=ctx.job_id, host=ctx.host, started=ctx.started, run_dir=ctx.run_dir)
    extra = {"suspect_ranks": list(action.ranks)}
    bundle = collect_node_bundle(job, targets_from(ranks), trigger, action.reason,
                                 CollectOptions.from_options(options), HostPaths(ctx.host_dir).bundles_dir,
                                 extra=extra)
    if trigger == Trigger.CRASH:
        _add_core_backtraces(bundle, ranks)
    say(f"evidence saved to {bundle}")
    on_hang = str(options.get("on_hang") or "report-and-stop")
    if trigger not in _REPORTED_TRIGGERS:
        if trigger == Trigger.MANUAL:
            say(f"next: triage report {ctx.run_dir}")
        return ActionOutcome(bundle=bundle, stop_job=False, message=action.reason)
    verdict: str | None = None
    if on_hang in ("report-and-stop", "report-and-wait"):
        if trigger == Trigger.HANG:
            _wait_for_other_nodes(ctx, bundle)
        verdict = print_report(ctx.run_dir)
    if on_hang == "report-and-stop":
        return ActionOutcome(bundle=bundle, stop_job=True, message=verdict or action.reason)
    say(f"job left running (--on-hang {on_hang}); report: triage report {ctx.run_dir}")
    return ActionOutcome(bundle=bundle, stop_job=False, message=action.reason)


_CORE_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE, signal.SIGILL,
                           signal.SIGTRAP, signal.SIGSYS, signal.SIGQUIT})


def _add_core_backtraces(bundle: Path, ranks: Sequence[LocalRankStatus]) -> None:
    """gdb on the core of every rank killed by a core-dumping signal (cores exist with --cores)."""
    records = [_core_record(bundle, status) for status in ranks
               if status.returncode is not None and -status.returncode in _CORE_SIGNALS]
    found = [record for record in records if record is not None]
    if not found:
        return
    try:
        manifest = read_manifest(bundle)
        write_manifest(bundle, replace(manifest, collectors=manifest.collectors + tuple(found)))
    except (OSError, ValueError) as error:
        say(f"could not add core backtraces to {bundle}: {error}")


def _core_record(bundle: Path, status: LocalRankStatus) -> CollectorRecord | None:
    try:
        from triage.collectors.core import collect_core
        from triage.postmortem.locate import find_core

        worker = read_json(status.paths.worker) if status.paths is not None else {}
        cwd, pid = worker.get("cwd"), status.pid
        if not cwd or pid is None:
            return None
        location = find_core(cwd, pid)
        if location.path is None:
            say(f"rank {status.rank}: {location.reason}")
            return None
        say(f"rank {status.rank}: core {location.path}; running gdb on it")
        return collect_core(location.path, bundle, rank=status.rank)
    except Exception as error:  # noqa: BLE001 - evidence gathering never raises
        say(f"rank {status.rank}: core backtrace failed ({type(error).__name__}: {error})")
        return None


def _wait_for_other_nodes(ctx: AgentContext, bundle: Path) -> None:
    """On a multi-node run, wait (bounded) for the other nodes' bundles before reporting."""
    try:
        from triage.agent import cluster_trigger

        hosts = [h for h in cluster_trigger.run_hosts(ctx.run_dir) if h != ctx.host]
        if not hosts:
            return
        _present, missing = cluster_trigger.wait_for_node_bundles(
            ctx.run_dir, hosts, since=time.time() - 60.0, deadline=time.time() + _WAIT_OTHER_NODES_S)
        if missing:
            say(f"no bundle yet from {', '.join(missing)}; reporting on what is there")
    except Exception:  # noqa: BLE001
        return


def print_report(run_dir: Path) -> str | None:
    """Print the report of the run directory to the console; return its verdict line. Never raises."""
    try:
        from triage.report import build_report, render

        sys.stdout.flush()
        report = build_report([str(run_dir)])
        render(report, "text", sys.stdout)
        sys.stdout.flush()
        say(f"next: triage report {run_dir} --format html -o triage-report.html   # the picture")
        return report.verdict.summary
    except (Exception, SystemExit) as error:  # noqa: BLE001 - a report failure must not stop the stop
        say(f"could not print the report ({type(error).__name__}: {error}); run: triage report {run_dir}")
        return None
