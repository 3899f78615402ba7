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
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from triage.agent.hang import busy, children, cluster_trigger, stop_decision
from triage.agent.hang.rdzv_watch import DEFAULT_JOIN_TIMEOUT_S
from triage.agent.hang.stop_decision import print_report
from triage.agent.lines import say
from triage.agent.state import ActionOutcome, AgentContext, LocalRankStatus, MonitorAction, MonitorActionKind
from triage.analysis.ranks import rank_word
from triage.bundle import CollectorRecord, Trigger, read_manifest, write_manifest
from triage.collectors.common import Target
from triage.collectors.core import collect_core
from triage.collectors.node_bundle import JobInfo, collect_node_bundle
from triage.collectors.pyspy import collect_pyspy_children
from triage.layout import BundlePaths, HostPaths
from triage.model import VerdictKind
from triage.options import LaunchSettings, OnHang
from triage.postmortem.locate import find_core
from triage.private_files import read_json

_REPORTED_TRIGGERS = (Trigger.HANG, Trigger.REMOTE)
_WAIT_OTHER_NODES_S = 30.0
_WAIT_DECISION_S = 30.0      # a node that follows waits this long more for the decider's stop.json


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


def run_action(ctx: AgentContext, settings: LaunchSettings, action: MonitorAction,
               ranks: Sequence[LocalRankStatus], stop: Callable[[], None] | None = None,
               stop_at: Callable[[float], None] | None = None) -> ActionOutcome:
    """``stop``: stops the job at once (a one-node run, once the hang is certain, the bundle saved
    and the verdict fixed: the report is printed while the job goes down); ``stop_at(t)``: stops it
    at unix time t (every node of a larger job at the same moment)."""
    if action.kind == MonitorActionKind.CHECK:
        return _recheck(ctx, settings, action, ranks, stop, stop_at)
    trigger = _trigger(action.trigger)
    say(_headline(action, trigger))
    if action.source == "rendezvous":
        return _rendezvous(ctx, settings, action, ranks)
    activities: list[busy.RankActivity] = []
    if trigger == Trigger.HANG and action.certain is None and action.sample:
        holder: list[Path] = []
        activities = busy.sample_twice(action.sample, settings.hang.sample_interval,
                                       between=lambda: holder.append(_collect(ctx, settings, action, ranks)),
                                       first_sample=action.first_sample)
        bundle = holder[0]
        _note_activity(bundle, activities)
    else:
        bundle = _collect(ctx, settings, action, ranks)
    if trigger == Trigger.CRASH:
        _add_core_backtraces(bundle, ranks)
    if trigger == Trigger.HANG:
        _add_child_dumps(bundle, ranks, settings)
    say(f"evidence saved to {bundle}")
    if trigger not in _REPORTED_TRIGGERS:
        if trigger == Trigger.MANUAL:
            say(f"next: triage report {ctx.run_dir}")
        return ActionOutcome(bundle=bundle, stop_job=False, message=action.reason)
    if trigger == Trigger.REMOTE and action.certain is None:
        say(f"the ranks there are busy: not stopping the job; report: triage report {ctx.run_dir}")
        return ActionOutcome(bundle=bundle, stop_job=False, message=action.reason)
    exited = [a.rank for a in activities if a.activity == busy.Activity.GONE]
    if exited:
        say(f"{rank_word(exited)} exited while being sampled: nothing concluded yet; "
            f"report: triage report {ctx.run_dir}")
        return ActionOutcome(bundle=bundle, stop_job=False, message=action.reason, gone=True)
    busy_line = _busy_line(action, activities, settings) if activities else None
    if busy_line is None and activities:
        busy_line = _busy_elsewhere(ctx, action, settings)
    if busy_line is None and activities:
        say(f"the hang is certain: {blocked_line(activities)}")
        _announce_stop(ctx, f"{blocked_line(activities)}; {action.waiting}")
    elif action.certain and trigger == Trigger.HANG:
        say(f"the hang is certain: {action.certain}")
    return _conclude(ctx, settings, action, bundle, busy_line, trigger, stop, stop_at)


