"""The node agent of ``triage launch``: starts the launcher, pumps logs, watches ranks, and
makes sure nothing outlives it.

Main loop (one thread): pump new log bytes (tag, merged.log, console) -> every tick rebuild the
rank statuses and call the hang monitor -> check the launcher. Monitor actions run in a
separate thread so the pump never stops. Signals SIGINT/SIGTERM/SIGHUP are forwarded to the
launcher (its own session; starting, signalling and stopping it: :mod:`triage.agent.launch.launcher`);
SIGUSR1 or a new file in ``<host>/dump-requests/`` asks for a manual collection.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from triage.agent import lines
from triage.agent.hang.monitor import make_monitor
from triage.agent.launch import envsetup, launcher
from triage.agent.launch.launcher_bits import NullMonitor, exit_code_of, isatty, signame
from triage.agent.launch.processes import ProcessTracker
from triage.agent.launch.pump import LogPump, start_offsets_of
from triage.agent.launch.ranks import (
    RankTracker,
    describe_ends,
    discarded_output,
    launcher_exits_if_needed,
    read_json_or_none,
)
from triage.agent.launch.rundir import job_id_from_env, prepare_run_dir, rewrite_node_json, write_node_json
from triage.agent.lines import say
from triage.agent.state import ActionOutcome, AgentContext, LocalRankStatus, Monitor, MonitorAction, MonitorActionKind
from triage.agent.straggler_watch import StragglerWatch
from triage.collectors import nvml_xids
from triage.errors import UsageError
from triage.exitcodes import ExitCode
from triage.layout import HostPaths, RunPaths, short_hostname
from triage.options import ConsoleMode, LaunchSettings, settings_values
from triage.private_files import write_json_atomic

if TYPE_CHECKING:        # (loaded only where used: test_agent_imports.py)
    from triage.agent.numerics_watch import NumericsWatch
    from triage.model import Verdict

IDLE_SLEEP = 0.02


class NodeAgent:
    def __init__(self, argv: Sequence[str], settings: LaunchSettings,
                 console: BinaryIO | None, messages: TextIO) -> None:
        self.argv = list(argv)
        self.settings = settings
        self.messages = messages
        self.host = settings.host or short_hostname()
        self.job_id = settings.job_id or job_id_from_env(os.environ)
        self.run_dir = Path(settings.run_dir or Path("triage-runs") / self.job_id).absolute()
        self.console = None if settings.console == ConsoleMode.NONE else console
        self.flags = launcher.Signals()
        self.stop_requested_at: float | None = None
        self.stop_requested_unix: float | None = None     # when triage decided to stop the job
        self.stopped_for_hang = False
        self.stop_at: float | None = None                 # every node stops the job at this unix time
        self._hosts_checked = 0.0
        lines.configure(self.host, lines.multi_node_job(self.argv, os.environ))
        self.verdict: Verdict | None = None   # the report's verdict after a stop or a failure, repeated at the end
        self.stop_note: str | None = None     # what the stop said when no verdict came with it
        self.hang_bundles = 0                 # hang bundles written while the job was left running
        self.disk_full = False                # a write of node.json met a full disk (ENOSPC, EDQUOT)
        self.action_thread: threading.Thread | None = None
        self.action_queue: list[MonitorAction] = []
        self.seen_requests: set[str] = set()
        self._pending_request_files: dict[int, str] = {}
        self.started = time.time()
        self.proc: subprocess.Popen[bytes] | None = None

    # -- helpers ---------------------------------------------------------------------------
    def say(self, text: str) -> None:
        say(text, self.messages)

    def node_info(self, status: str, exit_code: int | None = None) -> dict[str, Any]:
        return {"agent_pid": os.getpid(), "host": self.host, "job_id": self.job_id, "argv": self.argv,
                "launcher_pid": self.proc.pid if self.proc else None, "started": self.started,
                "ended": None if status == "running" else time.time(), "status": status,
                "exit_code": exit_code, "run_dir": str(self.run_dir), "options": settings_values(self.settings),
                "stop_requested": self.stop_requested_unix,
                "forwarded_signals": [signame(sig) for sig in self.flags.forwarded],
                "forwarded_at": self.flags.forwarded_at}

    # -- main ------------------------------------------------------------------------------
    def run(self) -> int:
        if not self.argv:
            raise UsageError("nothing to launch: give the launcher after --, e.g. "
                             "`triage launch -- torchrun --nproc-per-node 2 train.py`")
        _run, self.paths = prepare_run_dir(self.run_dir, self.job_id, self.host, self.argv)
        ctx = AgentContext(self.job_id, self.host, self.run_dir, self.paths.root, self.started)
        self.ctx = ctx
        self.monitor = self._make_monitor(ctx)
        self.stragglers = StragglerWatch(ctx, self.settings.stragglers, self.say)
        self.numerics = self._numerics_watch()
        self.say(f"run dir {self.run_dir}")
        if self.settings.cores:
            self.say(envsetup.core_note())
        is_tty = bool(self.console is not None and isatty(self.console))
        env = envsetup.worker_env(os.environ, self.argv, self.settings, self.run_dir, self.job_id,
                                  self.host, is_tty)
        previous = launcher.install_signals(self.flags, lambda: self.proc)
        self.log_offsets = start_offsets_of(self.paths)    # before the launcher writes its first byte
        try:
            self.proc = launcher.start_launcher(self.argv, env, self.paths.launcher_log, self.settings.cores)
            self._write_node(self.node_info("running"))
            try:
                return self._supervise()
            except BaseException:
                self._emergency_stop()
                raise
        finally:
            nvml_xids.stop(wait=False)     # never wait out NVML's event wait at the job's end
            launcher.restore_signals(previous)

    def _numerics_watch(self) -> NumericsWatch | None:
        """The numerics watch, loaded only with ``--numerics`` (without it, it has nothing to do)."""
        if not self.settings.numerics:
            return None
        from triage.agent.numerics_watch import NumericsWatch
        return NumericsWatch(self.paths, self.settings, self.say, lambda: self.request_stop(hang=False))

    def _write_node(self, data: dict[str, Any]) -> None:
        """node.json is a record: a full disk (ENOSPC) must neither stop the job nor lose the verdict."""
        try:
            write_node_json(self.paths, data)
        except OSError as error:
            self.say(f"cannot write {self.paths.node} ({error.strerror or error}); the job goes on")
            if error.errno in (errno.ENOSPC, errno.EDQUOT) and rewrite_node_json(self.paths, data):
                self.disk_full = True
                self.say(f"{self.paths.node} rewritten in place, in the space it already held: its record is kept")
            elif error.errno in (errno.ENOSPC, errno.EDQUOT):
                self.disk_full = True

    def _kill_own_helpers(self) -> None:
        launcher.kill_own_helpers(self.proc.pid if self.proc else None, self.say)

    def _emergency_stop(self) -> None:
        """triage itself failed: take the job down with it rather than leave it orphaned."""
        if self.proc is None:
            return
        with contextlib.suppress(Exception):
            launcher.take_down(self.proc, getattr(self, "tracker", None))
            self._kill_own_helpers()
            write_node_json(self.paths, self.node_info("agent_failed", None))

    def _make_monitor(self, ctx: AgentContext) -> Monitor:
        try:
            return make_monitor(ctx, self.settings.hang)
        except Exception as exc:  # noqa: BLE001 - a broken monitor must not stop the job
            self.say(f"hang monitor disabled: {type(exc).__name__}: {exc}")
            return NullMonitor()

    def _supervise(self) -> int:
        if self.proc is None:
            raise RuntimeError("internal error: supervising before the launcher started")
        self.pump = LogPump(self.paths, self.host, self.console,
                            console_ranks=self.settings.console == ConsoleMode.ALL,
                            on_output=self._on_output, start_offsets=self.log_offsets)
        self.ranks = RankTracker(self.paths, self.host, since=self.started)
        self.tracker = ProcessTracker(self.proc.pid)
        tick = self.settings.tick_interval
        grace = self.settings.kill_grace
        next_tick = 0.0
        launcher_done_at: float | None = None
        listen_at = time.time() + nvml_xids.AGENT_LISTEN_AFTER_S if nvml_xids.gpu_host() else None
        try:
            while True:
                now = time.time()
                moved = self.pump.pump(now)
                if now >= next_tick:
                    next_tick = now + tick
                    self._tick(now)
                if self.stop_at is not None and now >= self.stop_at:
                    self.request_stop(hang=True)
                self._escalate_stop(now, grace)
                if launcher_done_at is None and self.proc.poll() is not None:
                    launcher_done_at = time.monotonic()
                    self.tracker.snapshot(self.ranks.worker_pids())
                if launcher_done_at is not None and (
                        not self.tracker.alive() or time.monotonic() - launcher_done_at >= grace):
                    break
                if listen_at is not None and now >= listen_at and launcher_done_at is None:
                    listen_at = None
                    nvml_xids.start()   # NVML's Xid events, heard here (never in a rank), off the start's path
                if not moved:
                    time.sleep(IDLE_SLEEP)
            return self._finish()
        finally:
            self.pump.close()

    def _finish(self) -> int:
        if self.proc is None:
            raise RuntimeError("internal error: finishing before the launcher started")
        killed = self.tracker.kill_stragglers(2.0)
        if killed:
            self.say(f"killed {len(killed)} process(es) left behind by the launcher: "
                     + " ".join(map(str, killed)))
        self._tick(time.time())
        self._wait_actions(120.0)
        self.stragglers.close(60.0)
        self._kill_own_helpers()
        self.pump.finish(time.time())
        rc = self.proc.returncode if self.proc.returncode is not None else self.proc.wait()
        code = int(ExitCode.HANG_DETECTED) if self.stopped_for_hang else exit_code_of(rc)
        status = "hang_stopped" if self.stopped_for_hang else ("signalled" if rc < 0 else "exited")
        self._write_node({**self.node_info(status, code), "launcher_returncode": rc})
        how = f"killed by signal {-rc} ({signame(-rc)})" if rc < 0 else f"exit code {rc}"
        statuses = [t.status for t in self.ranks.ranks.values() if t.status is not None]
        full = discarded_output(statuses) | ({s.rank for s in statuses} if self.disk_full else set())
        ends = describe_ends(statuses, launcher_exits_if_needed(statuses, self.paths.launcher_log), rc, full)
        if self.pump.quiet_lines:
            self.say(f"the job went down after the stop: {self.pump.quiet_lines} line(s) of rank and launcher "
                     f"output (the stop's signals and tracebacks) are in {self.paths.merged_log}")
        if ends:
            self.say(f"ranks on {self.host}: {ends}")
        if not self.paths.ranks_dir.is_dir():
            self.say(f"{self.paths.ranks_dir} is gone (removed while the job ran?): the ranks' records are not there")
        if rc == 0 and self.hang_bundles:     # the ranks it found behind were only slow: not a hang
            self.say(f"the job finished after {self.hang_bundles} hang bundle(s): the stall ended by itself "
                     f"(triage report {self.run_dir} says what the rank behind was doing)")
        if rc != 0 and not self.stopped_for_hang:
            if self.flags.forwarded:     # a scheduler's SIGKILL may follow soon: say who stopped it first
                self.say(f"{self._forwarded_note()}; the report follows (if it is cut short: "
                         f"triage report {self.run_dir})")
            self.verdict = self._report_failure()     # after a forwarded signal too: the report's own story
        for finding in getattr(self.monitor, "findings", ()):
            self.say(f"finding: {finding}")
        self.say(f"launcher ended: {how}; triage exits with {code}")
        said = self.verdict.summary if self.verdict is not None else self.stop_note
        if said is None and self.flags.forwarded:
            said = self._forwarded_note()
        if said:
            self.say(f"verdict: {said}")
        self.say(f"next: triage report {self.run_dir}")
        return code

    def _forwarded_note(self) -> str:
        """Who stopped the job: a signal to triage launch itself, which it passed to the launcher."""
        # (the loader's module: imported only here, at the end of a stopped job)
        from triage.load.forwarded import forwarded_words

        names = [signame(sig) for sig in self.flags.forwarded]
        return f"STOPPED (from outside the job): {forwarded_words(names, os.getpid(), self.host)}"

    def _report_failure(self) -> Verdict | None:
        """The job failed on its own (a crash or an exception): print the report of the run."""
        self.pump.pump(time.time())
        from triage.agent.hang.stop_decision import print_report  # (only a failed job prints a report)
        from triage.agent.launch.end_report import report_once

        return report_once(self.run_dir, self.host, self.started, lambda: print_report(self.run_dir))

    # -- per tick --------------------------------------------------------------------------
    def _tick(self, now: float) -> None:
        self.pump.discover()
        self._follow_stop()
        if now - self._hosts_checked >= 5.0 and lines.prefix() == "triage":
            self._hosts_checked = now
            with contextlib.suppress(OSError):
                if any(h.host != self.host and h.node.is_file() for h in RunPaths(self.run_dir).hosts()):
                    lines.mark_multi_node()        # another node's agent writes to this run directory
        statuses, exited = self.ranks.poll(now)
        self.tracker.snapshot(self.ranks.worker_pids())
        if not self._job_being_stopped():
            for status in exited:
                self._offer(self._call(lambda s=status: self.monitor.on_rank_exit(s)), statuses)
        self._offer(self._call(lambda: self.monitor.on_tick(statuses, now)), statuses)
        if self.numerics is not None:
            self._call(self.numerics.on_tick)
        self.stragglers.on_tick(statuses, now, busy=self._job_being_stopped() or bool(self.action_queue)
                                or bool(self.action_thread and self.action_thread.is_alive()))
        if self.flags.usr1:
            self.flags.usr1 = 0
            self._offer(MonitorAction(MonitorActionKind.COLLECT, "manual", "SIGUSR1 to the triage agent"),
                        statuses)
        for action in self._dump_requests():
            self._offer(action, statuses)
        self._start_next_action(statuses)

    def _job_being_stopped(self) -> bool:
        """Ranks that exit after triage stopped the job, or after the user's signal was forwarded,
        are the teardown's doing: they must not look like a crash of their own."""
        return self.stop_requested_at is not None or bool(self.flags.forwarded)

    def _call(self, fn: Any) -> MonitorAction | None:
        try:
            result: MonitorAction | None = fn()
            return result
        except Exception as exc:  # noqa: BLE001
            self.say(f"hang monitor error: {type(exc).__name__}: {exc}")
            return None

    def _on_output(self, rank: int, chunk: bytes) -> None:
        with contextlib.suppress(Exception):
            self.monitor.on_output(rank, chunk)

    def _dump_requests(self) -> list[MonitorAction]:
        actions = []
        try:
            names = sorted(os.listdir(self.paths.dump_requests))
        except OSError:
            return []
        for name in names:
            if name.startswith(".") or name.endswith(".done") or name in self.seen_requests:
                continue
            self.seen_requests.add(name)
            data = read_json_or_none(self.paths.dump_requests / name)
            reason = data.get("reason") if isinstance(data, dict) and data.get("reason") else None
            actions.append(MonitorAction(MonitorActionKind.COLLECT, "manual",
                                         str(reason or f"dump request {name}")))
            self._pending_request_files.setdefault(id(actions[-1]), name)
        return actions

    # -- actions ---------------------------------------------------------------------------
    def _offer(self, action: MonitorAction | None, statuses: Sequence[LocalRankStatus]) -> None:
        if action is not None:
            self.action_queue.append(action)

    def _start_next_action(self, statuses: Sequence[LocalRankStatus]) -> None:
        if self.stopped_for_hang and self.action_queue:
            self.action_queue.clear()           # the verdict is fixed: no second bundle, no second report
        if not self.action_queue or (self.action_thread is not None and self.action_thread.is_alive()):
            return
        action = self.action_queue.pop(0)
        snapshot = tuple(statuses)
        self.action_thread = threading.Thread(target=self._run_action, args=(action, snapshot),
                                              name="triage-action", daemon=True)
        self.action_thread.start()

    def _run_action(self, action: MonitorAction, statuses: tuple[LocalRankStatus, ...]) -> None:
        # Imported here to stay off the agent's start-up path (bench/bench_agent_overhead.py): only a
        # suspected hang needs the collectors and the node-bundle writer behind it.
        from triage.agent.hang.actions import run_action
        outcome: ActionOutcome | None = None
        try:
            outcome = run_action(self.ctx, self.settings, action, statuses,
                                 stop=lambda: self.request_stop(hang=True), stop_at=self.schedule_stop)
        except Exception as exc:  # noqa: BLE001
            self.say(f"collection failed: {type(exc).__name__}: {exc}")
        with contextlib.suppress(Exception):
            self.monitor.on_outcome(action, outcome.busy if outcome is not None else None,
                                    gone=bool(outcome is not None and outcome.gone))
        if outcome is not None and outcome.bundle is not None and action.trigger == "hang":
            self.hang_bundles += 1
        if outcome is not None and outcome.stop_job:
            self.verdict, self.stop_note = outcome.verdict, None if outcome.verdict is not None else outcome.message
            if outcome.stop_at is None or outcome.stop_at <= time.time() or self.stop_at is None:
                self.request_stop(hang=True)
        request = self._pending_request_files.pop(id(action), None)
        if request is not None:
            with contextlib.suppress(OSError):
                write_json_atomic(self.paths.dump_requests / f"{request}.done", {
                    "time": time.time(), "bundle": str(outcome.bundle) if outcome and outcome.bundle else None,
                    "message": outcome.message if outcome else "collection failed"})

    def _wait_actions(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            thread = self.action_thread
            if thread is not None and thread.is_alive():
                thread.join(0.2)
                self.pump.pump(time.time())
                continue
            if not self.action_queue:
                return
            self._start_next_action(tuple(t.status for t in self.ranks.ranks.values() if t.status))

    # -- stopping --------------------------------------------------------------------------
    def _follow_stop(self) -> None:
        """Another node decided to stop the job (its stop.json): stop at the same moment, even while
        this node's own collection still runs."""
        if self.stop_at is not None or self.stop_requested_at is not None or lines.prefix() == "triage":
            return
        with contextlib.suppress(Exception):
            from triage.agent.hang import stop_decision  # (only a job of several nodes follows another's stop)
            found = stop_decision.other_decision(self.run_dir, self.host, self.started)
            if found is not None:
                self.schedule_stop(found.stop_at)
                if self.verdict is None and self.stop_note is None:
                    self.verdict = found.verdict
                stop_decision.point_to(self.run_dir, found)

    def schedule_stop(self, at: float) -> None:
        """Stop the job at unix time ``at`` (the moment every node of the job stops); the main loop
        looks at the clock every pass (at most IDLE_SLEEP apart)."""
        self.stopped_for_hang = True
        self.stop_at = at if self.stop_at is None else min(self.stop_at, at)

    def request_stop(self, hang: bool) -> None:
        if self.stop_requested_at is not None:
            return
        self.stopped_for_hang = self.stopped_for_hang or hang
        pump = getattr(self, "pump", None)
        if hang and pump is not None:
            pump.quiet_since = time.time()      # the stop's tracebacks: to the logs, one line on the console
        self.stop_requested_at = time.monotonic()
        self.stop_requested_unix = time.time()
        launcher.terminate(self.proc, self.say)

    def _escalate_stop(self, now: float, grace: float) -> None:
        if len(self.flags.forwarded) >= 3 and self.stop_requested_at != float("inf"):
            self.stop_requested_at = time.monotonic() - grace   # third Ctrl-C: kill the job now
        started = self.stop_requested_at
        if started is None or self.proc is None or self.proc.poll() is not None:
            return
        if time.monotonic() - started >= grace:
            launcher.kill_job(self.proc, self.tracker, self.ranks.worker_pids(), self.say)
            self.stop_requested_at = float("inf")


def launch(argv: Sequence[str], settings: LaunchSettings) -> int:
    console = sys.stdout.buffer if settings.console != ConsoleMode.NONE else None
    return NodeAgent(argv, settings, console, sys.stderr).run()


__all__ = ["HostPaths", "NodeAgent", "NullMonitor", "exit_code_of", "launch"]
