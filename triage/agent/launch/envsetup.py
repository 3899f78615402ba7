"""The environment ``triage launch`` gives the launcher (and through it, every worker)."""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import triage
from triage.layout import short_hostname
from triage.options import LaunchSettings, LineBuffering

BOOTSTRAP_DIR = Path(triage.__file__).resolve().parent / "worker" / "bootstrap"
GENERIC_RANK_VARS = "RANK,SLURM_PROCID,OMPI_COMM_WORLD_RANK,PMI_RANK"


def is_torchrun(argv: Sequence[str]) -> bool:
    """The launcher is torchrun itself (not python -m torch.distributed.run, not srun)."""
    return bool(argv) and os.path.basename(argv[0]) == "torchrun"


def rank_vars(argv: Sequence[str], configured: str | None) -> str:
    if configured:
        return configured
    return "RANK" if is_torchrun(argv) else GENERIC_RANK_VARS


def worker_env(
    base: Mapping[str, str], argv: Sequence[str], settings: LaunchSettings, run_dir: Path,
    job_id: str, host: str, console_is_tty: bool,
) -> dict[str, str]:
    env = dict(base)
    old = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(BOOTSTRAP_DIR) + (os.pathsep + old if old else "")
    env["TRIAGE_RUN_DIR"] = str(run_dir.resolve())
    env["TRIAGE_RANK_VARS"] = rank_vars(argv, settings.rank_vars)
    env["TRIAGE_JOB_ID"] = job_id
    env["TRIAGE_HOST"] = host
    env["TRIAGE_REAL_HOST"] = short_hostname()
    env["TRIAGE_HEARTBEAT_INTERVAL"] = str(settings.heartbeat_interval)
    mode = settings.line_buffered
    buffered = mode == LineBuffering.ALWAYS or (mode == LineBuffering.AUTO and console_is_tty)
    env["TRIAGE_WORKER_LINE_BUFFERED"] = "1" if buffered else "0"
    env.pop("TRIAGE_WORKER_PID", None)
    env.pop("TRIAGE_NUMERICS", None)
    if settings.numerics:
        env["TRIAGE_NUMERICS"] = str(settings.numerics_mode)
    if settings.nccl_debug:
        env["TRIAGE_NCCL_DEBUG"] = "1"
        env["NCCL_DEBUG"] = "INFO"
        env["NCCL_DEBUG_SUBSYS"] = "INIT,COLL"
    else:
        env.pop("TRIAGE_NCCL_DEBUG", None)
    return env


@contextlib.contextmanager
def core_limit_raised(enabled: bool) -> Iterator[None]:
    """Raise RLIMIT_CORE's soft limit to the hard one while the launcher is started (it inherits
    it, and so do the workers), then restore triage's own limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    if enabled:
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
    try:
        yield
    finally:
        if enabled:
            resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))


def core_note() -> str:
    """Where cores of the workers will land under the current core_pattern (never written)."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    limit = "unlimited" if hard == resource.RLIM_INFINITY else f"{hard} bytes"
    try:
        pattern = Path("/proc/sys/kernel/core_pattern").read_text(encoding="utf-8").strip()
    except OSError:
        pattern = ""
    if not pattern:
        where = "unknown (cannot read /proc/sys/kernel/core_pattern)"
    elif pattern.startswith("|"):
        where = f"piped to {pattern[1:].split()[0]} (core_pattern {pattern!r}; e.g. `coredumpctl list`)"
    elif pattern.startswith("/"):
        where = f"{pattern} (core_pattern)"
    else:
        where = f"each crashing worker's working directory as {pattern!r} (core_pattern is relative)"
    if hard == 0:
        return "cores: the hard core-size limit is 0; no cores can be written (raise it with ulimit -Hc)"
    return f"cores: core size limit {limit}; cores will land in {where}"
