"""A rank whose own exit record says it ended well, while its launcher saw it die.

The worker writes its exit record at interpreter exit, after every handler of the user's. What runs
after that (the interpreter's finalization, C++ static destructors, a library's own exit handlers:
a joinable ``std::thread`` left behind gives ``terminate called without an active exception``) can
still kill the process: torchrun then records ``exitcode: -6 (SIGABRT)`` for a rank whose record
says exit 0, and the job's exit code is a failure. The launcher's record is the truth about how the
process ended; the exit record tells that its work had finished. Pure: inputs are model objects."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from triage.load.logs.scan import LogScan
from triage.load.logs.text import scan_log_text
from triage.model.evidence import AFTER_EXIT_RECORD, ExitInfo
from triage.parsing.crashlog import parse_crash_line

# How many lines of the end of a rank's output are searched for the line its teardown printed.
TAIL_LINES = 20


def ended_after_exit_record(own: ExitInfo, launcher: ExitInfo | None, output_tail: list[str]) -> ExitInfo:
    """``own`` when the launcher agrees or did not see the rank end badly on its own account;
    otherwise the launcher's end (its signal or exit code), said to have come after the work."""
    if launcher is None or launcher.ok or not own.ok or launcher.collateral:
        return own
    said = _teardown_line(output_tail)
    if own.code_unseen and launcher.signal is None and not said:
        # no sys.exit() and no exception seen: a SystemExit raised directly ends a rank the same way
        message = (f"exit code {launcher.exit_code} (the launcher's record; its own exit record saw no "
                   f"sys.exit() and no exception: a SystemExit raised directly, such as "
                   f"raise SystemExit({launcher.exit_code}) or exit({launcher.exit_code}), or an exit in "
                   f"its teardown)")
        times = [t for t in (own.time, launcher.time) if t is not None]
        return replace(launcher, message=message, time=max(times) if times else None,
                       evidence=tuple(dict.fromkeys((*own.evidence, *launcher.evidence))),
                       failure_kind=None, collateral=False)
    message = (f"{AFTER_EXIT_RECORD} (its own exit record said exit 0): a crash in the process's teardown"
               + (f": {said}" if said else " (the launcher's record; its output says nothing more)"))
    if launcher.signal is None:
        message = f"exit code {launcher.exit_code} {message}"
    times = [t for t in (own.time, launcher.time) if t is not None]
    return replace(launcher, message=message, time=max(times) if times else None,
                   evidence=tuple(dict.fromkeys((*own.evidence, *launcher.evidence))),
                   failure_kind=None, collateral=False)


def _teardown_line(tail: list[str]) -> str | None:
    """The last line of the output's end that reports a crash (``terminate called ...``, a fatal
    signal, an abort): what the rank printed as it died, if anything."""
    for line in reversed(tail[-TAIL_LINES:]):
        crash = parse_crash_line(line)
        if crash is not None and crash.signal is not None or "terminate called" in line:
            return line.strip()[:300]
    return None


def output_tail(path: Path, limit: int = 64 << 10) -> list[str]:
    """The last lines of a rank's output (at most ``limit`` bytes read from its end; [] when unreadable)."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - limit))
            data = handle.read(limit)
    except OSError:
        return []
    return data.decode("utf-8", "replace").splitlines()[-TAIL_LINES:]


def launcher_exits(launcher_log: Path, text: str | None = None) -> dict[int, ExitInfo]:
    """How the launcher saw its ranks end (torchrun's "Failures:" summary, srun's task records...) in
    its log, by global rank; {} when there is no such log."""
    if text is None:
        try:
            text = launcher_log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return {}
    scan = LogScan()
    scan_log_text(text, str(launcher_log), scan)
    return scan.exits
