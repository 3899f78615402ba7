"""The launcher roots in one home (fix55c item 7, behaviour unchanged; triage/load/logs/collateral.py since
session 57's split of finish.py): ``launcher_root`` is ``launcher_first`` where no failure line of the log is that
rank's, never a second copy of its list."""

from __future__ import annotations

import pytest

from tests.realworld.scoring import load_cases
from triage.load.logs import collateral
from triage.load.logs.scan import LogScan
from triage.load.logs.text import scan_log_text

_CASES = [c for c in load_cases() if "torchrun" in c.log.read_text(encoding="utf-8", errors="replace")
          or "srun: error:" in c.log.read_text(encoding="utf-8", errors="replace")][:40]


def _scan(text: str) -> LogScan:
    scan = LogScan()
    scan_log_text(text, "job.log", scan)
    return scan


@pytest.mark.parametrize("case", _CASES, ids=[c.name for c in _CASES])
def test_the_root_is_the_first_rank_no_failure_line_names(case) -> None:  # type: ignore[no-untyped-def]
    scan = _scan(case.log.read_text(encoding="utf-8", errors="replace"))
    first = collateral.launcher_first(scan)
    assert collateral.launcher_root(scan) == (first if first is not None and first not in scan.failures else None)

