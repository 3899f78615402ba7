"""Every setting of triage's commands, typed, in one place.

One frozen dataclass per command family: :class:`LaunchSettings` (``triage launch``, which holds a
:class:`HangSettings`, a :class:`CollectSettings` and a :class:`StragglerSettings`), and
:class:`CollectSettings` alone for ``triage dump`` and ``triage collect``. Each field declared with
:func:`setting` is one option: ``triage.config`` generates from it the flag (``--hang-timeout``),
the YAML key (``hang_timeout``) and the environment variable (``TRIAGE_HANG_TIMEOUT``), with the
field's default, help and checks. Fields declared with plain ``field`` are internal bounds that
no user sets. :func:`build_settings` turns resolved option values into the typed object the agent
and the collectors take.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from triage.errors import UsageError

# re-exported: the settings' machinery and triage report's switches (their own module: triage.settings)
from triage.settings import ReportSettings as ReportSettings  # noqa: PLC0414
from triage.settings import SettingField as SettingField  # noqa: PLC0414
from triage.settings import Spec as Spec  # noqa: PLC0414
from triage.settings import build_settings as build_settings  # noqa: PLC0414
from triage.settings import group as group  # noqa: PLC0414
from triage.settings import setting as setting  # noqa: PLC0414
from triage.settings import setting_fields as setting_fields  # noqa: PLC0414
from triage.settings import settings_values as settings_values  # noqa: PLC0414


class Choice(str, Enum):
    """A setting with a fixed set of values: compares equal to, and prints as, its value."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class OnHang(Choice):
    REPORT_AND_STOP = "report-and-stop"
    REPORT_AND_WAIT = "report-and-wait"
    WAIT = "wait"


class GdbMode(Choice):
    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


class LineBuffering(Choice):
    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


class NumericsMode(Choice):
    CHEAP = "cheap"
    FULL = "full"


class OnNonfinite(Choice):
    REPORT = "report"
    STOP = "stop"


class ConsoleMode(Choice):
    ALL = "all"
    LAUNCHER = "launcher"
    NONE = "none"


# PyTorch's own timeouts are 10 min (NCCL) and 30 min (gloo); we report well before them.
DEFAULT_HANG_TIMEOUT_S = 300.0
# A suspected hang whose ranks are busy (CPU, I/O or stacks moving) is stopped only after this
# long. PyTorch's own defaults are 600 s (NCCL) and 1800 s (gloo, and the TCPStore): 1800 s is
# the larger, so triage never stops a busy job that PyTorch's default timeouts would let run.
DEFAULT_STOP_TIMEOUT_S = 1800.0


