"""A rank that ends right after its collectives, while the agent's heartbeat thread is beating (interval 0.05 s).

argv[1] picks how it ends: ``main`` (the main thread returns), ``main-no-destroy`` (the same without
``destroy_process_group``: the interpreter finalizes with the process group alive), ``thread-exit`` (a user thread calls
os._exit(7) while the main thread is inside a collective loop), ``user-thread`` (the main thread returns
while a non-daemon user thread still runs collectives: the interpreter waits for it), ``fork`` (the rank
forks a child that prints and leaves through os._exit(0), as a forked worker does: a forked child that
finalizes a gloo process group hangs in its destructor, triage or not), then waits for it and returns). Prints DONE
before it ends. Every other ending that finalizes the interpreter calls ``destroy_process_group`` first, as torch asks: a gloo
process that exits without it dies of ``terminate called without an active exception`` (SIGABRT) now and then with
no triage in it (7 of 150 plain runs of ``main-no-destroy`` here; pytorch/pytorch#190489).
Used by tests/security/test_heartbeat_at_exit.py.
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


def collectives(n: int, then_destroy: bool = False) -> None:
    for _ in range(n):
        dist.all_reduce(tensor)
    if then_destroy:
        dist.destroy_process_group()


collectives(200)
if how == "thread-exit":
    def leave() -> None:
        collectives(50)
        print("DONE", flush=True)
        os._exit(7)
    threading.Thread(target=leave).start()
    collectives(10**9)
elif how == "user-thread":
    worker = threading.Thread(target=collectives, args=(300, True))
    worker.start()
    print("DONE", flush=True)
elif how == "fork":
    pid = os.fork()
    if pid == 0:
        print("child", flush=True)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, status
    dist.destroy_process_group()
    print("DONE", flush=True)
elif how == "main-no-destroy":
    print("DONE", flush=True)
else:
    dist.destroy_process_group()
    print("DONE", flush=True)
