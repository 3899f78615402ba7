"""Steps 3-5 of the `triage check` worker: collectives, ring and bus bandwidth, per backend.

Loaded by worker.py from its own directory: like it, this imports only the standard library and
torch. ``record`` is worker.RankRecord (data, put, step, save); ``describe`` is worker.describe_error.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

BANDWIDTH_BYTES = 4 << 20
BANDWIDTH_ITERATIONS = 5
RING_BYTES = 1 << 20


def _remaining(deadline: float, cap: float, floor: float = 0.5) -> float:
    return min(max(floor, deadline - time.time()), cap)


def _timed(action: Any) -> float:
    began = time.monotonic()
    action()
    return round(time.monotonic() - began, 4)


def step_collectives(backend: str, group: Any, device: str, record: Any) -> dict[str, Any]:
    import torch
    import torch.distributed as dist

    rank, world = record.data["rank"], record.data["world_size"]
    out: dict[str, Any] = {"ok": False}
    record.put(f"collectives/{backend}", out)
    record.step(f"{backend} barrier")
    out["barrier_s"] = _timed(lambda: dist.barrier(group=group))
    record.step(f"{backend} all_reduce")
    total = torch.tensor([float(rank + 1)], device=device)
    out["all_reduce_s"] = _timed(lambda: dist.all_reduce(total, group=group))
    if int(total.item()) != world * (world + 1) // 2:
        raise RuntimeError(f"all_reduce gave {total.item()}, expected {world * (world + 1) // 2}")
    record.step(f"{backend} all_gather")
    gathered = [torch.zeros(1, device=device) for _ in range(world)]
    out["all_gather_s"] = _timed(lambda: dist.all_gather(gathered, torch.tensor([float(rank)], device=device),
                                                         group=group))
    if [int(t.item()) for t in gathered] != list(range(world)):
        raise RuntimeError("all_gather returned the wrong values")
    out["ok"] = True
    record.put(f"collectives/{backend}", out)
    return out


def step_ring(backend: str, group: Any, device: str, record: Any, timeout: float) -> None:
    import torch
    import torch.distributed as dist

    rank, world = record.data["rank"], record.data["world_size"]
    out: dict[str, Any] = {"ok": False, "send_to": (rank + 1) % world, "recv_from": (rank - 1) % world}
    record.put(f"ring/{backend}", out)
    record.step(f"{backend} ring")
    payload = torch.full((RING_BYTES // 4,), float(rank), device=device)
    inbox = torch.zeros(RING_BYTES // 4, device=device)
    began = time.monotonic()
    works = [dist.isend(payload, out["send_to"], group=group), dist.irecv(inbox, out["recv_from"], group=group)]
    for work in works:
        if work is not None:
            work.wait(timedelta(seconds=timeout)) if backend == "gloo" else work.wait()
    seconds = time.monotonic() - began
    if int(inbox[0].item()) != out["recv_from"]:
        raise RuntimeError("ring receive gave the wrong values")
    out.update(ok=True, seconds=round(seconds, 4), mb_per_s=round(RING_BYTES / max(seconds, 1e-9) / 1e6, 1))
    record.put(f"ring/{backend}", out)


def step_bandwidth(backend: str, group: Any, device: str, record: Any) -> None:
    import torch
    import torch.distributed as dist

    world = record.data["world_size"]
    record.step(f"{backend} bandwidth")
    data = torch.ones(BANDWIDTH_BYTES // 4, device=device)
    dist.all_reduce(data, group=group)                     # warm-up
    dist.barrier(group=group)
    began = time.monotonic()
    for _ in range(BANDWIDTH_ITERATIONS):
        dist.all_reduce(data, group=group)
    if device != "cpu":
        torch.cuda.synchronize()
    per_op = (time.monotonic() - began) / BANDWIDTH_ITERATIONS
    algbw = BANDWIDTH_BYTES / per_op / 1e9
    record.put(f"bandwidth/{backend}", {"bytes": BANDWIDTH_BYTES, "iterations": BANDWIDTH_ITERATIONS,
                                        "seconds_per_op": round(per_op, 6), "algbw_gbps": round(algbw, 4),
                                        "busbw_gbps": round(algbw * 2 * (world - 1) / world, 4)})


def clock_offset(record: Any) -> None:
    import torch
    import torch.distributed as dist

    world = record.data["world_size"]
    dist.barrier()
    now = torch.tensor([time.time()], dtype=torch.float64)
    clocks = [torch.zeros(1, dtype=torch.float64) for _ in range(world)]
    dist.all_gather(clocks, now)
    record.data["steps"].setdefault("facts", {})["clock_offset_s"] = round(float(now.item() - clocks[0].item()), 4)
    record.save()


def run_backend(backend: str, group: Any, device: str, record: Any, deadline: float,
                describe: Callable[[BaseException], str]) -> bool:
    try:
        step_collectives(backend, group, device, record)
        if record.data["world_size"] > 1:
            step_ring(backend, group, device, record, _remaining(deadline, 30))
            step_bandwidth(backend, group, device, record)
    except Exception as error:  # noqa: BLE001 - recorded per backend, the other steps go on
        record.data["steps"].setdefault(f"collectives/{backend}", {})
        record.data["errors"] = {**record.data.get("errors", {}),
                                 backend: f"{record.data['step']}: {describe(error)}"}
        record.save()
        return False
    return True


def collectives(record: Any, store: Any, deadline: float, describe: Callable[[BaseException], str]) -> bool:
    import torch
    import torch.distributed as dist
    from torch.distributed import PrefixStore  # type: ignore[attr-defined]

    record.step("gloo init")
    pg_timeout = timedelta(seconds=_remaining(deadline, 30, floor=1.0) / 2)
    began = time.monotonic()
    try:
        dist.init_process_group("gloo", store=PrefixStore("pg", store), rank=record.rank,
                                world_size=record.data["world_size"], timeout=pg_timeout)
    except Exception as error:  # noqa: BLE001
        record.data["errors"] = {"gloo": f"gloo init: {describe(error)}"}
        record.save()
        return False
    record.put("init/gloo", {"ok": True, "seconds": round(time.monotonic() - began, 4)})
    ok = run_backend("gloo", None, "cpu", record, deadline, describe)
    if ok:
        with contextlib.suppress(Exception):
            clock_offset(record)
    if torch.cuda.is_available() and torch.cuda.device_count() > 0:
        record.step("nccl init")
        try:
            torch.cuda.set_device(record.data["local_rank"] % torch.cuda.device_count())
            group = dist.new_group(backend="nccl", timeout=pg_timeout)
        except Exception as error:  # noqa: BLE001
            record.data.setdefault("errors", {})["nccl"] = f"nccl init: {describe(error)}"
            record.save()
            return False
        ok = run_backend("nccl", group, "cuda", record, deadline, describe) and ok
    with contextlib.suppress(Exception):
        dist.destroy_process_group()
    return ok
