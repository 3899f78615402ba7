"""The program every rank of `triage check` runs (started by the user's launcher, e.g. torchrun).

Standalone on purpose: it imports only the standard library and torch, never the rest of triage,
so it runs under whatever Python the launcher uses. Usage (triage appends it to the launcher)::

    worker.py --check-dir DIR --deadline EPOCH_SECONDS

Each rank writes ``DIR/ranks/rank-<RANK>.json`` after every step (atomically), so a rank that is
stopped half-way still leaves what it found. Steps, each bounded by the deadline:

1. store: resolve MASTER_ADDR, open a TCP connection to MASTER_ADDR:MASTER_PORT, join the store;
2. links: one rank per node listens; every node connects to every other node's listener (plain
   TCP, before any process group exists, so a broken link is named instead of hanging init);
3. collectives per backend (gloo; NCCL when there are GPUs): init, barrier, all_reduce, all_gather;
4. ring: every rank sends to rank+1 and receives from rank-1;
5. bandwidth: all_reduce bus bandwidth (nccl-tests formula: algbw * 2(n-1)/n);
   (steps 3-5 are in worker_torch.py, beside this file)
6. facts: interfaces, *_SOCKET_IFNAME / NCCL_* / GLOO_* variables, GPUs, clock offset from rank 0.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from typing import Any

FORMAT = "triage.check/1"
KEY_PREFIX = "triage-check"
PROBE_PARALLEL = 64
_lock = threading.Lock()


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


class RankRecord:
    """The rank's result file, rewritten after every step."""

    def __init__(self, check_dir: str, deadline: float) -> None:
        self.rank = _env_int("RANK", 0)
        self.path = os.path.join(check_dir, "ranks", f"rank-{self.rank}.json")
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        self.data: dict[str, Any] = {
            "format": FORMAT, "rank": self.rank, "local_rank": _env_int("LOCAL_RANK", 0),
            "world_size": _env_int("WORLD_SIZE", 1), "local_world_size": _env_int("LOCAL_WORLD_SIZE", 1),
            "node_rank": _env_int("GROUP_RANK", 0), "nnodes": _env_int("GROUP_WORLD_SIZE", 1),
            "host": socket.gethostname().split(".")[0], "pid": os.getpid(), "started": time.time(),
            "deadline": deadline, "step": "start", "finished": False, "steps": {},
        }

    def step(self, name: str) -> None:
        with _lock:
            self.data["step"] = name
            self.data.setdefault("timeline", {})[name] = round(time.time(), 4)
        self.save()

    def put(self, name: str, value: dict[str, Any]) -> None:
        with _lock:
            self.data["steps"][name] = value
        self.save()

    def save(self) -> None:
        with _lock:
            text = json.dumps(self.data, indent=1, sort_keys=True, default=str)
            fd, tmp = tempfile.mkstemp(prefix=".rank-", dir=os.path.dirname(self.path))
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
            os.replace(tmp, self.path)


def describe_error(error: BaseException) -> str:
    """A short, stable description of a network error (used verbatim in verdicts)."""
    if isinstance(error, socket.gaierror):
        return f"cannot resolve the name ({error.strerror})"
    if isinstance(error, (socket.timeout, TimeoutError)):
        return "connection timed out"
    if isinstance(error, OSError) and error.errno is not None:
        known = {errno.ECONNREFUSED: "connection refused", errno.EHOSTUNREACH: "no route to host",
                 errno.ENETUNREACH: "network unreachable", errno.ECONNRESET: "connection reset",
                 errno.ETIMEDOUT: "connection timed out"}
        return known.get(error.errno, error.strerror or str(error))
    text = str(error).strip().splitlines()
    first = text[0] if text else type(error).__name__
    if "timed out" in first.lower() or "timeout" in first.lower():
        return f"timed out ({first[:200]})"
    return f"{type(error).__name__}: {first[:200]}"


def interface_of(address: str) -> str | None:
    """The network interface that holds ``address`` on this host."""
    with contextlib.suppress(Exception):
        import psutil

        for name, addrs in psutil.net_if_addrs().items():
            if any(a.address == address for a in addrs):
                return str(name)
    return None


def _remaining(deadline: float, cap: float | None = None, floor: float = 0.5) -> float:
    left = max(floor, deadline - time.time())
    return min(left, cap) if cap is not None else left


# ---------------------------------------------------------------------------- step 1: store

