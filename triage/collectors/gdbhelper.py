"""CPython's gdb helper (``python3.X-gdb.py``), taken only from the system and sourced only as a copy.

The helper is Python code that gdb runs with triage's rights (root, often). The paths that lead to
it come from the target (``/proc/PID/exe``, a core's NT_FILE note), whose owner controls them, and
a path checked now can name other bytes when gdb opens it later (a flipped symlink, a
``/proc/PID/root/...`` path into a mount namespace the attacker unmounts). So:

- only a candidate under a fixed allowlist of system directories is considered (never ``/proc``,
  never a user's directory);
- it is opened by walking from ``/`` one component at a time with ``O_NOFOLLOW`` (``openat``), each
  directory and the file owned by root and not group- or world-writable;
- the bytes read through that descriptor are copied into triage's private directory (0700), and gdb
  sources the copy: nothing on the way to gdb can be swapped.

gdb itself runs with ``-nx`` and every auto-load off (triage.collectors.gdbrun). pystack, which
runs nothing from the target, is the preferred source of Python frames.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path, PurePosixPath

from triage.lazy_regex import lazy_regex

# Where root installs CPython and its gdb helpers; a helper anywhere else is never read.
SYSTEM_HELPER_DIRS = ("/usr/share/gdb/auto-load/", "/usr/lib/debug/", "/usr/bin/", "/usr/lib/",
                      "/usr/local/bin/", "/usr/local/lib/")
HELPER_LIMIT = 1 << 20
_HELPER_NAME = lazy_regex(r"^(?:lib)?python3\.\d+[a-z]*(?:\.so(?:\.[0-9.]+)?)?-gdb\.py$")
_copies: dict[str, str] = {}
_private: list[str] = []


class _Refused(Exception):
    """Why a candidate helper is not used."""


def helper_candidates(executable: str | None, mapped: tuple[str, ...] = ()) -> list[Path]:
    """Where gdb's auto-load would look for a helper (next to the binary or libpython, and under
    /usr/share/gdb/auto-load), as the target names them: judged by :func:`helper_problem`."""
    candidates: list[Path] = []
    for path in [executable, *[m for m in mapped if re.search(r"/libpython3\.\d+", m)]]:
        if not path or "\0" in path or not path.startswith("/"):
            continue
        base = Path(path)
        for candidate in (base.with_name(base.name + "-gdb.py"),
                          Path("/usr/share/gdb/auto-load") / (path.lstrip("/") + "-gdb.py")):
            if candidate not in candidates:
                candidates.append(candidate)
    return candidates


def helper_problem(candidate: Path, version: str | None) -> str | None:
    """Why ``candidate`` must not be sourced into gdb, or None when a copy of it may be."""
    try:
        os.close(_open_trusted(candidate, version))
    except _Refused as why:
        return f"{candidate}: {why}"
    return None


def python_gdb_helper(executable: str | None, mapped: tuple[str, ...] = ()) -> str | None:
    """A private copy of the first trusted system helper for this interpreter, or None (then
    pystack gives the Python frames). The returned path is in triage's own 0700 directory."""
    version = _python_version(executable, mapped)
    for candidate in helper_candidates(executable, mapped):
        try:
            fd = _open_trusted(candidate, version)
        except _Refused:
            continue
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(HELPER_LIMIT + 1)
        if len(data) > HELPER_LIMIT:
            continue
        return _private_copy(candidate, data)
    return None


def _open_trusted(candidate: Path, version: str | None) -> int:
    """``candidate`` opened read-only by an ``openat`` walk from ``/`` with ``O_NOFOLLOW`` at every
    component; raises :class:`_Refused` unless it and each directory are root's and not writable
    by group or others, and it lies under :data:`SYSTEM_HELPER_DIRS`."""
    text = str(candidate)
    parts = PurePosixPath(text).parts
    if not text.startswith("/") or ".." in parts or "." in parts or os.path.normpath(text) != text:
        raise _Refused("not a plain absolute path")
    if not any(text.startswith(prefix) for prefix in SYSTEM_HELPER_DIRS):
        raise _Refused("not under a system directory (" + ", ".join(SYSTEM_HELPER_DIRS) + ")")
    if not _HELPER_NAME.match(parts[-1]) or (version is not None and f"python{version}" not in parts[-1]):
        raise _Refused(f"not a CPython gdb helper{'' if version is None else ' for python' + version}")
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for index, part in enumerate(parts[1:], start=1):
            last = index == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_NONBLOCK if last else os.O_DIRECTORY)
            try:
                child = os.open(part, flags, dir_fd=fd)
            except OSError as error:
                raise _Refused(f"{'/'.join(parts[:index + 1])[1:]}: {error.strerror or error}") from None
            os.close(fd)
            fd = child
            _check_root_owned(fd, "/" + "/".join(parts[1:index + 1]), last)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _check_root_owned(fd: int, where: str, last: bool) -> None:
    info = os.fstat(fd)
    if last and not stat.S_ISREG(info.st_mode):
        raise _Refused(f"{where}: not a regular file")
    if info.st_uid != 0:
        raise _Refused(f"{where}: not owned by root (uid {info.st_uid})")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise _Refused(f"{where}: group- or world-writable")


def _private_copy(candidate: Path, data: bytes) -> str:
    key = str(candidate)
    if key in _copies and os.path.isfile(_copies[key]):
        return _copies[key]
    if not _private:
        _private.append(tempfile.mkdtemp(prefix="triage-gdb-helper-"))
        atexit.register(shutil.rmtree, _private[0], True)
    # A directory per copy keeps the file name gdb knows it by (python3.X-gdb.py).
    where = tempfile.mkdtemp(dir=_private[0])
    path = os.path.join(where, candidate.name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    _copies[key] = path
    return path


def _python_version(executable: str | None, mapped: tuple[str, ...]) -> str | None:
    for path in [executable or "", *mapped]:
        match = re.search(r"python(3\.\d+)", os.path.basename(path))
        if match:
            return match.group(1)
    return None


def forget_copies() -> None:
    """Remove the private copies now (tests; the process's exit does it otherwise)."""
    with contextlib.suppress(OSError):
        for path in _private:
            shutil.rmtree(path)
    _private.clear()
    _copies.clear()
