"""`triage top` shows the first NaN/Inf step per rank when the numerics watch runs, and no such
column when it does not."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from triage.top.render import snapshot_table
from triage.top.snapshot import take_snapshot

NOW = 1_795_000_000.0


def rank(run: Path, r: int, first_step: int | None, watched: bool = True) -> None:
    rdir = run / "node0" / "ranks" / str(r)
    rdir.mkdir(parents=True)
    (rdir / "worker.json").write_text(json.dumps({"rank": r, "host": "node0", "pid": 100 + r}))
    (rdir / "heartbeat.json").write_text(json.dumps({"time": NOW - 0.5, "step": 7, "progress": {}}))
    if watched:
        first = None if first_step is None else {"where": "forward_output", "module": "act", "step": first_step}
        (rdir / "numerics.json").write_text(json.dumps({"schema": "triage.numerics/1", "rank": r, "first": first}))


def table(run: Path) -> str:
    snapshot, _cache = take_snapshot(run, NOW)
    out = io.StringIO()
    Console(file=out, width=140, color_system=None, force_terminal=False).print(snapshot_table(snapshot))
    return out.getvalue()


def test_the_first_nonfinite_step_column(tmp_path: Path) -> None:
    rank(tmp_path, 0, None)
    rank(tmp_path, 1, 3)
    rank(tmp_path, 2, 4)
    text = table(tmp_path)
    header = next(line for line in text.splitlines() if line.startswith("ranks"))
    assert header.rstrip().endswith("NaN step")
    row = next(line for line in text.splitlines() if line.startswith("0-2"))
    assert row.rstrip().endswith("3-4")
    snapshot, _cache = take_snapshot(tmp_path, NOW)
    assert [(line.numerics, line.nonfinite_step) for line in snapshot.ranks] == [(True, None), (True, 3), (True, 4)]


def test_no_column_without_the_watch(tmp_path: Path) -> None:
    rank(tmp_path, 0, None, watched=False)
    assert "NaN step" not in table(tmp_path)
