"""PID 1 of one test node (a pid + mount + UTS namespace inside the node's network namespace).

Usage: node_init.py HOSTNAME HOSTS_FILE RESOLV_FILE -- DAEMON_ARGV [-- DAEMON_ARGV ...]
Sets the hostname, bind-mounts HOSTS_FILE on /etc/hosts and RESOLV_FILE on /etc/resolv.conf (this
node's mount namespace only: node names resolve inside the cluster as on a real one, and DNS
lookups, which cannot leave the test network, fail at once instead of timing out), starts each daemon (the tests find
their pids with psutil as children of this process). Reaps every orphan (it is the namespace's init); on SIGTERM it
SIGKILLs every process of the namespace by exiting (the kernel kills the rest of a pid
namespace when its init dies).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys


def main() -> int:
    hostname, hosts_file, resolv_file, argv = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    socket.sethostname(hostname)
    subprocess.run(["mount", "--bind", hosts_file, "/etc/hosts"], check=True)
    subprocess.run(["mount", "--bind", resolv_file, "/etc/resolv.conf"], check=True)
    groups: list[list[str]] = []
    for word in argv:
        if word == "--":
            groups.append([])
        else:
            groups[-1].append(word)
    children = [subprocess.Popen(g, stdin=subprocess.DEVNULL) for g in groups if g]
    del children

    def _term(signum: int, frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, _term)
    print("READY", flush=True)
    while True:
        try:
            os.wait()
        except ChildProcessError:
            signal.pause()


if __name__ == "__main__":
    sys.exit(main())
