"""A snapshot as a rich table (ranks in the same state folded into one row) or as JSON."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rich.console import Group as RichGroup
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from triage.analysis.ranks import count_ranks, format_ranks
from triage.schemas import TOP_SCHEMA
from triage.top.snapshot import ALARMS, RankLine, Snapshot, TopState


@dataclass(frozen=True)
class Row:
    """Ranks that look the same: one state, one collective name, straggler or not."""

    ranks: tuple[int, ...]
    hosts: tuple[str, ...]
    state: TopState
    op: str | None
    straggler: bool
    steps: tuple[int, int] | None
    seqs: tuple[int, int] | None
    pg: str | None
    in_collective_s: float | None          # the longest in the row
    heartbeat_age_s: float | None          # the oldest in the row
    lag_ms: float | None                   # the largest in the row

    @property
    def alarm(self) -> bool:
        return self.state in ALARMS

    def to_json(self) -> dict[str, Any]:
        return {"ranks": format_ranks(self.ranks), "count": len(self.ranks), "hosts": list(self.hosts),
                "state": self.state.value, "op": self.op, "pg": self.pg, "straggler": self.straggler,
                "steps": list(self.steps) if self.steps else None, "seqs": list(self.seqs) if self.seqs else None,
                "max_in_collective_s": self.in_collective_s, "max_heartbeat_age_s": self.heartbeat_age_s,
                "max_lag_ms": self.lag_ms}


def _span(values: list[int]) -> tuple[int, int] | None:
    return (min(values), max(values)) if values else None


def _most(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(max(known), 3) if known else None


def fold(lines: tuple[RankLine, ...]) -> list[Row]:
    groups: dict[tuple[TopState, str | None, bool, str | None], list[RankLine]] = {}
    for line in lines:
        groups.setdefault((line.state, line.op, line.straggler, line.pg), []).append(line)
    rows = [Row(tuple(sorted(m.rank for m in members)), tuple(sorted({m.host for m in members})), state, op, slow,
                _span([m.step for m in members if m.step is not None]),
                _span([m.seq for m in members if m.seq is not None]), pg,
                _most([m.in_collective_s for m in members]), _most([m.heartbeat_age_s for m in members]),
                _most([m.lag_ms for m in members]))
            for (state, op, slow, pg), members in groups.items()]
    rows.sort(key=lambda row: (not row.alarm, not row.straggler, row.ranks[0]))
    return rows


def snapshot_json(snapshot: Snapshot) -> dict[str, Any]:
    return {"schema": TOP_SCHEMA, "run_dir": snapshot.run_dir, "time": snapshot.time,
            "lag_source": snapshot.lag_source, "stragglers": list(snapshot.stragglers),
            "rows": [row.to_json() for row in fold(snapshot.ranks)],
            "ranks": [line.to_json() for line in snapshot.ranks], "problems": list(snapshot.problems)}


def _range(span: tuple[int, int] | None) -> str:
    if span is None:
        return "-"
    return str(span[0]) if span[0] == span[1] else f"{span[0]}-{span[1]}"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}s"


def _hosts(hosts: tuple[str, ...]) -> str:
    return ",".join(hosts) if len(hosts) <= 2 else f"{hosts[0]},... ({len(hosts)} hosts)"


_STYLE = {TopState.STUCK: "bold red", TopState.NO_HEARTBEAT: "bold red", TopState.CRASHED: "bold red",
          TopState.EXITED_ERROR: "bold red"}


def snapshot_table(snapshot: Snapshot) -> RenderableType:
    hosts = {line.host for line in snapshot.ranks}
    head = Text(f"triage top {snapshot.run_dir}: {count_ranks(len(snapshot.ranks))} on {len(hosts)} "
                f"host{'s' if len(hosts) != 1 else ''} at {time.strftime('%H:%M:%S', time.gmtime(snapshot.time))} UTC; "
                f"arrival lag from {snapshot.lag_source or 'no Flight Recorder dump yet (triage dump RUN_DIR)'}")
    table = Table(show_edge=False, pad_edge=False)
    numerics = {line.rank: line.nonfinite_step for line in snapshot.ranks if line.numerics}
    for name in ("ranks", "host", "state", "step", "last collective", "in coll", "heartbeat", "lag"):
        table.add_column(name, no_wrap=name != "last collective")
    if numerics:
        table.add_column("NaN step", no_wrap=True)
    for row in fold(snapshot.ranks):
        style = _STYLE.get(row.state) or ("bold yellow" if row.straggler else None)
        state = row.state.value + (" STRAGGLER" if row.straggler else "")
        collective = "-" if row.seqs is None else (f"{row.op or '?'} pg {row.pg} seq {_range(row.seqs)}")
        lag = "-" if row.lag_ms is None else f"+{row.lag_ms:.1f} ms"
        cells = [format_ranks(row.ranks), _hosts(row.hosts), state, _range(row.steps), collective,
                 _seconds(row.in_collective_s), _seconds(row.heartbeat_age_s), lag]
        if numerics:
            cells.append(_range(_span([s for r in row.ranks if (s := numerics.get(r)) is not None])))
        table.add_row(*cells, style=style)
    parts: list[RenderableType] = [head, table]
    parts.extend(Text(line, style="yellow") for line in snapshot.stragglers)
    parts.extend(Text(f"skipped {problem}", style="dim") for problem in snapshot.problems[:5])
    return RichGroup(*parts)
