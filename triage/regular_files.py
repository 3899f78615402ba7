"""Open input files without ever blocking: only regular files are read.

A FIFO given as a log, dump, core or config file would block ``open`` (or the first read) forever,
and a device could stream without end. Every reader of user-supplied paths opens through
:func:`open_regular`, which opens non-blocking and refuses anything that is not a regular file.
"""

from __future__ import annotations

import errno
import json
import os
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
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(path)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


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
        data = handle.read(limit + 1)
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


def read_json_file(path: str | Path, limit: int = MAX_JSON_FILE) -> Any:
    """A small JSON file (:func:`read_regular_bytes`, then :func:`loads_json`); raises OSError or
    ValueError."""
    return loads_json(read_regular_bytes(path, limit))
