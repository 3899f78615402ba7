"""PETSc's signal handler's tail without its 'Caught signal number' line (fix55d item 4, firedrakeproject/firedrake#296).

PetscSignalHandlerDefault (src/sys/error/signal.c) prints "Caught signal number N NAME", then "Try option
-start_in_debugger or -on_error_attach_debugger", ..., "to get more information on the crash." only after catching a
signal: a rank whose tail is in the input without its head (a paste that began below it) caught a signal, which one
the input does not say. Another rank's "Caught signal number 15 Terminate" after it, and mpiexec's "exiting
improperly", are the teardown's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict

CASE = REPO / "tests/realworld/cases/firedrakeproject__firedrake__296/log.txt"


def _tail(rank: int) -> str:
    return (f"[{rank}]PETSC ERROR: Try option -start_in_debugger or -on_error_attach_debugger\n"
            f"[{rank}]PETSC ERROR: or see https://petsc.org/release/faq/#valgrind\n"
            f"[{rank}]PETSC ERROR: configure using --with-debugging=yes, recompile, link, and run \n"
            f"[{rank}]PETSC ERROR: to get more information on the crash.\n")


_TERM = ("[1]PETSC ERROR: ------------------------------------------------------------------------\n"
         "[1]PETSC ERROR: Caught signal number 15 Terminate: Some process (or the batch system) has told this process "
         "to end\n" + _tail(1))


@pytest.mark.parametrize("first", [3, 0])
def test_a_ranks_handler_tail_is_its_crash_before_the_others_sigterm(first: int, tmp_path: Path) -> None:
    text = _tail(first).split("\n", 1)[1] + _TERM      # (the paste begins below its first line too)
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [first], verdict


def test_a_tail_under_its_own_caught_signal_line_is_that_signal(tmp_path: Path) -> None:
    text = ("[2]PETSC ERROR: Caught signal number 11 SEGV: Segmentation Violation, probably memory access out of "
            "range\n" + _tail(2))
    verdict = failure_verdict(text, tmp_path)
    assert verdict["culprit_ranks"] == [2] and "SEGV" in verdict["summary"], verdict
    assert "not in this input" not in verdict["summary"], verdict


def test_firedrakes_rank_2(tmp_path: Path) -> None:
    verdict = failure_verdict(CASE.read_text(encoding="utf-8"), tmp_path)
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [2], verdict
