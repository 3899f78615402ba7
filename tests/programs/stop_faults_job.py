"""A 2-rank gloo job for the faults triage's stop must survive (tests/hang/test_stop_faults.py).

Rank 0 waits in all_reduce; rank 1 stays out of it, doing what STOP_FAULT says:

- ``import``: imports fresh modules without end (a directory of STOP_FAULT_MODULES generated
  modules, dropped from sys.modules and imported again), while a second thread in each rank does
  the same: the stop lands in the middle of an import;
- ``ignore``: ignores SIGTERM and sleeps;
- ``segv``: its SIGTERM handler segfaults;
- ``finish``: sleeps STOP_FAULT_SECONDS, then joins and the job ends (``rank R: done``).
"""

import ctypes
import importlib
import os
import signal
import sys
import tempfile
import threading
import time

import torch
import torch.distributed as dist


def import_forever(tag: str, count: int) -> None:
    where = tempfile.mkdtemp(prefix=f"stopfault-{tag}-", dir=os.environ.get("STOP_FAULT_DIR"))   # (the test's: the stop leaves no time to remove it)
    names = [f"stopfault_{tag}_{i}" for i in range(count)]
    for name in names:
        with open(os.path.join(where, name + ".py"), "w", encoding="utf-8") as handle:
            handle.write("".join(f"def f{j}(x):\n    return [x * {j} for _ in range(3)]\n" for j in range(40)))
    sys.path.insert(0, where)
    while True:
        for name in names:
            sys.modules.pop(name, None)
            importlib.import_module(name)
        importlib.invalidate_caches()


def main() -> None:
    fault = os.environ.get("STOP_FAULT", "finish")
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    t = torch.ones(64)
    for _ in range(2):
        dist.all_reduce(t)
    if fault == "import":
        threading.Thread(target=import_forever, args=(f"t{rank}", 200), daemon=True).start()
    if rank == 0:
        print("READY", flush=True)
    if rank == 1:
        print(f"rank 1: {fault}", flush=True)
        if fault == "import":
            import_forever("main", 200)
        elif fault == "ignore":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            time.sleep(600)
        elif fault == "segv":
            signal.signal(signal.SIGTERM, lambda *_: ctypes.string_at(0))
            time.sleep(600)
        else:
            time.sleep(float(os.environ.get("STOP_FAULT_SECONDS", "8")))
    dist.all_reduce(t)
    print(f"rank {rank}: done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
