"""The node agent reads the launcher's record of how its ranks ended (for the teardown check: a rank
whose own exit record says 0 but which died after it) only where it can change what is said, so that
a job that ends well does not load the launcher-log parser (bench/bench_agent_overhead.py). The
real teardown crash under torchrun: tests/launch/test_launch_teardown.py."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.logs import elastic_summary
from triage.agent.launch.ranks import describe_ends, launcher_exits_if_needed
from triage.agent.state import LocalRankStatus

SUMMARY = elastic_summary("  rank      : 1 (local_rank: 1)\n  exitcode  : -6 (pid: 4242)\n"
                          "  traceback : Signal 6 (SIGABRT) received by PID 4242")


def _rank(rank: int, returncode: int | None, alive: bool = False) -> LocalRankStatus:
    return LocalRankStatus(rank, rank, "h", 100 + rank, alive, returncode, None, None, None)


def test_a_rank_that_ended_well_on_its_own_record_reads_the_launcher_log(tmp_path: Path) -> None:
    log = tmp_path / "launcher.log"
    log.write_text(SUMMARY)
    statuses = [_rank(0, 0), _rank(1, 0)]
    exits = launcher_exits_if_needed(statuses, log)
    assert exits is not None and exits[1].signal == 6
    assert describe_ends(statuses, exits).startswith("rank 1 finished its work (exit record 0), then was killed by")


def test_no_rank_that_ended_well_or_an_empty_launcher_log_reads_nothing(tmp_path: Path) -> None:
    log = tmp_path / "launcher.log"
    log.write_text(SUMMARY)
    assert launcher_exits_if_needed([], log) is None                                # no Python rank
    assert launcher_exits_if_needed([_rank(0, 1), _rank(1, -9)], log) is None      # each failed on its own
    assert launcher_exits_if_needed([_rank(0, 0, alive=True)], log) is None        # not ended
    log.write_text("")
    assert launcher_exits_if_needed([_rank(0, 0)], log) is None                    # the launcher said nothing
    assert launcher_exits_if_needed([_rank(0, 0)], tmp_path / "absent.log") == {}  # unreadable: nothing known
