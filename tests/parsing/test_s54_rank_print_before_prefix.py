"""A user's own print of its rank before the launcher's prefix (fix54d item 2): "rank 3: [rank3]: ..." hid torchrun's
prefix (test_metamorphic's rank_print pairs: another rank named, the crash read as an exception, no rank); the
launcher's prefix is read behind it, and where the two differ the launcher's is taken and the failure says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict, report_lines
from tests.realworld.metamorphic import TRANSFORMS
from triage.parsing.log_owners import attribute_lines


@pytest.mark.parametrize(("line", "rank"), [
    ("rank 3: [rank3]: RuntimeError: boom", 3),
    ("Rank 2 | [rank2]:[E1002 12:20:55.1 ProcessGroupNCCL.cpp:1923] watchdog", 2),
    ("[Rank 5] [rank5]: ValueError: bad", 5),
    ("RANK 1: [1,1]<stderr>: Segmentation fault", 1),
    ("rank=4 [rank4]: OSError: disk", 4),
])
def test_the_launchers_prefix_behind_a_users_print(line: str, rank: int) -> None:
    owner = attribute_lines([line])[0]
    assert owner.key == rank and not owner.note
    assert not owner.rest.startswith(("rank", "Rank", "RANK", "[Rank", "[rank"))


def test_a_local_prefix_behind_a_print_stays_local() -> None:
    owner = attribute_lines(["rank 1: [default1]: RuntimeError: boom"])[0]
    assert owner.key == "local:1"


@pytest.mark.parametrize("line", ["rank 0: [ 12/100] loss=0.31", "Rank 0: (epoch 3) loss 0.2",
                                  "rank 0: [warn] slow step"])
def test_a_print_before_brackets_of_no_rank_is_left_alone(line: str) -> None:
    assert attribute_lines([line])[0].key == "unknown"


def test_where_they_differ_the_launchers_rank_is_taken_and_said() -> None:
    result = report_lines("rank 1: [rank3]: Traceback (most recent call last):",
                          'rank 1: [rank3]:   File "train.py", line 9, in <module>',
                          "rank 1: [rank3]:     main()", "rank 1: [rank3]: RuntimeError: boom in step 7")
    assert result.verdict.culprit_ranks == (3,), result.verdict.summary
    assert "own print says rank 1" in result.verdict.summary


@pytest.mark.parametrize(("case", "ranks"), [("pytorch__pytorch__150852", [0]), ("modelscope__FunASR__2006", [2]),
                                              ("hao-ai-lab__FastVideo__1008", [9]),
                                              ("NVIDIA-NeMo__Megatron-Bridge__836", [29])])
def test_real_rank_prefixed_logs_under_a_users_print(case: str, ranks: list[int], tmp_path: Path) -> None:
    log = (REPO / "tests/realworld/cases" / case / "log.txt").read_text(encoding="utf-8")
    printed = TRANSFORMS["rank_print"](log)
    assert printed is not None and printed != log
    assert sorted(failure_verdict(printed, tmp_path)["culprit_ranks"]) == ranks
