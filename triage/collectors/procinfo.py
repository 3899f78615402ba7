"""psutil snapshot of a rank's processes (``proc.json``) and node facts (``node/facts.json``).

Per process: state (R/S/D/Z...), wchan (/proc/PID/wchan), cpu times, threads (id, state, wchan,
cpu times), open files, sockets, memory, children, redacted cmdline and environment.
Node: load averages, memory, swap, cpus, boot time, and ``nvidia-smi`` output when it exists.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from triage.bundle import CollectorRecord, CollectorStatus
from triage.collectors.common import (
    Target,
    find_tool,
    gone,
    process_alive,
    record,
    run_tool,
    write_private,
)
from triage.collectors.redact import redact_argv, redact_env
from triage.layout import BundleNodePaths, BundlePaths, BundleRankPaths
from triage.options import CollectSettings
from triage.private_files import write_json_atomic

_MAX_THREADS = 256
_MAX_FILES = 256


def read_environ(pid: int | None) -> dict[str, str]:
    """A process's environment (unredacted: callers must redact before writing it anywhere)."""
    if pid is None:
        return {}
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            raw = handle.read()
    except OSError:
        return {}
    env: dict[str, str] = {}
    for item in raw.split(b"\0"):
        name, sep, value = item.partition(b"=")
        if sep:
            env[name.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
    return env


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _thread_state(pid: int, tid: int) -> dict[str, Any]:
    stat = _read(f"/proc/{pid}/task/{tid}/stat") or ""
    fields = stat.rsplit(")", 1)[-1].split()
    name = stat[stat.find("(") + 1: stat.rfind(")")] if "(" in stat else None
    return {"tid": tid, "name": name, "state": fields[0] if fields else None,
            "wchan": _read(f"/proc/{pid}/task/{tid}/wchan")}


def _guard(func: Callable[[], Any]) -> Any:
    try:
        return func()
    except (psutil.Error, OSError) as error:
        return {"error": f"{type(error).__name__}: {error}"}


def process_snapshot(pid: int, with_env: bool = True) -> dict[str, Any]:
    proc = psutil.Process(pid)
    stat = _read(f"/proc/{pid}/stat") or ""
    state_letter = stat.rsplit(")", 1)[-1].split()[0] if ")" in stat else None
    snap: dict[str, Any] = {
        "pid": pid,
        "ppid": _guard(proc.ppid),
        "name": _guard(proc.name),
        "cmdline": _guard(lambda: redact_argv(proc.cmdline())),
        "exe": _guard(proc.exe),
        "cwd": _guard(proc.cwd),
        "username": _guard(proc.username),
        "state": state_letter,
        "status": _guard(proc.status),
        "wchan": _read(f"/proc/{pid}/wchan"),
        "create_time": _guard(proc.create_time),
        "cpu_times": _guard(lambda: proc.cpu_times()._asdict()),
        "cpu_percent_0_1s": None,
        "memory": _guard(lambda: proc.memory_info()._asdict()),
        "num_threads": _guard(proc.num_threads),
        "threads": _guard(lambda: [
            {**_thread_state(pid, t.id), "user": t.user_time, "system": t.system_time}
            for t in proc.threads()[:_MAX_THREADS]]),
        "open_files": _guard(lambda: [f._asdict() for f in proc.open_files()[:_MAX_FILES]]),
        "connections": _guard(lambda: [_conn(c) for c in proc.net_connections(kind="all")[:_MAX_FILES]]),
        "num_fds": _guard(proc.num_fds),
        "children": _guard(lambda: [_child(c) for c in proc.children(recursive=True)]),
    }
    if with_env:
        snap["environ"] = redact_env(read_environ(pid))
    return snap


def _child(child: psutil.Process) -> dict[str, Any]:
    return {"pid": child.pid, "name": _guard(child.name),
            "cmdline": _guard(lambda: redact_argv(child.cmdline())), "state": _guard(child.status)}


def _conn(conn: Any) -> dict[str, Any]:
    data: dict[str, Any] = conn._asdict()
    for key in ("laddr", "raddr"):
        value = data.get(key)
        data[key] = list(value) if isinstance(value, tuple) else value
    for key in ("family", "type"):
        data[key] = str(data.get(key))
    return data


def collect_proc(target: Target, rank_out: Path, bundle: Path, options: CollectSettings) -> CollectorRecord:
    started = time.monotonic()
    if target.pid is None or not process_alive(target.pid):
        return gone("proc", target, started)
    try:
        snap = process_snapshot(target.pid)
    except psutil.NoSuchProcess:
        return gone("proc", target, started)
    except psutil.AccessDenied as error:
        return record("proc", CollectorStatus.DENIED, target, started, error=str(error),
                      hint="run triage as the job's user or root")
    snap["rank"] = target.rank
    snap["taken"] = time.time()
    path = BundleRankPaths(rank_out).proc
    write_json_atomic(path, snap)
    return record("proc", CollectorStatus.OK, target, started, [BundlePaths(bundle).relative(path)])


def node_facts() -> dict[str, Any]:
    facts: dict[str, Any] = {
        "hostname": os.uname().nodename,
        "kernel": os.uname().release,
        "time": time.time(),
        "boot_time": _guard(psutil.boot_time),
        "loadavg": _guard(os.getloadavg),
        "cpu_count": os.cpu_count(),
        "cpu_times_percent": None,
        "memory": _guard(lambda: psutil.virtual_memory()._asdict()),
        "swap": _guard(lambda: psutil.swap_memory()._asdict()),
        "pressure": {name: _read(f"/proc/pressure/{name}") for name in ("cpu", "memory", "io")},
        "ptrace_scope": _read("/proc/sys/kernel/yama/ptrace_scope"),
    }
    with contextlib.suppress(psutil.Error, OSError):
        facts["disk_root"] = psutil.disk_usage("/")._asdict()
    return facts


def collect_node_facts(node_out: Path, bundle: Path, options: CollectSettings) -> list[CollectorRecord]:
    started = time.monotonic()
    path = BundleNodePaths(node_out).facts
    write_json_atomic(path, node_facts())
    records = [record("facts", CollectorStatus.OK, None, started, [BundlePaths(bundle).relative(path)])]
    records.append(_nvidia_smi(node_out, bundle, options))
    return records


def _nvidia_smi(node_out: Path, bundle: Path, options: CollectSettings) -> CollectorRecord:
    started = time.monotonic()
    tool = find_tool("nvidia-smi")
    if tool is None:
        return record("nvidia-smi", CollectorStatus.SKIPPED, None, started,
                      error="nvidia-smi not found (no NVIDIA driver on this node?)")
    run = run_tool([tool, "-q"], options.collector_timeout, options.max_bytes)
    path = BundleNodePaths(node_out).nvidia_smi
    if run.stdout:
        write_private(path, run.stdout)
    files = [BundlePaths(bundle).relative(path)] if run.stdout else []
    if run.timed_out:
        return record("nvidia-smi", CollectorStatus.TIMEOUT, None, started, files,
                      error="nvidia-smi hung (a GPU may have fallen off the bus)", hint="check dmesg for Xid 79")
    if run.returncode != 0:
        return record("nvidia-smi", CollectorStatus.FAILED, None, started, files,
                      error=run.stderr_text[:300] or f"exit status {run.returncode}")
    return record("nvidia-smi", CollectorStatus.OK, None, started, files)
