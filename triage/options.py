"""Options for hang detection and collection (owned by the hang-detection side).

``triage.config`` includes these in the option table of ``triage launch`` (flag ``--hang-timeout``,
config key ``hang_timeout``, environment ``TRIAGE_HANG_TIMEOUT``...).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from triage.errors import UsageError

# PyTorch's own timeouts are 10 min (NCCL) and 30 min (gloo); we report well before them.
DEFAULT_HANG_TIMEOUT_S = 300.0
# A suspected hang whose ranks are busy (CPU, I/O or stacks moving) is stopped only after this
# long. PyTorch's own defaults are 600 s (NCCL) and 1800 s (gloo, and the TCPStore): 1800 s is
# the larger, so triage never stops a busy job that PyTorch's default timeouts would let run.
DEFAULT_STOP_TIMEOUT_S = 1800.0
DEFAULT_SAMPLE_INTERVAL_S = 3.0
ON_HANG_CHOICES = ("report-and-stop", "report-and-wait", "wait")
GDB_CHOICES = ("auto", "always", "never")

# Each entry is a dict understood by triage.config (see Option there): name, type, default, help, choices.
HANG_OPTIONS: list[dict[str, Any]] = [
    {"name": "hang_timeout", "type": float, "default": DEFAULT_HANG_TIMEOUT_S,
     "help": "seconds without progress (or in one collective) before a rank counts as hung "
             "(default 300; PyTorch's own timeouts are 600 s NCCL / 1800 s gloo)"},
    {"name": "stop_timeout", "type": float, "default": DEFAULT_STOP_TIMEOUT_S,
     "help": "a suspected hang whose ranks are still busy (CPU, I/O or stack moving) is stopped only after "
             "this many seconds (default 1800: PyTorch's own default timeouts are 600 s NCCL, 1800 s gloo); "
             "blocked ranks, mismatches, dead peers and watchdog timeouts are stopped at once; "
             "not lower than --hang-timeout"},
    {"name": "sample_interval", "type": float, "default": DEFAULT_SAMPLE_INTERVAL_S,
     "help": "seconds between the two samples (CPU, I/O, py-spy --nonblocking stacks) that tell a busy "
             "rank from a blocked one (default 3)"},
    {"name": "on_hang", "type": str, "default": "report-and-stop", "choices": ON_HANG_CHOICES,
     "help": "after a hang is detected and the bundle written: report-and-stop (print the report, stop "
             "the job, exit 75), report-and-wait (report, leave the job running), wait (only collect)"},
    {"name": "pyspy_native", "type": bool, "default": False,
     "help": "py-spy dumps include native (C/C++) frames (slower)"},
    {"name": "pyspy_nonblocking", "type": bool, "default": False,
     "help": "do not pause the rank while py-spy reads its stacks (stacks may be torn)"},
    {"name": "gdb", "type": str, "default": "auto", "choices": GDB_CHOICES,
     "help": "gdb `thread apply all bt` of each rank: auto (when py-spy fails), always, never"},
    {"name": "strace_seconds", "type": float, "default": 2.0,
     "help": "length of the strace window per rank, all ranks at once (0 disables strace)"},
    {"name": "strace_max_lines", "type": int, "default": 2000,
     "help": "at most this many strace lines per rank"},
    {"name": "collector_timeout", "type": float, "default": 10.0,
     "help": "seconds each collector tool may run before it is killed"},
    {"name": "collect_on_crash", "type": bool, "default": True,
     "help": "collect a bundle from the surviving ranks when a rank exits non-zero or by a signal"},
]


def check_timeouts(options: Mapping[str, Any]) -> None:
    """--stop-timeout must be a finite number not lower than --hang-timeout (one-line error)."""
    values = {}
    for name, default in (("hang_timeout", DEFAULT_HANG_TIMEOUT_S), ("stop_timeout", DEFAULT_STOP_TIMEOUT_S)):
        raw = options.get(name)
        try:
            value = float(default if raw is None else raw)
        except (TypeError, ValueError):
            raise UsageError(f"--{name.replace('_', '-')} {raw!r} is not a number") from None
        if not math.isfinite(value) or value < 0:
            raise UsageError(f"--{name.replace('_', '-')} {raw!r} must be a finite number of seconds, not negative")
        values[name] = value
    if values["stop_timeout"] < values["hang_timeout"]:
        raise UsageError(f"--stop-timeout {values['stop_timeout']:g} is lower than --hang-timeout "
                         f"{values['hang_timeout']:g}",
                         hint="the job is stopped at --stop-timeout at the latest; give a value not lower "
                              "than --hang-timeout (default 1800 s)")

# The live straggler watch's options (triage.agent.straggler_watch): flag --NAME, env TRIAGE_NAME, YAML key.
STRAGGLER_OPTIONS: tuple[dict[str, Any], ...] = (
    {"name": "straggler_watch", "type": "bool", "default": True,
     "help": "watch for a rank that holds the others back while the job runs"},
    {"name": "straggler_check_interval", "type": "float", "default": 60.0,
     "help": "seconds between the straggler watch's Flight Recorder checks"},
    {"name": "straggler_warn_interval", "type": "float", "default": 300.0,
     "help": "at most one straggler line per this many seconds"},
    {"name": "straggler_sample_interval", "type": "float", "default": 600.0,
     "help": "at most one py-spy recording of a straggler per this many seconds"},
    {"name": "straggler_max_samples", "type": "int", "default": 3,
     "help": "py-spy recordings of stragglers per run, at most"},
    {"name": "straggler_sample_seconds", "type": "int", "default": 5,
     "help": "seconds of each py-spy recording of a straggler"},
    {"name": "straggler_confirm_checks", "type": "int", "default": 2,
     "help": "checks in a row that must name the same straggler before the first line"},
)