def step_store(record: RankRecord, deadline: float) -> tuple[Any, dict[str, Any]]:
    from torch.distributed import PrefixStore, TCPStore  # type: ignore[attr-defined]

    host = os.environ.get("MASTER_ADDR", "127.0.0.1")
    port = _env_int("MASTER_PORT", 29500)
    result: dict[str, Any] = {"ok": False, "master": f"{host}:{port}"}
    record.put("store", result)
    began = time.monotonic()
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        result["resolve_s"] = round(time.monotonic() - began, 4)
        result["resolved"] = str(infos[0][4][0])
        began = time.monotonic()
        with socket.create_connection((result["resolved"], port), timeout=_remaining(deadline, 10)) as sock:
            result["connect_s"] = round(time.monotonic() - began, 4)
            local = str(sock.getsockname()[0])
        result["local_address"] = local
        result["interface"] = interface_of(local)
        began = time.monotonic()
        store = TCPStore(host, port, is_master=False, timeout=timedelta(seconds=_remaining(deadline, 30)),
                         wait_for_workers=False)
        result["join_s"] = round(time.monotonic() - began, 4)
    except Exception as error:
        result["error"] = describe_error(error)
        record.put("store", result)
        raise
    result["ok"] = True
    record.put("store", result)
    run = os.environ.get("TORCHELASTIC_RUN_ID", "run")
    attempt = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    return PrefixStore(f"{KEY_PREFIX}/{run}/{attempt}/", store), result


# ---------------------------------------------------------------------------- step 2: links

def _serve(listener: socket.socket, stop: threading.Event) -> None:
    listener.settimeout(0.2)
    while not stop.is_set():
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        except OSError:
            return
        with conn:
            conn.settimeout(2)
            with contextlib.suppress(OSError):
                data = conn.recv(64)
                conn.sendall(data)


def _probe(peer: dict[str, Any], timeout: float) -> dict[str, Any]:
    out: dict[str, Any] = {"node_rank": peer["node_rank"], "host": peer["host"],
                           "address": f"{peer['address']}:{peer['port']}", "ok": False}
    began = time.monotonic()
    try:
        with socket.create_connection((peer["address"], int(peer["port"])), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(b"triage-check\n")
            if sock.recv(64) != b"triage-check\n":
                raise ConnectionResetError(errno.ECONNRESET, "no echo")
        out["ok"] = True
    except Exception as error:  # noqa: BLE001
        out["error"] = describe_error(error)
    out["seconds"] = round(time.monotonic() - began, 4)
    return out


def _wait_keys(store: Any, keys: list[str], deadline: float) -> list[str]:
    """The keys still missing at the deadline (empty when all arrived). Waits on the store's side,
    in slices of a second so that signals are still handled."""
    while True:
        try:
            store.wait(keys, timedelta(seconds=max(0.05, min(1.0, deadline - time.time()))))
            return []
        except Exception:  # noqa: BLE001 - a timeout: look again until the deadline
            if time.time() >= deadline:
                return [k for k in keys if not store.check([k])]


def _probe_all(peers: list[dict[str, Any]], timeout: float) -> list[dict[str, Any]]:
    """Probe every peer, PROBE_PARALLEL at a time (a node that reaches no one costs N/64 timeouts)."""
    from concurrent.futures import ThreadPoolExecutor

    if not peers:
        return []
    with ThreadPoolExecutor(max_workers=min(PROBE_PARALLEL, len(peers))) as pool:
        return list(pool.map(lambda peer: _probe(peer, timeout), peers))


def step_links(record: RankRecord, store: Any, local: str, deadline: float) -> bool:
    """Every node's first rank probes every other node over plain TCP. True when all links work.

    Leaders publish ``node/<n>`` (their listening address), probe every other node, add their
    failures to ``links_failed`` and count themselves in ``links_done``; the last one publishes
    ``links_all`` (the total), which every rank waits for: one key per rank, whatever the size.
    """
    node_rank, nnodes = record.data["node_rank"], record.data["nnodes"]
    leader = record.data["local_rank"] == 0
    result: dict[str, Any] = {"ok": False, "leader": leader}
    record.put("links", result)
    listener: socket.socket | None = None
    stop = threading.Event()
    wait_until = deadline - 1.0
    probe_timeout = max(1.0, min(5.0, (deadline - time.time()) / 4))
    missing: list[str] = []
    try:
        if leader:
            advertised = local
            if local.startswith("127.") and nnodes > 1:
                with contextlib.suppress(OSError):
                    advertised = socket.gethostbyname(socket.gethostname())
            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("0.0.0.0", 0))  # noqa: S104 (the link probe must be reachable from every node)
            listener.listen(128)
            threading.Thread(target=_serve, args=(listener, stop), daemon=True).start()
            me = {"node_rank": node_rank, "host": record.data["host"], "address": advertised,
                  "port": listener.getsockname()[1]}
            result["listen"] = f"{advertised}:{me['port']}"
            store.set(f"node/{node_rank}", json.dumps(me))
            node_keys = [f"node/{n}" for n in range(nnodes)]
            missing = _wait_keys(store, node_keys, wait_until)
            result["nodes_missing"] = [int(k.split("/")[1]) for k in missing]
            others = [k for k in node_keys if k not in missing and k != f"node/{node_rank}"]
            peers = [json.loads(store.get(k)) for k in others]
            probes = _probe_all(peers, probe_timeout)
            result["probes"] = sorted(probes, key=lambda p: int(p["node_rank"]))
            record.put("links", result)
            store.add("links_failed", sum(1 for p in probes if not p["ok"]) + len(missing))
            if store.add("links_done", 1) == nnodes:
                store.set("links_all", str(store.add("links_failed", 0)))
        late = _wait_keys(store, ["links_all"], wait_until)
        failed = int(store.get("links_all")) if not late else None
        result["failed_links"] = failed
        result["ok"] = not missing and failed == 0
        if late:
            result["error"] = "not every node finished its link probes before the deadline"
    finally:
        stop.set()
        if listener is not None:
            listener.close()
        record.put("links", result)
    return bool(result["ok"])


