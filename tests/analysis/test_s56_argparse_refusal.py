"""Session 56 (round 79's rosinality/ocr-pytorch#1): argparse's refusal of a command line by its other messages than
"argument X: ..." / "the following arguments are required" / "invalid choice": "PROG: error: unrecognized arguments:
--master_porp=8890" (a mistyped option, the launcher's own), "ambiguous option: ...", "one of the arguments ... is
required" was a failure of unknown place ("triage has no reader for these words"); it is the program's (or the
launcher's) refusal at start-up, argparse's exit code 2, an exception of no rank (triage.parsing.crashlog
_ARGPARSE_ERROR). The refusal of the --local-rank argument a launcher passes stays the launcher's reading, by local
rank (torchelastic.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log

USAGE = ("usage: train.py [-h] [--cfg CFG] [--lr LR] [--lr-decay LR_DECAY]\n"
         "                [--epochs EPOCHS] [--resume RESUME]\n")


@pytest.mark.parametrize("line", [
    "train.py: error: unrecognized arguments: --epoch=30",
    "train.py: error: ambiguous option: --lr could match --lr, --lr-decay",
    "train.py: error: one of the arguments --cfg --resume is required",
    "train.py: error: argument --epochs: expected one argument",
    # a real launcher's own refusal (huggingface/pytorch-image-models#1742: a torchrun too old for the dashed spelling)
    "torchrun: error: unrecognized arguments: --nproc-per-node=1",
])
def test_argparse_refusal_is_an_exception_at_start_up(line: str, tmp_path: Path) -> None:
    _code, got = report_log("+ python -m torch.distributed.launch --nproc_per_node=2 train.py --epoch=30\n"
                            + USAGE + line + "\n", tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception", verdict
    assert not verdict["culprit_ranks"]
    assert "refused its command line" in verdict["summary"] and "argparse's code 2" in verdict["summary"]


def test_the_local_rank_refusal_stays_the_launchers_reading(tmp_path: Path) -> None:
    text = (USAGE + "train.py: error: unrecognized arguments: --local-rank=1\n" + USAGE
            + "train.py: error: unrecognized arguments: --local-rank=0\n"
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 2) local_rank: 0 (pid: 46040) of "
            "binary: /usr/bin/python3\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [0, 1], verdict
    assert "refused its command line" not in verdict["summary"]


def test_a_usage_line_alone_is_no_failure(tmp_path: Path) -> None:
    # --help's output (argparse's usage with no error line) is no refusal
    _code, got = report_log(USAGE + "\noptions:\n  -h, --help  show this help message and exit\n", tmp_path)
    assert got.get("verdict", {}).get("kind") != "exception"
