"""Reading one rank's files for `triage top`, each decoded again only when it changed.

A refresh lists every rank directory once (``os.scandir``: the names and ``lstat`` of what is
there, no path objects) and looks at each file it knows by that ``lstat``: device, inode, type,
owner, size, modification and change times. A file whose ``lstat`` is the one it had when it was
last read is not opened again: its decoded summary is reused. Anything else is opened through
:func:`triage.regular_files.open_regular` as before (non-blocking, regular files only, the
confused-deputy checks in another user's directory), so a file replaced by another one, by a
FIFO or by a symlink is read (or refused) afresh. A symlink is never cached: its ``lstat`` says
nothing of what it points to, so it goes through ``open_regular`` at every refresh.

Summaries only are kept (a few numbers a rank), never a file's bytes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from triage.regular_files import loads_json, open_regular

MAX_JSON = 4 * 1024 * 1024
MAX_TEXT = 256 * 1024

Key = tuple[int, int, int, int, int, int, int]


def file_key(info: os.stat_result) -> Key:
    return (info.st_dev, info.st_ino, info.st_mode, info.st_uid, info.st_size, info.st_mtime_ns,
            info.st_ctime_ns)


def list_dir(directory: str, wanted: frozenset[str]) -> dict[str, os.stat_result]:
    """name -> ``lstat`` of the entries of ``directory`` named in ``wanted`` (empty when it cannot
    be listed)."""
    found: dict[str, os.stat_result] = {}
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.name in wanted:
                    try:
                        found[entry.name] = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
    except OSError:
        return {}
    return found


@dataclass
class FileCache:
    """path -> (the ``lstat`` key it had when read, its decoded summary, the problem it gave)."""

    entries: dict[str, tuple[Key, Any, str | None]] = field(default_factory=dict)
    reads: int = 0                         # files opened and decoded (tests and the bench count them)

    def get(self, path: str, info: os.stat_result | None, decode: Callable[[bytes, str], tuple[Any, str | None]],
            limit: int, problems: list[str]) -> Any:
        """The summary ``decode`` gives of ``path`` (None when it is absent or cannot be read);
        ``info`` is its ``lstat`` from :func:`list_dir` (None: absent)."""
        if info is None:
            self.entries.pop(path, None)
            return None
        cacheable = stat.S_ISREG(info.st_mode)       # never a symlink, a FIFO, a directory
        key = file_key(info)
        known = self.entries.get(path)
        if cacheable and known is not None and known[0] == key:
            if known[2]:
                problems.append(known[2])
            return known[1]
        self.entries.pop(path, None)
        try:
            with open_regular(path) as handle:
                data = _read(handle, limit)
        except FileNotFoundError:
            return None
        except OSError as exc:
            problems.append(f"{path}: cannot read ({exc.strerror or exc})")
            return None
        self.reads += 1
        value: Any = None
        problem: str | None = f"{path}: larger than {limit} bytes, skipped"
        if len(data) <= limit:
            value, problem = decode(data, path)
        if problem:
            problems.append(problem)
        if cacheable:
            self.entries[path] = (key, value, problem)
        return value


def _read(handle: BinaryIO, limit: int) -> bytes:
    """At most ``limit + 1`` bytes, in a buffer the size of the file (not of ``limit``)."""
    size = os.fstat(handle.fileno()).st_size
    data = handle.read(min(size, limit) + 1)
    if size < len(data) <= limit:          # it grew since
        data += handle.read(limit + 1 - len(data))
    return data


def json_object(data: bytes, path: str) -> tuple[dict[str, Any] | None, str | None]:
    """A JSON object (None and a problem when it is not one)."""
    try:
        value = loads_json(data)
    except ValueError:
        return None, f"{path}: not JSON (being rewritten, or damaged)"
    return (value if isinstance(value, dict) else None), None
