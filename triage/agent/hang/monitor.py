"""Hang monitor: what the node agent (``triage launch``) asks on every tick.

``make_monitor(ctx, hang_settings) -> Monitor`` is built once when the agent starts. The actions
it returns are run by :func:`triage.agent.hang.actions.run_action`, in a thread of the agent (the
log pump keeps running): it collects the node bundle, prints the console lines and the report, and
says whether the agent must stop the job.

The monitor reads each rank's ``nccl.log`` incrementally on every tick (:mod:`triage.agent.hang.nccl`),
scans output chunks for PyTorch watchdog messages (:mod:`triage.agent.hang.watchdog`), polls the
cross-node trigger, and applies the rules of :mod:`triage.agent.hang.detect`. One hang is reported
once: after firing, the monitor re-arms only when the stuck ranks moved on. Ranks about to be
suspected get their first busy/blocked sample ahead (:mod:`triage.agent.hang.presample`).

A hang that is not certain at once (see :func:`triage.agent.hang.detect.certain_reason`) is sampled
by the action (busy or blocked, :mod:`triage.agent.hang.busy`); the agent reports the outcome through
``on_outcome``. Busy ranks are watched: a CHECK action every timeout, a stop at --stop-timeout,
a finding when they move on. Policy: docs/agent.md.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from triage.agent.hang import cluster_trigger, detect
from triage.agent.hang.init_watch import InitWatch
from triage.agent.hang.nccl import NcclWatch
from triage.agent.hang.presample import PreSampler, targets_of
from triage.agent.hang.rdzv_watch import RendezvousWatch
from triage.agent.hang.watchdog import WatchdogWatch
from triage.agent.lines import say
from triage.agent.state import (
    AgentContext,
    LocalRankStatus,
    Monitor,
    MonitorAction,
    MonitorActionKind,
)
from triage.bundle import Trigger
from triage.options import HangSettings
from triage.private_files import read_json

# After busy ranks went on, no new hang is suspected for one --hang-timeout (at least this long):
# heartbeats show the new progress within a heartbeat period, and ranks that finish may sit in
# their teardown (heartbeat thread gone) for a few seconds.
QUIET_AFTER_BUSY_S = 3.0


@dataclass
class _Watch:
    """A suspected hang whose ranks were busy: re-sampled every timeout, stopped at stop_at."""

    since: float                 # unix time the stall began
    stop_at: float               # since + --stop-timeout
    next_check: float
    busy: str                    # who is busy where: ``rank 0 busy in save_checkpoint (ckpt.py:10)``
    waiting: str = ""            # ``ranks 1,2 waiting in barrier``
    position: tuple[object, ...] = ()   # every rank's progress: a change means the stall moved on
    pending: bool = False        # a check is running
    first: str = ""              # where they were busy when the stall was first judged (the finding names it)
    gpu: bool = False            # they only wait on a running GPU: stop_at is since + --gpu-wait-timeout


def _collect(trigger: Trigger, reason: str, ranks: Sequence[int] = ()) -> MonitorAction:
    return MonitorAction(kind=MonitorActionKind.COLLECT, trigger=trigger.value, reason=reason,
                         ranks=tuple(ranks))


class HangMonitor:
    """The node agent's hang monitor (see the module docstring). Never raises."""

    def __init__(self, ctx: AgentContext, settings: HangSettings) -> None:
        self.ctx = ctx
        self.timeout = settings.hang_timeout
        self.stop_timeout = settings.stop_timeout
        self.gpu_wait_timeout = min(settings.stop_timeout, max(settings.hang_timeout, settings.gpu_wait_timeout))
        self._watch: _Watch | None = None
        self._pending_hang: MonitorAction | None = None   # a hang action whose ranks are being sampled
        self._remote_evidence_only = False
        self._pending_position: tuple[object, ...] = ()
        self._pending_key: tuple[object, ...] = ()
        self._quiet_until = float("-inf")
        self._now: float | None = None          # the time of the last tick (the monitor's clock)
        self._init = InitWatch(self.timeout)    # hangs before the first collective
        self._rdzv = RendezvousWatch(self.timeout, ctx.host_dir, ctx.run_dir, ctx.started)   # torchrun's own
        self._pre = PreSampler(self.timeout, settings.sample_interval)
        self.findings: list[str] = []       # slow ranks that went on by themselves (said at the end)
        self.collect_on_crash = settings.collect_on_crash
        self._lock = threading.Lock()
        self._watchdog = WatchdogWatch()     # PyTorch watchdog messages in the output
        self._fired: set[tuple[object, ...]] = set()
        self._armed = True                  # False while a reported hang is still the same hang
        self._crash_reported = False
        self._remote_since = ctx.started
        self._last_ranks: tuple[LocalRankStatus, ...] = ()
        self._exits: list[LocalRankStatus] = []
        self._last_collection = float("-inf")   # when the last hang/remote bundle was triggered
        self._nccl = NcclWatch()
        self._complained: set[str] = set()

    # -- Monitor protocol -------------------------------------------------------------------
    def on_tick(self, ranks: Sequence[LocalRankStatus], now: float) -> MonitorAction | None:
        try:
            return self._tick(tuple(ranks), now)
        except Exception as error:  # noqa: BLE001 - the monitor must never take the agent down
            self._complain(error)
            return None

    def on_output(self, rank: int, chunk: bytes) -> None:
        try:
            self._watchdog.feed_output(rank, chunk)
            if b"NCCL" in chunk and not self._has_nccl_file(rank):
                self._nccl.feed_output(rank, chunk)
        except Exception:  # noqa: BLE001
            return

    def on_outcome(self, action: MonitorAction, busy: str | None, gone: bool = False) -> None:
        """A hang action found the ranks busy: watch them (re-check every timeout, stop at
        --stop-timeout); a check that found them busy again moves the next check on. ``gone``:
        a sampled rank exited meanwhile: judge again after one more timeout if still stuck."""
        with self._lock:
            if action is self._pending_hang:
                self._pending_hang = None
            if gone:
                now = self._now if self._now is not None else time.time()
                if self._watch is not None:
                    self.findings.append(self._held(self._watch, now) + "; then a rank of it exited")
                self._watch, self._armed, self._quiet_until = None, True, now + self.timeout
                self._fired.discard(self._pending_key)
                return
            if busy is None:
                if action.kind == MonitorActionKind.CHECK:
                    self._watch = None
                return
            now = self._now if self._now is not None else time.time()
            if self._watch is None:
                since = action.since if action.since is not None else now
                gpu = _gpu_only(busy)
                limit = self.gpu_wait_timeout if gpu else self.stop_timeout
                self._watch = _Watch(since, since + limit, now + self.timeout, busy,
                                     action.waiting, self._pending_position, first=busy, gpu=gpu)
            else:
                if " in " in busy or " in " not in self._watch.busy:
                    self._watch.busy = busy
                self._watch.pending = False
                self._watch.next_check = now + self.timeout

    def on_rank_exit(self, status: LocalRankStatus) -> MonitorAction | None:
        """Failed exits are gathered and turned into one crash action by the next tick (same tick)."""
        if self.collect_on_crash and detect.is_failure(status):
            with self._lock:
                self._exits.append(status)
        return None

    # -- internals --------------------------------------------------------------------------
    def _complain(self, error: Exception) -> None:
        """Say once per kind of error that the monitor failed (a bug: detection may be degraded)."""
        kind = type(error).__name__
        if kind not in self._complained:
            self._complained.add(kind)
            say(f"hang monitor error (detection may be degraded): {kind}: {error}")

    def _has_nccl_file(self, rank: int) -> bool:
        """NCCL lines of a rank with a nccl.log are read from that file (not twice via the output)."""
        for status in self._last_ranks:
            if status.rank == rank and status.paths is not None:
                return status.paths.nccl.exists()
        return False

    def _tick(self, ranks: tuple[LocalRankStatus, ...], now: float) -> MonitorAction | None:
        self._last_ranks = ranks
        self._now = now
        crash = self._crash_action(ranks)
        if crash is not None:
            return crash
        self._nccl.poll_files(ranks, now)
        remote = self._poll_remote(now)
        if remote is not None:
            return remote
        watchdog = detect.detect_watchdog(self._watchdog.events())
        if watchdog is not None and watchdog.key not in self._fired:
            with self._lock:
                watching, self._watch = self._watch is not None, None
            return self._fire(watchdog, now, force=watching)
        suspicion = detect.detect_progress_hang(ranks, self.timeout, now)
        if suspicion is None:
            alive = [r.rank for r in ranks if r.alive and r.pid is not None]
            suspicion = detect.detect_nccl_hang(self._nccl.rank_ops(), alive, self.timeout, now)
        init = self._init.tick(ranks, now)
        if suspicion is None:
            suspicion = init
        rdzv = self._rdzv.tick(ranks, now)
        if suspicion is None:
            suspicion = rdzv
        if self._rdzv.went_on:              # the nodes it waited for came: said now and at the end
            self.findings.append(self._rdzv.went_on)
            say(self._rdzv.went_on)
            self._rdzv.went_on = None
        with self._lock:
            if self._pending_hang is not None:
                return None                 # the ranks of the last hang are being sampled
            watch = self._watch
        if watch is not None:
            return self._follow(watch, ranks, suspicion, now)
        if suspicion is None:
            if watchdog is None and now - self._last_collection >= self.timeout:
                self._armed = True          # everyone moved on: a new hang may be reported
            if self._armed and now >= self._quiet_until:
                self._pre.tick(ranks, now)  # ranks about to be suspected: their first sample, ahead
            return None
        if now < self._quiet_until:
            return None
        if self._remote_evidence_only and not self._armed and suspicion.key not in self._fired:
            return self._check_after_remote(suspicion, now)
        return self._fire(suspicion, now)

    def _check_after_remote(self, suspicion: detect.HangSuspicion, now: float) -> MonitorAction | None:
        """Another node collected for a hang it is still sampling, and this node's ranks are stuck
        too: sample them here as well (no second bundle); busy here means the job is not stopped."""
        self._fired.add(suspicion.key)
        ranks = self._last_ranks
        certain = detect.certain_reason(ranks, suspicion, self.timeout, now)
        if certain is not None:
            return self._fire(suspicion, now, certain=certain, force=True)
        sample = targets_of(ranks, detect.culprits(ranks, suspicion))
        if not sample:
            return None
        stuck = detect.stuck_ranks(ranks, self.timeout, now)
        self._announce(suspicion.message, stop=False)
        action = MonitorAction(MonitorActionKind.CHECK, Trigger.HANG.value, suspicion.message, suspicion.ranks,
                               sample=sample, waiting=detect.waiting_summary(ranks),
                               since=now - max(stuck.values(), default=self.timeout),
                               outside=detect.any_outside(ranks), source=suspicion.source,
                               init=suspicion.init)
        with self._lock:
            self._pending_hang, self._pending_position = action, detect.position(ranks)
            self._pending_key = suspicion.key
        return action

    def _follow(self, watch: _Watch, ranks: tuple[LocalRankStatus, ...],
                suspicion: detect.HangSuspicion | None, now: float) -> MonitorAction | None:
        """The busy ranks of a suspected hang: done, now certain, past --stop-timeout, or re-check."""
        if suspicion is None or detect.position(ranks) != watch.position:
            with self._lock:
                self._watch = None
            self._armed = True
            self._quiet_until = now + max(QUIET_AFTER_BUSY_S, self.timeout)
            held = self._held(watch, now)
            self.findings.append(f"{held}; the job went on by itself")
            say(f"the job went on: {held.removeprefix('slow rank: ')}")
            return None
        if watch.pending:
            return None
        certain = detect.certain_reason(ranks, suspicion, self.timeout, now)
        if certain is None and now >= watch.stop_at:
            certain = (f"still waiting on the GPU after --gpu-wait-timeout {int(self.gpu_wait_timeout)} s "
                       if watch.gpu else f"still busy after --stop-timeout {int(self.stop_timeout)} s ")
            certain += f"(the stall began {int(now - watch.since)} s ago)"
        if certain is not None:
            with self._lock:
                self._watch = None
            return self._fire(suspicion, now, certain=certain, force=True)
        if now >= watch.next_check:
            watch.pending = True
            return MonitorAction(MonitorActionKind.CHECK, Trigger.HANG.value, watch.busy, suspicion.ranks,
                                 sample=targets_of(ranks, detect.culprits(ranks, suspicion)),
                                 waiting=suspicion.waiting or detect.waiting_summary(ranks), since=watch.since,
                                 outside=detect.any_outside(ranks), source=suspicion.source,
                                 init=suspicion.init)
        return None

    @staticmethod
    def _held(watch: _Watch, now: float) -> str:
        waiting = f" ({watch.waiting})" if watch.waiting else ""
        first = watch.first or watch.busy
        later = f"; last seen {watch.busy}" if watch.busy != first else ""
        return f"slow rank: {first} for {int(now - watch.since)} s{waiting}{later}"

    def _fire(self, suspicion: detect.HangSuspicion, now: float, certain: str | None = None,
              force: bool = False) -> MonitorAction | None:
        """Report a hang once: not again for the same key, nor while the last one still holds."""
        if not force and (not self._armed or suspicion.key in self._fired):
            self._fired.add(suspicion.key)
            return None
        self._fired.add(suspicion.key)
        self._armed = False
        self._last_collection = now
        ranks = self._last_ranks
        if certain is None:
            certain = detect.certain_reason(ranks, suspicion, self.timeout, now)
        sample = () if certain else targets_of(ranks, detect.culprits(ranks, suspicion))
        if certain is None and not sample and suspicion.source != "rendezvous":   # rendezvous: never stopped
            certain = "no live rank to sample"
        stuck = detect.stuck_ranks(ranks, self.timeout, now)
        since = now - max(stuck.values(), default=self.timeout)
        self._announce(suspicion.message, stop=certain is not None)
        action = MonitorAction(MonitorActionKind.COLLECT, Trigger.HANG.value, suspicion.message, suspicion.ranks,
                               certain=certain, sample=sample,
                               waiting=suspicion.waiting or detect.waiting_summary(ranks),
                               since=since, outside=detect.any_outside(ranks), source=suspicion.source,
                               init=suspicion.init, first_sample=self._pre.take(ranks, sample) if sample else None)
        if certain is None:
            with self._lock:
                self._pending_hang, self._pending_position = action, detect.position(ranks)
                self._pending_key = suspicion.key
        return action

    def _crash_action(self, ranks: tuple[LocalRankStatus, ...]) -> MonitorAction | None:
        with self._lock:
            exits, self._exits = self._exits, []
        if not exits or self._crash_reported:
            return None
        self._crash_reported = True
        ordered = sorted(exits, key=lambda s: (_exit_time(s), s.rank))
        gone = {s.rank for s in exits}
        survivors = [r.rank for r in ranks if r.alive and r.pid and r.rank not in gone]
        reason = detect.crash_reason(ordered[0], survivors)
        if len(ordered) > 1:
            reason += "; then " + ", ".join(f"rank {s.rank} ({detect.exit_text(s.returncode)})" for s in ordered[1:])
        return _collect(Trigger.CRASH, reason, [s.rank for s in ordered])

    def _poll_remote(self, now: float) -> MonitorAction | None:
        notice = cluster_trigger.poll(self.ctx.run_dir, self.ctx.host, self._remote_since)
        if notice is None:
            return None
        self._remote_since = notice.time
        upgrade = notice.stop and (self._remote_evidence_only or self._watch is not None)
        if now - self._last_collection < self.timeout and not upgrade:
            return None                     # the same incident: this node has just collected
        self._armed = False
        self._last_collection = now
        self._remote_evidence_only = not notice.stop
        with self._lock:
            self._watch = None
        return MonitorAction(MonitorActionKind.COLLECT, Trigger.REMOTE.value, f"{notice.origin}: {notice.reason}",
                             certain=f"{notice.origin} is stopping the job" if notice.stop else None)

    def _announce(self, reason: str, stop: bool = True) -> None:
        try:
            cluster_trigger.announce(self.ctx.run_dir, self.ctx.host, reason, stop=stop)
        except Exception:  # noqa: BLE001
            return


def _exit_time(status: LocalRankStatus) -> float:
    """When the rank ended, from its exit.json (written by the in-worker agent), else +inf."""
    if status.paths is None:
        return float("inf")
    try:
        data: Any = read_json(status.paths.exit)
        value = data.get("time") if isinstance(data, dict) else None
        return float(value) if value else float("inf")
    except (OSError, ValueError, TypeError):
        return float("inf")


def make_monitor(ctx: AgentContext, settings: HangSettings) -> Monitor:
    return HangMonitor(ctx, settings)


def _gpu_only(busy: str) -> bool:
    """The busy line names only ranks waiting on a running GPU (triage.agent.hang.busy.state_text)."""
    return "waiting on the GPU" in busy and "busy" not in busy and "not readable" not in busy
