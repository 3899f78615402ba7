"""Owner-only files and directories: how triage writes what it keeps, safely.

Every directory triage creates is 0700 and every file 0600; an existing directory must be ours and
private (never one another user owns or can write to, never a symlink swapped in), and JSON is written
atomically so a reader sees the old file or the new one, never half of one. What the files are
called is triage.layout's business.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from triage.errors import InputError
from triage.regular_files import read_json_file

DIR_MODE = 0o700
FILE_MODE = 0o600


class UnsafeDirectoryError(InputError):
    """A directory triage would write into is not private to the user running triage."""

    default_hint = ("give a directory that you own and that no one else can write to "
                    "(e.g. --run-dir under your home); triage never writes where another user can swap files")


def _owner_ok(uid: int) -> bool:
    return uid in (os.geteuid(), 0)


def directory_problem(path: Path, final: bool = True) -> str | None:
    """Why triage must not write into ``path`` (an existing directory), or None.

    Every symlink on the way must be ours or root's; every directory of the resolved path must be
    ours or root's and not group- or world-writable (a root-owned sticky directory such as /tmp
    may hold it); ``path`` itself (``final``) must be ours and writable by no one else.
    """
    probe = Path(os.path.abspath(path))
    for part in [probe, *probe.parents]:
        try:
            info = os.lstat(part)
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode) and not _owner_ok(info.st_uid):
            return f"{part} is a symlink owned by uid {info.st_uid}"
    real = Path(os.path.realpath(probe))
    for index, part in enumerate([real, *real.parents]):
        try:
            info = os.stat(part)
        except OSError as error:
            return f"{part}: {error.strerror or error}"
        if index == 0 and not stat.S_ISDIR(info.st_mode):
            return f"{part} is not a directory"
        writable = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if index == 0 and final:
            if info.st_uid != os.geteuid():
                return f"{part} belongs to uid {info.st_uid}, not to uid {os.geteuid()} running triage"
            if writable:
                return f"{part} is group- or world-writable (mode {stat.S_IMODE(info.st_mode):o})"
            continue
        if not _owner_ok(info.st_uid):
            return f"{part} belongs to uid {info.st_uid}"
        if writable and not (info.st_mode & stat.S_ISVTX and info.st_uid == 0):
            return f"{part} is group- or world-writable (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def check_private_dir(path: Path, final: bool = True) -> Path:
    problem = directory_problem(path, final)
    if problem:
        raise UnsafeDirectoryError(f"{path}: refusing to write here: {problem}")
    return path


def make_private_dir(path: Path) -> Path:
    """Create ``path`` and any missing parents owner-only (0700; mkdir's parents=True would use the umask).

    An existing ``path`` must be private to us (:func:`directory_problem`), and so must every
    directory above it: never a directory another user owns, can write to, or swapped for a symlink.
    Raises :class:`UnsafeDirectoryError` (an InputError, exit 2) otherwise.
    """
    path = Path(path)
    missing = []
    probe = path
    while not os.path.lexists(probe) and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    check_private_dir(probe, final=not missing)
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=DIR_MODE)
        check_private_dir(directory)
    return path


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON so that readers see either the old or the new file, never half of one."""
    import tempfile  # (lazy: with shutil, lzma and bz2, ~5 ms that a report's start does without)

    make_private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, sort_keys=True, default=str)
            handle.write("\n")
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def rewrite_json_in_place(path: Path, data: Any) -> bool:
    """A full disk's last resort for a small record of our own (node.json's end record): the new text
    goes over the old in the blocks the file already holds, so it needs no free space. Only when it
    fits in them and the file is a regular file of ours (never through a link); False when it could
    not be written. Not atomic: a reader at that instant may see half of it."""
    text = (json.dumps(data, indent=1, sort_keys=True, default=str) + "\n").encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or len(text) > st.st_blocks * 512:
            return False
        view = memoryview(text)
        while view:
            view = view[os.write(fd, view):]
        os.ftruncate(fd, len(text))
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


class UnsafeOutputError(InputError):
    """An output file (``-o FILE``) cannot be written without writing through another user's file."""

    default_hint = "give a new file name in a directory that only you (or root) can write to"


