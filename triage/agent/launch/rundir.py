"""Creating the run directory of a ``triage launch`` (layout ``triage.run/1``, see triage.layout)."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from triage.errors import InputError
from triage.layout import HostPaths, RunPaths
from triage.private_files import make_private_dir, read_json, rewrite_json_in_place, write_json_atomic
from triage.redact import redact_argv, redact_json
from triage.schemas import RUN_LAYOUT


def job_id_from_env(environ: Mapping[str, str], now: float | None = None) -> str:
    """SLURM_JOB_ID, TORCHELASTIC_RUN_ID, or a timestamp (UTC, to the millisecond)."""
    for name in ("SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"):
        value = environ.get(name, "").strip()
        if value and value != "none":
            return _safe(value)
    stamp = time.time() if now is None else now
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime(stamp)) + f"-{int(stamp * 1000) % 1000:03d}"


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.@" else "_" for c in text)[:128]


def prepare_run_dir(run_dir: Path, job_id: str, host: str, argv: list[str]) -> tuple[RunPaths, HostPaths]:
    """Create the run dir (owner-only) with run.json and the host's subtree."""
    try:
        make_private_dir(run_dir)
        os.chmod(run_dir, 0o700)
    except OSError as err:
        raise InputError(f"{run_dir}: cannot create the run directory: {err.strerror}",
                         hint="choose another place with --run-dir") from None
    run = RunPaths(run_dir)
    info: dict[str, Any] = {"layout": RUN_LAYOUT, "job_id": job_id, "created": time.time(),
                            "argv": redact_argv(argv), "cwd": os.getcwd()}
    if run.run_json.is_file():
        try:
            old = read_json(run.run_json)
            info = {**old, "hosts": sorted(set(old.get("hosts", [])) | {host})}
        except (OSError, ValueError):
            info["hosts"] = [host]
    else:
        info["hosts"] = [host]
    write_json_atomic(run.run_json, info)
    host_paths = run.host(host)
    for path in (host_paths.root, host_paths.ranks_dir, host_paths.bundles_dir, host_paths.dump_requests):
        make_private_dir(path)
    for path in (host_paths.launcher_log, host_paths.merged_log):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        os.close(fd)
    return run, host_paths


def write_node_json(host_paths: HostPaths, data: Mapping[str, Any]) -> None:
    write_json_atomic(host_paths.node, redact_json(dict(data)))


def rewrite_node_json(host_paths: HostPaths, data: Mapping[str, Any]) -> bool:
    """node.json rewritten in the blocks it already holds (a full disk: its end record is not lost)."""
    return rewrite_json_in_place(host_paths.node, redact_json(dict(data)))
