"""Every rank's ``numerics.json`` of a run directory (``triage launch --numerics``)."""

from __future__ import annotations

import json
from pathlib import Path

from triage.layout import RunPaths
from triage.model.numerics import RankNumerics
from triage.parsing.numerics import parse_numerics

MAX_BYTES = 4 * 1024 * 1024


def load_numerics(root: Path, skipped: list[str]) -> tuple[RankNumerics, ...]:
    """The records of every host's ranks; unreadable ones are named in ``skipped``."""
    out: list[RankNumerics] = []
    for host in RunPaths(root).hosts():
        for rank in host.ranks():
            path = host.rank(rank).numerics
            if not path.is_file():
                continue
            try:
                if path.stat().st_size > MAX_BYTES:
                    raise ValueError(f"larger than {MAX_BYTES} bytes")
                data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
                out.append(parse_numerics(data, host.host, str(path.relative_to(root))))
            except (OSError, ValueError) as exc:
                skipped.append(f"{path}: unreadable numerics record ({exc})")
    return tuple(sorted(out, key=lambda r: r.rank))
