"""A process that is busy or blocked in a known way, for the busy/blocked sampler.

    agent_activity.py MODE
      sleep        the main thread sleeps (blocked)
      spin         the main thread computes (busy: CPU)
      write        the main thread writes 1 MiB chunks to a temporary file, rewinding (busy: I/O)
      own-spin     the main thread sleeps; a thread named ``triage-heartbeat`` computes (blocked:
                   triage's own threads are left out)
      nest         the main thread sleeps 0.5 s at a call depth that grows by one each time (no CPU to
                   speak of, but the stack moves: busy)
Prints READY once the activity runs; runs until killed.
"""

import os
import sys
import tempfile
import threading
import time


def spin_forever() -> None:
    while True:
        sum(i * i for i in range(10000))


def write_forever() -> None:
    chunk = os.urandom(1 << 20)
    with tempfile.TemporaryFile() as handle:
        while True:
            for _ in range(16):
                handle.write(chunk)
            handle.seek(0)


def nest(depth: int) -> None:
    if depth:
        nest(depth - 1)
    else:
        time.sleep(0.5)


def main() -> None:
    mode = sys.argv[1]
    if mode == "own-spin":
        threading.Thread(target=spin_forever, name="triage-heartbeat", daemon=True).start()
    print("READY", flush=True)
    if mode == "spin":
        spin_forever()
    elif mode == "write":
        write_forever()
    elif mode == "nest":
        depth = 0
        while True:
            nest(depth % 200)
            depth += 1
    else:
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
