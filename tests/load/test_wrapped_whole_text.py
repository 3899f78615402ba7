"""The readers that take a log's text as a whole (the desync report and monitored_barrier's ranks, MPI's records)
read it as cleaned, not as pasted: a terminal's wrap that cut a rank list or a record is joined first
(found by tests/realworld/test_metamorphic.py: a monitored_barrier report wrapped at 80 columns lost its ranks)."""

from __future__ import annotations

from triage.load.logs.scan import LogScan
from triage.load.logs.text import scan_log_text

BARRIER = ("[rank0]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Rank 0 successfully "
           "reached monitoredBarrier, but Ranks 5, 6, 7 failed to pass monitoredBarrier in 600000 ms")
OTHER = "[rank0]: torch.distributed.DistBackendError: the barrier of this job could not complete on every rank"


def _lagging(text: str) -> list[tuple[int, ...]]:
    scan = LogScan()
    scan_log_text(text, "job.log", scan)
    return [lag.ranks for lag in scan.lagging]


def test_a_monitored_barrier_report_cut_by_a_terminal_names_its_ranks() -> None:
    as_pasted = _lagging(f"{BARRIER}\n{OTHER}\n")
    assert as_pasted == [(5, 6, 7)]
    for width in (80, 100):
        wrapped = "\n".join(line[i:i + width] for line in (BARRIER, OTHER, OTHER.replace("job", "run"))
                            for i in range(0, len(line), width))
        assert _lagging(wrapped) == as_pasted, width
