"""A process whose main thread waits on a child that never answers (no torch, no triage).

``python agent_child_wait.py pool FIFO``: ``multiprocessing.Pool(2).map`` over two items; the task
of item 1 reads FIFO (nobody writes it), so the pool worker running it blocks and the main thread
waits for the pool result. ``python agent_child_wait.py subprocess FIFO``: the main thread waits in
``subprocess.run`` on a Python child that reads FIFO. Prints READY once the wait has begun.
"""

import multiprocessing
import subprocess
import sys
import threading
import time


def read_from_store(path: str) -> bytes:
    with open(path, "rb") as fifo:          # blocks: no writer ever opens the FIFO
        return fifo.read()


def task(item: tuple[int, str]) -> int:
    index, path = item
    if index == 1:
        return len(read_from_store(path))
    return index


def ready_later() -> None:
    time.sleep(1.0)
    print("READY", flush=True)


def main() -> None:
    mode, fifo = sys.argv[1], sys.argv[2]
    threading.Thread(target=ready_later, daemon=True).start()
    if mode == "pool":
        with multiprocessing.get_context("fork").Pool(2) as pool:
            print(pool.map(task, [(0, fifo), (1, fifo)], chunksize=1))
    else:
        code = f"from agent_child_wait import read_from_store; read_from_store({fifo!r})"
        subprocess.run([sys.executable, "-c", code], check=False, cwd=sys.path[0])


if __name__ == "__main__":
    main()
