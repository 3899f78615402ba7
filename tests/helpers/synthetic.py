"""Synthetic Flight Recorder dumps (format 2.10) for scale tests and benchmarks.

Not used by the tool itself: ``bench/bench_report_scale.py`` and the tests write these files,
then run the real loader and analysis on them.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any


def fr_dump(rank: int, world: int, entries: int, culprit: int | None = None, mismatch_at: int | None = None,
            tp: int = 0) -> dict[str, Any]:
    """One rank's dump: ``entries`` all_reduce entries on the default group (plus, with ``tp``,
    every other entry on this rank's TP subgroup). ``culprit`` calls all_gather at
    ``mismatch_at`` (a collective seq of pg 0) and nothing after it; everyone else hangs there."""
    pg_config: dict[str, Any] = {"0": {"name": "0", "desc": "default_pg", "ranks": str(list(range(world)))}}
    if tp:
        base = rank - rank % tp
        pg_config["1"] = {"name": "1", "desc": "tp", "ranks": str(list(range(base, base + tp)))}
    out: list[dict[str, Any]] = []
    seqs = {"0": 0, "1": 0}
    stop = False
    for index in range(entries):
        pg = "1" if tp and index % 2 else "0"
        seqs[pg] += 1
        seq = seqs[pg]
        last = index == entries - 1
        op, size = "all_reduce", [[1024]]
        if pg == "0" and mismatch_at is not None and seq == mismatch_at:
            last = True
            if rank == culprit:
                op, size = "all_gather", [[8]]
            stop = True
        out.append({
            "record_id": index, "pg_id": int(pg), "process_group": [pg, "default_pg" if pg == "0" else "tp"],
            "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": index + 1, "profiling_name": f"nccl:{op}",
            "time_created_ns": 1_700_000_000_000_000_000 + index * 1000, "input_sizes": size,
            "input_dtypes": ["Float"], "output_sizes": size, "output_dtypes": ["Float"],
            "state": "started" if last else "completed", "time_discovered_started_ns": 0,
            "time_discovered_completed_ns": 0, "retired": not last, "timeout_ms": 600000, "is_p2p": False,
            "thread_name": "main", "thread_id": "1", "frames": [],
        })
        if stop:
            break
    return {"version": "2.10", "pg_config": pg_config, "pg_status": {}, "comm_lib_version": "2.21.5",
            "entries": out}


def write_dumps(root: Path, world: int, entries: int, culprit: int | None = None,
                mismatch_at: int | None = None, tp: int = 0, prefix: str = "nccl_trace_rank_",
                fmt: str = "json") -> Path:
    """Write one dump per rank as PREFIX<rank>, JSON or pickle (what torch's fr_trace reads)."""
    root.mkdir(parents=True, exist_ok=True)
    for rank in range(world):
        data = fr_dump(rank, world, entries, culprit, mismatch_at, tp)
        path = root / f"{prefix}{rank}"
        if fmt == "pickle":
            path.write_bytes(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
        else:
            path.write_text(json.dumps(data, separators=(",", ":")))
    return root
