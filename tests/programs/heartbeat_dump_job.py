"""A gloo job for bench/bench_heartbeat_dump.py: what a Flight Recorder dump in the heartbeat costs the rank.

argv: MODE COLLECTIVES ROUNDS DELAY OUT. Each rank runs COLLECTIVES all_reduces (the Flight Recorder keeps the
last TORCH_FR_BUFFER_SIZE), then rank 0 starts a daemon thread that wakes every millisecond (any thread of the
rank that wants the GIL: a data loader's pin-memory thread, or the main thread itself between GPU launches).

- MODE ``calls`` (plain torchrun): rank 0 enqueues one more all_reduce that rank 1 joins only once OUT/measured
  exists, and while it is pending times, 3 times each, the heartbeat's lookup of its entry before session 41 (a
  whole dump, ``json.loads`` of all of it) and now (``triage.worker.flight.in_flight_entries``), with the
  thread's longest wait in each. Prints ``CALL {...}`` lines.
- MODE ``rounds`` (under ``triage launch``): ROUNDS all_reduces that rank 1 joins DELAY seconds late each, so
  each stays pending on rank 0 for a few heartbeats (a slow step, no hang). Prints ``ROUNDS {...}``: the
  thread's waits over 20 ms during the rounds (count, sum, longest).
"""

import itertools
import json
import os
import sys
import threading
import time

import torch
import torch.distributed as dist

mode, collectives, rounds, delay, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), \
    sys.argv[5]
dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(4)
for _ in range(collectives):
    dist.all_reduce(t)
stamps: list[float] = []


def tick() -> None:
    while True:
        stamps.append(time.perf_counter())
        time.sleep(0.001)


def waits(start: float, end: float) -> list[float]:
    inside = [s for s in stamps if start - 0.01 <= s <= end + 0.01]
    return [b - a for a, b in itertools.pairwise(inside) if b > start]


if rank == 0:
    threading.Thread(target=tick, daemon=True).start()
    time.sleep(0.2)
c10d = torch._C._distributed_c10d


def before(wanted: list[tuple[str, int]]) -> list[dict[str, object]]:
    doc = json.loads(c10d._dump_fr_trace_json(True, False))
    keys = set(wanted)
    return [e for e in reversed(doc.get("entries") or []) if (str(e.get("pg_id")), e.get("collective_seq_id")) in keys]


if mode == "calls":
    from triage.worker import flight

    if rank == 0:
        work = dist.all_reduce(t, async_op=True)
        time.sleep(0.3)
        wanted = flight.enqueued_not_completed(flight.status() or {})
        for label, call in (("before", before), ("now", flight.in_flight_entries)) * 3:
            start = time.perf_counter()
            found = call(wanted)
            end = time.perf_counter()
            time.sleep(0.05)
            print("CALL " + json.dumps({"label": label, "seconds": end - start, "found": len(found),
                                        "thread_longest_wait": max(waits(start, end), default=None)}), flush=True)
        open(os.path.join(out, "measured"), "w").close()
        work.wait()
    else:
        while not os.path.exists(os.path.join(out, "measured")):
            time.sleep(0.05)
        dist.all_reduce(t)
else:
    start = time.perf_counter()
    for _ in range(rounds):
        if rank == 1:
            time.sleep(delay)
        dist.all_reduce(t)
    end = time.perf_counter()
    if rank == 0:
        long = [w for w in waits(start, end) if w > 0.02]
        print("ROUNDS " + json.dumps({"seconds": end - start, "waits_over_20ms": len(long), "sum": sum(long),
                                      "longest": max(long, default=0.0)}), flush=True)
dist.barrier()
dist.destroy_process_group()