@contextlib.contextmanager
def user_output(path: str | Path) -> Iterator[TextIO]:
    """The one writer of every file a user names (``report -o``, ``postmortem -o``).

    A name that is a stream rather than a file (``/dev/null``, a terminal, a FIFO of one's own,
    ``/dev/stdout``) is written into, never replaced. Otherwise the text goes into a new temporary
    file in the target's directory, created with
    ``O_CREAT|O_EXCL|O_NOFOLLOW`` and mode 0600 relative to that directory's open descriptor, then is
    renamed over the name: a symlink planted at the name is replaced, never followed, and a file
    that someone else created is never written into. Refused (:class:`UnsafeOutputError`, exit 2):
    an existing name that is a directory or belongs to another user, and a directory that others can
    write to without the sticky bit (they could swap names in it).
    """
    target = Path(os.path.abspath(path))
    name = target.name
    if name in ("", ".", ".."):
        raise UnsafeOutputError(f"{path}: not a file name")
    try:
        dir_fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise UnsafeOutputError(f"{path}: cannot write here: {error.strerror or error}") from None
    try:
        stream = _stream_target(dir_fd, name, path)
        if stream is not None:           # /dev/null, a tty, a FIFO, /dev/stdout: written into, never replaced
            with os.fdopen(stream, "w", encoding="utf-8") as handle:
                yield handle
            return
        _check_output(dir_fd, name, path)
        tmp, fd = _exclusive_temp(dir_fd, name, path)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                yield handle
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
    finally:
        os.close(dir_fd)


# Where a name is a link to a stream the process already holds: ``/dev/stdout`` -> ``/proc/self/fd/1``.
_STREAM_LINK_DIRS = ("/dev", "/proc")


def _stream_target(dir_fd: int, name: str, path: str | Path) -> int | None:
    """An open descriptor for writing when the name is not a file to replace but a stream to write
    into: a character device (``/dev/null``, a terminal), a FIFO or socket, or a link in /dev or /proc
    to one of the process's own streams (``/dev/stdout``, ``/dev/fd/N``). Renaming a file over such a
    name would destroy it for the whole machine (root's ``-o /dev/null`` made /dev/null a regular
    file). None: a regular file, a link elsewhere, or nothing there (the atomic replace). A FIFO or
    socket that another user made is refused: it is a reader someone planted."""
    try:
        existing = os.lstat(name, dir_fd=dir_fd)
    except OSError:
        return None
    mode = existing.st_mode
    if stat.S_ISLNK(mode):
        parent = str(Path(os.path.abspath(path)).parent)
        if not any(parent == top or parent.startswith(top + "/") for top in _STREAM_LINK_DIRS):
            return None                 # a link elsewhere: replaced, never followed (the checks below)
        try:
            followed = os.stat(name, dir_fd=dir_fd)
        except OSError:
            return None
        return _open_stream(dir_fd, name, path, followed, follow=True)
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return _open_stream(dir_fd, name, path, existing, follow=False)
    return None


def _open_stream(dir_fd: int, name: str, path: str | Path, info: os.stat_result, follow: bool) -> int:
    if (stat.S_ISFIFO(info.st_mode) or stat.S_ISSOCK(info.st_mode)) and info.st_uid != os.geteuid():
        raise UnsafeOutputError(f"{path}: refusing to write: a pipe that uid {info.st_uid} created is there")
    if stat.S_ISDIR(info.st_mode):
        raise UnsafeOutputError(f"{path}: is a directory")
    flags = os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC | (os.O_APPEND if stat.S_ISREG(info.st_mode) else 0)
    try:
        return os.open(name, flags | (0 if follow else os.O_NOFOLLOW), dir_fd=dir_fd)
    except OSError as error:
        raise UnsafeOutputError(f"{path}: cannot write here: {error.strerror or error}") from None


def _check_output(dir_fd: int, name: str, path: str | Path) -> None:
    info = os.fstat(dir_fd)
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not info.st_mode & stat.S_ISVTX:
        raise UnsafeOutputError(f"{path}: refusing to write here: the directory is group- or world-writable "
                                f"(mode {stat.S_IMODE(info.st_mode):o}) and not sticky")
    try:
        existing = os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(existing.st_mode):
        raise UnsafeOutputError(f"{path}: is a directory")
    if existing.st_uid != os.geteuid():
        kind = "a symlink" if stat.S_ISLNK(existing.st_mode) else "a file"
        raise UnsafeOutputError(f"{path}: refusing to write: {kind} that uid {existing.st_uid} created is there")


def _exclusive_temp(dir_fd: int, name: str, path: str | Path) -> tuple[str, int]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        tmp = f".{name[:200]}.{os.urandom(6).hex()}.tmp"
        try:
            fd = os.open(tmp, flags, FILE_MODE, dir_fd=dir_fd)
        except FileExistsError:
            continue
        except OSError as error:
            raise UnsafeOutputError(f"{path}: cannot write here: {error.strerror or error}") from None
        os.fchmod(fd, FILE_MODE)
        return tmp, fd
    raise UnsafeOutputError(f"{path}: cannot create a temporary file next to it")


def read_json(path: Path) -> Any:
    """A JSON file triage wrote (bounded in size and depth: it may have been tampered with)."""
    return read_json_file(path)
