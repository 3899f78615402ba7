"""Open input files without ever blocking: only regular files are read.

A FIFO given as a log, dump, core or config file would block ``open`` (or the first read) forever,
and a device could stream without end. Every reader of user-supplied paths opens through
:func:`open_regular`, which opens non-blocking and refuses anything that is not a regular file.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

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
