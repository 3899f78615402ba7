"""A minimal non-torchrun launcher: starts N copies of a Python script with RANK, LOCAL_RANK,
WORLD_SIZE, MASTER_ADDR and MASTER_PORT set, waits for them and exits with the worst code.

Usage: launch_multi.py N SCRIPT [ARGS...]
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> int:
    count, script, rest = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    port = free_port()
    procs = []
    print(f"launch_multi: starting {count} workers", flush=True)
    for rank in range(count):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(count),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable, script, *rest], env=env))
    codes = [p.wait() for p in procs]
    print(f"launch_multi: workers exited with {codes}", flush=True)
    return max((abs(c) for c in codes), default=0)


if __name__ == "__main__":
    sys.exit(main())
