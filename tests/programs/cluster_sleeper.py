"""A job rank that just waits (sleeps in Python): a target for `triage collect --job` without an agent."""

import os
import sys
import time


def wait_here() -> None:
    while True:
        time.sleep(0.5)


if __name__ == "__main__":
    print(f"READY rank={os.environ.get('SLURM_PROCID')} host={os.uname().nodename} pid={os.getpid()}", flush=True)
    sys.stdout.flush()
    wait_here()
