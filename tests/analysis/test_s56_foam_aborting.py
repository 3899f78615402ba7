"""Session 56 (fix56c item 5): OpenFOAM's fatal error banner that ends with its own "FOAM aborting" (error::abort()
serial, or with FOAM_ABORT set: "FOAM aborting (FOAM_ABORT set)", printStack, then ::abort(); src/OpenFOAM/db/error/
error.C) is the process's SIGABRT, with or without the signal handler's record after it; "FOAM exiting" (exit(1)),
"FOAM parallel run exiting" (Pstream::exit) and "FOAM parallel run aborting" (Pstream::abort, the MPI runtime's abort)
stay the banner's exception, as the corpus labels them (gerlero/openfoam-app#333, smenon/dynamicTopoFvMesh#7). Was:
every banner an exception (hystrath/hyStrath#7 wrong, in known_gaps.yaml)."""

from __future__ import annotations

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_lines
from triage.parsing.solver_errors import parse_solver_errors

_BANNER = ["--> FOAM FATAL ERROR: ", "cannot find file \"system/controlDict\"", "",
           "    From function Foam::Time::readDict()", "    in file db/Time/TimeIO.C at line 42.", ""]


@pytest.mark.parametrize(("end", "signal"), [
    ("FOAM aborting", "SIGABRT"), ("FOAM aborting (FOAM_ABORT set)", "SIGABRT"),
    ("FOAM exiting", None), ("FOAM parallel run exiting", None), ("FOAM parallel run aborting", None),
])
def test_the_banners_own_end_says_how_it_ended(end: str, signal: str | None) -> None:
    text = "\n".join([*_BANNER, end, "", "#0  Foam::error::printStack(Foam::Ostream&) at ??:?"]) + "\n"
    deaths = parse_solver_errors(text)
    assert len(deaths) == 1 and deaths[0].signal == signal and deaths[0].raised, deaths
    assert "cannot find file" in deaths[0].text


def test_a_ranks_abort_with_foam_abort_set_is_that_ranks_sigabrt() -> None:
    report = report_lines(*(f"[3] {line}" if line else "" for line in _BANNER), "[3] FOAM aborting (FOAM_ABORT set)",
                          "[3] #0  Foam::error::printStack(Foam::Ostream&) at ??:?")
    verdict = report.verdict
    assert verdict.kind.value == "crash" and verdict.culprit_ranks == (3,), verdict.summary
    assert "SIGABRT" in verdict.summary and "cannot find file" in verdict.summary


def test_a_later_banners_abort_is_not_the_first_ones() -> None:
    text = "\n".join([*_BANNER, "FOAM exiting", "", *_BANNER, "FOAM aborting"]) + "\n"
    assert parse_solver_errors(text)[0].signal is None


def test_hystrath_7_is_the_processs_sigabrt() -> None:
    # (hystrath/hyStrath#7: "attempt to run parallel on 1 processor", "FOAM aborting", printStack through
    # Foam::error::abort(), then Open MPI's "Signal: Aborted (6)")
    text = (REPO / "tests/realworld/cases/hystrath__hyStrath__7/log.txt").read_text(encoding="utf-8")
    report = report_lines(*text.splitlines())
    assert report.verdict.kind.value == "crash", report.verdict.summary
    assert "attempt to run parallel on 1 processor" in report.verdict.summary
    assert "SIGABRT" in report.verdict.summary
