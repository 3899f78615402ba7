"""Session 58 (fix58b, rev57's F10): a C assert line in a mixed C and Fortran program, then Intel Fortran's runtime's
record of the same abort ("forrtl: error (76): Abort trap signal", its SIGABRT handler's message): the verdict quoted
forrtl's line alone, leaving out what failed. The assert is now the failure and forrtl's line how the process ended,
as the shell's "Aborted (core dumped)" after an assert is (triage.parsing.fatal_ending._abort_after); srun's record
of the task still names its rank."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log

_ASSERT = "cp2k.psmp: /build/dbcsr/src/acc/libsmm_acc.c:301: libsmm_acc_process: Assertion `nparams > 0' failed.\n"
_FORRTL = ("forrtl: error (76): Abort trap signal\n"
           "Image              PC                Routine            Line        Source\n"
           "libc.so.6          00007F11C0A3B9FC  Unknown               Unknown  Unknown\n"
           "cp2k.psmp          0000000003A1C2D0  Unknown               Unknown  Unknown\n")


@pytest.mark.parametrize("label", ["", "6: "], ids=["plain", "srun-labelled"])
def test_the_assert_is_the_failure_and_its_task_the_rank(label: str, tmp_path: Path) -> None:
    text = "".join(label + line + "\n" for line in (_ASSERT + _FORRTL).splitlines())
    _code, got = report_log(text + "srun: error: cn0412: task 6: Aborted (core dumped)\n", tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [6], verdict
    assert "nparams > 0" in verdict["summary"] and "Abort trap signal" in verdict["summary"]


def test_no_launcher_record_keeps_the_rank_unknown(tmp_path: Path) -> None:
    _code, got = report_log(_ASSERT + _FORRTL, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [], verdict
    assert "nparams > 0" in verdict["summary"]


def test_forrtl_alone_stays_the_abort(tmp_path: Path) -> None:
    _code, got = report_log("step 12 energy -1.0021\n" + _FORRTL, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and "Abort trap signal" in verdict["summary"], verdict
