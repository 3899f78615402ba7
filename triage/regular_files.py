"""Open input files without ever blocking: only regular files are read.

A FIFO given as a log, dump, core or config file would block ``open`` (or the first read) forever,
and a device could stream without end. Every reader of user-supplied paths opens through
:func:`open_regular`, which opens non-blocking and refuses anything that is not a regular file.
"""

from __future__ import annotations

import errno
import json
import os
import pwd
import stat
from pathlib import Path
from typing import Any, BinaryIO

NOT_REGULAR = "not a regular file (a FIFO, device or directory)"


class NotRegularFile(OSError):
    """The path exists but is a FIFO, socket, device or directory."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(errno.EINVAL, NOT_REGULAR, str(path))


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` opened for binary reading; raises :class:`NotRegularFile` (an OSError) unless it is a
    regular file, and OSError when it cannot be opened. Never blocks on a FIFO."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(path)
        problem = deputy_problem(path, fd, info)
        if problem:
            raise NotTheOwnersFile(path, problem)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


class NotTheOwnersFile(OSError):
    """The file lies in another user's directory but is not theirs to read (a symlink out, a root-only file)."""

    def __init__(self, path: str | Path, why: str) -> None:
        super().__init__(errno.EACCES, why, str(path))


def deputy_problem(path: str | Path, fd: int, info: os.stat_result) -> str | None:
    """Why triage must not read ``fd`` (opened from ``path``) on behalf of another user, or None.

    When ``path`` lies in a directory that another user (not root, not us) owns, triage reads as that
    user could: the opened file must lie inside that directory (no symlink out of it), the owner must
    be able to reach it (search every directory down to it) and to read it. So a symlink or a hard
    link that an attacker plants in their own run or log directory never makes root read a root-only
    file into a report.
    """
    found = _other_users_directory(os.path.abspath(path))
    if found is None:
        return None
    boundary, owner = found
    real = os.path.realpath(boundary)
    try:
        opened = os.readlink(f"/proc/self/fd/{fd}")
        if os.stat(real).st_uid != owner:
            return f"{boundary} (uid {owner}) leads to a directory uid {owner} does not own"
    except OSError as error:
        return f"cannot check who may read it ({error.strerror or error})"
    if not opened.startswith(real.rstrip("/") + "/"):
        return f"leads out of {boundary}, which uid {owner} owns"
    groups = _groups(owner)
    for directory in [Path(opened).parent, *Path(opened).parent.parents]:
        if not (str(directory) == real or str(directory).startswith(real.rstrip("/") + "/")):
            break
        if not _may(owner, groups, os.stat(directory), stat.S_IXUSR, stat.S_IXGRP, stat.S_IXOTH):
            return f"uid {owner}, who owns {boundary}, cannot reach it"
    if not _may(owner, groups, info, stat.S_IRUSR, stat.S_IRGRP, stat.S_IROTH):
        return f"uid {owner}, who owns {boundary}, cannot read it"
    return None


# Directories that we or root own, on a path that no other user may change (each parent up to / is
# ours or root's and not writable by group or others, or sticky), with whether others may swap the
# entries inside them; keyed with the euid that looked. Only such a directory's owner is looked up
# once per process, not once per file: 4,096 ranks' files share their parent directories.
_OURS: dict[tuple[int, str], bool] = {}
_SWAPPABLE = stat.S_IWGRP | stat.S_IWOTH


def _other_users_directory(absolute: str) -> tuple[Path, int] | None:
    """The first directory on the way to ``absolute`` that another user (not root, not us) owns,
    with its owner; None when there is none (or a directory cannot be looked at)."""
    euid = os.geteuid()
    parts = absolute.split("/")[1:-1]
    part, locked = "/", True          # locked: no other user can change the path so far
    for index in range(len(parts) + 1):
        if index:
            part = "/" + "/".join(parts[:index])
        known = _OURS.get((euid, part))
        if known is not None:
            locked = known
            continue
        try:
            info = os.lstat(part)
        except OSError:
            return None
        if info.st_uid not in (euid, 0):
            return Path(part), info.st_uid
        inside = not info.st_mode & _SWAPPABLE or bool(info.st_mode & stat.S_ISVTX)
        if locked:
            _OURS[(euid, part)] = inside
        locked = locked and inside
    return None


def _groups(uid: int) -> frozenset[int]:
    try:
        entry = pwd.getpwuid(uid)
        return frozenset(os.getgrouplist(entry.pw_name, entry.pw_gid))
    except (KeyError, OSError):
        return frozenset()


def _may(uid: int, groups: frozenset[int], info: os.stat_result, user: int, group: int, other: int) -> bool:
    if info.st_uid == uid:
        return bool(info.st_mode & user)
    if info.st_gid in groups:
        return bool(info.st_mode & group)
    return bool(info.st_mode & other)


def is_special_file(path: str | Path) -> bool:
    """True when ``path`` exists and is neither a regular file nor a directory (FIFO, socket, device)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


MAX_JSON_DEPTH = 200
MAX_JSON_FILE = 16 * 1024 * 1024   # worker.json, run.json, exit.json, manifests: a few KB in a real run


class TooLargeFile(OSError):
    """A file larger than what triage reads of that kind (judged by its size, before reading)."""

    def __init__(self, path: str | Path, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"too large ({size} bytes; at most {limit} are read)", str(path))


def read_regular_bytes(path: str | Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; raises :class:`TooLargeFile` (an
    OSError) by its size, before anything is read, and OSError as :func:`open_regular` does."""
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise TooLargeFile(path, size, limit)
        # read(n) allocates n bytes before it reads: asking for the file's size (not the limit, 256 MiB
        # for a dump) saves a fresh mapping and a page fault per 4 KiB read (0.37 -> 0.04 ms a 0.7 MB
        # dump); a file that grew since fstat is read on, to the limit
        data = handle.read(size + 1)
        if len(data) > size:
            data += handle.read(limit + 1 - len(data))
    if len(data) > limit:
        raise TooLargeFile(path, len(data), limit)
    return data


def loads_json(data: str | bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` with the nesting bounded: deeper than ``max_depth`` raises ValueError (never a
    RecursionError, here or in whatever walks the value later)."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {max_depth} levels") from None
    if _openers(data) <= max_depth:    # cannot nest deeper than it has brackets: no walk needed
        return value
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            raise ValueError(f"JSON nested deeper than {max_depth} levels")
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return value


def _openers(data: str | bytes) -> int:
    """How many ``[`` and ``{`` ``data`` holds (inside strings too: an upper bound on its depth)."""
    if isinstance(data, str):
        return data.count("[") + data.count("{")
    return data.count(b"[") + data.count(b"{")


def read_json_file(path: str | Path, limit: int = MAX_JSON_FILE) -> Any:
    """A small JSON file (:func:`read_regular_bytes`, then :func:`loads_json`); raises OSError or
    ValueError."""
    return loads_json(read_regular_bytes(path, limit))
