"""Small owner-only file writes for the in-worker agent (no tempfile import: this runs in every worker)."""

from __future__ import annotations

import json
import os
from typing import Any


def write_bytes(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` (created 0600, truncated)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
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
