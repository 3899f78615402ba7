"""Session 58 (fix58c; from session 57's sweep, horovod/horovod#1950, a thread of a corpus repository, not a corpus
case): Open MPI's TCP transport's box of a peer that went away (help-mpi-btl-tcp.txt's "peer hung up": "An MPI
communication peer process has unexpectedly disconnected. ... the root cause of this problem is the failure of the
peer", then its "Local host", "Local PID" and "Peer host" lines) names the host whose process failed first; a rank's
abort after it (horovod's "[1,7]<stderr>:*** Aborted at") is its collateral. Read as a network error of no rank on the
peer's host (a peer gone shows up as a network error on the others: gloo's closed pair is read alike), with Open MPI's
own step (triage.parsing.mpi_errors ``_peer_hung_up``, triage.analysis.advice)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import report_log
from triage.parsing.mpi_errors import parse_mpi_errors

BOX = """--------------------------------------------------------------------------
An MPI communication peer process has unexpectedly disconnected.  This
usually indicates a failure in the peer process (e.g., a crash or
otherwise exiting without calling MPI_FINALIZE first).

Although this local MPI process will likely now behave unpredictably
(it may even hang or crash), the root cause of this problem is the
failure of the peer -- that is what you need to investigate.  For
example, there may be a core file that you can examine.  More
generally: such peer hangups are frequently caused by application bugs
or other external events.

  Local host: gpu-b07
  Local PID:  31337
  Peer host:  gpu-a12
--------------------------------------------------------------------------
"""
ABORT = ('[1,5]<stderr>:*** Aborted at 1700000000 (unix time) try "date -d @1700000000" if you are using GNU date ***\n'
         "[1,5]<stderr>:PC: @ 0x0 (unknown)\n")


def test_the_box_names_the_peers_host() -> None:
    errors = parse_mpi_errors(BOX)
    assert len(errors) == 1 and errors[0].rank is None and errors[0].host == "gpu-a12" and errors[0].network, errors
    assert "seen from gpu-b07, pid 31337" in errors[0].text, errors


def test_a_ranks_abort_after_the_box_is_its_collateral(tmp_path: Path) -> None:
    _code, got = report_log(BOX + ABORT, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "network_error" and verdict["culprit_ranks"] == [], verdict
    assert verdict["culprit_host"] == "gpu-a12", verdict
    steps = " | ".join(got["next_steps"])
    assert "btl_tcp_if_include" in steps and "NCCL_DEBUG" not in steps, steps


def test_a_ranks_own_error_before_the_box_stays_the_verdict(tmp_path: Path) -> None:
    text = ("[1,2]<stderr>:Traceback (most recent call last):\n"
            '[1,2]<stderr>:  File "fit.py", line 3, in <module>\n'
            "[1,2]<stderr>:ValueError: bad batch\n" + BOX + ABORT)
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "exception" and got["verdict"]["culprit_ranks"] == [2], got["verdict"]


def test_a_box_without_its_peer_line_names_no_host() -> None:
    assert parse_mpi_errors(BOX.replace("  Peer host:  gpu-a12\n", "")) == ()


def test_the_real_text(tmp_path: Path) -> None:
    # horovod/horovod#1950 (the paste ends at rank 7's cut abort line)
    text = """An MPI communication peer process has unexpectedly disconnected.  This
usually indicates a failure in the peer process (e.g., a crash or
otherwise exiting without calling MPI_FINALIZE first).

Although this local MPI process will likely now behave unpredictably
(it may even hang or crash), the root cause of this problem is the
failure of the peer -- that is what you need to investigate.  For
example, there may be a core file that you can examine.  More
generally: such peer hangups are frequently caused by application bugs
or other external events.

  Local host: reco-zl-c4-reco313
  Local PID:  7720
  Peer host:  reco-zl-c4-reco316
--------------------------------------------------------------------------
[1,7]<stderr>:*** Aborted at
"""
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["culprit_host"] == "reco-zl-c4-reco316" and verdict["culprit_ranks"] == [], verdict
