"""Session 57 (fix57c item 4): HTCondor's hold of a job over its memory by a periodic hold policy ("Job in status 2 put
on hold by SYSTEM_PERIODIC_HOLD due to memory usage N.") is one story wherever it is read: condor_q -hold's list read it
as a kill for memory (crash, SIGKILL), the job event log's 012 event with the policy's hold code (26, 3) as a stop
from outside (the code's meaning alone). Now the reason's words rule in both (triage.parsing.frameworks
_condor_other_ends): a memory hold is the kill for memory; a policy's hold for another reason stays a stop."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report

_SUBMIT = ("000 (7310.002.000) 2026-02-11 08:00:00 Job submitted from host: <192.168.4.2:9618?addrs=192.168.4.2-9618>",
           "...", "001 (7310.002.000) 2026-02-11 08:00:41 Job executing on host: <192.168.4.19:9618>", "...")


@pytest.mark.parametrize(("why", "code"), [
    ("Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage 5120000.", 26),
    ("The job's periodic hold policy: memory usage exceeded request_memory", 3),
    ("Error from slot1_4@node19: Job has gone over memory limit of 8192 megabytes.", 21),
])
def test_a_policys_hold_over_memory_is_the_kill_for_memory(why: str, code: int) -> None:
    result = report(*_SUBMIT, "012 (7310.002.000) 2026-02-11 09:12:03 Job was held.", f"\t{why}",
                    f"\tCode {code} Subcode 0", "...")
    assert result.verdict.kind.value == "crash" and "SIGKILL" in result.verdict.summary, result.verdict.summary
    assert "out of memory" in result.verdict.summary


def test_condor_q_and_the_event_log_agree() -> None:
    why = "Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage 5120000."
    listed = report(" ID         OWNER          HELD_SINCE  HOLD_REASON", f"7310.2   bob           2/11 09:12 {why}")
    logged = report(*_SUBMIT, "012 (7310.002.000) 2026-02-11 09:12:03 Job was held.", f"\t{why}", "\tCode 26 Subcode 0",
                    "...")
    assert listed.verdict.kind == logged.verdict.kind
    assert ("SIGKILL" in listed.verdict.summary) == ("SIGKILL" in logged.verdict.summary)


def test_a_policys_hold_for_another_reason_stays_a_stop() -> None:
    result = report(*_SUBMIT, "012 (7310.002.000) 2026-02-11 09:12:03 Job was held.",
                    "\tJob in status 2 put on hold by SYSTEM_PERIODIC_HOLD: job ran longer than 48 hours",
                    "\tCode 26 Subcode 0", "...")
    assert result.verdict.kind.value == "stopped", result.verdict.summary
