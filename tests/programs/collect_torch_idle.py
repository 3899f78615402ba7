"""A process that imports torch (as a rank would), prints READY and idles in ``idle_rank``."""

import time

import torch  # noqa: F401  - the point is a rank-sized address space with torch's libraries


def idle_rank() -> None:
    while True:
        time.sleep(0.5)


if __name__ == "__main__":
    print("READY", flush=True)
    idle_rank()
