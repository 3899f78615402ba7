"""Executables: the one gdb needs for a core, and the tools triage installs with itself.

Shims (pyenv, asdf, wrapper scripts) are scripts, not ELF files: they are never handed to gdb.
The core's own mapping (NT_FILE at the entry point) names the real interpreter, which wins
over a mismatching ``--exe``; every decision is said in ``notes``.

Tools that ship as Python packages (py-spy) are looked for first in the environment triage runs
from (``sysconfig``'s scripts directory, then the directory of ``sys.executable``): a virtual
environment that is not activated (pipx, a full path to ``.venv/bin/triage``) still has them,
although its ``bin`` is not on PATH. Then on PATH.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from triage.collectors.common import find_tool
from triage.parsing.elfcore import CoreNotes

DELETED = " (deleted)"


@dataclass(frozen=True)
class ExeChoice:
    path: str | None                  # what gdb gets; None: gdb runs on the core alone
    from_core: str | None             # what the core's notes name
    notes: tuple[str, ...] = ()
    mismatch: bool = False
    missing: bool = False


def _is_elf(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == b"\x7fELF"
    except OSError:
        return False


def _resolve_user_exe(exe: str) -> tuple[Path | None, str | None]:
    """``--exe`` as a real ELF path, or a note on why it cannot be used."""
    path = Path(exe)
    if not path.exists() and os.sep not in exe:
        found = shutil.which(exe)
        path = Path(found) if found else path
    if not path.exists():
        return None, f"--exe {exe}: no such file"
    real = Path(os.path.realpath(path))
    if not _is_elf(real):
        return None, f"--exe {exe} is a script (a shim such as pyenv's?), not the real binary"
    return real, None


def choose_executable(notes: CoreNotes | None, exe: str | None) -> ExeChoice:
    from_core = notes.executable() if notes else None
    messages: list[str] = []
    if from_core and from_core.endswith(DELETED):
        from_core = from_core[: -len(DELETED)]
        messages.append(f"{from_core} was deleted or replaced while the process ran: "
                        "if it was rebuilt, the backtrace may be wrong")
    core_path = Path(from_core) if from_core else None
    core_ok = core_path is not None and core_path.is_file() and _is_elf(core_path)
    if exe:
        user, problem = _resolve_user_exe(exe)
        if problem:
            messages.append(problem)
        elif user is not None:
            same = core_path is None or os.path.realpath(core_path) == str(user)
            if same or not core_ok:
                if not same:
                    messages.append(f"--exe {user} is not the executable the core names ({from_core}, "
                                    "which is not on this machine): the backtrace may be wrong")
                return ExeChoice(str(user), from_core, tuple(messages), mismatch=not same)
            messages.append(f"--exe {user} does not match the core, which was made by {from_core}: "
                            f"using {from_core}")
            return ExeChoice(str(core_path), from_core, tuple(messages), mismatch=True)
    if core_ok and core_path is not None:
        return ExeChoice(str(core_path), from_core, tuple(messages))
    if from_core:
        messages.append(f"the executable the core names ({from_core}) is missing here: "
                        "frames in it show as ??; pass --exe")
    else:
        messages.append("the core does not name its executable: pass --exe")
    return ExeChoice(None, from_core, tuple(messages), missing=True)


def own_environment_dirs() -> list[Path]:
    """Where the running interpreter's environment keeps its scripts (not resolved: a venv's
    ``bin/python`` is often a link to the base interpreter, whose ``bin`` is another place)."""
    dirs: list[Path] = []
    for candidate in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        if candidate and Path(candidate) not in dirs:
            dirs.append(Path(candidate))
    return dirs


def find_environment_tool(name: str) -> tuple[str | None, list[Path]]:
    """(the tool from triage's own environment, else from PATH, else None; the dirs looked in)."""
    dirs = own_environment_dirs()
    for directory in dirs:
        path = directory / name
        if path.is_file() and os.access(path, os.X_OK):
            return str(path), dirs
    return find_tool(name), dirs
