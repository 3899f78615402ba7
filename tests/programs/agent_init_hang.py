"""One rank never reaches ``init_process_group`` while the others wait in it.

Run under ``triage launch -- torchrun --nproc-per-node N``. Rank AGENT_INIT_RANK (default 0)
first runs ``load_before_init`` for AGENT_INIT_SECONDS (default 300): it sleeps
(AGENT_INIT_MODE=sleep, the default: blocked) or computes (AGENT_INIT_MODE=busy: a slow start-up).
The other ranks of this node first wait for each other (each binds an abstract unix socket named
after the store port and its rank and connects to its peers' until all answer: nothing is left on
disk), so that on a loaded machine one of them still importing torch is not taken for a rank that
never reaches init; then they print READY and call ``init_process_group`` together. Every rank that
gets through does one all_reduce and prints ``rank N: last line``.
"""

import datetime
import os
import socket
import time

import torch
import torch.distributed as dist


def load_before_init(seconds: float, mode: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if mode == "busy":
            sum(i * i for i in range(10000))
        else:
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))


_HELD: list[socket.socket] = []    # this rank's listening socket, open for the process's life


def gather_node_peers(rank: int, culprit: int) -> None:
    """Wait until every other non-culprit rank of this node has imported torch and got here."""
    local = int(os.environ.get("LOCAL_RANK", "0"))
    first = rank - local
    peers = [first + i for i in range(int(os.environ.get("LOCAL_WORLD_SIZE", "1"))) if first + i != culprit]
    tag = f"agent-init-hang-{os.environ.get('MASTER_PORT', '0')}-{first}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(f"\0{tag}-{rank}")
    listener.listen(len(peers))
    _HELD.append(listener)
    waiting = [p for p in peers if p != rank]
    while waiting:
        for peer in list(waiting):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                try:
                    probe.connect(f"\0{tag}-{peer}")
                except OSError:
                    continue
            waiting.remove(peer)
        if waiting:
            time.sleep(0.05)


def main() -> None:
    rank = int(os.environ["RANK"])
    culprit = int(os.environ.get("AGENT_INIT_RANK", "0"))
    if rank == culprit:
        load_before_init(float(os.environ.get("AGENT_INIT_SECONDS", "300")), os.environ.get("AGENT_INIT_MODE", "sleep"))
    else:
        gather_node_peers(rank, culprit)
        print(f"READY rank {rank}: entering init_process_group at {time.time():.3f}", flush=True)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=600))
    t = torch.ones(8)
    dist.all_reduce(t)
    print(f"rank {rank}: last line", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
