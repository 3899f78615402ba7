"""Where did a crashed process's core go? (read-only: never changes core_pattern)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from triage.parsing.elfcore import CoreFormatError, read_core_notes

CORE_PATTERN = Path("/proc/sys/kernel/core_pattern")
CORE_USES_PID = Path("/proc/sys/kernel/core_uses_pid")


@dataclass(frozen=True)
class CoreLocation:
    path: Path | None
    reason: str            # where it was looked for, or why it cannot be found


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _expand(pattern: str, pid: int, comm: str | None) -> str | None:
    """core_pattern with %p/%P/%e/%%; None when it uses specifiers we cannot know afterwards (%t...)."""
    values = {"p": str(pid), "P": str(pid), "i": str(pid), "I": str(pid), "e": comm or "*", "%": "%"}
    out = []
    pos = 0
    while pos < len(pattern):
        char = pattern[pos]
        if char == "%" and pos + 1 < len(pattern):
            spec = pattern[pos + 1]
            out.append(values.get(spec, "*"))
            pos += 2
            continue
        out.append(char)
        pos += 1
    return "".join(out)


def find_core(cwd: Path | str, pid: int, comm: str | None = None) -> CoreLocation:
    """The core of ``pid`` (a process that ran in ``cwd``), checked to really be that pid's core."""
    pattern = _read(CORE_PATTERN) or "core"
    if pattern.startswith("|"):
        return CoreLocation(None, f"cores go to a program ({pattern.split()[0][1:]}), e.g. systemd-coredump: "
                                  "use `coredumpctl dump PID -o FILE`")
    expanded = _expand(pattern, pid, comm) or pattern
    if _read(CORE_USES_PID) == "1" and "%p" not in pattern:
        expanded += f".{pid}"
    base = Path(expanded) if expanded.startswith("/") else Path(cwd) / expanded
    candidates = sorted(base.parent.glob(base.name)) if "*" in base.name else [base]
    if base.name == "core":
        candidates.append(base.with_name(f"core.{pid}"))
    for candidate in candidates:
        if candidate.is_file() and _core_pid(candidate) == pid:
            return CoreLocation(candidate, f"found at {candidate}")
    return CoreLocation(None, f"no core of pid {pid} at {base} (core_pattern {pattern!r}; is `ulimit -c` 0?)")


def _core_pid(path: Path) -> int | None:
    try:
        return read_core_notes(path).pid
    except CoreFormatError:
        return None

