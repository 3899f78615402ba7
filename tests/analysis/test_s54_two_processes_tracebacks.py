"""Two processes' tracebacks printed together, each ending in the same exception, then torchelastic's "failed
(exitcode: 1) local_rank: 0" (fix54d item 4; qcf-568/DocTamper#87): torchelastic's line names its first observed
failure only, so the verdict names that rank and says the exception is of two processes, the other's rank not in the
input."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict, report_lines

_AGENT = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 4120) of "
          "binary: /usr/bin/python3")


def _traceback_parts() -> tuple[list[str], list[str]]:
    head = ["Traceback (most recent call last):", '  File "train.py", line 77, in <module>']
    tail = ["    main(cfg)", '  File "train.py", line 51, in main', "    lr = cfg['lr_warmup']", "KeyError: 'lr_warmup'"]
    return head, tail


def test_interleaved_tracebacks_are_of_several_processes() -> None:
    head, tail = _traceback_parts()
    for processes in (2, 3):
        result = report_lines(*(head * processes), *(tail * processes), _AGENT)
        assert result.verdict.culprit_ranks == (0,), result.verdict.summary
        assert f"{processes} processes raised it" in result.verdict.summary
        assert "is not in this input" in result.verdict.summary


def test_one_processes_traceback_logged_then_raised_is_one_process() -> None:
    head, tail = _traceback_parts()
    result = report_lines(*head, *tail, *head, *tail, _AGENT)     # (a logger's traceback, then the uncaught one)
    assert result.verdict.culprit_ranks == (0,), result.verdict.summary
    assert "processes raised it" not in result.verdict.summary


def test_different_ends_are_no_same_exception() -> None:
    head, tail = _traceback_parts()
    other = [*tail[:-1], "KeyError: 'lr_decay'"]
    result = report_lines(*head, *head, *tail, *other, _AGENT)
    assert "processes raised it" not in result.verdict.summary


def test_real_interleaved_keyerrors(tmp_path: Path) -> None:
    log = (REPO / "tests/realworld/cases/qcf-568__DocTamper__87/log.txt").read_text(encoding="utf-8")
    verdict = failure_verdict(log, tmp_path)
    assert verdict["culprit_ranks"] == [0]
    assert "2 processes raised it" in verdict["summary"] and "KeyError: 'save_epoch'" in verdict["summary"]
