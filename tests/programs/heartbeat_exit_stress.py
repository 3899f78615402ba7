"""A rank that ends right after its collectives, while the agent's heartbeat thread is beating (interval 0.05 s).

argv[1] picks how it ends: ``main`` (the main thread returns), ``thread-exit`` (a user thread calls
os._exit(7) while the main thread is inside a collective loop), ``user-thread`` (the main thread returns
while a non-daemon user thread still runs collectives: the interpreter waits for it), ``fork`` (the rank
forks a child that prints and leaves through os._exit(0), as a forked worker does: a forked child that
finalizes a gloo process group hangs in its destructor, triage or not), then waits for it and returns). Prints DONE
before it ends. Used by tests/security/test_heartbeat_at_exit.py.
"""

import os
import sys
import threading

import torch
import torch.distributed as dist

how = sys.argv[1]
port = sys.argv[2]
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
tensor = torch.ones(64)


def collectives(n: int) -> None:
    for _ in range(n):
        dist.all_reduce(tensor)


collectives(200)
if how == "thread-exit":
    def leave() -> None:
        collectives(50)
        print("DONE", flush=True)
        os._exit(7)
    threading.Thread(target=leave).start()
    collectives(10**9)
elif how == "user-thread":
    worker = threading.Thread(target=collectives, args=(300,))
    worker.start()
    print("DONE", flush=True)
elif how == "fork":
    pid = os.fork()
    if pid == 0:
        print("child", flush=True)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, status
    print("DONE", flush=True)
else:
    print("DONE", flush=True)
