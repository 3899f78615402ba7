"""Busy or blocked: is a rank that holds up the others still doing something?

A rank outside any collective while its peers wait may be hung, or may be writing a
checkpoint. Two samples of each such rank, ``sample_interval`` seconds apart, tell them apart:

- CPU time of the rank's threads (``/proc/PID/task/TID/stat``),
- which of its threads are runnable (state ``R`` in ``/proc/PID/task/TID/stat``),
- I/O bytes of its threads (``/proc/PID/task/TID/io``: read/write calls and storage bytes),
- the Python stacks of its threads (``py-spy dump --nonblocking``: the rank is never paused).

The threads of triage's own in-worker agent (named ``triage-*``) are left out: their heartbeat
and the evidence they write on a dump request are triage's work, not the rank's.

A rank is **busy** when its CPU share or I/O rate is over a small floor, or its stacks changed, or
one of its threads is runnable in both samples (it wants a CPU and gets little: an overloaded node, a
CPU quota; a blocked thread sleeps);
**blocked** when none of them moved; **gone** when it exited between the samples; **unknown**
when it could not be read (treated like busy: no stop on a guess). A rank whose main thread is in a
CUDA synchronize or an NCCL wait is **waiting on the GPU**, whatever its CPU
(:mod:`triage.agent.hang.gpu_wait`: a hang when the GPU is idle or its use unknown, watched like a busy
rank while the GPU runs).
"""

from __future__ import annotations

import enum
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from triage.agent.hang.gpu_wait import gpu_utilization, gpu_wait
from triage.parsing.stacks import Frame, ThreadStack, parse_pyspy_json

# 5% of one core: a blocked rank's own threads (gloo, torch) use < 0.5%; strace and py-spy taking
# the bundle between the two samples add ~1%.
CPU_BUSY_SHARE = 0.05
IO_BUSY_BYTES_PER_S = 64 * 1024       # more than a rank's own log lines while it waits
OWN_THREAD_PREFIX = "triage-"
_LIBRARY_MARKERS = ("/site-packages/", "/dist-packages/", "/lib/python3", "<frozen ")
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class Activity(str, enum.Enum):
    BUSY = "busy"
    BLOCKED = "blocked"
    GONE = "gone"
    UNKNOWN = "unknown"
    GPU_WAIT = "waiting on the GPU"


@dataclass(frozen=True)
class Counters:
    at: float                         # monotonic time of the reading
    cpu_s: float                      # user + system seconds of the counted threads
    io_bytes: int                     # rchar + wchar + read_bytes + write_bytes of the counted threads
    runnable: frozenset[int] = frozenset()  # the counted threads in state R (read when asked)


@dataclass(frozen=True)
class RankSample:
    rank: int
    pid: int
    counters: Counters | None
    threads: tuple[ThreadStack, ...] | None     # None: no stack sample (py-spy missing or failed)
    own_tids: frozenset[int] = frozenset()     # triage's threads, left out of the counters
    error: str | None = None


@dataclass(frozen=True)
class RankActivity:
    rank: int
    pid: int
    activity: Activity
    cpu_share: float | None = None
    io_rate: float | None = None      # bytes per second
    stack_changed: bool | None = None
    where: str | None = None          # "save_checkpoint (ckpt.py:10)": the rank's innermost own frame
    error: str | None = None          # why a stack sample is missing
    gpu_wait: str | None = None       # "torch.cuda.synchronize (step at train.py:42)"
    gpu_util: float | None = None     # NVML utilization of its GPU (0..1); None: not known
    runnable: bool | None = None      # a thread of the rank was runnable in both samples (wants a CPU)

    def evidence(self) -> str:
        """``CPU 85%, I/O 12.0 MB/s, stack moving`` (what made it busy or blocked)."""
        parts = []
        if self.activity == Activity.GPU_WAIT:
            parts.append(f"in {self.gpu_wait}")
            parts.append(f"GPU {self.gpu_util * 100:.0f}%" if self.gpu_util is not None
                         else "GPU use not known (no NVML reading)")
        if self.cpu_share is not None:
            parts.append(f"CPU {self.cpu_share * 100:.0f}%")
        if self.runnable:
            parts.append("runnable, waiting for a CPU" if (self.cpu_share or 0.0) < CPU_BUSY_SHARE else "runnable")
        if self.io_rate is not None:
            parts.append(f"I/O {_rate(self.io_rate)}")
        if self.stack_changed is not None:
            parts.append("stack moving" if self.stack_changed else "same stack")
        return ", ".join(parts)


