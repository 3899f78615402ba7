"""A gloo rank with a thread that must keep running, for bench/bench_exit_dump.py.

Each rank runs COLLECTIVES all_reduces (argv[1]; the Flight Recorder keeps the last
TORCH_FR_BUFFER_SIZE of them), then starts a daemon thread that wakes every millisecond (a heartbeat,
a data loader's pin-memory thread) and writes each wake-up's time to ``ticks-<rank>.bin`` (argv[2]'s
directory), 8 bytes a tick, unbuffered. The main thread then:

1. calls the Flight Recorder's full JSON dump itself, as the agent's atexit does, and prints how long
   it took and the thread's longest wait during it (``DUMP {...}``);
2. writes its own end time to ``end-<rank>.txt`` and returns: the interpreter's exit (atexit, the
   agent's exit record and ``fr-exit.json``) follows, and the thread's ticks show how long it waited.
"""

import itertools
import json
import os
import struct
import sys
import threading
import time

import torch
import torch.distributed as dist

collectives = int(sys.argv[1])
out = sys.argv[2]
dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(4)
for _ in range(collectives):
    dist.all_reduce(t)

fd = os.open(os.path.join(out, f"ticks-{rank}.bin"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
stamps: list[float] = []


def beat() -> None:
    while True:
        now = time.perf_counter()
        stamps.append(now)
        os.write(fd, struct.pack("d", now))
        time.sleep(0.001)


threading.Thread(target=beat, daemon=True).start()
time.sleep(0.2)
c10d = torch._C._distributed_c10d
start = time.perf_counter()
data = c10d._dump_fr_trace_json(True, False)
end = time.perf_counter()
time.sleep(0.05)
inside = [s for s in stamps if s >= start - 0.01]
gaps = [b - a for a, b in itertools.pairwise(inside) if b > start]
entries = len(json.loads(data).get("entries") or [])
print("DUMP " + json.dumps({"rank": rank, "seconds": end - start, "entries": entries, "bytes": len(data),
                            "thread_longest_wait": max(gaps, default=None)}), flush=True)
dist.barrier()
with open(os.path.join(out, f"end-{rank}.txt"), "w") as handle:
    handle.write(repr(time.perf_counter()))
