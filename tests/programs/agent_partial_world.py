"""A launcher that starts only some ranks of a world: ``agent_partial_world.py STARTED WORLD SCRIPT``.

Starts ranks 0..STARTED-1 of a world of WORLD ranks (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR
127.0.0.1 and a free MASTER_PORT), as a node would whose peers never started. The ranks wait in
``init_process_group`` for the others. Waits for the ranks; exits with the first non-zero status.
"""

import os
import socket
import subprocess
import sys


def main() -> int:
    started, world = int(sys.argv[1]), int(sys.argv[2])
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "WORLD_SIZE": str(world),
           "LOCAL_WORLD_SIZE": str(started)}
    procs = [subprocess.Popen([sys.executable, *sys.argv[3:]], env={**env, "RANK": str(r), "LOCAL_RANK": str(r)})
             for r in range(started)]
    codes = [p.wait() for p in procs]
    bad = [c for c in codes if c != 0]
    return 0 if not bad else (128 - bad[0] if bad[0] < 0 else bad[0])


if __name__ == "__main__":
    sys.exit(main())
