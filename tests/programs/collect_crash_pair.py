"""Two ranks without torch: rank 1 dies by SIGSEGV, rank 0 survives in ``survivor_wait`` for a while.

Started by collect_two_ranks.py (a launcher that, unlike torchrun, does not tear the survivors
down), so the agent's crash collection finds rank 0 alive.
"""

import os
import signal
import time


def survivor_wait(seconds: float) -> None:
    time.sleep(seconds)


def main() -> None:
    rank = int(os.environ["RANK"])
    print(f"rank {rank} up", flush=True)
    time.sleep(2.0)                        # both ranks registered with the agent
    if rank == 1:
        os.kill(os.getpid(), signal.SIGSEGV)
    survivor_wait(float(os.environ.get("COLLECT_SURVIVE_SECONDS", "8")))


if __name__ == "__main__":
    main()
