"""A single Python process with torch loaded that segfaults through ctypes (NULL read in libc)."""

import ctypes
import faulthandler
import os
import sys

import torch  # noqa: F401 - loaded on purpose: the core must be a torch process's

faulthandler.enable(file=sys.stderr)


def crash_in_native_code() -> None:
    ctypes.string_at(0)


if __name__ == "__main__":
    print(f"READY pid={os.getpid()}", flush=True)
    if os.environ.get("PM_WAIT_STDIN"):
        sys.stdin.readline()
    crash_in_native_code()
