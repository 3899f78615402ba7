"""A process that is busy or blocked in a known way, for the busy/blocked sampler.

    agent_activity.py MODE
      sleep        the main thread sleeps (blocked)
      spin         the main thread computes (busy: CPU)
      write        the main thread writes 1 MiB chunks to a temporary file, rewinding (busy: I/O)
      own-spin     the main thread sleeps; a thread named ``triage-heartbeat`` computes (blocked:
                   triage's own threads are left out)
      nest         the main thread sleeps 0.5 s at a call depth that grows by one each time (no CPU to
                   speak of, but the stack moves: busy)
      starved      the main thread computes in one C call (the same stack throughout), pinned to CPU 0
                   at SCHED_IDLE while a child spins there at normal priority: it wants the CPU and
                   gets almost none (busy: waiting for a CPU, as a rank on an overloaded node)
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


def starve_and_compute(seconds: float = 60.0) -> None:
    """Pin to CPU 0 at SCHED_IDLE, start a normal-priority spinner there (it ends by itself after
    ``seconds``), then compute in one C call."""
    import subprocess

    os.sched_setaffinity(0, {0})
    hog = ("import os, time; os.sched_setaffinity(0, {0}); os.sched_setscheduler(0, os.SCHED_OTHER, "
           f"os.sched_param(0)); end = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass")
    subprocess.Popen([sys.executable, "-c", hog])
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    print("READY", flush=True)
    sum(range(10**13))


def main() -> None:
    mode = sys.argv[1]
    if mode == "starved":
        starve_and_compute()
        return
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
