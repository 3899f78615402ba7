"""`pbpaste | triage report -`: a pasted log on standard input (a real triage process)."""

from __future__ import annotations

import json
import subprocess

from tests.helpers.processes import triage_cmd

LOG = ("[rank1]:[E1001 10:00:01.123456 1001 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation "
       "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600010 "
       "milliseconds before timing out.\n"
       "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
       "of 79.10 GiB of which 1.06 GiB is free.\n")


def test_report_reads_a_log_from_standard_input() -> None:
    result = subprocess.run(triage_cmd("report", "-", "--format", "json"), input=LOG, capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 1, result.stderr
    verdict = json.loads(result.stdout)["verdict"]
    assert (verdict["kind"], verdict["culprit_ranks"]) == ("exception", [0])


def test_nothing_recognisable_on_standard_input_is_a_one_line_error() -> None:
    result = subprocess.run(triage_cmd("report", "-"), input="hello\nworld\n", capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 2
    assert result.stderr.startswith("triage: error: <stdin>: no rank")
    assert "Traceback" not in result.stderr
