"""GROMACS's own fatal-error banner (triage.parsing.solver_errors, round 48), held as a class on hand-written
variants (other tools, messages, ranks and versions; not the pasted log of luancarvalhomartins/PyAutoFEP#86):
``Fatal error:`` alone on its line with the message after it is the process's exception, of the rank its banner's
``MPI rank: N (out of M)`` line names and of no known rank without one. Negatives: the words in a sentence, a bare
``Fatal error:`` with nothing after it, another program's one-line ``Fatal error: ...``, a run that went on after."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict
from triage.parsing.solver_errors import parse_solver_errors

_RULE = "-------------------------------------------------------\n"


def _banner(message: str, rank_line: str = "") -> str:
    return (_RULE + "Program:     gmx grompp, version 2023.3\nSource file: src/gromacs/gmxpreprocess/grompp.cpp "
            "(line 2451)\n" + rank_line + "\nFatal error:\n" + message + "\n\nFor more information and tips for "
            "troubleshooting, please check the GROMACS\nwebsite at https://manual.gromacs.org/current/user-guide/"
            "run-time-errors.html\n" + _RULE)


@pytest.mark.parametrize("message", [
    ("The cut-off length is longer than half the shortest box vector or longer than\nthe smallest box diagonal "
    "element. Increase the box size or decrease rlist."),
    "Too many LINCS warnings (1263)\nIf you know what you are doing you can adjust the lincs warning threshold",
    ("There is no domain decomposition for 96 ranks that is compatible with the\ngiven box and a minimum cell size "
    "of 0.98 nm"),
])
def test_a_gromacs_banner_without_a_rank_line_is_an_exception_of_no_known_rank(message: str, tmp_path: Path) -> None:
    verdict = failure_verdict("Setting the LD random seed to -1139408129\n" + _banner(message), tmp_path)
    assert verdict["kind"] == "exception", verdict
    assert verdict["culprit_ranks"] == [], verdict
    assert message.split("\n")[0][:40] in verdict["summary"], verdict


@pytest.mark.parametrize(("rank", "size"), [(0, 10), (3, 8), (47, 128)])
def test_a_gromacs_banner_names_the_rank_of_its_own_rank_line(rank: int, size: int, tmp_path: Path) -> None:
    text = "starting mdrun 'Protein in water'\n" + _banner("Too many LINCS warnings (88)",
                                                            f"MPI rank:    {rank} (out of {size})\n")
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "exception", verdict
    assert verdict["culprit_ranks"] == [rank], verdict


def test_an_old_gromacs_banner_is_read_too() -> None:
    text = (_RULE + "Program mdrun, VERSION 4.6.7\nSource code file: /tmp/build/src/mdlib/domdec.c, line: 3245\n\n"
            "Fatal error:\nThe box size in direction X (2.449397) is too small for a cut-off of 1.000000\n" + _RULE)
    deaths = parse_solver_errors(text)
    assert [(d.rank, d.raised) for d in deaths] == [(None, True)]
    assert "box size in direction X" in deaths[0].text


@pytest.mark.parametrize("text", [
    "The log said Fatal error: There is no domain decomposition for 54 ranks, so I lowered -np.\n",
    "php: Fatal error: Uncaught Error: Call to undefined function foo() in /var/www/index.php:3\n",
    "Fatal error:\n\n\n",
    "cc1: fatal error: mpi.h: No such file or directory\n",
])
def test_other_fatal_error_words_are_no_gromacs_banner(text: str) -> None:
    # (php's own "Fatal error: <message>" as its last words is php's fatal ending, triage.parsing.fatal_ending's: no
    # GROMACS banner all the same)
    assert all("GROMACS" not in death.text for death in parse_solver_errors(text))
    assert [death.text for death in parse_solver_errors(text)] == (
        ["php's Fatal error: Uncaught Error: Call to undefined function foo() in /var/www/index.php:3"]
        if text.startswith("php: ") else [])


def test_a_gromacs_banner_the_run_went_on_after_is_not_the_jobs_failure() -> None:
    text = (_banner("Too many LINCS warnings (12)") + "retrying with a smaller time step\n"
            + "".join(f"step {n}, will finish Sat Nov 28 07:{n % 60:02d}:00 2026\n" for n in range(100, 4000, 100))
            + "Finished mdrun on rank 0 Sat Nov 28 07:40:11 2026\n")
    assert parse_solver_errors(text) == ()


@pytest.mark.parametrize(("message", "joined"), [
    ("Too many LINCS warnings (1001)\nIf you know what you are doing you can adjust the lincs warning threshold",
     "Too many LINCS warnings (1001). If you know what you are doing"),
    ("Atom index 2201 in position_restraints out of bounds\nPlease check your topology",
     "out of bounds. Please check your topology"),
    # a line wrapped at the width mid-sentence is joined with a space, a capitalised word after it or not
    (("The cut-off length is longer than half the shortest box vector or longer than\nthe smallest box diagonal "
      "element. Increase the box size or decrease rlist."), "longer than the smallest box diagonal element."),
    ("Step 1200: the total potential energy is nan, which means some atoms are in\nVerlet buffer trouble",
     "are in Verlet buffer trouble"),
])
def test_a_gromacs_message_line_of_its_own_ends_its_sentence(message: str, joined: str) -> None:
    deaths = parse_solver_errors("Setting the LD random seed to -1139408129\n" + _banner(message))
    assert len(deaths) == 1
    assert joined in deaths[0].text, deaths[0].text