def _conclude(ctx: AgentContext, settings: LaunchSettings, action: MonitorAction, bundle: Path,
              busy_line: tuple[str, str] | None, trigger: Trigger,
              stop: Callable[[], None] | None, stop_at: Callable[[float], None] | None = None) -> ActionOutcome:
    on_hang = settings.hang.on_hang
    if trigger == Trigger.HANG and on_hang != OnHang.WAIT:
        _wait_for_other_nodes(ctx, bundle)
    if busy_line is None and on_hang == OnHang.REPORT_AND_STOP:
        return _stop_job(ctx, action, bundle, trigger, stop, stop_at)
    if on_hang == OnHang.REPORT_AND_WAIT and trigger == Trigger.REMOTE:
        say(f"the node that found the hang prints the report; report: triage report {ctx.run_dir}")
    elif on_hang == OnHang.REPORT_AND_WAIT or (on_hang == OnHang.REPORT_AND_STOP and _one_node(ctx)):
        print_report(ctx.run_dir)      # several nodes, busy ranks: no report yet (one report per job, at the stop)
    if busy_line is not None:
        say(busy_line[0])
        return ActionOutcome(bundle=bundle, stop_job=False, message=busy_line[0], busy=busy_line[1])
    say(f"job left running (--on-hang {on_hang}); report: triage report {ctx.run_dir}")
    return ActionOutcome(bundle=bundle, stop_job=False, message=action.reason)


def _stop_job(ctx: AgentContext, action: MonitorAction, bundle: Path, trigger: Trigger,
              stop: Callable[[], None] | None, stop_at: Callable[[float], None] | None) -> ActionOutcome:
    """The hang is certain: one node decides and prints the report; the others point to it; every
    node stops at the time the decider set."""
    one_node = _one_node(ctx)
    origin = ctx.host if one_node else stop_decision.decider(ctx.run_dir, ctx.host)
    reason = action.certain or action.reason
    decision = None
    if origin == ctx.host:
        decision = stop_decision.decide_and_report(ctx, reason, action.source, stop, stop_at, one_node)
        origin = stop_decision.decider(ctx.run_dir, ctx.host)
    if decision is None:
        deadline = time.time() + _WAIT_OTHER_NODES_S + _WAIT_DECISION_S
        decision = stop_decision.follow(ctx, origin, stop_at, deadline)
    if decision is None:
        say(f"no stop decision from {origin}: this node reports and stops the job")
        decision = stop_decision.decide_and_report(ctx, reason, action.source, stop, stop_at, True)
    verdict = decision.verdict if decision is not None else None
    return ActionOutcome(bundle=bundle, stop_job=True, message=verdict.summary if verdict else action.reason,
                         verdict=verdict, stop_at=decision.stop_at if decision is not None else None)


def _rendezvous(ctx: AgentContext, settings: LaunchSettings, action: MonitorAction,
                ranks: Sequence[LocalRankStatus]) -> ActionOutcome:
    """torchrun waits for nodes that have not come: evidence and the report, never a stop (a node
    may still be coming up in a queue; torchrun's own join timeout ends the wait)."""
    bundle = _collect(ctx, settings, action, ranks)
    say(f"evidence saved to {bundle}")
    reports = settings.hang.on_hang in (OnHang.REPORT_AND_STOP, OnHang.REPORT_AND_WAIT)
    verdict = print_report(ctx.run_dir) if reports else None
    line = (f"not stopping the job: a node may still be on its way; torchrun's own rendezvous join timeout "
            f"(--rdzv-conf join_timeout, {int(DEFAULT_JOIN_TIMEOUT_S)} s by default) ends the wait")
    say(line)
    return ActionOutcome(bundle=bundle, stop_job=False, message=verdict.summary if verdict else action.reason)


def _recheck(ctx: AgentContext, settings: LaunchSettings, action: MonitorAction,
             ranks: Sequence[LocalRankStatus], stop: Callable[[], None] | None,
             stop_at: Callable[[float], None] | None) -> ActionOutcome:
    """Every timeout while busy ranks hold up the others: sample again; blocked now means certain."""
    activities = busy.sample_twice(action.sample, settings.hang.sample_interval)
    if not activities or any(a.activity == busy.Activity.GONE for a in activities):
        return ActionOutcome(bundle=None, stop_job=False, gone=True)   # exited: the monitor sees it
    line = _busy_line(action, activities, settings) or _busy_elsewhere(ctx, action, settings)
    if line is not None:
        say(line[0])
        errors = [f"rank {a.rank}: {a.error}" for a in activities if a.error]
        if errors:
            say(f"stack sample failed: {'; '.join(errors)[:300]}")
        return ActionOutcome(bundle=None, stop_job=False, message=line[0], busy=line[1])
    reason = f"{blocked_line(activities)}; {action.waiting}" if action.waiting else blocked_line(activities)
    say(f"hang certain now: {reason}")
    _announce_stop(ctx, reason)
    bundle = _collect(ctx, settings, replace(action, reason=reason), ranks)
    _note_activity(bundle, activities)
    _add_child_dumps(bundle, ranks, settings)
    say(f"evidence saved to {bundle}")
    return _conclude(ctx, settings, action, bundle, None, Trigger.HANG, stop, stop_at)


