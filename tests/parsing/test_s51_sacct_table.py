"""sacct's table is no terminal's wrap: sacct pads every row to its columns, so its header, its rule and its rows are
lines of one length, and its columns are right-aligned (their ends line up, not their starts) under a rule of dash runs
one space apart. Its default output had been joined into one line as a wrapped one, and a job's NODE_FAIL, TIMEOUT or
OUT_OF_MEMORY row was refused ("no rank, collective, watchdog, NCCL or error line found")."""

from __future__ import annotations

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.parsing.textclean import clean_text

_HEAD = ("       JobID    JobName  Partition    Account  AllocCPUS      State ExitCode ",
         "------------ ---------- ---------- ---------- ---------- ---------- -------- ")


def rows(job: str, state: str, code: str) -> tuple[str, ...]:
    return (*_HEAD, f"{job:<12} {'train':>10} {'gpu':>10} {'proj':>10} {64:>10} {state:>10} {code:>8} ",
            f"{job + '.batch':<12} {'batch':>10} {'':>10} {'proj':>10} {64:>10} {state:>10} {code:>8} ")


@pytest.mark.parametrize("state,code,kind,words", [
    ("NODE_FAIL", "0:0", "stopped", "a node failed"),
    ("TIMEOUT", "0:0", "stopped", "time limit"),
    ("OUT_OF_ME+", "0:125", "crash", "out of memory"),
    ("FAILED", "3:0", "exception", "code 3"),
])
def test_saccts_default_table_is_read_row_by_row(state: str, code: str, kind: str, words: str) -> None:
    table = rows("48213", state, code)
    assert len({len(row) for row in table}) == 1
    assert clean_text("\n".join(table)).lines == tuple(row.rstrip() for row in table)
    verdict = analyze(load_log_texts([("sacct.txt", "\n".join(table) + "\n")])).verdict
    assert verdict.kind.value == kind and words in verdict.summary, verdict.summary


def test_real_text_a_sacct_table_with_its_rule() -> None:
    # nebius/soperator#321's `sacct --format=JobID,JobName,AllocCPUS,MaxRSS,MaxVMSize,TotalCPU,State` (its shape:
    # a left-aligned JobID, right-aligned columns, a rule of dash runs, every row padded to one length)
    table = ("JobID           JobName  AllocCPUS     MaxRSS  MaxVMSize   TotalCPU      State ",
             "------------ ---------- ---------- ---------- ---------- ---------- ---------- ",
             "19.0              sleep          2      6040K          0  00:00.004  COMPLETED ",
             "20                sleep          2                        00:00.004     FAILED ",
             "20.0              sleep          2      5872K          0  00:00.004     FAILED ",
             "22                sleep          2                        00:00.004  COMPLETED ")
    assert clean_text("\n".join(table)).lines == tuple(row.rstrip() for row in table)
