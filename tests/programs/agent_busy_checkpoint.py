"""Rank 0 is busy outside any collective (writing a "checkpoint") while the others wait in a barrier.

Run under ``triage launch -- torchrun --nproc-per-node 3``. After two all_reduces, rank 0
writes to a file in ``save_checkpoint`` for AGENT_BUSY_SECONDS (default 30), in chunks of
1 MiB (fsync'd now and then, so the bytes really move), while ranks 1-2 wait in a barrier.
Then every rank joins the barrier and prints ``rank N: last line``; the job exits 0.
AGENT_BUSY_MODE=sleep makes rank 0 sleep instead (a rank that does nothing: a real hang).
AGENT_BUSY_MODE=starved makes it compute in one C call (the same stack throughout, the GIL released) while it gets
almost no CPU: its main thread is pinned to one CPU at SCHED_IDLE next to a child spinning there at
normal priority for AGENT_BUSY_SECONDS (a rank on an overloaded node); then the child gives the
thread its CPUs and priority back and the computation ends within a second.
AGENT_BUSY_RANK picks another rank than 0 for that part.
"""

import datetime
import hashlib
import os
import subprocess
import sys
import tempfile
import threading
import time

import torch
import torch.distributed as dist

import triage


def save_checkpoint(path: str, seconds: float) -> int:
    chunk = os.urandom(1 << 20)
    written = 0
    deadline = time.monotonic() + seconds
    with open(path, "wb") as handle:
        while time.monotonic() < deadline:
            handle.write(chunk)
            written += len(chunk)
            if written % (64 << 20) == 0:
                handle.flush()
                os.fsync(handle.fileno())
                handle.seek(0)       # keep the file small: the bytes still go to the disk
    return written


def sleep_outside_collectives(seconds: float) -> None:
    time.sleep(seconds)


def start_spinner(seconds: float) -> subprocess.Popen[str]:
    """A child pinned to this thread's first CPU that spins there for ``seconds`` once told to (a line
    on its stdin), then gives this thread its CPUs and normal priority back. Started ahead, so that
    the spinning begins at once."""
    tid = threading.get_native_id()
    cpus = sorted(os.sched_getaffinity(0))
    hog = (f"import os, sys, time\nos.sched_setaffinity(0, {{{cpus[0]}}})\nprint('ready', flush=True)\n"
           f"sys.stdin.readline()\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass\n"
           f"os.sched_setscheduler({tid}, os.SCHED_OTHER, os.sched_param(0))\n"
           f"os.sched_setaffinity({tid}, {cpus})\n")
    spinner = subprocess.Popen([sys.executable, "-c", hog], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert spinner.stdout is not None and spinner.stdout.readline() == "ready\n"
    return spinner


def compute_while_starved(spinner: subprocess.Popen[str]) -> int:
    cpus = sorted(os.sched_getaffinity(0))
    assert spinner.stdin is not None
    spinner.stdin.write("go\n")
    spinner.stdin.flush()
    os.sched_setaffinity(0, {cpus[0]})
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    # one C call that releases the GIL (the agent's threads, and its dump, go on): the same stack throughout
    digest = hashlib.pbkdf2_hmac("sha256", b"starved", b"salt", 500_000)
    spinner.wait()
    return len(digest)


def main() -> None:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=600))
    rank = dist.get_rank()
    busy_rank = rank == int(os.environ.get("AGENT_BUSY_RANK", "0"))
    seconds = float(os.environ.get("AGENT_BUSY_SECONDS", "30"))
    starved = busy_rank and os.environ.get("AGENT_BUSY_MODE") == "starved"
    spinner = start_spinner(seconds) if starved else None
    t = torch.ones(64)
    for _ in range(2):
        dist.all_reduce(t)
        triage.step()
    if rank == 0:
        print("READY", flush=True)
    if busy_rank:
        if spinner is not None:
            compute_while_starved(spinner)
        elif os.environ.get("AGENT_BUSY_MODE") == "sleep":
            sleep_outside_collectives(seconds)
        else:
            with tempfile.TemporaryDirectory(prefix="triage-ckpt-") as tmp:
                written = save_checkpoint(os.path.join(tmp, "ckpt.bin"), seconds)
            print(f"rank {rank}: checkpoint written ({written >> 20} MiB)", flush=True)
    dist.barrier()
    print(f"rank {rank}: last line", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
