"""Session 57 (rev57 F8, on 74d360aa and 5645104c): condor_q -hold's row of 60 columns or more took the next line as
the rest of its hold reason whatever that line was, so a shell's next command joined the reason in the verdict ("...
due to memory usage 8123456.$ condor_history mkowalski -limit 2"). A line no terminal's cut leaves (a shell's prompt
and its command, condor_q's header or its "Total for query" count) now ends the reason
(triage.parsing.frameworks._CONDOR_Q_NOT_REST); a row a terminal cut at its width still reads with its rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log

_HEAD = " ID          OWNER          HELD_SINCE  HOLD_REASON\n"
_ROW = ("7310.4      bnguyen         5/22 16:41 Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage "
        "6553600.")


@pytest.mark.parametrize("after", ["$ condor_history bnguyen -limit 3\n", "[bnguyen@ap40 ~]$ cat err.7310.4\n",
                                   "bash-4.2$ condor_q -better-analyze 7310.4\n",
                                   "Total for query: 1 jobs; 0 completed, 0 removed, 0 idle, 0 running, 1 held\n"])
def test_the_next_command_is_no_rest_of_the_reason(after: str, tmp_path: Path) -> None:
    _code, got = report_log(_HEAD + _ROW + "\n" + after, tmp_path)
    summary = got["verdict"]["summary"]
    assert "due to memory usage 6553600." in summary and after.strip()[:12] not in summary, summary


def test_a_row_cut_at_the_terminals_width_keeps_its_rest(tmp_path: Path) -> None:
    text = _HEAD + _ROW[:80] + "\n" + _ROW[80:] + "\n$ condor_history bnguyen\n"
    _code, got = report_log(text, tmp_path)
    summary = got["verdict"]["summary"]
    assert "due to memory usage 6553600." in summary and "condor_history" not in summary, summary