def _rate(bytes_per_s: float) -> str:
    if bytes_per_s >= 1e6:
        return f"{bytes_per_s / 1e6:.1f} MB/s"
    if bytes_per_s >= 1e3:
        return f"{bytes_per_s / 1e3:.0f} kB/s"
    return f"{bytes_per_s:.0f} B/s"


# -- reading ---------------------------------------------------------------------------------
def _thread_cpu(pid: int, tid: int | None) -> float | None:
    path = f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat"
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[-1].split()
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS     # utime, stime
    except (OSError, IndexError, ValueError):
        return None


def _thread_io(pid: int, tid: int | None) -> int | None:
    path = f"/proc/{pid}/io" if tid is None else f"/proc/{pid}/task/{tid}/io"
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            values = dict(line.split(":", 1) for line in handle if ":" in line)
        return sum(int(values[k]) for k in ("rchar", "wchar", "read_bytes", "write_bytes") if k in values)
    except (OSError, ValueError):
        return None


def _runnable(pid: int, own_tids: frozenset[int]) -> frozenset[int]:
    """The threads (not in ``own_tids``) whose state is R: running, or waiting for a CPU."""
    out = set()
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return frozenset()
    for name in tids:
        if not name.isdigit() or int(name) in own_tids:
            continue
        try:
            with open(f"/proc/{pid}/task/{name}/stat", encoding="ascii", errors="replace") as handle:
                if handle.read().rsplit(")", 1)[-1].split()[0] == "R":
                    out.add(int(name))
        except (OSError, IndexError):
            continue
    return frozenset(out)


def read_counters(pid: int, own_tids: frozenset[int] = frozenset(), waits: bool = False) -> Counters | None:
    """The process's CPU seconds and I/O bytes, minus those of ``own_tids`` (None: gone/unreadable);
    ``waits``: with the other threads that are runnable."""
    at = time.monotonic()
    cpu, io = _thread_cpu(pid, None), _thread_io(pid, None)
    if cpu is None:
        return None
    io_total = io if io is not None else 0
    for tid in own_tids:
        cpu -= _thread_cpu(pid, tid) or 0.0
        io_total -= _thread_io(pid, tid) or 0
    return Counters(at, cpu, io_total, _runnable(pid, own_tids) if waits else frozenset())


def _tid(thread: ThreadStack) -> int | None:
    try:
        return int(thread.thread_id)
    except ValueError:
        return None


def take_sample(rank: int, pid: int, own_tids: frozenset[int] | None = None,
                timeout: float = 5.0) -> RankSample:
    """Stacks first (to learn triage's own threads), then the counters without them."""
    from triage.collectors.pyspy import sample_stacks  # the collectors: only when a rank is sampled

    data, error = sample_stacks(pid, timeout)
    if data is None and os.path.exists(f"/proc/{pid}"):
        data, error = sample_stacks(pid, timeout)     # a read racing the target's own changes: once more
    threads = parse_pyspy_json(data) if data is not None else None
    if own_tids is None:
        own_tids = frozenset(t for t in (_tid(th) for th in threads or ()
                                         if (th.thread_name or "").startswith(OWN_THREAD_PREFIX))
                             if t is not None)
    return RankSample(rank, pid, read_counters(pid, own_tids, waits=True), threads, own_tids, error)


def sample_all(targets: Sequence[tuple[int, int]], previous: dict[int, RankSample] | None = None,
               timeout: float = 5.0) -> dict[int, RankSample]:
    """One sample of each (rank, pid), all at once (one thread per rank)."""
    results: dict[int, RankSample] = {}

    def one(rank: int, pid: int) -> None:
        before = (previous or {}).get(rank)
        results[rank] = take_sample(rank, pid, before.own_tids if before else None, timeout)

    threads = [threading.Thread(target=one, args=t, daemon=True) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout + 5.0)
    return results


# -- judging ---------------------------------------------------------------------------------
def _stack_key(threads: Sequence[ThreadStack]) -> tuple[object, ...]:
    return tuple(sorted(
        (t.thread_id, tuple((f.function, f.filename, f.line) for f in t.frames))
        for t in threads if not (t.thread_name or "").startswith(OWN_THREAD_PREFIX)))


def _main(threads: Sequence[ThreadStack]) -> ThreadStack | None:
    mains = [t for t in threads if t.is_main]
    return mains[0] if mains else (threads[0] if threads else None)