@dataclass(frozen=True)
class HangSettings:
    """When a rank counts as hung, and what the agent does then."""

    hang_timeout: float = setting(
        DEFAULT_HANG_TIMEOUT_S, "seconds without progress (or in one collective) before a rank counts as hung "
        "(default 300; PyTorch's own timeouts are 600 s NCCL / 1800 s gloo)")
    stop_timeout: float = setting(
        DEFAULT_STOP_TIMEOUT_S, "a suspected hang whose ranks are still busy (CPU, I/O or stack moving) is "
        "stopped only after this many seconds (default 1800: PyTorch's own default timeouts are 600 s NCCL, "
        "1800 s gloo); blocked ranks, mismatches, dead peers and watchdog timeouts are stopped at once; "
        "not lower than --hang-timeout")
    sample_interval: float = setting(
        3.0, "seconds between the two samples (CPU, I/O, py-spy --nonblocking stacks) that tell a busy rank "
        "from a blocked one (default 3)", positive=True)
    on_hang: OnHang = setting(
        OnHang.REPORT_AND_STOP, "after a hang is detected and the bundle written: report-and-stop (print the "
        "report, stop the job, exit 75), report-and-wait (report, leave the job running), wait (only collect)")
    collect_on_crash: bool = setting(
        True, "collect a bundle from the surviving ranks when a rank exits non-zero or by a signal")
    gpu_wait_timeout: float = setting(
        600.0, "a suspected hang whose holding-up ranks only wait on a GPU that runs (CUDA synchronize, NCCL "
        "wait; NVML shows the GPU busy) is stopped after this many seconds (default 600, NCCL's own timeout; "
        "--stop-timeout if lower); a GPU wait on an idle GPU, or one whose use is unknown, is a hang at once")

    def __post_init__(self) -> None:
        for name in ("hang_timeout", "stop_timeout", "gpu_wait_timeout"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise UsageError(f"--{name.replace('_', '-')} {value!r} must be a finite number of seconds, "
                                 "not negative")
        if self.stop_timeout < self.hang_timeout:
            raise UsageError(f"--stop-timeout {self.stop_timeout:g} is lower than --hang-timeout "
                             f"{self.hang_timeout:g}",
                             hint="the job is stopped at --stop-timeout at the latest; give a value not lower "
                                  "than --hang-timeout (default 1800 s)")


@dataclass(frozen=True)
class CollectSettings:
    """Bounds and switches of one collection (``triage launch``, ``triage dump``, ``triage collect``)."""

    pyspy_native: bool = setting(False, "py-spy dumps include native (C/C++) frames (slower)")
    pyspy_nonblocking: bool = setting(
        False, "do not pause the rank while py-spy reads its stacks (stacks may be torn)")
    gdb: GdbMode = setting(GdbMode.AUTO, "gdb `thread apply all bt` of each rank: auto (when py-spy fails), "
                           "always, never")
    strace_seconds: float = setting(2.0, "length of the strace window per rank, all ranks at once "
                                    "(0 disables strace)")
    strace_max_lines: int = setting(2000, "at most this many strace lines per rank")
    collector_timeout: float = setting(10.0, "seconds each collector tool may run before it is killed",
                                       minimum=0.1)
    max_bytes: int = 4 * 1024 * 1024    # per output file (internal bound, not an option)
    worker_dump: bool = True            # FR + stacks through the in-worker control socket (internal)


@dataclass(frozen=True)
class StragglerSettings:
    """The live straggler watch of ``triage launch`` (triage.agent.straggler_watch)."""

    enabled: bool = setting(True, "watch for a rank that holds the others back while the job runs",
                            name="straggler_watch")
    check_interval_s: float = setting(60.0, "seconds between the straggler watch's Flight Recorder checks",
                                      positive=True, name="straggler_check_interval")
    warn_interval_s: float = setting(300.0, "at most one straggler line per this many seconds",
                                     positive=True, name="straggler_warn_interval")
    sample_interval_s: float = setting(600.0, "at most one py-spy recording of a straggler per this many seconds",
                                       positive=True, name="straggler_sample_interval")
    max_samples: int = setting(3, "py-spy recordings of stragglers per run, at most",
                               positive=True, name="straggler_max_samples")
    sample_seconds: int = setting(5, "seconds of each py-spy recording of a straggler",
                                  positive=True, name="straggler_sample_seconds")
    confirm_checks: int = setting(2, "checks in a row that must name the same straggler before the first line",
                                  positive=True, name="straggler_confirm_checks")


@dataclass(frozen=True)
class LaunchSettings:
    """Everything ``triage launch`` is told: flags > triage.yaml > TRIAGE_* > these defaults."""

    run_dir: str | None = setting(None, "run directory (default ./triage-runs/<job id>: SLURM_JOB_ID, "
                                  "TORCHELASTIC_RUN_ID or a timestamp)", metavar="DIR")
    job_id: str | None = setting(None, "job id used in the default run directory (default: SLURM_JOB_ID, "
                                 "TORCHELASTIC_RUN_ID or a timestamp)", metavar="ID", path_component=True)
    host: str | None = setting(None, "host name used in tags and the run directory (default: short hostname)",
                               metavar="NAME", path_component=True)
    heartbeat_interval: float = setting(1.0, "seconds between worker heartbeats", metavar="S", positive=True)
    tick_interval: float = setting(0.5, "seconds between the agent's rank status checks", metavar="S",
                                   positive=True)
    kill_grace: float = setting(5.0, "seconds to wait for workers after the launcher ends (or after SIGTERM "
                                "when stopping the job) before they are killed", metavar="S")
    cores: bool = setting(False, "raise RLIMIT_CORE for the launcher and workers and say where cores land")
    nccl_debug: bool = setting(False, "NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,COLL into ranks/<r>/nccl.log")
    line_buffered: LineBuffering = setting(
        LineBuffering.AUTO, "line-buffer the workers' Python stdout: auto (when triage's stdout is a terminal), "
        "always or never")
    console: ConsoleMode = setting(ConsoleMode.ALL, "what goes to triage's stdout: all (tagged rank and "
                                   "launcher output), launcher (launcher output only) or none")
    rank_vars: str | None = setting(None, "comma-separated environment variables that give a worker's rank "
                                    "(default: RANK with torchrun, else RANK,SLURM_PROCID,OMPI_COMM_WORLD_RANK,"
                                    "PMI_RANK)", metavar="VARS")
    hang: HangSettings = group(HangSettings)
    collect: CollectSettings = group(CollectSettings)
    stragglers: StragglerSettings = group(StragglerSettings)
    numerics: bool = setting(False, "watch every rank for the first NaN or Inf (torch's global module and "
                             "optimizer hooks; docs/numerics.md)")
    numerics_mode: NumericsMode = setting(
        NumericsMode.CHEAP, "with --numerics: cheap (the loss, the gradients, the parameters after each step; "
        "every module after the first hit) or full (every module's output and gradient)")
    on_nonfinite: OnNonfinite = setting(
        OnNonfinite.REPORT, "with --numerics, when a rank sees its first NaN or Inf: report (one line, the job "
        "goes on: the grad scaler skips such steps on purpose) or stop (stop the job)")
