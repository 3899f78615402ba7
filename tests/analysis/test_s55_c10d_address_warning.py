"""c10d's warning of one address the store client could not connect to, when the connect went on (fix55d item 2,
sp-uhh/sgmse#44).

torch/csrc/distributed/c10d/socket.cpp warns for each address of the store's host that fails (``[W socket.cpp:NNN]
[c10d] The client socket has failed to connect to [host]:port (system error: 10049 ...)``) and goes on to the next;
it logs and raises its error only when every address failed (``... to any network address of (host, port)``) or the
connect timed out. The warning followed by the client's word that it connected, or by a traceback with no such error
and no network error as its exception, is noise; the traceback is the failure. And a traceback cut before its
exception line is the one process's error where the process announces itself rank 0 of a world of one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict

CASE = REPO / "tests/realworld/cases/sp-uhh__sgmse__44/log.txt"

_WINDOWS = ("[W C:\\actions-runner\\_work\\pytorch\\pytorch\\torch\\csrc\\distributed\\c10d\\socket.cpp:764] [c10d] "
            "The client socket has failed to connect to [DESKTOP-7Q1]:29500 (system error: 10049 - The requested "
            "address is not valid in its context.).")
_LINUX = ("[W socket.cpp:601] [c10d] The client socket has failed to connect to [localhost]:12345 (errno: 99 - Cannot "
          "assign requested address).")
_TRACEBACK = ("Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n    main(cfg)\n"
              "  File \"train.py\", line 31, in main\n    model = build(cfg)\n")


@pytest.mark.parametrize("warning", [_WINDOWS, _LINUX])
def test_the_warning_then_an_unrelated_traceback_is_that_traceback(warning: str, tmp_path: Path) -> None:
    text = ("| distributed init (rank 0, world 1): env://\n" + warning + "\n" + _TRACEBACK
            + "KeyError: 'backbone'\n")
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "exception", verdict
    assert "KeyError" in verdict["summary"], verdict


def test_the_warning_then_the_clients_word_that_it_connected_is_noise(tmp_path: Path) -> None:
    text = (_WINDOWS + "\n[I socket.cpp:812] [c10d] The client socket has connected to [DESKTOP-7Q1]:29500 on "
            "[DESKTOP-7Q1]:50123.\n" + _TRACEBACK + "ValueError: empty dataset\n")
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "exception" and "ValueError" in verdict["summary"], verdict


@pytest.mark.parametrize("after", [
    # c10d's own error: every address failed, then its raise
    "[E socket.cpp:860] [c10d] The client socket has failed to connect to any network address of (DESKTOP-7Q1, "
    "29500).\n" + _TRACEBACK + "torch.distributed.DistNetworkError: The client socket has failed to connect to any "
    "network address of (DESKTOP-7Q1, 29500).\n",
    # the connect timed out
    _TRACEBACK + "RuntimeError: The client socket has timed out after 1800s while trying to connect to (DESKTOP-7Q1, "
    "29500).\n",
    # the text ends at the warning
    "",
])
def test_the_warning_before_cs10ds_own_error_or_at_the_end_stays_a_connect_failure(after: str,
                                                                                    tmp_path: Path) -> None:
    verdict = failure_verdict(_WINDOWS + "\n" + after, tmp_path)
    assert verdict["kind"] in ("network_error", "hang"), verdict


def test_a_cut_traceback_is_the_sole_process_rank_0s(tmp_path: Path) -> None:
    verdict = failure_verdict("Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/1\n" + _TRACEBACK, tmp_path)
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [0], verdict


def test_a_cut_traceback_of_a_larger_world_names_no_rank(tmp_path: Path) -> None:
    verdict = failure_verdict("Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n" + _TRACEBACK, tmp_path)
    assert verdict["culprit_ranks"] == [], verdict


def test_sgmse_44s_one_process_lightning_run(tmp_path: Path) -> None:
    verdict = failure_verdict(CASE.read_text(encoding="utf-8"), tmp_path)
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [0], verdict
