"""What the node agent knows about each local rank, rebuilt every tick from the files the
in-worker agents write (worker.json, heartbeat.json, exit.json) and from /proc (psutil)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

from triage.agent.state import LocalRankStatus
from triage.layout import HostPaths, RankPaths
from triage.model import Collective, CollectiveState
from triage.parsing.stacks import parse_faulthandler_signal

if TYPE_CHECKING:          # (the agent starts without the report's model: test_agent_imports.py)
    from triage.model.evidence import ExitInfo


def read_json_or_none(path: os.PathLike[str] | str) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


@dataclass
class _Tracked:
    rank: int
    paths: RankPaths
    worker: dict[str, Any] | None = None
    proc: psutil.Process | None = None
    alive: bool = False
    exited: bool = False
    last_progress_key: Any = None
    last_progress_at: float | None = None
    status: LocalRankStatus | None = None


@dataclass
class RankTracker:
    host_paths: HostPaths
    host: str
    since: float = 0.0        # ignore workers registered before this (a reused run dir)
    ranks: dict[int, _Tracked] = field(default_factory=dict)

    def worker_pids(self) -> list[psutil.Process]:
        return [t.proc for t in self.ranks.values() if t.proc is not None]

    def poll(self, now: float) -> tuple[list[LocalRankStatus], list[LocalRankStatus]]:
        """(statuses of all ranks, statuses of ranks seen exiting since the last poll)."""
        for rank in self.host_paths.ranks():
            if rank not in self.ranks:
                self.ranks[rank] = _Tracked(rank, self.host_paths.rank(rank))
        statuses: list[LocalRankStatus] = []
        exited: list[LocalRankStatus] = []
        for tracked in self.ranks.values():
            status = self._status(tracked, now)
            if tracked.worker is None:
                continue                  # not registered (yet), or left over from an earlier run
            tracked.status = status
            statuses.append(status)
            if not status.alive and not tracked.exited:
                tracked.exited = True     # also for ranks that lived less than one tick
                exited.append(status)
        return statuses, exited

    def _status(self, t: _Tracked, now: float) -> LocalRankStatus:
        if t.worker is None or not t.alive:      # new worker, or a restarted one (elastic)
            self._load_worker(t)
        t.alive = _is_alive(t.proc)
        beat = read_json_or_none(t.paths.heartbeat) or {}
        if beat.get("pid") not in (None, (t.worker or {}).get("pid")):
            beat = {}
        progress = tuple(sorted((pg, int(p.get("enqueued", -1)))
                                for pg, p in (beat.get("progress") or {}).items()))
        key = (progress, beat.get("step"))
        moved = beat.get("progress_time")        # the worker's own record of when progress moved
        if isinstance(moved, (int, float)) and not isinstance(moved, bool):
            t.last_progress_key, t.last_progress_at = key, min(float(moved), now)
        elif beat and key != t.last_progress_key:
            t.last_progress_key, t.last_progress_at = key, now
        beat_time = beat.get("time")
        return LocalRankStatus(
            rank=t.rank,
            local_rank=(t.worker or {}).get("local_rank"),
            host=self.host,
            pid=(t.worker or {}).get("pid"),
            alive=t.alive,
            returncode=None if t.alive else self._returncode(t),
            heartbeat_age_s=max(0.0, now - float(beat_time)) if isinstance(beat_time, (int, float)) else None,
            progress_age_s=None if t.last_progress_at is None or key == ((), None)
            else max(0.0, now - t.last_progress_at),
            in_flight=in_flight_from_heartbeat(beat, t.rank),
            progress=progress,
            step=beat.get("step"),
            paths=t.paths,
            exiting=t.alive and _exit_recorded(t),
        )

    def _load_worker(self, t: _Tracked) -> None:
        worker = read_json_or_none(t.paths.worker)
        if not isinstance(worker, dict) or not isinstance(worker.get("pid"), int):
            return
        if float(worker.get("started") or 0) < self.since - 1.0:
            return
        if t.worker is not None and t.worker.get("pid") == worker["pid"]:
            return
        t.worker = worker          # a new process for this rank (first start or an elastic restart)
        t.exited = False
        try:
            proc = psutil.Process(worker["pid"])
            # pid reuse guard: the process must have started before worker.json was written
            t.proc = proc if proc.create_time() <= float(worker.get("started", 0)) + 1.0 else None
        except psutil.Error:
            t.proc = None

    def _returncode(self, t: _Tracked) -> int | None:
        exit_info = read_json_or_none(t.paths.exit)
        pid = (t.worker or {}).get("pid")
        if isinstance(exit_info, dict) and exit_info.get("pid") == pid and exit_info.get("how") == "exit":
            code = exit_info.get("exit_code")
            return int(code) if isinstance(code, int) else None
        sig = fatal_signal(t.paths.faulthandler)
        raised = isinstance(exit_info, dict) and exit_info.get("pid") == pid and exit_info.get("how") == "exception"
        if sig is not None and not (sig == signal.SIGTERM and raised):
            return -int(sig)   # a SIGTERM that came while a rank that had raised went down: it raised
        if isinstance(exit_info, dict) and exit_info.get("pid") == pid:
            code = exit_info.get("exit_code")
            return int(code) if isinstance(code, int) else None
        return None


def _exit_recorded(t: _Tracked) -> bool:
    """The worker wrote its exit record (atexit, after every handler of the user's): it is ending."""
    if not t.paths.exit.is_file():
        return False
    exit_info = read_json_or_none(t.paths.exit)
    return isinstance(exit_info, dict) and exit_info.get("pid") == (t.worker or {}).get("pid")


def _is_alive(proc: psutil.Process | None) -> bool:
    if proc is None:
        return False
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def fatal_signal(path: os.PathLike[str] | str) -> signal.Signals | None:
    """The signal faulthandler reported last in a rank's faulthandler.log, if any (a dump without
    a "Fatal Python error" header comes from the SIGTERM registration)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 65536))
            tail = handle.read()
    except OSError:
        return None
    fatal = parse_faulthandler_signal(tail.decode("utf-8", "replace"))
    if fatal:
        from triage.parsing.crashlog import FAULT_SIGNALS  # the crash-log parser: only for a crashed rank

        name = FAULT_SIGNALS.get(fatal.strip())
        return signal.Signals[name] if name else None
    # The only non-fatal signal faulthandler is registered for in a worker is SIGTERM.
    return signal.SIGTERM if b"most recent call first" in tail else None


def in_flight_from_heartbeat(beat: dict[str, Any], rank: int) -> Collective | None:
    """The collective a heartbeat says the rank is waiting in (parsed by the shared FR parser)."""
    fr = beat.get("fr")
    if not isinstance(fr, dict) or not fr.get("entries"):
        return _in_flight_from_frame(beat.get("waiting_in"), rank)
    from triage.parsing.flight_recorder.parse import parse_fr_json  # with the first beat that has entries

    dump = parse_fr_json(fr, rank, "heartbeat")
    pending = [c for c in dump.collectives if c.state != CollectiveState.COMPLETED]
    if not pending:
        return None
    return max(pending, key=lambda c: (c.time_ns or 0, c.seq))


def _in_flight_from_frame(waiting: Any, rank: int) -> Collective | None:
    """Without a Flight Recorder, the collective the heartbeat saw the main thread in (its Python
    frame, with the group's sequence number and when the rank entered it)."""
    if not isinstance(waiting, dict):
        return None
    op, pg, seq, since = waiting.get("op"), waiting.get("pg"), waiting.get("seq"), waiting.get("since")
    if not (isinstance(op, str) and isinstance(pg, str) and isinstance(seq, int)
            and isinstance(since, (int, float)) and not isinstance(seq, bool)):
        return None
    return Collective(rank=rank, pg=pg, seq=seq, op=op, state=CollectiveState.IN_FLIGHT,
                      time_ns=int(float(since) * 1e9), source="stack")


def describe_ends(statuses: list[LocalRankStatus], launcher: Mapping[int, ExitInfo] | None = None,
                  launcher_rc: int | None = None, disk_full: Collection[int] = ()) -> str:
    """One line on how this node's ranks ended, e.g. ``rank 1 killed by SIGSEGV; 3 ranks exited 0``.
    ``launcher``: how the launcher saw them end; a rank whose own record says exit 0 but which the
    launcher saw die (not as the collateral of another) crashed at exit, after its work.
    A rank with no exit record: ``disk_full`` (ranks whose record a full run directory kept out) and
    ``launcher_rc`` (the launcher's own exit status) say what is known, never a guessed SIGKILL."""
    launcher = launcher or {}
    late = {s.rank: launcher[s.rank] for s in statuses if s.returncode == 0 and not s.alive and s.rank in launcher
            and not launcher[s.rank].ok and not launcher[s.rank].collateral}
    ok = [s for s in statuses if s.returncode == 0 and s.rank not in late]
    parts = [f"rank {rank} finished its work (exit record 0), then {_ended(info)} at exit (the launcher's record)"
             for rank, info in sorted(late.items())]
    unrecorded: list[int] = []
    for status in sorted(statuses, key=lambda s: s.rank):
        code = status.returncode
        if status.alive or code == 0:
            continue
        if code is None and (status.rank in disk_full or launcher_rc == 0):
            unrecorded.append(status.rank)
        elif code is None and status.rank in launcher:
            parts.append(f"rank {status.rank} {_ended(launcher[status.rank])} (the launcher's record; no exit record)")
        elif code is None:
            parts.append(f"rank {status.rank} ended without a trace (SIGKILL? see launcher.log)")
        elif code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            parts.append(f"rank {status.rank} killed by {name}")
        elif launcher_rc == 0:      # the launcher saw it exit 0: its own record saw a caught sys.exit()
            parts.append(f"rank {status.rank} exited 0 (the launcher's record; its own exit record said {code}: "
                         "a sys.exit() or an exception that it caught, and went on)")
        else:
            parts.append(f"rank {status.rank} exited {code}")
    full = [r for r in unrecorded if r in disk_full]
    parts += _unrecorded(full, launcher_rc, True) + _unrecorded([r for r in unrecorded if r not in full], launcher_rc,
                                                                  False)
    if ok:
        parts.append(f"{len(ok)} rank{'s' if len(ok) != 1 else ''} exited 0")
    return "; ".join(parts)


def launcher_exits_if_needed(statuses: Sequence[LocalRankStatus], launcher_log: Path) -> dict[int, ExitInfo] | None:
    """How the launcher saw the ranks end (for :func:`describe_ends`), read only where it can change what is
    said: for a rank whose own exit record says exit 0 (it may have died in its teardown after it), in a
    launcher log that holds something. A job with no such rank (no Python rank, or every rank failed on its
    own record), or whose launcher printed nothing, never loads the log parser behind it (None)."""
    if not any((s.returncode == 0 or s.returncode is None) and not s.alive for s in statuses):
        return None
    with contextlib.suppress(OSError):
        if os.path.getsize(launcher_log) == 0:
            return None             # a launcher that printed nothing (a rank started alone) recorded no end
    from triage.load.teardown import launcher_exits  # (the launcher's record: only at the end)
    return launcher_exits(launcher_log)


def _unrecorded(ranks: list[int], launcher_rc: int | None, disk_full: bool) -> list[str]:
    """Ranks that left no exit record: what is known of their end."""
    if not ranks:
        return []
    name = f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {','.join(map(str, ranks))}"
    if disk_full:
        they = "it" if len(ranks) == 1 else "they"
        said = f"{name}: how {they} ended is not recorded (the run directory's disk was full)"
    else:
        said = f"{name}: no exit record"
    return [f"{said}; the launcher exited 0" if launcher_rc == 0 else said]


def discarded_output(statuses: list[LocalRankStatus]) -> set[int]:
    """The ranks with no exit record whose disk guard said the run directory's disk was full (the last lines
    of their output); a rank with its record is never read (a job that ended well reads nothing here)."""
    unrecorded = [s for s in statuses if s.returncode is None and not s.alive and s.paths is not None]
    if not unrecorded:
        return set()
    from triage.parsing.disk_guard import disk_full_note  # (only at the end, only for a rank with no record)

    return {s.rank for s in unrecorded if s.paths is not None and disk_full_note(_tail(s.paths.output))}


def _tail(path: Path, limit: int = 64 << 10) -> list[str]:
    """The last lines of a rank's output (at most ``limit`` bytes from its end; [] when unreadable)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, handle.seek(0, os.SEEK_END) - limit))
            data = handle.read(limit)
    except OSError:
        return []
    return data.decode("utf-8", "replace").splitlines()[-50:]


def _ended(info: ExitInfo) -> str:
    if info.signal is not None:
        return f"was killed by {info.signal_name or f'signal {info.signal}'}"
    return f"exited {info.exit_code}"
