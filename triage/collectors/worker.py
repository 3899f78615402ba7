"""Flight Recorder and Python stacks from inside a rank, plus FR dumps PyTorch wrote itself.

- ``fr``/``stacks``: ask the in-worker agent over its control socket (``dump <dir>``); it dumps
  the Flight Recorder from a background thread (works while the main thread is blocked in a
  collective) and the Python stacks of all threads (faulthandler). Without a reachable agent,
  the stacks fall back to the rank's ``faulthandler.log`` and FR falls back to ``fr-exit.json``.
- ``fr-torch``: files ``$TORCH_FR_DUMP_TEMP_FILE<rank>`` (default prefix ``/tmp/nccl_trace_rank_``)
  that PyTorch wrote on a NCCL timeout, copied as they were.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import shutil
import stat
import time
from pathlib import Path

from triage.bundle import CollectorRecord, CollectorStatus
from triage.collectors.common import (
    Target,
    chmod_private,
    process_alive,
    process_uid,
    record,
    write_private,
)
from triage.collectors.procinfo import read_environ
from triage.collectors.worker_client import request_dump
from triage.layout import BundlePaths, BundleRankPaths
from triage.options import CollectSettings
from triage.private_files import FILE_MODE, make_private_dir

UNAVAILABLE = "Unavailable:"        # the worker's error when its torch has no FR dump (triage.worker.flight)
SKIPPED = "Skipped:"                # the worker had no FR to dump (torch.distributed not in use in the rank yet)
DEFAULT_FR_PREFIX = "/tmp/nccl_trace_rank_"  # noqa: S108 (PyTorch's own default, read, never written by us)


def _ask_worker(target: Target, rank_out: Path, timeout: float) -> str | None:
    """Ask the in-worker agent to dump into ``rank_out``; None on success, ``Skipped: why`` when it had no Flight
    Recorder to dump (no process group yet), else the error."""
    if not (target.paths is not None):
        raise RuntimeError("internal error: expected target.paths is not None")
    try:
        result = request_dump(target.paths, rank_out, timeout=timeout)
    except Exception as error:  # noqa: BLE001 - any failure is recorded, never raised
        return f"{type(error).__name__}: {error}"
    fr = result.files.get("fr.json")
    if result.ok and fr is not None and fr.status == "skipped":       # the rank has no process group yet
        return f"{SKIPPED} {str(fr.error or 'the worker skipped it')[:200]}"
    if result.ok:
        return None
    failed = [f"{f.name}: {f.error}" for f in result.files.values() if f.status not in ("ok", "skipped")]
    return result.error or "; ".join(failed) or "the worker's dump failed"


def copy_private(source: Path, dest: Path, owner: int | None) -> bool:
    """Copy a regular file (never through a symlink; owned by ``owner`` when given) into a new 0600 file."""
    try:
        src = os.open(str(source), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    with os.fdopen(src, "rb") as reader:
        info = os.fstat(reader.fileno())
        if not stat.S_ISREG(info.st_mode) or (owner is not None and info.st_uid != owner):
            return False
        fd = os.open(str(dest), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
        with os.fdopen(fd, "wb") as writer:
            os.fchmod(writer.fileno(), FILE_MODE)
            shutil.copyfileobj(reader, writer)
    return True


def _rel(path: Path, bundle: Path) -> str:
    return BundlePaths(bundle).relative(path)


def collect_worker(target: Target, rank_out: Path, bundle: Path,
                   options: CollectSettings) -> list[CollectorRecord]:
    """Records ``fr`` and ``stacks`` for one rank."""
    started = time.monotonic()
    make_private_dir(rank_out)
    registered = options.worker_dump and target.paths is not None and target.paths.worker.is_file()
    error: str | None = "no in-worker agent (not launched by `triage launch`)"
    if registered and process_alive(target.pid):
        error = _ask_worker(target, rank_out, options.collector_timeout)
    elif registered:
        error = f"process {target.pid} is not running"
    for produced in BundleRankPaths.WORKER_DUMP_FILES:
        chmod_private(rank_out / produced)
    fr = _fr_record(target, rank_out, bundle, error, started)
    squatted = _squatted(target) if registered else None
    if squatted is not None:
        fr = dataclasses.replace(fr, hint=f"the worker's control-socket name {squatted} was bound by another process "
                                          "before the rank started; the worker listened under a random name instead")
    return [fr, _stacks_record(target, rank_out, bundle, error, started)]


def _squatted(target: Target) -> str | None:
    """The control-socket name someone held before the worker could bind it (worker.json), if any."""
    try:
        info = json.loads(target.paths.worker.read_text(encoding="utf-8")) if target.paths else None
    except (OSError, ValueError):
        return None
    name = info.get("control_socket_squatted") if isinstance(info, dict) else None
    return name[:200] if isinstance(name, str) and name else None


def _fr_record(target: Target, rank_out: Path, bundle: Path, error: str | None,
               started: float) -> CollectorRecord:
    paths = BundleRankPaths(rank_out)
    files = [_rel(p, bundle) for p in (paths.fr_json, paths.fr_pickle) if p.is_file()]
    if files:
        status = CollectorStatus.OK if paths.fr_json.is_file() else CollectorStatus.PARTIAL
        return record("fr", status, target, started, files, error=None if status == CollectorStatus.OK
                      else "fr.json missing")
    if target.paths is not None and target.paths.fr_exit.is_file():
        copy_private(target.paths.fr_exit, paths.fr_json, None)
        return record("fr", CollectorStatus.PARTIAL, target, started, [_rel(paths.fr_json, bundle)],
                      error=f"live dump failed ({error}); used fr-exit.json written when the rank exited")
    if error is not None and UNAVAILABLE in error:     # this torch has no Flight Recorder: a fact, not a failure
        return record("fr", CollectorStatus.SKIPPED, target, started,
                      error="no Flight Recorder: " + error.split(UNAVAILABLE, 1)[1].strip())
    if error is not None and error.startswith(SKIPPED):   # no process group yet: nothing to dump, no failure
        return record("fr", CollectorStatus.SKIPPED, target, started,
                      error="no Flight Recorder dump: " + error.removeprefix(SKIPPED).strip())
    return record("fr", CollectorStatus.FAILED if target.paths else CollectorStatus.SKIPPED, target, started,
                  error=error or "worker wrote no fr.json",
                  hint="run the job under `triage launch` so the in-worker agent can dump the Flight Recorder")


def _stacks_record(target: Target, rank_out: Path, bundle: Path, error: str | None,
                   started: float) -> CollectorRecord:
    stacks = BundleRankPaths(rank_out).stacks
    if stacks.is_file() and stacks.stat().st_size > 0:
        return record("stacks", CollectorStatus.OK, target, started, [_rel(stacks, bundle)])
    fault = target.paths.faulthandler if target.paths else None
    if fault is not None and fault.is_file() and fault.stat().st_size > 0:
        write_private(stacks, fault.read_bytes()[-1024 * 1024:])
        return record("stacks", CollectorStatus.PARTIAL, target, started, [_rel(stacks, bundle)],
                      error=f"live dump failed ({error}); copied faulthandler.log")
    unavailable = target.paths is None or not process_alive(target.pid)
    return record("stacks", CollectorStatus.SKIPPED if unavailable else CollectorStatus.FAILED, target,
                  started, error=error or "no stacks", hint="py-spy stacks (pyspy.json) cover this rank")


def collect_torch_fr_files(target: Target, rank_out: Path, bundle: Path,
                           options: CollectSettings) -> CollectorRecord:
    """Copy FR dumps PyTorch wrote itself (TORCH_FR_DUMP_TEMP_FILE + rank)."""
    started = time.monotonic()
    env = read_environ(target.pid) if target.pid else {}
    prefix = env.get("TORCH_FR_DUMP_TEMP_FILE") or env.get("TORCH_NCCL_DEBUG_INFO_TEMP_FILE") or DEFAULT_FR_PREFIX
    if target.pid and not env and not process_alive(target.pid):
        prefix = DEFAULT_FR_PREFIX
    candidates = sorted(set(glob.glob(f"{glob.escape(prefix)}{target.rank}")
                            + glob.glob(f"{glob.escape(prefix)}{target.rank}.*")))
    files: list[str] = []
    for index, source in enumerate(candidates):
        try:
            if os.path.getsize(source) > options.max_bytes * 4:
                continue
            dest = BundleRankPaths(rank_out).torch_fr_dump(index, source.endswith(".json"))
            # The prefix comes from the target's environment: copy only its owner's regular files.
            if not copy_private(Path(source), dest, process_uid(target.pid)):
                continue
            files.append(_rel(dest, bundle))
        except OSError:
            continue
    if not files:
        return record("fr-torch", CollectorStatus.SKIPPED, target, started,
                      error=f"PyTorch wrote no dump at {prefix}{target.rank}")
    return record("fr-torch", CollectorStatus.OK, target, started, files)
