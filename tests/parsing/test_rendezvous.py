"""Init / store / rendezvous lines, as pasted in public bug reports."""

from __future__ import annotations

import pytest

from triage.parsing.rendezvous import InitWaitKind, parse_init_line


@pytest.mark.parametrize(("line", "kind", "rank", "world", "joined", "address"), [
    # facebookresearch/metaseq#52
    (("RuntimeError: Timed out initializing process group in store based barrier on rank: 4330, for key: "
     "store_based_barrier_key:522 (world_size=2048, worker_count=1792, timeout=0:30:00)"),
     InitWaitKind.BARRIER_TIMEOUT, 4330, 2048, 1792, None),
    # huggingface/accelerate#1401
    (("05/10/2023 23:07:45 - INFO - torch.distributed.distributed_c10d - Waiting in store based barrier to initialize "
     "process group for rank: 0, key: store_based_barrier_key:2 (world_size=8, worker_count=1, timeout=0:30:00)"),
     InitWaitKind.BARRIER_WAITING, 0, 8, 1, None),
    # OpenRLHF/OpenRLHF#1040
    ("torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/3 clients joined.",
     InitWaitKind.STORE_CLIENTS, None, 3, 1, None),
    (("torch.distributed.DistNetworkError: The client socket has timed out after 1800s while trying to connect to "
     "(10.0.0.1, 29500)."), InitWaitKind.CONNECT_TIMEOUT, None, None, None, "10.0.0.1:29500"),
    (("[W socket.cpp:601] [c10d] The client socket has failed to connect to [node-1]:29500 (errno: 111 - Connection "
     "refused)."), InitWaitKind.CONNECT_REFUSED, None, None, None, "node-1:29500"),
    # sgl-project/sglang#7478
    (("[c10d] waitForInput: socket SocketImpl(fd=100, addr=[node-0.company.net]:43590, remote=[node-0.company.net]:20000)"
     " timed out after 1800000ms"), InitWaitKind.STORE_WAIT_TIMEOUT, None, None, None, "node-0.company.net:20000"),
    # TCPStore get/wait timeouts (the store wait of a rank whose peer never set the key): rwth-i6/returnn#1621 and
    # the DistStoreError text of PyTorch 2.x
    ("RuntimeError: Socket Timeout", InitWaitKind.STORE_WAIT_TIMEOUT, None, None, None, None),
    ("torch.distributed.DistStoreError: wait timeout after 600000ms, keys: /default_pg//cuda//0",
     InitWaitKind.STORE_WAIT_TIMEOUT, None, None, None, None),
    ("RuntimeError: Timed out waiting 1800000ms for key: default_pg/0/1", InitWaitKind.STORE_WAIT_TIMEOUT, None, None,
     None, None),
])
def test_init_lines(line: str, kind: InitWaitKind, rank: int | None, world: int | None, joined: int | None,
                    address: str | None) -> None:
    wait = parse_init_line(line)
    assert wait is not None
    assert (wait.kind, wait.rank, wait.world_size, wait.joined, wait.address) == (kind, rank, world, joined, address)


def test_other_lines_are_not_init_waits() -> None:
    assert parse_init_line("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)") is None
    assert parse_init_line("") is None


def test_a_store_wait_timeout_says_how_long_it_waited() -> None:
    wait = parse_init_line("[rank3]: torch.distributed.DistStoreError: wait timeout after 600000ms, keys: /x")
    assert wait is not None and wait.timeout_s == 600.0 and wait.is_timeout


def test_unique_id_wait_in_older_pytorchs_spelling() -> None:
    # PyTorch up to 2.0 spelled it "retreiving" (round 8's class); the rank waited for the root's id
    from triage.parsing.rendezvous import InitWaitKind, parse_init_line
    line = ("RuntimeError: [3] is setting up NCCL communicator and retreiving ncclUniqueId from [2] via c10d "
            "key-value store by key '1', but store->get('1') got error: Socket Timeout\n")
    wait = parse_init_line(line)
    assert wait is not None and wait.kind is InitWaitKind.UNIQUE_ID_WAIT
    assert (wait.rank, wait.waits_for) == (3, 2)
