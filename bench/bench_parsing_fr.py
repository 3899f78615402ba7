"""Flight Recorder parsing cost per entry: JSON and pickle (with 30-frame stacks) dumps of
2,000 entries in the 2.10 format, as torch 2.13 writes them. Prints figures, asserts nothing.

Usage: python bench/bench_parsing_fr.py [--entries 2000] [--files 20]
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from triage.parsing.flight_recorder.parse import load_fr_file


def make_dump(entries: int, frames: bool) -> dict[str, object]:
    stack = [{"name": f"fn{i}", "filename": f"/venv/lib/python3.11/site-packages/mod{i}.py", "line": i}
             for i in range(30)]
    out = []
    for i in range(entries):
        entry: dict[str, object] = {
            "record_id": i, "pg_id": 0, "process_group": ["0", "default_pg"], "collective_seq_id": i + 1,
            "p2p_seq_id": 0, "op_id": i + 1, "profiling_name": "nccl:all_reduce", "time_created_ns": 1 + i,
            "input_sizes": [[262144]], "input_dtypes": ["Float"], "output_sizes": [[262144]],
            "output_dtypes": ["Float"], "state": "completed", "time_discovered_started_ns": 1 + i,
            "time_discovered_completed_ns": 2 + i, "retired": True, "timeout_ms": 600000, "is_p2p": False,
            "thread_name": "pt_main_thread", "thread_id": "1",
        }
        if frames:
            entry["frames"] = stack
        out.append(entry)
    return {"version": "2.10", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
            "pg_status": {"0": {"last_enqueued_collective": entries, "last_started_collective": entries,
                                "last_completed_collective": entries}}, "entries": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--files", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_fr_") as tmp:
        root = Path(tmp)
        (root / "dump.json").write_text(json.dumps(make_dump(args.entries, frames=False)))
        (root / "dump.pkl").write_bytes(pickle.dumps(make_dump(args.entries, frames=True)))
        for name in ("dump.json", "dump.pkl"):
            path = root / name
            start = time.perf_counter()
            for _ in range(args.files):
                load_fr_file(path, 0)
            per_file = (time.perf_counter() - start) / args.files
            print(f"{name:9s} {path.stat().st_size / 1e6:6.2f} MB  {per_file * 1000:7.1f} ms/file  "
                  f"{per_file / args.entries * 1e6:6.2f} us/entry  "
                  f"(x1024 ranks: {per_file * 1024:5.1f} s on one core)")


if __name__ == "__main__":
    main()
