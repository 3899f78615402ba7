"""gdb on a core file, into a bundle: ``<out>/gdb-core.txt`` (raw gdb output) and ``<out>/core.json``.

``core.json`` (schema ``triage.core/1``) keeps what the core's ELF notes say (pid, signal,
threads, executable), which executable gdb was given and why, and how gdb ended. Analysis
(``triage.postmortem``) reads these two files back; it never needs the core again.

Never raises: every failure becomes the record's status, error and hint.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from triage.bundle import CollectorRecord, CollectorStatus
from triage.collectors.executable import ExeChoice, choose_executable
from triage.collectors.gdbhelper import helper_candidates, helper_problem, python_gdb_helper
from triage.collectors.gdbrun import DEFAULT_TIMEOUT_S, find_gdb, gdb_batch_argv, run_gdb
from triage.collectors.pyframes import run_pystack
from triage.collectors.redact import redact_json, redact_text
from triage.console import visible
from triage.layout import BundlePaths, BundleRankPaths
from triage.parsing.elfcore import CoreFormatError, CoreNotes, elf_debug_state, read_core_notes
from triage.private_files import FILE_MODE, make_private_dir, write_json_atomic
from triage.schemas import CORE_SCHEMA

NAME = "core"
GDB_HINT = "install it: `apt-get install gdb` / `dnf install gdb`"


def core_paths(bundle: Path, rank: int | None, pid: int | None) -> BundleRankPaths:
    """Where a core's output goes in the bundle: its rank's directory, else one named by its pid."""
    return BundlePaths(bundle).rank(rank) if rank is not None else BundlePaths(bundle).core(pid)


def notes_json(notes: CoreNotes | None) -> dict[str, Any]:
    if notes is None:
        return {}
    return {
        "pid": notes.pid, "command_name": notes.command_name, "arguments": notes.arguments,
        "signal": notes.signal_name, "signal_code": notes.signal_code, "fault_address": notes.fault_address,
        "thread_ids": list(notes.thread_ids), "executable": notes.executable(), "size": notes.size,
        "expected_size": notes.expected_size, "truncated": notes.truncated, "mtime": notes.mtime,
        "mapped_files": list(notes.mapped_paths()),
    }


def _write_text(path: Path, text: str) -> None:
    text = visible(redact_text(text))      # the core's strings: no terminal escape in the file
    make_private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def _python_frames(core: Path, executable: str | None, out: BundleRankPaths, info: dict[str, Any],
                   files: list[str], bundle: Path, timeout: float) -> None:
    """pystack on the core: Python frames without running anything the core names (``pystack.json``)."""
    if executable is None:
        info["pystack"] = {"status": "skipped", "error": "no executable for the core"}
        return
    frames = run_pystack("core", str(core), executable, timeout)
    if frames.threads:             # a non-Python core gives an error, kept in core.json only
        _write_text(out.pystack, frames.raw)
        files.append(BundlePaths(bundle).relative(out.pystack))
    status = "missing" if frames.missing else "timeout" if frames.timed_out else "failed" if frames.error else "ok"
    info["pystack"] = {"status": status, "error": frames.error, "threads": len(frames.threads)}


def collect_core(core: Path, bundle: Path, *, rank: int | None = None, exe: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT_S) -> CollectorRecord:
    """Read the core's notes, pick the executable, run gdb under ``timeout``; record everything."""
    started = time.monotonic()
    try:
        return _collect(core, bundle, rank, exe, timeout, started)
    except Exception as error:  # noqa: BLE001 - a collector never raises
        return CollectorRecord(NAME, CollectorStatus.FAILED, rank=rank, duration_s=time.monotonic() - started,
                               error=f"{core}: {type(error).__name__}: {error}")


def _collect(core: Path, bundle: Path, rank: int | None, exe: str | None, timeout: float,
             started: float) -> CollectorRecord:
    notes: CoreNotes | None = None
    problems: list[str] = []
    try:
        notes = read_core_notes(core)
    except CoreFormatError as error:
        problems.append(f"{core}: {error}")
    pid = notes.pid if notes else None
    out = core_paths(bundle, rank, pid)
    make_private_dir(out.root)
    choice = choose_executable(notes, exe) if notes else ExeChoice(None, None)
    if notes and notes.truncated:
        problems.append(f"{core}: truncated core ({notes.size} of {notes.expected_size} bytes): "
                        "stacks may be incomplete")
    info: dict[str, Any] = {"schema": CORE_SCHEMA, "core": str(core), "rank": rank, "notes": notes_json(notes),
                            "executable": choice.path, "executable_notes": list(choice.notes),
                            "problems": problems}
    files = [BundlePaths(bundle).relative(out.core_info)]

    def finish(status: CollectorStatus, error: str | None = None, hint: str | None = None) -> CollectorRecord:
        info["status"] = status.value
        write_json_atomic(out.core_info, redact_json(info))
        return CollectorRecord(NAME, status, rank=rank, pid=pid, duration_s=time.monotonic() - started,
                               files=tuple(files), error=error, hint=hint)

    if notes is None:
        return finish(CollectorStatus.FAILED, problems[0], "give a core file (ELF type CORE), e.g. ./core or core.PID")
    if choice.path:
        info["executable_debug"] = elf_debug_state(Path(choice.path))
        if info["executable_debug"] == "stripped":
            stripped = (f"{choice.path} is stripped (no symbols): its frames show as ??; "
                        "give an unstripped build with --exe")
            choice = ExeChoice(choice.path, choice.from_core, (*choice.notes, stripped), choice.mismatch,
                               choice.missing)
            info["executable_notes"] = list(choice.notes)
    _python_frames(core, choice.path, out, info, files, bundle, timeout)
    gdb = find_gdb()
    if gdb is None:
        return finish(CollectorStatus.MISSING, "gdb is not on PATH: only the core's notes were read", GDB_HINT)
    helper = python_gdb_helper(choice.path, notes.mapped_paths())
    argv = gdb_batch_argv(gdb, choice.path, str(core), helper)
    run = run_gdb(argv, timeout, helper)
    _write_text(out.gdb_core, run.text)
    files.append(BundlePaths(bundle).relative(out.gdb_core))
    info["gdb"] = {"argv": list(argv), "returncode": run.returncode, "timed_out": run.timed_out,
                   "duration_s": round(run.duration_s, 3), "py_helper": helper}
    if helper is None:
        candidates = helper_candidates(choice.path, notes.mapped_paths())
        info["gdb"]["py_helper_refused"] = [problem for c in candidates
                                            if (problem := helper_problem(c, None))][:8]
    if run.timed_out:
        return finish(CollectorStatus.TIMEOUT, f"gdb did not finish in {timeout:.0f}s on {core}",
                      "raise --gdb-timeout; symbol loading of big libraries is slow")
    if notes.truncated or choice.missing or choice.mismatch:
        return finish(CollectorStatus.PARTIAL, "; ".join(problems + list(choice.notes)))
    return finish(CollectorStatus.OK)
