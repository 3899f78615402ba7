"""`triage top` at scale: the CPU one refresh costs (read every rank's files, fold, render the
table) on a constructed run directory. Prints figures; asserts nothing.

The run directory has --ranks ranks, 8 per host, each with worker.json and a heartbeat that
holds --entries Flight Recorder entries enqueued and not completed (the worker's heartbeat carries
only those: at most a few, and none between collectives; the default 1 is every rank caught inside
a collective, the most work for top); one rank is stuck in a collective, one host's ranks are
silent (no heartbeat for a minute), one rank has crashed. The first snapshot also computes the
arrival lags from the dumps, when there are any (none here: the lag cache is what later refreshes
reuse); refreshes are timed with the cache, as the live view runs them: once with nothing changed
since the last refresh (a refresh rereads only files whose lstat changed) and once with every
rank's heartbeat rewritten in between (atomically, as the worker does: the live case, where every
heartbeat is newer than the last refresh).

Usage: python bench/bench_top.py [--ranks 4096] [--entries 1] [--refreshes 5]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console

from triage.top.render import fold, snapshot_table
from triage.top.snapshot import take_snapshot


def _beat(now: float, age: float, seq: int, entries: int, stuck: bool = False) -> dict[str, Any]:
    ring = [{"collective_seq_id": s, "op_id": s, "pg_id": 0, "process_group": ["0", "default_pg"],
             "profiling_name": "nccl:all_reduce", "input_sizes": [[1024]], "input_dtypes": ["Float"],
             "output_sizes": [[1024]], "state": "scheduled",
             "time_created_ns": int((now - 100) * 1e9), "is_p2p": False}
            for s in range(seq - entries + 1, seq + 1)]
    return {"time": now - age, "step": 100, "progress": {"0": {"enqueued": seq, "completed": seq - min(entries, 1)}},
            "fr_state": "ok", "in_flight_since": now - (90.0 if stuck else 0.2) if entries else None,
            "fr": {"version": "2.10", "pg_config": {}, "pg_status": {}, "entries": ring}}


def _write_beat(rdir: Path, beat: dict[str, Any]) -> None:
    tmp = rdir / ".heartbeat.json.tmp"
    tmp.write_text(json.dumps(beat))
    os.replace(tmp, rdir / "heartbeat.json")


def build(run: Path, ranks: int, entries: int, now: float) -> None:
    (run / "run.json").parent.mkdir(parents=True, exist_ok=True)
    (run / "run.json").write_text(json.dumps({"layout": "triage.run/1"}))
    for rank in range(ranks):
        host = f"node{rank // 8:05d}"
        rdir = run / host / "ranks" / str(rank)
        rdir.mkdir(parents=True)
        (rdir / "worker.json").write_text(json.dumps({"rank": rank, "host": host, "pid": 1000 + rank}))
        beat_all(run, ranks, entries, now, only=rank)
        if rank == ranks - 1:
            (rdir / "exit.json").write_text(json.dumps({"how": "exception", "exit_code": 1,
                                                        "exception": {"type": "ValueError"}}))


def beat_all(run: Path, ranks: int, entries: int, now: float, only: int | None = None) -> None:
    """Every rank's heartbeat (or rank ``only``'s) rewritten."""
    for rank in range(ranks) if only is None else (only,):
        silent = rank // 8 == 3
        beat = _beat(now, 60.0 if silent else 0.5, 300 + (rank == ranks // 3), entries, stuck=rank == ranks // 3)
        _write_beat(run / f"node{rank // 8:05d}" / "ranks" / str(rank), beat)


def refresh(run: Path, now: float, cache: Any) -> tuple[float, float, int, Any]:
    """CPU seconds of one snapshot and of folding + rendering it; the number of rows."""
    start = time.process_time()
    snapshot, cache = take_snapshot(run, now, cache=cache)
    read = time.process_time() - start
    start = time.process_time()
    rows = fold(snapshot.ranks)
    Console(file=io.StringIO(), width=160).print(snapshot_table(snapshot))
    return read, time.process_time() - start, len(rows), cache


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=4096)
    parser.add_argument("--entries", type=int, default=1)
    parser.add_argument("--refreshes", type=int, default=5)
    args = parser.parse_args()
    now = time.time()
    run = Path(tempfile.mkdtemp(prefix="triage-bench-top-"))
    try:
        build(run, args.ranks, args.entries, now)
        read, render, rows, cache = refresh(run, now, None)
        print(f"{args.ranks} ranks ({args.ranks // 8} hosts), {args.entries} in-flight FR entries per heartbeat: "
              f"{rows} rows")
        print(f"  first snapshot: read {read:.3f} s CPU, fold + render {render:.3f} s CPU")
        for label, rewrite in (("nothing changed", False), ("every heartbeat rewritten", True)):
            times = []
            for _ in range(args.refreshes):
                if rewrite:
                    beat_all(run, args.ranks, args.entries, now)
                read, render, rows, cache = refresh(run, now, cache)
                times.append((read + render, read, render))
            total, read, render = min(times)
            print(f"  refresh, {label} (best of {args.refreshes}): {total:.3f} s CPU = read {read:.3f} + fold and "
                  f"render {render:.3f} ({rows} rows)")
    finally:
        shutil.rmtree(run, ignore_errors=True)


if __name__ == "__main__":
    main()
