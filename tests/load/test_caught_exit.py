"""A rank whose own exit record says a non-zero code while its launcher exited 0: the in-rank hook saw a
``sys.exit(3)`` (or an exception passed to sys.excepthook) that the program caught, and it went on and
exited 0. Only the parent's waitpid status is the truth: the report and the agent's closing line take the
launcher's 0 and tell the rank's own record as what it saw. The real job: tests/launch/test_exit_status.py
(``caught sys.exit(3)``)."""

from __future__ import annotations

import json
from pathlib import Path

from triage.agent.launch.ranks import describe_ends
from triage.agent.state import LocalRankStatus
from triage.analysis.analyze import analyze
from triage.load.run_dir import load_run_dir
from triage.model import VerdictKind

HOST = "node3"
T = 1_795_000_000.0


def _run(root: Path, launcher_rc: int, own: dict[int, dict[str, object]]) -> Path:
    host = root / HOST
    for rank in (0, 1):
        rank_dir = host / "ranks" / str(rank)
        rank_dir.mkdir(parents=True)
        (rank_dir / "worker.json").write_text(json.dumps({"pid": 10 + rank, "rank": rank, "world_size": 2,
                                                           "host": HOST, "started": T}))
        (rank_dir / "output.log").write_text("READY\n")
        record = {"pid": 10 + rank, "rank": rank, "how": "exit", "exit_code": 0, "exit_seen": None, "time": T + 5,
                  "exception": None, **own.get(rank, {})}
        (rank_dir / "exit.json").write_text(json.dumps(record))
    (host / "node.json").write_text(json.dumps({"agent_pid": 1 << 22, "host": HOST, "started": T, "status": "exited",
                                                "ended": T + 9, "exit_code": launcher_rc,
                                                "launcher_returncode": launcher_rc}))
    return root


CAUGHT = {"exit_code": 3, "exit_seen": "sys.exit"}


def test_a_caught_sys_exit_under_a_launcher_that_exited_0_is_no_failure(tmp_path: Path) -> None:
    evidence = load_run_dir(_run(tmp_path, 0, {0: CAUGHT}))
    end = next(r for r in evidence.ranks if r.rank == 0).exit
    assert end is not None and end.ok, end
    assert end.message is not None and "its own exit record said exit code 3" in end.message
    assert str(tmp_path / HOST / "node.json") in end.evidence
    assert evidence.finished_cleanly
    report = analyze(evidence)
    assert report.verdict.kind == VerdictKind.NO_PROBLEM_FOUND, report.verdict


def test_an_exception_the_hook_saw_but_the_process_survived_is_the_same_class(tmp_path: Path) -> None:
    raised = {"how": "exception", "exit_code": 1, "exit_seen": "exception",
              "exception": {"type": "ValueError", "module": "builtins", "message": "logged, then handled",
                            "time": T + 4, "where": "train.py:3 in <module>"}}
    end = next(r for r in load_run_dir(_run(tmp_path, 0, {1: raised})).ranks if r.rank == 1).exit
    assert end is not None and end.ok and "ValueError: logged, then handled" in (end.message or "")


def test_a_launcher_that_failed_leaves_the_ranks_own_record(tmp_path: Path) -> None:
    evidence = load_run_dir(_run(tmp_path, 3, {0: CAUGHT}))
    end = next(r for r in evidence.ranks if r.rank == 0).exit
    assert end is not None and end.exit_code == 3 and not end.ok
    assert analyze(evidence).verdict.kind != VerdictKind.NO_PROBLEM_FOUND


def _rank(rank: int, returncode: int | None) -> LocalRankStatus:
    return LocalRankStatus(rank, rank, "h", 100 + rank, False, returncode, None, None, None)


def test_the_agents_closing_line_takes_the_launchers_0() -> None:
    line = describe_ends([_rank(0, 3), _rank(1, 0)], None, 0)
    assert line.startswith("rank 0 exited 0 (the launcher's record; its own exit record said 3"), line
    assert describe_ends([_rank(0, 3), _rank(1, 0)], None, 1).startswith("rank 0 exited 3"), line
    assert describe_ends([_rank(0, -9)], None, 0) == "rank 0 killed by SIGKILL"


def test_a_catch_the_rank_saw_itself_is_exit_0_with_what_it_caught(tmp_path: Path) -> None:
    """The in-rank hook now sees the catch (its outermost frame returned): exit 0, ``caught`` what it was given,
    whatever the launcher's status."""
    seen = {"exit_code": 0, "exit_seen": "sys.exit", "caught": {"exit_code": 3, "exit_arg": None}}
    text = {"exit_code": 0, "exit_seen": "sys.exit", "caught": {"exit_code": 1, "exit_arg": "bad \x1b config"}}
    ranks = load_run_dir(_run(tmp_path, 0, {0: seen, 1: text})).ranks
    ends = {r.rank: r.exit for r in ranks}
    assert ends[0] is not None and ends[0].ok and ends[0].message == \
        "exit code 0: the program caught its sys.exit(3) and went on"
    assert ends[1] is not None and ends[1].message == \
        "exit code 0: the program caught its sys.exit('bad \\x1b config') and went on"
    assert describe_ends([_rank(0, 0), _rank(1, 0)], None, 0) == "2 ranks exited 0"