def _collect(ctx: AgentContext, settings: LaunchSettings, action: MonitorAction,
             ranks: Sequence[LocalRankStatus]) -> Path:
    job = JobInfo(job_id=ctx.job_id, host=ctx.host, started=ctx.started, run_dir=ctx.run_dir)
    extra: dict[str, Any] = {"suspect_ranks": list(action.ranks)}
    if action.source:
        extra["hang_source"] = action.source            # "init": a hang before the first collective
        if action.source in ("init", "rendezvous"):
            extra["verdict_kind"] = VerdictKind.INIT_HANG.value
    if action.init is not None:
        extra["init"] = {**action.init.to_json(), "reason": action.reason[:600]}
    return collect_node_bundle(job, targets_from(ranks), _trigger(action.trigger), action.reason,
                               settings.collect, HostPaths(ctx.host_dir).bundles_dir,
                               extra=extra)


def _busy_elsewhere(ctx: AgentContext, action: MonitorAction,
                    settings: LaunchSettings) -> tuple[str, str] | None:
    """Every local rank waits in a collective and is blocked: on a multi-node run the rank they
    wait for may be on another node. If that node said its ranks are being sampled (or busy) and
    has not said it stops, this node does not stop on its own: the other node decides (it
    announces its stop), or --stop-timeout does."""
    if action.outside or action.since is None:
        return None
    try:
        latest: dict[str, bool] = {}
        for notice in cluster_trigger.notices(ctx.run_dir):
            if notice.origin != ctx.host and notice.time >= action.since - cluster_trigger.BUNDLE_SLACK_S:
                latest[notice.origin] = notice.stop
    except Exception:  # noqa: BLE001
        return None
    hosts = sorted(h for h, stop in latest.items() if not stop)
    if not hosts or any(latest.values()):
        return None
    hang_timeout, stop_timeout = settings.hang.hang_timeout, settings.hang.stop_timeout
    seconds = int(time.time() - action.since)
    who = f"the ranks they wait for are on {', '.join(hosts)}, which found them busy or is checking them"
    line = (f"{action.waiting or 'the local ranks wait'} for {seconds} s; {who}; not stopping the job: "
            f"checking again every {int(hang_timeout)} s, stopping after --stop-timeout {int(stop_timeout)} s")
    return line, f"ranks on {', '.join(hosts)} busy"


def _announce_stop(ctx: AgentContext, reason: str) -> None:
    """The hang is certain after sampling: tell the other nodes this node stops the job."""
    if _one_node(ctx):
        return
    try:
        cluster_trigger.announce(ctx.run_dir, ctx.host, reason, stop=True)
    except Exception:  # noqa: BLE001
        return


def _one_node(ctx: AgentContext) -> bool:
    try:
        return not [h for h in cluster_trigger.run_hosts(ctx.run_dir) if h != ctx.host]
    except Exception:  # noqa: BLE001
        return False