# ---------------------------------------------------------------------------- step 6: facts

def local_facts(record: RankRecord) -> None:
    facts: dict[str, Any] = record.data["steps"].setdefault("facts", {})
    interfaces: dict[str, list[str]] = {}
    with contextlib.suppress(Exception):
        import psutil

        stats = psutil.net_if_stats()
        for name, addrs in psutil.net_if_addrs().items():
            up = stats[name].isup if name in stats else None
            interfaces[name] = [a.address for a in addrs if a.family in (socket.AF_INET, socket.AF_INET6)]
            if up is False:
                interfaces[name].append("(down)")
    facts["interfaces"] = interfaces
    facts["env"] = {k: v for k, v in sorted(os.environ.items())
                    if k.endswith("_SOCKET_IFNAME") or k.startswith(("NCCL_", "GLOO_"))}
    with contextlib.suppress(Exception):
        import torch

        facts["gpus"] = int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    if shutil.which("nvidia-smi"):
        with contextlib.suppress(Exception):
            listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10, check=False)
            facts["nvidia_smi"] = listed.stdout.strip().splitlines()
    record.save()


# ---------------------------------------------------------------------------- main

def _watchdog(record: RankRecord, deadline: float) -> None:
    def expire() -> None:
        record.data["timed_out"] = True
        record.data.setdefault("errors", {})["deadline"] = f"still in step {record.data['step']!r} at the deadline"
        with contextlib.suppress(Exception):
            record.save()
        os._exit(3)

    timer = threading.Timer(max(0.1, deadline - time.time()), expire)
    timer.daemon = True
    timer.start()


def _on_sigterm(record: RankRecord) -> None:
    """The launcher stops the other ranks when one fails: mark them as stopped, not as failed."""
    def stopped(signum: int, frame: object) -> None:
        record.data["terminated"] = f"signal {signum} in step {record.data['step']!r}"
        with contextlib.suppress(Exception):
            record.save()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stopped)


def _torch_steps() -> Any:
    """Steps 3-5 (worker_torch.py, beside this file). Run as a script, this file's directory is
    sys.path[0], so they load under whatever Python the launcher uses, without triage installed."""
    if __package__:
        return importlib.import_module(f"{__package__}.worker_torch")
    return importlib.import_module("worker_torch")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="triage check worker (started by `triage check`)")
    parser.add_argument("--check-dir", required=True)
    parser.add_argument("--deadline", type=float, required=True)
    args = parser.parse_args(argv)
    deadline = float(args.deadline)
    record = RankRecord(args.check_dir, deadline)
    record.save()
    _watchdog(record, deadline)
    _on_sigterm(record)
    local_facts(record)
    record.step("store")
    try:
        store, joined = step_store(record, deadline)
    except Exception:  # noqa: BLE001 - already recorded
        record.data["finished"] = True
        record.save()
        return 1
    record.step("links")
    links_ok = step_links(record, store, str(joined["local_address"]), deadline)
    ok = links_ok
    if links_ok:
        ok = bool(_torch_steps().collectives(record, store, deadline, describe_error))
    else:
        record.data["skipped"] = "collectives skipped: a link between nodes failed or a node never arrived"
    record.data["finished"] = True
    record.data["ended"] = time.time()
    record.step("done")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