def own_frame(frames: Sequence[Frame]) -> Frame | None:
    """The innermost frame of the user's code (not the standard library or an installed package)."""
    for frame in frames:
        if not any(marker in frame.filename for marker in _LIBRARY_MARKERS):
            return frame
    return frames[0] if frames else None


def where(threads: Sequence[ThreadStack] | None) -> str | None:
    main = _main(threads or ())
    frame = own_frame(main.frames) if main is not None else None
    if frame is None:
        return None
    line = f":{frame.line}" if frame.line is not None else ""
    return f"{frame.function} ({os.path.basename(frame.filename)}{line})"


def judge(first: RankSample, second: RankSample) -> RankActivity:
    """Busy, blocked, gone or unknown, from two samples of the same rank."""
    base = RankActivity(first.rank, first.pid, Activity.UNKNOWN, where=where(second.threads or first.threads),
                        error=second.error or first.error)
    if second.counters is None:
        alive = os.path.exists(f"/proc/{first.pid}")
        return RankActivity(**{**base.__dict__, "activity": Activity.UNKNOWN if alive else Activity.GONE})
    if first.counters is None:
        return base
    span = max(1e-3, second.counters.at - first.counters.at)
    cpu = max(0.0, second.counters.cpu_s - first.counters.cpu_s) / span
    io = max(0, second.counters.io_bytes - first.counters.io_bytes) / span
    changed = None
    if first.threads is not None and second.threads is not None:
        changed = _stack_key(first.threads) != _stack_key(second.threads)
    runnable = bool(first.counters.runnable & second.counters.runnable)
    busy = cpu >= CPU_BUSY_SHARE or io >= IO_BUSY_BYTES_PER_S or bool(changed) or runnable
    waits = gpu_wait(second.threads) if second.threads is not None else None
    if waits is not None and not changed:
        return RankActivity(first.rank, first.pid, Activity.GPU_WAIT, round(cpu, 3), round(io, 1), changed,
                            base.where, base.error, waits, gpu_utilization(first.pid))
    return RankActivity(first.rank, first.pid, Activity.BUSY if busy else Activity.BLOCKED,
                        round(cpu, 3), round(io, 1), changed, base.where, base.error,
                        runnable=runnable)


def keeps_waiting(act: RankActivity) -> bool:
    """Whether triage waits for this rank (busy, unreadable, or waiting on a GPU that runs)."""
    if act.activity == Activity.GPU_WAIT:
        from triage.model.gpu import GPU_BUSY_SHARE  # (the GPU model: only once a GPU's use was read)
        return act.gpu_util is not None and act.gpu_util >= GPU_BUSY_SHARE
    return act.activity in (Activity.BUSY, Activity.UNKNOWN)


def state_text(act: RankActivity) -> str:
    """``busy``, ``blocked``, ``waiting on the GPU``, ``not readable (taken as busy)``..."""
    if act.activity == Activity.UNKNOWN:
        return "not readable (taken as busy)"
    return str(act.activity.value)


def judge_all(first: dict[int, RankSample], second: dict[int, RankSample]) -> list[RankActivity]:
    out = []
    for rank in sorted(first):
        if rank in second:
            out.append(judge(first[rank], second[rank]))
        else:
            out.append(RankActivity(rank, first[rank].pid, Activity.UNKNOWN, where=where(first[rank].threads)))
    return out


@dataclass(frozen=True)
class FirstSample:
    """A first sample taken ahead of the hang action (see triage.agent.hang.presample)."""

    started: float                    # monotonic time the sample began
    samples: Mapping[int, RankSample]


def sample_twice(targets: Sequence[tuple[int, int]], interval: float,
                 between: object = None, first_sample: FirstSample | None = None) -> list[RankActivity]:
    """Two samples ``interval`` seconds apart, from the start of the first to the start of the second
    (``between``: a callable run in the gap, e.g. the bundle collection; the second sample waits for it
    and for the interval). ``first_sample``: a first sample already taken of exactly these targets (else
    one is taken now)."""
    wanted = {rank: pid for rank, pid in targets}
    if first_sample is not None and {r: s.pid for r, s in first_sample.samples.items()} == wanted:
        started, first = first_sample.started, dict(first_sample.samples)
    else:
        started = time.monotonic()
        first = sample_all(targets)
    if callable(between):
        between()
    left = interval - (time.monotonic() - started)
    if left > 0:
        time.sleep(left)
    return judge_all(first, sample_all(targets, first))