def _busy_line(action: MonitorAction, activities: Sequence[busy.RankActivity],
               settings: LaunchSettings) -> tuple[str, str] | None:
    """(``rank 0 busy in save_checkpoint (ckpt.py:10) for 30 s (CPU 85%, ...); ranks 1-2 waiting in
    barrier; not stopping...``, ``rank 0 busy in save_checkpoint (ckpt.py:10)``); None when every
    sampled rank is blocked (or gone)."""
    moving = [a for a in activities if busy.keeps_waiting(a)]
    if not moving:
        return None
    seconds = int(time.time() - action.since) if action.since is not None else None
    who, evidence = [], []
    for act in moving:
        what = busy.state_text(act)
        where = f" in {act.where}" if act.where else ""
        who.append(f"rank {act.rank} {what}{where}")
        evidence.append(act.evidence())
    head = ", ".join(who) + (f" for {seconds} s" if seconds is not None else "")
    head += f" ({'; '.join(e for e in evidence if e)})" if any(evidence) else ""
    hang_timeout, stop_timeout = settings.hang.hang_timeout, settings.hang.stop_timeout
    limit = f"--stop-timeout {int(stop_timeout)} s"
    if all(a.activity == busy.Activity.GPU_WAIT for a in moving):
        limit = f"--gpu-wait-timeout {int(min(stop_timeout, max(hang_timeout, settings.hang.gpu_wait_timeout)))} s"
    tail = f"not stopping the job: checking again every {int(hang_timeout)} s, stopping after {limit}"
    return "; ".join(p for p in (head, action.waiting, tail) if p), ", ".join(who)


def blocked_line(activities: Sequence[busy.RankActivity]) -> str:
    """``rank 1 blocked in sleep_in_python (x.py:8) (CPU 0%, I/O 0 B/s, same stack)``."""
    parts = []
    for act in activities:
        if act.activity == busy.Activity.GONE:
            parts.append(f"rank {act.rank} exited")
            continue
        where = f" in {act.where}" if act.where else ""
        parts.append(f"rank {act.rank} {busy.state_text(act)}{where} ({act.evidence()})")
    return ", ".join(parts)


def _add_child_dumps(bundle: Path, ranks: Sequence[LocalRankStatus], settings: LaunchSettings) -> None:
    """py-spy dumps of the live ranks' Python children (DataLoader workers...), one file each."""
    try:
        records = []
        for target in targets_from([r for r in ranks if r.alive]):
            records += collect_pyspy_children(target, BundlePaths(bundle).rank(target.rank).root, bundle,
                                              settings.collect)
        if records:
            manifest = read_manifest(bundle)
            write_manifest(bundle, replace(manifest, collectors=manifest.collectors + tuple(records)))
    except Exception as error:  # noqa: BLE001 - evidence gathering never raises
        say(f"could not dump the ranks' child processes: {type(error).__name__}: {error}")
        return
    if records:
        _name_children(bundle, records)


def _name_children(bundle: Path, records: Sequence[CollectorRecord]) -> None:
    """Which child each stuck rank waits on (DataLoader worker id, stuck frame): said on the
    console and kept in the manifest (``extra.children``) for the report."""
    try:
        entries = children.child_facts(bundle, [r for r in records if r.files])
        for wait in children.name_waited_on(bundle, entries):
            say(f"{wait.describe()} (it waits for {wait.waits_in})")
        manifest = read_manifest(bundle)
        write_manifest(bundle, replace(manifest, extra={**manifest.extra, "children": entries}))
    except Exception as error:  # noqa: BLE001 - evidence gathering never raises
        say(f"could not tell which child the ranks wait on: {type(error).__name__}: {error}")


def _note_activity(bundle: Path, activities: Sequence[busy.RankActivity]) -> None:
    """The samples go into the bundle's manifest (``extra.activity``): the report can tell a slow
    rank from a hung one."""
    try:
        manifest = read_manifest(bundle)
        extra = {**manifest.extra, "activity": [
            {"rank": a.rank, "pid": a.pid, "activity": a.activity.value, "cpu_share": a.cpu_share,
             "io_bytes_per_s": a.io_rate, "stack_changed": a.stack_changed, "where": a.where,
             "error": a.error, "gpu_wait": a.gpu_wait, "gpu_util": a.gpu_util, "runnable": a.runnable}
            for a in activities]}
        write_manifest(bundle, replace(manifest, extra=extra))
    except (OSError, ValueError, KeyError) as error:
        say(f"could not note the rank activity in {bundle}: {error}")


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
        hosts = [h for h in cluster_trigger.run_hosts(ctx.run_dir) if h != ctx.host]
        if not hosts:
            return
        _present, missing = cluster_trigger.wait_for_node_bundles(
            ctx.run_dir, hosts, since=time.time() - 60.0, deadline=time.time() + _WAIT_OTHER_NODES_S)
        if missing:
            say(f"no bundle yet from {', '.join(missing)}; reporting on what is there")
    except Exception:  # noqa: BLE001
        return
