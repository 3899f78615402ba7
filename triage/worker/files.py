"""Small owner-only file writes for the in-worker agent (no tempfile import: this runs in every worker)."""

from __future__ import annotations

import json
import os
from typing import Any

# every file the agent writes: created 0600, never through a symlink planted at its name (the open fails)
WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW


def write_bytes(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` (created 0600, truncated; never through a symlink)."""
    fd = os.open(path, WRITE_FLAGS | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def write_json(path: str, data: Any) -> None:
    """Atomic, owner-only JSON write (no tempfile import: this runs in every worker)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    write_bytes(tmp, json.dumps(data, default=str).encode())
    os.replace(tmp, path)
