"""Hangs before the first collective: ranks waiting in ``init_process_group``, a rendezvous, a
TCPStore wait or a communicator init, while a peer never gets there.

Before its first collective a rank shows no progress (no Flight Recorder seq, no step), so the
progress rules cannot see it. For those ranks the watch:

- reads each rank's CPU and I/O counters every tick (``/proc``, cheap) and notes since when the
  rank has been idle (under 5% of a core, under 64 kB/s, and no thread runnable at two ticks in a
  row: a rank still importing on an overloaded node wants a CPU and gets little; it is not idle);
- asks a background thread for a ``py-spy dump --nonblocking`` of these ranks when one of them
  has just become idle, and again every half timeout while it stays idle (never from the tick);
- classifies each stack: **in init** (a frame of init_process_group, a rendezvous handler, the
  store-based barrier, new_group, init_device_mesh...) or **elsewhere** (with its own frame).

An init hang: a live rank has waited in init for ``timeout`` (counted from when it became idle
there) while a local peer has not reached init, or while every local rank waits there (the
missing ranks are elsewhere). A rank still importing is busy and not in init: nothing is flagged
until its peers wait.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from triage.agent.hang import busy
from triage.agent.hang.detect import HangSuspicion
from triage.agent.state import InitInfo, LocalRankStatus
from triage.analysis.ranks import rank_word
from triage.parsing.stacks import ThreadStack, parse_pyspy_json

INIT_FUNCTIONS = frozenset({
    "init_process_group", "_new_process_group_helper", "rendezvous", "_create_c10d_store",
    "_store_based_barrier", "_tcp_rendezvous_handler", "_env_rendezvous_handler", "_file_rendezvous_handler",
    "new_group", "init_device_mesh", "next_rendezvous", "_rendezvous", "TCPStore", "_get_default_store",
})
INIT_FILES = ("torch/distributed/rendezvous.py", "torch/distributed/elastic/rendezvous/")
_ENTRY_ORDER = ("init_process_group", "init_device_mesh", "new_group", "next_rendezvous")


@dataclass
class _RankInit:
    pid: int
    counters: busy.Counters | None = None
    idle_since: float | None = None     # unix time the rank became idle (None: busy)
    probed_at: float = float("-inf")    # unix time of the last stack probe asked for
    where: str | None = None            # "init_process_group" | own frame of the rank elsewhere
    in_init: bool | None = None         # from the last probe
    probe_idle_since: float | None = None   # idle_since when that probe was taken
    store: str | None = None            # MASTER_ADDR:MASTER_PORT of the rank


@dataclass
class InitWatch:
    timeout: float
    ranks: dict[int, _RankInit] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _probing: bool = False

    def tick(self, statuses: Sequence[LocalRankStatus], now: float) -> HangSuspicion | None:
        """Update the counters of ranks without progress; start a probe if due; say if it is an init hang."""
        fresh = [s for s in statuses if s.alive and s.pid is not None and not s.progress and s.step is None]
        if len(fresh) < sum(1 for s in statuses if s.alive and s.pid is not None):
            self.ranks.clear()          # some rank made progress: the job is past its start-up
            return None
        for status in fresh:
            if status.pid is None:
                continue                # not started yet: nothing to read
            state = self.ranks.get(status.rank)
            if state is None or state.pid != status.pid:
                state = self.ranks[status.rank] = _RankInit(status.pid, store=_store_of(status.pid))
            self._count(state, now)
        for rank in [r for r in self.ranks if r not in {s.rank for s in fresh}]:
            del self.ranks[rank]
        self._maybe_probe(now)
        return self.suspicion(now)

    def _count(self, state: _RankInit, now: float) -> None:
        counters = busy.read_counters(state.pid, waits=True)
        before, state.counters = state.counters, counters
        if counters is None or before is None:
            return
        span = max(1e-3, counters.at - before.at)
        idle = ((counters.cpu_s - before.cpu_s) / span < busy.CPU_BUSY_SHARE
                and (counters.io_bytes - before.io_bytes) / span < busy.IO_BUSY_BYTES_PER_S
                and not counters.runnable & before.runnable)    # runnable at both ticks: starved, not idle
        if not idle:
            state.idle_since = None
        elif state.idle_since is None:
            state.idle_since = now - span

    def _maybe_probe(self, now: float) -> None:
        due = [s for s in self.ranks.values() if s.idle_since is not None and (
            s.probe_idle_since != s.idle_since or now - s.probed_at >= self.timeout / 2)]
        with self._lock:
            if not due or self._probing:
                return
            self._probing = True
        targets = [(rank, s.pid) for rank, s in self.ranks.items()]
        for state in self.ranks.values():
            state.probed_at = now
        idle = {rank: s.idle_since for rank, s in self.ranks.items()}
        threading.Thread(target=self._probe, args=(targets, idle), name="triage-init-probe", daemon=True).start()

    def _probe(self, targets: list[tuple[int, int]], idle: dict[int, float | None]) -> None:
        from triage.collectors.pyspy import sample_stacks  # the collectors: only when a rank is probed

        try:
            for rank, pid in targets:
                data, _error = sample_stacks(pid)
                threads = parse_pyspy_json(data) if data is not None else None
                with self._lock:
                    state = self.ranks.get(rank)
                    if state is None or state.pid != pid or threads is None:
                        continue
                    state.in_init, state.where = classify(threads)
                    state.probe_idle_since = idle.get(rank)
        finally:
            with self._lock:
                self._probing = False

    def suspicion(self, now: float) -> HangSuspicion | None:
        with self._lock:
            states = dict(self.ranks)
        waiting = {r: s for r, s in states.items()
                   if s.in_init and s.idle_since is not None and s.probe_idle_since == s.idle_since}
        if not waiting:
            return None
        longest = max(now - s.idle_since for s in waiting.values() if s.idle_since is not None)
        if longest < self.timeout:
            return None
        outside = {r: s for r, s in states.items() if r not in waiting}
        if any(s.idle_since is not None and s.probe_idle_since != s.idle_since for s in outside.values()):
            return None     # an idle rank not probed since it went idle may be in init too (a slow start): wait
        first = next(iter(waiting.values()))
        where = first.where or "init_process_group"
        store = f" (store {first.store})" if first.store else ""
        parts = [f"init hang: {rank_word(waiting)} waiting in {where}{store} for {int(longest)} s"]
        for rank, state in sorted(outside.items()):
            doing = "busy" if state.idle_since is None else "blocked"
            at = f" in {state.where}" if state.where and not state.in_init else ""
            parts.append(f"rank {rank} has not reached it ({doing}{at})")
        if not outside:
            parts.append("the ranks they wait for are not on this node (never started, or on another node)")
        key = ("init", tuple(sorted(waiting)), tuple(sorted(outside)))
        info = InitInfo(waiting=tuple(sorted(waiting)), never_joined=tuple(sorted(outside)), where=where,
                        store=first.store, seconds=longest)
        return HangSuspicion(message="; ".join(parts), ranks=tuple(sorted(states)), key=key, source="init",
                             culprits=tuple(sorted(outside)), waiting=f"{rank_word(waiting)} waiting in {where}",
                             init=info)


def classify(threads: Sequence[ThreadStack]) -> tuple[bool, str | None]:
    """(the main thread is in a start-up call, the entry call or its own innermost frame)."""
    mains = [t for t in threads if t.is_main] or list(threads[:1])
    if not mains:
        return False, None
    frames = mains[0].frames
    hits = [f for f in frames if f.function in INIT_FUNCTIONS or any(m in f.filename for m in INIT_FILES)]
    if hits:
        names = {f.function for f in hits}
        entry = next((name for name in _ENTRY_ORDER if name in names), hits[-1].function)
        return True, entry
    return False, busy.where(mains)


def _store_of(pid: int) -> str | None:
    """MASTER_ADDR:MASTER_PORT from the rank's environment (only these two variables are read)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            raw = handle.read(1 << 20)
    except OSError:
        return None
    env = dict(item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    addr, port = env.get(b"MASTER_ADDR"), env.get(b"MASTER_PORT")
    if not addr or not port:
        return None
    return f"{addr.decode('utf-8', 'replace')[:100]}:{port.decode('utf-8', 'replace')[:10]}"


def blocked_elsewhere(watch: InitWatch, ranks: Sequence[int]) -> bool:
    """Every given rank is idle (no CPU, no I/O) according to the tick counters."""
    return all(watch.ranks.get(r) is not None and watch.ranks[r].idle_since is not None for r in ranks)


__all__ = ["INIT_FUNCTIONS", "InitWatch", "blocked_elsewhere", "classify"]
