"""Session 58 (fix58b, rev57's F5): a DataLoader's worker is a subprocess its loader numbers from 0 in each rank, never
a launcher's index of the job's processes: "dataloader worker 3 failed to prefetch, retrying" named rank 3
(triage.parsing.rank_words' worker shape), and a run that went on to its good end past it read "EXCEPTION: rank 3
raised". Now no rank is read from a DataLoader's worker; its failure line, where the run did not go on, is a failure
of unknown rank (triage.parsing.unread_failure: its index is no count of failures). And a line naming a rank in a
single stream of no rank prefixes, whose own words say the program goes on past it ("worker 3 failed, retrying"),
after which the stream printed progress and its good end, is a note (triage.load.logs.text._went_on_past)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.rank_words import named_rank
from triage.parsing.unread_failure import unread_failure


@pytest.mark.parametrize("line", [
    "WARN: DataLoader worker 2 failed to load sample 18832, retrying",
    "data loader worker 5 died unexpectedly",
    "Dataloader worker #1 crashed",
    "RuntimeError: Caught ValueError in DataLoader worker process 6.",   # (torch._utils.ExceptionWrapper's words)
    "DATALOADER WORKER 4 FAILED",
])
def test_a_dataloader_worker_names_no_rank(line: str) -> None:
    assert named_rank(line) is None


@pytest.mark.parametrize(("line", "rank"), [("worker 6 failed with exit code 1", 6), ("Worker 2 was killed", 2),
                                            ("process 5 exited with signal 11", 5)])
def test_a_launcher_worker_still_names_its_rank(line: str, rank: int) -> None:
    assert named_rank(line) == rank


def test_a_worker_index_is_no_count_of_failures() -> None:
    assert unread_failure("E: data loader worker 2 failed to decode shard-0007.tar, giving up") is not None
    assert unread_failure("summary: 2 failed, 40 passed") is None


_STEPS = ["train: epoch 4 iter 1200/5000 loss 0.733", "train: epoch 4 iter 1210/5000 loss 0.729"]


@pytest.mark.parametrize("tag", ["", "[rank1]: "], ids=["plain", "tagged"])
def test_a_dataloader_retry_then_the_good_end_is_no_failure(tag: str, tmp_path: Path) -> None:
    text = "\n".join([tag + _STEPS[0], "WARN: DataLoader worker 2 failed to load sample 18832, retrying",
                      tag + _STEPS[1], tag + "Training complete."]) + "\n"
    code, got = report_log(text, tmp_path)
    verdict = got.get("verdict", {})
    assert code in (0, 2) and verdict.get("kind", "no_problem_found") == "no_problem_found", got   # (plain: no rank)
    assert "rank 2 raised" not in str(got)


@pytest.mark.parametrize("tag", ["", "[rank1]: "], ids=["plain", "tagged"])
def test_a_dataloader_workers_failure_with_no_end_stays_a_failure_of_no_rank(tag: str, tmp_path: Path) -> None:
    text = "\n".join([tag + _STEPS[0], "ERROR: data loader worker 2 failed to decode shard-0007.tar, giving up"]) + "\n"
    code, got = report_log(text, tmp_path)
    assert code not in (0, 2), got
    assert got["verdict"]["kind"] != "no_problem_found" and got["verdict"]["culprit_ranks"] in ([], [1]), got


def test_a_named_rank_retried_in_one_stream_then_its_good_end_is_a_note(tmp_path: Path) -> None:
    text = "\n".join([_STEPS[0], "WARNING: worker 6 failed to connect, retrying", _STEPS[1], "Training complete."])
    code, got = report_log(text + "\n", tmp_path)
    assert code == 0 and got["verdict"]["kind"] == "no_problem_found", got["verdict"]


@pytest.mark.parametrize("lines", [
    [_STEPS[0], "WARNING: worker 6 failed to connect, retrying", _STEPS[1]],                         # no good end
    [_STEPS[0], "WARNING: worker 6 failed to connect, retrying", "Training complete."],              # no progress
    [_STEPS[0], "worker 6 failed with exit code 1", _STEPS[1], "Training complete."],                # no retry word
    ["[rank0]: " + _STEPS[0], "WARNING: worker 6 failed to connect, retrying", "[rank0]: " + _STEPS[1],
     "[rank0]: Training complete."],                                                                # ranks' prefixes
], ids=["no-end", "no-progress", "no-retry", "prefixed"])
def test_the_named_rank_stays_where_the_stream_did_not_go_on(lines: list[str], tmp_path: Path) -> None:
    _code, got = report_log("\n".join(lines) + "\n", tmp_path)
    assert got["verdict"]["kind"] != "no_problem_found" and got["verdict"]["culprit_ranks"] == [6], got["verdict"]
